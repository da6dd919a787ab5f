// Hierarchical: the intra-node part on NVLink, the inter-node part across rails.
//   all_reduce:     reduce-scatter inside each node (ring, (k-1)/k·S), all-reduce of each
//                   1/k shard across nodes among the members on the same rail (k concurrent
//                   rings, 2(n-1)/n·S/k), all-gather inside each node.
//   reduce_scatter: inside each node, then across nodes on each rail (S/k shards).
//   all_gather:     across nodes on each rail (S/k shards), then inside each node.
// The time is the sum of the phases; needs the same number of members on every node. NCCL has
// no such algorithm (its all-gather and reduce-scatter are rings): `auto` never picks it; it
// runs when named, for frameworks that compose two-level collectives themselves.
#include "sim/collectives/CollectiveAlgorithm.hpp"

namespace clustersim {
namespace {

class Hierarchical final : public CollectiveAlgorithm {
public:
  bool supports(CollOp op) const override
  {
    return op == CollOp::all_reduce || op == CollOp::reduce_scatter || op == CollOp::all_gather;
  }

  bool nccl() const override { return false; }

  bool applicable(CollOp op, const GroupView& g) const override
  {
    auto nodes = members_by_node(g);
    return supports(op) && nodes.size() > 1 && uniform_members_per_node(nodes) > 1;
  }

  FlowPlan plan(CollOp op, const GroupView& g, double bytes) const override
  {
    FlowPlan plan;
    auto nodes = members_by_node(g);
    const std::size_t k = uniform_members_per_node(nodes);
    const std::size_t n = nodes.size();
    if (g.ranks.size() < 2 || bytes <= 0 || k == 0)
      return plan;
    auto intra = [&](CollOp phase_op) {
      RingCost rc = ring_cost(phase_op, k, bytes);
      plan.phases.emplace_back();
      plan.phases.back().steps = rc.steps;
      PhaseBuilder b(plan.phases.back());
      for (const auto& nd : nodes)
        add_ring(b, nd, rc.volume);
    };
    auto inter = [&](CollOp phase_op) {
      RingCost rc = ring_cost(phase_op, n, bytes / static_cast<double>(k));
      plan.phases.emplace_back();
      plan.phases.back().steps = rc.steps;
      PhaseBuilder b(plan.phases.back());
      for (std::size_t j = 0; j < k; ++j) {
        std::vector<std::uint32_t> rail;
        for (const auto& nd : nodes)
          rail.push_back(nd[j]);
        add_ring(b, rail, rc.volume);
      }
    };
    switch (op) {
    case CollOp::all_reduce:
      intra(CollOp::reduce_scatter);
      inter(CollOp::all_reduce);
      intra(CollOp::all_gather);
      break;
    case CollOp::reduce_scatter:
      intra(CollOp::reduce_scatter);
      inter(CollOp::reduce_scatter);
      break;
    case CollOp::all_gather:
      inter(CollOp::all_gather);
      intra(CollOp::all_gather);
      break;
    default:
      break;
    }
    return plan;
  }
};

const AlgorithmRegistry::Registrar reg("hier", "intra-node ring, inter-node rings per rail, intra-node ring (not NCCL's: only when named); all-reduce, all-gather, reduce-scatter", [] { return std::make_unique<Hierarchical>(); });

} // namespace
} // namespace clustersim
