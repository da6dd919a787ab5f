#include "CollectiveAlgorithm.hpp"

#include <map>

namespace clustersim {

std::vector<std::vector<std::uint32_t>> members_by_node(const GroupView& g)
{
  std::vector<std::vector<std::uint32_t>> out;
  std::map<int, std::size_t> index;
  for (std::uint32_t i = 0; i < g.ranks.size(); ++i) {
    int node = g.cluster.node_of(static_cast<int>(g.ranks[i]));
    auto it = index.find(node);
    if (it == index.end()) {
      index[node] = out.size();
      out.push_back({i});
    } else {
      out[it->second].push_back(i);
    }
  }
  return out;
}

void PhaseBuilder::add(std::uint32_t src, std::uint32_t dst, double bytes)
{
  if (src == dst || bytes <= 0)
    return;
  std::uint64_t key = (static_cast<std::uint64_t>(src) << 32) | dst;
  auto it = index_.find(key);
  if (it != index_.end()) {
    phase_.flows[it->second].bytes += bytes;
    return;
  }
  index_.emplace(key, phase_.flows.size());
  phase_.flows.push_back({src, dst, bytes});
}

} // namespace clustersim
