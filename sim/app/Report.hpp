#pragma once
/// The human-readable report of one simulated step (what `clustersim run` prints).

#include "sim/study/Simulation.hpp"

#include <string>

namespace clustersim {

std::string format_report(const RunMetrics& m);
/// What follows "zero N" where the stage alone does not say it: " (hsdp, dp_shard 8)", ", LoRA
/// rank 16 on qkv+proj"; empty for plain ZeRO.
std::string describe_strategy(const TrainingSpec& t);

/// "pipeline stage S needs X per GPU of Y (dominated by Z)": why a step does not fit, for the
/// report's first line and run's exit message.
std::string describe_oom(const MemoryBreakdown& mem);
/// Every priced kernel of one transformer layer (and the output layer) of one micro-batch on
/// one GPU: what it computes in, its FLOPs and bytes, forward, backward and recomputed time,
/// and the rate achieved; the attention backend and the framework's kernel set and recipe.
std::string format_kernels(const ExperimentSpec& e);

} // namespace clustersim
