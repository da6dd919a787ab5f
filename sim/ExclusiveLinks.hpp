#pragma once
/// Which collective calls and transfers of a workload cannot be contended: every resource
/// their flows cross is used by no other (group, stream) and no other transfer stream. On idle
/// links their paced flows take exactly the predicted time, so the executor runs them as a
/// delay of that time instead of flows (exact). Latency-bound calls (ExecPlan::latency_bound)
/// run as delays too and load no resource here.

#include "sim/CollectiveEngine.hpp"
#include "strategies/workload/Workload.hpp"
#include "topology/ClusterGraph.hpp"

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

namespace clustersim {

struct ExclusiveUse {
  std::vector<bool> calls; ///< per collective call
  /// per transfer stream (sender rank, receiver rank, sender stream)
  std::map<std::tuple<std::uint32_t, std::uint32_t, int>, bool> transfers;
};

/// `plans[call]` is the plan of each collective call of `w`.
ExclusiveUse find_exclusive_use(const Workload& w, const ClusterGraph& cg, const std::vector<const ExecPlan*>& plans);

} // namespace clustersim
