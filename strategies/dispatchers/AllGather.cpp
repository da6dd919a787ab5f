// Megatron-Core's MoEAllGatherTokenDispatcher: token_dispatch all-gathers the hidden states (and
// the routing map and probabilities) over the expert-tensor x expert-parallel group, "[(S/TP)*B,
// H] -> [S*B*EP, H]", each rank then keeps the tokens of its own experts, and token_combine
// reduce-scatters the outputs back over the same group in the probabilities' dtype (the hidden
// dtype unless moe_router_dtype is set) (NVIDIA/Megatron-LM@d98e8a64
// megatron/core/transformer/moe/token_dispatcher.py:296-301, :364-366;
// transformer_config.py:811). Every token reaches every rank of the group, whatever its top_k.
#include "strategies/MoeDispatcher.hpp"

namespace clustersim {
namespace {

class AllGather final : public MoeDispatcher {
public:
  bool gathers() const override { return true; }
  const char* megatron_type() const override { return "allgather"; }
};

const MoeDispatcherRegistry::Registrar reg("allgather", "Megatron's allgather dispatcher: every token all-gathered to every rank of the etp x ep group, the outputs reduce-scattered back", [] { return std::make_unique<AllGather>(); });

} // namespace
} // namespace clustersim
