// DDP (PyTorch DistributedDataParallel / Megatron DDP): gradients are all-reduced over the
// data-parallel (x context-parallel) group during the last micro-batch's backward (earlier
// micro-batches accumulate locally, no_sync). With overlap.grad_reduce, in buckets of
// `bucket_size` bytes (PyTorch's 25 MB default) in the order backward produces them, each
// starting as soon as it is full, so only the tail is exposed; without, in one call over the
// whole gradient buffer after the backward (Megatron's local DDP).
// Traffic per step: 2(N-1)/N · Ψ · bytes per gradient. A MoE model's routed experts have a
// buffer of their own, reduced over the expert-data-parallel group (Megatron's
// expert_data_parallel_group: the ranks holding the same experts).
#include "strategies/StepBuilder.hpp"

#include <algorithm>

namespace clustersim {
namespace {

class Ddp final : public DataParallelStrategy {
public:
  int zero_stage() const override { return 0; }

  void after_backward(StepContext& ctx, int stage, int unit, int, bool last_mb,
                      const std::vector<TaskId>& done) override
  {
    if (!last_mb)
      return;
    State& s = state(ctx, stage);
    s.last_done = done;
    for (ParamPool p : kParamPools) {
      double& pending = s.pending[static_cast<int>(p)];
      pending += pool_trainable(ctx.units(stage)[static_cast<std::size_t>(unit)], p) * ctx.grad_comm_bytes();
      if (ctx.training().overlap.grad_reduce && pending >= bucket(ctx))
        flush(ctx, stage, p, pending);
    }
  }

  void end_step(StepContext& ctx, int stage, const PerPos& extra) override
  {
    State& s = state(ctx, stage);
    // without overlap, gradients are reduced after the whole backward in one call over the
    // contiguous buffer (Megatron's local DDP); with overlap, what the last bucket left
    for (ParamPool p : kParamPools)
      if (s.pending[static_cast<int>(p)] > 0)
        flush(ctx, stage, p, s.pending[static_cast<int>(p)]);
    PerPos deps = extra;
    for (const auto& last : s.last_comm)
      for (std::size_t i = 0; i < deps.size(); ++i)
        if (!last.empty() && last[i] != kNoTask)
          deps[i].push_back(last[i]);
    double params = 0;
    for (const auto& u : ctx.units(stage))
      params += u.trainable;
    ctx.compute(stage, ctx.cost().optimizer_seconds(params), {Category::optimizer, "optimizer_step", -1, -1}, deps);
  }

private:
  static double bucket(const StepContext& ctx)
  {
    return ctx.bucket_bytes(ctx.grad_comm_bytes());
  }

  struct State {
    double pending[2] = {0, 0}; ///< per ParamPool
    std::vector<TaskId> last_done;
    std::vector<TaskId> last_comm[2];
  };

  State& state(StepContext& ctx, int stage)
  {
    if (states_.empty())
      states_.resize(static_cast<std::size_t>(ctx.stages()));
    return states_[static_cast<std::size_t>(stage)];
  }

  void flush(StepContext& ctx, int stage, ParamPool p, double bytes)
  {
    State& s = state(ctx, stage);
    double& pending = s.pending[static_cast<int>(p)];
    pending -= bytes;
    if (pending < 1e-9)
      pending = 0;
    const auto& groups = ctx.replica_groups(stage, p);
    if (groups.empty())
      return; // no data parallelism
    PerPos deps(s.last_done.size());
    for (std::size_t i = 0; i < deps.size(); ++i)
      deps[i].push_back(s.last_done[i]);
    s.last_comm[static_cast<int>(p)] = ctx.collective(stage, groups, CollOp::all_reduce, bytes, Stream::dp,
                                 {Category::dp_comm, "dp_grad_all_reduce", -1, -1}, deps);
  }

  std::vector<State> states_;
};

const DataParallelRegistry::Registrar reg("ddp", "zero 0: gradients all-reduced in buckets during the last backward", [] { return std::make_unique<Ddp>(); });

} // namespace
} // namespace clustersim
