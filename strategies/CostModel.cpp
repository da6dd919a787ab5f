#include "CostModel.hpp"

#include <algorithm>
#include <cmath>

namespace clustersim {

CostModel::CostModel(ModelSpec model, TrainingSpec training, GpuSpec gpu)
    : model_(std::move(model)), training_(std::move(training)), gpu_(std::move(gpu))
{
  peak_ = gpu_.peak(training_.precision);
  pipeline_ = pipeline_layout(model_, training_);
}

double CostModel::element_bytes() const
{
  return training_.precision == Precision::fp32 || training_.precision == Precision::tf32 ? 4.0 : 2.0;
}

double CostModel::micro_batches() const
{
  return std::max<double>(1.0, static_cast<double>(training_.micro_batches()));
}

double CostModel::tokens_local() const
{
  return static_cast<double>(training_.micro_batch) * model_.seq_len / training_.cp;
}

// ---------------------------------------------------------------- communication volumes

double CostModel::tp_message_bytes() const
{
  return tokens_local() * model_.hidden * element_bytes();
}

double CostModel::cp_message_bytes() const
{
  // K and V of the local chunk, sharded by TP heads
  double kv_heads_local = std::max(1.0, static_cast<double>(model_.kv_heads) / training_.tp);
  return 2.0 * tokens_local() * kv_heads_local * model_.head_dim() * element_bytes();
}

} // namespace clustersim
