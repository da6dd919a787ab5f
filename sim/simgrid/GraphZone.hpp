#pragma once
/// A SimGrid network zone whose routes are the ClusterGraph's: one flat zone holding every
/// GPU host and one SimGrid link per graph resource; `get_local_route` asks the graph, in
/// O(path length). Shared resources are shared links, so SimGrid's max-min sharing decides
/// how concurrent flows divide them.
///
/// This replaces SimGrid's zone trees (whose builders check names across every zone and
/// whose gateways mis-route in intermediate zones, see SIMGRID_NOTES.md) with one zone that
/// cannot disagree with the graph.

#include "topology/ClusterGraph.hpp"

#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Link.hpp>

#include <vector>

namespace clustersim {

class GraphZone final : public simgrid::kernel::routing::NetZoneImpl {
public:
  GraphZone(const std::string& name, const ClusterGraph& cluster);

  /// Links per graph resource and the GPU of each host netpoint (by netpoint id).
  void bind(std::vector<simgrid::s4u::Link*> links, std::vector<int> gpu_of_netpoint);

  void get_local_route(const simgrid::kernel::routing::NetPoint* src, const simgrid::kernel::routing::NetPoint* dst,
                       simgrid::kernel::routing::Route* into, double* latency) override;

  /// Number of routes computed (for the benchmark's event counts).
  std::size_t routes_computed() const { return routes_; }

private:
  const ClusterGraph& cluster_;
  std::vector<simgrid::kernel::resource::StandardLinkImpl*> links_;
  std::vector<int> gpu_of_netpoint_;
  std::vector<int> scratch_;
  std::size_t routes_ = 0;
};

} // namespace clustersim
