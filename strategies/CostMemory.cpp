// The memory one GPU holds at its peak: model states (ZeRO-sharded), activations of the
// micro-batches its pipeline schedule keeps in flight, buffers and the runtime's reserve.
#include "strategies/CostModel.hpp"

#include "strategies/MoeDispatcher.hpp"
#include "strategies/PipelineSchedule.hpp"

#include <algorithm>
#include <cmath>

namespace clustersim {

std::vector<int> CostModel::layers_per_stage() const
{
  return layers_per_rank(pipeline_, training_.pp);
}

namespace {

template <class F> void for_chunks(const std::vector<VirtualStage>& v, int stage, int pp, F f)
{
  for (std::size_t g = static_cast<std::size_t>(stage); g < v.size(); g += static_cast<std::size_t>(pp))
    f(v[g]);
}

} // namespace

bool CostModel::holds_embedding(int stage) const
{
  bool any = false;
  for_chunks(pipeline_, stage, training_.pp, [&](const VirtualStage& v) { any = any || v.embedding; });
  return any;
}

bool CostModel::holds_loss(int stage) const
{
  bool any = false;
  for_chunks(pipeline_, stage, training_.pp, [&](const VirtualStage& v) { any = any || v.loss; });
  return any;
}

int CostModel::mtp_modules(int stage) const
{
  int n = 0;
  for_chunks(pipeline_, stage, training_.pp, [&](const VirtualStage& v) { n += v.mtp; });
  return n;
}

RankParams CostModel::layer_rank_params(int layer) const
{
  // attention, norms, dense MLP, shared experts and router: sharded by TP; routed experts by
  // EP x ETP. An MTP module (layer >= layers) is a MoE layer and its 2h x h projection.
  RankParams p;
  p.dense = (model_.attention_params() + model_.mlp_params(layer)) / training_.tp;
  if (layer >= model_.layers)
    p.dense += 2.0 * model_.hidden * model_.hidden / training_.tp + 2.0 * model_.hidden;
  p.expert = model_.expert_params(layer) / (static_cast<double>(training_.ep) * training_.etp);
  return p;
}

CostModel::Adapters CostModel::layer_adapters(int layer) const
{
  Adapters a;
  const Lora& l = training_.lora;
  if (l.rank == 0)
    return a;
  const double r = l.rank;
  const double t = training_.tp;
  const double h = model_.hidden;
  // one adapter beside a linear layer of `in` x `out` (whole), TP-split on its output (column)
  // or its input (row)
  auto adapter = [&](const char* target, double in, double out, bool column) {
    if (!l.targets_linear(target))
      return;
    a.params += column ? r * (in + out / t) : r * (in / t + out);
    a.flops_per_token += 2.0 * r * (in + out);
  };
  const double heads = model_.heads;
  if (model_.mla) { // the up projections are the layer's qkv GEMMs (CostModel::attention_block)
    const ModelSpec::Mla& m = model_.mla_ranks;
    adapter("qkv", m.q_lora_rank > 0 ? m.q_lora_rank : h, heads * model_.qk_head_dim(), true);
    adapter("qkv", m.kv_lora_rank, heads * (m.qk_nope_head_dim + m.v_head_dim), true);
  } else {
    adapter("qkv", h, model_.q_dim() + 2.0 * model_.kv_dim(), true);
  }
  adapter("proj", heads * model_.v_head_dim(), h, false);
  // the dense MLP, or a MoE layer's shared experts as one MLP; routed experts have none
  const bool moe = layer >= model_.layers || model_.moe_layer(layer);
  const double f = moe ? static_cast<double>(model_.shared_experts) * model_.expert_ffn() : model_.ffn_hidden;
  if (f > 0) {
    adapter("fc1", h, (model_.mlp == MlpKind::swiglu ? 2.0 : 1.0) * f, true);
    adapter("fc2", f, h, false);
  }
  return a;
}

RankParams CostModel::stage_trainable_params(int stage) const
{
  if (!training_.frozen_base())
    return stage_rank_params(stage);
  RankParams p;
  for_chunks(pipeline_, stage, training_.pp, [&](const VirtualStage& v) {
    for (int l = 0; l < v.layers; ++l)
      p.dense += layer_adapters(v.first_layer + l).params;
  });
  for (int k = 0; k < mtp_modules(stage); ++k)
    p.dense += layer_adapters(model_.layers + k).params;
  return p;
}

RankParams CostModel::stage_rank_params(int stage, bool layers_only) const
{
  const double t = training_.tp;
  RankParams p;
  for_chunks(pipeline_, stage, training_.pp, [&](const VirtualStage& v) {
    for (int l = 0; l < v.layers; ++l)
      p += layer_rank_params(v.first_layer + l);
  });
  for (int k = 0; k < mtp_modules(stage); ++k)
    p += layer_rank_params(model_.layers + k);
  if (layers_only)
    return p;
  const bool first = holds_embedding(stage);
  const bool last = holds_loss(stage);
  if (first)
    p.dense += model_.embedding_params() / t;
  if (last) {
    p.dense += model_.final_norm_params();
    // tied embeddings still need the matrix on the last stage when it is not the first
    if (!model_.tied_embeddings || !first)
      p.dense += static_cast<double>(model_.vocab) * model_.hidden / t;
  }
  return p;
}

int CostModel::layers_on(int stage, bool (ModelSpec::*is)(int) const) const
{
  int n = 0;
  for_chunks(pipeline_, stage, training_.pp, [&](const VirtualStage& v) {
    for (int l = 0; l < v.layers; ++l)
      n += (model_.*is)(v.first_layer + l) ? 1 : 0;
  });
  return n;
}

int CostModel::moe_layers_on(int stage) const
{
  return layers_on(stage, &ModelSpec::moe_layer) + (model_.experts > 1 ? mtp_modules(stage) : 0);
}

int CostModel::windowed_layers_on(int stage) const
{
  return layers_on(stage, &ModelSpec::windowed);
}

double CostModel::stage_layer_seconds(int stage) const
{
  auto total = [](const BlockCost& b) { return b.forward + b.backward + b.recompute; };
  const int layers = layers_per_stage()[static_cast<std::size_t>(stage)] + mtp_modules(stage);
  const int moe = moe_layers_on(stage);
  const int windowed = windowed_layers_on(stage);
  const double attn = (layers - windowed) * total(attention_block()) +
                      (windowed > 0 ? windowed * total(attention_block(true)) : 0.0);
  return attn + (layers - moe) * total(mlp_block()) + (moe > 0 ? moe * total(moe_block()) : 0.0);
}

double CostModel::stage_params(int stage) const
{
  return stage_rank_params(stage).total();
}

double CostModel::layer_activation_bytes(bool moe) const
{
  // Activations per layer per micro-batch (Korthikanti et al. 2022, generalised to GQA,
  // SwiGLU and no-dropout models; 16-bit activations, 1-byte dropout masks). Under an FP8
  // recipe the linear layers keep their FP8 input instead of the 16-bit one.
  const double e = element_bytes();
  const Fp8Recipe* fp8 = training_.fp8();
  const double lin = fp8 ? fp8->saved_bytes : e; // a linear layer's saved input, per element
  const double t = training_.tp;
  const double T = tokens_local();
  const double h = model_.hidden;
  const double kv = model_.kv_dim();
  // recompute_modules `moe`: the whole MoE block is rebuilt in backward from its input (the
  // residual stream, kept below); `shared_experts`: the shared experts' activations are
  const bool moe_rebuilt = moe && recomputes("moe");
  const double shared_kept = recomputes("shared_experts") ? 0.0 : model_.shared_experts;
  // the MLP's intermediate width per token: a MoE layer's routed and shared experts
  const double f = moe ? static_cast<double>(model_.expert_ffn()) * (model_.top_k + shared_kept)
                       : model_.ffn_hidden;
  // a MoE layer also keeps the permuted copies its experts' FC1 read, and their FC2 outputs
  // where the unpermutation weighs them by the router probabilities
  const double weighed_outputs = training_.traits().moe_probs_in_activation ? 0.0 : e;
  const double permuted =
      moe && !moe_rebuilt ? moe_tokens() * model_.top_k * model_.hidden * (lin + weighed_outputs) : 0.0;
  const double a = model_.heads;
  const double s = model_.seq_len;
  const double q = model_.q_dim();
  const double sp = training_.sequence_parallel ? t : 1.0;
  const bool dropout = model_.dropout;
  const double mask = dropout ? 1.0 : 0.0;
  if (training_.recompute == Recompute::full)
    return T * h * e / sp; // only each layer's input is kept
  if (training_.recompute == Recompute::selective && training_.traits().selective == "op") {
    // torch selective checkpointing: the layer's input, the saved matmul outputs, the attention
    // output and its softmax statistics
    double lse = training_.flash_attention ? training_.micro_batch * a * (s / training_.cp) * 4.0 / t : 0.0;
    return T * h * e / sp + T * sac_saved_width() * e / t + T * q * e / t + lse;
  }
  // replicated across TP unless sequence parallel: the two norm inputs, the residual dropout
  // masks and the QKV and FC1 inputs (the norms' outputs): none with recompute_modules `layernorm` (freed once the linears have
  // read them, Megatron's CheckpointWithoutOutput; under FP8 the linears keep their own FP8
  // copies), one when the MLP (or MoE block) is rebuilt in backward
  const bool mlp_rebuilt = (!moe && recomputes("mlp")) || moe_rebuilt;
  double norm_outputs = recomputes("layernorm") && !fp8 ? 0.0 : 2.0;
  if (mlp_rebuilt)
    norm_outputs = std::min(norm_outputs, 1.0);
  double shared = T * h * (2 * e + norm_outputs * lin + 2 * mask) / sp;
  // sharded by TP: Q, K, V, the projection's input, FC1's output, the activation's output.
  // Flash attention's backward reads its own output O (D = rowsum(dO * O)), which its autograd
  // node keeps in the 16-bit dtype; the projection's FP8 recipe keeps its own FP8 copy of O
  // (Transformer Engine FusedAttnFunc saves q, k, v, out; Linear saves the cast input), so
  // under FP8 both are held (unless the attention core is recomputed and keeps only its
  // inputs). Without FP8 the two are one tensor.
  const double attn_out = training_.flash_attention && fp8 && !recomputes("core_attn") ? e : 0.0;
  double sharded = T * (e * q + 2 * e * kv + (lin + attn_out) * q) / t;
  if (model_.mla) {
    // MLA: the latents the up projections read (not TP-sharded), then Q and K at the
    // query/key width and V and the projection's input at the value width; with mla_up_proj
    // recomputed, Q, K and V are rebuilt from the latents in backward
    const ModelSpec::Mla& r = model_.mla_ranks;
    const double qk = a * model_.qk_head_dim(), v = a * model_.v_head_dim();
    const double latents = T * (r.q_lora_rank + r.kv_lora_rank + r.qk_rope_head_dim) * lin;
    const double qkv = recomputes("mla_up_proj") ? 0.0 : T * e * (2 * qk + v) / t;
    sharded = latents + qkv + T * (lin + attn_out) * v / t;
  }
  // the MLP: FC1's output and the activation's (recomputed: moe_act drops the activation's
  // output in a MoE layer; mlp drops a dense layer's MLP activations but its input)
  const bool act_recomputed = moe && recomputes("moe_act");
  if (!mlp_rebuilt)
    sharded += (model_.mlp == MlpKind::swiglu ? 2 : 1) * T * f * e / t + (act_recomputed ? 0.0 : T * f * lin / t);
  // attention matrix: softmax output, dropout mask and dropout output (a·s² per sequence)
  double core = 0;
  if (!training_.flash_attention && !recomputes("core_attn"))
    core = training_.micro_batch * a * (s / training_.cp) * s * (e + mask + (dropout ? e : 0)) / t;
  else if (training_.flash_attention)
    core = training_.micro_batch * a * (s / training_.cp) * 4.0 / t; // softmax statistics, fp32
  return shared + sharded + core + permuted;
}

double CostModel::gathered_bytes(int stage, double params, double grad_bytes) const
{
  const double e = element_bytes();
  const double t = training_.tp;
  const int p = training_.pp;
  const double h = model_.hidden;
  const bool last = holds_loss(stage);
  // gathered parameters: the unit computing and those prefetched, its unsharded gradient
  const ShardedTraits& sh = training_.traits().sharded;
  // the largest unit gathered at once: one transformer layer (each layer is its own unit)
  const double in_layers = stage_rank_params(stage, true).total();
  const double layers = layers_per_stage()[static_cast<std::size_t>(stage)] + mtp_modules(stage);
  const double unit = layers > 0 ? in_layers / layers : params;
  const double ahead = sh.per_tensor ? sh.prefetch_params : unit * sh.prefetch_units;
  const bool keep = !sh.reshard_after_forward || (p > 1 && sh.keep_with_pipeline);
  // kept over the step: every unsharded parameter of the stage and its gradient, accumulated
  // unsharded until the last micro-batch reduces it
  double bytes = keep ? params * (e + (p > 1 && sh.keep_with_pipeline ? grad_bytes : 0.0)) : (unit + ahead) * e;
  bytes += unit * (e + grad_bytes);
  // the root unit: what no layer's unit holds (embedding, final norm, output layer) is gathered
  // as one unit by the root's pre-forward hook and resharded only after the last use of any of
  // its parameters - the output layer at the end of forward, the embedding at the end of
  // backward - so it stays gathered through both passes; the output layer's 16-bit gradient,
  // produced first in backward, waits for the root's reduce-scatter at the end of it (torch
  // FSDP2 fully_shard(model) over the per-block units, torchtitan parallelize_llama; FSDP1's
  // root FlatParameter likewise). Per-tensor gathering (DeepSpeed) fetches each when used.
  if (!keep && !sh.per_tensor) {
    const double root = params - in_layers;
    // (with tied embeddings the shared matrix's gradient, the output layer's share first)
    const double output = last ? double(model_.vocab) * h / t : 0.0;
    bytes += root * e + output * e;
  }
  return bytes;
}

ModelStates sharded_states(double dense, double expert, const StateBytes& bytes, int zero, double dp, double edp)
{
  auto sharded = [&](double per_param, int from) {
    return zero >= from ? dense * per_param / dp + expert * per_param / edp : (dense + expert) * per_param;
  };
  return {sharded(bytes.weights, 3), sharded(bytes.grads, 2), sharded(bytes.optimizer, 1)};
}

MemoryBreakdown CostModel::memory(int stage) const
{
  MemoryBreakdown m;
  m.stage = stage;
  const RankParams held = stage_rank_params(stage);
  const double params = held.total();
  // what trains: all of it, or under LoRA the adapters
  const RankParams trains = training_.frozen_base() ? stage_trainable_params(stage) : held;
  const double dp = static_cast<double>(training_.dp) * training_.cp; // data-parallel replicas (x cp)
  // ZeRO shards over dp x cp and the expert states over edp, a hybrid strategy within each of
  // its dp_replicate groups
  const double replicate = training_.dp_replicate();
  const double shard = dp / replicate;
  const double edp = expert_data_parallel() / replicate;
  const int z = training_.zero;
  ModelStates states = sharded_states(held.dense, held.expert, training_.states(), z, shard, edp);
  if (training_.frozen_base()) {
    // LoRA: the frozen base keeps its working copy only; the adapters keep every state
    const StateBytes all = training_.states();
    const ModelStates base = sharded_states(held.dense, held.expert, StateBytes{all.weights, 0, 0}, z, shard, edp);
    const ModelStates trained = sharded_states(trains.dense, trains.expert, all, z, shard, edp);
    states = {base.weights + trained.weights, trained.grads, trained.optimizer};
  }
  m.weights = states.weights;
  m.grads = states.grads;
  m.optimizer = states.optimizer;
  const double e = element_bytes();
  const double t = training_.tp;
  const double T = tokens_local();
  const double h = model_.hidden;
  const double sp = training_.sequence_parallel ? t : 1.0;

  // micro-batches in flight on this stage: the schedule's rule (one without pipelining)
  const int p = training_.pp;
  const double in_flight =
      p > 1 ? ScheduleRegistry::instance().shared(training_.schedule).in_flight(stage, training_.pipeline_shape())
            : 1.0;
  const int layers = layers_per_stage()[static_cast<std::size_t>(stage)] + mtp_modules(stage);
  const int moe_layers = moe_layers_on(stage);
  m.activations = (layer_activation_bytes(false) * (layers - moe_layers) + layer_activation_bytes(true) * moe_layers) *
                  in_flight;
  // the layer being recomputed in backward holds its full activations once more
  if (training_.recompute == Recompute::full ||
      (training_.recompute == Recompute::selective && training_.traits().selective == "op")) {
    TrainingSpec whole = training_;
    whole.recompute = Recompute::none;
    m.activations += CostModel(model_, whole, gpu_).layer_activation_bytes(model_.experts > 1);
  }
  const bool last = holds_loss(stage);
  const bool first = holds_embedding(stage);
  // the embedding's output is the first layer's input, counted with that layer; with dropout
  // the embedding keeps its 1-byte mask too
  if (first && model_.dropout)
    m.activations += T * h / sp * in_flight;
  // buffers: the logits (16-bit) and the loss's own buffers on the last stage
  const FrameworkTraits& f = training_.traits();
  double logits_ws = last ? T * model_.vocab / t * (e * (1 + f.loss_16bit_copies) + 4.0 * f.loss_fp32_copies) : 0.0;
  const double grad_bytes = f.grad_reduce(training_.precision);
  double bucket = training_.bucket_bytes > 0 ? training_.bucket_bytes
                                             : std::max(f.bucket_min_params, f.bucket_per_dp * dp) * grad_bytes;
  double buckets = dp > 1 && z < 3 ? 2 * std::min(bucket, trains.total() * grad_bytes) : 0.0;
  if (z >= 3 && dp > 1)
    buckets = gathered_bytes(stage, params, grad_bytes);
  // FP8 / FP4 weight copies (the recipe's cached casts) of the linear layers
  if (const Fp8Recipe* r = training_.fp8())
  {
    const RankParams lin = stage_rank_params(stage, true);
    m.cast_weights = lin.dense * r->weight_copy_bytes / (z >= 3 ? shard : 1.0) +
                     lin.expert * r->weight_copy_bytes / (z >= 3 ? edp : 1.0);
    buckets += m.cast_weights;
  }
  // a MoE layer's dispatch: the send and receive buffers of its routed copies
  if (model_.experts > 1 && training_.ep > 1)
    buckets += 2 * (MoeDispatcherRegistry::instance().shared(training_.moe_dispatcher).gathers()
                        ? moe_gather_bytes()
                        : moe_dispatch_bytes() * training_.etp);
  m.buffers = logits_ws + buckets;
  // CUDA context, cuBLAS/NCCL workspaces (stated allowance), and 5 % allocator fragmentation of
  // what is allocated and freed within the step (activations, buffers): the model states are
  // allocated once and held (Megatron's contiguous parameter and gradient buffers, the
  // optimizer's shards, FSDP's sharded parameters), so the caching allocator's free blocks
  // between them do not grow
  const double runtime = 1.5 * 1024.0 * 1024.0 * 1024.0;
  double subtotal = m.weights + m.grads + m.optimizer + m.activations + m.buffers;
  m.reserved = runtime + 0.05 * (m.activations + m.buffers);
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
