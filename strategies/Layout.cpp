#include "Layout.hpp"

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
