// The bill of materials counted on the cluster graph (see BillOfMaterials.hpp): a switch
// vertex's ports are the cables of its network links (a link bundling parallel cables under
// ideal routing counts its lanes), and each physical link is the arc pair's lower id.

#include "topology/BillOfMaterials.hpp"

#include <algorithm>
#include <array>

namespace clustersim {

namespace {

/// The fabric tier of a vertex (0 NIC, 1 leaf, 2 spine, 3 core), -1 for what is not on the fabric.
int fabric_tier(VertexKind k)
{
  switch (k) {
  case VertexKind::nic:
    return 0;
  case VertexKind::leaf:
    return 1;
  case VertexKind::spine:
    return 2;
  case VertexKind::core:
    return 3;
  default:
    return -1;
  }
}

constexpr std::array<const char*, 4> kTierNames = {"nic", "leaf", "spine", "core"};

} // namespace

int BillOfMaterials::switches() const
{
  int n = 0;
  for (const SwitchTier& t : switch_tiers)
    n += t.switches;
  return n;
}

long long BillOfMaterials::fabric_cables() const
{
  long long n = 0;
  for (const CableClass& c : cables)
    n += c.cables;
  return n;
}

long long BillOfMaterials::transceivers() const
{
  long long n = 0;
  for (const CableClass& c : cables)
    n += c.transceivers;
  return n;
}

BillOfMaterials bill_of_materials(const ClusterGraph& cg)
{
  const PlatformSpec& p = cg.platform();
  const Graph& g = cg.graph();
  BillOfMaterials b;
  b.nodes = cg.nodes();
  b.gpus = cg.gpus();
  b.nics = cg.count(VertexKind::nic);
  b.nvlink_domains = p.node.scale_up == ScaleUpKind::nvswitch ? cg.domains() : 0;
  b.nvswitch_chips = b.nvlink_domains * p.node.nvswitches;
  b.node_watts = b.gpus * p.node.gpu.tdp_watts + b.nodes * p.cost.node_overhead_watts;

  // cables per tier pair (lower tier t: t to t+1) and ports per switch
  std::array<long long, 3> cables{};
  std::vector<int> ports(boost::num_vertices(g), 0);
  for (auto [it, end] = boost::edges(g); it != end; ++it) {
    const ArcInfo& a = g[*it];
    if (a.kind != LinkKind::network || a.id > a.reverse)
      continue; // one arc of each physical link
    const VertexId u = boost::source(*it, g), v = boost::target(*it, g);
    const int tu = fabric_tier(g[u].kind), tv = fabric_tier(g[v].kind);
    if (tu < 0 || tv < 0)
      continue;
    cables[static_cast<std::size_t>(std::min(tu, tv))] += a.lanes;
    ports[u] += a.lanes;
    ports[v] += a.lanes;
  }
  for (int t = 1; t <= 3; ++t) {
    SwitchTier s;
    s.tier = kTierNames[static_cast<std::size_t>(t)];
    s.radix = p.fabric.radix;
    for (auto [it, end] = boost::vertices(g); it != end; ++it)
      if (fabric_tier(g[*it].kind) == t) {
        ++s.switches;
        s.ports_used += ports[*it];
        s.most_ports_used = std::max(s.most_ports_used, ports[*it]);
      }
    if (s.switches > 0)
      b.switch_tiers.push_back(s);
  }
  for (int t = 0; t < 3; ++t) {
    const long long n = cables[static_cast<std::size_t>(t)];
    if (n == 0)
      continue;
    CableClass c;
    c.tiers = std::string(kTierNames[static_cast<std::size_t>(t)]) + "-" + kTierNames[static_cast<std::size_t>(t + 1)];
    c.cables = n;
    c.bandwidth = t == 0 ? p.node.nic.bandwidth : p.fabric.link.bandwidth;
    c.transceivers = 2 * n;
    b.cables.push_back(c);
  }
  return b;
}

} // namespace clustersim
