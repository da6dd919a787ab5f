#pragma once
/// How a model is trained on the cluster: the parallel layout, batch, precision and the
/// framework options that change the step (recompute, overlap, flash attention, ZeRO stage).
/// Key names follow the validation schema (`experiments/validation/README.md`); the table of
/// keys, defaults and bounds is `training_section()`.

#include "strategies/Framework.hpp"
#include "strategies/PipelineSchedule.hpp"
#include "topology/GpuSpec.hpp"
#include "topology/config/Schema.hpp"
#include "topology/config/Yaml.hpp"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace clustersim {

enum class Recompute { none, selective, full };
/// The training framework a run used: a fact of the source, whose documented properties the
/// strategies read (never an efficiency multiplier).
enum class Framework { megatron, megatron_deepspeed, deepspeed, torchtitan, automodel, fsdp, other };

const std::vector<std::string>& recompute_names();
const std::vector<std::string>& framework_names();
const char* to_string(Recompute r);
const char* to_string(Framework f);

struct Overlap {
  bool grad_reduce = true;  ///< DP gradient reduction overlapped with backward (DDP buckets)
  bool param_gather = true; ///< ZeRO parameter all-gather overlapped with compute (prefetch)
  bool tp_comm = false;     ///< TP collectives overlapped with GEMMs (userbuffers)
};

/// Low-rank adapters trained on frozen base weights (LoRA, Hu et al. 2021, arXiv 2106.09685):
/// each targeted linear layer W (in x out) gains A (in x rank) and B (rank x out), trained in 16
/// bits with their own gradients and optimizer states; every base weight, the embedding and the
/// output layer included, is frozen: no weight gradient, no gradient reduction, no optimizer state.
/// Defaults: Megatron-Bridge's LoRA (NVIDIA-NeMo/Megatron-Bridge@2afd2d3
/// src/megatron/bridge/peft/lora.py:82-85: target_modules linear_qkv, linear_proj, linear_fc1,
/// linear_fc2; dim 32). Routed experts' linears carry no adapter here.
struct Lora {
  int rank = 0; ///< 0: no adapters, every weight trained
  std::vector<std::string> targets{"qkv", "proj", "fc1", "fc2"};
  bool targets_linear(const std::string& target) const;
};
const std::vector<std::string>& lora_target_names();

struct TrainingSpec {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  int cp = 1;
  int ep = 1;
  int etp = 1; ///< expert tensor parallelism (Megatron's MoE parallel folding)
  int vpp = 1;
  std::string schedule = "1f1b"; ///< a registered PipelineSchedule (ScheduleRegistry)
  bool sequence_parallel = false;
  int zero = 0; ///< ZeRO stage: the shorthand for the strategies below (0 ddp, n zeroN)
  /// A registered DataParallelStrategy (training.data_parallel); empty: the one `zero` names.
  std::string data_parallel;
  /// Replicas per shard group of a hybrid strategy (hsdp; torchtitan's data_parallel_shard_degree);
  /// 0: every replica shards (no replication).
  int dp_shard = 0;
  Recompute recompute = Recompute::none;
  int micro_batch = 1;
  int global_batch = 1;
  Precision precision = Precision::bf16;
  bool flash_attention = false;
  Framework framework = Framework::megatron;
  /// Megatron's --pipeline-model-parallel-layout (PipelineLayout.hpp); empty: the split below.
  std::string pipeline_layout;
  bool embedding_slot = false; ///< account_for_embedding_in_pipeline_split
  bool loss_slot = false;      ///< account_for_loss_in_pipeline_split
  /// Megatron's selective-recompute modules (recompute: selective), e.g. core_attn, mlp, moe_act.
  std::vector<std::string> recompute_modules;
  std::string fp8_recipe; ///< delayed | tensorwise | mxfp8 | blockwise (precision fp8); empty: the framework's
  std::optional<bool> compile; ///< torch.compile of each block; unset: the framework's default
  std::string moe_dispatcher = "alltoall"; ///< moe_token_dispatcher: a registered MoeDispatcher
  /// Megatron-Core's --cuda-graph-impl: none | transformer_engine | local | full_iteration.
  std::string cuda_graph_impl = "none";
  /// Its --cuda-graph-scope (per-layer graphs): attn, mlp, moe, moe_router, moe_preprocess,
  /// mamba; empty: the whole layer.
  std::vector<std::string> cuda_graph_scope;
  /// Whether per-layer graphs (transformer_engine | local) capture `part` of a layer.
  bool graph_captures(const std::string& part) const;
  bool moe_a2a_overlap = false;            ///< EP all-to-all of one micro-batch behind another's compute
  std::string moe_load_balance = "aux_loss"; ///< force_balanced | aux_loss | dropless
  double moe_max_load = 0;        ///< stated max/mean expert-rank load (0: drawn)
  double moe_capacity_factor = 0; ///< tokens per expert rank capped at this x the mean (0: dropless)
  Overlap overlap;
  Lora lora;
  /// Gradient / parameter bucket; 0 = the strategy's default (DDP: PyTorch's 25 MB; ZeRO:
  /// Megatron's distributed optimizer, max(40M, 1M x dp) parameters).
  double bucket_bytes = 0;
  std::vector<std::string> order{"tp", "cp", "dp", "pp"}; ///< rank placement, innermost first (Megatron)
  std::string collective_algo = "auto";                   ///< override for every collective: auto | ring | tree | ...
  // Bytes per parameter of the model states held in memory, where the experiment sets them
  // (training.state_bytes); unset: the framework's (FrameworkTraits::states). What a gradient
  // reduction sends per parameter is the strategies' concern (StepContext::grad_comm_bytes).
  std::optional<double> weight_state_bytes;    ///< working copy of the weights
  std::optional<double> grad_state_bytes;      ///< gradients
  std::optional<double> optimizer_state_bytes; ///< master weights + optimizer moments
  /// The framework catalog (platforms/frameworks.yaml) whose entry `framework` names; set by
  /// whoever builds the spec (the experiment parser, the CLI); the cost model needs it.
  std::shared_ptr<const FrameworkCatalog> frameworks;

  /// The framework's properties; std::logic_error when no catalog was attached.
  const FrameworkTraits& traits() const;
  /// The model states' bytes per parameter: the experiment's, else the framework's.
  StateBytes states() const;
  /// Whether each block runs torch.compile'd: the experiment's choice, else the framework's default.
  bool compiled() const;
  /// The element-wise kernels the layers launch (compiled, else the framework's set).
  const KernelSet& kernel_set() const;
  /// The FP8 recipe in use, or null when the GEMMs do not run in FP8.
  const Fp8Recipe* fp8() const;

  /// The strategy a ZeRO stage is shorthand for: 0 ddp, n zeroN.
  static std::string zero_strategy(int stage) { return stage == 0 ? "ddp" : "zero" + std::to_string(stage); }
  /// The data-parallel strategy's registered name.
  std::string data_parallel_name() const { return data_parallel.empty() ? zero_strategy(zero) : data_parallel; }
  /// Data-parallel replicas that shard the model states among themselves, and the groups of
  /// them that replicate (dp = shard_degree() x dp_replicate()).
  int shard_degree() const { return dp_shard > 0 ? dp_shard : dp; }
  int dp_replicate() const { return dp / shard_degree(); }

  /// Whether the base weights are frozen (LoRA adapters are what trains).
  bool frozen_base() const { return lora.rank > 0; }

  int model_parallel() const { return tp * pp * cp; }
  /// The pipeline as its schedule sees it: stages, micro-batches per step, chunks, and the
  /// framework's grouping of micro-batches through an interleaved pipeline's chunks.
  PipelineShape pipeline_shape() const;
  long long gpus() const { return static_cast<long long>(tp) * pp * cp * dp; }
  /// Micro-batches per pipeline per step: global_batch / (micro_batch * dp).
  long long micro_batches() const { return global_batch / (static_cast<long long>(micro_batch) * dp); }
};

/// Where each key of a parsed section was written (key → position), for checks made after
/// parsing that must still point at the user's line.
using SourceMap = std::map<std::string, SourceLocation>;

/// The keys of `training:` and its subsections (`training.overlap`, `training.state_bytes`).
const Section& training_section();
const Section& overlap_section();
const Section& state_bytes_section();
const Section& lora_section();

/// Reads `training:`; `gpus` (from cluster) is checked against tp·pp·cp·dp and the layout
/// against the model (LayoutRules), with the position of the offending key in every error.
/// `where`, if given, receives the position of every key of `training:` (written or not) and of
/// every `overlap.*` key written.
struct ModelSpec;
/// Flash attention as the framework's current release runs it on this GPU: on where the framework
/// calls a flash-attention kernel the GPU has a published curve for (Megatron/TE's cuDNN or
/// FlashAttention-2 on sm80 and newer, torch SDPA's FlashAttention-2), off where it has none
/// (Volta, a GPU described with a flat attention efficiency only). `origin` says which, or why not.
bool default_flash_attention(const TrainingSpec& t, const GpuSpec& gpu, std::string* origin);

/// `frameworks` is the catalog of the framework rules the layout is checked against.
TrainingSpec parse_training(const YamlNode& node, long long gpus, const ModelSpec& model,
                            std::shared_ptr<const FrameworkCatalog> frameworks, SourceMap* where = nullptr);
/// Reads the keys of a partial `training:` section by the same rules, one at a time: no key is
/// derived from the cluster and the layout is not checked as a whole (a planner's `--fixed`
/// pins a few fields and leaves the rest to the search). `written` receives the keys given.
TrainingSpec parse_training_keys(const YamlNode& node, std::set<std::string>& written);

} // namespace clustersim
