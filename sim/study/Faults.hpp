#pragma once
/// The `faults:` section of an experiment: what-ifs simulated inside the step.
///
/// * stragglers: chosen ranks, nodes, or a seeded fraction of GPUs, slower by a factor in their
///   compute-bound kernels (`on: compute`, e.g. clocks held down), their memory-bound kernels
///   (`on: hbm`) or both. Their kernels are priced by the cost model with the GPU's sustained
///   compute and HBM efficiencies divided by the factor, so a GEMM-heavy layer slows by almost
///   the factor under `compute` and an element-wise one under `hbm`; the other ranks wait at
///   their real synchronisation points.
/// * jitter: a seeded lognormal factor of mean 1 and the given sigma, drawn once per rank for
///   all its kernels of the step (`per: rank`: a GPU, its host or its input pipeline slower this
///   step) or for every kernel on its own (`per: kernel`, which mostly averages out).
/// * links: a named switch ("spine0", "leaf3": kind and index, as `platform show --dot` names
///   them), a named cable between two vertices ("leaf0-spine1"), or a seeded fraction of the
///   switch-to-switch cables, at a fraction of their bandwidth or down. Parallel up-links of a
///   switch share their traffic (ECMP), so a cable or spine down leaves the others carrying it;
///   a link with no alternative (a NIC's only cable) down is an error.
/// Faults make ranks differ, so the step is simulated with every rank.

#include "topology/config/ConfigError.hpp"
#include "topology/config/Schema.hpp"
#include "topology/config/Yaml.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace clustersim {

class ClusterGraph;
class CostModel;
class Workload;
struct ExperimentSpec;

struct StragglerSpec {
  std::vector<long long> ranks;
  std::vector<long long> nodes;
  double fraction = 0; ///< of all GPUs, drawn with the faults' seed
  double factor = 1;   ///< >= 1: kernel time multiplier
  std::string on = "both"; ///< compute | hbm | both
  SourceLocation where;
};

struct LinkFaultSpec {
  std::string target_switch; ///< a vertex by name: every link touching it
  std::string link;          ///< "a-b": the cables between two vertices
  double fraction = 0;       ///< of the switch-to-switch cables
  double factor = 1;         ///< of the bandwidth that remains; 0 = down
  SourceLocation where;
};

struct FaultSpec {
  std::vector<StragglerSpec> stragglers;
  std::vector<LinkFaultSpec> links;
  double jitter_sigma = 0;
  bool jitter_per_kernel = false;
  long long seed = 1;
  bool any() const { return !stragglers.empty() || !links.empty() || jitter_sigma > 0; }
};

const Section& faults_section();
const Section& straggler_section();
const Section& link_fault_section();
const Section& jitter_section();

FaultSpec parse_faults(const YamlNode& node);

/// The link faults applied to the cluster; ConfigError at the fault when a name is unknown or a
/// route is left without a path.
void apply_link_faults(const FaultSpec& faults, ClusterGraph& cluster);
/// The ranks each straggler entry slows, checked against the cluster (ConfigError otherwise).
std::vector<std::vector<std::uint32_t>> straggler_ranks(const FaultSpec& faults, long long gpus, int gpus_per_node);
/// Reprices the stragglers' compute tasks and applies jitter: `rebuild(gpu)` builds the same
/// step with another GPU (the slowed one); its tasks replace the stragglers'.
void apply_compute_faults(const FaultSpec& faults, const ExperimentSpec& e, Workload& workload,
                          const std::function<Workload(const CostModel&)>& rebuild);

} // namespace clustersim
