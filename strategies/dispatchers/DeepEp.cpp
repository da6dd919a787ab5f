// DeepEP (Megatron-Core's flex dispatcher, backend deepep): a token is sent once per NVLink
// domain holding one of its experts over RDMA, then once per GPU over NVLink; the combine
// reduces in the reverse order (deepseek-ai/DeepEP's internode kernels).
#include "strategies/MoeDispatcher.hpp"

namespace clustersim {
namespace {

class DeepEp final : public MoeDispatcher {
public:
  bool deduplicates() const override { return true; }
  const char* megatron_type() const override { return "flex"; }
  const char* flex_backend() const override { return "deepep"; }
};

const MoeDispatcherRegistry::Registrar reg("deepep", "DeepEP (flex): once per NVLink domain over RDMA, then once per GPU over NVLink", [] { return std::make_unique<DeepEp>(); });

} // namespace
} // namespace clustersim
