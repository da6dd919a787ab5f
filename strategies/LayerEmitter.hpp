#pragma once
/// Emits the tasks of one parameter unit (a transformer layer, the embedding, the output
/// projection) for one micro-batch on one pipeline stage, forward or backward; the pipeline
/// driver (StepBuilder.cpp) decides the order. Internal to strategies/.

#include "strategies/StepBuilder.hpp"

#include <initializer_list>
#include <vector>

namespace clustersim {

/// Tasks per stage position (one entry per simulated rank of the stage).
/// Adds the tasks that exist (not kNoTask) to each position.
void append(PerPos& into, const std::vector<TaskId>& tasks);
/// One task per position, as dependencies.
PerPos single(const std::vector<TaskId>& tasks);

class LayerEmitter {
public:
  LayerEmitter(StepContext& ctx, DataParallelStrategy& dp);

  /// The unit's forward for micro-batch `mb` after `deps` (recomputation: the same work,
  /// labelled recompute, without the DP strategy's forward hook); returns what the next unit
  /// waits for.
  PerPos forward_unit(int stage, const ParamUnit& u, int unit_index, int mb, PerPos deps, bool recompute);

  struct Backward {
    PerPos after;                      ///< what the previous unit's backward waits for
    std::vector<TaskId> weights_done;  ///< per position: the unit's weight gradients are final
  };
  Backward backward_unit(int stage, const ParamUnit& u, int unit_index, int mb, PerPos deps, bool last_mb);

  /// The unit's linear layers that run in FP8 (their amaxes are what delayed scaling reduces).
  int fp8_linears(const ParamUnit& u) const;

  /// Overlapped EP exchanges (moe_a2a_overlap) emitted since the last call, per position: the
  /// pipeline driver makes the end of a micro-batch's pass on the stage wait for them.
  PerPos take_pending(int stage);
  /// Whether the passes emitted next have another micro-batch's pass beside them to hide their
  /// EP exchanges under (moe_a2a_overlap; the pipeline driver sets it per pass).
  void set_a2a_partner(bool partner) { a2a_partner_ = partner; }

private:
  /// A block's forward and backward seconds in the parts tensor parallelism cuts it into.
  struct Parts {
    double pre = 0, col = 0, mid = 0, row = 0, post = 0;
    double bpre = 0, col_data = 0, col_weight = 0, bmid = 0, brow = 0, bpost = 0;
  };
  static Parts parts_of(const BlockCost& b);
  std::vector<TaskId> middle(int stage, const BlockCost& b, const Parts& p, bool forward, const Workload::Label& label,
                             const PerPos& deps);
  /// A TP collective and the computation that hides it: the compute task, and both as the
  /// dependencies of what follows.
  struct Hidden {
    std::vector<TaskId> compute;
    PerPos both;
  };
  Hidden hidden(int stage, CollOp op, const char* name, double seconds, const Workload::Label& label,
                const PerPos& after);
  Hidden hidden(int stage, CollOp op, const char* name, double seconds, const Workload::Label& label,
                const PerPos& coll_after, const PerPos& compute_after);
  PerPos overlapped_forward(int stage, const BlockCost& b, bool attention, int layer, int mb, const PerPos& deps,
                            Category cat, const char* name);
  PerPos overlapped_backward(int stage, const BlockCost& b, bool attention, int layer, int mb, const PerPos& deps,
                             const char* name);
  PerPos block_forward(int stage, const BlockCost& b, bool attention, int layer, int mb, PerPos deps, Category cat);
  PerPos block_backward(int stage, const BlockCost& b, bool attention, int layer, int mb, PerPos deps);
  /// Ring attention's steps after `last`: step i + 1 waits for the exchange of `bytes` that ran
  /// under step i; returns the last step's tasks.
  std::vector<TaskId> ring(int stage, const std::vector<double>& steps, double bytes, const Workload::Label& label,
                           std::vector<TaskId> last);
  PerPos tp_post(int stage, CollOp op, int layer, int mb, const std::vector<TaskId>& src, const PerPos& concurrent_deps,
                 Category cat);
  /// A MoE layer's MLP half: the ops before the experts, the dispatch all-to-all over the
  /// expert-parallel group (and the ETP all-gather), the local experts at each rank's load,
  /// the combine (ETP reduce-scatter, all-to-all), the ops after; backward in reverse.
  PerPos moe_forward(int stage, int layer, int mb, const PerPos& deps, Category cat);
  PerPos moe_backward(int stage, int layer, int mb, const PerPos& deps);
  /// The EP exchange of one direction (dispatch, or combine) after `after`: the all-to-all and,
  /// with etp > 1, the gather (dispatch) or reduce-scatter (combine) over the ETP group. With
  /// moe_a2a_overlap the exchange runs behind another micro-batch's compute: what follows does
  /// not wait for it, the micro-batch's pass on the stage does (pending()).
  PerPos ep_exchange(int stage, bool dispatch, const Workload::Label& label, const PerPos& after);
  /// Seconds of the local experts on each position of the stage at its rank's load.
  std::vector<double> expert_seconds(int stage, double balanced, int layer, int mb);
  /// The FLOPs of one pass of `b` (CostModel::pass_flops) where the workload keeps FLOPs, else
  /// 0 without computing them: a run's step builds tens of millions of tasks and never reads them.
  double pass_flops(const BlockCost& b, Pass pass, std::initializer_list<const char*> parts = {}) const
  {
    return w_.keeps_flops() ? cost_.pass_flops(b, pass, parts) : 0.0;
  }

  StepContext& ctx_;
  const CostModel& cost_;
  const TrainingSpec& t_;
  Workload& w_;
  DataParallelStrategy& dp_;
  BlockCost attn_, attn_window_, mlp_, moe_, emb_, logits_;
  /// The attention half of transformer layer `layer`: a sliding-window layer's or a full one's.
  const BlockCost& attention(int layer) const { return cost_.model().windowed(layer) ? attn_window_ : attn_; }
  std::vector<PerPos> pending_; ///< per stage
  bool a2a_partner_ = true;     ///< the current pass has a partner to overlap its EP exchanges with
};

} // namespace clustersim
