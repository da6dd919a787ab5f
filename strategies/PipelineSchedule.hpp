#pragma once
/// The order in which one pipeline stage runs the forward and backward passes of its
/// micro-batches (and model chunks, for interleaved schedules). Registered by the names of
/// `training.pipeline_schedule` (gpipe, 1f1b, interleaved). A schedule is one file and one
/// CMake line: the layout rules, the memory model, the step builder, the planner and the launch
/// files ask the registered class, never its name.

#include "topology/config/Registry.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace clustersim {

struct PipelineOp {
  bool forward = true;
  int micro_batch = 0;
  int chunk = 0; ///< model chunk (virtual stage index on this rank), 0 unless interleaved
};

/// One pipeline as a schedule sees it: its stages, the micro-batches of a step, the model chunks
/// per rank, and how the framework's interleaved schedule groups the micro-batches.
struct PipelineShape {
  int stages = 1;
  int micro_batches = 1;
  int chunks = 1;
  /// Interleaved schedules send micro-batches through a chunk in rounds: false, rounds of pp
  /// micro-batches, m a multiple of pp (Megatron-LM: microbatch_group_size_per_vp_stage
  /// defaults to pp, NVIDIA/Megatron-LM@d98e8a64dd megatron/core/pipeline_parallel/schedules.py
  /// :1160-1180); true, max(1, m / pp) rounds of m / rounds micro-batches, m a multiple of the
  /// rounds (PyTorch's ScheduleInterleaved1F1B, pytorch/pytorch@1fd7abc2
  /// torch/distributed/pipelining/schedules.py, ScheduleInterleaved1F1B.__init__).
  bool flexible_rounds = false;

  /// Rounds through each chunk, and micro-batches per round.
  int rounds() const { return flexible_rounds ? std::max(1, micro_batches / stages) : micro_batches / stages; }
  int group() const { return flexible_rounds ? micro_batches / rounds() : stages; }
};

class PipelineSchedule {
public:
  static constexpr const char* kRegistryKind = "pipeline schedule";
  virtual ~PipelineSchedule() = default;
  /// Every forward and backward of the shape's micro-batches over its chunks, in the order
  /// stage `stage` runs them.
  virtual std::vector<PipelineOp> order(int stage, const PipelineShape& shape) const = 0;
  /// Micro-batches whose activations stage `stage` holds at its peak (a chunk's counts 1/chunks):
  /// what the memory model multiplies a micro-batch's activations by.
  virtual double in_flight(int stage, const PipelineShape& shape) const = 0;

  /// Whether each rank runs vpp >= 2 model chunks (virtual stages); a schedule that does not
  /// runs exactly one.
  virtual bool chunked() const { return false; }
  /// Micro-batches per pipeline must be a multiple of this (interleaved: of the stages, or of
  /// the rounds with flexible rounds), and what it is called in an error.
  virtual std::pair<int, std::string> micro_batch_multiple(const PipelineShape& shape) const
  {
    (void)shape;
    return {1, ""};
  }
  /// Whether the planner tries this schedule when --fixed does not name it.
  virtual bool searched() const { return true; }
  /// The chunk counts (vpp) the planner tries with this schedule.
  virtual std::vector<int> planner_chunks() const { return {1}; }
  /// Why the planner drops this schedule when another one is always at least as good (null: never).
  virtual const char* dominated() const { return nullptr; }
  /// torchtitan's name (`pipeline_parallel_schedule`), and whether Megatron-LM runs it.
  virtual const char* torchtitan_name() const = 0;
  virtual bool in_megatron() const { return true; }
};

using ScheduleRegistry = Registry<PipelineSchedule>;

/// Breadth first: every micro-batch's forward through chunk 0, then chunk 1, ..., then the
/// backwards from the last chunk back; each chunk's backwards in micro-batch order, or from the
/// last micro-batch when `backward_last_first`. GPipe's order (one chunk) and looped BFS's.
inline std::vector<PipelineOp> chunk_by_chunk(int micro_batches, int chunks, bool backward_last_first)
{
  std::vector<PipelineOp> ops;
  for (int c = 0; c < chunks; ++c)
    for (int m = 0; m < micro_batches; ++m)
      ops.push_back({true, m, c});
  for (int c = chunks - 1; c >= 0; --c)
    for (int i = 0; i < micro_batches; ++i)
      ops.push_back({false, backward_last_first ? micro_batches - 1 - i : i, c});
  return ops;
}

/// The schedule a run uses when it names none: Megatron-LM's, interleaved with virtual stages,
/// 1F1B without (megatron/core/pipeline_parallel/schedules.py, get_forward_backward_func).
inline const char* default_schedule(int vpp)
{
  return vpp > 1 ? "interleaved" : "1f1b";
}

} // namespace clustersim
