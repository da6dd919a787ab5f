// `plan --objective cost`: the fewest dollars per million tokens at the platform's price, over
// every cluster size up to --gpus.
#include "sim/study/PlanObjective.hpp"
#include "sim/study/Planner.hpp"

namespace clustersim {
namespace {

class Cost final : public PlanObjective {
public:
  std::string title() const override { return "cost per token"; }
  double value(const PlanRequest& r, int gpus, double step_s) const override
  {
    return usd_per_mtokens(r, gpus, step_s, r.platform.cost.usd_per_gpu_hour);
  }
};

const PlanObjectiveRegistry::Registrar reg("cost", "the fewest dollars per million tokens, over cluster sizes up to --gpus",
                                           [] { return std::make_unique<Cost>(); });

} // namespace
} // namespace clustersim
