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

} // namespace clustersim
