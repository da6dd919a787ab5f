#include "topology/ClusterGraph.hpp"

#include "topology/GraphBuilder.hpp"
#include "topology/Hash.hpp"

#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/property_map/transform_value_property_map.hpp>

#include <algorithm>
#include <cassert>
#include <limits>
#include <map>

namespace clustersim {

const char* to_string(VertexKind k)
{
  switch (k) {
  case VertexKind::gpu:
    return "gpu";
  case VertexKind::nvswitch:
    return "nvswitch";
  case VertexKind::pcie_switch:
    return "pcie_switch";
  case VertexKind::cpu:
    return "cpu";
  case VertexKind::nic:
    return "nic";
  case VertexKind::leaf:
    return "leaf";
  case VertexKind::spine:
    return "spine";
  case VertexKind::core:
    return "core";
  }
  return "?";
}

const char* to_string(LinkTier t)
{
  switch (t) {
  case LinkTier::scale_up:
    return "scale-up";
  case LinkTier::host:
    return "host";
  case LinkTier::nic:
    return "nic";
  case LinkTier::leaf_up:
    return "leaf up-links";
  case LinkTier::spine_up:
    return "spine up-links";
  }
  return "?";
}

const char* to_string(LinkKind k)
{
  switch (k) {
  case LinkKind::nvlink:
    return "nvlink";
  case LinkKind::pcie:
    return "pcie";
  case LinkKind::cpu_link:
    return "cpu_link";
  case LinkKind::network:
    return "network";
  }
  return "?";
}

namespace {

/// The best parallel arc of each hop of the path to `dst` in a predecessor tree from `src`;
/// empty when `dst` is unreachable.
std::vector<int> path_arcs(const Graph& g, const std::vector<VertexId>& pred, VertexId src, VertexId dst)
{
  std::vector<int> arcs;
  if (pred[dst] == dst && src != dst)
    return arcs; // unreachable
  for (VertexId v = dst; v != src; v = pred[v]) {
    VertexId u = pred[v];
    // the best parallel arc u → v
    int best = -1;
    double best_bw = -1;
    for (auto [e, end] = boost::out_edges(u, g); e != end; ++e)
      if (boost::target(*e, g) == v && g[*e].bandwidth > best_bw) {
        best_bw = g[*e].bandwidth;
        best = g[*e].id;
      }
    arcs.push_back(best);
  }
  std::reverse(arcs.begin(), arcs.end());
  return arcs;
}

/// Arcs that leave `src` or a vertex a route may pass through (a node's NVSwitch, PCIe switch
/// or CPU): every other vertex can end a route but not carry one.
struct TransitArcs {
  const Graph* g = nullptr;
  VertexId src = 0;
  bool operator()(const Graph::edge_descriptor& e) const
  {
    const VertexId v = boost::source(e, *g);
    if (v == src)
      return true;
    VertexKind k = (*g)[v].kind;
    return k == VertexKind::nvswitch || k == VertexKind::pcie_switch || k == VertexKind::cpu;
  }
};

/// The shortest routes from `src` to every vertex at once (one Dijkstra, not one per pair): a
/// vertex that is not a transit kind is reached but not expanded, which gives the same routes as
/// a search per destination that may transit only switches and CPUs.
std::vector<VertexId> shortest_tree(const Graph& g, VertexId src)
{
  TransitArcs filter{&g, src};
  boost::filtered_graph<Graph, TransitArcs> fg(g, filter);
  std::vector<double> dist(boost::num_vertices(g));
  std::vector<VertexId> pred(boost::num_vertices(g));
  // time per byte plus a small per-hop cost, so the widest short path wins
  auto weight = boost::make_transform_value_property_map([](const ArcInfo& a) { return 1.0 / a.bandwidth + 1e-15; },
                                                         boost::get(boost::edge_bundle, g));
  boost::dijkstra_shortest_paths(
      fg, src,
      boost::predecessor_map(boost::make_iterator_property_map(pred.begin(), boost::get(boost::vertex_index, g)))
          .distance_map(boost::make_iterator_property_map(dist.begin(), boost::get(boost::vertex_index, g)))
          .weight_map(weight));
  return pred;
}

std::vector<int> shortest_arcs(const Graph& g, VertexId src, VertexId dst)
{
  return path_arcs(g, shortest_tree(g, src), src, dst);
}

} // namespace

int ClusterGraph::job_domain_nodes(const PlatformSpec& platform, int nodes)
{
  const int full = platform.node.domain_nodes;
  if (nodes <= full)
    return nodes;
  int share = 0;
  for (int d = full; d >= (full + 1) / 2 && share == 0; --d)
    share = nodes % d == 0 ? d : 0;
  const int domains = (nodes + full - 1) / full;
  return share > 0 ? share : (nodes + domains - 1) / domains;
}

ClusterGraph ClusterGraph::build(const PlatformSpec& platform, int gpus)
{
  const SourceLocation where{platform.file, 1, 1};
  const int per_node = platform.node.gpus;
  const long long per_node_gpus = per_node;
  if (gpus < 1 || gpus % per_node != 0)
    throw ConfigError(where,
                      std::to_string(gpus) + " GPUs is not a multiple of the " + std::to_string(per_node) +
                          " GPUs per node of platform '" + platform.name + "'",
                      "a positive multiple of " + std::to_string(per_node));

  ClusterGraph cg;
  cg.platform_ = platform;
  cg.gpus_ = gpus;
  cg.nodes_ = gpus / per_node;
  // A job that spans several NVLink domains takes the same number of nodes from each (what
  // Slurm's --segment asks for on NVL72 racks): the largest divisor of its nodes that a domain
  // holds, if it uses at least half of each domain, else an equal share (the last domain may
  // hold fewer). 256 or 1024 GPUs on GB200 NVL72 are racks of 64, so 64-GPU model- and
  // expert-parallel groups stay inside a rack.
  cg.domain_nodes_ = job_domain_nodes(platform, cg.nodes_);
  cg.domains_ = (cg.nodes_ + cg.domain_nodes_ - 1) / cg.domain_nodes_;
  const int dn = cg.domain_nodes_;
  if (cg.domains_ > 1 && platform.node.nics == 0)
    throw ConfigError(where,
                      "platform '" + platform.name + "' has no NICs, so it cannot span " + std::to_string(cg.domains_) +
                          " NVLink domains",
                      "at most " + std::to_string(platform.gpus_per_domain()) + " GPUs");

  GraphBuilder b(cg);
  // the fabric's radix checks and the graph's size, before the graph is built: domain 0 tells
  // the links of a node
  const bool fabric = cg.domains_ > 1 || platform.node.nics > 0;
  if (fabric)
    b.size_fabric(where);
  for (int d = 0; d < cg.domains_; ++d) {
    int first = d * dn;
    b.add_domain(d, first, std::min(dn, cg.nodes_ - first));
    if (d == 0) {
      const long long built = std::min(dn, cg.nodes_);
      const long long node_links = (static_cast<long long>(boost::num_edges(cg.graph_)) / 2 + built - 1) / built;
      const long long links = node_links * cg.nodes_ + (fabric ? b.fabric_links() : 0);
      if (links > kMaxGraphLinks)
        throw ConfigError(where,
                          std::to_string(gpus) + " GPUs of platform '" + platform.name + "' are " +
                              std::to_string(links) + " links, more than the " + std::to_string(kMaxGraphLinks) +
                              " a cluster graph may hold",
                          "at most about " + std::to_string(kMaxGraphLinks * gpus / links / per_node_gpus * per_node_gpus) +
                              " GPUs of this platform");
    }
  }
  if (fabric)
    b.add_fabric();
  cg.take_background();

  cg.route_domain(b.nics_);
  return cg;
}

double ClusterGraph::background_share(LinkTier t) const
{
  const FabricSpec& f = platform_.fabric;
  if (f.background_load <= 0)
    return 0;
  switch (t) {
  case LinkTier::leaf_up:
    return f.background_tier != BackgroundTier::spine_up ? f.background_load : 0;
  case LinkTier::spine_up:
    return f.background_tier != BackgroundTier::leaf_up ? f.background_load : 0;
  default:
    return 0;
  }
}

void ClusterGraph::take_background()
{
  if (platform_.fabric.background_load <= 0)
    return;
  // every cable keeps the rest of its rate: the bundle of ideal routing as each cable of ecmp
  for (Resource& r : resources_)
    r.bandwidth *= 1 - background_share(r.tier);
  for (auto [e, end] = boost::edges(graph_); e != end; ++e) {
    ArcInfo& a = graph_[*e];
    if (a.resource >= 0)
      a.bandwidth *= 1 - background_share(resources_[static_cast<std::size_t>(a.resource)].tier);
  }
}

void ClusterGraph::route_domain(const std::vector<VertexId>& nics)
{
  const PlatformSpec& platform = platform_;
  const int per_node = platform.node.gpus;
  const int dn = domain_nodes_;
  const Graph& g = graph_;
  const int per_domain = std::min(dn, nodes_) * per_node;
  domain_routes_.assign(static_cast<std::size_t>(per_domain * per_domain), {});
  std::vector<int> arc_node(static_cast<std::size_t>(boost::num_edges(g)), -1);
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    int node = std::max(g[boost::source(*e, g)].node, g[boost::target(*e, g)].node);
    arc_node[static_cast<std::size_t>(g[*e].id)] = node;
  }
  auto to_step = [&](int arc, int node_src) {
    int node = arc_node[static_cast<std::size_t>(arc)];
    return RouteStep{node == node_src ? 0 : 1, arc - node_arc_base_[static_cast<std::size_t>(node)]};
  };
  const bool staged = platform.node.scale_up == ScaleUpKind::pcie && !platform.node.p2p;
  // one search per source GPU (and per CPU a staged copy goes through), not one per pair: a
  // node of 1,024 GPUs took a million searches
  std::map<VertexId, std::vector<VertexId>> cpu_trees;
  for (int a = 0; a < per_domain; ++a) {
    VertexId va = gpu_vertex_[static_cast<std::size_t>(a)];
    const std::vector<VertexId> from_a = shortest_tree(g, va);
    VertexId cpu = va;
    if (staged) {
      // no peer-to-peer: through the root complex (host memory) of the source's CPU
      for (auto [v, vend] = boost::vertices(g); v != vend; ++v)
        if (g[*v].kind == VertexKind::cpu && g[*v].node == g[va].node &&
            g[*v].local == g[va].local * platform.node.cpus / per_node)
          cpu = *v;
      if (!cpu_trees.count(cpu))
        cpu_trees.emplace(cpu, shortest_tree(g, cpu));
    }
    for (int bb = 0; bb < per_domain; ++bb) {
      if (a == bb)
        continue;
      VertexId vb = gpu_vertex_[static_cast<std::size_t>(bb)];
      std::vector<int> arcs;
      if (staged) {
        arcs = path_arcs(g, from_a, va, cpu);
        auto rest = path_arcs(g, cpu_trees.at(cpu), cpu, vb);
        arcs.insert(arcs.end(), rest.begin(), rest.end());
      } else {
        arcs = path_arcs(g, from_a, va, vb);
      }
      assert(!arcs.empty());
      int node_src = g[va].node;
      auto& steps = domain_routes_[static_cast<std::size_t>(a * per_domain + bb)];
      for (int arc : arcs)
        steps.push_back(to_step(arc, node_src));
    }
  }
  if (platform.node.nics > 0) {
    for (int l = 0; l < per_node; ++l) {
      VertexId gv = gpu_vertex_[static_cast<std::size_t>(l)];
      VertexId nv = nics[static_cast<std::size_t>(platform.node.nic_of_gpu[static_cast<std::size_t>(l)])];
      std::vector<int> up;
      std::vector<int> down;
      for (int arc : shortest_arcs(g, gv, nv))
        up.push_back(arc - node_arc_base_[0]);
      for (int arc : shortest_arcs(g, nv, gv))
        down.push_back(arc - node_arc_base_[0]);
      nic_up_.push_back(up);
      nic_down_.push_back(down);
    }
  }
}

int ClusterGraph::count(VertexKind k) const
{
  return vertex_count_[static_cast<std::size_t>(k)];
}

int ClusterGraph::nic_of(int gpu) const
{
  if (platform_.node.nics == 0)
    return -1;
  return node_of(gpu) * platform_.node.nics + platform_.node.nic_of_gpu[static_cast<std::size_t>(local_of(gpu))];
}

int ClusterGraph::leaf_of(int gpu) const
{
  int nic = nic_of(gpu);
  return nic < 0 || leaf_of_nic_.empty() ? -1 : leaf_of_nic_[static_cast<std::size_t>(nic)];
}

PathClass ClusterGraph::path_class(int a, int b) const
{
  if (a == b)
    return PathClass::same_gpu;
  return domain_of(a) == domain_of(b) ? PathClass::scale_up : PathClass::scale_out;
}

void ClusterGraph::append_local(const std::vector<RouteStep>& steps, int node_src, int node_dst, std::vector<int>& out,
                                double& latency) const
{
  for (const auto& s : steps) {
    int node = s.node_sel == 0 ? node_src : node_dst;
    int res = arc_resource(node_arc_base_[static_cast<std::size_t>(node)] + s.local_arc);
    out.push_back(res);
    latency += resources_[static_cast<std::size_t>(res)].latency;
  }
}

std::string ClusterGraph::vertex_name(VertexId v) const
{
  return std::string(to_string(graph_[v].kind)) + std::to_string(graph_[v].global);
}

long long ClusterGraph::find_vertex(const std::string& name) const
{
  for (auto [v, end] = boost::vertices(graph_); v != end; ++v)
    if (vertex_name(*v) == name)
      return static_cast<long long>(*v);
  return -1;
}

std::vector<int> ClusterGraph::arcs_of(long long a, long long b) const
{
  std::vector<int> out;
  for (auto [e, end] = boost::edges(graph_); e != end; ++e) {
    const auto s = static_cast<long long>(boost::source(*e, graph_));
    const auto t = static_cast<long long>(boost::target(*e, graph_));
    if (b < 0 ? (s == a || t == a) : ((s == a && t == b) || (s == b && t == a)))
      out.push_back(graph_[*e].id);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void ClusterGraph::scale_arc(int arc, double factor)
{
  for (auto [e, end] = boost::edges(graph_); e != end; ++e) {
    ArcInfo& info = graph_[*e];
    if (info.id != arc)
      continue;
    Resource& r = resources_[static_cast<std::size_t>(info.resource)];
    r.bandwidth = std::max(0.0, r.bandwidth - info.bandwidth * (1 - factor));
    info.bandwidth *= factor;
    if (ecmp_ && r.bandwidth <= 0)
      ecmp_faults_ = true; // routes now avoid it
    return;
  }
}

std::uint64_t ClusterGraph::ecmp_hash(int gpu_a, int gpu_b, int group, int path) const
{
  // the flow's identity (its two GPUs: one queue pair for the job; under ecmp-qp also the
  // queue pair's number), salted per switch choice and per seed, so that switches do not all
  // pick alike (no polarization); every input bit moves every output bit, as a switch's CRC of
  // a 5-tuple does
  std::uint64_t flow = splitmix64((static_cast<std::uint64_t>(static_cast<std::uint32_t>(gpu_a)) << 32) |
                                  static_cast<std::uint32_t>(gpu_b));
  if (path > 0)
    flow = splitmix64(flow + static_cast<std::uint64_t>(path));
  return splitmix64(flow ^ splitmix64((static_cast<std::uint64_t>(seed_) << 32) | static_cast<std::uint32_t>(group)));
}

bool ClusterGraph::group_alive(int group) const
{
  for (int arc : ecmp_groups_[static_cast<std::size_t>(group)].arcs)
    if (cable_alive(arc))
      return true;
  return false;
}

bool ClusterGraph::leads_to(int group, std::size_t i, int tier, int leaf_b, int pod_b) const
{
  const EcmpGroup& g = ecmp_groups_[static_cast<std::size_t>(group)];
  if (!cable_alive(g.arcs[i]))
    return false;
  const auto at = [](const std::vector<int>& v, int k) { return v[static_cast<std::size_t>(k)]; };
  const int to = g.to[i];
  if (tier == 2) // a cable down: the switches below lead on (their own cables are checked there)
    return true;
  if (fabric_levels_ == 2) // up to spine `to`: it needs a live cable down to the leaf
    return group_alive(at(spine_down_group_, to * leaf_count_ + leaf_b));
  if (tier == 1) // aggregation up to core `to`: it needs a live cable down to pod_b
    return group_alive(at(core_down_group_, to * pods_ + pod_b));
  // leaf up to aggregation switch `to` of its pod: down to the leaf, and across pods if needed
  if (!group_alive(at(agg_leaf_down_group_, leaf_b * leaf_up_ + to)))
    return false;
  const int pod_a = at(pod_of_leaf_, at(leaf_of_group_, group));
  if (pod_a == pod_b)
    return true;
  const int agg_up = at(agg_up_group_, pod_a * leaf_up_ + to);
  for (std::size_t k = 0; k < ecmp_groups_[static_cast<std::size_t>(agg_up)].arcs.size(); ++k)
    if (leads_to(agg_up, k, 1, leaf_b, pod_b))
      return true;
  return false;
}

std::string ClusterGraph::ecmp_cut() const
{
  for (int la = 0; la < leaf_count_; ++la)
    for (int lb = 0; lb < leaf_count_; ++lb) {
      if (la == lb || (rails_ > 0 && la % rails_ != lb % rails_)) // rails do not meet
        continue;
      const int group = leaf_up_group_[static_cast<std::size_t>(la)];
      const int pod_b = pod_of_leaf_[static_cast<std::size_t>(lb)];
      bool reached = false;
      for (std::size_t i = 0; i < ecmp_groups_[static_cast<std::size_t>(group)].arcs.size() && !reached; ++i)
        reached = leads_to(group, i, 0, lb, pod_b);
      if (!reached)
        return "leaf" + std::to_string(la) + " reaches leaf" + std::to_string(lb) + " over no live cable";
    }
  return "";
}

std::size_t ClusterGraph::take_cable(int a, int b, int path, int group, int leaf_b, int pod_b, std::uint64_t digit,
                                     std::vector<int>& out, double& latency) const
{
  const EcmpGroup& g = ecmp_groups_[static_cast<std::size_t>(group)];
  const int tier = group_tier_[static_cast<std::size_t>(group)];
  // the choice picks among the cables that lead on (all of them on a healthy fabric); with none
  // the flow takes a dead one and never ends (the faults refuse that setup: ecmp_cut)
  const std::uint64_t h = by_destination_ ? digit : ecmp_hash(a, b, group, path);
  std::size_t pick = static_cast<std::size_t>(h % g.arcs.size());
  if (ecmp_faults_) {
    std::size_t live = 0;
    for (std::size_t i = 0; i < g.arcs.size(); ++i)
      live += leads_to(group, i, tier, leaf_b, pod_b) ? 1 : 0;
    if (live > 0) {
      std::size_t nth = static_cast<std::size_t>(h % live);
      for (std::size_t i = 0; i < g.arcs.size(); ++i)
        if (leads_to(group, i, tier, leaf_b, pod_b) && nth-- == 0) {
          pick = i;
          break;
        }
    }
  }
  const int res = arc_resource(g.arcs[pick]);
  out.push_back(res);
  latency += resources_[static_cast<std::size_t>(res)].latency;
  return pick;
}

int ClusterGraph::lane_of(int group, std::size_t i) const
{
  // a switch's cables to one switch above are consecutive in its group (add_cable's order)
  const std::vector<int>& to = ecmp_groups_[static_cast<std::size_t>(group)].to;
  std::size_t first = i;
  while (first > 0 && to[first - 1] == to[i])
    --first;
  return static_cast<int>(i - first);
}

void ClusterGraph::append_ecmp(int a, int b, int leaf_a, int leaf_b, int path, std::vector<int>& out,
                               double& latency) const
{
  // Static routing is D-mod-k (Zahavi et al., "Optimized InfiniBand fat-tree routing for shift
  // all-to-all communication patterns", CCPE 2010, DOI 10.1002/cpe.1527): a leaf sends toward
  // the destination NIC's down-port p over its up cable p mod up-links, and the switch above
  // comes down on the same lane of its parallel cables, so the NICs of one leaf are reached over
  // distinct cables; an aggregation switch goes up by the destination's leaf. Under ECMP every
  // choice is the flow's hash.
  const auto at = [](const std::vector<int>& v, int i) { return v[static_cast<std::size_t>(i)]; };
  const int pb = at(pod_of_leaf_, leaf_b);
  const auto port = static_cast<std::uint64_t>(at(port_of_nic_, nic_of(b)));
  const int up_group = at(leaf_up_group_, leaf_a);
  const std::size_t first = take_cable(a, b, path, up_group, leaf_b, pb, port, out, latency);
  const int up = ecmp_groups_[static_cast<std::size_t>(up_group)].to[first]; // spine, or aggregation
  if (fabric_levels_ == 2) {
    take_cable(a, b, path, at(spine_down_group_, up * leaf_count_ + leaf_b), leaf_b, pb,
               static_cast<std::uint64_t>(lane_of(up_group, first)), out, latency);
    return;
  }
  const int pa = at(pod_of_leaf_, leaf_a);
  if (pa != pb) {
    const int agg_group = at(agg_up_group_, pa * leaf_up_ + up);
    const std::size_t second =
        take_cable(a, b, path, agg_group, leaf_b, pb, static_cast<std::uint64_t>(leaf_b), out, latency);
    const int core = ecmp_groups_[static_cast<std::size_t>(agg_group)].to[second];
    take_cable(a, b, path, at(core_down_group_, core * pods_ + pb), leaf_b, pb,
               static_cast<std::uint64_t>(lane_of(agg_group, second)), out, latency); // to aggregation `up`
  }
  take_cable(a, b, path, at(agg_leaf_down_group_, leaf_b * leaf_up_ + up), leaf_b, pb, 0, out, latency);
}

double ClusterGraph::route(int a, int b, std::vector<int>& out, int path) const
{
  double latency = 0;
  if (a == b)
    return latency;
  const int per_node = platform_.node.gpus;
  const int per_domain = gpus_per_domain();
  if (domain_of(a) == domain_of(b)) {
    int la = a % per_domain;
    int lb = b % per_domain;
    append_local(domain_routes_[static_cast<std::size_t>(la * std::min(per_domain, gpus_) + lb)], node_of(a),
                 node_of(b), out, latency);
    return latency;
  }
  auto push_arc = [&](int arc) {
    int res = arc_resource(arc);
    out.push_back(res);
    latency += resources_[static_cast<std::size_t>(res)].latency;
  };
  auto push_res = [&](int res) {
    out.push_back(res);
    latency += resources_[static_cast<std::size_t>(res)].latency;
  };
  if (rails_ > 0) {
    // rail-only: the rails do not meet, so a flow to another rail first crosses the node's
    // NVLink to the GPU whose NIC is on the destination's rail, and leaves from there (NCCL's
    // PXN); that GPU's flows and this one share its NIC
    const auto& nic_of_gpu = platform_.node.nic_of_gpu;
    const int want = nic_of_gpu[static_cast<std::size_t>(b % per_node)];
    if (nic_of_gpu[static_cast<std::size_t>(a % per_node)] != want) {
      const int first = a - a % per_node;
      int relay = first;
      while (nic_of_gpu[static_cast<std::size_t>(relay - first)] != want)
        ++relay;
      append_local(domain_routes_[static_cast<std::size_t>((a % per_domain) * std::min(per_domain, gpus_) +
                                                           relay % per_domain)],
                   node_of(a), node_of(relay), out, latency);
      a = relay;
    }
  }
  const int na = node_of(a);
  const int nb = node_of(b);
  for (int arc : nic_up_[static_cast<std::size_t>(a % per_node)])
    push_arc(node_arc_base_[static_cast<std::size_t>(na)] + arc);
  const int nic_a = nic_of(a);
  const int nic_b = nic_of(b);
  if (nic_a != nic_b) {
    push_arc(nic_leaf_up_[static_cast<std::size_t>(nic_a)]);
    const int la = leaf_of_nic_[static_cast<std::size_t>(nic_a)];
    const int lb = leaf_of_nic_[static_cast<std::size_t>(nic_b)];
    if (la != lb && ecmp_) {
      append_ecmp(a, b, la, lb, path, out, latency);
    } else if (la != lb) {
      push_res(leaf_up_res_[static_cast<std::size_t>(la)]);
      const int pa = pod_of_leaf_[static_cast<std::size_t>(la)];
      const int pb = pod_of_leaf_[static_cast<std::size_t>(lb)];
      if (pa != pb) {
        push_res(pod_up_res_[static_cast<std::size_t>(pa)]);
        push_res(pod_down_res_[static_cast<std::size_t>(pb)]);
      }
      push_res(leaf_down_res_[static_cast<std::size_t>(lb)]);
    }
    push_arc(nic_leaf_down_[static_cast<std::size_t>(nic_b)]);
  }
  for (int arc : nic_down_[static_cast<std::size_t>(b % per_node)])
    push_arc(node_arc_base_[static_cast<std::size_t>(nb)] + arc);
  return latency;
}

double ClusterGraph::pair_bandwidth(int a, int b) const
{
  if (paths_ == 1) {
    std::vector<int> route;
    this->route(a, b, route);
    double bw = std::numeric_limits<double>::infinity();
    for (int r : route)
      bw = std::min(bw, resources_[static_cast<std::size_t>(r)].bandwidth);
    return bw;
  }
  // each route carries 1/paths of the traffic; two queue pairs hashed onto one cable share it
  std::vector<int> route;
  for (int p = 0; p < paths_; ++p)
    this->route(a, b, route, p);
  std::sort(route.begin(), route.end());
  double slowest = 0; // seconds per byte of the pair's traffic
  for (std::size_t i = 0; i < route.size();) {
    std::size_t j = i;
    while (j < route.size() && route[j] == route[i])
      ++j;
    slowest = std::max(slowest, static_cast<double>(j - i) / paths_ /
                                    resources_[static_cast<std::size_t>(route[i])].bandwidth);
    i = j;
  }
  return slowest > 0 ? 1 / slowest : std::numeric_limits<double>::infinity();
}

} // namespace clustersim
