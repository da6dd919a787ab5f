#pragma once
/// The cluster as a Boost.Graph: GPUs, NVSwitch, PCIe switches, CPUs, NICs and leaf / spine /
/// core switches as vertices; every physical link as two arcs, one per direction, each with
/// its own bandwidth and latency.
///
/// Besides the graph itself the class keeps what routing needs, so that a route between two
/// GPUs is computed in O(path length): intra-domain routes and GPU→NIC paths are found once
/// with Dijkstra on the node template, and the scale-out part follows the fat-tree up to the
/// lowest common switch tier and back down.
///
/// With `fabric.routing: ideal`, parallel up-links of a switch toward the same tier
/// (leaf→spines, pod→cores) form one *resource*: a single shared capacity equal to their sum.
/// That is the flow-level reading of perfect spreading (packet spraying); every other arc is a
/// resource of its own. With `ecmp` every cable is a resource of its own, and a flow between two
/// GPUs takes, at every switch it climbs (and at a spine with several cables down to one
/// leaf), the cable its hash picks among the live ones: one path per GPU pair for the whole
/// job, as NCCL's long-lived queue pairs are hashed by static ECMP. `static` keeps the cables
/// of `ecmp` and replaces the hash by the destination's digits (D-mod-k, see append_ecmp): no
/// seed, and the NICs of one leaf are reached over distinct cables. `adaptive` is `ideal`'s one
/// capacity, at the share of the cables' rate that adaptive routing delivers.

#include "topology/PlatformSpec.hpp"

#include <boost/graph/adjacency_list.hpp>

#include <cstdint>

#include <string>
#include <vector>

namespace clustersim {

enum class VertexKind { gpu, nvswitch, pcie_switch, cpu, nic, leaf, spine, core };
enum class LinkKind { nvlink, pcie, cpu_link, network };

const char* to_string(VertexKind k);
const char* to_string(LinkKind k);

struct VertexInfo {
  VertexKind kind = VertexKind::gpu;
  int node = -1;   ///< node index, -1 for fabric switches and NVLink-domain switches
  int domain = -1; ///< NVLink domain, -1 for fabric switches
  int local = -1;  ///< index among the vertices of its kind in its node (or its tier)
  int global = -1; ///< index among all vertices of its kind
};

struct ArcInfo {
  LinkKind kind = LinkKind::network;
  double bandwidth = 0; ///< bytes/s in this direction
  double latency = 0;   ///< s, including the traversal of the switch the arc enters
  int lanes = 1;
  int resource = -1; ///< index into ClusterGraph::resources()
  int id = -1;       ///< index of this arc (dense, 0..arcs-1)
  int reverse = -1;  ///< id of the opposite arc
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, VertexInfo, ArcInfo>;
using VertexId = Graph::vertex_descriptor;
using ArcId = Graph::edge_descriptor;

/// A capacity that flows share: one arc, or a bundle of parallel arcs (see class comment).
/// Where a link sits: inside the NVLink domain, inside the node's PCIe tree, between a NIC and
/// its leaf, between a leaf and the tier above, or between that tier and the cores.
enum class LinkTier : std::uint8_t { scale_up, host, nic, leaf_up, spine_up };
const char* to_string(LinkTier t);

struct Resource {
  std::string name;
  LinkKind kind = LinkKind::network;
  double bandwidth = 0; ///< bytes/s
  double latency = 0;   ///< s, of one traversal
  LinkTier tier = LinkTier::scale_up;
};

/// Where two GPUs are relative to each other; decides the protocol constants of a flow.
enum class PathClass { same_gpu, scale_up, scale_out };

/// The most physical links (each two arcs) a cluster graph may hold. `platform show` of 131,072
/// H100 on a 3-level radix-128 fat-tree is 770,048 links in 768 MB, so this bound is about 2 GB,
/// some 350,000 DGX H100 GPUs.
inline constexpr long long kMaxGraphLinks = 1LL << 21;

class ClusterGraph {
public:
  /// Instantiates `platform` for `gpus` GPUs. Throws ConfigError (in the platform file) when
  /// the count is not a multiple of the node size or the fabric radix cannot hold the nodes.
  /// Builds the graph; a fabric whose radix cannot hold the job, and a graph of more than
  /// kMaxGraphLinks links, are ConfigErrors found before it is built.
  static ClusterGraph build(const PlatformSpec& platform, int gpus);
  /// Nodes of each NVLink domain a job of `nodes` nodes takes (see build).
  static int job_domain_nodes(const PlatformSpec& platform, int nodes);

  const PlatformSpec& platform() const { return platform_; }
  const Graph& graph() const { return graph_; }
  const std::vector<Resource>& resources() const { return resources_; }

  int gpus() const { return gpus_; }
  int nodes() const { return nodes_; }
  int domains() const { return domains_; }
  int fabric_levels() const { return fabric_levels_; }
  int count(VertexKind k) const;

  VertexId gpu_vertex(int gpu) const { return gpu_vertex_[static_cast<std::size_t>(gpu)]; }
  int node_of(int gpu) const { return gpu / platform_.node.gpus; }
  int domain_of(int gpu) const { return node_of(gpu) / domain_nodes_; }
  /// GPUs of one NVLink domain this cluster uses (a spanning job takes an equal share of each).
  int gpus_per_domain() const { return domain_nodes_ * platform_.node.gpus; }
  int local_of(int gpu) const { return gpu % platform_.node.gpus; }
  /// Global NIC index serving a GPU, -1 when the node has none.
  int nic_of(int gpu) const;
  /// Leaf switch index of a GPU's NIC, -1 without fabric.
  int leaf_of(int gpu) const;
  PathClass path_class(int gpu_a, int gpu_b) const;

  /// Appends the resources a flow from gpu_a to gpu_b crosses, in order, and returns the sum
  /// of their latencies. Empty for a == b. `path` < paths() picks one of the routes a GPU
  /// pair's traffic is split over (ecmp-qp: the queue pair whose hash chose it).
  double route(int gpu_a, int gpu_b, std::vector<int>& resources, int path = 0) const;
  /// The routes a GPU pair's traffic is split over, an equal share on each: the connection's
  /// queue pairs under ecmp-qp (each hashed apart, NCCL posting messages round-robin), else 1.
  int paths() const { return paths_; }
  /// The rate a GPU pair's traffic reaches alone: its share on each route's resources against
  /// their bandwidth (the narrowest resource when paths() is 1).
  double pair_bandwidth(int gpu_a, int gpu_b) const;

  /// The share of a link of tier `t` that another tenant's steady traffic holds
  /// (cluster.background), already taken from its bandwidth: 0 where there is none.
  double background_share(LinkTier t) const;

  // ---- fault injection ----
  /// A vertex's name: its kind and global index ("spine0", "leaf3", "nic12", "gpu5").
  std::string vertex_name(VertexId v) const;
  /// The vertex called `name`, or -1.
  long long find_vertex(const std::string& name) const;
  /// Ids of the arcs between two vertices (both directions), or touching one (b == -1).
  std::vector<int> arcs_of(long long a, long long b = -1) const;
  /// Scales one arc's bandwidth by `factor` (0: down) and its resource with it: a bundle of
  /// parallel up-links loses that arc's share (ideal spreading over the rest), any other
  /// resource is the arc itself.
  void scale_arc(int arc, double factor);
  /// Whether switches put each flow on one cable (fabric.routing: ecmp, or static).
  bool ecmp() const { return ecmp_; }
  /// Under ECMP or static routing, after faults: "" when every leaf still reaches every other
  /// over live cables, else which leaf cannot reach which.
  std::string ecmp_cut() const;

  /// The ECMP hash of a flow from gpu_a to gpu_b at the switch choice `group` (an index into
  /// the ECMP groups); the cable taken is this hash modulo the cables that lead on.
  std::uint64_t ecmp_hash(int gpu_a, int gpu_b, int group, int path = 0) const;

private:
  struct RouteStep {
    int node_sel; ///< 0: arc of the source's node, 1: of the destination's node
    int local_arc;
  };
  void append_local(const std::vector<RouteStep>& steps, int node_src, int node_dst, std::vector<int>& out,
                    double& latency) const;
  /// The scale-out hops between two leaves under ECMP (see class comment).
  void append_ecmp(int a, int b, int leaf_a, int leaf_b, int path, std::vector<int>& out, double& latency) const;
  /// Picks the cable of ECMP group `group` for the flow a → b among the live ones that still
  /// lead to `leaf_b` (a switch learns of a failed path and withdraws it), appends it, and
  /// returns its index in the group. The choice is the flow's hash under ECMP, `digit` (the
  /// destination's) under static routing, modulo the cables that lead on.
  std::size_t take_cable(int a, int b, int path, int group, int leaf_b, int pod_b, std::uint64_t digit,
                         std::vector<int>& out, double& latency) const;
  /// Of the cables of `group` to the switch that cable `i` reaches, which one `i` is.
  int lane_of(int group, std::size_t i) const;
  bool cable_alive(int arc) const { return resources_[static_cast<std::size_t>(arc_resource(arc))].bandwidth > 0; }
  bool group_alive(int group) const;
  /// Whether the cable `i` of group `group` (at tier `tier`: 0 leaf up, 1 aggregation up, 2 down)
  /// still leads to leaf `leaf_b` of pod `pod_b`.
  bool leads_to(int group, std::size_t i, int tier, int leaf_b, int pod_b) const;
  int arc_resource(int arc) const { return arc_resource_[static_cast<std::size_t>(arc)]; }

  /// The routing templates, laid out on domain 0 (every domain is alike): the arcs between
  /// each pair of its GPUs and between each GPU of a node and its NIC.
  void route_domain(const std::vector<VertexId>& nics);
  /// Takes the background's share from every cable of its tier, bundles included.
  void take_background();

  friend class GraphBuilder;

  PlatformSpec platform_;
  Graph graph_;
  std::vector<Resource> resources_;
  std::vector<int> arc_resource_;
  std::vector<VertexId> gpu_vertex_;
  int gpus_ = 0;
  int nodes_ = 0;
  int domains_ = 0;
  int domain_nodes_ = 1; ///< nodes per NVLink domain in use
  int fabric_levels_ = 0;
  int rails_ = 0; ///< rail-only: the rails (NICs per node), each a network of its own; else 0
  std::vector<int> vertex_count_;

  // routing tables
  std::vector<int> node_arc_base_;                    ///< first arc id of each node
  std::vector<std::vector<RouteStep>> domain_routes_; ///< [local_a * per_domain + local_b]
  std::vector<std::vector<int>> nic_up_;              ///< per local GPU: local arcs GPU → its NIC
  std::vector<std::vector<int>> nic_down_;            ///< per local GPU: local arcs NIC → GPU
  std::vector<int> nic_leaf_up_;                      ///< per global NIC: arc NIC → leaf
  std::vector<int> nic_leaf_down_;                    ///< per global NIC: arc leaf → NIC
  std::vector<int> leaf_of_nic_;
  std::vector<int> port_of_nic_; ///< per global NIC: its down-port on its leaf
  std::vector<int> pod_of_leaf_;
  std::vector<int> leaf_up_res_, leaf_down_res_; ///< per leaf, bundle toward the tier above
  std::vector<int> pod_up_res_, pod_down_res_;   ///< per pod (3 levels only)

  // ECMP (fabric.routing: ecmp): the cables a switch chooses among, each its own resource
  struct EcmpGroup {
    std::vector<int> arcs; ///< the cables, in port order
    std::vector<int> to;   ///< per cable: the switch it reaches (spine, aggregation index, core)
  };
  bool ecmp_ = false;           ///< one cable per flow and switch (ecmp or static)
  bool by_destination_ = false; ///< static: the destination's port picks, not a hash
  int paths_ = 1;               ///< ecmp-qp: the queue pairs of a connection, each hashed apart
  bool ecmp_faults_ = false; ///< a cable has failed: choices check where cables lead
  std::uint32_t seed_ = 0;
  int leaf_count_ = 0;
  int leaf_up_ = 0; ///< up-links per leaf
  int pods_ = 0;
  std::vector<EcmpGroup> ecmp_groups_;
  std::vector<int> group_tier_;    ///< per group: 0 a leaf's up cables, 1 an aggregation switch's, 2 cables down
  std::vector<int> leaf_of_group_; ///< per group: the leaf whose up cables it holds, else -1
  std::vector<int> leaf_up_group_;      ///< per leaf: its up cables (to: spine, or aggregation index)
  std::vector<int> spine_down_group_;   ///< 2 levels, [spine * leaves + leaf]: the cables down to the leaf
  std::vector<int> agg_up_group_;       ///< 3 levels, [pod * leaf_up + a]: aggregation switch's up cables (to: core)
  std::vector<int> core_down_group_;    ///< 3 levels, [core * pods + pod]: the cables down to that pod
  std::vector<int> agg_leaf_down_group_; ///< 3 levels, [leaf * leaf_up + a]: the cable from aggregation a down to it
};

} // namespace clustersim
