#include "sim/simgrid/SimPlatform.hpp"

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <xbt/log.h>

#include <string>

namespace clustersim {

SimPlatform::SimPlatform(const ClusterGraph& cluster, double host_speed) : cluster_(cluster), speed_(host_speed)
{
  xbt_log_control_set("root.thresh:critical");
  int argc = 1;
  static char name[] = "clustersim";
  char* argv[] = {name, nullptr};
  engine_ = std::make_unique<simgrid::s4u::Engine>(&argc, argv);
  // Settings that make a link deliver its nominal bandwidth (SIMGRID_NOTES.md); they must be
  // set before the first zone exists.
  simgrid::s4u::Engine::set_config("network/model:CM02");
  simgrid::s4u::Engine::set_config("network/crosstraffic:0");
  simgrid::s4u::Engine::set_config("network/TCP-gamma:0");
  // One actor per busy (rank, stream): small stacks (SimGrid touches every page of a stack, so
  // 32 KiB x 16k actors is ~0.5 GB), no guard pages (65k actors otherwise fail to protect them).
#if defined(CLUSTERSIM_SANITIZE)
  simgrid::s4u::Engine::set_config("contexts/stack-size:1024");
#else
  simgrid::s4u::Engine::set_config("contexts/stack-size:32");
#endif
  simgrid::s4u::Engine::set_config("contexts/guard-size:0");

  zone_ = new GraphZone("cluster", cluster);
  simgrid::s4u::NetZone* z = zone_->get_iface();
  const auto& res = cluster.resources();
  std::vector<simgrid::s4u::Link*> links;
  links.reserve(res.size());
  for (std::size_t i = 0; i < res.size(); ++i) {
    // Zero latency on purpose: CM02 weights a flow's share by its route latency (TCP's RTT
    // unfairness), which RDMA fabrics do not have; with no latency every flow weighs the same
    // and sharing is plain max-min. Latencies are added analytically (CollectiveEngine).
    auto* l = z->create_link("r" + std::to_string(i), res[i].bandwidth);
    l->seal();
    links.push_back(l);
  }
  links_ = links.size();
  std::vector<int> gpu_of_netpoint;
  hosts_.reserve(static_cast<std::size_t>(cluster.gpus()));
  for (int g = 0; g < cluster.gpus(); ++g) {
    auto* h = z->create_host("gpu" + std::to_string(g), host_speed);
    h->seal();
    if (gpu_of_netpoint.size() <= h->get_netpoint()->id())
      gpu_of_netpoint.resize(h->get_netpoint()->id() + 1, -1);
    gpu_of_netpoint[h->get_netpoint()->id()] = g;
    hosts_.push_back(h);
  }
  zone_->bind(std::move(links), std::move(gpu_of_netpoint));
  z->seal();
}

SimPlatform::~SimPlatform() = default;

} // namespace clustersim
