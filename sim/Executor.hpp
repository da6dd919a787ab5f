#pragma once
/// Runs a Workload on the simulated platform.
///
/// One SimGrid actor per busy (rank, stream), on the rank's GPU host, walks its stream in
/// order: it waits for a task's dependencies, then runs it — compute as a delay of its seconds
/// (or, if some rank computes on two streams, which then share the GPU, as a SimGrid execution
/// of seconds × host speed), point-to-point after both sides are ready, a collective after
/// every (simulated) member has arrived: its algorithm's flows phase by phase (separated by
/// barriers), then the latency added by formula (CollectiveEngine). Flows between simulated ranks are mailbox comms posted
/// by both actors, which keeps SimGrid 3.32 off its per-issuer linear scans.
///
/// Workers block by suspending themselves on intrusive lists (no semaphores, no per-wait
/// allocation); whoever completes what they wait for queues them, and a kernel timer at the
/// current instant resumes the queue from maestro (no simcall per wake). A delay is a kernel
/// timer that resumes the suspended worker (no sleep activity, which SimGrid backs with a
/// CPU-model variable).
///
/// Three shortcuts, all exact:
///  * A collective (or transfer) whose links no other group or stream ever uses cannot be
///    contended; on idle links its paced flows take exactly the predicted time, so it runs as
///    a delay of that time instead of flows.
///  * In a folded workload, mirror ranks have no tasks; a flow between a simulated rank and a
///    mirror is issued by the simulated side (host to host), a flow between two mirrors is
///    dropped (it mirrors one that is simulated).
///  * When a worker finishes a task that another worker of its rank waits for, and its own
///    next task cannot start before that worker's next analytic collective has ended (it
///    depends on it, or on a later task of that stream), it runs the collective itself instead
///    of waking the other: the collective starts at the same instant and the other stream
///    stays sequential, minus two context switches. Typical: the compute stream runs the
///    tensor-parallel collectives it waits for.
///
/// One approximation: a latency-bound collective (ExecPlan::latency_bound, its bytes under
/// 0.1 % of its time) runs as a delay of its predicted time even on shared links.

#include "CollectiveEngine.hpp"
#include "SimPlatform.hpp"
#include "Workload.hpp"

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

/// Executes `w`; throws std::logic_error if the workload deadlocks.
ExecutionResult execute(const Workload& w, SimPlatform& platform, CollectiveEngine& collectives,
                        const ExecutionOptions& options = {});

} // namespace clustersim
