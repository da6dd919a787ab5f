#pragma once
/// An experiment: a model on a cluster with training settings — the same three sections as
/// a validation case (`model`, `cluster`, `training`, key names of experiments/validation) plus
/// a name and the scaling baseline.

#include "Catalog.hpp"
#include "ModelSpec.hpp"
#include "TrainingSpec.hpp"

#include <string>

namespace clustersim {

struct ExperimentSpec {
  std::string name;
  std::string description;
  std::string file;
  ModelSpec model;
  PlatformSpec platform;
  int gpus = 0;
  TrainingSpec training;
  int baseline_gpus = 0; ///< scaling-efficiency baseline; 0 = one node
  /// "auto": fold symmetric replicas when they cannot contend (exact); "full": every rank.
  std::string mode = "auto";
  double budget_tokens = 1e12; ///< tokens for time-to-train, GPU-hours, energy and cost
};

/// Reads `model`, `cluster` and `training` from `map` (the other keys are the caller's).
void read_case_sections(YamlMap& map, const Catalog& catalog, ExperimentSpec& out);

ExperimentSpec load_experiment(const std::string& path, const Catalog& catalog);
/// Parses an experiment document (keys: name, description, model, cluster, training,
/// baseline, simulation, budget; `sweep` and `plot` are accepted and read elsewhere).
ExperimentSpec parse_experiment(const YamlNode& root, const Catalog& catalog);

} // namespace clustersim
