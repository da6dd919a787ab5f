#pragma once
/// How a model is trained on the cluster: the parallel layout, batch, precision and the
/// framework options that change the step (recompute, overlap, flash attention, ZeRO stage).
/// Key names follow `experiments/validation/README.md`.

#include "GpuSpec.hpp"
#include "Yaml.hpp"

#include <string>
#include <vector>

namespace clustersim {

enum class Recompute { none, selective, full };
enum class Schedule { gpipe, one_f_one_b, interleaved };

const std::vector<std::string>& recompute_names();
const std::vector<std::string>& schedule_names();
const char* to_string(Recompute r);
const char* to_string(Schedule s);

struct Overlap {
  bool grad_reduce = true;  ///< DP gradient reduction overlapped with backward (DDP buckets)
  bool param_gather = true; ///< ZeRO parameter all-gather overlapped with compute (prefetch)
  bool tp_comm = false;     ///< TP collectives overlapped with GEMMs (userbuffers)
};

struct TrainingSpec {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int cp = 1;
  int ep = 1;
  int vpp = 1;
  Schedule schedule = Schedule::one_f_one_b;
  bool sequence_parallel = false;
  int zero = 0;
  Recompute recompute = Recompute::none;
  int micro_batch = 1;
  int global_batch = 1;
  Precision precision = Precision::bf16;
  bool flash_attention = false;
  Overlap overlap;
  /// Gradient / parameter bucket; 0 = the strategy's default (DDP: PyTorch's 25 MB; ZeRO:
  /// Megatron's distributed optimizer, max(40M, 1M x dp) parameters).
  double bucket_bytes = 0;
  std::vector<std::string> order{"tp", "cp", "dp", "pp"}; ///< rank placement, innermost first (Megatron)
  std::string collective_algo = "auto";                   ///< override for every collective: auto | ring | tree | ...
  // Bytes per parameter of the model states (mixed-precision Adam: 2 + 2 + 12 = 16, ZeRO paper).
  double weight_bytes = 2;     ///< working copy of the weights
  double grad_bytes = 2;       ///< gradients
  double optimizer_bytes = 12; ///< fp32 master weights + Adam momentum + variance

  int model_parallel() const { return tp * pp * cp; }
  int gpus() const { return tp * pp * cp * dp; }
  /// Micro-batches per pipeline per step: global_batch / (micro_batch * dp).
  int micro_batches() const { return global_batch / (micro_batch * dp); }
};

/// Reads `training:`; `gpus` (from cluster) is checked against tp·pp·cp·dp, and the layout
/// against the model, with the position of the offending key in every error.
struct ModelSpec;
TrainingSpec parse_training(const YamlNode& node, int gpus, const ModelSpec& model);

/// Checks divisibility rules; throws ConfigError at `where`. Used by the parser and by
/// command-line front ends that build a TrainingSpec directly.
void check_training(const TrainingSpec& t, int gpus, const ModelSpec& model, const SourceLocation& where);

} // namespace clustersim
