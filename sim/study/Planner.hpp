#pragma once
/// The strategy planner: the best parallel layout for a model on a cluster.
///
/// 1. Enumerate every combination of tp, cp, pp, dp, micro-batch, schedule (GPipe, 1F1B,
///    interleaved with vpp), ZeRO stage, recompute policy and sequence parallelism for the
///    cluster size(s) considered; reject by divisibility and by memory (the cost model), each
///    rejection counted under its reason.
/// 2. Rank the survivors with a fast estimate: the contention-free evaluation of the layout's
///    own task graph (Timeline) — the same workload the simulator runs, every call at its
///    idle-link time. Long pipelines are evaluated at two small micro-batch counts and
///    extrapolated (1F1B and interleaved steps are affine in the micro-batch count once the
///    pipeline is full).
/// 3. Simulate the best K in forked processes (folded or full, as `run` would), and rank them
///    by the simulated objective.
///
/// Objectives: step time (default); cost per token over cluster sizes up to the one given;
/// the fewest GPUs (node multiples, doubling) whose best layout trains the token budget within
/// a deadline.

#include "sim/study/Catalog.hpp"
#include "sim/study/Reliability.hpp"
#include "sim/study/Simulation.hpp"
#include "strategies/CostModel.hpp"
#include "strategies/ModelSpec.hpp"

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace clustersim {

/// The layout fields `plan --fixed KEY=VALUE` pins: a partial TrainingSpec, read by the
/// training parser's own rules (parse_training_keys), compared by value with each candidate.
struct FixedLayout {
  TrainingSpec values;        ///< the pinned fields; the others hold their defaults, unused
  std::set<std::string> keys; ///< the training keys pinned
  bool has(const std::string& key) const { return keys.count(key) != 0; }
  /// A candidate's `field` may be `value`: the key is not pinned, or pinned to that value.
  template <class T> bool allows(const std::string& key, T TrainingSpec::*field, const T& value) const
  {
    return !has(key) || values.*field == value;
  }
  /// Copies a pinned field into a template layout.
  template <class T> void pin(const std::string& key, T TrainingSpec::*field, TrainingSpec& t) const
  {
    if (has(key))
      t.*field = values.*field;
  }
};

struct PlanRequest {
  ModelSpec model;
  PlatformSpec platform;
  int gpus = 0;
  int global_batch = 0;
  /// Template for every candidate: precision, flash attention, overlap, state bytes (the
  /// layout fields are the planner's).
  TrainingSpec base;
  int max_tp = 0;                           ///< 0: the NVLink domain
  FixedLayout fixed;                        ///< --fixed: tp, pp, cp, dp, vpp, zero, micro_batch, ...
  /// The name of a registered PlanObjective (PlanObjective.hpp): time, cost, deadline, goodput
  /// (expected wall time to train `tokens` through failures and checkpoints), goodput-cost, ...
  std::string objective = "time";
  double tokens = 1e12;                     ///< budget for cost, deadline and goodput
  ReliabilitySpec reliability = default_reliability(); ///< goodput objectives
  double deadline_days = 0;
  int top = 5;
  int jobs = 0; ///< processes (0: all cores)
};

struct PlanCandidate {
  int gpus = 0;
  TrainingSpec training;
  double peak_bytes = 0;
  double bound_s = 0;    ///< compute of the busiest stage alone: no layout step is shorter
  double estimate_s = 0; ///< contention-free step time
  bool simulated = false;
  RunMetrics sim;
};

struct PlanResult {
  std::size_t candidates = 0; ///< layouts enumerated
  std::map<std::string, std::size_t> rejected;
  std::size_t estimated = 0;
  std::vector<PlanCandidate> by_estimate; ///< every survivor, best estimated objective first
  std::vector<PlanCandidate> ranked;      ///< the simulated top K, best simulated objective first
  double rank_correlation = 0;            ///< Spearman, estimate vs simulation over `ranked`
  int gpus = 0;                           ///< cluster size of the answer
  bool deadline_met = true;
  double wall_s = 0;
};

/// The objective of a step time for a candidate (seconds, dollars per million tokens, or
/// seconds again for deadline, after the GPU count has been chosen).
double plan_objective(const PlanRequest& r, int gpus, double step_s);
/// Dollars per million tokens of a step of `step_s` on `gpus` GPUs at `usd_per_gpu_hour`.
double usd_per_mtokens(const PlanRequest& r, int gpus, double step_s, double usd_per_gpu_hour);

PlanResult plan_layouts(const PlanRequest& r, const Catalog& catalog,
                        const std::function<void(const std::string&)>& progress = {});

// The stages of plan_layouts, each usable on its own.
/// 1. Every layout of the search space that --fixed allows, with its cluster size; returns how
/// many.
std::size_t enumerate_layouts(const PlanRequest& r, const std::function<void(int gpus, const TrainingSpec&)>& fn);
/// 2. Why a layout is not worth estimating: a layout rule it breaks (LayoutRules), a duplicate
/// of another layout, out of memory, or dominated; nullopt when it is a candidate.
std::optional<std::string> prune_reason(const PlanRequest& r, int gpus, const TrainingSpec& t);

/// The `plan --fixed KEY=VALUE` texts (training keys the table marks fixable, plus the aliases
/// schedule, sp and mb), each value checked against the training table and the whole read as a
/// partial `training:` section, so that the keys' own rules hold (zero agrees with
/// data_parallel); every error names `--fixed`.
FixedLayout parse_fixed(const std::vector<std::string>& texts);
/// The fixed keys the search does not enumerate (framework, pipeline_layout, the embedding and
/// loss slots) set the template every candidate starts from.
void apply_fixed_to_base(PlanRequest& r);

class CollectiveEngine;
/// The task graph of a layout (folded) evaluated by the Timeline with port sharing.
double evaluate_layout(const ModelSpec& model, const GpuSpec& gpu, TrainingSpec t, CollectiveEngine& engine);
/// The planner's estimate: evaluate_layout, at p and 2p micro-batches and extrapolated when the
/// pipeline holds more than 2p.
double estimate_layout(const ModelSpec& model, const GpuSpec& gpu, const TrainingSpec& t, CollectiveEngine& engine);

/// A floor under a layout's step time on `gpus` GPUs of `p`: its busiest stage's compute for
/// every micro-batch and, for a MoE model, the expert-parallel exchanges that must cross NICs
/// (after the compute, or hidden behind it with moe_a2a_overlap). Layouts are bounded by it.
double step_bound(const CostModel& cost, const PlatformSpec& p, int gpus);

/// One line naming a layout: "tp 8 pp 8 dp 16 1f1b mb 1 zero 1 selective sp".
std::string describe_layout(const TrainingSpec& t);
/// The parallel layout proper, for comparing with published runs: tp, pp, cp, dp and vpp
/// (micro-batch, ZeRO stage, recompute and sequence parallelism are options on top of it).
std::string layout_key(const TrainingSpec& t);

} // namespace clustersim
