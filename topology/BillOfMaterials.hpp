#pragma once
/// The bill of materials of an instantiated cluster, counted on the same graph the simulation
/// runs on: nodes, GPUs, NICs, NVSwitch chips; the fabric's switches per tier with their radix
/// and the ports the job's cabling uses; the cables of each tier and the transceivers at their
/// ends; the nodes' power. Prices.hpp prices it.

#include "topology/ClusterGraph.hpp"

#include <string>
#include <vector>

namespace clustersim {

/// One tier of fabric switches (leaf, spine - a three-level fabric's pod aggregation switches -
/// or core).
struct SwitchTier {
  std::string tier;
  int switches = 0;
  int radix = 0;
  long long ports_used = 0; ///< cables ending on the tier's switches, every switch together
  int most_ports_used = 0;  ///< on its busiest switch
};

/// The cables between two tiers (nic-leaf, leaf-spine, spine-core): every physical cable,
/// the parallel ones a link of the graph bundles included.
struct CableClass {
  std::string tiers;
  long long cables = 0;
  double bandwidth = 0;        ///< bytes/s per cable, per direction
  long long transceivers = 0;  ///< one at each end of every cable (every cable counted optical; README "Hardware and layouts")
};

struct BillOfMaterials {
  int nodes = 0;
  int gpus = 0;
  int nics = 0;
  int nvlink_domains = 0;
  int nvswitch_chips = 0; ///< node.scale_up.switches per NVLink domain
  std::vector<SwitchTier> switch_tiers; ///< the tiers the fabric has, bottom up
  std::vector<CableClass> cables;       ///< bottom up
  double node_watts = 0;                ///< GPUs at TDP plus node.overhead, every node (the fabric's power: Prices.hpp)

  int switches() const;
  long long fabric_cables() const;
  long long transceivers() const;
};

BillOfMaterials bill_of_materials(const ClusterGraph& cg);

} // namespace clustersim
