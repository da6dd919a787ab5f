// The memory one GPU holds at its peak: model states (ZeRO-sharded), activations of the
// micro-batches its pipeline schedule keeps in flight, buffers and the runtime's reserve.
#include "CostModel.hpp"

#include "PipelineSchedule.hpp"

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

double CostModel::stage_params(int stage) const
{
  const double t = training_.tp;
  // an MTP module: a transformer layer (its own embedding and output head are shared)
  const int layers = layers_per_stage()[static_cast<std::size_t>(stage)] + mtp_modules(stage);
  double mlp = model_.layer_mlp_params();
  double dense = model_.layer_params() - mlp;
  double per_layer = dense / t + (model_.experts > 1 ? mlp / (t * training_.ep) : mlp / t);
  double p = layers * per_layer;
  const bool first = holds_embedding(stage);
  const bool last = holds_loss(stage);
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
  const double f = model_.experts > 1 ? static_cast<double>(model_.expert_ffn()) * model_.top_k : model_.ffn_hidden;
  const double a = model_.heads;
  const double s = model_.seq_len;
  const double sp = training_.sequence_parallel ? t : 1.0;
  const bool dropout = model_.bias; // GPT-style models train with dropout; Llama-style without
  const double mask = dropout ? 1.0 : 0.0;
  // replicated across TP unless sequence parallel: LN inputs, QKV and FC1 inputs, residual masks
  double shared = T * h * (4 * e + 2 * mask) / sp;
  // sharded by TP: Q, K, V, projection input, FC1 output, activation output
  const double q = model_.q_dim();
  double sharded = T * (e * q + 2 * e * kv + e * q) / t;
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

  // micro-batches in flight on this stage: the schedule's rule (one without pipelining)
  const int p = training_.pp;
  const int mcount = static_cast<int>(training_.micro_batches());
  const double in_flight =
      p > 1 ? ScheduleRegistry::instance().shared(to_string(training_.schedule)).in_flight(stage, p, mcount, training_.vpp)
            : 1.0;
  const int layers = layers_per_stage()[static_cast<std::size_t>(stage)] + mtp_modules(stage);
  m.activations = per_layer * layers * in_flight;
  // the layer being recomputed in backward holds its full activations once more
  if (training_.recompute == Recompute::full)
    m.activations += shared + sharded + core;
  const bool last = holds_loss(stage);
  const bool first = holds_embedding(stage);
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
