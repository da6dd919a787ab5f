#pragma once
/// Facts about an instantiated cluster, computed on its graph with Boost.Graph algorithms:
/// connectivity (strong components), GPU-to-GPU hop diameter (breadth-first search),
/// bisection bandwidth (push-relabel max-flow between the two halves of the nodes) and the
/// injection bandwidth of one GPU into the scale-up and scale-out fabrics.

#include "topology/ClusterGraph.hpp"

namespace clustersim {

struct TopologyFacts {
  int gpus = 0;
  int nodes = 0;
  int domains = 0;
  int gpus_per_domain = 0; ///< of the job: a job over several domains takes the same nodes of each
  int fabric_levels = 0;
  int switches = 0; ///< leaf + spine + core
  int vertices = 0;
  int links = 0; ///< physical links (arc pairs)
  bool connected = false;
  bool all_gpus_reachable = false;
  int diameter_hops = 0;                 ///< longest shortest path between two GPUs, in links
  double bisection_bandwidth = 0;        ///< bytes/s, one direction, across the worst half/half node split tried
  double injection_scale_up = 0;         ///< bytes/s one GPU can send into its NVLink/PCIe domain
  double injection_scale_out = 0;        ///< bytes/s per GPU into the network when every GPU sends
  double injection_scale_out_single = 0; ///< bytes/s one GPU can send into the network alone
};

TopologyFacts compute_facts(const ClusterGraph& cg);

} // namespace clustersim
