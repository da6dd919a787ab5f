// Direct all-to-all: every rank sends its 1/N slice to every other rank at once (NCCL runs
// all-to-all as grouped point-to-point sends). N(N-1) flows in one step; `bytes` is what each
// rank sends in total (nccl-tests alltoall convention). Direct sendrecv: every rank sends
// `bytes` to the next member and receives from the previous, one step (nccl-tests sendrecv).
#include "sim/collectives/CollectiveAlgorithm.hpp"

namespace clustersim {
namespace {

class Direct final : public CollectiveAlgorithm {
public:
  bool supports(CollOp op) const override { return op == CollOp::all_to_all || op == CollOp::sendrecv; }
  std::vector<std::string> protocols() const override { return {"simple"}; }

  FlowPlan plan(CollOp op, const GroupView& g, double bytes) const override
  {
    FlowPlan plan;
    const std::size_t n = g.ranks.size();
    if (n < 2 || bytes <= 0)
      return plan;
    plan.phases.emplace_back();
    plan.phases.back().steps = 1;
    PhaseBuilder b(plan.phases.back());
    if (op == CollOp::sendrecv) {
      for (std::uint32_t i = 0; i < n; ++i)
        b.add(i, static_cast<std::uint32_t>((i + 1) % n), bytes);
      return plan;
    }
    std::vector<std::uint32_t> all(n);
    for (std::uint32_t i = 0; i < n; ++i)
      all[i] = i;
    add_exchange(b, g, all, bytes / static_cast<double>(n));
    return plan;
  }
};

const AlgorithmRegistry::Registrar reg("direct", "every rank sends its slice to every other at once; all-to-all, sendrecv (to the next member)", [] { return std::make_unique<Direct>(); });

} // namespace
} // namespace clustersim
