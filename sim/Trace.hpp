#pragma once
/// A Chrome / Perfetto trace (JSON trace event format) of one simulated step: a process per
/// node, a thread per GPU stream, a complete ("X") event per task with its category, layer and
/// micro-batch, and the compute stream's idle gaps as "idle" events named after what they
/// waited for. Timestamps are simulated microseconds. In a folded simulation only the
/// simulated ranks appear (the metadata says so).

#include "ClusterGraph.hpp"
#include "Executor.hpp"
#include "Workload.hpp"

#include <string>

namespace clustersim {

std::string chrome_trace(const Workload& w, const ExecutionResult& r, const ClusterGraph& cluster,
                         const std::string& title);

} // namespace clustersim
