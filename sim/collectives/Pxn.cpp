// PXN all-to-all (NCCL 2.12+, on by default: NCCL_PXN_DISABLE=0): across nodes, data for a
// remote GPU first moves over NVLink to the local GPU on the destination's rail, which sends it
// over its own NIC to the destination, so every inter-node flow stays on one rail. With k
// members per node on n nodes and `bytes` each member sends (nccl-tests convention), member
// (a, i) hands member (a, j) its data for rail j of every node, n·S/(nk), and member (a, j)
// sends member (b, j) what its node holds for it, k·S/(nk). NCCL pipelines the two hops in
// chunks, so both run in one phase: the slower hop (the NIC) sets the time. N·(k-1) NVLink
// flows plus k·n·(n-1) rail flows instead of direct's nk·(nk-1) (fewer still through one switch:
// add_exchange).
#include "sim/collectives/CollectiveAlgorithm.hpp"

namespace clustersim {
namespace {

class Pxn final : public CollectiveAlgorithm {
public:
  bool supports(CollOp op) const override { return op == CollOp::all_to_all; }
  std::vector<std::string> protocols() const override { return {"simple"}; }

  bool applicable(CollOp op, const GroupView& g) const override
  {
    auto nodes = members_by_node(g);
    bool domains = false; // across NVLink domains (inside one, everything is NVLink: direct)
    for (auto r : g.ranks)
      domains = domains || g.cluster.domain_of(static_cast<int>(r)) != g.cluster.domain_of(static_cast<int>(g.ranks[0]));
    return supports(op) && domains && nodes.size() > 1 && uniform_members_per_node(nodes) > 1;
  }

  FlowPlan plan(CollOp op, const GroupView& g, double bytes) const override
  {
    (void)op;
    FlowPlan plan;
    auto nodes = members_by_node(g);
    const std::size_t k = uniform_members_per_node(nodes);
    const std::size_t n = nodes.size();
    if (g.ranks.size() < 2 || bytes <= 0 || k == 0)
      return plan;
    const double slice = bytes / static_cast<double>(n * k);
    plan.phases.emplace_back();
    PhaseBuilder b(plan.phases.back());
    // inside each node: member i hands member j its data for rail j of every node
    for (std::size_t a = 0; a < n; ++a)
      add_exchange(b, g, nodes[a], slice * static_cast<double>(n));
    // along each rail: what node a holds for member (c, j), its own share included
    for (std::size_t j = 0; j < k; ++j) {
      std::vector<std::uint32_t> rail;
      for (std::size_t a = 0; a < n; ++a)
        rail.push_back(nodes[a][j]);
      add_exchange(b, g, rail, slice * static_cast<double>(k));
    }
    return plan;
  }
};

const AlgorithmRegistry::Registrar reg("pxn", "all-to-all across nodes over NVLink to the destination's rail, then that rail's NIC (NCCL's PXN); groups with the same members on every node", [] { return std::make_unique<Pxn>(); });

} // namespace
} // namespace clustersim
