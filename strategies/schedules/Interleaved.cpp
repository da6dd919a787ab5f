// Interleaved 1F1B (Narayanan et al. 2021, Megatron-LM's forward_backward_pipelining_with_
// interleaving): each rank holds v model chunks; micro-batches go through the chunks in
// groups of p. Bubble (p-1)/(v·m + p-1) in units of one chunk's work.
#include "strategies/PipelineSchedule.hpp"

#include <algorithm>

namespace clustersim {
namespace {

class Interleaved final : public PipelineSchedule {
public:
  std::vector<PipelineOp> order(int stage, int p, int m, int v) const override
  {
    const int total = m * v;
    auto op = [&](int k, bool forward) {
      int chunk = (k / p) % v;
      if (!forward)
        chunk = v - 1 - chunk;
      int mb = (k / (p * v)) * p + k % p;
      return PipelineOp{forward, mb, chunk};
    };
    int warmup = m == p ? total : std::min(total, (p - stage - 1) * 2 + (v - 1) * p);
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

  /// The warm-up's chunk forwards, 2(p-s-1) + (v-1)p, plus one, each a 1/v of a micro-batch.
  double in_flight(int stage, int p, int m, int v) const override
  {
    double chunks = std::min<double>(static_cast<double>(m) * v, 2.0 * (p - stage - 1) + (v - 1) * p + 1);
    return chunks / v;
  }

  bool chunked() const override { return true; }
  int micro_batch_multiple(int stages) const override { return stages; }
  std::vector<int> planner_chunks() const override { return {2, 3, 4, 6, 8}; }
  const char* torchtitan_name() const override { return "Interleaved1F1B"; }
};

const ScheduleRegistry::Registrar reg("interleaved", "Megatron interleaved 1F1B over vpp model chunks per rank; bubble (p-1)/(v m)", [] { return std::make_unique<Interleaved>(); });

} // namespace
} // namespace clustersim
