#pragma once
/// A platform of the catalog (`platforms/NAME.yaml`): a node template (GPUs, intra-node fabric,
/// PCIe tree, NICs), the scale-out fabric, protocol constants and cost figures.
///
/// It describes a cluster of any size; `ClusterGraph::build` instantiates it for N GPUs.
/// Every bandwidth here is per direction (vendor figures marked `bidirectional: true` in the
/// YAML are halved when read).

#include "topology/GpuSpec.hpp"

#include <cstdint>

#include <memory>
#include <string>
#include <vector>

namespace clustersim {

enum class ScaleUpKind { nvswitch, nvlink_mesh, pcie };
enum class FabricKind { single_switch, fat_tree, rail_optimized, rail_only };
/// How switches spread flows over parallel up-links: ideal (one fluid capacity, the spraying
/// limit), ecmp (each GPU pair's flow hashed onto one cable: the switches hash a 5-tuple that
/// a connection's queue pairs share), ecmp_qp (`ecmp-qp`: each queue pair hashed apart, Meta's
/// E-ECMP), adaptive (fluid, at the sourced efficiency of adaptive routing), by_destination
/// (`static`: each destination NIC's flows on one cable chosen by its port, InfiniBand's D-mod-k
/// tables).
enum class FabricRouting { ideal, ecmp, ecmp_qp, adaptive, by_destination };

/// Whether switches hash flows onto cables (ecmp, ecmp-qp): the routings a seed changes.
inline bool hashed(FabricRouting r) { return r == FabricRouting::ecmp || r == FabricRouting::ecmp_qp; }

/// Which switch-to-switch cables another tenant's traffic crosses (cluster.background): a
/// leaf's cables to the tier above (`leaf-up`), an aggregation switch's cables to the cores
/// (`spine-up`, three-level fabrics), or both (`all`).
enum class BackgroundTier { leaf_up, spine_up, all };

const std::vector<std::string>& background_tier_names();
const char* to_string(BackgroundTier t);
BackgroundTier background_tier(const std::string& name);

const std::vector<std::string>& scale_up_kind_names();
const std::vector<std::string>& fabric_kind_names();
const char* to_string(ScaleUpKind k);
const char* to_string(FabricKind k);
const std::vector<std::string>& fabric_routing_names();
const char* to_string(FabricRouting r);
/// The routing called `name` (one of fabric_routing_names(), checked by the schema).
FabricRouting fabric_routing(const std::string& name);

/// Per-direction bandwidth (bytes/s) and one-way latency (s) of a link.
struct LinkSpec {
  double bandwidth = 0;
  double latency = 0;
};

/// A direct NVLink connection between two GPUs of a node (nvlink-mesh), with its lane count.
struct MeshLink {
  int a = 0;
  int b = 0;
  int lanes = 1;
};

struct NodeSpec {
  GpuSpec gpu;
  int gpus = 0; ///< GPUs per node

  // Scale-up (NVLink) fabric
  ScaleUpKind scale_up = ScaleUpKind::nvswitch;
  LinkSpec nvlink;              ///< nvswitch: per GPU port; nvlink-mesh: per lane
  int nvswitches = 0;           ///< NVSwitch chips per domain (for the graph's documentation only)
  std::vector<MeshLink> mesh;   ///< nvlink-mesh only
  int domain_nodes = 1;         ///< nodes sharing one NVLink domain (18 for GB200 NVL72)
  std::string nvlink_transport; ///< protocol-table key for NVLink traffic, e.g. "nvlink3"

  // PCIe tree
  LinkSpec pcie;         ///< one x16 link between a device and its switch (or root port)
  LinkSpec pcie_uplink;  ///< switch to CPU root complex
  int pcie_switches = 0; ///< 0: devices sit on CPU root ports
  int cpus = 1;
  LinkSpec cpu_link;          ///< socket interconnect (UPI / QPI / xGMI)
  bool p2p = true;            ///< PCIe peer-to-peer; false: GPU-GPU traffic is staged through host memory
  std::string pcie_transport; ///< protocol-table key for PCIe GPU-GPU traffic

  // Scale-out
  int nics = 0;
  LinkSpec nic;                ///< per NIC, per direction
  std::vector<int> nic_of_gpu; ///< local NIC index serving each local GPU
  std::string nic_transport;   ///< protocol-table key for network traffic, e.g. "ib-hdr"
};

struct FabricSpec {
  FabricKind kind = FabricKind::fat_tree;
  int radix = 64;                ///< ports per switch
  double oversubscription = 1.0; ///< leaf down-links : up-links
  int levels = 0;                ///< 0 = the fewest that fit
  LinkSpec link;                 ///< switch-to-switch cable (default: the NIC figure)
  double switch_latency = 0;     ///< per switch traversal
  int rail_group_nodes = 0;      ///< rail-optimized: nodes per scalable unit (0 = leaf down ports)
  FabricRouting routing = FabricRouting::ideal;
  std::uint32_t seed = 0; ///< ecmp: salts every switch's hash (another seed, another placement)
  /// adaptive: the share of the switch-to-switch cables' rate that adaptive routing delivers
  double adaptive_efficiency = 0.95;
  /// Queue pairs per connection between two GPUs (NCCL_IB_QPS_PER_CONNECTION); ecmp-qp hashes
  /// each apart and splits a connection's traffic evenly over them
  int qps_per_connection = 1;
  /// Another tenant's steady traffic (cluster.background): the share of every cable of
  /// `background_tier` it holds, in each direction, which the job's flows cannot take back
  double background_load = 0;
  BackgroundTier background_tier = BackgroundTier::all;
};

/// Which $/GPU-hour the cost figures use: the rental price, or the owned cluster's (its capex
/// amortised over `years` plus energy; Prices.hpp).
enum class CostBasis { rental, owned };
const std::vector<std::string>& cost_basis_names();

struct PriceTable;

struct CostSpec {
  double usd_per_gpu_hour = 0;    ///< rental price of one GPU-hour
  double node_overhead_watts = 0; ///< CPUs, NICs, fans, PSU losses per node, on top of GPU board power
  double pue = 1.0;               ///< data-centre power usage effectiveness
  CostBasis basis = CostBasis::rental;
  // Overrides of the price table (0: the table's)
  double node_usd = 0; ///< one node
  double years = 0;    ///< amortisation of the capex
  double usd_per_kwh = 0;
  double facility_usd_per_kw = 0; ///< build-out per kW of IT load
  /// The catalog's price table (platforms/prices.yaml); null for a platform parsed without one.
  std::shared_ptr<const PriceTable> prices;
  SourceLocation basis_where; ///< where `basis` was written (or the platform's file)
};

struct PlatformSpec {
  std::string name;
  std::string description;
  std::string file; ///< where it was read from
  NodeSpec node;
  FabricSpec fabric;
  CostSpec cost;
  /// Figures that parse but are beyond what the hardware of the time has (a NIC's rate
  /// written in bytes, a one-way NVLink figure that is the two-way one).
  std::vector<ConfigWarning> warnings;

  int gpus_per_domain() const { return node.gpus * node.domain_nodes; }
};

/// Empty when GPUs doing identical work cannot slow one another on this platform — NVSwitch
/// scale-up (every GPU has private switch ports), one NIC per GPU, and leaves that are not
/// oversubscribed (a leaf's up-link bundle carries all its NICs at line rate, so no bundle can
/// be a bottleneck: every flow's bottleneck is at its own endpoints). Otherwise the reason.
/// Folding symmetric replicas into one simulated rank is exact only in the first case.
std::string replica_contention(const PlatformSpec& p);

/// The keys of a platform file and of its sections.
const Section& platform_section();
const Section& node_section();
const Section& scale_up_section();
const Section& pcie_section();
const Section& nics_section();
const Section& fabric_section();
/// fabric.background (and an experiment's cluster.background): load and tier.
const Section& background_section();
/// Reads a background's load and tier into `fabric`; errors name the section as `context`
/// (fabric.background in a platform, cluster.background in an experiment).
void read_background(const Layers& yaml, const std::string& context, FabricSpec& fabric);
const Section& cost_section();

/// Reads a platform file; its GPU is a catalog id of `gpus`, described inline, or a catalog
/// GPU with overrides. Transport names must be among `transports` (the protocol table's; an
/// empty list accepts any). Errors are ConfigErrors in the file.
PlatformSpec load_platform(const std::string& path, const GpuCatalog& gpus,
                           const std::vector<std::string>& transports = {});
/// The same from a parsed document (its file name is the platform's `file`). With `over`, `root`
/// is the base platform and `over` a document of overrides (a platform with `base:`, or an
/// experiment's inline cluster.platform): see Layers; `over`'s `base` is the caller's to resolve.
PlatformSpec parse_platform(const YamlNode& root, const GpuCatalog& gpus,
                            const std::vector<std::string>& transports = {}, const YamlNode* over = nullptr);

} // namespace clustersim
