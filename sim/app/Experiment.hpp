#pragma once
/// An experiment: a model on a cluster with training settings — the same three sections as
/// a validation case (`model`, `cluster`, `training`, key names of ../shared/validation) plus
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
};

/// Reads `model`, `cluster` and `training` from `map` (the other keys are the caller's).
void read_case_sections(YamlMap& map, const Catalog& catalog, ExperimentSpec& out);

ExperimentSpec load_experiment(const std::string& path, const Catalog& catalog);

} // namespace clustersim
