// Interleaved 1F1B (Narayanan et al. 2021, Megatron-LM's forward_backward_pipelining_with_
// interleaving): each rank holds v model chunks; micro-batches go through the chunks in
// groups of N. Bubble (p-1)/(v·m + p-1) in units of one chunk's work. Megatron-LM groups by
// N = p and needs m a multiple of p; PyTorch's ScheduleInterleaved1F1B (torchtitan's
// "Interleaved1F1B") runs R = max(1, m / p) rounds of N = m / R and needs m a multiple of R
// (PipelineShape). Both warm up with (v-1)N + 2(p-1-s) chunk forwards, capped at v·m
// (pytorch/pytorch@1fd7abc2 torch/distributed/pipelining/schedules.py _get_warmup_ops;
// NVIDIA/Megatron-LM@d98e8a64dd megatron/core/pipeline_parallel/schedules.py:929-979,
// get_pp_rank_microbatches, which no longer runs every forward first when m == p).
#include "strategies/PipelineSchedule.hpp"

#include <algorithm>

namespace clustersim {
namespace {

class Interleaved final : public PipelineSchedule {
public:
  std::vector<PipelineOp> order(int stage, const PipelineShape& shape) const override
  {
    const int p = shape.stages;
    const int m = shape.micro_batches;
    const int v = shape.chunks;
    const int n = shape.group();
    const int total = m * v;
    auto op = [&](int k, bool forward) {
      int chunk = (k / n) % v;
      if (!forward)
        chunk = v - 1 - chunk;
      int mb = (k / (n * v)) * n + k % n;
      return PipelineOp{forward, mb, chunk};
    };
    int warmup = std::min(total, (p - stage - 1) * 2 + (v - 1) * n);
    std::vector<PipelineOp> ops;
    int f = 0;
    int b = 0;
    for (; f < warmup; ++f)
      ops.push_back(op(f, true));
    while (f < total) {
      ops.push_back(op(f++, true));
      ops.push_back(op(b++, false));
    }
    while (b < total)
      ops.push_back(op(b++, false));
    return ops;
  }

  /// The warm-up's chunk forwards, 2(p-s-1) + (v-1)N, plus one, each a 1/v of a micro-batch.
  double in_flight(int stage, const PipelineShape& shape) const override
  {
    const int p = shape.stages;
    const int v = shape.chunks;
    double chunks = std::min<double>(static_cast<double>(shape.micro_batches) * v,
                                     2.0 * (p - stage - 1) + (v - 1) * shape.group() + 1);
    return chunks / v;
  }

  bool chunked() const override { return true; }
  std::pair<int, std::string> micro_batch_multiple(const PipelineShape& shape) const override
  {
    if (shape.flexible_rounds)
      return {shape.rounds(), "the rounds"};
    return {shape.stages, "pp"};
  }
  std::vector<int> planner_chunks() const override { return {2, 3, 4, 6, 8}; }
  const char* torchtitan_name() const override { return "Interleaved1F1B"; }
};

const ScheduleRegistry::Registrar reg("interleaved",
                                      "interleaved 1F1B over vpp model chunks per rank, micro-batches grouped as the "
                                      "framework does (interleaved_groups); bubble (p-1)/(v m)",
                                      [] { return std::make_unique<Interleaved>(); });

} // namespace
} // namespace clustersim
