// Megatron-Core's MoEAlltoAllTokenDispatcher: the permuted copies (one per token and chosen
// expert) exchanged by an NCCL all-to-all over the EP group, then sorted by local expert
// (sort_chunks_by_idxs) and back before the combine.
#include "strategies/MoeDispatcher.hpp"

namespace clustersim {
namespace {

class AllToAll final : public MoeDispatcher {
public:
  bool regroups() const override { return true; }
  const char* megatron_type() const override { return "alltoall"; }
};

const MoeDispatcherRegistry::Registrar reg("alltoall", "NCCL all-to-all of one copy per (token, expert), regrouped by local expert", [] { return std::make_unique<AllToAll>(); });

} // namespace
} // namespace clustersim
