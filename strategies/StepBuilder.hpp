#pragma once
/// Emits one training step of a transformer as a Workload: every rank's compute, TP / CP /
/// PP / DP communication, with their dependencies and streams.
///
/// Composition: the pipeline schedule (registered by name) orders each stage's forward and
/// backward passes; each layer is emitted with Megatron tensor parallelism (column/row
/// parallel GEMMs, all-reduces or, with sequence parallelism, all-gather / reduce-scatter
/// pairs) and ring-attention context parallelism; the data-parallel strategy (ddp, zero1,
/// zero2, zero3, hsdp; registered by name) adds gradient reduction, parameter gathers and the
/// optimizer step. Ranks are placed by `Layout`.

#include "strategies/CostModel.hpp"
#include "strategies/Layout.hpp"
#include "strategies/PipelineSchedule.hpp"
#include "strategies/workload/Workload.hpp"

#include <memory>
#include <string>
#include <vector>

namespace clustersim {

/// Per position in a stage (StepContext::position): task ids, typically a rank's dependencies.
using PerPos = std::vector<TaskIds>;

class StepContext;

/// One thing with parameters that the backward pass finishes in order: a layer, the
/// embedding or the output projection of a stage.
struct ParamUnit {
  std::string name;
  int layer = -1;    ///< global layer index, -1 for embedding / logits
  int chunk = 0;     ///< model chunk on this stage
  double params = 0; ///< per rank, after TP / EP sharding
  double expert = 0; ///< of `params`: the routed experts' (synchronised over the expert-data-parallel ranks)
  /// What of it trains (all of it, or under LoRA the adapters): the gradients reduced and the
  /// optimizer's share; the dense and the routed experts' parts.
  double trainable = 0;
  double trainable_expert = 0;
};

/// The two sets of parameters data parallelism synchronises apart (Megatron keeps a gradient
/// buffer for each): dense ones over the cp·dp replicas, routed experts over the
/// expert-data-parallel ranks (tp·cp·dp / (ep·etp) of them).
enum class ParamPool { dense = 0, expert = 1 };
inline constexpr ParamPool kParamPools[] = {ParamPool::dense, ParamPool::expert};
inline double pool_params(const ParamUnit& u, ParamPool p) { return p == ParamPool::expert ? u.expert : u.params - u.expert; }
inline double pool_trainable(const ParamUnit& u, ParamPool p)
{
  return p == ParamPool::expert ? u.trainable_expert : u.trainable - u.trainable_expert;
}

/// Gradient and parameter synchronisation across data-parallel replicas.
class DataParallelStrategy {
public:
  static constexpr const char* kRegistryKind = "data-parallel strategy";
  virtual ~DataParallelStrategy() = default;
  /// The ZeRO stage it shards at: what `training.zero`, the Megatron-style shorthand, says
  /// (0 nothing, 1 optimizer states, 2 and gradients, 3 and parameters).
  virtual int zero_stage() const = 0;
  /// Whether it shards within groups of `training.dp_shard` replicas and replicates across the
  /// groups (hybrid sharding, HSDP); otherwise it shards over every replica.
  virtual bool hybrid() const { return false; }
  /// Tasks that the forward (or backward) of `unit` for micro-batch `mb` must wait for,
  /// per stage position; default none.
  virtual PerPos before_forward(StepContext& ctx, int stage, int unit, int mb);
  virtual PerPos before_backward(StepContext& ctx, int stage, int unit, int mb);
  /// The backward of `unit` for `mb` finished with `done` (per stage position).
  virtual void after_backward(StepContext& ctx, int stage, int unit, int mb, bool last_mb,
                              const std::vector<TaskId>& done) = 0;
  /// After every backward of the stage: remaining reductions, the optimizer step (which
  /// must also wait for `extra`, per position), parameter gathers.
  virtual void end_step(StepContext& ctx, int stage, const PerPos& extra) = 0;
};

using DataParallelRegistry = Registry<DataParallelStrategy>;

/// Everything the emitters share while building one step.
class StepContext {
public:
  /// `fold_unit` > 0: only the replicas (tp, cp, dp coordinates) of the ranks that share stage
  /// 0's representative's NVLink domain (`fold_unit` consecutive GPUs) are emitted, in every
  /// stage, and the ranks left out mirror them (see Workload); 0: every rank.
  /// `domain_gpus`: GPUs of one NVLink domain as the job has them (consecutive ranks), for
  /// exchanges that route through it (DeepEP); 0: unknown, one domain.
  StepContext(Workload& w, const CostModel& cost, const Layout& layout, int fold_unit, int domain_gpus = 0);

  Workload& workload() { return w_; }
  const CostModel& cost() const { return cost_; }
  const TrainingSpec& training() const { return cost_.training(); }
  const Layout& layout() const { return layout_; }

  int stages() const { return layout_.size(Dim::pp); }
  /// Ranks of a stage, in a fixed order; "positions" index this list.
  const std::vector<std::uint32_t>& stage_ranks(int stage) const
  {
    return stage_ranks_[static_cast<std::size_t>(stage)];
  }
  int position(std::uint32_t rank) const { return position_[rank]; }
  /// Groups of a stage along `dims` (e.g. {tp}: the TP groups), as workload group ids.
  const std::vector<std::uint32_t>& groups(int stage, Dim a, Dim b = Dim::pp);
  /// The group of every rank of a stage (its tensor-, context- and data-parallel ranks), as a
  /// workload group id (none if the stage has one rank).
  const std::vector<std::uint32_t>& stage_group(int stage);
  /// The expert-parallel (or expert-tensor-parallel, expert-data-parallel) groups of a stage
  /// (Layout::expert_group), as workload group ids.
  const std::vector<std::uint32_t>& expert_groups(int stage, Layout::ExpertDim d);
  /// The groups of a stage over which a pool's gradients reduce and its parameters gather.
  const std::vector<std::uint32_t>& replica_groups(int stage, ParamPool p);
  /// Ranks in one of those groups: cp·dp, or the expert-data-parallel degree.
  int replicas(ParamPool p) const;
  /// A hybrid strategy's split of each replica group (training.dp_shard): the shard groups,
  /// consecutive runs of shards(p) members that gather and reduce-scatter among themselves, and
  /// the replicate groups, the members at the same place in every shard group, which all-reduce
  /// their shards. Without replication the shard groups are the replica groups and there are no
  /// replicate groups.
  const std::vector<std::uint32_t>& shard_groups(int stage, ParamPool p);
  const std::vector<std::uint32_t>& replicate_groups(int stage, ParamPool p);
  /// Ranks in one shard group: replicas(p) / training.dp_replicate().
  int shards(ParamPool p) const;
  /// Parameters of `stage` one rank updates when ZeRO shards the optimizer over its shard group.
  double sharded_params(int stage) const;
  /// The hops of a two-hop expert-parallel exchange (DeepEP): `rail` the members of each EP
  /// group at the same place in their NVLink domain, one per domain (the RDMA hop); else the
  /// members in the same domain (the NVLink hop).
  const std::vector<std::uint32_t>& expert_hop_groups(int stage, bool rail);
  /// NVLink domains one expert-parallel group spans (the same for every group; computed once).
  int expert_domains();
  const std::vector<ParamUnit>& units(int stage) const { return units_[static_cast<std::size_t>(stage)]; }
  std::vector<ParamUnit>& units(int stage) { return units_[static_cast<std::size_t>(stage)]; }

  /// Bytes per parameter of a gradient reduction and of a parameter gather.
  double grad_comm_bytes() const;
  double param_comm_bytes() const;
  /// The gradient bucket of the framework (training.bucket_size if set): max(min, per_dp x dp)
  /// parameters of `bytes_per_param` each.
  double bucket_bytes(double bytes_per_param) const;
  std::uint16_t algo() const { return algo_; }

  /// Emits a collective on every group in `groups` with per-position dependencies; returns
  /// the member tasks per position (positions not in any group get no task).
  std::vector<TaskId> collective(int stage, const std::vector<std::uint32_t>& groups, CollOp op, double bytes,
                                 Stream stream, const Workload::Label& label,
                                 const PerPos& deps);
  /// A compute task on every rank of the stage. `host`: seconds the host spends issuing it
  /// (compute stream); negative: `seconds` x host_rate().
  std::vector<TaskId> compute(int stage, double seconds, const Workload::Label& label,
                              const PerPos& deps, Stream stream = Stream::compute, double host = -1);
  /// The same with each position's own seconds (uneven expert loads).
  std::vector<TaskId> compute(int stage, const std::vector<double>& seconds, const Workload::Label& label,
                              const PerPos& deps, Stream stream = Stream::compute, double host = -1);
  /// Host seconds per GPU second of the compute tasks emitted next without their own: the
  /// block being emitted spreads its host issue time over its tasks (Rates sets it).
  double host_rate() const { return host_rate_; }
  void set_host_rate(double r) { host_rate_ = r; }
  /// FLOPs per GPU second of the compute tasks emitted next, when the workload keeps FLOPs:
  /// the block being emitted shares its pass's FLOPs out over its tasks by their seconds.
  double flops_rate() const { return flops_rate_; }
  void set_flops_rate(double r) { flops_rate_ = r; }

private:
  double host_rate_ = 0;
  double flops_rate_ = 0;
  /// Gives the tasks just made their FLOPs (seconds x flops_rate()) where the workload keeps them.
  void rate_flops(const std::vector<TaskId>& tasks);
  template <class F> const std::vector<std::uint32_t>& cached_groups(int stage, int a, int b, F members_of);
  /// shard_groups (`shard`) or replicate_groups when the strategy replicates.
  const std::vector<std::uint32_t>& split_replica_groups(int stage, ParamPool p, bool shard);
  /// The NVLink domain of a rank (0 when the step is built without domains).
  int domain_of(std::uint32_t rank) const;
  Workload& w_;
  const CostModel& cost_;
  const Layout& layout_;
  std::vector<std::vector<std::uint32_t>> stage_ranks_;
  std::vector<int> position_;
  std::vector<std::vector<ParamUnit>> units_;
  std::map<std::tuple<int, int, int>, std::vector<std::uint32_t>> group_cache_;
  std::uint16_t algo_ = 0;
  int domain_gpus_ = 0;
  int expert_domains_ = 0; ///< expert_domains(), once computed
};

/// What was built, with what the report needs to explain it.
struct StepPlan {
  Workload workload;
  bool folded = false;
  std::vector<int> layers_per_stage;
  std::vector<double> params_per_stage; ///< per rank, after TP/EP sharding
};

/// Builds the step. With `fold_unit` > 0 (the GPUs of an NVLink domain), emits for each
/// pipeline stage only the ranks of one domain, that of the stage's representative; the other
/// domains of the stage do the same work at the same instants and are mirrors. Everything that
/// can interact over NVLink (tensor-parallel rings, data-parallel rings relayed over NVLink to
/// a rail's NIC) stays simulated; mirrors differ only in their private NICs, which is exact
/// where those cannot contend (the caller decides, see replica_contention()).
/// Throws std::invalid_argument for an unknown schedule or DP strategy.
/// `domain_gpus`: see StepContext.
/// `flops`: the compute tasks carry their FLOPs (Workload::flops), for an export.
StepPlan build_step(const CostModel& cost, int fold_unit = 0, int domain_gpus = 0, bool flops = false);

/// The registered DP strategy of `t`: `data_parallel` where set, else the one `zero` names.
const DataParallelStrategy& data_parallel_strategy(const TrainingSpec& t);

} // namespace clustersim
