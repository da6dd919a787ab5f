#pragma once
/// One collective on its own, the way nccl-tests runs it: a workload with a single call over a
/// group, executed on the simulated platform. Creates the SimGrid engine (once per process).

#include "sim/Protocols.hpp"
#include "sim/simgrid/Executor.hpp"
#include "strategies/workload/Workload.hpp"
#include "topology/ClusterGraph.hpp"

#include <string>
#include <vector>

namespace clustersim {

struct CollectiveRun {
  double seconds = 0;
  double predicted_s = 0; ///< the engine's analytic estimate of the first call
  std::string algorithm;
  std::string protocol;
  ExecutionStats stats;
};

/// Several calls may be run concurrently (each its own group), e.g. to measure contention;
/// the result is the time until the last one finished.
struct CollectiveSpec {
  CollOp op = CollOp::all_reduce;
  std::vector<std::uint32_t> ranks;
  double bytes = 0;
  std::string algo = "auto";
};

CollectiveRun run_collectives(const ClusterGraph& cluster, const ProtocolTable& protocols,
                              const std::vector<CollectiveSpec>& calls);

/// Concurrent point-to-point transfers.
struct TransferSpec {
  std::uint32_t from = 0;
  std::uint32_t to = 0;
  double bytes = 0;
};
/// Time until the last transfer arrived.
double run_transfers(const ClusterGraph& cluster, const ProtocolTable& protocols, const std::vector<TransferSpec>& t);

/// nccl-tests bus bandwidth factor: all_reduce 2(n-1)/n, all_gather / reduce_scatter /
/// all_to_all (n-1)/n, broadcast / reduce 1.
double bus_factor(CollOp op, int n);

} // namespace clustersim
