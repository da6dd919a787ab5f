#pragma once
/// A Chrome / Perfetto trace (JSON trace event format) of one simulated step: a process per
/// node, a thread per GPU stream, a complete ("X") event per task with its category, layer and
/// micro-batch, and the compute stream's idle gaps as "idle" events named after what they
/// waited for. Timestamps are simulated microseconds. In a folded simulation only the
/// simulated ranks appear (the metadata says so). A transfer between two traced streams is also
/// a flow event ("s" at the send's start, "f" at the receive's end) that viewers draw as an arrow.

#include "sim/ExecutionResult.hpp"
#include "strategies/workload/Workload.hpp"
#include "topology/ClusterGraph.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace clustersim {

/// What a trace holds (`run --trace-ranks`, `--trace-streams`), and the trace once written.
struct TraceRequest {
  std::vector<std::uint8_t> ranks; ///< per rank, 1 = traced; empty: every simulated rank
  std::uint32_t streams = ~0u;     ///< bit (1 << Stream) per traced stream
  /// per micro-batch, 1 = its tasks are traced; empty: all (tasks of no micro-batch, such as the
  /// optimizer and the gradient reductions, are traced only when this is empty)
  std::vector<std::uint8_t> micro_batches;
  std::string json;                ///< the trace, written by the simulation
  bool traced(std::uint32_t rank) const { return ranks.empty() || (rank < ranks.size() && ranks[rank]); }
  bool traced(Stream s) const { return (streams >> static_cast<unsigned>(s)) & 1u; }
  bool traced_micro_batch(std::int32_t m) const
  {
    return micro_batches.empty() || (m >= 0 && static_cast<std::size_t>(m) < micro_batches.size() && micro_batches[static_cast<std::size_t>(m)]);
  }
};

std::string chrome_trace(const Workload& w, const ExecutionResult& r, const ClusterGraph& cluster,
                         const std::string& title, const TraceRequest& only = {});

} // namespace clustersim
