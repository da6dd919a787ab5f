#include "topology/GraphBuilder.hpp"

namespace clustersim {

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

} // namespace clustersim
