// The time of each operation of a layer on one GPU: GEMMs by a roofline with tile and wave
// quantization, element-wise kernels by their HBM bytes, flash attention by its executed FLOPs,
// every kernel with its launch gap.
#include "CostModel.hpp"

#include <algorithm>
#include <cmath>

namespace clustersim {

double CostModel::gemm_efficiency(double m, double n, double k, double batch) const
{
  // cuBLAS-like choice among CTA tiles: the one that wastes least of the last wave, with a
  // small discount for the less data-reusing 128x128 tile.
  struct Tile {
    double tm, tn, quality;
  };
  static const Tile tiles[] = {{256, 128, 1.0}, {128, 256, 1.0}, {128, 128, 0.95}};
  const double sms = gpu_.sms;
  double best = 0;
  for (const auto& t : tiles) {
    double count = std::ceil(m / t.tm) * std::ceil(n / t.tn) * batch;
    double waves = std::ceil(count / sms);
    double util = (m * n * batch) / (waves * sms * t.tm * t.tn);
    best = std::max(best, t.quality * util);
  }
  // a short K leaves the mainloop's prologue and epilogue unamortized
  const double k_factor = k / (k + gpu_.gemm_k_overhead);
  return gpu_.gemm_efficiency * gpu_.sustained * best * k_factor;
}

double CostModel::gemm_seconds(double m, double n, double k, double batch) const
{
  if (m <= 0 || n <= 0 || k <= 0 || batch <= 0)
    return 0;
  double flops = 2.0 * m * n * k * batch;
  double compute = flops / (peak_ * gemm_efficiency(m, n, k, batch));
  double bytes = element_bytes() * (m * k + k * n + m * n) * batch;
  return std::max(compute, memory_seconds(bytes));
}

double CostModel::memory_seconds(double bytes) const
{
  return bytes / (gpu_.hbm_bandwidth * gpu_.hbm_efficiency);
}

namespace {

void add(BlockCost& b, std::string name, double flops, double bytes, double seconds)
{
  b.forward_ops.push_back(OpCost{std::move(name), flops, bytes, seconds});
  b.forward += seconds;
}

} // namespace

/// Accumulates a block's forward ops and what their backward costs. Every kernel also pays
/// the launch gap: one per forward op; backward GEMMs are two kernels (data gradient with
/// inner dimension N, weight gradient with inner dimension M), element-wise ops one.
class CostModel::BlockBuilder {
public:
  BlockBuilder(const CostModel& c, BlockCost& b) : c_(c), b_(b) {}

  void mem(const std::string& name, double bytes)
  {
    double sec = c_.memory_seconds(bytes);
    add(b_, name, 0, bytes, sec + gap());
    backward_ += 2 * sec + gap(); // reads the gradient and the saved input, writes a gradient
  }

  void gemm(const std::string& name, double m, double n, double k, double batch)
  {
    double sec = c_.gemm_seconds(m, n, k, batch);
    add(b_, name, 2 * m * n * k * batch, c_.element_bytes() * (m * k + k * n + m * n) * batch, sec + gap());
    backward_ += c_.gemm_seconds(m, k, n, batch) + c_.gemm_seconds(k, n, m, batch) + 2 * gap();
  }

  /// A forward kernel whose backward the caller prices.
  void kernel(const std::string& name, double flops, double bytes, double sec, double backward)
  {
    add(b_, name, flops, bytes, sec + gap());
    backward_ += backward + gap();
  }

  double gap() const { return c_.gpu_.launch_gap; }
  double backward() const { return backward_; }

private:
  const CostModel& c_;
  BlockCost& b_;
  double backward_ = 0;
};

BlockCost CostModel::attention_block() const
{
  BlockCost b;
  const double e = element_bytes();
  const double t = training_.tp;
  const double T = tokens_local();
  const double h = model_.hidden;
  const double kv = model_.kv_dim();
  const double s = model_.seq_len;
  const double s_loc = s / training_.cp;
  const double heads = model_.heads / t;
  const double d = model_.head_dim();
  const double mb = training_.micro_batch;
  // element-wise work on the residual stream is sharded by TP only with sequence parallelism
  const double resid = training_.sequence_parallel ? T / t : T;

  BlockBuilder k(*this, b);
  k.mem("input_layernorm", 2 * resid * h * e);
  const double q = model_.q_dim();
  k.gemm("qkv_projection", T, (q + 2 * kv) / t, h, 1);
  if (model_.position == PositionKind::rotary)
    k.mem("rotary_embedding", 2 * T * (h + kv) / t * e);

  double core_forward = 0;
  const double before = b.forward;
  if (training_.flash_attention) {
    // Flash attention skips fully masked blocks: a causal rank executes about half of its
    // query x key work (ring attention keeps that balance across CP ranks).
    double executed = 4.0 * mb * s_loc * s * (q / t) * 0.5;
    double sec = executed / (peak_ * gpu_.attention_efficiency * gpu_.sustained);
    k.kernel("flash_attention", executed, 0, sec, 2.5 * sec); // FA2 backward: 5 GEMMs for the 2 of forward
  } else {
    k.gemm("attention_scores", s_loc, s, d, mb * heads);
    double elems = mb * heads * s_loc * s;
    k.mem("scale_mask_softmax", 2 * elems * e);
    if (model_.bias)
      k.mem("attention_dropout", 2 * elems * e + elems);
    k.gemm("attention_context", s_loc, d, s, mb * heads);
  }
  core_forward = b.forward - before;
  k.gemm("output_projection", T, h, q / t, 1);
  k.mem("bias_dropout_residual", 3 * resid * h * e + resid * h);

  b.backward = k.backward();
  if (training_.recompute == Recompute::full)
    b.recompute = b.forward;
  else if (training_.recompute == Recompute::selective && !training_.flash_attention)
    b.recompute = core_forward;
  return b;
}

BlockCost CostModel::mlp_block() const
{
  BlockCost b;
  const double e = element_bytes();
  const double t = training_.tp;
  const double T = tokens_local();
  const double h = model_.hidden;
  const double f = model_.experts > 1 ? model_.expert_ffn() : model_.ffn_hidden;
  const double resid = training_.sequence_parallel ? T / t : T;
  BlockBuilder k(*this, b);
  auto mem = [&](const std::string& name, double bytes) { k.mem(name, bytes); };
  auto gemm = [&](const std::string& name, double m, double n, double kk, double batch) {
    k.gemm(name, m, n, kk, batch);
  };
  mem("post_attention_layernorm", 2 * resid * h * e);
  const bool swiglu = model_.mlp == MlpKind::swiglu;
  if (model_.experts > 1) {
    const double local_experts = static_cast<double>(model_.experts) / training_.ep;
    // balanced routing: every rank processes T·top_k token-expert pairs over its local experts
    const double per_expert = T * model_.top_k / local_experts;
    gemm("router", T, model_.experts, h, 1);
    gemm("expert_fc1", per_expert, (swiglu ? 2 : 1) * f / t, h, local_experts);
    mem(swiglu ? "swiglu" : "gelu", (swiglu ? 3 : 2) * T * model_.top_k * f / t * e);
    gemm("expert_fc2", per_expert, h, f / t, local_experts);
  } else {
    gemm("fc1", T, (swiglu ? 2 : 1) * f / t, h, 1);
    mem(swiglu ? "swiglu" : "bias_gelu", (swiglu ? 3 : 2) * T * f / t * e);
    gemm("fc2", T, h, f / t, 1);
  }
  mem("bias_dropout_residual", 3 * resid * h * e + resid * h);
  b.backward = k.backward();
  if (training_.recompute == Recompute::full)
    b.recompute = b.forward;
  return b;
}

BlockCost CostModel::embedding() const
{
  BlockCost b;
  const double e = element_bytes();
  const double T = tokens_local();
  const double h = model_.hidden;
  double bytes = 2 * T * h * e + (model_.position == PositionKind::learned ? 2 * T * h * e : 0);
  BlockBuilder k(*this, b);
  k.mem("embedding_lookup", bytes); // backward: scatter-add of token gradients into the table
  b.backward = k.backward();
  return b;
}

BlockCost CostModel::logits() const
{
  BlockCost b;
  const double e = element_bytes();
  const double t = training_.tp;
  const double T = tokens_local();
  const double h = model_.hidden;
  const double v = model_.vocab;
  const double resid = training_.sequence_parallel ? T / t : T;
  BlockBuilder k(*this, b);
  k.mem("final_layernorm", 2 * resid * h * e);
  k.gemm("output_projection", T, v / t, h, 1);
  // Megatron's vocab-parallel cross-entropy over fp32 logits, pass by pass (bytes per logit):
  // cast to fp32 (read e, write 4), max (4), subtract the max (8), exp (8), sum (4), divide
  // (8); backward: scale by the incoming gradient (8), cast back (4 + e). Six kernels, two.
  const double logits = T * v / t;
  const double ce_forward = logits * (e + 4 + 4 + 8 + 8 + 4 + 8);
  const double ce_backward = logits * (8 + 4 + e);
  for (int pass = 0; pass < 5; ++pass)
    k.kernel("cross_entropy_pass", 0, 0, 0, 0); // the launch gaps of the extra passes
  k.kernel("cross_entropy", 0, ce_forward, memory_seconds(ce_forward), memory_seconds(ce_backward));
  b.backward = k.backward();
  return b;
}

double CostModel::optimizer_seconds(double params) const
{
  // fused Adam: read and write master weights and both moments, read the gradient, write the
  // working copy of the weights
  double bytes = params * (2 * training_.optimizer_state_bytes + training_.grad_state_bytes + training_.weight_state_bytes);
  return memory_seconds(bytes);
}

} // namespace clustersim
