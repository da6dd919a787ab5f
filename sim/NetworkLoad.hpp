#pragma once
/// How busy each tier of links is over a step: the bytes every flow of the step moves (each
/// collective plan's flows and each transfer, over the route both engines use), per link, as a
/// share of what the link could have carried in the step, plus the share a background holds
/// (cluster.background). Latency-bound calls, which run as
/// delays, move none. In a folded step only the simulated ranks' links carry traffic; their
/// mirrors' carry the same.

#include "sim/CollectiveEngine.hpp"
#include "sim/ExecutionResult.hpp"
#include "strategies/workload/Workload.hpp"
#include "topology/ClusterGraph.hpp"

#include <string>
#include <vector>

namespace clustersim {

struct TierLoad {
  LinkTier tier = LinkTier::scale_up;
  std::size_t links = 0;     ///< one-way links (a bundle of parallel cables counts once)
  std::size_t used = 0;      ///< links that carry some of the step's bytes
  double bytes = 0;          ///< over every link of the tier
  double busiest_load = 0;   ///< the busiest link's bytes / (its bandwidth × the step)
  std::string busiest_link;  ///< its name
  double mean_load = 0;      ///< the mean over the links in use (the background's share when none is)
  double background = 0;     ///< the share of each link another tenant's traffic holds
};

/// Per tier that the cluster has, in LinkTier order. `collectives` holds the step's plans.
std::vector<TierLoad> network_load(const Workload& w, CollectiveEngine& collectives, double step_s);

/// One rank's communication in a simulated step: each collective (from every member's arrival)
/// and each transfer (from both sides' arrival) it took part in, timed as it ran and as it
/// would run alone on the fabric (the collective's plan, the transfer's path: its own flows
/// only, so ECMP's collisions among them count, and a background's share stays taken). They
/// overlap on the rank's streams, so the sums can exceed the step.
struct CommTime {
  double ran = 0;     ///< s, summed
  double idle = 0;    ///< s, summed, each alone on the fabric
  double slowed = 0;  ///< s, summed: each one's time beyond its time alone (links shared with other flows)
};
CommTime comm_time(const Workload& w, const ExecutionResult& r, CollectiveEngine& collectives, std::uint32_t rank);

} // namespace clustersim
