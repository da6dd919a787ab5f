#pragma once
/// Runs one experiment end to end — cluster graph, cost model, the strategies' workload,
/// SimGrid execution, breakdown — and computes the report's metrics.

#include "sim/Breakdown.hpp"
#include "sim/ExecutionResult.hpp"
#include "sim/NetworkLoad.hpp"
#include "sim/Trace.hpp"
#include "sim/study/Experiment.hpp"
#include "strategies/CostModel.hpp"

#include <nlohmann/json.hpp>

#include <limits>
#include <string>

namespace clustersim {

using Json = nlohmann::ordered_json;

/// One metric over the seeds of a step (linear interpolation between the sorted values, as
/// numpy's default percentile).
struct Percentiles {
  double min = 0, p10 = 0, p50 = 0, p90 = 0, max = 0;
};

/// What `simulation.seeds: N` adds: the step and its breakdown over N ECMP hash seeds.
struct SeedBand {
  int count = 0;              ///< seeds run; 0: one seed, no band
  std::uint32_t first = 0;    ///< the first seed (the fabric's)
  std::uint32_t reported = 0; ///< the median seed (the lower one of an even count), whose run the report is
  std::vector<std::pair<std::string, Percentiles>> metrics; ///< step_time_s, mfu, then the breakdown's
};

/// A job of cluster.jobs as it ran beside the experiment.
struct SharedJob {
  std::string name;
  int gpus = 0;
  int first_gpu = 0;   ///< where its GPUs begin on the cluster
  double delay_s = 0;  ///< its first step's start (its phase times its step alone)
  int steps = 0;       ///< its steps simulated, back to back
  int measured = 0;    ///< the steps that ended within the experiment's step (step_s is their mean)
  double alone_s = 0;  ///< its step alone on the cluster
  double step_s = 0;   ///< its mean step beside the experiment (its first step when none ended within it)
};

struct RunMetrics {
  std::string name;
  std::string platform;
  std::string model;
  int gpus = 0;
  TrainingSpec training;
  std::vector<Assumption> assumptions; ///< the defaults that moved it, with their origins

  // the figures of the report (Metrics.hpp declares each: key, unit, meaning)
  double step_time_s = 0;
  double mfu = 0;
  double hfu = 0;
  double tokens_per_s = 0;
  double tokens_per_s_per_gpu = 0;
  double tflops_per_gpu_model = 0;
  double tflops_per_gpu_hardware = 0;
  double scaling_efficiency = 1;
  /// The critical rank's collectives and transfers (NetworkLoad.hpp's CommTime): as they ran, on
  /// idle links, and their time beyond that (shared links), each summed.
  double comm_s = 0;
  double comm_idle_s = 0;
  double comm_slowed_s = 0;
  int baseline_gpus = 0;

  // what a token budget costs at this throughput
  double budget_tokens = 0;
  double time_to_train_s = 0;
  double gpu_hours = 0;
  double energy_mwh = 0; ///< GPUs at board power (TDP) + node overhead, times PUE
  double cost_usd = 0;   ///< GPU-hours x usd_per_gpu_hour
  /// The $/GPU-hour of the cost figures: the platform's rental price, or (cost.basis: owned)
  /// owned_usd_per_gpu_hour.
  double usd_per_gpu_hour = 0;
  // The cluster priced from platforms/prices.yaml (Prices.hpp); NaN when a part is not priced
  double capex_usd = std::numeric_limits<double>::quiet_NaN();
  double network_capex_share = std::numeric_limits<double>::quiet_NaN();
  double owned_usd_per_gpu_hour = std::numeric_limits<double>::quiet_NaN();
  std::string unpriced;              ///< what is not priced (empty when the capex is known)
  std::string cost_basis = "rental"; ///< the platform's cost.basis

  double model_flops_per_step = 0;
  double hardware_flops_per_step = 0;
  double params = 0;
  Breakdown breakdown;
  /// With faults: the rank with the least compute, whose exposed communication and bubble show
  /// where the waiting for the slow ranks went.
  bool has_least_loaded = false;
  Breakdown least_loaded;
  int critical_stage = 0;
  std::vector<int> layers_per_stage; ///< transformer layers of each pipeline rank
  std::string pipeline;              ///< what each pipeline rank holds: "E 7 | 8 | ... | 7 L"
  MemoryBreakdown memory;
  ExecutionStats stats;
  std::size_t tasks = 0;
  std::string mode;        ///< "folded" or "full"
  std::string engine;      ///< what ran the step: "event", "simgrid", or "timeline" (analytic mode)
  std::string mode_reason; ///< why
  std::uint32_t simulated_ranks = 0;
  SeedBand seeds;
  std::vector<TierLoad> network; ///< per tier of links: how busy the step keeps them
  /// The step alone on its cluster (with cluster.jobs, simulated without them; else the step).
  double alone_step_s = 0;
  /// cluster.jobs as they ran beside this step.
  std::vector<SharedJob> jobs;
};

/// The GPU of each rank of each job on a shared cluster: [0] the experiment's, then each of
/// `e.jobs` in order. Jobs hold whole nodes: `packed` gives each its nodes in one run, the
/// experiment's first; `interleaved` deals the nodes one at a time to each job in turn that
/// still needs one (a fragmented cluster, where jobs share leaves).
std::vector<std::vector<std::uint32_t>> job_gpus(const ExperimentSpec& e);

/// Refuses (ConfigError at training.global_batch) a step whose task count, extrapolated from two
/// small builds, exceeds simulation.max_tasks; `unit` and `domain` as build_step takes them.
void check_step_size(const ExperimentSpec& e, const CostModel& cost, int unit, int domain);

/// Simulates in this process (with the simgrid engine it creates the SimGrid engine: call it
/// once per process). With `trace`, also writes there a Chrome/Perfetto trace of the step; with
/// `result`, every task's times (for tests that compare engines).
RunMetrics simulate(const ExperimentSpec& e, const Catalog& catalog, TraceRequest* trace = nullptr,
                    ExecutionResult* result = nullptr);
/// Simulates in a forked child.
RunMetrics simulate_isolated(const ExperimentSpec& e, const Catalog& catalog);
/// Simulates the experiment and its scaling baseline (in a child) and fills scaling_efficiency.
RunMetrics run_experiment(const ExperimentSpec& e, const Catalog& catalog, TraceRequest* trace = nullptr);
/// The baseline experiment: same per-replica work on `baseline_gpus` (default one node).
ExperimentSpec baseline_of(const ExperimentSpec& e);

Json to_json(const RunMetrics& m);
RunMetrics metrics_from_json(const Json& j);

} // namespace clustersim
