#pragma once
/// An experiment: a model on a cluster with training settings — the same three sections as
/// a validation case (`model`, `cluster`, `training`, key names of experiments/validation)
/// plus a name, the scaling baseline, the simulation mode and the token budget.

#include "sim/study/Catalog.hpp"
#include "sim/study/Faults.hpp"
#include "sim/study/Reliability.hpp"
#include "strategies/ModelSpec.hpp"
#include "strategies/TrainingSpec.hpp"
#include "topology/config/Schema.hpp"

#include <string>
#include <vector>

namespace clustersim {

/// A setting the experiment did not write that can move the answer: the value it took and
/// where that value came from ("default: megatron calls cudnn on h100-sxm5-80gb").
struct Assumption {
  std::string key; ///< the key as it would be written, "training.flash_attention"
  std::string value;
  std::string origin;
};

/// The default bound on a step's tasks (`simulation.max_tasks`), checked before the step is built
/// (Simulation.cpp). A task costs about 85 bytes and 0.45 us of the event engine: Qwen3 235B on
/// 256 H100 (moe.yaml, 64 ranks simulated) is 10.8M tasks, 0.91 GB and 4.9 s, so this default is
/// about 1.4 GB and 8 s; kMaxStepTasksLimit (about 90 GB) is the most a user may allow.
inline constexpr long long kMaxStepTasks = 1LL << 24;
inline constexpr long long kMaxStepTasksLimit = 1LL << 30;

struct ExperimentSpec {
  std::string name;
  std::string description;
  std::string file;
  ModelSpec model;
  PlatformSpec platform;
  int gpus = 0;
  TrainingSpec training;
  int baseline_gpus = 0; ///< scaling-efficiency baseline; 0 = one node
  /// "auto": fold symmetric replicas when they cannot contend (exact); "folded": fold even where
  /// they can (an approximation the report names); "full": every rank; "analytic": the
  /// contention-free evaluation of the task graph.
  std::string mode = "auto";
  /// Which engine runs a folded or full step: "event" (the event engine with incremental
  /// max-min sharing, EventEngine.hpp) or "simgrid" (SimGrid's actors, the reference).
  std::string engine = "event";
  /// ECMP hash seeds to run, from the fabric's seed up (`simulation.seeds`); the report is the
  /// median seed's, with the band over all of them (SeedBand).
  int seeds = 1;
  /// The most tasks the step may have (`simulation.max_tasks`), checked before it is built.
  long long max_tasks = kMaxStepTasks;
  double budget_tokens = 1e12; ///< tokens for time-to-train, GPU-hours, energy and cost
  ReliabilitySpec reliability = default_reliability(); ///< failures and checkpoints (goodput)
  FaultSpec faults;                                    ///< what-ifs simulated in the step
  /// Where each key was written ("training.tp", "cluster.gpus", ...), for errors found after
  /// parsing; empty for experiments built in code.
  SourceMap where;
  /// The defaults that can move the answer, each with its origin, in report order.
  std::vector<Assumption> assumptions;
  /// cluster.jobs: the other jobs on the cluster, each on the platform with its model, GPUs and
  /// training, placed on the whole nodes after this one's GPUs in list order (job_offsets).
  std::vector<ExperimentSpec> jobs;
  /// How the experiment and its jobs hold the cluster's nodes: "packed" or "interleaved" (job_gpus).
  std::string placement = "packed";
  /// As one of cluster.jobs: how far its steps trail the experiment's, a share of its step alone.
  double phase = 0;
  /// workload.chakra: a directory of Chakra execution traces (PREFIX.RANK.et and PREFIX.json)
  /// whose tasks are the step, in place of the step built from model and training (which still
  /// name the FLOPs, tokens and memory the report divides by). Empty: the built step.
  std::string chakra;

  /// The position of a key, or of the file when it was not written (or built in code).
  SourceLocation at(const std::string& key) const;
};

/// The engines a step can run on (`simulation.engine`): "event", "simgrid".
const std::vector<std::string>& engine_names();

/// The keys of an experiment document and of its sections.
const Section& experiment_section();
const Section& cluster_section();
const Section& job_section();
const Section& baseline_section();
const Section& simulation_section();
const Section& budget_section();
const Section& workload_section();
/// Every table of the experiment schema, validation files and platforms, in the order
/// `clustersim schema` lists them.
std::vector<const Section*> all_sections();

/// Reads `model`, `cluster` and `training` from `map` (the other keys are the caller's).
void read_case_sections(SectionReader& map, const Catalog& catalog, ExperimentSpec& out);

ExperimentSpec load_experiment(const std::string& path, const Catalog& catalog);
/// Parses an experiment document (keys: name, description, model, cluster, training,
/// baseline, simulation, budget; `sweep` and `plot` are accepted and read elsewhere).
ExperimentSpec parse_experiment(const YamlNode& root, const Catalog& catalog);

/// What in the experiment is allowed but probably not meant: its platform's implausible figures
/// and the settings written that the chosen layout ignores ("KEY has no effect ..."). Empty
/// when nothing looks wrong.
std::vector<ConfigWarning> experiment_warnings(const ExperimentSpec& e);

/// `training.collective_algo`: "auto", or a registered algorithm with, optionally, one of its
/// protocols ("ring/simple"); otherwise a ConfigError at `where` listing the valid ones.
void check_collective_algo(const std::string& algo, const SourceLocation& where);

} // namespace clustersim
