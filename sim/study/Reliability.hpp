#pragma once
/// The `reliability:` section of an experiment: how often the parts of the cluster interrupt a
/// job, what a checkpoint and a restart cost, and the spare nodes. `clustersim goodput` turns it
/// into expected interruptions, lost work, effective training time ratio and the wall-clock
/// days, GPU-hours and cost of a token budget (Goodput.hpp).
///
/// Default failure rates are the Llama 3 405B pre-training window (Llama Team, "The Llama 3
/// Herd of Models", 2024, Sec. 3.3.4 and Table 5): 466 job interruptions in 54 days on 16,384
/// H100 in 2,048 nodes, 47 planned and 419 unexpected, each row of Table 5 assigned to the
/// part that fails and divided by that part's count and the window (see reliability_section()).

#include "topology/config/Schema.hpp"
#include "topology/config/Yaml.hpp"

#include <string>
#include <vector>

namespace clustersim {

/// A part of the cluster that interrupts the job when it fails.
struct FailureSource {
  std::string name;     ///< gpu, hbm, network, nic, host, software
  std::string per;      ///< what it counts: "GPU", "NIC", "node"
  double fit = 0;       ///< failures per 10^9 hours of one unit (FIT)
  bool hardware = true; ///< the node is replaced (a spare is taken) before the job restarts
};

/// Llama 3's planned interruptions (47 in 54 days, Table 5: firmware and configuration updates,
/// dataset changes) over its 2,048 nodes: maintenance that comes node by node.
constexpr double kLlama3PlannedPerNodeDay = 47.0 / 54.0 / 2048.0;

struct ReliabilitySpec {
  std::vector<FailureSource> sources;
  /// Planned interruptions per day (checkpointed first: no work lost); negative: Llama 3's rate
  /// per node (kLlama3PlannedPerNodeDay) times the job's nodes.
  double planned_per_day = -1;
  double checkpoint_bytes = 0;     ///< 0: the model's weights and optimizer states
  double write_bandwidth = 0;      ///< bytes/s, aggregate to storage
  double read_bandwidth = 0;       ///< bytes/s
  double interval_s = 0;           ///< 0: the Young/Daly optimum
  double restart_s = 0;            ///< detection, rescheduling and initialisation
  long long spare_nodes = -1;      ///< -1: a healthy node is always available
  double repair_s = 0;             ///< a failed node's time out of the pool
  long long seed = 1;              ///< Monte-Carlo
  long long trials = 1000;
  double window_days = 0;          ///< > 0: also the interruptions expected over this window
  bool given = false;              ///< the experiment has a reliability section
};

const Section& reliability_section();
const Section& reliability_fit_section();
const Section& reliability_checkpoint_section();

/// The defaults of every key (Llama 3's fleet).
ReliabilitySpec default_reliability();
/// Reads a `reliability:` section.
ReliabilitySpec parse_reliability(const YamlNode& node);

} // namespace clustersim
