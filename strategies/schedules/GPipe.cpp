// GPipe (Huang et al. 2019): all forwards, then all backwards. Bubble (p-1)/(m+p-1); every
// micro-batch's activations are held until its backward.
#include "PipelineSchedule.hpp"

namespace clustersim {
namespace {

class GPipe final : public PipelineSchedule {
public:
  std::vector<PipelineOp> order(int, int, int micro_batches, int chunks) const override
  {
    std::vector<PipelineOp> ops;
    for (int c = 0; c < chunks; ++c)
      for (int m = 0; m < micro_batches; ++m)
        ops.push_back({true, m, c});
    for (int c = chunks - 1; c >= 0; --c)
      for (int m = 0; m < micro_batches; ++m)
        ops.push_back({false, m, c});
    return ops;
  }

  double in_flight(int, int, int micro_batches, int) const override { return micro_batches; }

  const char* dominated() const override
  {
    return "dominated: GPipe (1F1B has its bubble with less activation memory)";
  }
  const char* torchtitan_name() const override { return "GPipe"; }
  bool in_megatron() const override { return false; }
};

const ScheduleRegistry::Registrar reg("gpipe", "all forwards, then all backwards; every micro-batch in flight", [] { return std::make_unique<GPipe>(); });

} // namespace
} // namespace clustersim
