#pragma once
/// Runs a Workload on the simulated platform.
///
/// One SimGrid actor per busy (rank, stream), on the rank's GPU host, walks its stream in
/// order: it waits for a task's dependencies, then runs it — compute as a SimGrid execution
/// of seconds × host speed, point-to-point as one mailbox comm between the two GPUs after both
/// sides are ready, a collective as its algorithm's flows (each member posts the flows it
/// sends and receives; phases are separated by barriers) followed by the analytic latency.
/// Flows issued by many actors keep SimGrid 3.32 off its per-issuer linear scans.

#include "CollectiveEngine.hpp"
#include "SimPlatform.hpp"
#include "Workload.hpp"

#include <cstddef>
#include <vector>

namespace clustersim {

struct ExecutionStats {
  std::size_t actors = 0;
  std::size_t executions = 0; ///< SimGrid Exec activities
  std::size_t flows = 0;      ///< SimGrid comms
  std::size_t sleeps = 0;
  std::size_t collectives = 0; ///< collective calls run
};

struct ExecutionResult {
  double makespan = 0;       ///< s, when the last task finished
  std::vector<double> ready; ///< per task: when its dependencies and stream predecessor were done
  std::vector<double> start; ///< per task: when it began (collectives: when every member had arrived)
  std::vector<double> end;   ///< per task
  ExecutionStats stats;
};

/// Executes `w`; throws std::logic_error if the workload deadlocks.
ExecutionResult execute(const Workload& w, SimPlatform& platform, CollectiveEngine& collectives);

} // namespace clustersim
