#include "strategies/Layout.hpp"

namespace clustersim {

Layout::Layout(const TrainingSpec& t)
{
  size_ = {t.tp, t.cp, t.dp, t.pp};
  int stride = 1;
  for (const auto& name : t.order) {
    std::size_t d = name == "tp" ? 0 : name == "cp" ? 1 : name == "dp" ? 2 : 3;
    stride_[d] = stride;
    stride *= size_[d];
  }
  ranks_ = stride;
  std::size_t k = 0;
  for (const auto& name : t.order)
    if (name != "pp")
      local_order_[k++] = name == "tp" ? 0 : name == "cp" ? 1 : 2;
}

int Layout::local_index(int rank) const
{
  int index = 0, stride = 1;
  for (int d : local_order_) {
    index += coord(rank, static_cast<Dim>(d)) * stride;
    stride *= size_[static_cast<std::size_t>(d)];
  }
  return index;
}

int Layout::local_rank(int index, int pp) const
{
  int c[3] = {0, 0, 0};
  for (int d : local_order_) {
    c[d] = index % size_[static_cast<std::size_t>(d)];
    index /= size_[static_cast<std::size_t>(d)];
  }
  return rank(c[0], c[1], c[2], pp);
}

int Layout::expert_coord(int r, int etp, int ep, ExpertDim d) const
{
  const int local = local_index(r);
  return d == ExpertDim::etp ? local % etp : d == ExpertDim::ep ? (local / etp) % ep : local / (etp * ep);
}

std::vector<std::uint32_t> Layout::expert_group(int r, int etp, int ep, ExpertDim d) const
{
  const int local = local_index(r);
  const int pp = coord(r, Dim::pp);
  const int e_tp = local % etp, e_p = (local / etp) % ep, e_dp = local / (etp * ep);
  const int edp = size(Dim::tp) * size(Dim::cp) * size(Dim::dp) / (etp * ep);
  std::vector<std::uint32_t> out;
  const int n = d == ExpertDim::etp ? etp : d == ExpertDim::ep ? ep : edp;
  for (int i = 0; i < n; ++i) {
    const int idx = d == ExpertDim::etp ? i + etp * (e_p + ep * e_dp)
                    : d == ExpertDim::ep ? e_tp + etp * (i + ep * e_dp)
                                         : e_tp + etp * (e_p + ep * i);
    out.push_back(static_cast<std::uint32_t>(local_rank(idx, pp)));
  }
  return out;
}

int Layout::coord(int rank, Dim d) const
{
  std::size_t i = static_cast<std::size_t>(d);
  return (rank / stride_[i]) % size_[i];
}

int Layout::rank(int tp, int cp, int dp, int pp) const
{
  return tp * stride_[0] + cp * stride_[1] + dp * stride_[2] + pp * stride_[3];
}

std::vector<std::uint32_t> Layout::group(int r, std::initializer_list<Dim> dims) const
{
  int base = r;
  int count = 1;
  for (Dim d : dims) {
    base -= coord(r, d) * stride_[static_cast<std::size_t>(d)];
    count *= size(d);
  }
  std::vector<std::uint32_t> out;
  out.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    int rest = i;
    int rk = base;
    for (Dim d : dims) {
      std::size_t k = static_cast<std::size_t>(d);
      rk += (rest % size_[k]) * stride_[k];
      rest /= size_[k];
    }
    out.push_back(static_cast<std::uint32_t>(rk));
  }
  return out;
}

} // namespace clustersim
