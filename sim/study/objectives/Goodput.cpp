// `plan --objective goodput` and `goodput-cost`: the expected wall time (days) to train
// --tokens through the failures, checkpoints and restarts of the reliability model, or the price
// of its GPU-hours, over every cluster size up to --gpus.
#include "sim/study/Goodput.hpp"
#include "sim/study/PlanObjective.hpp"
#include "sim/study/Planner.hpp"

#include <cstdio>

namespace clustersim {
namespace {

/// The closed-form wall time of the run through failures (Goodput.hpp).
double wall_through_failures(const PlanRequest& r, int gpus, double step_s)
{
  GoodputInput in;
  in.step_s = step_s;
  in.tokens_per_step = static_cast<double>(r.global_batch) * r.model.seq_len;
  in.budget_tokens = r.tokens;
  in.gpus = gpus;
  in.gpus_per_node = r.platform.node.gpus;
  in.nics_per_node = r.platform.node.nics > 0 ? r.platform.node.nics : r.platform.node.gpus;
  const StateBytes st = r.base.states();
  in.checkpoint_bytes = r.model.total_params() * (st.weights + st.optimizer);
  in.usd_per_gpu_hour = r.platform.cost.usd_per_gpu_hour;
  return goodput_wall_s(r.reliability, in, 0);
}

class GoodputDays final : public PlanObjective {
public:
  std::string title() const override { return "days to train the tokens through failures"; }
  double value(const PlanRequest& r, int gpus, double step_s) const override
  {
    return wall_through_failures(r, gpus, step_s) / 86400;
  }
  std::string json_key() const override { return "goodput_days"; }
  std::string text(double days) const override
  {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%7.2f d", days);
    return buf;
  }
};

class GoodputCost final : public PlanObjective {
public:
  std::string title() const override { return "dollars to train the tokens through failures"; }
  double value(const PlanRequest& r, int gpus, double step_s) const override
  {
    return wall_through_failures(r, gpus, step_s) / 3600 * gpus * r.platform.cost.usd_per_gpu_hour;
  }
  std::string json_key() const override { return "goodput_cost_usd"; }
  std::string text(double usd) const override
  {
    char buf[64];
    std::snprintf(buf, sizeof buf, "$%.3g", usd);
    return buf;
  }
};

const PlanObjectiveRegistry::Registrar days("goodput", "the fewest days to train --tokens through failures",
                                            [] { return std::make_unique<GoodputDays>(); });
const PlanObjectiveRegistry::Registrar usd("goodput-cost", "the fewest dollars to train --tokens through failures",
                                           [] { return std::make_unique<GoodputCost>(); });

} // namespace
} // namespace clustersim
