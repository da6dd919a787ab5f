#pragma once
/// Runs a Workload on the cluster's links without SimGrid's actors: one event heap, and one
/// max-min solve per simulated instant, after every event of that instant (MaxMinNetwork).
///
/// It has the SimGrid executor's semantics exactly (simgrid/Executor.hpp), and reads the same links and
/// routes (the ClusterGraph's resources and routes, which GraphZone hands SimGrid):
///  * a stream's task starts when its predecessor and its dependencies are done;
///  * a transfer when both sides have arrived; a collective when every simulated member has,
///    then its algorithm's flows phase by phase, each phase closed by a barrier and its
///    latency, then the call's base latency; flows to or from mirrors issued, flows between
///    mirrors dropped;
///  * contention-free calls and transfers (ExclusiveLinks) and latency-bound calls as delays
///    of their predicted time;
///  * compute as delays, or, where a rank computes on two streams, as work sharing the GPU's
///    speed max-min (SimGrid's CPU model).
/// Flows are paced as the executor paces them (bytes / the phase's wire time) and carry the
/// same on-wire byte counts. The SimGrid executor stays the reference: tests/test_engines.cpp
/// holds both to the same step and the same task ends.

#include "sim/CollectiveEngine.hpp"
#include "sim/ExecutionResult.hpp"
#include "sim/MaxMinNetwork.hpp"
#include "strategies/workload/Workload.hpp"

namespace clustersim {

/// What the event engine did beyond ExecutionStats: the sharing solver's work.
struct EventEngineStats {
  std::size_t events = 0; ///< heap events (delays, latencies)
  std::size_t instants = 0; ///< distinct simulated times processed
  MaxMinStats network;
};

/// Executes `w` on `collectives.cluster()`; `host_speed` is the FLOP/s a GPU's work is priced
/// at when compute shares the GPU (the SimGrid platform's host speed). Throws std::logic_error
/// if the workload deadlocks.
ExecutionResult execute_events(const Workload& w, CollectiveEngine& collectives, double host_speed,
                               const ExecutionOptions& options = {}, EventEngineStats* stats = nullptr);

} // namespace clustersim
