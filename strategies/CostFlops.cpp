// The FLOPs of the model per step: forward and backward of every layer, attention and logits
// (model FLOPs), plus what recomputation redoes (hardware FLOPs); Narayanan et al. 2021.
#include "CostModel.hpp"

#include <algorithm>
#include <cmath>

namespace clustersim {

double CostModel::attention_core_flops(double sequences) const
{
  const double s = model_.seq_len;
  return 4.0 * sequences * s * s * model_.q_dim(); // scores + context, full s×s, every query head
}

double CostModel::layer_forward_flops(double sequences) const
{
  const double tokens = sequences * model_.seq_len;
  const double h = model_.hidden;
  const double kv = model_.kv_dim();
  const double f = model_.experts > 1 ? model_.expert_ffn() : model_.ffn_hidden;
  const double q = model_.q_dim();
  double qkv = 2.0 * tokens * h * (q + 2.0 * kv);
  double proj = 2.0 * tokens * q * h;
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

double CostModel::recompute_seconds(const BlockCost& b, bool attention) const
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
    if (!attention && recomputes("moe_act") && model_.experts > 1 && (o.name == "swiglu" || o.name == "gelu"))
      r += o.forward;
  }
  if (!attention && (recomputes("mlp") || (recomputes("moe") && model_.experts > 1)))
    r = b.forward;
  return r;
}

double CostModel::hardware_flops_per_step() const
{
  const double b = training_.global_batch;
  double extra = 0;
  if (training_.recompute == Recompute::full) {
    extra = model_.layers * layer_forward_flops(b);
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
    extra = model_.layers * attention_core_flops(b);
  }
  return model_flops_per_step() + extra;
}

} // namespace clustersim
