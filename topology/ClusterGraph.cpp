#include "ClusterGraph.hpp"

#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/property_map/transform_value_property_map.hpp>

#include <algorithm>
#include <cassert>
#include <limits>

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

/// Appends domains, nodes and the fabric to a ClusterGraph in a fixed order, so that every
/// node's arcs are contiguous and laid out alike (routing tables rely on it).
class GraphBuilder {
public:
  explicit GraphBuilder(ClusterGraph& cg) : cg_(cg) { cg_.vertex_count_.assign(8, 0); }

  VertexId add_vertex(VertexKind kind, int node, int domain, int local)
  {
    VertexInfo v;
    v.kind = kind;
    v.node = node;
    v.domain = domain;
    v.local = local;
    v.global = cg_.vertex_count_[static_cast<std::size_t>(kind)]++;
    return boost::add_vertex(v, cg_.graph_);
  }

  int new_resource(const std::string& name, LinkKind kind, double bw, double lat)
  {
    cg_.resources_.push_back(Resource{name, kind, bw, lat});
    return static_cast<int>(cg_.resources_.size()) - 1;
  }

  /// Adds a physical link as two arcs. `res_fwd` / `res_back` < 0 create a resource per arc.
  /// `enter_fwd` / `enter_back` are the switch latencies added to the arc entering a switch.
  /// Returns the id of the forward arc (the backward one is id + 1).
  int add_link(VertexId a, VertexId b, LinkKind kind, double bw, double lat, int lanes, int res_fwd = -1,
               int res_back = -1, double enter_fwd = 0, double enter_back = 0)
  {
    int id = next_arc_;
    add_arc(a, b, kind, bw, lat + enter_fwd, lanes, res_fwd, id, id + 1);
    add_arc(b, a, kind, bw, lat + enter_back, lanes, res_back, id + 1, id);
    return id;
  }

  void add_domain(int domain, int first_node, int node_count);
  void add_fabric(const SourceLocation& where);

private:
  void add_arc(VertexId a, VertexId b, LinkKind kind, double bw, double lat, int lanes, int res, int id, int rev)
  {
    ArcInfo e;
    e.kind = kind;
    e.bandwidth = bw;
    e.latency = lat;
    e.lanes = lanes;
    e.id = id;
    e.reverse = rev;
    if (res < 0) {
      const auto& ga = cg_.graph_[a];
      const auto& gb = cg_.graph_[b];
      std::string name = std::string(to_string(ga.kind)) + std::to_string(ga.global) + "-" + to_string(gb.kind) +
                         std::to_string(gb.global);
      res = new_resource(name, kind, bw, lat);
    }
    e.resource = res;
    boost::add_edge(a, b, e, cg_.graph_);
    cg_.arc_resource_.push_back(res);
    ++next_arc_;
  }

  void add_node(int node, int domain, VertexId nvswitch);

  ClusterGraph& cg_;
  int next_arc_ = 0;

public:
  std::vector<VertexId> nics_; ///< global NIC vertices in order
};

void GraphBuilder::add_node(int node, int domain, VertexId nvswitch)
{
  const NodeSpec& n = cg_.platform_.node;
  cg_.node_arc_base_.push_back(next_arc_);
  std::vector<VertexId> cpus;
  for (int c = 0; c < n.cpus; ++c)
    cpus.push_back(add_vertex(VertexKind::cpu, node, domain, c));
  for (int c = 1; c < n.cpus; ++c) // sockets in a chain (2-socket boxes: one UPI/QPI bundle)
    add_link(cpus[static_cast<std::size_t>(c - 1)], cpus[static_cast<std::size_t>(c)], LinkKind::cpu_link,
             n.cpu_link.bandwidth, n.cpu_link.latency, 1);
  std::vector<VertexId> switches;
  for (int s = 0; s < n.pcie_switches; ++s) {
    VertexId sw = add_vertex(VertexKind::pcie_switch, node, domain, s);
    switches.push_back(sw);
    add_link(sw, cpus[static_cast<std::size_t>(s * n.cpus / n.pcie_switches)], LinkKind::pcie, n.pcie_uplink.bandwidth,
             n.pcie_uplink.latency, 1);
  }
  auto attach_point = [&](int index, int count) {
    if (!switches.empty())
      return switches[static_cast<std::size_t>(index * n.pcie_switches / count)];
    return cpus[static_cast<std::size_t>(index * n.cpus / count)];
  };
  std::vector<VertexId> gpus;
  for (int g = 0; g < n.gpus; ++g) {
    VertexId v = add_vertex(VertexKind::gpu, node, domain, g);
    gpus.push_back(v);
    cg_.gpu_vertex_.push_back(v);
    add_link(v, attach_point(g, n.gpus), LinkKind::pcie, n.pcie.bandwidth, n.pcie.latency, 1);
  }
  for (int i = 0; i < n.nics; ++i) {
    VertexId v = add_vertex(VertexKind::nic, node, domain, i);
    nics_.push_back(v);
    add_link(v, attach_point(i, n.nics), LinkKind::pcie, n.pcie.bandwidth, n.pcie.latency, 1);
  }
  if (n.scale_up == ScaleUpKind::nvswitch) {
    for (int g = 0; g < n.gpus; ++g)
      add_link(gpus[static_cast<std::size_t>(g)], nvswitch, LinkKind::nvlink, n.nvlink.bandwidth, n.nvlink.latency, 1);
  } else if (n.scale_up == ScaleUpKind::nvlink_mesh) {
    for (const auto& l : n.mesh)
      add_link(gpus[static_cast<std::size_t>(l.a)], gpus[static_cast<std::size_t>(l.b)], LinkKind::nvlink,
               n.nvlink.bandwidth * l.lanes, n.nvlink.latency, l.lanes);
  }
}

void GraphBuilder::add_domain(int domain, int first_node, int node_count)
{
  VertexId nvswitch = Graph::null_vertex();
  if (cg_.platform_.node.scale_up == ScaleUpKind::nvswitch)
    nvswitch = add_vertex(VertexKind::nvswitch, -1, domain, 0);
  for (int i = 0; i < node_count; ++i)
    add_node(first_node + i, domain, nvswitch);
}

void GraphBuilder::add_fabric(const SourceLocation& where)
{
  const PlatformSpec& p = cg_.platform_;
  const FabricSpec& f = p.fabric;
  const int endpoints = static_cast<int>(nics_.size());
  if (endpoints == 0)
    return;
  const int k = f.radix;
  const double link_bw = f.link.bandwidth;
  const double link_lat = f.link.latency;
  const double sw_lat = f.switch_latency;
  const double nic_bw = p.node.nic.bandwidth;
  const double nic_lat = p.node.nic.latency;

  auto radix_error = [&](const std::string& why) {
    throw ConfigError(where,
                      "fabric radix " + std::to_string(k) + " is too small for " + std::to_string(cg_.nodes_) +
                          " nodes (" + std::to_string(endpoints) + " NIC ports): " + why,
                      "a larger radix, fewer GPUs, or more levels (at most 3)");
  };

  std::vector<VertexId> leaves;
  cg_.leaf_of_nic_.assign(static_cast<std::size_t>(endpoints), 0);
  int down = 0; // NIC ports per leaf
  int up = 0;   // uplinks per leaf
  if (f.kind == FabricKind::single_switch) {
    if (endpoints > k)
      radix_error("a single switch needs one port per NIC");
    leaves.push_back(add_vertex(VertexKind::leaf, -1, -1, 0));
    down = endpoints;
  } else {
    down = static_cast<int>(k * f.oversubscription / (1.0 + f.oversubscription));
    up = k - down;
    if (down < 1 || up < 1)
      radix_error("no room for both down- and up-links");
    int leaf_count = 0;
    if (f.kind == FabricKind::rail_optimized) {
      const int rails = p.node.nics;
      int group_nodes = f.rail_group_nodes > 0 ? std::min(f.rail_group_nodes, down) : down;
      int groups = (cg_.nodes_ + group_nodes - 1) / group_nodes;
      leaf_count = groups * rails;
      for (int nic = 0; nic < endpoints; ++nic) {
        int node = nic / rails;
        int rail = nic % rails;
        cg_.leaf_of_nic_[static_cast<std::size_t>(nic)] = (node / group_nodes) * rails + rail;
      }
    } else {
      leaf_count = (endpoints + down - 1) / down;
      for (int nic = 0; nic < endpoints; ++nic)
        cg_.leaf_of_nic_[static_cast<std::size_t>(nic)] = nic / down;
    }
    for (int l = 0; l < leaf_count; ++l)
      leaves.push_back(add_vertex(VertexKind::leaf, -1, -1, l));
  }
  const int leaf_count = static_cast<int>(leaves.size());

  // NIC ↔ leaf: one resource per arc
  cg_.nic_leaf_up_.assign(static_cast<std::size_t>(endpoints), -1);
  cg_.nic_leaf_down_.assign(static_cast<std::size_t>(endpoints), -1);
  for (int nic = 0; nic < endpoints; ++nic) {
    int id = add_link(nics_[static_cast<std::size_t>(nic)],
                      leaves[static_cast<std::size_t>(cg_.leaf_of_nic_[static_cast<std::size_t>(nic)])],
                      LinkKind::network, nic_bw, nic_lat, 1, -1, -1, sw_lat, 0);
    cg_.nic_leaf_up_[static_cast<std::size_t>(nic)] = id;
    cg_.nic_leaf_down_[static_cast<std::size_t>(nic)] = id + 1;
  }

  int levels = 1;
  if (leaf_count > 1) {
    levels = f.levels > 0 ? f.levels : (leaf_count <= k ? 2 : 3);
    if (levels < 2)
      radix_error("one switch cannot hold every NIC");
    if (levels == 2 && leaf_count > k)
      radix_error(std::to_string(leaf_count) + " leaves exceed the " + std::to_string(k) + " ports of a spine");
  }
  cg_.fabric_levels_ = levels;
  cg_.pod_of_leaf_.assign(static_cast<std::size_t>(leaf_count), 0);
  if (levels == 1)
    return;

  cg_.leaf_up_res_.resize(static_cast<std::size_t>(leaf_count));
  cg_.leaf_down_res_.resize(static_cast<std::size_t>(leaf_count));
  for (int l = 0; l < leaf_count; ++l) {
    std::string name = "leaf" + std::to_string(l);
    cg_.leaf_up_res_[static_cast<std::size_t>(l)] =
        new_resource(name + "-up", LinkKind::network, up * link_bw, link_lat + sw_lat);
    cg_.leaf_down_res_[static_cast<std::size_t>(l)] =
        new_resource(name + "-down", LinkKind::network, up * link_bw, link_lat + sw_lat);
  }

  if (levels == 2) {
    // Each leaf spreads its `up` links over the spines, `per` parallel cables to each.
    int per = std::max(1, std::min(up, k / leaf_count));
    int spines = (up + per - 1) / per;
    std::vector<VertexId> spine_v;
    for (int s = 0; s < spines; ++s)
      spine_v.push_back(add_vertex(VertexKind::spine, -1, -1, s));
    for (int l = 0; l < leaf_count; ++l)
      for (int s = 0; s < spines; ++s) {
        int lanes = std::min(per, up - s * per);
        add_link(leaves[static_cast<std::size_t>(l)], spine_v[static_cast<std::size_t>(s)], LinkKind::network,
                 link_bw * lanes, link_lat, lanes, cg_.leaf_up_res_[static_cast<std::size_t>(l)],
                 cg_.leaf_down_res_[static_cast<std::size_t>(l)], sw_lat, sw_lat);
      }
    return;
  }

  // Three levels: pods of k/2 leaves, each with `up` aggregation switches (k/2 down, k/2 up).
  const int pod_leaves = k / 2;
  if (up > k / 2)
    radix_error("leaf uplinks exceed the down ports of an aggregation switch");
  const int pods = (leaf_count + pod_leaves - 1) / pod_leaves;
  if (pods > k)
    radix_error(std::to_string(pods) + " pods exceed the " + std::to_string(k) + " ports of a core switch");
  const int agg_up = k / 2;
  cg_.pod_up_res_.resize(static_cast<std::size_t>(pods));
  cg_.pod_down_res_.resize(static_cast<std::size_t>(pods));
  std::vector<std::vector<VertexId>> aggs(static_cast<std::size_t>(pods));
  for (int pod = 0; pod < pods; ++pod) {
    std::string name = "pod" + std::to_string(pod);
    cg_.pod_up_res_[static_cast<std::size_t>(pod)] =
        new_resource(name + "-up", LinkKind::network, up * agg_up * link_bw, link_lat + sw_lat);
    cg_.pod_down_res_[static_cast<std::size_t>(pod)] =
        new_resource(name + "-down", LinkKind::network, up * agg_up * link_bw, link_lat + sw_lat);
    for (int a = 0; a < up; ++a)
      aggs[static_cast<std::size_t>(pod)].push_back(add_vertex(VertexKind::spine, -1, -1, pod * up + a));
  }
  for (int l = 0; l < leaf_count; ++l) {
    int pod = l / pod_leaves;
    cg_.pod_of_leaf_[static_cast<std::size_t>(l)] = pod;
    for (int a = 0; a < up; ++a)
      add_link(leaves[static_cast<std::size_t>(l)], aggs[static_cast<std::size_t>(pod)][static_cast<std::size_t>(a)],
               LinkKind::network, link_bw, link_lat, 1, cg_.leaf_up_res_[static_cast<std::size_t>(l)],
               cg_.leaf_down_res_[static_cast<std::size_t>(l)], sw_lat, sw_lat);
  }
  // Core group j serves aggregation switch j of every pod, `per` parallel cables per pod.
  int per = std::max(1, std::min(agg_up, k / pods));
  int cores_per_group = (agg_up + per - 1) / per;
  std::vector<VertexId> cores;
  for (int c = 0; c < up * cores_per_group; ++c)
    cores.push_back(add_vertex(VertexKind::core, -1, -1, c));
  for (int pod = 0; pod < pods; ++pod)
    for (int a = 0; a < up; ++a)
      for (int c = 0; c < cores_per_group; ++c) {
        int lanes = std::min(per, agg_up - c * per);
        add_link(aggs[static_cast<std::size_t>(pod)][static_cast<std::size_t>(a)],
                 cores[static_cast<std::size_t>(a * cores_per_group + c)], LinkKind::network, link_bw * lanes, link_lat,
                 lanes, cg_.pod_up_res_[static_cast<std::size_t>(pod)],
                 cg_.pod_down_res_[static_cast<std::size_t>(pod)], sw_lat, sw_lat);
      }
}

namespace {

/// Dijkstra on the template, not transiting GPUs, NICs or fabric switches.
struct TransitFilter {
  const Graph* g = nullptr;
  VertexId src = 0;
  VertexId dst = 0;
  bool operator()(VertexId v) const
  {
    if (v == src || v == dst)
      return true;
    VertexKind k = (*g)[v].kind;
    return k == VertexKind::nvswitch || k == VertexKind::pcie_switch || k == VertexKind::cpu;
  }
};

std::vector<int> shortest_arcs(const Graph& g, VertexId src, VertexId dst)
{
  TransitFilter filter{&g, src, dst};
  boost::filtered_graph<Graph, boost::keep_all, TransitFilter> fg(g, boost::keep_all(), filter);
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

} // namespace

ClusterGraph ClusterGraph::build(const PlatformSpec& platform, int gpus)
{
  const SourceLocation where{platform.file, 1, 1};
  const int per_node = platform.node.gpus;
  if (gpus < 1 || gpus % per_node != 0)
    throw ConfigError(where,
                      std::to_string(gpus) + " GPUs is not a multiple of the " + std::to_string(per_node) +
                          " GPUs per node of platform '" + platform.name + "'",
                      "a positive multiple of " + std::to_string(per_node));

  ClusterGraph cg;
  cg.platform_ = platform;
  cg.gpus_ = gpus;
  cg.nodes_ = gpus / per_node;
  const int dn = platform.node.domain_nodes;
  cg.domains_ = (cg.nodes_ + dn - 1) / dn;
  if (cg.domains_ > 1 && platform.node.nics == 0)
    throw ConfigError(where,
                      "platform '" + platform.name + "' has no NICs, so it cannot span " + std::to_string(cg.domains_) +
                          " NVLink domains",
                      "at most " + std::to_string(platform.gpus_per_domain()) + " GPUs");

  GraphBuilder b(cg);
  for (int d = 0; d < cg.domains_; ++d) {
    int first = d * dn;
    b.add_domain(d, first, std::min(dn, cg.nodes_ - first));
  }
  if (cg.domains_ > 1 || platform.node.nics > 0)
    b.add_fabric(where);

  // Routing templates, on domain 0 (every domain is laid out alike).
  const Graph& g = cg.graph_;
  const int per_domain = std::min(dn, cg.nodes_) * per_node;
  cg.domain_routes_.assign(static_cast<std::size_t>(per_domain * per_domain), {});
  std::vector<int> arc_node(static_cast<std::size_t>(boost::num_edges(g)), -1);
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    int node = std::max(g[boost::source(*e, g)].node, g[boost::target(*e, g)].node);
    arc_node[static_cast<std::size_t>(g[*e].id)] = node;
  }
  auto to_step = [&](int arc, int node_src) {
    int node = arc_node[static_cast<std::size_t>(arc)];
    return RouteStep{node == node_src ? 0 : 1, arc - cg.node_arc_base_[static_cast<std::size_t>(node)]};
  };
  const bool staged = platform.node.scale_up == ScaleUpKind::pcie && !platform.node.p2p;
  for (int a = 0; a < per_domain; ++a)
    for (int bb = 0; bb < per_domain; ++bb) {
      if (a == bb)
        continue;
      VertexId va = cg.gpu_vertex_[static_cast<std::size_t>(a)];
      VertexId vb = cg.gpu_vertex_[static_cast<std::size_t>(bb)];
      std::vector<int> arcs;
      if (staged) {
        // no peer-to-peer: through the root complex (host memory) of the source's CPU
        VertexId cpu = va;
        for (auto [v, vend] = boost::vertices(g); v != vend; ++v)
          if (g[*v].kind == VertexKind::cpu && g[*v].node == g[va].node &&
              g[*v].local == g[va].local * platform.node.cpus / per_node)
            cpu = *v;
        arcs = shortest_arcs(g, va, cpu);
        auto rest = shortest_arcs(g, cpu, vb);
        arcs.insert(arcs.end(), rest.begin(), rest.end());
      } else {
        arcs = shortest_arcs(g, va, vb);
      }
      assert(!arcs.empty());
      int node_src = g[va].node;
      auto& steps = cg.domain_routes_[static_cast<std::size_t>(a * per_domain + bb)];
      for (int arc : arcs)
        steps.push_back(to_step(arc, node_src));
    }
  if (platform.node.nics > 0) {
    for (int l = 0; l < per_node; ++l) {
      VertexId gv = cg.gpu_vertex_[static_cast<std::size_t>(l)];
      VertexId nv = b.nics_[static_cast<std::size_t>(platform.node.nic_of_gpu[static_cast<std::size_t>(l)])];
      std::vector<int> up;
      std::vector<int> down;
      for (int arc : shortest_arcs(g, gv, nv))
        up.push_back(arc - cg.node_arc_base_[0]);
      for (int arc : shortest_arcs(g, nv, gv))
        down.push_back(arc - cg.node_arc_base_[0]);
      cg.nic_up_.push_back(up);
      cg.nic_down_.push_back(down);
    }
  }
  return cg;
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

double ClusterGraph::route(int a, int b, std::vector<int>& out) const
{
  double latency = 0;
  if (a == b)
    return latency;
  const int per_node = platform_.node.gpus;
  const int per_domain = platform_.gpus_per_domain();
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
    if (la != lb) {
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

} // namespace clustersim
