#pragma once
/// What running a Workload gives, whichever engine ran it (the event engine, SimGrid's actors or
/// the contention-free timeline), and the rules every engine shares: when a task was ready,
/// when the host issued it, and the check that every task ran. No engine's headers: the code
/// that reads a run (breakdown, trace, network load) does not see SimGrid.

#include "strategies/workload/Workload.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace clustersim {

struct ExecutionStats {
  std::size_t actors = 0;
  std::size_t executions = 0;           ///< computations (delays, or SimGrid Exec activities)
  std::size_t flows = 0;                ///< SimGrid comms
  std::size_t sleeps = 0;               ///< communication delays (exclusive calls, latencies)
  std::size_t collectives = 0;          ///< collective calls run
  std::size_t exclusive_collectives = 0; ///< of which run as a delay (links nobody else uses)
  std::size_t transfers = 0;            ///< point-to-point transfers
  std::size_t exclusive_transfers = 0;
  std::size_t helped = 0; ///< exclusive collective tasks run by another worker of the same rank
};

struct ExecutionOptions {
  /// Run contention-free collectives and transfers as delays (exact; off only to test it).
  bool delay_when_exclusive = true;
  /// Let a worker whose next task waits on another stream of its rank run that stream's
  /// ready exclusive collectives itself (exact; off only to test it).
  bool help_streams = true;
  /// Event engine: settle flow rates incrementally (exact; off only to test it: every change
  /// then fills every flow again).
  bool incremental_sharing = true;
};

struct ExecutionResult {
  double makespan = 0;       ///< s, when the last task finished
  std::vector<double> start; ///< per task: when it began (collectives: when every member had arrived)
  std::vector<double> end;   ///< per task
  ExecutionStats stats;
};

/// When task `id` was ready to run: its stream predecessor and its dependencies had ended (0
/// for a stream's first task without dependencies). Every engine starts a task's issue,
/// arrival or rendezvous at that instant, so it is read off `end` rather than kept per task.
double ready_time(const Workload& w, const ExecutionResult& r, TaskId id);

/// What both engines read off a workload before they run it.
struct WorkloadShape {
  std::vector<std::uint32_t> present; ///< per collective call: its simulated members
  /// Every rank computes on one stream only, so a GPU never runs two kernels at once and a
  /// computation is a delay of its seconds; otherwise computations share the GPU's speed.
  bool one_compute_stream = true;
};
WorkloadShape shape_of(const Workload& w);

/// When the rank's host has issued compute task `id` (of the compute stream), its previous
/// compute task having been issued at `host_clock`: after that, after every host_sync task
/// it depends on has ended (`end` per task; the host waited for the GPU), plus its own host
/// seconds. Both engines call it as the task becomes ready, so its dependencies have ended.
/// Compute tasks of other streams are not on the host's timeline.
double issue_time(const Workload& w, TaskId id, double host_clock, const std::vector<double>& end);

/// Checks that every task ran (`done` per task; throws std::logic_error naming how many did
/// not: the workload deadlocked) and sets `result.makespan` to the last end. Shared by the
/// executor and the Timeline.
void close_result(const std::vector<std::uint8_t>& done, ExecutionResult& result);

} // namespace clustersim
