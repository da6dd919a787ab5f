#include "strategies/CostModel.hpp"

#include "topology/Hash.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>

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
  return tokens_local() * kv_heads_local * (model_.qk_head_dim() + model_.v_head_dim()) * element_bytes();
}

double CostModel::moe_tokens() const
{
  return tokens_local() / training_.tp;
}

double CostModel::moe_dispatch_bytes() const
{
  return moe_tokens() * model_.top_k * model_.hidden * element_bytes();
}

double CostModel::moe_gather_bytes() const
{
  return moe_tokens() * model_.hidden * element_bytes() * training_.etp * training_.ep;
}

double CostModel::moe_distinct_bins(int bins) const
{
  // The k experts are drawn uniformly from the pool of the token's chosen groups (all experts
  // without group-limited routing). When groups and bins nest (one divides the other), a bin
  // meets c = max(1, G/bins) groups, each with o = E/max(G, bins) of its experts; j of those c
  // are among the token's g chosen groups with hypergeometric probability, and then the bin
  // holds j*o of the pool. Groups that straddle bins: the limit is not applied (an upper bound).
  if (bins > 0 && training_.moe_load_balance == "force_balanced" && training_.traits().moe_round_robin)
    return round_robin_bins(bins);
  const double e = model_.experts;
  const int k = model_.top_k;
  int groups = model_.router_groups, chosen = model_.router_group_topk;
  if (bins <= 0 || (groups % bins != 0 && bins % groups != 0))
    groups = chosen = 1;
  const double pool = e * chosen / groups;
  const int c = std::max(1, groups / std::max(1, bins));
  const double o = e / std::max(groups, bins);
  auto choose = [](int n, int r) {
    if (r < 0 || r > n)
      return 0.0;
    double v = 1;
    for (int i = 1; i <= r; ++i)
      v = v * (n - r + i) / i;
    return v;
  };
  double hit = 0; // P(at least one of the k experts in a given bin)
  for (int j = 1; j <= std::min(c, chosen); ++j) {
    const double pj = choose(c, j) * choose(groups - c, chosen - j) / choose(groups, chosen);
    double none = 1;
    for (int i = 0; i < k; ++i)
      none *= std::max(0.0, (pool - j * o - i) / (pool - i));
    hit += pj * (1 - none);
  }
  return bins * hit;
}

double CostModel::round_robin_bins(int bins) const
{
  // Token t takes experts (t*k + j) mod E, j < k: over a cycle the first expert runs through
  // the multiples of gcd(k, E), each as often; bin i holds experts [i*E/bins, (i+1)*E/bins)
  // (an expert rank's, or an NVLink domain's). The mean number of bins the k experts fall in.
  const long long e = model_.experts;
  const int k = model_.top_k;
  auto bin = [&](long long x) { return (x % e) * bins / e; };
  const long long step = std::gcd(static_cast<long long>(k), e);
  long long sum = 0, starts = 0;
  for (long long s = 0; s < e; s += step, ++starts) {
    // consecutive experts visit consecutive bins: count where a new one starts
    long long distinct = 1;
    for (int j = 1; j < k; ++j)
      distinct += bin(s + j) != bin(s + j - 1) ? 1 : 0;
    // a run that wraps past the last expert can come back to the bin it started in
    if (distinct > 1 && bin(s + k - 1) == bin(s))
      --distinct;
    sum += distinct;
  }
  return static_cast<double>(sum) / static_cast<double>(starts);
}

double CostModel::moe_dedup_bytes(int bins) const
{
  return moe_tokens() * moe_distinct_bins(bins) * model_.hidden * element_bytes();
}

int CostModel::expert_data_parallel() const
{
  const long long ranks = static_cast<long long>(training_.tp) * training_.cp * training_.dp;
  return static_cast<int>(std::max(1LL, ranks / (static_cast<long long>(training_.ep) * training_.etp)));
}

namespace {

double unit_interval(std::uint64_t& state)
{
  state = splitmix64(state); // a fixed stream: the same loads on every platform
  return (static_cast<double>(state >> 11) + 0.5) / 9007199254740992.0; // (0, 1)
}

} // namespace

bool CostModel::uneven_expert_loads(const ModelSpec& m, const TrainingSpec& t)
{
  return m.experts > 1 && t.ep > 1 && (t.moe_max_load > 0 || t.moe_load_balance != "force_balanced");
}

std::vector<double> CostModel::expert_loads(int layer, int micro_batch, int group) const
{
  const int ep = training_.ep;
  std::vector<double> loads(static_cast<std::size_t>(ep), 1.0);
  if (!uneven_expert_loads(model_, training_))
    return loads;
  std::uint64_t state = splitmix64(static_cast<std::uint64_t>(layer) * 1000003ULL + static_cast<std::uint64_t>(micro_batch)) ^
                        splitmix64(static_cast<std::uint64_t>(group) + 0x51ed27ULL);
  if (training_.moe_max_load > 0) {
    // a stated ratio: one rank (drawn) at it, the others sharing the rest equally
    const double top = std::min(training_.moe_max_load, static_cast<double>(ep));
    loads.assign(loads.size(), (ep - top) / (ep - 1));
    loads[static_cast<std::size_t>(unit_interval(state) * ep) % loads.size()] = top;
  } else {
    // Real routing: the copies of the group's tokens fall on the ep ranks as a multinomial draw
    // (each rank holds experts/ep of the experts); the load of rank r is Binomial(n, 1/ep),
    // approximated by its normal with the total kept: mean n/ep, relative spread sqrt((ep-1)/n).
    const double n = moe_tokens() * model_.top_k * ep;
    const double spread = std::sqrt((ep - 1.0) / n);
    double sum = 0;
    for (auto& l : loads) {
      const double u1 = unit_interval(state), u2 = unit_interval(state);
      const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
      l = std::max(0.0, 1.0 + spread * z);
      sum += l;
    }
    for (auto& l : loads)
      l *= ep / sum;
  }
  // a capacity factor: what an expert rank would take beyond it is dropped
  if (training_.moe_capacity_factor > 0)
    for (auto& l : loads)
      l = std::min(l, training_.moe_capacity_factor);
  return loads;
}

} // namespace clustersim
