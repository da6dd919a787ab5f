#pragma once
/// What a transformer costs on one GPU: FLOPs per operation, the time of each operation on
/// the GPU, and the memory a rank holds.
///
/// FLOPs follow Narayanan et al. 2021: every GEMM counts 2·M·N·K, attention scores and context
/// count the full s×s matrix (causal masking is not discounted in *model* FLOPs, as in
/// Megatron-LM's accounting; the time model does discount it for flash attention, which skips
/// masked blocks). For GPT with a 4h MLP the per-step totals are exactly
/// `72 B s l h² (1 + s/6h + V/12lh)` (model) and, with full recompute,
/// `96 B s l h² (1 + s/6h + V/16lh)` (hardware).
///
/// Time: GEMMs by a roofline whose compute ceiling is peak × the GPU's best-shape GEMM
/// efficiency × tile and wave quantization over the SMs; element-wise ops (norms, softmax,
/// activation, dropout, residual, optimizer) by bytes over achievable HBM bandwidth; flash
/// attention by its executed FLOPs over peak × attention efficiency.

#include "strategies/ModelSpec.hpp"
#include "strategies/PipelineLayout.hpp"
#include "strategies/TrainingSpec.hpp"
#include "topology/GpuSpec.hpp"

#include <string>
#include <vector>

namespace clustersim {

/// One priced kernel (or group of kernels) of a block, per micro-batch, per rank.
struct OpCost {
  std::string name;
  std::string kind;      ///< gemm | attention | elementwise | cast
  std::string precision; ///< the number format it computes in ("bf16", "fp8"; memory-bound ops: the activations')
  double flops = 0;      ///< executed FLOPs, forward
  double bytes = 0;      ///< HBM bytes moved, forward
  double forward = 0;    ///< seconds, forward (launch gaps included)
  double backward = 0;   ///< seconds, backward
  double recompute = 0;  ///< seconds redone in backward by the recompute policy
  int kernels = 0;       ///< kernels launched, forward + backward
  double backward_data = 0; ///< of `backward`, the data gradient (GEMMs; the rest is the weight gradient)
  /// Kernels the host launches for it per micro-batch, forward and backward (a grouped GEMM
  /// launches one per expert; a per-step weight cast a share per micro-batch).
  double launches_forward = 0;
  double launches_backward = 0;
  /// The part of the network it belongs to, as CUDA graph scopes name them: attn, mlp,
  /// moe_router, moe_preprocess, moe_experts (and moe_combine after them); embedding and
  /// logits outside the layers.
  std::string part = {};
  double flops_backward = 0; ///< executed FLOPs, backward (data and weight gradients)
  double adapter_params = 0; ///< a LoRA adapter's first GEMM: the adapter's parameters on this rank
};

enum class Pass { forward, backward, recompute };

/// Times of one part of the network for one micro-batch on one rank.
struct BlockCost {
  double forward = 0;
  double backward = 0;
  double recompute = 0; ///< extra forward work redone in backward (recompute policy)
  std::vector<OpCost> ops;
  /// The attention core within forward/backward (context parallelism splits it into ring steps).
  double core_forward = 0;
  double core_backward = 0;
  /// Context parallelism: the core's time per ring step (cp steps), and the ops before it.
  std::vector<double> ring_forward;
  std::vector<double> ring_backward;
  double before_core_forward = 0;  ///< forward of the ops before the attention core
  double before_core_backward = 0; ///< their backward
  /// A MoE layer: the routed experts' grouped GEMMs within forward/backward (between the
  /// dispatch and the combine all-to-all), at balanced load, and the ops before them.
  double experts_forward = 0;
  double experts_backward = 0;
  double before_experts_forward = 0;
  double before_experts_backward = 0;
};

/// Parameters one rank holds, by how they are sharded: by tensor parallelism (and replicated
/// over dp·cp), or routed experts (sharded by ep·etp, replicated over the expert-data-parallel
/// ranks).
struct RankParams {
  double dense = 0;
  double expert = 0;
  double total() const { return dense + expert; }
  RankParams& operator+=(const RankParams& o)
  {
    dense += o.dense;
    expert += o.expert;
    return *this;
  }
};

/// Memory held by one GPU at its peak, in bytes.
struct MemoryBreakdown {
  double weights = 0;
  double grads = 0;
  double optimizer = 0;
  double activations = 0;
  double buffers = 0;      ///< communication buckets, logits workspace, the recipe's cast weights
  double cast_weights = 0; ///< of buffers: the low-precision weight copies a recipe caches
  double reserved = 0; ///< CUDA context, library workspaces, allocator fragmentation
  double peak = 0;
  double capacity = 0;
  bool fits = true;
  std::string dominant; ///< the largest term
  int stage = 0;        ///< the pipeline stage this is the peak of
};

/// Model states per GPU (weights, gradients, optimizer states, in bytes) of `dense` parameters
/// held per rank, sharded over `dp` ranks from the ZeRO stage that shards each state on (1
/// optimizer, 2 gradients, 3 weights), and of `expert` parameters, sharded over `edp`. The one
/// rule of the memory model and of `clustersim memory --params`.
struct ModelStates {
  double weights = 0;
  double grads = 0;
  double optimizer = 0;
};
ModelStates sharded_states(double dense, double expert, const StateBytes& bytes, int zero, double dp, double edp);

class CostModel {
public:
  CostModel(ModelSpec model, TrainingSpec training, GpuSpec gpu);

  const ModelSpec& model() const { return model_; }
  const TrainingSpec& training() const { return training_; }
  const GpuSpec& gpu() const { return gpu_; }

  // --- FLOPs of the whole model, per optimizer step (all GPUs together) ---
  /// Forward FLOPs of transformer layer `layer` for `sequences` sequences (full attention
  /// matrix; a MoE layer: top_k routed and the shared experts, and the router).
  double layer_forward_flops(double sequences, int layer) const;
  double layers_forward_flops(double sequences) const; ///< of every transformer layer
  double mtp_forward_flops(double sequences) const;    ///< of the MTP modules (0 without)
  /// Forward FLOPs of the attention-core (scores + context) of transformer layer `layer`
  /// (its share of the pairs under a sliding window).
  double attention_core_flops(double sequences, int layer) const;
  /// The same summed over every transformer layer (and the MTP modules' with `mtp`).
  double attention_core_flops_all(double sequences, bool mtp) const;
  double logits_forward_flops(double sequences) const;
  /// `causal`: without the masked half of the attention matrices (Megatron-Bridge's and
  /// DeepSeek's count); the reports use the full matrix (Narayanan et al.).
  double model_flops_per_step(bool causal = false) const;
  double hardware_flops_per_step() const;

  // --- time per micro-batch on one rank (TP/CP/EP shards applied) ---
  /// LN, QKV, attention, projection, dropout + residual; `windowed`: of a sliding-window layer
  /// Seconds the rank's host thread spends issuing the kernels of `b`'s ops in one pass of one
  /// micro-batch (those of `parts` only, when given): each kernel an eager framework op on the
  /// node's CPU, except what CUDA graphs capture (one replay per captured part; nothing under a
  /// full-iteration graph). Recompute: the recomputed share of the forward's.
  double host_issue(const BlockCost& b, Pass pass, std::initializer_list<const char*> parts = {}) const;
  /// One op's share of it, forward or backward: 0 when a CUDA graph captures it.
  double host_issue(const OpCost& o, Pass pass) const;
  /// FLOPs the GPU executes for `b`'s ops in one pass of one micro-batch (those of `parts`
  /// only, when given). Recompute: the recomputed share of the forward's, as host_issue takes it.
  double pass_flops(const BlockCost& b, Pass pass, std::initializer_list<const char*> parts = {}) const;
  /// Whether the framework's host waits for the GPU once per MoE layer forward (the dropless
  /// dispatchers' token counts), which only a full-iteration graph's sync-free dispatch avoids.
  bool moe_host_sync() const;
  /// Whether the host waits for the GPU after each pipeline exchange (Megatron's non-interleaved
  /// schedule: batch_p2p_comm with batch_p2p_sync).
  bool p2p_host_sync() const;
  BlockCost attention_block(bool windowed = false) const;
  BlockCost mlp_block() const;       ///< LN, the dense MLP (ffn_hidden), dropout + residual
  /// A MoE layer's MLP half: LN, router, shared experts, permutation | the local experts'
  /// grouped GEMMs | unpermutation, residual.
  BlockCost moe_block() const;
  BlockCost embedding() const;       ///< token (+ position) embedding, first stage
  BlockCost logits() const;          ///< final norm, output projection, cross-entropy, last stage
  /// Optimizer step over `params` parameters held by this rank.
  double optimizer_seconds(double params) const;

  /// A GEMM in `p` (default: the 16-bit format of the training precision).
  double gemm_seconds(double m, double n, double k, double batch = 1) const;
  /// `sms_taken`: SMs held by overlapped communication kernels meanwhile.
  double gemm_seconds(double m, double n, double k, double batch, Precision p, double sms_taken = 0) const;
  /// Achieved fraction of the peak of `p` for this shape, in training (sustained, power cap).
  double gemm_efficiency(double m, double n, double k, double batch = 1) const;
  double gemm_efficiency(double m, double n, double k, double batch, Precision p, double sms_taken = 0) const;
  /// A GEMM pass overlapped with its tensor-parallel communication (overlap.tp_comm with
  /// sequence parallelism): the framework's TpOverlap for it, or null.
  const TpOverlap* tp_overlap(const std::string& pass) const;
  double memory_seconds(double bytes) const;
  /// Flash attention's forward and backward throughput in training, FLOP/s (executed FLOPs),
  /// at this head dim, mask and key length; the backend the framework prefers on this GPU.
  struct AttentionRate {
    double forward = 0;
    double backward = 0;
    std::string backend; ///< cudnn | fa2 | fa3 | flat
  };
  AttentionRate attention_rate(double head_dim, bool causal, double seq) const;
  /// The number format of the linear layers' GEMMs (fp8 under an FP8 recipe) and of the rest.
  Precision linear_precision() const;
  Precision compute_precision() const; ///< 16-bit (or 32-bit) format of everything not cast to FP8

  // --- communication volumes, bytes per rank ---
  /// One TP collective's buffer per layer per micro-batch (the b·s·h activation).
  double tp_message_bytes() const;
  /// K and V of one rank's sequence chunk (what context parallelism passes around the ring).
  double cp_message_bytes() const;
  /// Tokens one rank routes per MoE layer per micro-batch: b·s/cp, split by TP (Megatron's MoE
  /// layer takes the sequence-parallel shard).
  double moe_tokens() const;
  /// Bytes each rank hands the dispatch (and the combine) all-to-all per MoE layer per
  /// micro-batch: every routed copy of its tokens (nccl-tests convention: its own share
  /// included; (ep-1)/ep of it leaves the rank).
  double moe_dispatch_bytes() const;
  /// What an all-gathering dispatcher (MoeDispatcher::gathers) holds per rank and MoE layer
  /// after its gather: every token of the etp x ep group, moe_tokens() × hidden × bytes × etp ×
  /// ep (the gather's output, nccl-tests convention; the combine's reduce-scatter input).
  double moe_gather_bytes() const;
  /// Expected number of `bins` equal shares of the experts (ranks, or NVLink domains of an EP
  /// group) that a token's top_k distinct experts fall in, routing uniform:
  /// bins·(1 − C(E − E/bins, k) / C(E, k)); under group-limited routing (router_groups,
  /// router_group_topk) the experts come from the chosen groups only. Forced balance in a
  /// framework whose router takes experts round robin: round_robin_bins.
  double moe_distinct_bins(int bins) const;
  /// The same when token t takes the k consecutive experts from (t·k) mod E (AutoModel's fake
  /// balanced gate): the mean over a cycle of the bins such a run meets, exactly.
  double round_robin_bins(int bins) const;
  /// The same buffer for an exchange that sends each token once per destination bin (DeepEP,
  /// HybridEP): moe_tokens() × moe_distinct_bins(bins) × hidden × bytes.
  double moe_dedup_bytes(int bins) const;
  /// Expert-data-parallel degree: tp·cp·dp / (ep·etp), over which expert gradients reduce.
  int expert_data_parallel() const;
  /// Load of each expert-parallel rank of a group relative to the mean, for one MoE layer and
  /// micro-batch: 1 with forced balance, else the multinomial spread of routing `moe_tokens()
  /// x top_k x ep` copies over ep ranks (seeded by layer, micro-batch and group).
  std::vector<double> expert_loads(int layer, int micro_batch, int group) const;
  /// Whether expert ranks get different loads: real routing (not force_balanced) or a stated
  /// max/mean ratio, with more than one expert rank.
  static bool uneven_expert_loads(const ModelSpec& m, const TrainingSpec& t);

  // --- parameters held by one rank ---
  /// The virtual stages and what each holds (PipelineLayout.hpp).
  const std::vector<VirtualStage>& pipeline() const { return pipeline_; }
  /// Transformer layers of pipeline rank `stage` over its chunks.
  std::vector<int> layers_per_stage() const;
  /// What pipeline rank `stage` holds besides its layers.
  bool holds_embedding(int stage) const;
  bool holds_loss(int stage) const;
  int mtp_modules(int stage) const;
  /// MoE layers (MTP modules included) of pipeline rank `stage`.
  int moe_layers_on(int stage) const;
  /// The sliding-window layers among them (MTP modules attend to the whole sequence).
  int windowed_layers_on(int stage) const;
  /// Forward, backward and recompute seconds of the transformer layers (and MTP modules) of
  /// pipeline rank `stage` for one micro-batch, communication left out.
  double stage_layer_seconds(int stage) const;
  double stage_params(int stage) const; ///< after TP and EP sharding, before ZeRO
  /// The same, by how it is sharded; and of one layer (global index; MTP modules from layers).
  RankParams stage_rank_params(int stage, bool layers_only = false) const;
  RankParams layer_rank_params(int layer) const;
  /// LoRA (training.lora): the adapters of transformer layer `layer` (global index; MTP modules
  /// from layers), per rank: A whole and B split by TP beside a column-parallel layer (qkv, fc1),
  /// A split and B whole beside a row-parallel one (proj, fc2); and their forward FLOPs per token
  /// over the whole model (2 x rank x (in + out) each). Zero without LoRA.
  struct Adapters {
    double params = 0;
    double flops_per_token = 0;
  };
  Adapters layer_adapters(int layer) const;
  /// What one rank of `stage` trains: every parameter it holds, or under LoRA its adapters.
  RankParams stage_trainable_params(int stage) const;
  MemoryBreakdown memory(int stage) const;
  /// Activations one transformer layer keeps for backward, per micro-batch.
  double layer_activation_bytes(bool moe = false) const;
  MemoryBreakdown peak_memory() const; ///< the stage with the largest peak

  double element_bytes() const; ///< activations / weights (2 for bf16/fp16/fp8 mixed precision)

  // --- recomputation ---
  /// Selective recompute as Megatron runs it: whether `module` (core_attn, mlp, layernorm,
  /// moe_act, ...) is recomputed (recompute_modules, default core_attn).
  bool recomputes(const std::string& module) const;
  /// Selective recompute as torch's selective activation checkpointing runs it (framework
  /// property selective_recompute: op): the layer's matmuls in order (q, k, v, o, then the MLP's),
  /// every other one saved, the others recomputed. The share of a GEMM op's output that is
  /// recomputed, and the width per token of the saved matmul outputs.
  double sac_recomputed_share(const std::string& gemm) const;
  double sac_saved_width() const;
  /// Forward seconds of a block the recompute policy redoes in backward.
  double recompute_seconds(const BlockCost& b, bool attention, bool moe = false) const;
  /// Micro-batches per pipeline per step (at least 1): what per-step work is spread over.
  double micro_batches() const;

private:
  class BlockBuilder;
  void add_attention_core(BlockBuilder& k, bool windowed) const;
  /// The transformer layers of pipeline rank `stage` for which the model's predicate holds.
  int layers_on(int stage, bool (ModelSpec::*is)(int) const) const;
  double tokens_local() const; ///< b·s / cp: tokens of one micro-batch on one rank
  /// ZeRO-3 / FSDP: the bytes of gathered parameters and unsharded gradients a stage holds at
  /// its peak (`params`: the stage's, before ZeRO; `grad_bytes`: per gradient element reduced).
  double gathered_bytes(int stage, double params, double grad_bytes) const;
  ModelSpec model_;
  TrainingSpec training_;
  GpuSpec gpu_;
  double peak_ = 0;
  std::vector<VirtualStage> pipeline_;
};

} // namespace clustersim
