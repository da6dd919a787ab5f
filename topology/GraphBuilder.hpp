#pragma once
/// Builds a ClusterGraph: domains and nodes from the node template (GraphBuilder.cpp), then
/// the scale-out fabric (FabricBuilder.cpp), in a fixed order so that every node's arcs are
/// contiguous and laid out alike (the routing tables rely on it). Internal to topology/.

#include "topology/ClusterGraph.hpp"

#include <string>
#include <utility>
#include <vector>

namespace clustersim {

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

  int new_resource(const std::string& name, LinkKind kind, double bw, double lat, LinkTier tier)
  {
    cg_.resources_.push_back(Resource{name, kind, bw, lat, tier});
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
  /// The scale-out network's shape from the node count alone, with every radix check made
  /// (FabricBuilder.cpp): called before any vertex is built, so that a fabric that cannot hold
  /// the job costs nothing (4M GPUs built a 9 GB graph before the radix was checked).
  void size_fabric(const SourceLocation& where);
  /// The scale-out network over every NIC of the cluster, of the shape size_fabric found.
  void add_fabric();
  /// The links the fabric will have (every cable its own under ECMP), once sized.
  long long fabric_links() const;

private:
  struct Leaves; ///< where the NICs attach: leaf switches, ports per leaf
  Leaves place_leaves();
  void link_nics(const std::vector<VertexId>& leaves);
  /// The leaves each spine layer joins: all of them, or one rail's each (rail-only).
  std::vector<std::vector<int>> spine_planes(const Leaves& l) const;
  /// For a plane of `leaves` leaves: the parallel cables from a leaf to each spine, and the
  /// spines (one split for add_spines and add_spines_ecmp, which must build the same switches).
  std::pair<int, int> spine_split(const Leaves& l, int leaves) const;
  void add_spines(const Leaves& l);
  void add_pods(const Leaves& l);
  /// ECMP: the same switches with every cable its own link, and the groups routing picks from.
  /// A switch-to-switch cable's rate as routing delivers it (adaptive: at its efficiency).
  double cable_bandwidth() const;
  void add_spines_ecmp(const Leaves& l);
  void add_pods_ecmp(const Leaves& l);
  int new_group(int tier, int leaf = -1);
  /// A cable from a lower switch up to an upper one: its up arc joins group `up` (reaching
  /// `up_to`), its down arc group `down` (reaching `down_to`).
  void add_cable(VertexId lower, VertexId upper, int up, int up_to, int down, int down_to);
  [[noreturn]] void radix_error(const SourceLocation& where, const std::string& why) const;

  static LinkTier tier_of(LinkKind kind, VertexKind a, VertexKind b)
  {
    if (kind == LinkKind::nvlink)
      return LinkTier::scale_up;
    if (kind != LinkKind::network)
      return LinkTier::host;
    if (a == VertexKind::nic || b == VertexKind::nic)
      return LinkTier::nic;
    if (a == VertexKind::core || b == VertexKind::core)
      return LinkTier::spine_up;
    return LinkTier::leaf_up;
  }

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
      res = new_resource(name, kind, bw, lat, tier_of(kind, ga.kind, gb.kind));
    }
    e.resource = res;
    boost::add_edge(a, b, e, cg_.graph_);
    cg_.arc_resource_.push_back(res);
    ++next_arc_;
  }

  void add_node(int node, int domain, VertexId nvswitch);

  ClusterGraph& cg_;
  int next_arc_ = 0;
  /// size_fabric's result: NIC ports, ports per leaf down and up, leaves, levels
  struct FabricShape {
    long long endpoints = 0;
    int down = 0, up = 0, leaves = 0, group_nodes = 0, levels = 0;
  } shape_;

public:
  std::vector<VertexId> nics_; ///< global NIC vertices in order
};


} // namespace clustersim
