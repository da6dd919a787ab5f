#include "PlatformSpec.hpp"

#include "Suggest.hpp"

namespace clustersim {

const std::vector<std::string>& scale_up_kind_names()
{
  static const std::vector<std::string> names{"nvswitch", "nvlink-mesh", "pcie"};
  return names;
}

const std::vector<std::string>& fabric_kind_names()
{
  static const std::vector<std::string> names{"single-switch", "fat-tree", "rail-optimized"};
  return names;
}

const char* to_string(ScaleUpKind k)
{
  return scale_up_kind_names()[static_cast<std::size_t>(k)].c_str();
}

const char* to_string(FabricKind k)
{
  return fabric_kind_names()[static_cast<std::size_t>(k)].c_str();
}

namespace {

template <class E> E choice_index(const YamlNode& n, const std::vector<std::string>& names, const std::string& what)
{
  std::string s = n.as_choice(names, what);
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == s)
      return static_cast<E>(i);
  return static_cast<E>(0);
}

/// bandwidth + bidirectional flag → per-direction bandwidth
double directional_bandwidth(YamlMap& m)
{
  double bw = m.require_quantity("bandwidth", Quantity::bandwidth);
  bool bidir = m.get_bool("bidirectional", false);
  return bidir ? bw / 2 : bw;
}

void read_scale_up(YamlMap m, NodeSpec& node)
{
  node.scale_up = choice_index<ScaleUpKind>(m.require("kind"), scale_up_kind_names(), "scale-up kind");
  node.domain_nodes = static_cast<int>(m.get_int("domain_nodes", 1, 1, 1024));
  if (node.scale_up == ScaleUpKind::pcie) {
    m.finish();
    if (node.domain_nodes != 1)
      m.node().fail("a pcie scale-up domain cannot span nodes", "domain_nodes: 1");
    return;
  }
  node.nvlink.bandwidth = directional_bandwidth(m);
  node.nvlink.latency = m.require_quantity("latency", Quantity::time);
  node.nvlink_transport = m.require("transport").as_string();
  if (node.scale_up == ScaleUpKind::nvswitch) {
    node.nvswitches = static_cast<int>(m.get_int("switches", 1, 1, 1024));
  } else {
    YamlNode links = m.require("links");
    std::vector<int> lanes_per_gpu(static_cast<std::size_t>(node.gpus), 0);
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
      lanes_per_gpu[static_cast<std::size_t>(l.a)] += l.lanes;
      lanes_per_gpu[static_cast<std::size_t>(l.b)] += l.lanes;
      node.mesh.push_back(l);
    }
    if (node.mesh.empty())
      links.fail("an nvlink-mesh needs at least one link", "a list of [gpu_a, gpu_b, lanes]");
    if (node.domain_nodes != 1)
      m.node().fail("an nvlink-mesh domain cannot span nodes", "domain_nodes: 1");
  }
  m.finish();
}

void read_pcie(YamlMap m, NodeSpec& node)
{
  node.pcie.bandwidth = directional_bandwidth(m);
  node.pcie.latency = m.require_quantity("latency", Quantity::time);
  node.pcie_switches = static_cast<int>(m.get_int("switches", 0, 0, 64));
  node.pcie_uplink.bandwidth = m.get_quantity("uplink", node.pcie.bandwidth, Quantity::bandwidth);
  node.pcie_uplink.latency = node.pcie.latency;
  node.cpus = static_cast<int>(m.get_int("cpus", 1, 1, 8));
  node.cpu_link.bandwidth = m.get_quantity("cpu_link", 0, Quantity::bandwidth);
  node.cpu_link.latency = m.get_quantity("cpu_link_latency", node.pcie.latency, Quantity::time);
  node.p2p = m.get_bool("p2p", true);
  node.pcie_transport = m.require("transport").as_string();
  if (node.cpus > 1 && node.cpu_link.bandwidth <= 0)
    m.node().fail("a node with " + std::to_string(node.cpus) + " CPUs needs cpu_link (socket interconnect bandwidth)",
                  "cpu_link: e.g. 62GBps");
  if (node.pcie_switches > 0 && node.pcie_switches % node.cpus != 0)
    m.require("switches")
        .fail(std::to_string(node.pcie_switches) + " PCIe switches do not spread evenly over " +
                  std::to_string(node.cpus) + " CPUs",
              "a multiple of cpus");
  m.finish();
}

void read_nics(YamlMap m, NodeSpec& node)
{
  node.nics = static_cast<int>(m.require("count").as_int(0, 64));
  if (node.nics == 0) {
    m.finish();
    return;
  }
  node.nic.bandwidth = directional_bandwidth(m);
  node.nic.latency = m.require_quantity("latency", Quantity::time);
  node.nic_transport = m.require("transport").as_string();
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
  for (int n = 0; n < node.nics; ++n) {
    bool used = false;
    for (int x : node.nic_of_gpu)
      used = used || x == n;
    if (!used)
      m.require("count").fail("NIC " + std::to_string(n) + " serves no GPU (dangling NIC)",
                              "at most one NIC per GPU, or a nics.gpus map that uses every NIC");
  }
  m.finish();
}

} // namespace

std::string replica_contention(const PlatformSpec& p)
{
  if (p.node.scale_up != ScaleUpKind::nvswitch)
    return std::string("GPUs share ") + (p.node.scale_up == ScaleUpKind::pcie ? "PCIe switches" : "NVLink mesh paths");
  if (p.node.nics > 0 && p.node.nics != p.node.gpus)
    return std::to_string(p.node.gpus) + " GPUs share " + std::to_string(p.node.nics) + " NICs per node";
  if (p.node.nics > 0 && p.fabric.oversubscription > 1.0)
    return "the fabric is oversubscribed " + std::to_string(p.fabric.oversubscription).substr(0, 4) + ":1";
  return "";
}

PlatformSpec load_platform(const std::string& path, const GpuCatalog& gpus)
{
  PlatformSpec p;
  p.file = path;
  YamlNode root = YamlNode::load_file(path);
  YamlMap top(root, "platform");
  p.name = top.require("name").as_string();
  p.description = top.get_string("description", "");

  YamlMap node(top.require("node"), "node");
  YamlNode gpu_node = node.require("gpu");
  p.node.gpu = gpus.get(gpu_node.as_string(), gpu_node.where());
  p.node.gpus = static_cast<int>(node.require("gpus").as_int(1, 1024));
  read_scale_up(YamlMap(node.require("scale_up"), "node.scale_up"), p.node);
  read_pcie(YamlMap(node.require("pcie"), "node.pcie"), p.node);
  read_nics(YamlMap(node.require("nics"), "node.nics"), p.node);
  node.finish();
  if (p.node.scale_up == ScaleUpKind::pcie && p.node.gpus > 1 && p.node.pcie.bandwidth <= 0)
    root.fail("node has no GPU-GPU path", "a PCIe bandwidth");

  if (auto f = top.find("fabric")) {
    YamlMap m(*f, "fabric");
    p.fabric.kind = choice_index<FabricKind>(m.require("kind"), fabric_kind_names(), "fabric kind");
    p.fabric.radix = static_cast<int>(m.get_int("radix", 64, 2, 4096));
    p.fabric.oversubscription = m.get_number("oversubscription", 1.0, 1.0, 64.0);
    p.fabric.levels = static_cast<int>(m.get_int("levels", 0, 0, 3));
    p.fabric.switch_latency = m.require_quantity("switch_latency", Quantity::time);
    p.fabric.link.bandwidth = m.get_quantity("link_bandwidth", p.node.nic.bandwidth, Quantity::bandwidth);
    p.fabric.link.latency = m.get_quantity("link_latency", 0, Quantity::time);
    p.fabric.rail_group_nodes = static_cast<int>(m.get_int("rail_group_nodes", 0, 0, 100000));
    if (p.fabric.kind == FabricKind::rail_optimized && p.node.nics != p.node.gpus)
      m.require("kind").fail("rail-optimized needs one NIC per GPU (node has " + std::to_string(p.node.nics) +
                                 " NICs for " + std::to_string(p.node.gpus) + " GPUs)",
                             "fat-tree or single-switch");
    if (p.node.nics == 0)
      m.require("kind").fail("a fabric needs NICs in the node", "node.nics.count > 0");
    m.finish();
  } else if (p.node.nics > 0) {
    root.fail("platform with NICs has no fabric", "a 'fabric' section");
  }

  if (auto c = top.find("cost")) {
    YamlMap m(*c, "cost");
    p.cost.usd_per_gpu_hour = m.require("usd_per_gpu_hour").as_number(0, 1e6);
    p.cost.node_overhead_watts = m.get_quantity("node_overhead", 0, Quantity::power);
    p.cost.pue = m.get_number("pue", 1.0, 1.0, 5.0);
    m.finish();
  }
  top.finish();
  return p;
}

} // namespace clustersim
