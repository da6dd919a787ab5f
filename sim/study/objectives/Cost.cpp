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
    const double tokens_per_step = static_cast<double>(r.global_batch) * r.model.seq_len;
    return r.platform.cost.usd_per_gpu_hour * gpus * step_s / 3600 / tokens_per_step * 1e6;
  }
};

const PlanObjectiveRegistry::Registrar reg("cost", "the fewest dollars per million tokens, over cluster sizes up to --gpus",
                                           [] { return std::make_unique<Cost>(); });

} // namespace
} // namespace clustersim
