// The FLOPs of the model per step: forward and backward of every layer, attention and logits
// (model FLOPs), plus what recomputation redoes (hardware FLOPs); Narayanan et al. 2021.
#include "strategies/CostModel.hpp"

#include <algorithm>
#include <cmath>

namespace clustersim {

double CostModel::attention_core_flops(double sequences, int layer) const
{
  // scores + context over the full s×s, every query head (MLA: its query/key and value widths);
  // a sliding-window layer over its share of the pairs
  const double s = model_.seq_len;
  return 2.0 * sequences * s * s * model_.heads * (model_.qk_head_dim() + model_.v_head_dim()) *
         model_.attended_share(layer);
}

double CostModel::attention_core_flops_all(double sequences, bool mtp) const
{
  double f = 0;
  for (int l = 0; l < model_.layers + (mtp ? model_.mtp_layers : 0); ++l)
    f += attention_core_flops(sequences, l);
  return f;
}

double CostModel::layer_forward_flops(double sequences, int layer) const
{
  const double tokens = sequences * model_.seq_len;
  const double h = model_.hidden;
  double attn = 0;
  if (model_.mla) {
    const ModelSpec::Mla& r = model_.mla_ranks;
    const double heads = model_.heads;
    const double q_in = r.q_lora_rank > 0 ? r.q_lora_rank : h;
    attn = 2.0 * tokens *
           ((r.q_lora_rank > 0 ? h * r.q_lora_rank : 0.0) + q_in * heads * model_.qk_head_dim() +
            h * (r.kv_lora_rank + r.qk_rope_head_dim) + r.kv_lora_rank * heads * (r.qk_nope_head_dim + r.v_head_dim) +
            heads * r.v_head_dim * h);
  } else {
    const double q = model_.q_dim();
    attn = 2.0 * tokens * h * (q + 2.0 * model_.kv_dim()) + 2.0 * tokens * q * h;
  }
  double mlp = 0;
  if (model_.moe_layer(layer)) {
    const double paths = model_.top_k + model_.shared_experts; // experts a token passes through
    mlp = 2.0 * tokens * h * model_.expert_ffn() * model_.mlp_matrices() * paths + 2.0 * tokens * h * model_.experts;
  } else {
    mlp = 2.0 * tokens * h * model_.ffn_hidden * model_.mlp_matrices();
  }
  return attn + attention_core_flops(sequences, layer) + mlp;
}

double CostModel::layers_forward_flops(double sequences) const
{
  double f = 0;
  for (int l = 0; l < model_.layers; ++l)
    f += layer_forward_flops(sequences, l);
  return f;
}

double CostModel::mtp_forward_flops(double sequences) const
{
  // an MTP module (DeepSeek-V3): the projection of [norm(h); norm(embedding)] (2h -> h), one
  // transformer layer, the shared output head
  const double tokens = sequences * model_.seq_len;
  const double proj = 2.0 * tokens * 2.0 * model_.hidden * model_.hidden;
  return model_.mtp_layers * (proj + layer_forward_flops(sequences, model_.layers) + logits_forward_flops(sequences));
}

double CostModel::logits_forward_flops(double sequences) const
{
  return 2.0 * sequences * model_.seq_len * model_.hidden * static_cast<double>(model_.vocab);
}

double CostModel::model_flops_per_step(bool causal) const
{
  const double b = training_.global_batch;
  double f = 3.0 * (layers_forward_flops(b) + logits_forward_flops(b) + mtp_forward_flops(b));
  if (training_.frozen_base()) {
    // LoRA: a frozen weight's backward is its data gradient only (2 of the 6 FLOPs per parameter
    // and token fall away); the attention core still takes two matmuls back for one forward;
    // the adapters train in full (6 per parameter and token)
    const double core = attention_core_flops_all(b, true);
    f = 2.0 * (layers_forward_flops(b) + logits_forward_flops(b) + mtp_forward_flops(b)) + core;
    double per_token = 0;
    for (int layer = 0; layer < model_.layers + model_.mtp_layers; ++layer)
      per_token += layer_adapters(layer).flops_per_token;
    f += 3.0 * per_token * b * model_.seq_len;
  }
  if (causal) // the masked half of every attention matrix left out (Megatron-Bridge's count)
    f -= 3.0 * 0.5 * attention_core_flops_all(b, true);
  return f;
}

namespace {

/// The matmuls of one layer in the order the reference code calls them, by our GEMM ops, with
/// each one's output width per token.
std::vector<std::pair<std::string, double>> layer_matmuls(const ModelSpec& m)
{
  const double f = m.experts > 1 ? m.expert_ffn() : m.ffn_hidden;
  const std::string fc1 = m.experts > 1 ? "expert_fc1" : "fc1";
  const std::string fc2 = m.experts > 1 ? "expert_fc2" : "fc2";
  std::vector<std::pair<std::string, double>> mm{{"qkv_projection", static_cast<double>(m.q_dim())},
                                                 {"qkv_projection", static_cast<double>(m.kv_dim())},
                                                 {"qkv_projection", static_cast<double>(m.kv_dim())},
                                                 {"output_projection", static_cast<double>(m.hidden)},
                                                 {fc1, f}};
  if (m.mlp == MlpKind::swiglu)
    mm.push_back({fc1, f});
  mm.push_back({fc2, static_cast<double>(m.hidden)});
  return mm;
}

} // namespace

bool CostModel::recomputes(const std::string& module) const
{
  if (training_.recompute != Recompute::selective || training_.traits().selective != "core_attention")
    return false;
  const auto& list = training_.recompute_modules;
  if (list.empty())
    return module == "core_attn";
  return std::find(list.begin(), list.end(), module) != list.end();
}

double CostModel::sac_recomputed_share(const std::string& gemm) const
{
  double total = 0, recomputed = 0;
  int count = 0;
  for (const auto& [op, width] : layer_matmuls(model_)) {
    ++count; // torchtitan's policy: the 1st, 3rd, ... matmul of a layer saved, the others recomputed
    if (op != gemm)
      continue;
    total += width;
    if (count % 2 == 0)
      recomputed += width;
  }
  return total > 0 ? recomputed / total : 0.0;
}

double CostModel::sac_saved_width() const
{
  double saved = 0;
  int count = 0;
  for (const auto& [op, width] : layer_matmuls(model_))
    if (++count % 2 == 1)
      saved += width;
  return saved;
}

double CostModel::recompute_seconds(const BlockCost& b, bool attention, bool moe) const
{
  if (training_.recompute == Recompute::none)
    return 0;
  if (training_.recompute == Recompute::full)
    return b.forward;
  double r = 0;
  if (training_.traits().selective == "op") {
    // everything but the saved matmuls and the attention kernel is recomputed
    for (const auto& o : b.ops)
      if (o.kind == "elementwise" || o.kind == "cast")
        r += o.forward;
      else if (o.kind == "gemm")
        r += o.forward * sac_recomputed_share(o.name);
    return r;
  }
  if (attention && recomputes("core_attn") && !training_.flash_attention)
    r += b.core_forward;
  for (const auto& o : b.ops) {
    if (recomputes("layernorm") && o.name == "norm")
      r += o.forward;
    if (!attention && moe && recomputes("moe_act") && (o.name == "swiglu" || o.name == "gelu"))
      r += o.forward;
    if (attention && model_.mla && recomputes("mla_up_proj") && o.name == "qkv_projection")
      r += o.forward;
    if (!attention && moe && recomputes("shared_experts") && o.name.rfind("shared_", 0) == 0)
      r += o.forward;
  }
  if (!attention && ((!moe && recomputes("mlp")) || (moe && recomputes("moe"))))
    r = b.forward;
  return r;
}

double CostModel::hardware_flops_per_step() const
{
  const double b = training_.global_batch;
  double extra = 0;
  if (training_.recompute == Recompute::full) {
    extra = layers_forward_flops(b);
  } else if (training_.recompute == Recompute::selective && training_.traits().selective == "op") {
    const double tokens = b * model_.seq_len;
    double per_layer = 0;
    int count = 0;
    const double h = model_.hidden;
    for (const auto& [op, width] : layer_matmuls(model_)) {
      const double in = op == "output_projection" ? model_.q_dim()
                        : (op == "fc2" || op == "expert_fc2") ? (model_.experts > 1 ? model_.expert_ffn() : model_.ffn_hidden)
                                                             : h;
      if (++count % 2 == 0)
        per_layer += 2.0 * tokens * in * width * (op == "expert_fc1" || op == "expert_fc2" ? model_.top_k : 1);
    }
    extra = model_.layers * per_layer;
  } else if (training_.recompute == Recompute::selective) {
    extra = attention_core_flops_all(b, false);
  }
  return model_flops_per_step() + extra;
}

} // namespace clustersim
