#include "sim/simgrid/CollectiveBench.hpp"

#include "sim/CollectiveEngine.hpp"
#include "sim/EventEngine.hpp"
#include "sim/simgrid/SimPlatform.hpp"

namespace clustersim {

namespace {

/// SimGrid's executor, the reference; the event engine where a GPU pair's traffic is split over
/// several routes (ecmp-qp), which SimGrid's one route per host pair cannot carry.
ExecutionResult run_engine(const Workload& w, const ClusterGraph& cluster, CollectiveEngine& engine,
                           const ExecutionOptions& options)
{
  constexpr double kSpeed = 1e12; // no compute in these workloads
  if (cluster.paths() > 1)
    return execute_events(w, engine, kSpeed, options);
  SimPlatform platform(cluster, kSpeed);
  return execute(w, platform, engine, options);
}

} // namespace

CollectiveRun run_collectives(const ClusterGraph& cluster, const ProtocolTable& protocols,
                              const std::vector<CollectiveSpec>& calls)
{
  Workload w(static_cast<std::uint32_t>(cluster.gpus()));
  for (const auto& c : calls) {
    auto g = w.add_group(c.ranks);
    w.add_collective(c.op, g, c.bytes, Stream::dp, {Category::dp_comm, "collective", -1, -1}, {}, w.algo_index(c.algo));
  }
  CollectiveEngine engine(cluster, protocols);
  // flows, not delays: simulating the flows is what this microbenchmark is for
  ExecutionOptions options;
  options.delay_when_exclusive = false;
  ExecutionResult r = run_engine(w, cluster, engine, options);
  CollectiveRun out;
  out.seconds = r.makespan;
  out.stats = r.stats;
  if (!calls.empty()) {
    const ExecPlan& p = engine.plan(w, 0);
    out.algorithm = p.algorithm;
    out.protocol = p.protocol;
    out.predicted_s = p.predicted_s;
  }
  return out;
}

double run_transfers(const ClusterGraph& cluster, const ProtocolTable& protocols, const std::vector<TransferSpec>& t)
{
  Workload w(static_cast<std::uint32_t>(cluster.gpus()));
  for (const auto& x : t)
    w.add_p2p(x.from, x.to, x.bytes, Stream::pp_send_fwd, Stream::pp_recv_fwd, {Category::pp_comm, "transfer", -1, -1},
              {}, {});
  CollectiveEngine engine(cluster, protocols);
  return run_engine(w, cluster, engine, {}).makespan;
}

double bus_factor(CollOp op, int n)
{
  double d = n;
  switch (op) {
  case CollOp::all_reduce:
    return 2 * (d - 1) / d;
  case CollOp::all_gather:
  case CollOp::reduce_scatter:
  case CollOp::all_to_all:
    return (d - 1) / d;
  case CollOp::broadcast:
  case CollOp::reduce:
  case CollOp::sendrecv:
    return 1;
  }
  return 1;
}

} // namespace clustersim
