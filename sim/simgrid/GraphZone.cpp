#include "sim/simgrid/GraphZone.hpp"

#include <simgrid/kernel/routing/NetPoint.hpp>

namespace clustersim {

GraphZone::GraphZone(const std::string& name, const ClusterGraph& cluster) : NetZoneImpl(name), cluster_(cluster) {}

void GraphZone::bind(std::vector<simgrid::s4u::Link*> links, std::vector<int> gpu_of_netpoint)
{
  links_.clear();
  links_.reserve(links.size());
  for (auto* l : links)
    links_.push_back(l->get_impl());
  gpu_of_netpoint_ = std::move(gpu_of_netpoint);
}

void GraphZone::get_local_route(const simgrid::kernel::routing::NetPoint* src,
                                const simgrid::kernel::routing::NetPoint* dst, simgrid::kernel::routing::Route* into,
                                double* latency)
{
  ++routes_;
  int a = gpu_of_netpoint_[src->id()];
  int b = gpu_of_netpoint_[dst->id()];
  scratch_.clear();
  cluster_.route(a, b, scratch_); // links carry no latency in SimGrid (see SimPlatform)
  for (int r : scratch_)
    into->link_list_.push_back(links_[static_cast<std::size_t>(r)]);
  (void)latency;
}

} // namespace clustersim
