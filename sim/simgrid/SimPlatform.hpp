#pragma once
/// The SimGrid side of a cluster: the engine (configured so links deliver their nominal
/// bandwidth: CM02, no cross-traffic, no TCP-gamma window cap), one host per GPU and one link
/// per graph resource, routed by GraphZone. One simulation per process: SimGrid keeps global
/// state, so front ends fork for every further simulation.

#include "sim/simgrid/GraphZone.hpp"
#include "topology/ClusterGraph.hpp"

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>

#include <memory>
#include <vector>

namespace clustersim {

class SimPlatform {
public:
  /// Creates the engine and the platform. `host_speed` is the FLOP/s of every GPU host
  /// (compute tasks are priced in seconds and executed as seconds x speed).
  SimPlatform(const ClusterGraph& cluster, double host_speed);
  ~SimPlatform();
  SimPlatform(const SimPlatform&) = delete;
  SimPlatform& operator=(const SimPlatform&) = delete;

  const ClusterGraph& cluster() const { return cluster_; }
  simgrid::s4u::Engine& engine() { return *engine_; }
  simgrid::s4u::Host* host(int gpu) const { return hosts_[static_cast<std::size_t>(gpu)]; }
  double host_speed() const { return speed_; }
  std::size_t links() const { return links_; }
  const GraphZone& zone() const { return *zone_; }

private:
  const ClusterGraph& cluster_;
  std::unique_ptr<simgrid::s4u::Engine> engine_;
  GraphZone* zone_ = nullptr; ///< engine-owned
  std::vector<simgrid::s4u::Host*> hosts_;
  double speed_ = 0;
  std::size_t links_ = 0;
};

} // namespace clustersim
