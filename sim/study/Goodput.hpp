#pragma once
/// Goodput of a whole training run: the simulated step time against the failures, checkpoints
/// and restarts of `reliability:` (Reliability.hpp).
///
/// Closed form (first order, memoryless failures at rate lambda, planned
/// interruptions at rate p): lambda = sum over parts of units x FIT x 1e-9 per hour; with W the failure-free training time, delta the checkpoint write
/// time, tau the training time between checkpoints, R the restart plus the checkpoint read,
/// each unexpected interruption losing on average (tau + delta) / 2 of work and each planned one
/// costing delta + R, and A the fraction of the time at most S nodes are out for repair (nodes
/// in repair ~ Poisson(lambda_hw x repair); A = 1 with unlimited spares),
///
///   T = W (1 + delta / tau) / (1 - lambda (R + (tau + delta) / 2) - p (delta + R)) / A,
///   ETTR = W / T,
///
/// and tau defaults to Daly's optimum sqrt(2 delta M) - delta, M = 1 / lambda (Young 1974,
/// Daly 2006). The Monte-Carlo replays the run event by event (failures during checkpoints and
/// restarts included, spares taken and returned after the repair time) for `trials` runs from a
/// seeded generator: the same seed gives the same band. Its work is bounded: whole checkpoint
/// intervals between interruptions are one jump, and at most kMonteCarloEvents interruptions are
/// replayed over all trials (fewer trials run past that, none below kMonteCarloMinTrials, and
/// the result says so).

#include "sim/study/Reliability.hpp"

#include <string>
#include <vector>

namespace clustersim {

/// The interruptions replayed over all of a Monte-Carlo's trials (about 2 s of CPU).
inline constexpr double kMonteCarloEvents = 5e7;
/// Fewer trials than this give no band worth printing; the closed form stands alone.
inline constexpr long long kMonteCarloMinTrials = 20;

struct GoodputInput {
  double step_s = 0;
  double tokens_per_step = 0;
  double budget_tokens = 0;
  long long gpus = 0;
  int gpus_per_node = 8;
  int nics_per_node = 8;
  double checkpoint_bytes = 0; ///< the model's states (used when the spec gives no size)
  double usd_per_gpu_hour = 0;
  /// The Monte-Carlo's bound on interruptions replayed over all trials (the fuzz targets lower
  /// it so that one input stays fast).
  double monte_carlo_events = kMonteCarloEvents;
};

struct SourceRate {
  std::string name;
  std::string per;
  double units = 0;
  double per_day = 0; ///< interruptions per day of this job from this part
  bool hardware = true;
};

struct GoodputResult {
  std::vector<SourceRate> rates;
  double unexpected_per_day = 0;
  double planned_per_day = 0;
  bool planned_scaled = false; ///< planned_per_day is Llama 3's rate per node x the job's nodes
  double mtbf_s = 0; ///< of the job, unexpected interruptions only
  double checkpoint_bytes = 0;
  double write_s = 0;
  double read_s = 0;
  double interval_s = 0;
  bool interval_optimal = false;
  double restart_s = 0;    ///< per interruption: restart and checkpoint read
  double p_no_spare = 0;   ///< finite spares: the fraction of the time more than S nodes are in repair
  double spare_wait_s = 0; ///< the wall time spent waiting for repaired nodes
  double nodes = 0;
  long long spare_nodes = -1;

  double steps = 0;
  double work_s = 0; ///< failure-free training time W
  bool progresses = true;
  // closed form
  double wall_s = 0;
  double ettr = 0;
  double unexpected = 0;
  double planned = 0;
  double lost_s = 0;
  double checkpoint_total_s = 0;
  double restart_total_s = 0;
  double gpu_hours = 0; ///< the job's GPUs and its spares, for the wall time
  double cost_usd = 0;
  // Monte-Carlo
  long long trials_asked = 0;
  long long trials = 0; ///< run: fewer than asked past the events bound, 0 when not run
  std::string mc_note;  ///< why fewer trials ran, or none; empty when all ran
  long long seed = 0;
  double mc_wall_p05 = 0, mc_wall_p50 = 0, mc_wall_p95 = 0;
  double mc_ettr_mean = 0, mc_ettr_p05 = 0, mc_ettr_p95 = 0;
  double mc_interruptions_mean = 0;
  // the optional window
  double window_days = 0;
  double window_unexpected = 0;
  double window_planned = 0;
};

/// The closed form and the Monte-Carlo band.
GoodputResult goodput(const ReliabilitySpec& spec, const GoodputInput& in);
/// The closed-form wall time for one checkpoint interval (<= 0: the spec's, else the Young/Daly
/// optimum); +inf when the run cannot progress.
double goodput_wall_s(const ReliabilitySpec& spec, const GoodputInput& in, double interval_s);
/// The Young/Daly interval of the spec's rates (+inf without unexpected interruptions).
double goodput_optimal_interval_s(const ReliabilitySpec& spec, const GoodputInput& in);

} // namespace clustersim
