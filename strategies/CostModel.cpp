#include "CostModel.hpp"

#include <algorithm>
#include <cmath>

namespace clustersim {

CostModel::CostModel(ModelSpec model, TrainingSpec training, GpuSpec gpu)
    : model_(std::move(model)), training_(std::move(training)), gpu_(std::move(gpu))
{
  peak_ = gpu_.peak(training_.precision);
}

double CostModel::element_bytes() const
{
  return training_.precision == Precision::fp32 || training_.precision == Precision::tf32 ? 4.0 : 2.0;
}

// ---------------------------------------------------------------- FLOPs (whole model)

double CostModel::attention_core_flops(double sequences) const
{
  const double s = model_.seq_len;
  const double h = model_.hidden;
  return 4.0 * sequences * s * s * h; // scores + context, full s×s
}

double CostModel::layer_forward_flops(double sequences) const
{
  const double tokens = sequences * model_.seq_len;
  const double h = model_.hidden;
  const double kv = model_.kv_dim();
  const double f = model_.ffn_hidden;
  double qkv = 2.0 * tokens * h * (h + 2.0 * kv);
  double proj = 2.0 * tokens * h * h;
  double mlp = 2.0 * tokens * h * f * model_.mlp_matrices() * model_.top_k;
  double router = model_.experts > 1 ? 2.0 * tokens * h * model_.experts : 0.0;
  return qkv + attention_core_flops(sequences) + proj + mlp + router;
}

double CostModel::logits_forward_flops(double sequences) const
{
  return 2.0 * sequences * model_.seq_len * model_.hidden * static_cast<double>(model_.vocab);
}

double CostModel::model_flops_per_step() const
{
  const double b = training_.global_batch;
  return 3.0 * (model_.layers * layer_forward_flops(b) + logits_forward_flops(b));
}

double CostModel::hardware_flops_per_step() const
{
  const double b = training_.global_batch;
  double extra = 0;
  if (training_.recompute == Recompute::full)
    extra = model_.layers * layer_forward_flops(b);
  else if (training_.recompute == Recompute::selective)
    extra = model_.layers * attention_core_flops(b);
  return model_flops_per_step() + extra;
}

// ---------------------------------------------------------------- op times

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

double CostModel::tokens_local() const
{
  return static_cast<double>(training_.micro_batch) * model_.seq_len / training_.cp;
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
  k.gemm("qkv_projection", T, (h + 2 * kv) / t, h, 1);
  if (model_.position == PositionKind::rotary)
    k.mem("rotary_embedding", 2 * T * (h + kv) / t * e);

  double core_forward = 0;
  const double before = b.forward;
  if (training_.flash_attention) {
    // Flash attention skips fully masked blocks: a causal rank executes about half of its
    // query x key work (ring attention keeps that balance across CP ranks).
    double executed = 4.0 * mb * s_loc * s * (h / t) * 0.5;
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
  k.gemm("output_projection", T, h, h / t, 1);
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
  const double f = model_.ffn_hidden;
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

// ---------------------------------------------------------------- communication volumes

double CostModel::tp_message_bytes() const
{
  return tokens_local() * model_.hidden * element_bytes();
}

double CostModel::pp_message_bytes() const
{
  double bytes = tokens_local() * model_.hidden * element_bytes();
  // Megatron scatters the boundary activation over TP ranks when sequence parallel
  return training_.sequence_parallel ? bytes / training_.tp : bytes;
}

double CostModel::cp_message_bytes() const
{
  // K and V of the local chunk, sharded by TP heads
  double kv_heads_local = std::max(1.0, static_cast<double>(model_.kv_heads) / training_.tp);
  return 2.0 * tokens_local() * kv_heads_local * model_.head_dim() * element_bytes();
}

// ---------------------------------------------------------------- parameters and memory

std::vector<int> CostModel::layers_per_stage() const
{
  const int p = training_.pp;
  const int l = model_.layers;
  std::vector<int> out(static_cast<std::size_t>(p), l / p);
  // Megatron allows uneven first/last stages: spread the remainder from the middle outwards,
  // keeping the first and last stage (which also hold embedding and logits) lightest.
  int rest = l % p;
  for (int i = 0; rest > 0; ++i) {
    int idx = p <= 2 ? i % p : 1 + (i % (p - 2));
    ++out[static_cast<std::size_t>(idx)];
    --rest;
  }
  return out;
}

double CostModel::stage_params(int stage) const
{
  const double t = training_.tp;
  const int layers = layers_per_stage()[static_cast<std::size_t>(stage)];
  double mlp = model_.layer_mlp_params();
  double dense = model_.layer_params() - mlp;
  double per_layer = dense / t + (model_.experts > 1 ? mlp / (t * training_.ep) : mlp / t);
  double p = layers * per_layer;
  const bool first = stage == 0;
  const bool last = stage == training_.pp - 1;
  if (first)
    p += model_.embedding_params() / t;
  if (last) {
    p += model_.final_norm_params();
    // tied embeddings still need the matrix on the last stage when it is not the first
    if (!model_.tied_embeddings || !first)
      p += static_cast<double>(model_.vocab) * model_.hidden / t;
  }
  return p;
}

MemoryBreakdown CostModel::memory(int stage) const
{
  MemoryBreakdown m;
  m.stage = stage;
  const double params = stage_params(stage);
  const double dp = static_cast<double>(training_.dp) * training_.cp; // ZeRO shards over dp x cp
  const int z = training_.zero;
  m.weights = params * training_.weight_state_bytes / (z >= 3 ? dp : 1.0);
  m.grads = params * training_.grad_state_bytes / (z >= 2 ? dp : 1.0);
  m.optimizer = params * training_.optimizer_state_bytes / (z >= 1 ? dp : 1.0);

  // Activations per layer per micro-batch (Korthikanti et al. 2022, generalised to GQA,
  // SwiGLU and no-dropout models; 16-bit activations, 1-byte dropout masks).
  const double e = element_bytes();
  const double t = training_.tp;
  const double T = tokens_local();
  const double h = model_.hidden;
  const double kv = model_.kv_dim();
  const double f = model_.ffn_hidden * (model_.experts > 1 ? model_.top_k : 1);
  const double a = model_.heads;
  const double s = model_.seq_len;
  const double sp = training_.sequence_parallel ? t : 1.0;
  const bool dropout = model_.bias; // GPT-style models train with dropout; Llama-style without
  const double mask = dropout ? 1.0 : 0.0;
  // replicated across TP unless sequence parallel: LN inputs, QKV and FC1 inputs, residual masks
  double shared = T * h * (4 * e + 2 * mask) / sp;
  // sharded by TP: Q, K, V, projection input, FC1 output, activation output
  double sharded = T * (e * h + 2 * e * kv + e * h) / t;
  double fc1_out = (model_.mlp == MlpKind::swiglu ? 2 : 1) * T * f * e / t;
  double act_out = T * f * e / t;
  sharded += fc1_out + act_out;
  // attention matrix: softmax output, dropout mask and dropout output (a·s² per sequence)
  double core = 0;
  if (!training_.flash_attention && training_.recompute == Recompute::none)
    core = training_.micro_batch * a * (s / training_.cp) * s * (e + mask + (dropout ? e : 0)) / t;
  else if (training_.flash_attention)
    core = training_.micro_batch * a * (s / training_.cp) * 4.0 / t; // softmax statistics, fp32
  double per_layer = shared + sharded + core;
  if (training_.recompute == Recompute::full)
    per_layer = 2 * T * h * e / sp; // only each layer's input is kept

  // micro-batches in flight on this stage
  const int p = training_.pp;
  const int mcount = training_.micro_batches();
  double in_flight = 1;
  const int layers = layers_per_stage()[static_cast<std::size_t>(stage)];
  if (p > 1) {
    switch (training_.schedule) {
    case Schedule::gpipe:
      in_flight = mcount;
      break;
    case Schedule::one_f_one_b:
      in_flight = std::min(mcount, p - stage);
      break;
    case Schedule::interleaved: {
      const int v = training_.vpp;
      double chunks = std::min<double>(static_cast<double>(mcount) * v, 2.0 * (p - stage - 1) + (v - 1) * p + 1);
      in_flight = chunks / v;
      break;
    }
    }
  }
  m.activations = per_layer * layers * in_flight;
  // the layer being recomputed in backward holds its full activations once more
  if (training_.recompute == Recompute::full)
    m.activations += shared + sharded + core;
  const bool last = stage == p - 1;
  const bool first = stage == 0;
  if (first)
    m.activations += T * h * e / sp * in_flight; // embedding output
  // buffers: fp32 logits + their gradient on the last stage, DDP bucket pair elsewhere
  double logits_ws = last ? T * model_.vocab / t * 4.0 * 2 : 0.0;
  double buckets = training_.dp > 1 ? 2 * (training_.bucket_bytes > 0 ? training_.bucket_bytes : 25e6) : 0.0;
  m.buffers = logits_ws + buckets;
  // CUDA context, cuBLAS/NCCL workspaces (stated allowance), and 5 % allocator fragmentation
  const double runtime = 1.5 * 1024.0 * 1024.0 * 1024.0;
  double subtotal = m.weights + m.grads + m.optimizer + m.activations + m.buffers;
  m.reserved = runtime + 0.05 * subtotal;
  m.peak = subtotal + m.reserved;
  m.capacity = gpu_.hbm_bytes;
  m.fits = m.peak <= m.capacity;
  struct Term {
    const char* name;
    double v;
  } terms[] = {{"weights", m.weights},         {"gradients", m.grads}, {"optimizer states", m.optimizer},
               {"activations", m.activations}, {"buffers", m.buffers}, {"reserved", m.reserved}};
  m.dominant = std::max_element(std::begin(terms), std::end(terms), [](const Term& x, const Term& y) {
                 return x.v < y.v;
               })->name;
  return m;
}

MemoryBreakdown CostModel::peak_memory() const
{
  MemoryBreakdown best = memory(0);
  for (int s = 1; s < training_.pp; ++s) {
    MemoryBreakdown m = memory(s);
    if (m.peak > best.peak)
      best = m;
  }
  return best;
}

} // namespace clustersim
