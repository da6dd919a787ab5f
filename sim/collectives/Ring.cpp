// Ring (NCCL's Ring algorithm). Every rank sends to its successor; one flow per hop carries
// the hop's whole volume: all-reduce 2(N-1)/N·S over 2(N-1) steps, all-gather and
// reduce-scatter (N-1)/N·S over N-1 steps, broadcast / reduce a pipelined chain of S.
//
// When the group spans nodes with k > 1 members on each, NCCL runs k rail-aligned channels:
// channel c enters every node at its c-th member and leaves through the same rail (PXN: the
// last member hands the data over NVLink to the c-th member, whose NIC sends it on), and
// carries 1/k of the data. That is what lets a multi-node ring use every NIC of a node.
//
// Inside a node whose GPUs are wired point to point (DGX-1's NVLink hybrid cube-mesh), NCCL
// lays its rings along NVLinks: the lane multigraph is decomposed into edge-disjoint
// Hamiltonian cycles, each run in both directions, and the data is split over them.
#include "sim/collectives/CollectiveAlgorithm.hpp"

#include <algorithm>
#include <functional>

namespace clustersim {
namespace {

/// A largest set of lane-disjoint Hamiltonian cycles over the members (all on one
/// NVLink-mesh node): every Hamiltonian cycle is enumerated, then the packing that uses the
/// most cycles without exceeding any link's lane count is searched exhaustively (8 GPUs:
/// a few dozen cycles).
std::vector<std::vector<std::uint32_t>> mesh_cycles(const GroupView& g)
{
  const NodeSpec& node = g.cluster.platform().node;
  const std::size_t k = g.ranks.size();
  std::vector<std::vector<int>> lanes(k, std::vector<int>(k, 0));
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j) {
      int a = g.cluster.local_of(static_cast<int>(g.ranks[i]));
      int b = g.cluster.local_of(static_cast<int>(g.ranks[j]));
      for (const auto& l : node.mesh)
        if ((l.a == a && l.b == b) || (l.a == b && l.b == a))
          lanes[i][j] = l.lanes;
    }
  std::vector<std::vector<std::uint32_t>> all;
  std::vector<std::uint32_t> path{0};
  std::vector<bool> used(k, false);
  used[0] = true;
  std::function<void()> extend = [&]() {
    std::uint32_t last = path.back();
    if (path.size() == k) {
      if (lanes[last][0] > 0 && path[1] < path[k - 1]) // each cycle once, not once per direction
        all.push_back(path);
      return;
    }
    for (std::uint32_t next = 1; next < k; ++next) {
      if (used[next] || lanes[last][next] == 0)
        continue;
      used[next] = true;
      path.push_back(next);
      extend();
      path.pop_back();
      used[next] = false;
    }
  };
  extend();
  std::vector<std::size_t> chosen;
  std::vector<std::size_t> best;
  std::function<void(std::size_t)> pack = [&](std::size_t from) {
    if (chosen.size() > best.size())
      best = chosen;
    for (std::size_t c = from; c < all.size(); ++c) {
      const auto& cyc = all[c];
      bool fits = true;
      for (std::size_t i = 0; i < k && fits; ++i)
        fits = lanes[cyc[i]][cyc[(i + 1) % k]] > 0;
      if (!fits)
        continue;
      for (std::size_t i = 0; i < k; ++i) {
        --lanes[cyc[i]][cyc[(i + 1) % k]];
        --lanes[cyc[(i + 1) % k]][cyc[i]];
      }
      chosen.push_back(c);
      pack(c + 1);
      chosen.pop_back();
      for (std::size_t i = 0; i < k; ++i) {
        ++lanes[cyc[i]][cyc[(i + 1) % k]];
        ++lanes[cyc[(i + 1) % k]][cyc[i]];
      }
    }
  };
  pack(0);
  std::vector<std::vector<std::uint32_t>> cycles;
  for (std::size_t c : best)
    cycles.push_back(all[c]);
  return cycles;
}

class Ring final : public CollectiveAlgorithm {
public:
  bool supports(CollOp op) const override { return op != CollOp::all_to_all && op != CollOp::sendrecv; }

  FlowPlan plan(CollOp op, const GroupView& g, double bytes) const override
  {
    FlowPlan plan;
    if (g.ranks.size() < 2 || bytes <= 0)
      return plan;
    const bool chain = op == CollOp::broadcast || op == CollOp::reduce;
    if (op == CollOp::all_to_all)
      return plan;
    const RingCost rc = ring_cost(op, g.ranks.size(), bytes);
    const double volume = rc.volume;
    const int steps = rc.steps;
    auto nodes = members_by_node(g);
    if (!chain && nodes.size() == 1 && g.ranks.size() >= 3 &&
        g.cluster.platform().node.scale_up == ScaleUpKind::nvlink_mesh) {
      auto cycles = mesh_cycles(g);
      if (!cycles.empty()) {
        plan.phases.emplace_back();
        plan.phases.back().steps = steps;
        PhaseBuilder b(plan.phases.back());
        const double share = volume / (2.0 * static_cast<double>(cycles.size()));
        for (auto& cycle : cycles) {
          add_ring(b, cycle, share);
          std::reverse(cycle.begin(), cycle.end());
          add_ring(b, cycle, share);
        }
        return plan;
      }
    }
    std::size_t k = nodes.front().size();
    bool uniform = !chain && nodes.size() > 1 && k > 1;
    for (const auto& nd : nodes)
      uniform = uniform && nd.size() == k;
    const std::size_t channels = uniform ? k : 1;

    plan.phases.emplace_back();
    PlannedPhase& phase = plan.phases.back();
    phase.steps = steps;
    PhaseBuilder b(phase);
    const double per_channel = volume / static_cast<double>(channels);
    if (chain) {
      // a pipelined chain rooted at member 0, towards it for reduce
      for (std::uint32_t i = 0; i + 1 < g.ranks.size(); ++i)
        op == CollOp::broadcast ? b.add(i, i + 1, volume) : b.add(i + 1, i, volume);
      return plan;
    }
    for (std::size_t c = 0; c < channels; ++c) {
      // the ring of channel c: every node's members rotated to start at member c
      std::vector<std::uint32_t> order;
      order.reserve(g.ranks.size());
      if (channels == 1) {
        for (std::uint32_t i = 0; i < g.ranks.size(); ++i)
          order.push_back(i);
      } else {
        for (const auto& nd : nodes)
          for (std::size_t j = 0; j < k; ++j)
            order.push_back(nd[(c + j) % k]);
      }
      const std::size_t len = order.size();
      for (std::size_t i = 0; i < len; ++i) {
        std::uint32_t from = order[i];
        std::uint32_t to = order[(i + 1) % len];
        if (channels > 1 && (i + 1) % k == 0) {
          // PXN: over NVLink to this node's member on rail c, then over that rail's NIC
          std::uint32_t rail = order[i + 1 - k];
          b.add(from, rail, per_channel);
          b.add(rail, to, per_channel);
        } else {
          b.add(from, to, per_channel);
        }
      }
    }
    return plan;
  }
};

const AlgorithmRegistry::Registrar reg("ring", "NCCL ring with one rail-aligned channel per member of a node (PXN); every operation but all-to-all", [] { return std::make_unique<Ring>(); });

} // namespace
} // namespace clustersim
