#pragma once
/// The planner's objectives (`plan --objective NAME`): what a candidate layout is ranked by.
/// Each registers itself from its own file under sim/study/objectives/ (one file and one line
/// of sim/study/CMakeLists.txt to add one); the planner and `plan`'s outputs ask the registered
/// objective, never its name.

#include "topology/config/Registry.hpp"

#include <string>

namespace clustersim {

struct PlanRequest;

class PlanObjective {
public:
  static constexpr const char* kRegistryKind = "planner objective";
  virtual ~PlanObjective() = default;
  /// What the plan's header says the candidates are ranked by ("step time").
  virtual std::string title() const = 0;
  /// The figure a candidate is ranked by, smaller first, for a step of `step_s` on `gpus` GPUs.
  virtual double value(const PlanRequest& r, int gpus, double step_s) const = 0;
  /// Refuses a request the objective cannot rank (ConfigError naming the flag), before any search.
  virtual void check(const PlanRequest& r) const { (void)r; }
  /// Whether every node multiple that doubles up to --gpus is a cluster size to consider
  /// (otherwise --gpus alone).
  virtual bool sizes_the_cluster() const { return true; }
  /// Whether the fewest GPUs that train --tokens within --deadline-days are kept (and the
  /// candidates ranked by step time among them); such an objective estimates every candidate.
  virtual bool has_deadline() const { return false; }
  /// Where the value is shown beside the step time: its key in the plan's JSON (empty when the
  /// value is the step time itself, not shown again) and its text in the plan's table.
  virtual std::string json_key() const { return {}; }
  virtual std::string text(double value) const
  {
    (void)value;
    return {};
  }
};

using PlanObjectiveRegistry = Registry<PlanObjective>;

/// The registered objective of `name`; std::invalid_argument (with a suggestion) otherwise.
const PlanObjective& plan_objective_named(const std::string& name);

} // namespace clustersim
