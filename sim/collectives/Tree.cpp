// Double binary tree (NCCL's Tree algorithm, all-reduce). Across nodes two complementary
// binary trees (NCCL's ncclGetDtree: the second mirrors the first for an even node count,
// shifts it by one for an odd one, so every node is a leaf in one of them) each reduce half of
// the data up and broadcast it down, pipelined, so both directions run at once; inside a node
// the data goes through a chain of the node's members. With k members per node on every node,
// k rail-aligned channels each carry 1/k (channel c's chain ends at member c, whose NIC
// carries the channel's tree edges). Steps: 2·(k-1 + depth) instead of the ring's 2(N-1),
// which is what makes it win at large node counts.
#include "sim/collectives/CollectiveAlgorithm.hpp"

#include <cmath>

namespace clustersim {
namespace {

/// Parent of `rank` in NCCL's binary tree over n ranks (-1 for the root).
int btree_parent(int n, int rank)
{
  if (rank == 0)
    return -1;
  int bit = 1;
  for (; bit < n; bit <<= 1)
    if (bit & rank)
      break;
  int up = (rank ^ bit) | (bit << 1);
  if (up >= n)
    up = rank ^ bit;
  return up;
}

/// Parent in tree t (0 or 1) of the double binary tree.
int dtree_parent(int n, int rank, int t)
{
  if (t == 0)
    return btree_parent(n, rank);
  if (n % 2 == 1) {
    int shifted = (rank - 1 + n) % n;
    int p = btree_parent(n, shifted);
    return p < 0 ? -1 : (p + 1) % n;
  }
  int mirrored = n - 1 - rank;
  int p = btree_parent(n, mirrored);
  return p < 0 ? -1 : n - 1 - p;
}

class Tree final : public CollectiveAlgorithm {
public:
  bool supports(CollOp op) const override { return op == CollOp::all_reduce; }
  bool node_symmetric() const override { return false; }

  bool applicable(CollOp op, const GroupView& g) const override
  {
    return supports(op) && uniform_members_per_node(members_by_node(g)) > 0;
  }

  FlowPlan plan(CollOp, const GroupView& g, double bytes) const override
  {
    FlowPlan plan;
    if (g.ranks.size() < 2 || bytes <= 0)
      return plan;
    auto nodes = members_by_node(g);
    const std::size_t k = uniform_members_per_node(nodes);
    const int n = static_cast<int>(nodes.size());
    const std::size_t channels = n > 1 && k > 1 ? k : 1;
    plan.phases.emplace_back();
    PlannedPhase& phase = plan.phases.back();
    PhaseBuilder b(phase);
    const double per_channel = bytes / static_cast<double>(channels);
    int depth = 0;
    for (int t = 0; t < 2 && n > 1; ++t)
      for (int r = 0; r < n; ++r) {
        int d = 0;
        for (int x = r; dtree_parent(n, x, t) >= 0; x = dtree_parent(n, x, t))
          ++d;
        depth = std::max(depth, d);
      }
    phase.steps = 2 * (static_cast<int>(k) - 1 + depth);
    for (std::size_t c = 0; c < channels; ++c) {
      // chain inside every node, ending at member c: reduce towards it, broadcast from it
      for (const auto& nd : nodes)
        for (std::size_t j = 0; j + 1 < k; ++j) {
          std::uint32_t near = nd[(c + j) % k];
          std::uint32_t far = nd[(c + j + 1) % k];
          b.add(far, near, per_channel);
          b.add(near, far, per_channel);
        }
      // the two trees over nodes, half the data each, both directions
      for (int t = 0; t < 2 && n > 1; ++t)
        for (int r = 0; r < n; ++r) {
          int p = dtree_parent(n, r, t);
          if (p < 0)
            continue;
          std::uint32_t child = nodes[static_cast<std::size_t>(r)][c % k];
          std::uint32_t parent = nodes[static_cast<std::size_t>(p)][c % k];
          b.add(child, parent, per_channel / 2);
          b.add(parent, child, per_channel / 2);
        }
    }
    return plan;
  }
};

const AlgorithmRegistry::Registrar reg("tree", "NCCL double binary tree across nodes, chains inside; all-reduce", [] { return std::make_unique<Tree>(); });

} // namespace
} // namespace clustersim
