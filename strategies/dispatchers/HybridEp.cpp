// HybridEP (Megatron-Core's flex dispatcher, backend hybridep): DeepEP's deduplicated two-hop
// exchange, once per NVLink domain over RDMA and once per GPU over NVLink.
#include "strategies/MoeDispatcher.hpp"

namespace clustersim {
namespace {

class HybridEp final : public MoeDispatcher {
public:
  bool deduplicates() const override { return true; }
  const char* megatron_type() const override { return "flex"; }
  const char* flex_backend() const override { return "hybridep"; }
};

const MoeDispatcherRegistry::Registrar reg("hybridep", "HybridEP (flex): DeepEP's two hops, once per NVLink domain over RDMA, then once per GPU", [] { return std::make_unique<HybridEp>(); });

} // namespace
} // namespace clustersim
