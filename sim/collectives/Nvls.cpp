// NVLS (NVLink SHARP, NVSwitch gen 3+): all-reduce inside one NVLink domain with the
// reduction done by the switch. Each GPU's port carries S·(N+1)/N up and down (its whole buffer
// read by the switch for the reduce-scatter, plus its reduced 1/N written back for the
// multicast all-gather), against the ring's 2(N-1)/N·S; two steps. Modelled as one flow per
// member of that size (to its ring successor, so each port carries exactly one up and one
// down); only with transports that define the `nvls` protocol.
#include "sim/collectives/CollectiveAlgorithm.hpp"

namespace clustersim {
namespace {

class Nvls final : public CollectiveAlgorithm {
public:
  bool supports(CollOp op) const override { return op == CollOp::all_reduce; }
  std::vector<std::string> protocols() const override { return {"nvls"}; }

  bool applicable(CollOp op, const GroupView& g) const override
  {
    if (!supports(op) || g.ranks.size() < 2)
      return false;
    int domain = g.cluster.domain_of(static_cast<int>(g.ranks.front()));
    for (auto r : g.ranks)
      if (g.cluster.domain_of(static_cast<int>(r)) != domain)
        return false;
    return g.cluster.platform().node.scale_up == ScaleUpKind::nvswitch;
  }

  FlowPlan plan(CollOp, const GroupView& g, double bytes) const override
  {
    FlowPlan plan;
    const std::size_t n = g.ranks.size();
    if (n < 2 || bytes <= 0)
      return plan;
    plan.phases.emplace_back();
    plan.phases.back().steps = 2;
    PhaseBuilder b(plan.phases.back());
    std::vector<std::uint32_t> order;
    for (std::uint32_t i = 0; i < n; ++i)
      order.push_back(i);
    add_ring(b, order, bytes * static_cast<double>(n + 1) / static_cast<double>(n));
    return plan;
  }
};

const AlgorithmRegistry::Registrar reg("nvls", "NVLink SHARP: reduction in the NVSwitch, inside one NVLink domain; all-reduce", [] { return std::make_unique<Nvls>(); });

} // namespace
} // namespace clustersim
