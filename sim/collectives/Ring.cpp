// Ring (NCCL's Ring algorithm). Every rank sends to its successor; one flow per hop carries
// the hop's whole volume: all-reduce 2(N-1)/N·S over 2(N-1) steps, all-gather and
// reduce-scatter (N-1)/N·S over N-1 steps, broadcast / reduce a pipelined chain of S.
//
// When the group spans nodes with k > 1 members on each, NCCL runs k rail-aligned channels:
// channel c enters every node at its c-th member and leaves through the same rail (PXN: the
// last member hands the data over NVLink to the c-th member, whose NIC sends it on), and
// carries 1/k of the data. That is what lets a multi-node ring use every NIC of a node.
#include "CollectiveAlgorithm.hpp"

namespace clustersim {
namespace {

class Ring final : public CollectiveAlgorithm {
public:
  bool supports(CollOp op) const override { return op != CollOp::all_to_all; }

  FlowPlan plan(CollOp op, const GroupView& g, double bytes) const override
  {
    FlowPlan plan;
    const double n = static_cast<double>(g.ranks.size());
    if (g.ranks.size() < 2 || bytes <= 0)
      return plan;
    double volume = 0;
    int steps = 0;
    bool chain = false;
    switch (op) {
    case CollOp::all_reduce:
      volume = 2 * (n - 1) / n * bytes;
      steps = 2 * (static_cast<int>(n) - 1);
      break;
    case CollOp::all_gather:
    case CollOp::reduce_scatter:
      volume = (n - 1) / n * bytes;
      steps = static_cast<int>(n) - 1;
      break;
    case CollOp::broadcast:
    case CollOp::reduce:
      volume = bytes;
      steps = static_cast<int>(n) - 1;
      chain = true;
      break;
    case CollOp::all_to_all:
      return plan;
    }
    auto nodes = members_by_node(g);
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

const AlgorithmRegistry::Registrar reg("ring", [] { return std::make_unique<Ring>(); });

} // namespace
} // namespace clustersim
