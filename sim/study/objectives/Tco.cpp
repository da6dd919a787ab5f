// `plan --objective tco`: the fewest dollars per million tokens with the cluster owned - its
// capex (the bill of materials priced from platforms/prices.yaml) written off over the years,
// plus energy - over every cluster size up to --gpus. A larger cluster, or a fabric that costs
// more, must buy its price back in step time.
#include "sim/study/PlanObjective.hpp"
#include "sim/study/Planner.hpp"
#include "topology/Prices.hpp"

#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace clustersim {
namespace {

class Tco final : public PlanObjective {
public:
  std::string title() const override { return "cost per token, owned (capex amortised, plus energy)"; }
  double value(const PlanRequest& r, int gpus, double step_s) const override
  {
    return usd_per_mtokens(r, gpus, step_s, owned_rate(r.platform, gpus));
  }
  void check(const PlanRequest& r) const override
  {
    if (const std::string missing = unpriced_parts(r.platform); !missing.empty())
      throw ConfigError(command_line("--objective"), r.platform.name + " cannot be priced as owned: " + missing,
                        "a platform whose parts platforms/prices.yaml prices, its cost overrides, or --objective "
                        "cost (the rental price)");
  }
  std::string json_key() const override { return "owned_usd_per_mtokens"; }
  std::string text(double value) const override
  {
    char buf[48];
    std::snprintf(buf, sizeof buf, "$%.4g/M tokens", value);
    return buf;
  }

private:
  /// The owned $/GPU-hour of each platform and cluster size (a graph built and priced once).
  double owned_rate(const PlatformSpec& p, int gpus) const
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto key = std::make_pair(p.name + "\n" + p.file, gpus);
    auto it = by_gpus_.find(key);
    if (it == by_gpus_.end())
      it = by_gpus_.emplace(key, owned_usd_per_gpu_hour(p, gpus)).first;
    return it->second;
  }
  mutable std::mutex mutex_;
  mutable std::map<std::pair<std::string, int>, double> by_gpus_; ///< by platform and size
};

const PlanObjectiveRegistry::Registrar
    reg("tco",
        "the fewest dollars per million tokens with the cluster owned: its capex from platforms/prices.yaml "
        "over the years, plus energy, over cluster sizes up to --gpus",
        [] { return std::make_unique<Tco>(); });

} // namespace
} // namespace clustersim
