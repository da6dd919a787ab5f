// ZeRO (Rajbhandari et al. 2020) stages 1-3 over the data-parallel (x context-parallel) group.
//  zero1: optimizer states sharded (Megatron's distributed optimizer): gradients are
//         reduce-scattered once per step in buckets (like DDP's all-reduce), the optimizer
//         updates the local shard, and parameters are all-gathered back — at the start of the
//         next forward when overlap.param_gather (prefetched bucket by bucket), else right
//         after the optimizer.
//  zero2: gradients sharded as well, so every micro-batch's gradients are reduce-scattered.
//  zero3: parameters sharded too (FSDP, DeepSpeed ZeRO-3), run as the framework runs it
//         (FrameworkTraits::sharded): each unit's parameters are all-gathered before its forward
//         and, when resharded after forward, again before its backward, in every micro-batch -
//         one all-gather per unit (FSDP) or per parameter tensor (DeepSpeed), each with its own
//         latency and, for torch list-of-tensors collectives, one copy kernel per rank; issued
//         ahead of use as far as the framework prefetches; gradients reduce-scattered per unit
//         (FSDP) or per bucket (DeepSpeed). With pipeline parallelism torchtitan gathers once
//         and reduces once per step.
//  hsdp:  zero3 within each shard group of training.dp_shard replicas (StepContext::shard_groups);
//         each reduce-scatter's shard is then all-reduced over the replicate group, the ranks
//         holding the same shard in the other groups (PyTorch FSDP2 over a 2-D mesh,
//         _fsdp_collectives.py foreach_reduce; docs/design.md "Names").
// Traffic per micro-batch step of zero3 = 3(N-1)/N·Ψ = 1.5x DDP's 2(N-1)/N·Ψ (same dtypes).
// A MoE model's routed experts are a pool of their own (ParamPool): their gradients reduce,
// their parameters gather and their optimizer states shard over the expert-data-parallel
// ranks (the ranks holding the same experts), in buckets apart from the dense ones.
#include "strategies/StepBuilder.hpp"

#include <algorithm>

namespace clustersim {
namespace {


class Zero final : public DataParallelStrategy {
public:
  Zero(int stage, bool hybrid) : zero_(stage), hybrid_(hybrid) {}

  int zero_stage() const override { return zero_; }
  bool hybrid() const override { return hybrid_; }

  PerPos before_forward(StepContext& ctx, int stage, int unit, int mb) override
  {
    State& s = state(ctx, stage);
    if (zero_ == 3) {
      if (once_per_step(ctx) && mb != 0)
        return {};
      return gather_unit(ctx, stage, unit, mb, s.fwd_history);
    }
    if (!ctx.training().overlap.param_gather)
      return {};
    // zero1/2 with overlap: the previous step's parameter all-gather, bucket by bucket in
    // forward order, overlapping this step's forward
    PerPos deps(ctx.stage_ranks(stage).size());
    for (ParamPool p : kParamPools) {
      Gathers& gb = s.gathers[static_cast<int>(p)];
      if (gb.of_unit.empty())
        plan_gather_buckets(ctx, stage, p);
      const auto b = static_cast<std::size_t>(gb.of_unit[static_cast<std::size_t>(unit)]);
      if (gb.bytes[b] <= 0) // parameters this stage does not hold (no experts here): no all-gather
        continue;
      if (gb.tasks[b].empty()) {
        PerPos none(ctx.stage_ranks(stage).size());
        gb.tasks[b] = ctx.collective(stage, ctx.shard_groups(stage, p), CollOp::all_gather, gb.bytes[b],
                                     Stream::dp_gather, {Category::dp_comm, "dp_param_all_gather", -1, -1}, none);
      }
      for (std::size_t i = 0; i < deps.size(); ++i)
        if (gb.tasks[b][i] != kNoTask)
          deps[i].push_back(gb.tasks[b][i]);
    }
    if (mb != 0) // only the step's first forward of a unit waits for its gathers
      return {};
    return deps;
  }

  PerPos before_backward(StepContext& ctx, int stage, int unit, int mb) override
  {
    if (zero_ != 3 || once_per_step(ctx) || !ctx.training().traits().sharded.reshard_after_forward)
      return {};
    return gather_unit(ctx, stage, unit, mb, state(ctx, stage).bwd_history);
  }

  void after_backward(StepContext& ctx, int stage, int unit, int, bool last_mb,
                      const std::vector<TaskId>& done) override
  {
    if ((zero_ == 1 || (zero_ == 3 && once_per_step(ctx))) && !last_mb)
      return;
    State& s = state(ctx, stage);
    s.last_done = done;
    // FSDP reduces each unit's gradients; DeepSpeed and ZeRO-1/2 fill buckets
    const bool per_unit = zero_ == 3 && !ctx.training().traits().sharded.per_tensor;
    for (ParamPool p : kParamPools) {
      double& pending = s.pending[static_cast<int>(p)];
      pending += pool_trainable(ctx.units(stage)[static_cast<std::size_t>(unit)], p) * ctx.grad_comm_bytes();
      if (pending > 0 &&
          (per_unit || (ctx.training().overlap.grad_reduce && pending >= bucket(ctx, ctx.grad_comm_bytes()))))
        flush(ctx, stage, p, pending);
    }
  }

  void end_step(StepContext& ctx, int stage, const PerPos& extra) override
  {
    State& s = state(ctx, stage);
    const double grad_bucket = bucket(ctx, ctx.grad_comm_bytes());
    for (ParamPool p : kParamPools)
      while (s.pending[static_cast<int>(p)] > 0)
        flush(ctx, stage, p, std::min(grad_bucket, s.pending[static_cast<int>(p)]));
    PerPos deps = extra;
    for (const auto& last : s.last_comm)
      for (std::size_t i = 0; i < deps.size(); ++i)
        if (!last.empty() && last[i] != kNoTask)
          deps[i].push_back(last[i]);
    auto opt = ctx.compute(stage, ctx.cost().optimizer_seconds(ctx.sharded_params(stage)),
                           {Category::optimizer, "optimizer_step", -1, -1}, deps);
    if (zero_ == 3 || ctx.training().overlap.param_gather)
      return;
    // gather the updated parameters back, exposed
    PerPos after(opt.size());
    for (std::size_t i = 0; i < opt.size(); ++i)
      after[i].push_back(opt[i]);
    for (ParamPool p : kParamPools) {
      const auto& groups = ctx.shard_groups(stage, p);
      if (groups.empty())
        continue;
      double total = 0;
      for (const auto& u : ctx.units(stage))
        total += pool_trainable(u, p) * ctx.param_comm_bytes();
      while (total > 0) {
        double b = std::min(bucket(ctx, ctx.param_comm_bytes()), total);
        total -= b;
        ctx.collective(stage, groups, CollOp::all_gather, b, Stream::dp_gather,
                       {Category::dp_comm, "dp_param_all_gather", -1, -1}, after);
      }
    }
  }

private:
  /// One pool's parameter all-gathers of the step (zero1/2 with overlap.param_gather).
  struct Gathers {
    std::vector<int> of_unit;   ///< bucket of each unit
    std::vector<double> bytes;  ///< per bucket
    std::vector<std::vector<TaskId>> tasks;
  };
  struct State {
    double pending[2] = {0, 0}; ///< per ParamPool
    std::vector<TaskId> last_done;
    std::vector<TaskId> last_comm[2];
    Gathers gathers[2];
    std::vector<TaskId> fwd_history; ///< last compute per position at the previous forward hook
    std::vector<TaskId> bwd_history;
  };

  /// ZeRO-3 with pipelining where the framework keeps parameters over the step (torchtitan).
  static bool once_per_step(const StepContext& ctx)
  {
    return ctx.training().pp > 1 && ctx.training().traits().sharded.keep_with_pipeline;
  }

  struct Piece {
    ParamPool pool;
    double params;
  };
  /// The tensors one all-gather call moves for `u`, in parameters: the unit's dense part and
  /// its routed experts, or (DeepSpeed, a dense layer) each parameter tensor (after TP sharding).
  static std::vector<Piece> gather_pieces(const StepContext& ctx, const ParamUnit& u)
  {
    const ModelSpec& m = ctx.cost().model();
    std::vector<Piece> out;
    if (!ctx.training().traits().sharded.per_tensor || u.layer < 0 || u.expert > 0) {
      for (ParamPool p : kParamPools)
        if (pool_params(u, p) > 0)
          out.push_back({p, pool_params(u, p)});
      return out;
    }
    const double scale = u.params / m.layer_params(u.layer);
    for (double x : m.layer_tensors(u.layer))
      out.push_back({ParamPool::dense, x * scale});
    return out;
  }

  /// torch's list-of-tensors collectives: the flat buffer copied to (or from) one view per rank.
  static double list_copy_seconds(const StepContext& ctx, double bytes, int ranks)
  {
    return ranks * ctx.cost().gpu().launch_gap + ctx.cost().memory_seconds(2 * bytes);
  }

  /// Bucket in bytes for a tensor of `bytes_per_param`: the configured size, else the
  /// framework's rule (Megatron's distributed optimizer: max(40M, 1M x dp) parameters).
  static double bucket(const StepContext& ctx, double bytes_per_param) { return ctx.bucket_bytes(bytes_per_param); }

  State& state(StepContext& ctx, int stage)
  {
    if (states_.empty())
      states_.resize(static_cast<std::size_t>(ctx.stages()));
    return states_[static_cast<std::size_t>(stage)];
  }

  void plan_gather_buckets(StepContext& ctx, int stage, ParamPool p)
  {
    Gathers& g = state(ctx, stage).gathers[static_cast<int>(p)];
    double acc = 0;
    int index = 0;
    const double limit = bucket(ctx, ctx.param_comm_bytes());
    for (const auto& u : ctx.units(stage)) {
      double bytes = pool_trainable(u, p) * ctx.param_comm_bytes();
      if (acc > 0 && acc + bytes > limit) {
        g.bytes.push_back(acc);
        acc = 0;
        ++index;
      }
      acc += bytes;
      g.of_unit.push_back(index);
    }
    g.bytes.push_back(acc);
    g.tasks.assign(g.bytes.size(), {});
  }

  PerPos gather_unit(StepContext& ctx, int stage, int unit, int, std::vector<TaskId>& history)
  {
    const auto& ranks = ctx.stage_ranks(stage);
    std::vector<TaskId> now(ranks.size(), kNoTask);
    for (std::size_t i = 0; i < ranks.size(); ++i)
      now[i] = ctx.workload().last(ranks[i], Stream::compute);
    const ShardedTraits& sh = ctx.training().traits().sharded;
    const ParamUnit& u = ctx.units(stage)[static_cast<std::size_t>(unit)];
    // prefetch: issued when the previous unit started (after what preceded it) if the framework
    // gathers a unit ahead, else only once the previous unit is done
    const bool ahead = sh.per_tensor ? sh.prefetch_params >= u.params : sh.prefetch_units >= 1;
    const std::vector<TaskId>& start = ctx.training().overlap.param_gather && ahead && !history.empty() ? history : now;
    PerPos deps(ranks.size());
    for (std::size_t i = 0; i < ranks.size(); ++i)
      if (start[i] != kNoTask)
        deps[i].push_back(start[i]);
    std::vector<TaskId> last(ranks.size(), kNoTask);
    for (const Piece& piece : gather_pieces(ctx, u)) {
      const auto& groups = ctx.shard_groups(stage, piece.pool);
      if (groups.empty())
        continue; // one replica of this pool: nothing to gather
      const double bytes = piece.params * ctx.param_comm_bytes();
      last = ctx.collective(stage, groups, CollOp::all_gather, bytes, Stream::dp_gather,
                            {Category::dp_comm, "zero3_param_all_gather", -1, -1}, deps);
      if (sh.list_collectives)
        last = ctx.compute(stage, list_copy_seconds(ctx, bytes, ctx.shards(piece.pool)),
                           {Category::dp_comm, "zero3_gather_copies", -1, -1}, single_deps(last), Stream::dp_gather);
      deps.assign(ranks.size(), {}); // the stream orders the rest
    }
    history = now;
    return single_deps(last);
  }

  static PerPos single_deps(const std::vector<TaskId>& tasks)
  {
    PerPos out(tasks.size());
    for (std::size_t i = 0; i < tasks.size(); ++i)
      if (tasks[i] != kNoTask)
        out[i].push_back(tasks[i]);
    return out;
  }

  void flush(StepContext& ctx, int stage, ParamPool p, double bytes)
  {
    State& s = state(ctx, stage);
    double& pending = s.pending[static_cast<int>(p)];
    pending -= bytes;
    if (pending < 1e-9)
      pending = 0;
    const auto& groups = ctx.shard_groups(stage, p);
    if (groups.empty())
      return;
    PerPos deps(s.last_done.size());
    for (std::size_t i = 0; i < deps.size(); ++i)
      deps[i].push_back(s.last_done[i]);
    auto& last = s.last_comm[static_cast<int>(p)];
    last = ctx.collective(stage, groups, CollOp::reduce_scatter, bytes, Stream::dp,
                          {Category::dp_comm, "dp_grad_reduce_scatter", -1, -1}, deps);
    if (zero_ == 3 && ctx.training().traits().sharded.list_collectives)
      last = ctx.compute(stage, list_copy_seconds(ctx, bytes, ctx.shards(p)),
                         {Category::dp_comm, "zero3_reduce_copies", -1, -1}, single_deps(last), Stream::dp);
    // hybrid: each shard, reduced within its group, is then all-reduced over the groups
    const auto& across = ctx.replicate_groups(stage, p);
    if (!across.empty())
      last = ctx.collective(stage, across, CollOp::all_reduce, bytes / ctx.shards(p), Stream::dp,
                            {Category::dp_comm, "hsdp_grad_all_reduce", -1, -1}, single_deps(last));
  }

  int zero_;
  bool hybrid_;
  std::vector<State> states_;
};

const DataParallelRegistry::Registrar
    r1("zero1",
       "optimizer states sharded (Megatron distributed optimizer): gradients reduce-scattered, parameters all-gathered",
       [] { return std::make_unique<Zero>(1, false); });
const DataParallelRegistry::Registrar r2("zero2", "gradients sharded too: reduce-scattered every micro-batch",
                                         [] { return std::make_unique<Zero>(2, false); });
const DataParallelRegistry::Registrar
    r3("zero3", "parameters sharded too (FSDP): all-gathered before every forward and backward",
       [] { return std::make_unique<Zero>(3, false); });
const DataParallelRegistry::Registrar
    r4("hsdp",
       "zero3 within groups of dp_shard replicas, each shard's gradients all-reduced across the groups (hybrid "
       "sharding: FSDP2 over a 2-D mesh, FSDP's HYBRID_SHARD)",
       [] { return std::make_unique<Zero>(3, true); });

} // namespace
} // namespace clustersim
