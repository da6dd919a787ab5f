// GPipe (Huang et al. 2019): all forwards, then all backwards. Bubble (p-1)/(m+p-1); every
// micro-batch's activations are held until its backward.
#include "strategies/PipelineSchedule.hpp"

namespace clustersim {
namespace {

class GPipe final : public PipelineSchedule {
public:
  std::vector<PipelineOp> order(int, const PipelineShape& shape) const override
  {
    return chunk_by_chunk(shape.micro_batches, shape.chunks, false);
  }

  double in_flight(int, const PipelineShape& shape) const override { return shape.micro_batches; }

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
