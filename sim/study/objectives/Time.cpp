// `plan --objective time`: the shortest step on --gpus GPUs.
#include "sim/study/PlanObjective.hpp"
#include "sim/study/Planner.hpp"

namespace clustersim {
namespace {

class Time final : public PlanObjective {
public:
  std::string title() const override { return "step time"; }
  double value(const PlanRequest&, int, double step_s) const override { return step_s; }
  bool sizes_the_cluster() const override { return false; }
};

const PlanObjectiveRegistry::Registrar reg("time", "the shortest step on --gpus GPUs; the default",
                                           [] { return std::make_unique<Time>(); });

} // namespace
} // namespace clustersim
