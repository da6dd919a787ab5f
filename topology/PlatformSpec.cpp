#include "topology/PlatformSpec.hpp"

#include "topology/config/Suggest.hpp"

#include <algorithm>
#include <cstdio>

namespace clustersim {

const std::vector<std::string>& scale_up_kind_names()
{
  static const std::vector<std::string> names{"nvswitch", "nvlink-mesh", "pcie"};
  return names;
}

const std::vector<std::string>& fabric_kind_names()
{
  static const std::vector<std::string> names{"single-switch", "fat-tree", "rail-optimized", "rail-only"};
  return names;
}

const std::vector<std::string>& fabric_routing_names()
{
  static const std::vector<std::string> names{"ideal", "ecmp", "ecmp-qp", "adaptive", "static"};
  return names;
}

FabricRouting fabric_routing(const std::string& name)
{
  const auto& names = fabric_routing_names();
  return static_cast<FabricRouting>(std::find(names.begin(), names.end(), name) - names.begin());
}

const char* to_string(FabricRouting r)
{
  return fabric_routing_names()[static_cast<std::size_t>(r)].c_str();
}

const std::vector<std::string>& background_tier_names()
{
  static const std::vector<std::string> names{"leaf-up", "spine-up", "all"};
  return names;
}

const char* to_string(BackgroundTier t)
{
  return background_tier_names()[static_cast<std::size_t>(t)].c_str();
}

BackgroundTier background_tier(const std::string& name)
{
  const auto& names = background_tier_names();
  return static_cast<BackgroundTier>(std::find(names.begin(), names.end(), name) - names.begin());
}

const char* to_string(ScaleUpKind k)
{
  return scale_up_kind_names()[static_cast<std::size_t>(k)].c_str();
}

const char* to_string(FabricKind k)
{
  return fabric_kind_names()[static_cast<std::size_t>(k)].c_str();
}

const Section& platform_section()
{
  using K = KeySpec;
  static const Section s{"platform",
                         "a platform file (platforms/NAME.yaml, or any file named by cluster.platform)",
                         {
                             K::string("name", "", "the platform's name in reports").must(),
                             K::string("base", "",
                                       "a platform (catalog name or file) this one overrides: the keys "
                                       "written here replace the base's, sections merge key by key, and "
                                       "name defaults to the base's with the overrides listed"),
                             K::string("description", "", "one line for `platform list`"),
                             K::section("node", "platform.node", "the node template").must(),
                             K::section("fabric", "platform.fabric", "the scale-out network (needed with NICs)"),
                             K::section("cost", "platform.cost", "price and power figures"),
                         }};
  return s;
}

const Section& node_section()
{
  using K = KeySpec;
  static const Section s{
      "platform.node",
      "one node: its GPUs, scale-up fabric, PCIe tree and NICs",
      {
          K::value("gpu", "a GPU id of platforms/gpus.yaml, or a mapping: a GPU described inline (section gpu), "
                          "or {base: ID, ...} overriding a catalog GPU's figures")
              .must(),
          K::integer("gpus", 0, 1, 1024, "GPUs per node").must().counts("GPUs"),
          K::choice("cpu", "", host_cpu_names(), "the CPU class that issues the GPUs' kernels (x86, grace)")
              .computed("the GPU's usual host (its host_cpu in platforms/gpus.yaml)"),
          K::section("scale_up", "platform.node.scale_up", "NVSwitch, NVLink mesh, or PCIe only").must(),
          K::section("pcie", "platform.node.pcie", "the PCIe tree of GPUs, NICs and CPUs").must(),
          K::section("nics", "platform.node.nics", "scale-out network interfaces").must(),
      }};
  return s;
}

const Section& scale_up_section()
{
  using K = KeySpec;
  static const Section s{
      "platform.node.scale_up",
      "the scale-up (NVLink) fabric of a node or of a multi-node NVLink domain",
      {
          K::choice("kind", "", scale_up_kind_names(), "how the GPUs of a node reach each other")
              .must()
              .called("scale-up kind"),
          K::quantity_of("bandwidth", Quantity::bandwidth, "", 1.25e5, 1e14,
                         "nvswitch: per GPU port; nvlink-mesh: per lane")
              .computed("required unless kind is pcie"),
          K::boolean("bidirectional", false, "the figure counts both directions (halved)"),
          K::quantity_of("latency", Quantity::time, "", 0, 1, "one traversal").computed("required unless pcie"),
          K::string("transport", "", "protocol table of platforms/collectives.yaml (e.g. nvlink4)")
              .computed("required unless pcie"),
          K::integer("switches", 1, 1, 1024, "NVSwitch chips per domain (documentation)"),
          K::integer("domain_nodes", 1, 1, 1024, "nodes sharing one NVLink domain (18 for GB200 NVL72)"),
          K::list("links", "nvlink-mesh: [gpu_a, gpu_b, lanes] per linked pair"),
      }};
  return s;
}

const Section& pcie_section()
{
  using K = KeySpec;
  static const Section s{
      "platform.node.pcie",
      "the PCIe tree",
      {
          K::quantity_of("bandwidth", Quantity::bandwidth, "", 1.25e5, 1e14, "one x16 link, device to switch").must(),
          K::boolean("bidirectional", false, "the figure counts both directions (halved)"),
          K::quantity_of("latency", Quantity::time, "", 0, 1, "one traversal").must(),
          K::integer("switches", 0, 0, 64, "PCIe switches (0: devices on CPU root ports)"),
          K::quantity_of("uplink", Quantity::bandwidth, "", 1.25e5, 1e14, "switch to CPU root complex")
              .computed("bandwidth"),
          K::integer("cpus", 1, 1, 8, "CPU sockets"),
          K::quantity_of("cpu_link", Quantity::bandwidth, "", 1.25e5, 1e14, "socket interconnect (UPI, xGMI)")
              .computed("required with more than one CPU"),
          K::quantity_of("cpu_link_latency", Quantity::time, "", 0, 1, "socket interconnect latency")
              .computed("latency"),
          K::boolean("p2p", true, "PCIe peer-to-peer (false: GPU traffic staged through host memory)"),
          K::string("transport", "", "protocol table of platforms/collectives.yaml (e.g. pcie5)").must(),
      }};
  return s;
}

const Section& nics_section()
{
  using K = KeySpec;
  static const Section s{
      "platform.node.nics",
      "scale-out NICs",
      {
          K::integer("count", 0, 0, 64, "NICs per node").must(),
          K::quantity_of("bandwidth", Quantity::bandwidth, "", 1.25e5, 1e14, "per NIC").computed("required with NICs"),
          K::boolean("bidirectional", false, "the figure counts both directions (halved)"),
          K::quantity_of("latency", Quantity::time, "", 0, 1, "NIC latency").computed("required with NICs"),
          K::string("transport", "", "a row of the transports: table of platforms/collectives.yaml (ib-edr, ib-hdr, ib-ndr, ib-xdr, roce, opa)")
              .computed("required with NICs"),
          K::list("gpus", "the local NIC of each GPU").computed("GPU g uses NIC g * count / gpus"),
      }};
  return s;
}

const Section& fabric_section()
{
  using K = KeySpec;
  static const Section s{
      "platform.fabric",
      "the scale-out network",
      {
          K::choice("kind", "", fabric_kind_names(),
                    "topology of the switches: single-switch; fat-tree (a node's NICs on consecutive leaf ports); "
                    "rail-optimized (one leaf per rail and scalable unit, spines shared by all rails); rail-only "
                    "(each rail its own network, no spine joins two rails: a flow to another rail first crosses "
                    "NVLink to the GPU on the destination's rail, as NCCL's PXN does; with two levels, DeepSeek's "
                    "multi-plane fat-tree)")
              .must()
              .called("fabric kind"),
          K::integer("radix", 64, 2, 4096, "ports per switch"),
          K::number("oversubscription", 1.0, 1.0 / 64, 64.0,
                    "leaf down-links : up-links in ports (2: 2:1; below 1, more up- than down-links: 0.142857 "
                    "for 1:7); with link_bandwidth above the NICs' the bandwidth ratio is lower")
              .counts("ratio"),
          K::integer("levels", 0, 0, 3, "switch tiers (0: the fewest that fit)"),
          K::quantity_of("switch_latency", Quantity::time, "", 0, 1e-3, "per switch traversal").must(),
          K::quantity_of("link_bandwidth", Quantity::bandwidth, "", 1.25e5, 1e14, "switch-to-switch cable")
              .computed("the NIC bandwidth"),
          K::quantity_of("link_latency", Quantity::time, "0s", 0, 1e-3, "switch-to-switch cable"),
          K::integer("rail_group_nodes", 0, 0, 100000, "rail-optimized and rail-only: nodes per scalable unit (0: a leaf's ports)"),
          K::choice("routing", "ideal", fabric_routing_names(),
                    "ideal: parallel up-links as one capacity (the spraying limit); ecmp: each GPU pair's flow "
                    "hashed onto one cable; ecmp-qp: each of a connection's qps_per_connection queue pairs hashed "
                    "apart (Meta's E-ECMP); adaptive: one capacity at adaptive_efficiency; static: each "
                    "destination NIC's flows on the cable its leaf port selects (InfiniBand's D-mod-k tables)"),
          K::integer("seed", 0, 0, 2147483647, "ecmp, ecmp-qp: the switches' hash seed"),
          // NCCL_IB_QPS_PER_CONNECTION: default 1, range 1-128 (NVIDIA/nccl docs/env.rst;
          // src/transport/net_ib/connect.cc NCCL_PARAM(IbQpsPerConn, "IB_QPS_PER_CONNECTION", 1))
          K::integer("qps_per_connection", 1, 1, 128,
                     "queue pairs per connection between two GPUs (NCCL_IB_QPS_PER_CONNECTION, default 1); "
                     "ecmp-qp hashes each apart and spreads the connection's messages over them round-robin")
              .counts("QPs"),
          // 95 %: NVIDIA's press release on Spectrum-X at xAI's Colossus (Oct 2024): "95% data
          // throughput" with adaptive routing against 60 % for hashed Ethernet [vendor]; the
          // Spectrum-X paper (arXiv 2605.21187, abstract) gives 98 % of line rate on 1K GPUs
          K::number("adaptive_efficiency", 0.95, 0.5, 1.0,
                    "adaptive: the share of the switch-to-switch cables' rate delivered (NVIDIA, Spectrum-X at "
                    "xAI Colossus, Oct 2024: 95 %)")
              .counts("fraction"),
          K::section("background", "platform.fabric.background",
                     "another tenant's steady traffic on the switch-to-switch cables (an experiment's "
                     "cluster.background overrides it)"),
      }};
  return s;
}

const Section& background_section()
{
  using K = KeySpec;
  static const Section s{
      "platform.fabric.background",
      "another tenant's steady traffic on the fabric's switch-to-switch cables (a job beside this one, "
      "storage): it holds its share of every cable of its tier, in each direction, and the job's flows share "
      "what is left",
      {
          K::number("load", 0, 0, 0.99, "the share of each cable's rate the background holds").must().counts("fraction"),
          K::choice("tier", "all", background_tier_names(),
                    "leaf-up: a leaf's cables to the tier above (and back down); spine-up: an aggregation switch's "
                    "cables to the cores (three-level fabrics); all: both"),
      }};
  return s;
}

void read_background(const Layers& yaml, const std::string& context, FabricSpec& fabric)
{
  SectionReader bg(yaml, background_section(), context);
  fabric.background_load = bg.number("load");
  fabric.background_tier = background_tier(bg.choice("tier"));
  bg.finish();
}

const std::vector<std::string>& cost_basis_names()
{
  static const std::vector<std::string> names{"rental", "owned"};
  return names;
}

const Section& cost_section()
{
  using K = KeySpec;
  static const Section s{
      "platform.cost",
      "price and power of the platform",
      {
          K::number("usd_per_gpu_hour", 0, 0, 1e6, "rental price of one GPU-hour")
              .counts("$")
              .computed("required with basis: rental"),
          K::quantity_of("node_overhead", Quantity::power, "0W", 0, 1e6,
                         "CPUs, NICs, fans and PSU losses per node beyond the GPUs' board power"),
          K::number("pue", 1.0, 1.0, 5.0, "data-centre power usage effectiveness"),
          K::choice("basis", "rental", cost_basis_names(),
                    "the $/GPU-hour of the cost figures: rental (usd_per_gpu_hour) or owned (the cluster's "
                    "capex from platforms/prices.yaml over years, plus energy at the PUE)"),
          K::number("node_usd", 0, 0, 1e9, "price of one node, in place of the price table's")
              .counts("$")
              .computed("the price table's for the node's GPU"),
          K::number("years", 0, 0, 50, "years the capex is amortised over").computed("the price table's"),
          K::number("usd_per_kwh", 0, 0, 10, "energy price").counts("$").computed("the price table's"),
          K::number("facility_usd_per_kw", 0, 0, 1e6, "data-centre build-out per kW of IT load")
              .counts("$")
              .computed("the price table's"),
      }};
  return s;
}

namespace {

template <class E> E choice_index(const std::string& s, const std::vector<std::string>& names)
{
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == s)
      return static_cast<E>(i);
  return static_cast<E>(0);
}

/// bandwidth + bidirectional flag → per-direction bandwidth
/// `v` with `digits` decimals.
std::string fixed(double v, int digits)
{
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

double directional_bandwidth(SectionReader& m)
{
  double bw = m.quantity("bandwidth");
  return m.boolean("bidirectional") ? bw / 2 : bw;
}

/// A transport name, resolved against the protocol table at its position.
std::string transport(SectionReader& m, const std::vector<std::string>& known)
{
  YamlNode n = m.require("transport");
  std::string t = n.as_string();
  if (!known.empty() && std::find(known.begin(), known.end(), t) == known.end())
    n.fail(unknown_name("transport", t, known) + " (not in platforms/collectives.yaml)", join(known));
  return t;
}

void read_mesh(SectionReader& m, NodeSpec& node)
{
  YamlNode links = m.require("links");
  for (const auto& item : links.items()) {
    auto v = item.items();
    if (v.size() != 3)
      item.fail("a mesh link is [gpu_a, gpu_b, lanes]", "e.g. [0, 3, 2]");
    MeshLink l;
    l.a = static_cast<int>(v[0].as_int(0, node.gpus - 1));
    l.b = static_cast<int>(v[1].as_int(0, node.gpus - 1));
    l.lanes = static_cast<int>(v[2].as_int(1, 64));
    if (l.a == l.b)
      item.fail("a mesh link joins two different GPUs", "[gpu_a, gpu_b, lanes] with gpu_a != gpu_b");
    for (const auto& e : node.mesh)
      if ((e.a == l.a && e.b == l.b) || (e.a == l.b && e.b == l.a))
        item.fail("GPUs " + std::to_string(l.a) + " and " + std::to_string(l.b) + " are linked twice",
                  "one entry per GPU pair, with its lane count");
    node.mesh.push_back(l);
  }
  if (node.mesh.empty())
    links.fail("an nvlink-mesh needs at least one link", "a list of [gpu_a, gpu_b, lanes]");
}

void read_scale_up(const Layers& yaml, NodeSpec& node, const std::vector<std::string>& transports,
                   std::vector<ConfigWarning>* warnings)
{
  SectionReader m(yaml, scale_up_section(), "node.scale_up");
  node.scale_up = choice_index<ScaleUpKind>(m.choice("kind"), scale_up_kind_names());
  node.domain_nodes = static_cast<int>(m.integer("domain_nodes"));
  if (node.scale_up == ScaleUpKind::pcie) {
    m.finish();
    if (node.domain_nodes != 1)
      m.yaml().fail("a pcie scale-up domain cannot span nodes", "domain_nodes: 1");
    return;
  }
  node.nvlink.bandwidth = directional_bandwidth(m);
  if (warnings && node.scale_up == ScaleUpKind::nvswitch) {
    // per GPU and direction, against the GPU's own NVLink (vendors quote both directions)
    const YamlNode bw = m.require("bandwidth");
    const double own = node.gpu.nvlink_bandwidth;
    const double most = own > 0 ? own : 900e9; // NVLink5: 1.8 TB/s both ways
    if (node.nvlink.bandwidth > most * 1.001)
      warnings->push_back(
          {bw.where(),
           "scale_up.bandwidth " + bw.as_string() + " is " + format_bandwidth(node.nvlink.bandwidth) +
               " per GPU and direction, more than " +
               (own > 0 ? node.gpu.id + "'s NVLink (" + format_bandwidth(own) + " each way)"
                        : std::string("any NVLink (NVLink5: 900 GB/s each way)")) +
               (m.boolean("bidirectional") ? "" : ": a two-way figure without bidirectional: true?"),
           "the vendor's two-way figure with bidirectional: true, or the one-way figure"});
  }
  node.nvlink.latency = m.quantity("latency");
  node.nvlink_transport = transport(m, transports);
  if (node.scale_up == ScaleUpKind::nvswitch) {
    node.nvswitches = static_cast<int>(m.integer("switches"));
  } else {
    read_mesh(m, node);
    if (node.domain_nodes != 1)
      m.yaml().fail("an nvlink-mesh domain cannot span nodes", "domain_nodes: 1");
  }
  m.finish();
}

void read_pcie(const Layers& yaml, NodeSpec& node, const std::vector<std::string>& transports)
{
  SectionReader m(yaml, pcie_section(), "node.pcie");
  node.pcie.bandwidth = directional_bandwidth(m);
  node.pcie.latency = m.quantity("latency");
  node.pcie_switches = static_cast<int>(m.integer("switches"));
  node.pcie_uplink.bandwidth = m.has("uplink") ? m.quantity("uplink") : node.pcie.bandwidth;
  node.pcie_uplink.latency = node.pcie.latency;
  node.cpus = static_cast<int>(m.integer("cpus"));
  node.cpu_link.bandwidth = m.has("cpu_link") ? m.quantity("cpu_link") : 0;
  node.cpu_link.latency = m.has("cpu_link_latency") ? m.quantity("cpu_link_latency") : node.pcie.latency;
  node.p2p = m.boolean("p2p");
  node.pcie_transport = transport(m, transports);
  if (node.cpus > 1 && node.cpu_link.bandwidth <= 0)
    m.yaml().fail("a node with " + std::to_string(node.cpus) +
                      " CPUs needs cpu_link (socket interconnect bandwidth)",
                  "cpu_link: e.g. 62GBps");
  if (node.pcie_switches > 0 && node.pcie_switches % node.cpus != 0)
    m.require("switches")
        .fail(std::to_string(node.pcie_switches) + " PCIe switches do not spread evenly over " +
                  std::to_string(node.cpus) + " CPUs",
              "a multiple of cpus");
  m.finish();
}

void read_nics(const Layers& yaml, NodeSpec& node, const std::vector<std::string>& transports,
               std::vector<ConfigWarning>* warnings)
{
  SectionReader m(yaml, nics_section(), "node.nics");
  node.nics = static_cast<int>(m.integer("count"));
  if (node.nics == 0) {
    m.finish();
    return;
  }
  node.nic.bandwidth = directional_bandwidth(m);
  if (warnings) {
    // the fastest NICs move 1.6 Tb/s (ConnectX-9); NIC rates are quoted in bits
    const YamlNode bw = m.require("bandwidth");
    const std::string text = bw.as_string();
    const bool bytes = text.find("Bps") != std::string::npos || text.find("B/s") != std::string::npos;
    const double bits = node.nic.bandwidth * 8;
    if (bits > 1.6e12)
      warnings->push_back({bw.where(),
                           "nics.bandwidth " + text + " is " + format_bandwidth(bits / 8) +
                               " (" + fixed(bits / 1e12, 2) +
                               " Tb/s) per NIC and direction, beyond the fastest NICs (1.6 Tb/s)" +
                               (bytes ? ": a rate in bits written in bytes?" : ""),
                           "a NIC rate in bits per second, e.g. 400Gbps (ConnectX-7), 800Gbps (ConnectX-8)"});
    else if (bytes)
      warnings->push_back({bw.where(),
                           "nics.bandwidth " + text + " is written in bytes (" + fixed(bits / 1e9, 0) +
                               " Gb/s); NIC rates are quoted in bits",
                           fixed(bits / 1e9, 0) + "Gbps"});
  }
  node.nic.latency = m.quantity("latency");
  node.nic_transport = transport(m, transports);
  if (auto map = m.find("gpus")) {
    auto items = map->items();
    if (static_cast<int>(items.size()) != node.gpus)
      map->fail("nics.gpus lists " + std::to_string(items.size()) + " entries for " + std::to_string(node.gpus) +
                    " GPUs",
                "one NIC index per GPU");
    for (const auto& it : items)
      node.nic_of_gpu.push_back(static_cast<int>(it.as_int(0, node.nics - 1)));
  } else {
    for (int g = 0; g < node.gpus; ++g)
      node.nic_of_gpu.push_back(g * node.nics / node.gpus);
  }
  // a NIC that serves no GPU dangles
  for (int n = 0; n < node.nics; ++n)
    if (std::find(node.nic_of_gpu.begin(), node.nic_of_gpu.end(), n) == node.nic_of_gpu.end())
      m.require("count").fail("NIC " + std::to_string(n) + " serves no GPU (dangling NIC)",
                              "at most one NIC per GPU, or a nics.gpus map that uses every NIC");
  m.finish();
}

/// node.gpu: a catalog id, an inline description, or a catalog GPU with overrides (whose id
/// then names both: "h100-sxm5-80gb@grand-teton-h100").
GpuSpec read_node_gpu(const YamlNode& n, const GpuCatalog& gpus, const std::string& platform)
{
  if (n.is_scalar())
    return gpus.get(n.as_string(), n.where());
  if (!n.is_map())
    n.fail("node.gpu must be a GPU id or a mapping", "an id of platforms/gpus.yaml, or a GPU description");
  const GpuSpec* base = nullptr;
  for (auto& [k, v] : n.entries())
    if (k.as_string() == "base")
      base = &gpus.get(v.as_string(), v.where());
  GpuSpec g = read_gpu(n, base ? base->id + "@" + platform : platform + "-gpu", base, gpus.curves());
  if (base) {
    g.derive();
    return g;
  }
  return gpus.with_kernel_constants(g);
}

void read_fabric(const Layers& yaml, PlatformSpec& p)
{
  SectionReader m(yaml, fabric_section(), fabric_section().name);
  p.fabric.kind = choice_index<FabricKind>(m.choice("kind"), fabric_kind_names());
  p.fabric.radix = static_cast<int>(m.integer("radix"));
  p.fabric.oversubscription = m.number("oversubscription");
  p.fabric.levels = static_cast<int>(m.integer("levels"));
  p.fabric.switch_latency = m.quantity("switch_latency");
  p.fabric.link.bandwidth = m.has("link_bandwidth") ? m.quantity("link_bandwidth") : p.node.nic.bandwidth;
  p.fabric.link.latency = m.quantity("link_latency");
  p.fabric.rail_group_nodes = static_cast<int>(m.integer("rail_group_nodes"));
  p.fabric.routing = fabric_routing(m.choice("routing"));
  p.fabric.seed = static_cast<std::uint32_t>(m.integer("seed"));
  p.fabric.adaptive_efficiency = m.number("adaptive_efficiency");
  p.fabric.qps_per_connection = static_cast<int>(m.integer("qps_per_connection"));
  if (m.has("background"))
    read_background(m.layers("background"), "fabric.background", p.fabric);
  if ((p.fabric.kind == FabricKind::rail_optimized || p.fabric.kind == FabricKind::rail_only) &&
      p.node.nics != p.node.gpus)
    m.require("kind").fail(std::string(to_string(p.fabric.kind)) + " needs one NIC per GPU (node has " +
                               std::to_string(p.node.nics) + " NICs for " + std::to_string(p.node.gpus) + " GPUs)",
                           "fat-tree or single-switch");
  if (p.node.nics == 0)
    m.require("kind").fail("a fabric needs NICs in the node", "node.nics.count > 0");
  m.finish();
}

/// " (node.nics.bandwidth: 800Gbps, ...)": what an override document changes, for the name.
void list_overrides(const YamlNode& n, const std::string& path, std::vector<std::string>& out)
{
  if (n.is_map()) {
    for (const auto& [k, v] : n.entries()) {
      const std::string key = k.as_string();
      if (path.empty() && (key == "base" || key == "name" || key == "description"))
        continue;
      list_overrides(v, path.empty() ? key : path + "." + key, out);
    }
  } else {
    out.push_back(path + ": " + (n.is_scalar() ? n.as_string() : std::string("[...]")));
  }
}

std::string overrides_of(const YamlNode& over)
{
  std::vector<std::string> changes;
  list_overrides(over, "", changes);
  if (changes.empty())
    return "";
  std::string out = " (";
  for (std::size_t i = 0; i < changes.size(); ++i)
    out += (i ? ", " : "") + changes[i];
  return out + ")";
}

} // namespace

std::string replica_contention(const PlatformSpec& p)
{
  if (p.node.scale_up != ScaleUpKind::nvswitch)
    return std::string("GPUs share ") + (p.node.scale_up == ScaleUpKind::pcie ? "PCIe switches" : "NVLink mesh paths");
  if (p.node.nics > 0 && p.node.nics != p.node.gpus)
    return std::to_string(p.node.gpus) + " GPUs share " + std::to_string(p.node.nics) + " NICs per node";
  if (p.node.nics > 0 && p.fabric.kind == FabricKind::rail_only)
    return "rail-only relays cross-rail traffic over NVLink to another GPU's NIC";
  if (p.node.nics > 0 && hashed(p.fabric.routing))
    return "ECMP hashes each GPU pair onto its own up-links, so replicas load different cables";
  if (p.node.nics > 0 && p.fabric.routing == FabricRouting::by_destination)
    return "static routing sends each destination's flows over its own up-links, so replicas load different cables";
  if (p.node.nics > 0 && p.fabric.oversubscription > 1.0)
    return "the fabric is oversubscribed " + std::to_string(p.fabric.oversubscription).substr(0, 4) + ":1";
  return "";
}

PlatformSpec load_platform(const std::string& path, const GpuCatalog& gpus, const std::vector<std::string>& transports)
{
  return parse_platform(YamlNode::load_file(path), gpus, transports);
}

PlatformSpec parse_platform(const YamlNode& root, const GpuCatalog& gpus, const std::vector<std::string>& transports,
                            const YamlNode* over)
{
  PlatformSpec p;
  Layers doc{root, std::nullopt};
  if (over)
    doc.over = *over;
  p.file = (over ? *over : root).file();
  SectionReader top(doc, platform_section(), platform_section().name);
  p.name = top.string("name");
  p.description = top.string("description");
  bool named = true;
  if (over) {
    top.string("base"); // the caller resolved it
    named = SectionReader(Layers{*over, std::nullopt}, platform_section(), "platform").has("name");
  }

  SectionReader node(top.layers("node"), node_section(), node_section().name);
  p.node.gpus = static_cast<int>(node.integer("gpus"));
  p.node.gpu = read_node_gpu(node.require("gpu"), gpus, p.name);
  if (auto cpu = node.choice_if("cpu"))
    p.node.gpu.host = gpus.host_cpu(*cpu);
  read_scale_up(node.layers("scale_up"), p.node, transports, &p.warnings);
  read_pcie(node.layers("pcie"), p.node, transports);
  read_nics(node.layers("nics"), p.node, transports, &p.warnings);
  node.finish();

  if (top.has("fabric"))
    read_fabric(top.layers("fabric"), p);
  else if (p.node.nics > 0)
    top.yaml().fail("platform with NICs has no fabric", "a 'fabric' section");

  if (top.has("cost")) {
    SectionReader m(top.layers("cost"), cost_section(), cost_section().name);
    auto given = [&m](const char* key) { return m.has(key) ? m.number(key) : 0.0; }; // 0: computed
    p.cost.usd_per_gpu_hour = given("usd_per_gpu_hour");
    p.cost.node_overhead_watts = m.quantity("node_overhead");
    p.cost.pue = m.number("pue");
    p.cost.basis = choice_index<CostBasis>(m.choice("basis"), cost_basis_names());
    p.cost.basis_where = m.where("basis");
    if (p.cost.basis == CostBasis::rental && !m.has("usd_per_gpu_hour"))
      m.yaml().fail("cost.basis rental needs cost.usd_per_gpu_hour",
                    "usd_per_gpu_hour: PRICE, or basis: owned (priced from platforms/prices.yaml)");
    p.cost.node_usd = given("node_usd");
    p.cost.years = given("years");
    p.cost.usd_per_kwh = given("usd_per_kwh");
    p.cost.facility_usd_per_kw = given("facility_usd_per_kw");
    m.finish();
  }
  top.finish();
  if (!named) // after finish: the override holds only the tables' keys
    p.name += overrides_of(*over);
  return p;
}

} // namespace clustersim
