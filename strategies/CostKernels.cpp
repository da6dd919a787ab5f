// The time of each operation of a layer on one GPU: GEMMs by a roofline with tile and wave
// quantization in the precision each one runs (FP8 for the linear layers an FP8 recipe casts),
// element-wise kernels by their HBM bytes as the framework's kernel set launches them, the FP8
// recipe's cast kernels, flash attention by its published throughput at the layer's shape,
// every kernel with its launch gap.
#include "strategies/CostModel.hpp"
#include "strategies/MoeDispatcher.hpp"

#include <algorithm>
#include <cmath>

namespace clustersim {

Precision CostModel::compute_precision() const
{
  return activation_precision(training_.precision);
}

Precision CostModel::linear_precision() const
{
  const Fp8Recipe* r = training_.fp8();
  return r ? r->format : compute_precision();
}

double CostModel::gemm_efficiency(double m, double n, double k, double batch, Precision p, double sms_taken) const
{
  const GemmMeasurement& g = gpu_.gemm_of(p);
  // the shape's quantization lowers the derived ceiling; no shape beats the measured maximum
  // (or the stack's median over its training shapes, where measured); SMs held by other kernels
  // leave the GEMM its share of the GPU
  const double shape = gpu_.gemm_shape_factor(m, n, k, batch, sms_taken);
  const double isolated = std::min(g.ceiling * shape, g.limit() * (gpu_.sms - sms_taken) / gpu_.sms);
  return isolated * gpu_.sustained * gpu_.power_factor();
}

const TpOverlap* CostModel::tp_overlap(const std::string& pass) const
{
  if (!training_.overlap.tp_comm || training_.tp < 2 || !training_.sequence_parallel)
    return nullptr;
  const auto& m = training_.traits().tp_overlap;
  auto it = m.find(pass);
  return it == m.end() ? nullptr : &it->second;
}

double CostModel::gemm_efficiency(double m, double n, double k, double batch) const
{
  return gemm_efficiency(m, n, k, batch, compute_precision());
}

double CostModel::gemm_seconds(double m, double n, double k, double batch, Precision p, double sms_taken) const
{
  if (m <= 0 || n <= 0 || k <= 0 || batch <= 0)
    return 0;
  const double flops = 2.0 * m * n * k * batch;
  const double compute = flops / (gpu_.peak(p) * gemm_efficiency(m, n, k, batch, p, sms_taken));
  // operands in the GEMM's format (FP8: one byte; NVFP4: half a byte and an E4M3 scale per 16),
  // the output in the activations'
  const double in_bytes = p == Precision::fp8 ? 1.0 : p == Precision::fp4 ? 0.5625 : element_bytes();
  const double bytes = (in_bytes * (m * k + k * n) + element_bytes() * m * n) * batch;
  return std::max(compute, memory_seconds(bytes));
}

double CostModel::gemm_seconds(double m, double n, double k, double batch) const
{
  return gemm_seconds(m, n, k, batch, compute_precision());
}

double CostModel::memory_seconds(double bytes) const
{
  return bytes / (gpu_.hbm_bandwidth * gpu_.hbm_efficiency);
}

CostModel::AttentionRate CostModel::attention_rate(double head_dim, bool causal, double seq) const
{
  const double peak16 = gpu_.peak(compute_precision());
  const double scale = peak16 * gpu_.sustained * gpu_.power_factor();
  std::string backend;
  if (const AttentionCurve* c = gpu_.attention_curve(training_.traits().attention, &backend)) {
    AttentionCurve::Rate r = c->at(head_dim, causal, seq);
    return {r.forward * scale, r.backward * scale, backend};
  }
  return {gpu_.attention_efficiency * scale, gpu_.attention_efficiency * scale, "flat"};
}

/// Accumulates a block's ops, forward and backward. Every kernel pays the launch gap.
class CostModel::BlockBuilder {
public:
  BlockBuilder(const CostModel& c, BlockCost& b, const char* part)
      : c_(c), b_(b), set_(c.training_.kernel_set()), part_(part)
  {
  }

  /// The part of the network the ops pushed next belong to (CUDA graph scopes).
  void part(const char* p) { part_ = p; }

  /// An element-wise op of the framework's kernel set over `elements` of its tensor.
  void elementwise(const std::string& op, double elements, double extra_bytes = 0)
  {
    ElementwiseKernel k = set_.op(op);
    if (k.forward.kernels == 0 && k.backward.kernels == 0 && k.forward.act == 0)
      return;
    const double e = c_.element_bytes();
    const double fb = elements * k.forward.bytes(e) + extra_bytes;
    const double bb = elements * k.backward.bytes(e) + extra_bytes;
    OpCost o{op, "elementwise", to_string(c_.compute_precision()), 0, fb, 0, 0, 0,
             static_cast<int>(k.forward.kernels + k.backward.kernels)};
    o.forward = c_.memory_seconds(fb) + k.forward.kernels * gap();
    o.backward = c_.memory_seconds(bb) + k.backward.kernels * gap();
    o.launches_forward = k.forward.kernels;
    o.launches_backward = k.backward.kernels;
    push(o);
  }

  /// A GEMM out[m x n] = in[m x k] . W[k x n] (`batch` independent ones); a linear layer runs in
  /// the recipe's FP8 with its casts, anything else (`linear` false) in 16 bits. `grouped`: the
  /// batch is a MoE layer's local experts, one GEMM launched per expert (Transformer Engine's
  /// GroupedLinear loops over them: NVIDIA/TransformerEngine@v2.9
  /// transformer_engine/common/gemm/cublaslt_gemm.cu:924-977), else one batched kernel.
  /// `base_weight`: W is a weight of the model (frozen under LoRA: its backward is the data
  /// gradient only, and a targeted layer gains its adapter), not an activation or an adapter.
  void gemm(const std::string& name, double m, double n, double k, double batch, bool linear = true,
            bool grouped = false, bool base_weight = true)
  {
    const Fp8Recipe* r = linear ? c_.training_.fp8() : nullptr;
    const Precision p = r ? r->format : c_.compute_precision();
    const bool frozen = base_weight && c_.training_.frozen_base();
    OpCost o{name, "gemm", to_string(p), 2 * m * n * k * batch, 0, 0, 0, 0, frozen ? 2 : 3};
    // the data gradient and the weight gradient, each m x n x k; a frozen weight's data gradient
    o.flops_backward = (frozen ? 1 : 2) * o.flops;
    o.bytes = c_.element_bytes() * (m * k + k * n + m * n) * batch;
    // a pass overlapped with TP communication runs on the SMs the communication leaves it, in
    // chunks of the token dimension
    const std::string pass = name == "qkv_projection" ? "qkv" : name == "output_projection" ? "proj" : name;
    auto timed = [&](const char* suffix, double mm, double nn, double kk, bool tokens_first) {
      const TpOverlap* ov = linear ? c_.tp_overlap(pass + suffix) : nullptr;
      if (!ov)
        return c_.gemm_seconds(mm, nn, kk, batch, p) + gap();
      const int chunks = ov->splits > 0 ? ov->splits : c_.training_.tp;
      if (tokens_first)
        mm /= chunks;
      else
        kk /= chunks;
      return chunks * (c_.gemm_seconds(mm, nn, kk, batch, p, ov->sms) + gap());
    };
    o.forward = timed("_fprop", m, n, k, true);
    // backward: the data gradient (inner dimension n) and the weight gradient (inner dimension m)
    o.backward_data = timed("_dgrad", m, k, n, true);
    o.backward = frozen ? o.backward_data : o.backward_data + timed("_wgrad", k, n, m, false);
    const double per = grouped ? batch : 1.0;
    o.launches_forward = per;
    o.launches_backward = (frozen ? 1 : 2) * per;
    push(o);
    if (r)
      casts(name, *r, m * k * batch, m * n * batch, k * n * batch);
    if (frozen && c_.training_.lora.targets_linear(lora_target(name)))
      adapter(name, m, n, k);
  }

  /// LoRA's adapter beside a frozen out[m x n] = in[m x k] . W (this rank's shapes): in . A
  /// (k x rank), then . B (rank x n), both trained, in 16 bits. The sum into the layer's output
  /// and, beside a row-parallel layer, the all-reduce of the m x rank partial products over TP
  /// are left out (rank / n of the layer's output traffic).
  void adapter(const std::string& name, double m, double n, double k)
  {
    const double r = c_.training_.lora.rank;
    gemm(name + "_lora_a", m, r, k, 1, false, false, false);
    const std::size_t a = b_.ops.size() - 1;
    gemm(name + "_lora_b", m, n, r, 1, false, false, false);
    b_.ops[a].adapter_params = r * (k + n);
  }

  /// The LoRA target a weight GEMM of the current part is (Megatron-Bridge's linear_qkv,
  /// linear_proj, linear_fc1, linear_fc2: the attention's, the dense MLP's or the shared
  /// experts'), or "" where none applies.
  std::string lora_target(const std::string& name) const
  {
    if (std::string(part_) == "attn")
      return name == "qkv_projection" ? "qkv" : name == "output_projection" ? "proj" : "";
    if (name == "fc1" || name == "shared_fc1")
      return "fc1";
    if (name == "fc2" || name == "shared_fc2")
      return "fc2";
    return "";
  }

  /// The attention core as one op (its FLOPs and times given).
  void core(const std::string& name, double flops, double flops_backward, double forward, double backward,
            int kernels)
  {
    OpCost o{name, "attention", to_string(c_.compute_precision()), flops, 0, forward, backward, 0, kernels};
    o.flops_backward = flops_backward;
    o.launches_forward = kernels / 2.0;
    o.launches_backward = kernels / 2.0;
    push(o);
  }

  /// An op priced by the caller (its launches set).
  void add(OpCost o) { push(std::move(o)); }

  double gap() const { return c_.gpu_.launch_gap; }
  BlockCost& block() { return b_; }

private:
  /// FP8 or FP4: the input cast (forward), the output-gradient cast (backward), the weight cast
  /// (per step, spread over its micro-batches, or every micro-batch).
  void casts(const std::string& name, const Fp8Recipe& r, double input, double output, double weight)
  {
    const double e = c_.element_bytes();
    const double per = r.weight_per_step ? 1.0 / c_.micro_batches() : 1.0;
    const double fb = input * r.input.bytes(e) + weight * r.weight.bytes(e) * per;
    const double bb = output * r.grad.bytes(e);
    const std::string format = to_string(r.format);
    const int kernels = static_cast<int>(r.input.kernels + r.grad.kernels + r.weight.kernels);
    OpCost o{name + "_" + format + "_cast", "cast", format, 0, fb, 0, 0, 0, kernels};
    o.forward = c_.memory_seconds(fb) + (r.input.kernels + r.weight.kernels * per) * gap();
    o.backward = c_.memory_seconds(bb) + r.grad.kernels * gap();
    o.backward_data = o.backward; // the output gradient is cast before the data gradient
    o.launches_forward = r.input.kernels + r.weight.kernels * per;
    o.launches_backward = r.grad.kernels;
    push(o);
  }

  void push(OpCost o)
  {
    if (o.part.empty())
      o.part = part_;
    b_.forward += o.forward;
    b_.backward += o.backward;
    b_.ops.push_back(std::move(o));
  }

  const CostModel& c_;
  BlockCost& b_;
  const KernelSet& set_;
  const char* part_;
};

void CostModel::add_attention_core(BlockBuilder& k, bool windowed) const
{
  BlockCost& b = k.block();
  const double t = training_.tp;
  const double cp = training_.cp;
  const double s = model_.seq_len;
  const double s_loc = s / cp;
  const double heads = model_.heads / t;
  const double d = model_.qk_head_dim();
  const double dv = model_.v_head_dim();
  // FLOPs per query-key pair per rank: scores over the query/key width, context over the values'
  const double pair = 2.0 * heads * (d + dv);
  const double mb = training_.micro_batch;
  const double e = element_bytes();
  b.before_core_forward = b.forward;
  b.before_core_backward = b.backward;
  const double f0 = b.forward, b0 = b.backward;
  if (!training_.flash_attention) {
    // unfused: the s x s scores materialized, in 16 bits whatever the recipe (a sliding window is
    // a mask on them: the same work)
    k.gemm("attention_scores", s_loc, s, d, mb * heads, false, false, false);
    const double elems = mb * heads * s_loc * s;
    OpCost soft{"scale_mask_softmax", "elementwise", to_string(compute_precision()), 0, 2 * elems * e, 0, 0, 0, 2};
    soft.forward = memory_seconds(2 * elems * e) + k.gap();
    soft.backward = memory_seconds(3 * elems * e) + k.gap();
    soft.launches_forward = soft.launches_backward = 1;
    k.add(soft);
    if (model_.dropout) {
      OpCost drop{"attention_dropout", "elementwise", to_string(compute_precision()), 0, 2 * elems * e + elems,
                  0, 0, 0, 2};
      drop.forward = memory_seconds(2 * elems * e + elems) + k.gap();
      drop.backward = memory_seconds(2 * elems * e + elems) + k.gap();
      drop.launches_forward = drop.launches_backward = 1;
      k.add(drop);
    }
    k.gemm("attention_context", s_loc, dv, s, mb * heads, false, false, false);
  } else if (training_.cp == 1) {
    // Flash attention skips fully masked blocks: causal executes half of the query x key work;
    // backward recomputes the scores: 2.5x the forward's FLOPs (FlashAttention-2's count). A
    // sliding window of w executes its share of the pairs; each query tile then meets about
    // w / tile + 1 key tiles, as a causal kernel does on average at a sequence of ~2w, so it
    // runs at the causal curve's rate there
    const double share = windowed ? model_.window_share() : 1.0;
    const double executed = pair * mb * s_loc * s * 0.5 * share;
    AttentionRate r = attention_rate(d, true, windowed ? std::min(s, 2.0 * model_.sliding_window) : s);
    k.core("flash_attention", executed, 2.5 * executed, executed / r.forward + k.gap(),
           2.5 * executed / r.backward + k.gap(), 2);
  } else {
    // Ring attention with causal load balancing (Megatron/TE, torch context_parallel): each
    // rank holds chunks i and 2cp-1-i of 2cp; step 0 is causal on its own chunks, each later
    // step one non-causal half-block ([2c x c] or [c x 2c] with c = s/2cp): cp x 2c^2 in all.
    const double c = s / (2 * cp);
    const double unit = pair * mb; // FLOPs per query-key pair
    const double step_flops = unit * 2 * c * c;
    AttentionRate diag = attention_rate(d, true, 2 * c);
    AttentionRate half_q = attention_rate(d, false, c);   // all queries against half the keys
    AttentionRate half_k = attention_rate(d, false, 2 * c); // half the queries against all keys
    ElementwiseKernel fix = training_.kernel_set().op("ring_attention_step");
    const double out_elems = mb * s_loc * heads * dv;
    const double fix_f = memory_seconds(out_elems * fix.forward.bytes(e)) + fix.forward.kernels * k.gap();
    const double fix_b = memory_seconds(out_elems * fix.backward.bytes(e)) + fix.backward.kernels * k.gap();
    b.ring_forward.push_back(step_flops / diag.forward + k.gap());
    b.ring_backward.push_back(2.5 * step_flops / diag.backward + k.gap());
    for (int i = 1; i < training_.cp; ++i) {
      const double fwd = 0.5 * (step_flops / half_q.forward + step_flops / half_k.forward);
      const double bwd = 0.5 * (2.5 * step_flops / half_q.backward + 2.5 * step_flops / half_k.backward);
      b.ring_forward.push_back(fwd + k.gap() + fix_f);
      b.ring_backward.push_back(bwd + k.gap() + fix_b);
    }
    double fs = 0, bs = 0;
    for (double v : b.ring_forward)
      fs += v;
    for (double v : b.ring_backward)
      bs += v;
    k.core("ring_flash_attention", step_flops * cp, 2.5 * step_flops * cp, fs, bs, 2 * training_.cp);
  }
  b.core_forward = b.forward - f0;
  b.core_backward = b.backward - b0;
}

BlockCost CostModel::attention_block(bool windowed) const
{
  BlockCost b;
  const double t = training_.tp;
  const double T = tokens_local();
  const double h = model_.hidden;
  const double kv = model_.kv_dim();
  const double q = model_.q_dim();
  // element-wise work on the residual stream is sharded by TP only with sequence parallelism
  const double resid = training_.sequence_parallel ? T / t : T;
  const double mask = model_.dropout ? resid * h : 0; // one-byte dropout masks

  BlockBuilder k(*this, b, "attn");
  k.elementwise("norm", resid * h);
  if (model_.mla) {
    // DeepSeek MLA (Megatron MLASelfAttention): the down projections to the latents are not
    // tensor-parallel, the up projections are column-parallel over the heads
    const ModelSpec::Mla& r = model_.mla_ranks;
    const double heads = model_.heads / t;
    if (r.q_lora_rank > 0)
      k.gemm("q_down_projection", T, r.q_lora_rank, h, 1);
    k.gemm("kv_down_projection", T, r.kv_lora_rank + r.qk_rope_head_dim, h, 1);
    k.elementwise("norm", T * (r.q_lora_rank + r.kv_lora_rank));
    k.gemm("qkv_projection", T, heads * model_.qk_head_dim(), r.q_lora_rank > 0 ? r.q_lora_rank : h, 1);
    k.gemm("qkv_projection", T, heads * (r.qk_nope_head_dim + r.v_head_dim), r.kv_lora_rank, 1);
    k.elementwise("rotary", T * (heads + 1) * r.qk_rope_head_dim);
  } else {
    k.gemm("qkv_projection", T, (q + 2 * kv) / t, h, 1);
    if (model_.position == PositionKind::rotary)
      k.elementwise("rotary", T * (q + kv) / t);
    if (training_.flash_attention && model_.kv_heads < model_.heads)
      k.elementwise("gqa_expand", T * 2 * q / t);
  }
  add_attention_core(k, windowed);
  const double v = static_cast<double>(model_.heads) * model_.v_head_dim();
  if (training_.flash_attention)
    k.elementwise("attention_output", T * v / t);
  k.gemm("output_projection", T, h, v / t, 1);
  k.elementwise("residual", resid * h, mask);
  b.recompute = recompute_seconds(b, true);
  return b;
}

BlockCost CostModel::mlp_block() const
{
  BlockCost b;
  const double t = training_.tp;
  const double T = tokens_local();
  const double h = model_.hidden;
  const double f = model_.ffn_hidden;
  const double resid = training_.sequence_parallel ? T / t : T;
  const double mask = model_.dropout ? resid * h : 0;
  const bool swiglu = model_.mlp == MlpKind::swiglu;
  BlockBuilder k(*this, b, "mlp");
  k.elementwise("norm", resid * h);
  k.gemm("fc1", T, (swiglu ? 2 : 1) * f / t, h, 1);
  k.elementwise(swiglu ? "swiglu" : "gelu", T * f / t);
  k.gemm("fc2", T, h, f / t, 1);
  k.elementwise("residual", resid * h, mask);
  b.recompute = recompute_seconds(b, false);
  return b;
}

BlockCost CostModel::moe_block() const
{
  BlockCost b;
  const double t = training_.tp;
  const double T = tokens_local();
  const double h = model_.hidden;
  const double f = model_.expert_ffn();
  const double resid = training_.sequence_parallel ? T / t : T;
  const double mask = model_.dropout ? resid * h : 0;
  const bool swiglu = model_.mlp == MlpKind::swiglu;
  const char* act = swiglu ? "swiglu" : "gelu";
  const double etp = training_.etp;
  const double local = static_cast<double>(model_.experts) / training_.ep;
  const double copies = moe_tokens() * model_.top_k; // routed copies this rank sends
  const double recv = copies * etp; // copies its local experts process at balanced load, after the ETP gather
  BlockBuilder k(*this, b, "moe_router");
  k.elementwise("norm", resid * h);
  k.gemm("router", moe_tokens(), model_.experts, h, 1, false);
  // the router's own kernels besides its GEMM (scores, top-k, probabilities, aux loss)
  k.elementwise("moe_router", moe_tokens() * model_.experts);
  if (model_.shared_experts > 0) {
    // the shared experts: a tensor-parallel MLP every token passes through
    const double fs = static_cast<double>(model_.shared_experts) * f;
    k.gemm("shared_fc1", T, (swiglu ? 2 : 1) * fs / t, h, 1);
    k.elementwise(act, T * fs / t);
    k.gemm("shared_fc2", T, h, fs / t, 1);
  }
  k.part("moe_preprocess");
  k.elementwise("moe_permute", copies * h);
  k.part("moe_experts");
  b.before_experts_forward = b.forward;
  b.before_experts_backward = b.backward;
  // the all-to-all dispatcher regroups what it received by local expert, and back before
  // the combine (DeepEP/HybridEP's permutation after their dispatch is moe_permute's)
  const bool regroup =
      MoeDispatcherRegistry::instance().shared(training_.moe_dispatcher).regroups() && training_.ep > 1 && local > 1;
  if (regroup)
    k.elementwise("moe_sort_chunks", recv * h);
  // grouped GEMMs: one per local expert, its rows the tokens routed to it
  k.gemm("expert_fc1", recv / local, (swiglu ? 2 : 1) * f / etp, h, local, true, true);
  k.elementwise(act, recv * f / etp);
  k.gemm("expert_fc2", recv / local, h, f / etp, local, true, true);
  if (regroup)
    k.elementwise("moe_sort_chunks", recv * h);
  b.experts_forward = b.forward - b.before_experts_forward;
  b.experts_backward = b.backward - b.before_experts_backward;
  k.part("moe_combine");
  k.elementwise("moe_unpermute", copies * h);
  k.elementwise("residual", resid * h, mask);
  b.recompute = recompute_seconds(b, false, true);
  return b;
}

BlockCost CostModel::embedding() const
{
  BlockCost b;
  const double T = tokens_local();
  const double h = model_.hidden;
  BlockBuilder k(*this, b, "embedding");
  // lookup (+ learned positions); backward: scatter-add of token gradients into the table
  k.elementwise("embedding", T * h * (model_.position == PositionKind::learned ? 2 : 1));
  if (training_.frozen_base()) { // a frozen table takes no gradient: nothing is scattered into it
    b.backward = 0;
    for (OpCost& o : b.ops) {
      o.backward = 0;
      o.launches_backward = 0;
    }
  }
  return b;
}

BlockCost CostModel::logits() const
{
  BlockCost b;
  const double t = training_.tp;
  const double T = tokens_local();
  const double h = model_.hidden;
  const double v = model_.vocab;
  const double resid = training_.sequence_parallel ? T / t : T;
  BlockBuilder k(*this, b, "logits");
  k.elementwise("norm", resid * h);
  k.gemm("output_projection", T, v / t, h, 1, training_.traits().fp8_output_layer);
  k.elementwise("cross_entropy", T * v / t);
  return b;
}

namespace {

/// Whether an op of `part` is among `parts` (every part when none is given).
bool in_parts(const std::string& part, std::initializer_list<const char*> parts)
{
  if (parts.size() == 0)
    return true;
  for (const char* p : parts)
    if (part == p)
      return true;
  return false;
}

} // namespace

double CostModel::host_issue(const BlockCost& b, Pass pass, std::initializer_list<const char*> parts) const
{
  if (training_.cuda_graph_impl == "full_iteration")
    return 0; // one graph replay per iteration
  double seconds = 0;
  std::vector<std::string> replayed; // captured parts: one graph replay each
  for (const OpCost& o : b.ops) {
    if (!in_parts(o.part, parts))
      continue;
    if (training_.graph_captures(o.part) &&
        std::find(replayed.begin(), replayed.end(), o.part) == replayed.end())
      replayed.push_back(o.part);
    seconds += host_issue(o, pass == Pass::backward ? Pass::backward : Pass::forward);
  }
  seconds += static_cast<double>(replayed.size()) * gpu_.host.launch;
  if (pass == Pass::recompute)
    seconds *= b.forward > 0 ? b.recompute / b.forward : 0.0;
  return seconds;
}

double CostModel::pass_flops(const BlockCost& b, Pass pass, std::initializer_list<const char*> parts) const
{
  double flops = 0;
  for (const OpCost& o : b.ops)
    if (in_parts(o.part, parts))
      flops += pass == Pass::backward ? o.flops_backward : o.flops;
  if (pass == Pass::recompute)
    flops *= b.forward > 0 ? b.recompute / b.forward : 0.0;
  return flops;
}

double CostModel::host_issue(const OpCost& o, Pass pass) const
{
  if (training_.cuda_graph_impl == "full_iteration" || training_.graph_captures(o.part))
    return 0;
  return (pass == Pass::backward ? o.launches_backward : o.launches_forward) * gpu_.host.op;
}

bool CostModel::moe_host_sync() const
{
  return training_.traits().moe_host_sync && training_.cuda_graph_impl != "full_iteration";
}

bool CostModel::p2p_host_sync() const
{
  return training_.traits().p2p_host_sync && training_.vpp == 1 && training_.cuda_graph_impl != "full_iteration";
}

double CostModel::optimizer_seconds(double params) const
{
  // fused Adam: read and write master weights and both moments, read the gradient, write the
  // working copy of the weights
  const StateBytes st = training_.states();
  double bytes = params * (2 * st.optimizer + st.grads + st.weights);
  return memory_seconds(bytes);
}

} // namespace clustersim
