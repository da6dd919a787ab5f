// ZeRO (Rajbhandari et al. 2020) stages 1-3 over the data-parallel (x context-parallel) group.
//  zero1: optimizer states sharded (Megatron's distributed optimizer): gradients are
//         reduce-scattered once per step in buckets (like DDP's all-reduce), the optimizer
//         updates the local shard, and parameters are all-gathered back — at the start of the
//         next forward when overlap.param_gather (prefetched bucket by bucket), else right
//         after the optimizer.
//  zero2: gradients sharded as well, so every micro-batch's gradients are reduce-scattered.
//  zero3: parameters sharded too (FSDP): each unit's parameters are all-gathered before its
//         forward and again before its backward, in every micro-batch, one unit ahead when
//         overlap.param_gather; gradients reduce-scattered per micro-batch.
// Traffic per micro-batch step of zero3 = 3(N-1)/N·Ψ = 1.5x DDP's 2(N-1)/N·Ψ (same dtypes).
#include "StepBuilder.hpp"

#include <algorithm>

namespace clustersim {
namespace {


class Zero final : public DataParallelStrategy {
public:
  explicit Zero(int stage) : zero_(stage) {}

  std::vector<std::vector<TaskId>> before_forward(StepContext& ctx, int stage, int unit, int mb) override
  {
    State& s = state(ctx, stage);
    if (zero_ == 3)
      return gather_unit(ctx, stage, unit, mb, s.fwd_history);
    if (!ctx.training().overlap.param_gather || dp_size(ctx) == 1)
      return {};
    // zero1/2 with overlap: the previous step's parameter all-gather, bucket by bucket in
    // forward order, overlapping this step's forward
    if (s.gather_of_unit.empty())
      plan_gather_buckets(ctx, stage);
    int b = s.gather_of_unit[static_cast<std::size_t>(unit)];
    if (s.gather_tasks[static_cast<std::size_t>(b)].empty()) {
      std::vector<std::vector<TaskId>> none(ctx.stage_ranks(stage).size());
      s.gather_tasks[static_cast<std::size_t>(b)] = ctx.collective(
          stage, ctx.groups(stage, Dim::cp, Dim::dp), CollOp::all_gather, s.gather_bytes[static_cast<std::size_t>(b)],
          Stream::dp_gather, {Category::dp_comm, "dp_param_all_gather", -1, -1}, none);
    }
    if (mb != 0) // only the step's first forward of a unit waits for its gather
      return {};
    std::vector<std::vector<TaskId>> deps(ctx.stage_ranks(stage).size());
    const auto& g = s.gather_tasks[static_cast<std::size_t>(b)];
    for (std::size_t i = 0; i < deps.size(); ++i)
      if (g[i] != kNoTask)
        deps[i].push_back(g[i]);
    return deps;
  }

  std::vector<std::vector<TaskId>> before_backward(StepContext& ctx, int stage, int unit, int mb) override
  {
    if (zero_ != 3)
      return {};
    return gather_unit(ctx, stage, unit, mb, state(ctx, stage).bwd_history);
  }

  void after_backward(StepContext& ctx, int stage, int unit, int, bool last_mb,
                      const std::vector<TaskId>& done) override
  {
    if (zero_ == 1 && !last_mb)
      return;
    State& s = state(ctx, stage);
    s.pending += ctx.units(stage)[static_cast<std::size_t>(unit)].params * ctx.grad_comm_bytes();
    s.last_done = done;
    bool per_unit = zero_ == 3;
    if (per_unit || (ctx.training().overlap.grad_reduce && s.pending >= bucket(ctx, ctx.grad_comm_bytes())))
      flush(ctx, stage, s.pending);
  }

  void end_step(StepContext& ctx, int stage, const std::vector<std::vector<TaskId>>& extra) override
  {
    State& s = state(ctx, stage);
    const double grad_bucket = bucket(ctx, ctx.grad_comm_bytes());
    while (s.pending > 0)
      flush(ctx, stage, std::min(grad_bucket, s.pending));
    std::vector<std::vector<TaskId>> deps = extra;
    for (std::size_t i = 0; i < deps.size(); ++i)
      if (!s.last_comm.empty() && s.last_comm[i] != kNoTask)
        deps[i].push_back(s.last_comm[i]);
    double params = 0;
    for (const auto& u : ctx.units(stage))
      params += u.params;
    auto opt = ctx.compute(stage, ctx.cost().optimizer_seconds(params / dp_size(ctx)),
                           {Category::optimizer, "optimizer_step", -1, -1}, deps);
    if (zero_ == 3 || ctx.training().overlap.param_gather || dp_size(ctx) == 1)
      return;
    // gather the updated parameters back, exposed
    double total = params * ctx.param_comm_bytes();
    std::vector<std::vector<TaskId>> after(opt.size());
    for (std::size_t i = 0; i < opt.size(); ++i)
      after[i].push_back(opt[i]);
    while (total > 0) {
      double b = std::min(bucket(ctx, ctx.param_comm_bytes()), total);
      total -= b;
      ctx.collective(stage, ctx.groups(stage, Dim::cp, Dim::dp), CollOp::all_gather, b, Stream::dp_gather,
                     {Category::dp_comm, "dp_param_all_gather", -1, -1}, after);
    }
  }

private:
  struct State {
    double pending = 0;
    std::vector<TaskId> last_done;
    std::vector<TaskId> last_comm;
    std::vector<int> gather_of_unit;
    std::vector<double> gather_bytes;
    std::vector<std::vector<TaskId>> gather_tasks;
    std::vector<TaskId> fwd_history; ///< last compute per position at the previous forward hook
    std::vector<TaskId> bwd_history;
  };

  static int dp_size(const StepContext& ctx) { return ctx.training().dp * ctx.training().cp; }

  /// Bucket in bytes for a tensor of `bytes_per_param`: the configured size, else Megatron's
  /// distributed-optimizer rule, max(40M, 1M x dp) parameters per bucket.
  static double bucket(const StepContext& ctx, double bytes_per_param)
  {
    if (ctx.training().bucket_bytes > 0)
      return ctx.training().bucket_bytes;
    return std::max(40e6, 1e6 * dp_size(ctx)) * bytes_per_param;
  }

  State& state(StepContext& ctx, int stage)
  {
    if (states_.empty())
      states_.resize(static_cast<std::size_t>(ctx.stages()));
    return states_[static_cast<std::size_t>(stage)];
  }

  void plan_gather_buckets(StepContext& ctx, int stage)
  {
    State& s = state(ctx, stage);
    const auto& units = ctx.units(stage);
    double acc = 0;
    int index = 0;
    const double limit = bucket(ctx, ctx.param_comm_bytes());
    for (const auto& u : units) {
      double bytes = u.params * ctx.param_comm_bytes();
      if (acc > 0 && acc + bytes > limit) {
        s.gather_bytes.push_back(acc);
        acc = 0;
        ++index;
      }
      acc += bytes;
      s.gather_of_unit.push_back(index);
    }
    s.gather_bytes.push_back(acc);
    s.gather_tasks.assign(s.gather_bytes.size(), {});
  }

  std::vector<std::vector<TaskId>> gather_unit(StepContext& ctx, int stage, int unit, int, std::vector<TaskId>& history)
  {
    const auto& ranks = ctx.stage_ranks(stage);
    std::vector<TaskId> now(ranks.size(), kNoTask);
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      const auto& prog = ctx.workload().program(ranks[i], Stream::compute);
      if (!prog.empty())
        now[i] = prog.back();
    }
    if (dp_size(ctx) == 1)
      return {};
    // prefetch: issue when the previous unit started, i.e. after what preceded it
    const std::vector<TaskId>& start = ctx.training().overlap.param_gather && !history.empty() ? history : now;
    std::vector<std::vector<TaskId>> deps(ranks.size());
    for (std::size_t i = 0; i < ranks.size(); ++i)
      if (start[i] != kNoTask)
        deps[i].push_back(start[i]);
    double bytes = ctx.units(stage)[static_cast<std::size_t>(unit)].params * ctx.param_comm_bytes();
    auto ag = ctx.collective(stage, ctx.groups(stage, Dim::cp, Dim::dp), CollOp::all_gather, bytes, Stream::dp_gather,
                             {Category::dp_comm, "zero3_param_all_gather", -1, -1}, deps);
    history = now;
    std::vector<std::vector<TaskId>> out(ranks.size());
    for (std::size_t i = 0; i < ranks.size(); ++i)
      if (ag[i] != kNoTask)
        out[i].push_back(ag[i]);
    return out;
  }

  void flush(StepContext& ctx, int stage, double bytes)
  {
    State& s = state(ctx, stage);
    s.pending -= bytes;
    if (s.pending < 1e-9)
      s.pending = 0;
    const auto& groups = ctx.groups(stage, Dim::cp, Dim::dp);
    if (groups.empty())
      return;
    std::vector<std::vector<TaskId>> deps(s.last_done.size());
    for (std::size_t i = 0; i < deps.size(); ++i)
      deps[i].push_back(s.last_done[i]);
    s.last_comm = ctx.collective(stage, groups, CollOp::reduce_scatter, bytes, Stream::dp,
                                 {Category::dp_comm, "dp_grad_reduce_scatter", -1, -1}, deps);
  }

  int zero_;
  std::vector<State> states_;
};

const DataParallelRegistry::Registrar r1("zero1", "optimizer states sharded (Megatron distributed optimizer): gradients reduce-scattered, parameters all-gathered", [] { return std::make_unique<Zero>(1); });
const DataParallelRegistry::Registrar r2("zero2", "gradients sharded too: reduce-scattered every micro-batch", [] { return std::make_unique<Zero>(2); });
const DataParallelRegistry::Registrar r3("zero3", "parameters sharded too (FSDP): all-gathered before every forward and backward", [] { return std::make_unique<Zero>(3); });

} // namespace
} // namespace clustersim
