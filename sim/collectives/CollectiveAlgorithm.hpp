#pragma once
/// A collective algorithm turns (operation, group, bytes) into the flows it puts on the wire:
/// phases of concurrent flows, each flow carrying the whole volume of its hop (a ring hop, a
/// tree edge, one pair of a hierarchical phase), plus the number of algorithm steps each phase
/// takes (their latencies are added analytically). One algorithm per file, registered by name.

#include "ClusterGraph.hpp"
#include "Registry.hpp"
#include "Workload.hpp"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace clustersim {

struct PlannedFlow {
  std::uint32_t src = 0; ///< member index in the group
  std::uint32_t dst = 0;
  double bytes = 0; ///< payload bytes (protocol efficiency is applied by the engine)
};

struct PlannedPhase {
  std::vector<PlannedFlow> flows;
  int steps = 1; ///< algorithm steps of this phase (latency multiples)
};

struct FlowPlan {
  std::vector<PlannedPhase> phases;
};

/// The group a collective runs over, on the cluster.
struct GroupView {
  const ClusterGraph& cluster;
  const std::vector<std::uint32_t>& ranks; ///< GPU ids, in group order
};

class CollectiveAlgorithm {
public:
  virtual ~CollectiveAlgorithm() = default;
  virtual bool supports(CollOp op) const = 0;
  /// `bytes` follows the nccl-tests convention of CollectiveCall::bytes.
  virtual FlowPlan plan(CollOp op, const GroupView& group, double bytes) const = 0;
};

using AlgorithmRegistry = Registry<CollectiveAlgorithm>;

/// Members grouped by node, nodes in order of first appearance, members in group order.
std::vector<std::vector<std::uint32_t>> members_by_node(const GroupView& g);

/// Builds a phase, merging flows between the same pair of members into one (same path, so
/// under max-min sharing one flow of the summed size finishes at the same time).
class PhaseBuilder {
public:
  explicit PhaseBuilder(PlannedPhase& phase) : phase_(phase) {}
  void add(std::uint32_t src, std::uint32_t dst, double bytes);

private:
  PlannedPhase& phase_;
  std::unordered_map<std::uint64_t, std::size_t> index_;
};

} // namespace clustersim
