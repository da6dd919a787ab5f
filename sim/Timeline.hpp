#pragma once
/// Contention-free evaluation of a Workload: the same dependency and stream semantics as the
/// SimGrid executor (a task starts when its dependencies and its stream predecessor are done;
/// a collective when every simulated member has arrived; a transfer when both sides have),
/// with every collective and transfer taking its time on idle links. No actors, no flows: a
/// list-scheduling pass over the task graph, thousands of times faster than the executor.
///
/// It equals the executor wherever nothing contends (the executor itself runs those calls as
/// exactly these delays); where links are shared it is a lower bound on communication time.
/// The planner ranks layouts with it; `simulation: {mode: analytic}` reports it.

#include "sim/CollectiveEngine.hpp"
#include "sim/ExecutionResult.hpp"
#include "strategies/workload/Workload.hpp"

namespace clustersim {

struct TimelineOptions {
  /// Approximate contention at each GPU's ports: collectives and transfers of one rank that
  /// use the same port class (scale-up: NVLink/PCIe; scale-out: the NIC) run one after the
  /// other instead of overlapping for free. What the planner ranks with; off for
  /// `mode: analytic`, which is the pure contention-free bound.
  bool share_ports = false;
};

/// Throws std::logic_error if the workload deadlocks.
ExecutionResult evaluate_contention_free(const Workload& w, CollectiveEngine& collectives,
                                         const TimelineOptions& options = {});

} // namespace clustersim
