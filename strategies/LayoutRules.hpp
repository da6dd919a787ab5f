#pragma once
/// The rules a parallel layout must meet to run: one set, used by the experiment parser (an
/// error at the offending key), the planner (a rejection counted under the rule's reason) and
/// sweeps (an invalid point with its reason). Each rule has one wording: `reason` without this
/// layout's numbers, `message` with them.
///
/// What the simulator can run is legal; where frameworks forbid a combination it is a rule of
/// that framework (ZeRO-2/3 with pipeline parallelism: Megatron-LM and DeepSpeed refuse it,
/// torchtitan's FSDP2 composes with its pipeline schedules). What is legal but never better
/// (GPipe where 1F1B fits) is the planner's dominance, not a rule.

#include "strategies/ModelSpec.hpp"
#include "strategies/TrainingSpec.hpp"

#include <optional>
#include <string>

namespace clustersim {

struct LayoutViolation {
  std::string key;     ///< the training key to point at
  std::string reason;  ///< the rule, in words common to every layout that breaks it
  std::string message; ///< the rule with this layout's numbers
  std::string valid;   ///< what would be accepted
};

/// Micro-batches per pipeline per step a step may hold (each is every layer's tasks again).
constexpr long long kMaxMicroBatches = 1 << 16;

/// The first rule (in a fixed order) that `t` breaks for `model` on `gpus` GPUs.
std::optional<LayoutViolation> check_layout(const TrainingSpec& t, const ModelSpec& model, long long gpus);

/// Whether a framework shards gradients and parameters (ZeRO-2/3, FSDP) across the replicas
/// of a pipeline stage.
bool shards_with_pipeline(Framework f);
/// Whether the framework can shard within groups of replicas and replicate across them (HSDP).
bool shards_hybrid(Framework f);

} // namespace clustersim
