// The scale-out fabric of a ClusterGraph: leaves for the NICs (one switch, a fat-tree, or one
// leaf per rail and scalable unit), then two tiers (spines) or three (pods of aggregation
// switches under cores). Parallel up-links of a switch toward one tier are one resource of
// their summed capacity (routing: ideal), or every cable its own, grouped for ECMP's choice
// (routing: ecmp; see ClusterGraph.hpp).
#include "topology/GraphBuilder.hpp"

#include <algorithm>
#include <cmath>

namespace clustersim {

struct GraphBuilder::Leaves {
  std::vector<VertexId> vertices;
  int down = 0; ///< NIC ports per leaf
  int up = 0;   ///< up-links per leaf
};

void GraphBuilder::radix_error(const SourceLocation& where, const std::string& why) const
{
  const int k = cg_.platform_.fabric.radix;
  throw ConfigError(where,
                    "fabric radix " + std::to_string(k) + " is too small for " + std::to_string(cg_.nodes_) +
                        " nodes (" + std::to_string(shape_.endpoints) + " NIC ports): " + why,
                    "a larger radix, fewer GPUs, or more levels (at most 3)");
}

void GraphBuilder::size_fabric(const SourceLocation& where)
{
  const PlatformSpec& p = cg_.platform_;
  const FabricSpec& f = p.fabric;
  const int k = f.radix;
  FabricShape& s = shape_;
  s.endpoints = static_cast<long long>(cg_.nodes_) * p.node.nics;
  if (s.endpoints == 0)
    return;
  s.levels = 1;
  if (f.kind == FabricKind::single_switch) {
    if (s.endpoints > k)
      radix_error(where, "a single switch needs one port per NIC");
    s.leaves = 1;
    s.down = static_cast<int>(s.endpoints);
    return;
  }
  // (1e-9: a ratio written in decimals, 0.142857142857 for 1:7, gives 8 of 64 ports, not 7)
  s.down = static_cast<int>(k * f.oversubscription / (1.0 + f.oversubscription) + 1e-9);
  // the up-links the ratio asks for (a radix-64 leaf at 2:1: 42 down, 21 up, one port unused),
  // not every port left: 42 down and 22 up would be 1.91:1
  s.up = std::min(k - s.down, static_cast<int>(std::ceil(s.down / f.oversubscription - 1e-9)));
  if (s.down < 1 || s.up < 1)
    radix_error(where, "no room for both down- and up-links");
  long long leaves = 0;
  if (f.kind == FabricKind::rail_optimized || f.kind == FabricKind::rail_only) {
    s.group_nodes = f.rail_group_nodes > 0 ? std::min(f.rail_group_nodes, s.down) : s.down;
    // a rail's leaf serves one NIC per node of its group: its up-links follow the ratio from
    // those ports, not from the radix's (a radix-64 leaf at 2:1 under a 32-node SU: 32 down, 16
    // up; 21 up-links would make it 1.52:1)
    s.up = std::min(k - s.group_nodes, static_cast<int>(std::ceil(s.group_nodes / f.oversubscription - 1e-9)));
    leaves = static_cast<long long>((cg_.nodes_ + s.group_nodes - 1) / s.group_nodes) * p.node.nics;
  } else {
    leaves = (s.endpoints + s.down - 1) / s.down;
  }
  // more leaves than three levels of this radix can join: checked before the count is an int
  if (leaves > static_cast<long long>(k) * k)
    radix_error(where, std::to_string(leaves) + " leaves exceed what three levels of this radix join");
  s.leaves = static_cast<int>(leaves);
  if (f.kind == FabricKind::rail_only) {
    // each rail's leaves under the rail's own spines: two levels, or one leaf per rail
    const int per_rail = s.leaves / p.node.nics;
    if (f.levels == 3 || (f.levels == 1 && per_rail > 1))
      radix_error(where, "a rail-only fabric has one leaf per rail, or two levels (each rail's leaves under its own "
                         "spines)");
    if (per_rail > k)
      radix_error(where, std::to_string(per_rail) + " leaves per rail exceed the " + std::to_string(k) +
                             " ports of a rail's spine");
    s.levels = per_rail > 1 ? 2 : 1;
  } else if (s.leaves > 1) {
    s.levels = f.levels > 0 ? f.levels : (s.leaves <= k ? 2 : 3);
    if (s.levels < 2)
      radix_error(where, "one switch cannot hold every NIC");
    if (s.levels == 2 && s.leaves > k)
      radix_error(where, std::to_string(s.leaves) + " leaves exceed the " + std::to_string(k) + " ports of a spine");
  }
  if (s.levels == 3) {
    // pods of k/2 leaves, each with `up` aggregation switches (k/2 down, k/2 up)
    if (s.up > k / 2)
      radix_error(where, "leaf uplinks exceed the down ports of an aggregation switch");
    const int pods = (s.leaves + k / 2 - 1) / (k / 2);
    if (pods > k)
      radix_error(where, std::to_string(pods) + " pods exceed the " + std::to_string(k) + " ports of a core switch");
  }
}

long long GraphBuilder::fabric_links() const
{
  const FabricShape& s = shape_;
  const int k = cg_.platform_.fabric.radix;
  // NIC to leaf, leaf to the next tier (its up ports), and above pods as many again
  long long links = s.endpoints;
  if (s.levels >= 2)
    links += static_cast<long long>(s.leaves) * s.up;
  if (s.levels == 3)
    links += static_cast<long long>((s.leaves + k / 2 - 1) / (k / 2)) * s.up * (k / 2);
  return links;
}

GraphBuilder::Leaves GraphBuilder::place_leaves()
{
  const PlatformSpec& p = cg_.platform_;
  const FabricShape& s = shape_;
  const int endpoints = static_cast<int>(nics_.size());
  Leaves l;
  l.down = s.down;
  l.up = s.up;
  cg_.leaf_of_nic_.assign(static_cast<std::size_t>(endpoints), 0);
  if (p.fabric.kind == FabricKind::rail_optimized || p.fabric.kind == FabricKind::rail_only) {
    const int rails = p.node.nics;
    for (int nic = 0; nic < endpoints; ++nic)
      cg_.leaf_of_nic_[static_cast<std::size_t>(nic)] = (nic / rails / s.group_nodes) * rails + nic % rails;
  } else if (p.fabric.kind != FabricKind::single_switch) {
    for (int nic = 0; nic < endpoints; ++nic)
      cg_.leaf_of_nic_[static_cast<std::size_t>(nic)] = nic / l.down;
  }
  // each NIC's down-port on its leaf, in NIC order (static routing's destination digit)
  cg_.port_of_nic_.assign(static_cast<std::size_t>(endpoints), 0);
  std::vector<int> ports(static_cast<std::size_t>(s.leaves), 0);
  for (int nic = 0; nic < endpoints; ++nic) {
    const auto leaf = static_cast<std::size_t>(cg_.leaf_of_nic_[static_cast<std::size_t>(nic)]);
    cg_.port_of_nic_[static_cast<std::size_t>(nic)] = ports[leaf]++;
  }
  for (int i = 0; i < s.leaves; ++i)
    l.vertices.push_back(add_vertex(VertexKind::leaf, -1, -1, i));
  return l;
}

void GraphBuilder::link_nics(const std::vector<VertexId>& leaves)
{
  const PlatformSpec& p = cg_.platform_;
  const int endpoints = static_cast<int>(nics_.size());
  // NIC ↔ leaf: one resource per arc
  cg_.nic_leaf_up_.assign(static_cast<std::size_t>(endpoints), -1);
  cg_.nic_leaf_down_.assign(static_cast<std::size_t>(endpoints), -1);
  for (int nic = 0; nic < endpoints; ++nic) {
    int id = add_link(nics_[static_cast<std::size_t>(nic)],
                      leaves[static_cast<std::size_t>(cg_.leaf_of_nic_[static_cast<std::size_t>(nic)])],
                      LinkKind::network, p.node.nic.bandwidth, p.node.nic.latency, 1, -1, -1, p.fabric.switch_latency,
                      0);
    cg_.nic_leaf_up_[static_cast<std::size_t>(nic)] = id;
    cg_.nic_leaf_down_[static_cast<std::size_t>(nic)] = id + 1;
  }
}

std::vector<std::vector<int>> GraphBuilder::spine_planes(const Leaves& l) const
{
  const int leaf_count = static_cast<int>(l.vertices.size());
  std::vector<std::vector<int>> planes;
  if (cg_.platform_.fabric.kind != FabricKind::rail_only) {
    planes.emplace_back();
    for (int i = 0; i < leaf_count; ++i)
      planes.back().push_back(i);
    return planes;
  }
  // rail-only: every rail is a Clos of its own, its leaves (one per scalable unit) under its
  // own spines; leaf i serves rail i % rails (place_leaves)
  const int rails = cg_.platform_.node.nics;
  planes.resize(static_cast<std::size_t>(rails));
  for (int i = 0; i < leaf_count; ++i)
    planes[static_cast<std::size_t>(i % rails)].push_back(i);
  return planes;
}

std::pair<int, int> GraphBuilder::spine_split(const Leaves& l, int leaves) const
{
  const int per = std::max(1, std::min(l.up, cg_.platform_.fabric.radix / leaves));
  return {per, (l.up + per - 1) / per};
}

double GraphBuilder::cable_bandwidth() const
{
  // adaptive routing spreads packets over the parallel cables as ideal spreading does, and
  // delivers its measured share of their rate (fabric.adaptive_efficiency)
  const FabricSpec& f = cg_.platform_.fabric;
  return f.link.bandwidth * (f.routing == FabricRouting::adaptive ? f.adaptive_efficiency : 1.0);
}

void GraphBuilder::add_spines(const Leaves& l)
{
  const FabricSpec& f = cg_.platform_.fabric;
  int spine_index = 0;
  for (const auto& plane : spine_planes(l)) {
    // Each leaf spreads its `up` links over its plane's spines, `per` parallel cables to each.
    const auto [per, spines] = spine_split(l, static_cast<int>(plane.size()));
    std::vector<VertexId> spine_v;
    for (int s = 0; s < spines; ++s)
      spine_v.push_back(add_vertex(VertexKind::spine, -1, -1, spine_index++));
    for (int i : plane)
      for (int s = 0; s < spines; ++s) {
        int lanes = std::min(per, l.up - s * per);
        add_link(l.vertices[static_cast<std::size_t>(i)], spine_v[static_cast<std::size_t>(s)], LinkKind::network,
                 cable_bandwidth() * lanes, f.link.latency, lanes, cg_.leaf_up_res_[static_cast<std::size_t>(i)],
                 cg_.leaf_down_res_[static_cast<std::size_t>(i)], f.switch_latency, f.switch_latency);
      }
  }
}

void GraphBuilder::add_pods(const Leaves& l)
{
  const FabricSpec& f = cg_.platform_.fabric;
  const int k = f.radix;
  const int leaf_count = static_cast<int>(l.vertices.size());
  const double link_bw = cable_bandwidth();
  const int pod_leaves = k / 2;
  const int pods = (leaf_count + pod_leaves - 1) / pod_leaves;
  const int agg_up = k / 2;
  cg_.pod_up_res_.resize(static_cast<std::size_t>(pods));
  cg_.pod_down_res_.resize(static_cast<std::size_t>(pods));
  std::vector<std::vector<VertexId>> aggs(static_cast<std::size_t>(pods));
  for (int pod = 0; pod < pods; ++pod) {
    std::string name = "pod" + std::to_string(pod);
    const double bw = l.up * agg_up * link_bw;
    cg_.pod_up_res_[static_cast<std::size_t>(pod)] =
        new_resource(name + "-up", LinkKind::network, bw, f.link.latency + f.switch_latency, LinkTier::spine_up);
    cg_.pod_down_res_[static_cast<std::size_t>(pod)] =
        new_resource(name + "-down", LinkKind::network, bw, f.link.latency + f.switch_latency, LinkTier::spine_up);
    for (int a = 0; a < l.up; ++a)
      aggs[static_cast<std::size_t>(pod)].push_back(add_vertex(VertexKind::spine, -1, -1, pod * l.up + a));
  }
  for (int i = 0; i < leaf_count; ++i) {
    int pod = i / pod_leaves;
    cg_.pod_of_leaf_[static_cast<std::size_t>(i)] = pod;
    for (int a = 0; a < l.up; ++a)
      add_link(l.vertices[static_cast<std::size_t>(i)],
               aggs[static_cast<std::size_t>(pod)][static_cast<std::size_t>(a)], LinkKind::network, link_bw,
               f.link.latency, 1, cg_.leaf_up_res_[static_cast<std::size_t>(i)],
               cg_.leaf_down_res_[static_cast<std::size_t>(i)], f.switch_latency, f.switch_latency);
  }
  // Core group j serves aggregation switch j of every pod, `per` parallel cables per pod.
  int per = std::max(1, std::min(agg_up, k / pods));
  int cores_per_group = (agg_up + per - 1) / per;
  std::vector<VertexId> cores;
  for (int c = 0; c < l.up * cores_per_group; ++c)
    cores.push_back(add_vertex(VertexKind::core, -1, -1, c));
  for (int pod = 0; pod < pods; ++pod)
    for (int a = 0; a < l.up; ++a)
      for (int c = 0; c < cores_per_group; ++c) {
        int lanes = std::min(per, agg_up - c * per);
        add_link(aggs[static_cast<std::size_t>(pod)][static_cast<std::size_t>(a)],
                 cores[static_cast<std::size_t>(a * cores_per_group + c)], LinkKind::network, link_bw * lanes,
                 f.link.latency, lanes, cg_.pod_up_res_[static_cast<std::size_t>(pod)],
                 cg_.pod_down_res_[static_cast<std::size_t>(pod)], f.switch_latency, f.switch_latency);
      }
}

int GraphBuilder::new_group(int tier, int leaf)
{
  cg_.ecmp_groups_.emplace_back();
  cg_.group_tier_.push_back(tier);
  cg_.leaf_of_group_.push_back(leaf);
  return static_cast<int>(cg_.ecmp_groups_.size()) - 1;
}

void GraphBuilder::add_cable(VertexId lower, VertexId upper, int up, int up_to, int down, int down_to)
{
  const FabricSpec& f = cg_.platform_.fabric;
  const int id = add_link(lower, upper, LinkKind::network, f.link.bandwidth, f.link.latency, 1, -1, -1,
                          f.switch_latency, f.switch_latency);
  auto& groups = cg_.ecmp_groups_;
  groups[static_cast<std::size_t>(up)].arcs.push_back(id);
  groups[static_cast<std::size_t>(up)].to.push_back(up_to);
  groups[static_cast<std::size_t>(down)].arcs.push_back(id + 1);
  groups[static_cast<std::size_t>(down)].to.push_back(down_to);
}

void GraphBuilder::add_spines_ecmp(const Leaves& l)
{
  const int leaf_count = static_cast<int>(l.vertices.size());
  // the same planes, spines and cables as add_spines, one link per cable
  const auto planes = spine_planes(l);
  int total = 0;
  for (const auto& plane : planes)
    total += spine_split(l, static_cast<int>(plane.size())).second;
  cg_.leaf_up_group_.assign(static_cast<std::size_t>(leaf_count), -1);
  cg_.spine_down_group_.assign(static_cast<std::size_t>(total * leaf_count), -1);
  int first = 0; // the plane's first spine
  for (const auto& plane : planes) {
    const auto [per, spines] = spine_split(l, static_cast<int>(plane.size()));
    std::vector<VertexId> spine_v;
    for (int s = 0; s < spines; ++s)
      spine_v.push_back(add_vertex(VertexKind::spine, -1, -1, first + s));
    for (int i : plane) {
      const int up = cg_.leaf_up_group_[static_cast<std::size_t>(i)] = new_group(0, i);
      for (int s = 0; s < spines; ++s) {
        const int to = first + s;
        const int down = cg_.spine_down_group_[static_cast<std::size_t>(to * leaf_count + i)] = new_group(2);
        for (int c = 0; c < std::min(per, l.up - s * per); ++c)
          add_cable(l.vertices[static_cast<std::size_t>(i)], spine_v[static_cast<std::size_t>(s)], up, to, down, i);
      }
    }
    first += spines;
  }
}

void GraphBuilder::add_pods_ecmp(const Leaves& l)
{
  const int k = cg_.platform_.fabric.radix;
  const int leaf_count = static_cast<int>(l.vertices.size());
  // the same pods, aggregation switches, cores and cables as add_pods (which checked the radix)
  const int pod_leaves = k / 2;
  const int pods = (leaf_count + pod_leaves - 1) / pod_leaves;
  const int agg_up = k / 2;
  cg_.pods_ = pods;
  std::vector<std::vector<VertexId>> aggs(static_cast<std::size_t>(pods));
  for (int pod = 0; pod < pods; ++pod)
    for (int a = 0; a < l.up; ++a)
      aggs[static_cast<std::size_t>(pod)].push_back(add_vertex(VertexKind::spine, -1, -1, pod * l.up + a));
  cg_.leaf_up_group_.assign(static_cast<std::size_t>(leaf_count), -1);
  cg_.agg_leaf_down_group_.assign(static_cast<std::size_t>(leaf_count * l.up), -1);
  for (int i = 0; i < leaf_count; ++i) {
    const int pod = i / pod_leaves;
    cg_.pod_of_leaf_[static_cast<std::size_t>(i)] = pod;
    const int up = cg_.leaf_up_group_[static_cast<std::size_t>(i)] = new_group(0, i);
    for (int a = 0; a < l.up; ++a) {
      const int down = cg_.agg_leaf_down_group_[static_cast<std::size_t>(i * l.up + a)] = new_group(2);
      add_cable(l.vertices[static_cast<std::size_t>(i)], aggs[static_cast<std::size_t>(pod)][static_cast<std::size_t>(a)],
                up, a, down, i);
    }
  }
  const int per = std::max(1, std::min(agg_up, k / pods));
  const int cores_per_group = (agg_up + per - 1) / per;
  std::vector<VertexId> cores;
  for (int c = 0; c < l.up * cores_per_group; ++c)
    cores.push_back(add_vertex(VertexKind::core, -1, -1, c));
  cg_.agg_up_group_.assign(static_cast<std::size_t>(pods * l.up), -1);
  cg_.core_down_group_.assign(cores.size() * static_cast<std::size_t>(pods), -1);
  for (int pod = 0; pod < pods; ++pod)
    for (int a = 0; a < l.up; ++a) {
      const int up = cg_.agg_up_group_[static_cast<std::size_t>(pod * l.up + a)] = new_group(1);
      for (int c = 0; c < cores_per_group; ++c) {
        const int core = a * cores_per_group + c;
        const int down = cg_.core_down_group_[static_cast<std::size_t>(core * pods + pod)] = new_group(2);
        for (int lane = 0; lane < std::min(per, agg_up - c * per); ++lane)
          add_cable(aggs[static_cast<std::size_t>(pod)][static_cast<std::size_t>(a)],
                    cores[static_cast<std::size_t>(core)], up, core, down, a);
      }
    }
}

void GraphBuilder::add_fabric()
{
  if (nics_.empty())
    return;
  if (static_cast<long long>(nics_.size()) != shape_.endpoints)
    throw std::logic_error("add_fabric before size_fabric");
  const FabricSpec& f = cg_.platform_.fabric;
  Leaves l = place_leaves();
  const int leaf_count = static_cast<int>(l.vertices.size());
  link_nics(l.vertices);
  const int levels = shape_.levels;
  if (f.kind == FabricKind::rail_only)
    cg_.rails_ = cg_.platform_.node.nics;
  cg_.fabric_levels_ = levels;
  cg_.pod_of_leaf_.assign(static_cast<std::size_t>(leaf_count), 0);
  if (levels == 1)
    return;
  cg_.leaf_count_ = leaf_count;
  cg_.leaf_up_ = l.up;
  if (hashed(f.routing) || f.routing == FabricRouting::by_destination) {
    cg_.ecmp_ = true;
    cg_.by_destination_ = f.routing == FabricRouting::by_destination;
    cg_.paths_ = f.routing == FabricRouting::ecmp_qp ? f.qps_per_connection : 1;
    cg_.seed_ = f.seed;
    if (levels == 2) {
      add_spines_ecmp(l);
    } else {
      add_pods_ecmp(l);
    }
    return;
  }
  cg_.leaf_up_res_.resize(static_cast<std::size_t>(leaf_count));
  cg_.leaf_down_res_.resize(static_cast<std::size_t>(leaf_count));
  for (int i = 0; i < leaf_count; ++i) {
    std::string name = "leaf" + std::to_string(i);
    cg_.leaf_up_res_[static_cast<std::size_t>(i)] =
        new_resource(name + "-up", LinkKind::network, l.up * cable_bandwidth(), f.link.latency + f.switch_latency,
                     LinkTier::leaf_up);
    cg_.leaf_down_res_[static_cast<std::size_t>(i)] =
        new_resource(name + "-down", LinkKind::network, l.up * cable_bandwidth(), f.link.latency + f.switch_latency,
                     LinkTier::leaf_up);
  }
  if (levels == 2)
    add_spines(l);
  else
    add_pods(l);
}

} // namespace clustersim
