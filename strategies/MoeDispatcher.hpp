#pragma once
/// How an MoE layer's tokens reach their experts and come back: `training.moe_token_dispatcher`
/// names a registered class (Megatron-Core's token dispatchers, megatron/core/transformer/moe/
/// token_dispatcher.py). A dispatcher is one file and one CMake line: the step builder, the cost
/// model, the planner's exchange floor and the launch files ask the class what it does.

#include "topology/config/Registry.hpp"

namespace clustersim {

class MoeDispatcher {
public:
  static constexpr const char* kRegistryKind = "MoE token dispatcher";
  virtual ~MoeDispatcher() = default;
  /// Whether a token crosses once per destination NVLink domain over RDMA, then once per GPU over
  /// NVLink (DeepEP's internode kernels), instead of one copy per (token, expert) in an NCCL
  /// all-to-all.
  virtual bool deduplicates() const { return false; }
  /// Whether what arrives is regrouped by local expert before the expert GEMMs and back before
  /// the combine (a permutation kernel each way).
  virtual bool regroups() const { return false; }
  /// Whether every rank of the expert-tensor x expert-parallel group receives all of the
  /// group's tokens (an all-gather), keeps those routed to its own experts, and the combine
  /// reduce-scatters the outputs back (Megatron's MoEAllGatherTokenDispatcher), instead of
  /// exchanging only the routed copies.
  virtual bool gathers() const { return false; }
  /// Megatron-LM's --moe-token-dispatcher-type, and --moe-flex-dispatcher-backend when that is flex.
  virtual const char* megatron_type() const = 0;
  virtual const char* flex_backend() const { return nullptr; }
};

using MoeDispatcherRegistry = Registry<MoeDispatcher>;

} // namespace clustersim
