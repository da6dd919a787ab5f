// `plan --objective deadline`: the fewest GPUs that train --tokens within --deadline-days, then
// the shortest step on them.
#include "sim/study/PlanObjective.hpp"
#include "sim/study/Planner.hpp"

namespace clustersim {
namespace {

class Deadline final : public PlanObjective {
public:
  std::string title() const override { return "fewest GPUs within the deadline"; }
  double value(const PlanRequest&, int, double step_s) const override { return step_s; }
  bool has_deadline() const override { return true; }
};

const PlanObjectiveRegistry::Registrar reg("deadline",
                                           "the fewest GPUs that train --tokens within --deadline-days",
                                           [] { return std::make_unique<Deadline>(); });

} // namespace
} // namespace clustersim
