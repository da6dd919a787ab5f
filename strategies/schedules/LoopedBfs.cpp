// Looped breadth-first (Lamy-Poirier 2023, arXiv 2211.05953; PyTorch's ScheduleLoopedBFS, named
// "LoopedBFS" in torchtitan's pipeline_parallel_schedule): each rank holds v model chunks and
// runs every micro-batch's forward through its first chunk, then through its second, and so on;
// the backwards follow in reverse, last chunk and last micro-batch first
// (torch/distributed/pipelining/schedules.py, ScheduleLoopedBFS._calculate_single_rank_operations).
// With at least p micro-batches the bubble is (p-1)/(v·m + p-1), as interleaved 1F1B's, without
// its micro-batch multiple of p (with fewer, a chunk's first forward waits for the last stage);
// every chunk's activations are held until the backwards begin, as in GPipe.
#include "strategies/PipelineSchedule.hpp"

namespace clustersim {
namespace {

class LoopedBfs final : public PipelineSchedule {
public:
  std::vector<PipelineOp> order(int, const PipelineShape& shape) const override
  {
    return chunk_by_chunk(shape.micro_batches, shape.chunks, true);
  }

  /// Every chunk of every micro-batch, each 1/v of a micro-batch's activations.
  double in_flight(int, const PipelineShape& shape) const override { return shape.micro_batches; }

  bool chunked() const override { return true; }
  /// Interleaved 1F1B's bubble with GPipe's memory: worth searching only where interleaving is
  /// refused (micro-batches per pipeline not a multiple of pp), so the planner tries it when named.
  bool searched() const override { return false; }
  std::vector<int> planner_chunks() const override { return {2, 3, 4, 6, 8}; }
  const char* torchtitan_name() const override { return "LoopedBFS"; }
  bool in_megatron() const override { return false; }
};

const ScheduleRegistry::Registrar reg("looped-bfs", "breadth-first over vpp model chunks per rank: every micro-batch through one chunk, then the next; interleaved's bubble, every micro-batch in flight", [] { return std::make_unique<LoopedBfs>(); });

} // namespace
} // namespace clustersim
