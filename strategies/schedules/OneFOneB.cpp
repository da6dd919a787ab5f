// 1F1B (PipeDream-Flush, Narayanan et al. 2021): stage s warms up with p-s-1 forwards, then
// alternates one forward and one backward, then drains. Same bubble as GPipe,
// (p-1)/(m+p-1), with at most p-s micro-batches in flight.
#include "strategies/PipelineSchedule.hpp"

#include <algorithm>

namespace clustersim {
namespace {

class OneFOneB final : public PipelineSchedule {
public:
  std::vector<PipelineOp> order(int stage, const PipelineShape& shape) const override
  {
    const int stages = shape.stages;
    const int m = shape.micro_batches;
    std::vector<PipelineOp> ops;
    int warmup = std::min(stages - stage - 1, m);
    int fwd = 0;
    int bwd = 0;
    for (; fwd < warmup; ++fwd)
      ops.push_back({true, fwd, 0});
    while (fwd < m) {
      ops.push_back({true, fwd++, 0});
      ops.push_back({false, bwd++, 0});
    }
    while (bwd < m)
      ops.push_back({false, bwd++, 0});
    return ops;
  }

  /// The warm-up's forwards plus the one in the steady phase: p - s.
  double in_flight(int stage, const PipelineShape& shape) const override
  {
    return std::min(shape.micro_batches, shape.stages - stage);
  }

  const char* torchtitan_name() const override { return "1F1B"; }
};

const ScheduleRegistry::Registrar reg("1f1b", "PipeDream-Flush: warm-up, one forward one backward, drain; at most p-s micro-batches in flight", [] { return std::make_unique<OneFOneB>(); });

} // namespace
} // namespace clustersim
