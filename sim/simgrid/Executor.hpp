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

#include "sim/CollectiveEngine.hpp"
#include "sim/ExecutionResult.hpp"
#include "sim/simgrid/SimPlatform.hpp"

namespace clustersim {

/// Executes `w`; throws std::logic_error if the workload deadlocks.
ExecutionResult execute(const Workload& w, SimPlatform& platform, CollectiveEngine& collectives,
                        const ExecutionOptions& options = {});

} // namespace clustersim
