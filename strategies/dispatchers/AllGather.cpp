// Megatron-Core's MoEAllGatherTokenDispatcher, priced here as the EP exchange of one copy per
// (token, expert) without the all-to-all dispatcher's regrouping by local expert.
#include "strategies/MoeDispatcher.hpp"

namespace clustersim {
namespace {

class AllGather final : public MoeDispatcher {
public:
  const char* megatron_type() const override { return "allgather"; }
};

const MoeDispatcherRegistry::Registrar reg("allgather", "Megatron's allgather dispatcher: the EP exchange of one copy per (token, expert), no regrouping", [] { return std::make_unique<AllGather>(); });

} // namespace
} // namespace clustersim
