#pragma once
/// The order in which one pipeline stage runs the forward and backward passes of its
/// micro-batches (and model chunks, for interleaved schedules). Registered by the names of
/// `training.pipeline_schedule`: gpipe, 1f1b, interleaved.

#include "Registry.hpp"

#include <vector>

namespace clustersim {

struct PipelineOp {
  bool forward = true;
  int micro_batch = 0;
  int chunk = 0; ///< model chunk (virtual stage index on this rank), 0 unless interleaved
};

class PipelineSchedule {
public:
  static constexpr const char* kRegistryKind = "pipeline schedule";
  virtual ~PipelineSchedule() = default;
  /// Every forward and backward of `micro_batches` micro-batches over `chunks` chunks, in
  /// the order stage `stage` of `stages` runs them.
  virtual std::vector<PipelineOp> order(int stage, int stages, int micro_batches, int chunks) const = 0;
  /// Micro-batches whose activations stage `stage` holds at its peak (a chunk's counts 1/chunks):
  /// what the memory model multiplies a micro-batch's activations by.
  virtual double in_flight(int stage, int stages, int micro_batches, int chunks) const = 0;
};

using ScheduleRegistry = Registry<PipelineSchedule>;

} // namespace clustersim
