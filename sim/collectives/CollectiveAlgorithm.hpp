#pragma once
/// A collective algorithm turns (operation, group, bytes) into the flows it puts on the wire:
/// phases of concurrent flows, each flow carrying the whole volume of its hop (a ring hop, a
/// tree edge, one pair of a hierarchical phase), plus the number of algorithm steps each phase
/// takes (their latencies are added analytically). One algorithm per file, registered by name.

#include "strategies/workload/Workload.hpp"
#include "topology/ClusterGraph.hpp"
#include "topology/config/Registry.hpp"

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
  static constexpr const char* kRegistryKind = "collective algorithm";
  virtual ~CollectiveAlgorithm() = default;
  virtual bool supports(CollOp op) const = 0;
  /// Whether the algorithm can run `op` on this group (shape, topology); default: supports(op).
  virtual bool applicable(CollOp op, const GroupView& group) const
  {
    (void)group;
    return supports(op);
  }
  /// Whether every node of a multi-node group carries the same traffic (a ring's hops, a
  /// hierarchical phase's rails), so that one node's flows stand for every node's. A tree's
  /// interior nodes carry more than its leaves: folding nodes into one is not exact for it.
  virtual bool node_symmetric() const { return true; }
  /// Whether NCCL's tuner can pick it (`auto`); an algorithm NCCL does not implement runs only
  /// when named.
  virtual bool nccl() const { return true; }
  /// Protocols the algorithm runs with.
  virtual std::vector<std::string> protocols() const { return {"ll", "ll128", "simple"}; }
  /// `bytes` follows the nccl-tests convention of CollectiveCall::bytes.
  virtual FlowPlan plan(CollOp op, const GroupView& group, double bytes) const = 0;
};

using AlgorithmRegistry = Registry<CollectiveAlgorithm>;

/// Members grouped by node, nodes in order of first appearance, members in group order.
std::vector<std::vector<std::uint32_t>> members_by_node(const GroupView& g);
/// Members per node when every node holds the same number, else 0.
std::size_t uniform_members_per_node(const std::vector<std::vector<std::uint32_t>>& nodes);
/// Ring volume and step count of an operation on n ranks (all_reduce 2(n-1)/n·S over 2(n-1)
/// steps, all_gather / reduce_scatter (n-1)/n·S over n-1 steps).
struct RingCost {
  double volume = 0;
  int steps = 0;
};
RingCost ring_cost(CollOp op, std::size_t n, double bytes);
/// Appends to `b` a single-channel ring over `order` carrying `volume` per hop.
class PhaseBuilder;
void add_ring(PhaseBuilder& b, const std::vector<std::uint32_t>& order, double volume);

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

/// Whether the members reach one another through one non-blocking switch over links of their
/// own: one NVSwitch domain, or NICs on one leaf switch (each member in its own NVLink domain).
bool one_switch(const GroupView& g, const std::vector<std::uint32_t>& members);
/// Adds an exchange in which every member sends `slice` to every other (an all-to-all). Through
/// one switch (one_switch) it is emitted as one flow per member to the next carrying its n-1
/// slices: every member's links carry exactly the same bytes, so on idle links and under
/// contention on those links it takes the same time, with n flows instead of n(n-1).
void add_exchange(PhaseBuilder& b, const GroupView& g, const std::vector<std::uint32_t>& members, double slice);

} // namespace clustersim
