#pragma once
/// The training framework as documented properties (`platforms/frameworks.yaml`): which
/// element-wise kernels a layer launches and what they move, which flash-attention backend it
/// calls, what selective recomputation keeps, its FP8 recipe and what that casts, how it holds
/// and reduces the model states, its buckets, and how it runs ZeRO-3 / FSDP. The cost model and
/// the data-parallel strategies read these; nothing here multiplies a time.

#include "topology/GpuSpec.hpp"
#include "topology/config/Schema.hpp"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace clustersim {

enum class Framework;

/// One pass of an element-wise op: kernels launched and HBM accesses per element of its tensor.
struct KernelPass {
  double kernels = 0;
  double act = 0;  ///< reads + writes in the activation dtype
  double fp32 = 0; ///< reads + writes in fp32
  double bytes(double element_bytes) const { return act * element_bytes + fp32 * 4.0; }
};

struct ElementwiseKernel {
  KernelPass forward;
  KernelPass backward;
};

/// The element-wise kernels of a layer as one kind of stack runs them (fused, compiled, eager).
struct KernelSet {
  std::string name;
  std::string doc;
  std::map<std::string, ElementwiseKernel> ops;
  /// The op; an op the set does not list costs nothing (that stack has no such kernel).
  ElementwiseKernel op(const std::string& name) const;
};

/// A cast an FP8 recipe adds: kernels and accesses per element cast.
struct CastKernel {
  double kernels = 0;
  double act = 0; ///< activation-dtype accesses
  double fp8 = 0; ///< bytes per element in the recipe's format (1 per FP8 copy, 0.5625 per NVFP4 copy)
  double bytes(double element_bytes) const { return act * element_bytes + fp8; }
};

struct Fp8Recipe {
  std::string name;
  std::string doc;
  Precision format = Precision::fp8; ///< the linear layers' GEMMs: fp8, or fp4 (an FP4 recipe)
  CastKernel input;  ///< the linear layer's input, every micro-batch
  CastKernel grad;   ///< the gradient of its output, every micro-batch
  CastKernel weight; ///< its weight
  bool weight_per_step = true;  ///< the weight cast is cached over the micro-batches of a step
  double saved_bytes = 2;       ///< bytes per element of the input kept for backward
  double weight_copy_bytes = 0;  ///< FP8 weight copies held per parameter besides the 16-bit weights
  double param_gather_bytes = 2; ///< bytes per parameter a parameter all-gather moves
  /// Delayed scaling's amax reduction: per FP8 linear, the amax values all-reduced (MAX, fp32)
  /// over the stage's tensor-, context- and data-parallel ranks as each forward and each
  /// backward pass of a model chunk ends, on the compute stream (0: the recipe reduces none).
  double amax_forward = 0;
  double amax_backward = 0;
};

/// Bytes per parameter of the model states a rank holds (before ZeRO sharding).
struct StateBytes {
  double weights = 2;
  double grads = 2;
  double optimizer = 12;
};

/// How the framework runs fully sharded data parallelism (ZeRO-3, FSDP).
struct ShardedTraits {
  bool per_tensor = false;          ///< one all-gather per parameter tensor (DeepSpeed), else per unit
  bool list_collectives = false;    ///< torch list-of-tensors collectives: one copy kernel per rank
  double prefetch_params = 0;       ///< parameters gathered ahead of use (per-tensor gathering)
  int prefetch_units = 1;           ///< units gathered ahead of use (per-unit gathering)
  bool reshard_after_forward = true; ///< parameters freed after forward (gathered again for backward)
  /// With pipeline parallelism: parameters gathered once per step and gradients reduced once,
  /// at the step's last micro-batch (torchtitan).
  bool keep_with_pipeline = false;
};

/// One GEMM overlapped with its tensor-parallel communication: the SMs the communication kernels
/// take from it and the chunks it is split into (0: one per TP rank).
struct TpOverlap {
  double sms = 0;
  int splits = 1;
};

struct FrameworkTraits {
  std::string name;
  std::string doc;
  std::string kernels;           ///< kernel set without torch.compile
  bool compile = false;          ///< compiled by default
  bool compile_with_fp8 = false; ///< compiled by default when FP8 is on
  std::vector<std::string> attention; ///< flash-attention backends, preferred first
  std::string selective;          ///< what selective recompute recomputes: core_attention | op
  bool cp_all_gather = false;     ///< context parallelism gathers all K/V up front (else a P2P ring)
  std::string fp8_recipe;
  std::string fp4_recipe;         ///< the recipe of `precision: fp4`; empty: the framework trains in no FP4
  bool fp8_output_layer = false;  ///< the vocabulary projection runs in FP8 too
  double loss_fp32_copies = 2;    ///< fp32 logits-sized buffers at the loss's peak
  double loss_16bit_copies = 0;   ///< 16-bit logits-sized buffers there besides the logits
  /// MoE: the router probabilities weigh the experts' activation (so the unpermutation keeps no
  /// copy of the experts' outputs), else they weigh those outputs in the unpermutation
  bool moe_probs_in_activation = false;
  /// MoE under moe_load_balance: force_balanced: the router gives token t the experts
  /// (t x top_k + j) mod experts (consecutive experts), else experts drawn at random per token
  bool moe_round_robin = false;
  /// The host waits for the GPU once per MoE layer forward (the dispatcher's token counts).
  bool moe_host_sync = false;
  /// The host waits for the GPU after each pipeline exchange of the non-interleaved schedule.
  bool p2p_host_sync = false;
  /// Interleaved 1F1B runs rounds of m / max(1, m / pp) micro-batches through each chunk
  /// (PyTorch's schedule), else groups of pp (Megatron-LM's): PipelineShape.
  bool interleaved_rounds = false;
  std::map<std::string, StateBytes> state_bytes; ///< by precision name, "other" for the rest
  std::map<std::string, double> grad_reduce_bytes;
  double bucket_min_params = 25e6;
  double bucket_per_dp = 0;
  ShardedTraits sharded;
  /// overlap.tp_comm: per GEMM pass (qkv_fprop, proj_fprop, fc1_fprop, fc2_fprop, *_dgrad,
  /// *_wgrad) how the framework overlaps it; a pass not listed runs as without overlap.
  std::map<std::string, TpOverlap> tp_overlap;

  StateBytes states(Precision p) const;
  double grad_reduce(Precision p) const;
};

/// Every framework, kernel set and FP8 recipe of `platforms/frameworks.yaml`.
class FrameworkCatalog {
public:
  static FrameworkCatalog load(const std::string& path);

  const FrameworkTraits& get(Framework f) const;
  const KernelSet& kernel_set(const std::string& name) const;
  const Fp8Recipe& recipe(const std::string& name) const;
  std::vector<std::string> recipe_names() const;

private:
  std::map<std::string, FrameworkTraits> frameworks_;
  std::map<std::string, KernelSet> kernel_sets_;
  std::map<std::string, Fp8Recipe> recipes_;
};

/// The flash-attention backends a GPU's curves and a framework may name.

const Section& frameworks_file_section();
const Section& framework_section();
const Section& framework_sharded_section();
const Section& framework_bucket_section();
const Section& tp_overlap_section();
const Section& kernel_set_section();
const Section& kernel_op_section();
const Section& kernel_pass_section();
const Section& fp8_recipe_section();
const Section& fp8_cast_section();

} // namespace clustersim
