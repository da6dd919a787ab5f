#include "topology/TopologyFacts.hpp"

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>
#include <boost/graph/strong_components.hpp>
#include <boost/graph/visitors.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace clustersim {
namespace {

using FlowTraits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using FlowGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<boost::edge_capacity_t, long long,
                    boost::property<boost::edge_residual_capacity_t, long long,
                                    boost::property<boost::edge_reverse_t, FlowTraits::edge_descriptor>>>>;

/// Max flow from the GPUs in `from` to the GPUs in `to` (given as node ranges).
double max_flow_between(const ClusterGraph& cg, const std::vector<int>& from_gpus, const std::vector<int>& to_gpus)
{
  const Graph& g = cg.graph();
  const std::size_t n = boost::num_vertices(g);
  FlowGraph fg(n + 2);
  auto cap = boost::get(boost::edge_capacity, fg);
  auto rev = boost::get(boost::edge_reverse, fg);
  // integer capacities (bytes/s): push-relabel's flow check is exact only on integers
  auto add = [&](std::size_t a, std::size_t b, long long c) {
    auto e1 = boost::add_edge(a, b, fg).first;
    auto e2 = boost::add_edge(b, a, fg).first;
    cap[e1] = c;
    cap[e2] = 0;
    rev[e1] = e2;
    rev[e2] = e1;
  };
  for (auto [e, end] = boost::edges(g); e != end; ++e)
    add(boost::source(*e, g), boost::target(*e, g), std::llround(g[*e].bandwidth));
  const std::size_t s = n;
  const std::size_t t = n + 1;
  long long inf = 1;
  for (auto [e, end] = boost::edges(g); e != end; ++e)
    inf += std::llround(g[*e].bandwidth);
  for (int x : from_gpus)
    add(s, cg.gpu_vertex(x), inf);
  for (int x : to_gpus)
    add(cg.gpu_vertex(x), t, inf);
  return static_cast<double>(boost::push_relabel_max_flow(fg, s, t));
}

} // namespace

TopologyFacts compute_facts(const ClusterGraph& cg)
{
  const Graph& g = cg.graph();
  TopologyFacts f;
  f.gpus = cg.gpus();
  f.nodes = cg.nodes();
  f.domains = cg.domains();
  f.gpus_per_domain = cg.gpus_per_domain();
  f.fabric_levels = cg.fabric_levels();
  f.switches = cg.count(VertexKind::leaf) + cg.count(VertexKind::spine) + cg.count(VertexKind::core);
  f.vertices = static_cast<int>(boost::num_vertices(g));
  f.links = static_cast<int>(boost::num_edges(g) / 2);

  // Both arcs of every link exist, so strong components are the connected components.
  std::vector<int> comp(boost::num_vertices(g));
  int ncomp =
      boost::strong_components(g, boost::make_iterator_property_map(comp.begin(), boost::get(boost::vertex_index, g)));
  f.connected = ncomp == 1;
  bool reach = true;
  int c0 = comp[cg.gpu_vertex(0)];
  for (int x = 0; x < cg.gpus(); ++x)
    reach = reach && comp[cg.gpu_vertex(x)] == c0;
  f.all_gpus_reachable = reach;

  // Diameter: BFS from every GPU of the first and the last node (the generators repeat one
  // node template, so those hold the extreme eccentricities); every GPU as source below 512.
  std::vector<int> sources;
  const int per_node = cg.platform().node.gpus;
  if (cg.gpus() <= 512) {
    for (int x = 0; x < cg.gpus(); ++x)
      sources.push_back(x);
  } else {
    for (int x = 0; x < per_node; ++x) {
      sources.push_back(x);
      sources.push_back(cg.gpus() - per_node + x);
    }
  }
  std::vector<int> dist(boost::num_vertices(g));
  int diameter = 0;
  for (int src : sources) {
    std::fill(dist.begin(), dist.end(), 0);
    boost::breadth_first_search(g, cg.gpu_vertex(src),
                                boost::visitor(boost::make_bfs_visitor(boost::record_distances(
                                    boost::make_iterator_property_map(dist.begin(), boost::get(boost::vertex_index, g)),
                                    boost::on_tree_edge()))));
    for (int x = 0; x < cg.gpus(); ++x)
      diameter = std::max(diameter, dist[cg.gpu_vertex(x)]);
  }
  f.diameter_hops = diameter;

  // Bisection: max flow from the first half of the nodes to the second half (and between
  // interleaved halves, which cut every leaf group on a fat-tree); the minimum of both.
  if (cg.nodes() >= 2) {
    std::vector<int> a;
    std::vector<int> b;
    const int half = cg.nodes() / 2;
    for (int x = 0; x < cg.gpus(); ++x)
      (cg.node_of(x) < half ? a : b).push_back(x);
    double split = max_flow_between(cg, a, b);
    a.clear();
    b.clear();
    for (int x = 0; x < cg.gpus(); ++x)
      (cg.node_of(x) % 2 == 0 ? a : b).push_back(x);
    double interleaved = max_flow_between(cg, a, b);
    f.bisection_bandwidth = std::min(split, interleaved);
  } else if (cg.gpus() >= 2) {
    std::vector<int> a;
    std::vector<int> b;
    for (int x = 0; x < cg.gpus(); ++x)
      (x < cg.gpus() / 2 ? a : b).push_back(x);
    f.bisection_bandwidth = max_flow_between(cg, a, b);
  }

  // Injection: NVLink (or PCIe) out of one GPU; network share of one GPU.
  VertexId g0 = cg.gpu_vertex(0);
  double up = 0;
  double pcie = 0;
  for (auto [e, end] = boost::out_edges(g0, g); e != end; ++e) {
    if (g[*e].kind == LinkKind::nvlink)
      up += g[*e].bandwidth;
    else if (g[*e].kind == LinkKind::pcie)
      pcie = std::max(pcie, g[*e].bandwidth);
  }
  f.injection_scale_up = up > 0 ? up : pcie;
  const NodeSpec& node = cg.platform().node;
  if (node.nics > 0) {
    std::vector<int> sharing(static_cast<std::size_t>(node.nics), 0);
    for (int x : node.nic_of_gpu)
      ++sharing[static_cast<std::size_t>(x)];
    int nic0 = node.nic_of_gpu[0];
    double nic_share = node.nic.bandwidth / sharing[static_cast<std::size_t>(nic0)];
    double single = std::min(node.nic.bandwidth, pcie > 0 ? pcie : node.nic.bandwidth);
    f.injection_scale_out_single = single;
    f.injection_scale_out = std::min(nic_share, single);
  }
  return f;
}

} // namespace clustersim
