#include "sim/collectives/CollectiveAlgorithm.hpp"

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

bool one_switch(const GroupView& g, const std::vector<std::uint32_t>& members)
{
  const ClusterGraph& c = g.cluster;
  auto gpu = [&](std::uint32_t m) { return static_cast<int>(g.ranks[m]); };
  bool same_domain = true, distinct_domains = true, same_leaf = true;
  std::map<int, int> domains;
  for (std::uint32_t m : members) {
    same_domain = same_domain && c.domain_of(gpu(m)) == c.domain_of(gpu(members[0]));
    distinct_domains = distinct_domains && ++domains[c.domain_of(gpu(m))] == 1;
    same_leaf = same_leaf && c.leaf_of(gpu(m)) >= 0 && c.leaf_of(gpu(m)) == c.leaf_of(gpu(members[0]));
  }
  if (same_domain)
    return c.platform().node.scale_up == ScaleUpKind::nvswitch;
  return distinct_domains && same_leaf;
}

void add_exchange(PhaseBuilder& b, const GroupView& g, const std::vector<std::uint32_t>& members, double slice)
{
  const std::size_t n = members.size();
  if (n > 2 && one_switch(g, members)) {
    for (std::size_t i = 0; i < n; ++i)
      b.add(members[i], members[(i + 1) % n], slice * static_cast<double>(n - 1));
    return;
  }
  for (std::uint32_t i : members)
    for (std::uint32_t j : members)
      b.add(i, j, slice);
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

namespace clustersim {

std::size_t uniform_members_per_node(const std::vector<std::vector<std::uint32_t>>& nodes)
{
  if (nodes.empty())
    return 0;
  std::size_t k = nodes.front().size();
  for (const auto& n : nodes)
    if (n.size() != k)
      return 0;
  return k;
}

RingCost ring_cost(CollOp op, std::size_t n, double bytes)
{
  const double d = static_cast<double>(n);
  switch (op) {
  case CollOp::all_reduce:
    return {2 * (d - 1) / d * bytes, 2 * (static_cast<int>(n) - 1)};
  case CollOp::all_gather:
  case CollOp::reduce_scatter:
    return {(d - 1) / d * bytes, static_cast<int>(n) - 1};
  default:
    return {bytes, static_cast<int>(n) - 1};
  }
}

void add_ring(PhaseBuilder& b, const std::vector<std::uint32_t>& order, double volume)
{
  if (order.size() < 2)
    return;
  for (std::size_t i = 0; i < order.size(); ++i)
    b.add(order[i], order[(i + 1) % order.size()], volume);
}

} // namespace clustersim
