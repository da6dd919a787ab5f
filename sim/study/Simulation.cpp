#include "sim/study/Simulation.hpp"

#include "sim/EventEngine.hpp"
#include "sim/Timeline.hpp"
#include "sim/study/Metrics.hpp"

#include "sim/CollectiveEngine.hpp"
#include "sim/Trace.hpp"
#include "sim/collectives/CollectiveAlgorithm.hpp"
#include "sim/simgrid/Executor.hpp"
#include "sim/simgrid/SimPlatform.hpp"
#include "sim/study/ChakraWorkload.hpp"
#include "sim/study/Isolated.hpp"
#include "strategies/Layout.hpp"
#include "strategies/StepBuilder.hpp"
#include "topology/ClusterGraph.hpp"
#include "topology/Prices.hpp"
#include "topology/config/Units.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <cstdio>
#include <sstream>

namespace clustersim {

/// A step's tasks grow linearly with its micro-batches (each runs forward and backward on every
/// stage): two small builds (pp and 2 pp micro-batches) give the slope, and a step of more than
/// simulation.max_tasks is refused at global_batch before it is built. Steps of up to 16 pp
/// micro-batches are not probed (the probes would cost a fifth of their build or more).
void check_step_size(const ExperimentSpec& e, const CostModel& cost, int unit, int domain)
{
  const TrainingSpec& t = e.training;
  const long long m = t.micro_batches(), m1 = t.pp, m2 = 2LL * t.pp;
  if (m <= 16LL * t.pp)
    return;
  auto tasks_at = [&](long long micro_batches) {
    TrainingSpec probe = t;
    probe.global_batch = micro_batches * t.micro_batch * t.dp;
    return static_cast<double>(build_step(CostModel(e.model, probe, cost.gpu()), unit, domain).workload.tasks().size());
  };
  const double a = tasks_at(m1), b = tasks_at(m2);
  const double tasks = a + (b - a) / static_cast<double>(m2 - m1) * static_cast<double>(m - m1);
  const double bound = static_cast<double>(e.max_tasks);
  if (tasks <= bound)
    return;
  const long long fit = m1 + static_cast<long long>((bound - a) / ((b - a) / static_cast<double>(m2 - m1)));
  auto at = e.where.find("training.global_batch");
  const std::string raise =
      tasks <= static_cast<double>(kMaxStepTasksLimit)
          ? ", or simulation.max_tasks: " + std::to_string(static_cast<long long>(std::ceil(tasks))) +
                " (about " + std::to_string(static_cast<long long>(std::ceil(tasks * 70e-9))) + " GB)"
          : "";
  throw ConfigError(at != e.where.end() ? at->second : SourceLocation{},
                    "a step of " + std::to_string(m) + " micro-batches per pipeline is about " +
                        std::to_string(static_cast<long long>(tasks)) + " tasks to simulate, more than the " +
                        std::to_string(e.max_tasks) + " of simulation.max_tasks",
                    "a global_batch of at most " + std::to_string(std::max(fit, m1) * t.micro_batch * t.dp) +
                        " here (past the pipeline's fill a step grows by the same time per micro-batch)" + raise);
}

namespace {

/// How the step is simulated: folded (one rank per stage) or every rank, and why.
struct ModeChoice {
  bool fold = false;
  bool analytic = false;
  std::string name;
  std::string reason;
};

ModeChoice choose_mode(const ExperimentSpec& e)
{
  // Fold tensor-, context- and data-parallel replicas into one simulated rank per stage when
  // they cannot contend for links (then folding is exact); otherwise simulate every rank.
  ModeChoice c;
  // uneven expert loads (real routing) give every expert rank its own compute
  const bool uneven = CostModel::uneven_expert_loads(e.model, e.training);
  if (e.faults.any() || uneven) {
    c.analytic = e.mode == "analytic";
    c.name = c.analytic ? "analytic" : "full";
    c.reason = std::string(c.analytic ? "contention-free evaluation of every rank" : "every rank simulated") +
               (e.faults.any() ? ": the faults make ranks differ" : ": uneven expert loads make ranks differ");
    return c;
  }
  const std::string contention = replica_contention(e.platform);
  const bool replicas = static_cast<long long>(e.training.tp) * e.training.cp * e.training.dp > 1;
  c.analytic = e.mode == "analytic";
  c.fold = (c.analytic || e.mode == "folded" || (e.mode == "auto" && contention.empty())) && replicas;
  c.name = c.analytic ? "analytic" : c.fold ? "folded" : "full";
  if (c.analytic)
    c.reason = "contention-free evaluation of the task graph: every collective and transfer at its idle-link "
               "time, a lower bound where they overlap on shared links";
  else if (c.fold && !contention.empty())
    c.reason = "replicas folded as requested, though they can contend (" + contention +
               "): an approximation that ignores that contention";
  else if (c.fold)
    c.reason = "the ranks of one NVLink domain per pipeline stage simulated, the other domains mirror them: they "
               "differ only on private NICs, which cannot contend on " +
               e.platform.name;
  else if (e.mode == "full")
    c.reason = "every rank simulated, as requested";
  else if (!replicas)
    c.reason = "no replicas to fold";
  else
    c.reason = "every rank simulated: replicas can contend (" + contention + ")";
  return c;
}

/// Every collective of the step has a plan: an algorithm forced by training.collective_algo
/// that cannot run one of them is the experiment's error, at that key. `from`: the first call
/// of `e`'s (a shared cluster plans each job's calls with its own key).
void plan_collectives(const Workload& w, CollectiveEngine& engine, const ExperimentSpec& e, std::uint32_t from = 0,
                      std::uint32_t to = static_cast<std::uint32_t>(-1))
{
  to = std::min(to, static_cast<std::uint32_t>(w.collectives().size()));
  for (std::uint32_t call = from; call < to; ++call) {
    try {
      engine.plan(w, call);
    } catch (const std::invalid_argument& err) {
      const CollectiveCall& c = w.collectives()[call];
      throw ConfigError(e.at("training.collective_algo"),
                        "collective_algo '" + e.training.collective_algo + "' cannot run " + to_string(c.op) +
                            " on a group of " + std::to_string(w.groups()[c.group].ranks.size()) +
                            " ranks, which this layout needs (" + to_string(c.category) + ")",
                        "auto, or an algorithm that runs every collective of the step", ConfigError::Kind::rule);
    }
  }
}

/// A folded step is exact only if every collective that crosses NVLink domains loads every
/// domain alike: the first call run by an algorithm that does not (a tree across nodes; a
/// latency-bound call loads nothing), or "".
std::string asymmetric_call(const Workload& w, CollectiveEngine& engine, const ClusterGraph& cluster)
{
  for (std::uint32_t call = 0; call < w.collectives().size(); ++call) {
    const auto& ranks = w.groups()[w.collectives()[call].group].ranks;
    bool crosses = false;
    for (auto r : ranks)
      crosses = crosses || cluster.domain_of(static_cast<int>(r)) != cluster.domain_of(static_cast<int>(ranks[0]));
    if (!crosses)
      continue;
    const ExecPlan& plan = engine.plan(w, call);
    // a latency-bound call runs as a delay, the same for every member: it loads no node
    if (!plan.latency_bound && !AlgorithmRegistry::instance().shared(plan.algorithm).node_symmetric())
      return plan.algorithm + " " + to_string(w.collectives()[call].op) + " over " + std::to_string(ranks.size()) +
             " ranks";
  }
  return "";
}

/// A folded step is exact only if no simulated rank shares an NVLink domain with a mirror: the
/// first such rank's domain, or -1 (stages that do not align with domains, an NVL72 holding
/// parts of two stages).
int open_domain(const Workload& w, const ClusterGraph& cluster)
{
  std::vector<std::uint8_t> seen(static_cast<std::size_t>(cluster.domains()), 0); // 1 simulated, 2 mirror
  for (std::uint32_t r = 0; r < w.ranks(); ++r)
    seen[static_cast<std::size_t>(cluster.domain_of(static_cast<int>(r)))] |= w.simulated(r) ? 1 : 2;
  for (std::size_t d = 0; d < seen.size(); ++d)
    if (seen[d] == 3)
      return static_cast<int>(d);
  return -1;
}

/// The cluster's capex (its bill of materials priced) and, with cost.basis owned, the cost
/// figures at the owned $/GPU-hour.
void add_capex(RunMetrics& m, const ExperimentSpec& e, const ClusterGraph& cluster)
{
  const Capex c = price_cluster(bill_of_materials(cluster), e.platform);
  m.cost_basis = cost_basis_names()[static_cast<std::size_t>(e.platform.cost.basis)];
  if (!c.priced()) {
    m.unpriced = c.unpriced;
    require_priced_if_owned(e.platform, c.unpriced);
    return;
  }
  m.capex_usd = c.total();
  m.network_capex_share = c.network_share();
  m.owned_usd_per_gpu_hour = c.usd_per_gpu_hour();
  if (e.platform.cost.basis == CostBasis::owned) {
    m.usd_per_gpu_hour = m.owned_usd_per_gpu_hour;
    m.cost_usd = m.gpu_hours * m.usd_per_gpu_hour;
  }
}

/// The report's metrics of a simulated step.
RunMetrics metrics_of(const ExperimentSpec& e, const CostModel& cost, const StepPlan& plan, const ExecutionResult& res,
                      const ModeChoice& mode)
{
  const double peak = e.platform.node.gpu.peak(e.training.precision);
  RunMetrics m;
  m.name = e.name;
  m.platform = e.platform.name;
  m.model = e.model.name;
  m.gpus = e.gpus;
  m.training = e.training;
  m.assumptions = e.assumptions;
  m.tasks = plan.workload.tasks().size();
  m.simulated_ranks = plan.workload.simulated_ranks();
  m.mode = mode.name;
  m.mode_reason = mode.reason;
  m.stats = res.stats;
  m.step_time_s = res.makespan;
  m.alone_step_s = res.makespan; // a shared cluster's run sets its own
  m.model_flops_per_step = cost.model_flops_per_step();
  m.hardware_flops_per_step = cost.hardware_flops_per_step();
  m.params = e.model.total_params();
  const double gpus = e.gpus;
  m.mfu = m.model_flops_per_step / (m.step_time_s * gpus * peak);
  m.hfu = m.hardware_flops_per_step / (m.step_time_s * gpus * peak);
  m.tokens_per_s = static_cast<double>(e.training.global_batch) * e.model.seq_len / m.step_time_s;
  m.tokens_per_s_per_gpu = m.tokens_per_s / gpus;
  m.tflops_per_gpu_model = m.model_flops_per_step / m.step_time_s / gpus / 1e12;
  m.tflops_per_gpu_hardware = m.hardware_flops_per_step / m.step_time_s / gpus / 1e12;
  m.budget_tokens = e.budget_tokens;
  m.time_to_train_s = e.budget_tokens / m.tokens_per_s;
  m.gpu_hours = m.time_to_train_s / 3600 * gpus;
  const double nodes = std::ceil(gpus / e.platform.node.gpus);
  const double watts =
      (gpus * e.platform.node.gpu.board_watts() + nodes * e.platform.cost.node_overhead_watts) * e.platform.cost.pue;
  m.energy_mwh = watts * m.time_to_train_s / 3600 / 1e6;
  m.usd_per_gpu_hour = e.platform.cost.usd_per_gpu_hour; // owned: add_capex sets it
  m.cost_usd = m.gpu_hours * m.usd_per_gpu_hour;
  std::uint32_t rank = busiest_rank(plan.workload, res);
  m.breakdown = analyze_rank(plan.workload, res, rank);
  if (e.faults.any()) {
    std::vector<double> busy(plan.workload.ranks(), 0);
    for (const Task& t : plan.workload.tasks())
      if (t.kind == TaskKind::compute && t.stream == Stream::compute)
        busy[t.rank] += t.amount;
    auto least = static_cast<std::uint32_t>(std::min_element(busy.begin(), busy.end()) - busy.begin());
    m.has_least_loaded = true;
    m.least_loaded = analyze_rank(plan.workload, res, least);
  }
  Layout layout(e.training);
  m.critical_stage = layout.coord(static_cast<int>(rank), Dim::pp);
  m.memory = cost.peak_memory();
  m.layers_per_stage = layers_per_rank(cost.pipeline(), e.training.pp);
  m.pipeline = describe_pipeline(cost.pipeline(), e.training.pp);
  return m;
}

void set_comm(RunMetrics& m, const CommTime& c)
{
  m.comm_s = c.ran;
  m.comm_idle_s = c.idle;
  m.comm_slowed_s = c.slowed;
}

/// Runs a step on the experiment's engine (the event engine, or SimGrid's actors).
ExecutionResult run_step(const Workload& w, CollectiveEngine& collectives, const ClusterGraph& cluster,
                         const ExperimentSpec& e)
{
  const double speed = e.platform.node.gpu.peak(e.training.precision);
  if (e.engine == "simgrid") {
    SimPlatform platform(cluster, speed);
    return execute(w, platform, collectives);
  }
  return execute_events(w, collectives, speed);
}

RunMetrics simulate_shared(const ExperimentSpec& e, const Catalog& catalog, TraceRequest* trace,
                           ExecutionResult* result);

} // namespace

RunMetrics simulate(const ExperimentSpec& e, const Catalog& catalog, TraceRequest* trace, ExecutionResult* result)
{
  if (!e.jobs.empty())
    return simulate_shared(e, catalog, trace, result);
  // fewer GPUs than a node: one node, the rest of its GPUs idle
  ClusterGraph cluster = ClusterGraph::build(e.platform, std::max(e.gpus, e.platform.node.gpus));
  apply_link_faults(e.faults, cluster);
  CostModel cost(e.model, e.training, e.platform.node.gpu);
  ModeChoice mode = choose_mode(e);
  const int domain = cluster.gpus_per_domain();
  const int unit = !mode.fold ? 0 : mode.analytic ? 1 : domain;
  StepPlan plan;
  if (!e.chakra.empty()) {
    chakra::ImportSummary left_out;
    plan.workload = load_chakra(e.chakra, e.at("workload.chakra"), &left_out);
    mode.fold = false;
    mode.name = mode.analytic ? mode.name : "full";
    mode.reason = chakra_reason(e.chakra, left_out);
  } else {
    check_step_size(e, cost, unit, domain);
    plan = build_step(cost, unit, domain);
    apply_compute_faults(e.faults, e, plan.workload,
                         [unit, domain](const CostModel& c) { return build_step(c, unit, domain).workload; });
  }
  CollectiveEngine collectives(cluster, catalog.protocols());
  plan_collectives(plan.workload, collectives, e);
  if (mode.fold && !mode.analytic && e.mode == "auto") {
    // folding is exact only when nothing a mirror does can differ from a simulated rank
    std::string why;
    const std::string tree = asymmetric_call(plan.workload, collectives, cluster);
    if (!tree.empty())
      why = "the " + tree + " loads interior nodes more than the rest, so one node's replicas cannot stand for all";
    else if (open_domain(plan.workload, cluster) >= 0)
      why = "the pipeline stages do not align with the " + std::to_string(cluster.gpus_per_domain()) +
            "-GPU NVLink domains, so a simulated rank would share its domain with mirrors";
    if (!why.empty()) {
      mode.fold = false;
      mode.name = "full";
      mode.reason = "every rank simulated: " + why;
      plan = build_step(cost, 0, domain);
      plan_collectives(plan.workload, collectives, e);
    }
  }
  ExecutionResult res = mode.analytic ? evaluate_contention_free(plan.workload, collectives)
                                      : run_step(plan.workload, collectives, cluster, e);
  RunMetrics m = metrics_of(e, cost, plan, res, mode);
  add_capex(m, e, cluster);
  set_comm(m, comm_time(plan.workload, res, collectives, m.breakdown.rank));
  m.engine = mode.analytic ? "timeline" : e.engine;
  m.network = network_load(plan.workload, collectives, m.step_time_s);
  if (trace)
    trace->json = chrome_trace(plan.workload, res, cluster, e.name, *trace);
  if (result)
    *result = std::move(res);
  return m;
}

RunMetrics simulate_isolated(const ExperimentSpec& e, const Catalog& catalog)
{
  std::string out = run_isolated([&] { return to_json(simulate(e, catalog)).dump(); });
  return metrics_from_json(Json::parse(out));
}

std::vector<std::vector<std::uint32_t>> job_gpus(const ExperimentSpec& e)
{
  const int node = e.platform.node.gpus;
  std::vector<int> left{(e.gpus + node - 1) / node}; // nodes each job still needs
  for (const ExperimentSpec& j : e.jobs)
    left.push_back((j.gpus + node - 1) / node);
  std::vector<std::vector<std::uint32_t>> out(left.size());
  std::uint32_t next = 0; // the next free node
  auto take = [&](std::size_t job) {
    for (int g = 0; g < node; ++g)
      out[job].push_back(next * static_cast<std::uint32_t>(node) + static_cast<std::uint32_t>(g));
    ++next;
    --left[job];
  };
  if (e.placement == "interleaved") {
    for (bool any = true; any;) {
      any = false;
      for (std::size_t job = 0; job < left.size(); ++job)
        if (left[job] > 0) {
          take(job);
          any = true;
        }
    }
  } else {
    for (std::size_t job = 0; job < left.size(); ++job)
      while (left[job] > 0)
        take(job);
  }
  out[0].resize(static_cast<std::size_t>(e.gpus));
  for (std::size_t job = 1; job < out.size(); ++job)
    out[job].resize(static_cast<std::size_t>(e.jobs[job - 1].gpus));
  return out;
}

namespace {

double last_end(const ExecutionResult& r, TaskId from, TaskId to)
{
  double t = 0;
  for (TaskId id = from; id < to; ++id)
    t = std::max(t, r.end[id]);
  return t;
}

/// The GPUs of a shared cluster: one past the highest any job holds.
int cluster_gpus(const std::vector<std::vector<std::uint32_t>>& gpus)
{
  std::uint32_t n = 0;
  for (const auto& job : gpus)
    for (auto g : job)
      n = std::max(n, g + 1);
  return static_cast<int>(n);
}

/// A job of cluster.jobs on the experiment's platform and engine.
ExperimentSpec job_spec(const ExperimentSpec& e, const ExperimentSpec& job)
{
  ExperimentSpec j = job;
  j.platform = e.platform; // a seed or routing set after parsing (simulation.seeds) holds for every job
  j.engine = e.engine;
  j.max_tasks = e.max_tasks;
  return j;
}

/// Appends `steps` steps of a job on `gpus` (one per rank), after a wait of `delay` seconds
/// on each of its ranks; returns each step's first task, then the end of the last.
std::vector<TaskId> append_steps(Workload& all, const Workload& step, int steps,
                                 const std::vector<std::uint32_t>& gpus, double delay, const ExperimentSpec& e)
{
  const double tasks = static_cast<double>(all.tasks().size()) + static_cast<double>(step.tasks().size()) * steps;
  if (tasks > static_cast<double>(e.max_tasks))
    throw ConfigError(e.at("cluster.jobs"),
                      "the step beside " + std::to_string(steps) + " steps of another job is " +
                          std::to_string(static_cast<long long>(tasks)) + " tasks to simulate, more than the " +
                          std::to_string(e.max_tasks) + " of simulation.max_tasks",
                      "a job whose step is closer to the experiment's, or simulation.max_tasks: " +
                          std::to_string(static_cast<long long>(tasks)));
  if (delay > 0) {
    Workload wait(step.ranks());
    for (std::uint32_t r = 0; r < step.ranks(); ++r)
      wait.add_compute(r, delay, {Category::other, "phase", -1, -1}, {});
    all.append(wait, gpus);
  }
  std::vector<TaskId> out;
  for (int k = 0; k < steps; ++k)
    out.push_back(all.append(step, gpus));
  out.push_back(static_cast<TaskId>(all.tasks().size()));
  return out;
}

/// The jobs of one shared cluster, built on its whole graph: the experiment's step (when `own`)
/// and `jobs[i].steps` steps of each job i (none when 0), each on its GPUs (job_gpus).
struct SharedStep {
  std::vector<std::vector<std::uint32_t>> gpus; ///< job_gpus
  ClusterGraph cluster;
  std::optional<StepPlan> plan; ///< the experiment's step, when it is on the cluster
  Workload all;
  std::vector<std::vector<TaskId>> steps; ///< per job: each step's first task, then the end
  ExecutionResult res;

  SharedStep(const ExperimentSpec& e, const Catalog& catalog, bool own, const std::vector<SharedJob>& jobs)
      : gpus(job_gpus(e)), cluster(ClusterGraph::build(e.platform, cluster_gpus(gpus)))
  {
    apply_link_faults(e.faults, cluster);
    const int domain = cluster.gpus_per_domain();
    if (own) {
      CostModel cost(e.model, e.training, e.platform.node.gpu);
      check_step_size(e, cost, 0, domain);
      plan = build_step(cost, 0, domain);
      apply_compute_faults(e.faults, e, plan->workload,
                           [domain](const CostModel& c) { return build_step(c, 0, domain).workload; });
      all.append(plan->workload, gpus[0]);
    }
    std::vector<std::uint32_t> calls{static_cast<std::uint32_t>(all.collectives().size())};
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      steps.emplace_back();
      if (jobs[i].steps > 0) {
        const ExperimentSpec j = job_spec(e, e.jobs[i]);
        CostModel c(j.model, j.training, j.platform.node.gpu);
        check_step_size(j, c, 0, domain);
        steps.back() = append_steps(all, build_step(c, 0, domain).workload, jobs[i].steps, gpus[i + 1],
                                    jobs[i].delay_s, e);
      }
      calls.push_back(static_cast<std::uint32_t>(all.collectives().size()));
    }
    collectives.emplace(cluster, catalog.protocols());
    plan_collectives(all, *collectives, e, 0, calls[0]);
    for (std::size_t i = 0; i < jobs.size(); ++i)
      plan_collectives(all, *collectives, e.jobs[i], calls[i], calls[i + 1]);
    res = run_step(all, *collectives, cluster, e);
  }

  std::optional<CollectiveEngine> collectives; ///< after the link faults; holds the step's plans

  /// When step `k` of job `i` ended (its phase's wait not counted).
  double step_end(std::size_t i, int k, double delay) const
  {
    const auto at = static_cast<std::size_t>(k);
    return last_end(res, steps[i][at], steps[i][at + 1]) - delay;
  }
};

/// Each job's step ends alone on the cluster (in a child: SimGrid runs once per process), as
/// "E1 E2 ..." per job, one line each.
std::vector<std::vector<double>> alone_step_ends(const ExperimentSpec& e, const Catalog& catalog,
                                                 const std::vector<SharedJob>& jobs)
{
  std::vector<std::vector<double>> out;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    std::vector<SharedJob> only(jobs.size());
    only[i] = jobs[i];
    std::istringstream in(run_isolated([&] {
      SharedStep alone(e, catalog, false, only);
      std::ostringstream o;
      o.precision(17);
      for (int k = 0; k < jobs[i].steps; ++k)
        o << alone.step_end(i, k, jobs[i].delay_s) << " ";
      return o.str();
    }));
    out.emplace_back();
    for (double t = 0; in >> t;)
      out.back().push_back(t);
  }
  return out;
}

/// The experiment beside cluster.jobs: every job on its own nodes of one cluster graph, all
/// simulated together. Each job's steps repeat back to back (a stream's next step follows its
/// last, as on a GPU), enough to cover the experiment's step alone 1.5 times and one more, so
/// the experiment runs beside them throughout. The report is the experiment's; each job gets
/// its mean step over those of its steps that ended within the experiment's. Both are compared
/// with the same steps alone on the same cluster graph, in children.
RunMetrics simulate_shared(const ExperimentSpec& e, const Catalog& catalog, TraceRequest* trace,
                           ExecutionResult* result)
{
  const auto gpus = job_gpus(e);
  ExperimentSpec own = e;
  own.jobs.clear();
  const double hint = simulate_isolated(own, catalog).step_time_s; // on its own nodes: sizes the jobs' steps
  std::vector<SharedJob> jobs;
  for (std::size_t i = 0; i < e.jobs.size(); ++i) {
    const ExperimentSpec j = job_spec(e, e.jobs[i]);
    SharedJob s;
    s.name = j.name;
    s.gpus = j.gpus;
    s.first_gpu = static_cast<int>(gpus[i + 1].front());
    const double step = simulate_isolated(j, catalog).step_time_s;
    s.delay_s = j.phase * step;
    s.steps = static_cast<int>(std::ceil(1.5 * hint / step)) + 1;
    jobs.push_back(s);
  }
  const double own_alone = std::stod(run_isolated([&] {
    SharedStep alone(e, catalog, true, std::vector<SharedJob>(jobs.size()));
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", alone.res.makespan);
    return std::string(buf);
  }));
  const auto alone = alone_step_ends(e, catalog, jobs);
  SharedStep run(e, catalog, true, jobs);
  const auto own_tasks = static_cast<std::ptrdiff_t>(run.plan->workload.tasks().size());
  ExecutionResult mine;
  mine.start.assign(run.res.start.begin(), run.res.start.begin() + own_tasks);
  mine.end.assign(run.res.end.begin(), run.res.end.begin() + own_tasks);
  mine.makespan = last_end(run.res, 0, static_cast<TaskId>(own_tasks));
  mine.stats = run.res.stats;
  int others = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    SharedJob& s = jobs[i];
    others += s.gpus;
    while (s.measured < s.steps && run.step_end(i, s.measured, 0) <= mine.makespan)
      ++s.measured;
    const int k = std::max(s.measured, 1); // none ended within: its first step
    s.step_s = run.step_end(i, k - 1, s.delay_s) / k;
    s.alone_s = alone[i].at(static_cast<std::size_t>(k - 1)) / k;
  }
  ModeChoice mode;
  mode.name = "full";
  mode.reason = "every rank simulated: the cluster is shared with " + std::to_string(jobs.size()) + " other job" +
                (jobs.size() > 1 ? "s" : "") + " on " + std::to_string(others) + " GPUs (" + e.placement +
                " nodes), whose flows reach every rank";
  CostModel cost(e.model, e.training, e.platform.node.gpu);
  RunMetrics m = metrics_of(e, cost, *run.plan, mine, mode);
  add_capex(m, e, ClusterGraph::build(e.platform, std::max(e.gpus, e.platform.node.gpus))); // its own GPUs
  m.engine = e.engine;
  m.tasks = run.all.tasks().size();
  m.network = network_load(run.all, *run.collectives, run.res.makespan);
  set_comm(m, comm_time(run.all, run.res, *run.collectives, run.gpus[0][m.breakdown.rank]));
  m.alone_step_s = own_alone;
  m.jobs = std::move(jobs);
  if (trace)
    trace->json = chrome_trace(run.plan->workload, mine, run.cluster, e.name, *trace);
  if (result)
    *result = std::move(run.res);
  return m;
}

} // namespace

ExperimentSpec baseline_of(const ExperimentSpec& e)
{
  ExperimentSpec b = e;
  b.faults = FaultSpec{}; // scaling is measured against a healthy baseline, alone on its cluster
  b.jobs.clear();
  b.chakra.clear(); // a traced step's baseline is the model's own step on the baseline's GPUs
  // whole replicas, each holding whole expert-parallel groups: tp·cp·dp a multiple of ep·etp
  const int ee = e.training.ep * e.training.etp;
  const int mp = e.training.model_parallel() * (ee / std::gcd(e.training.tp * e.training.cp, ee));
  const int node = e.platform.node.gpus;
  int base = e.baseline_gpus > 0 ? e.baseline_gpus : node;
  if (base < mp)
    base = mp;
  base -= base % mp;
  // a baseline beyond one node is whole nodes: the smallest count holding whole replicas on
  // whole nodes (tp 4 x pp 3 on 8-GPU nodes: 24), or the run itself
  if (base > node && base % node != 0)
    base = std::lcm(mp, node);
  if (base > e.gpus)
    base = e.gpus;
  b.gpus = base;
  b.training.dp = base / e.training.model_parallel();
  b.training.global_batch = e.training.global_batch / e.training.dp * b.training.dp;
  // a hybrid strategy's shard groups as large as the baseline's replicas allow
  if (b.training.dp_shard > 0)
    b.training.dp_shard = std::gcd(b.training.dp_shard, b.training.dp);
  b.name = e.name + " (baseline)";
  return b;
}

namespace {

/// The metrics a seed band covers: the step, MFU and the breakdown, as the JSON names them.
std::vector<std::pair<std::string, double>> seeded_metrics(const RunMetrics& m)
{
  std::vector<std::pair<std::string, double>> out;
  for (const Metric& k : report_metrics())
    if (k.part == MetricPart::breakdown || k.key == std::string("step_time_s") || k.key == std::string("mfu"))
      out.emplace_back(k.key, k.get(m));
  return out;
}

Percentiles percentiles(std::vector<double> v)
{
  std::sort(v.begin(), v.end());
  auto at = [&v](double q) {
    const double x = q * static_cast<double>(v.size() - 1);
    const auto i = static_cast<std::size_t>(x);
    return i + 1 < v.size() ? v[i] + (x - static_cast<double>(i)) * (v[i + 1] - v[i]) : v[i];
  };
  return {v.front(), at(0.1), at(0.5), at(0.9), v.back()};
}

/// Runs `e` at each of its seeds (in children), then the median seed here; returns that run
/// with the band.
RunMetrics simulate_seeds(const ExperimentSpec& e, const Catalog& catalog, TraceRequest* trace)
{
  const std::uint32_t first = e.platform.fabric.seed;
  std::vector<RunMetrics> runs;
  for (int i = 0; i < e.seeds; ++i) {
    ExperimentSpec s = e;
    s.platform.fabric.seed = first + static_cast<std::uint32_t>(i);
    runs.push_back(simulate_isolated(s, catalog));
  }
  std::vector<int> order(runs.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&runs](int a, int b) {
    return runs[static_cast<std::size_t>(a)].step_time_s < runs[static_cast<std::size_t>(b)].step_time_s;
  });
  const auto median = static_cast<std::uint32_t>(order[(order.size() - 1) / 2]);
  ExperimentSpec med = e;
  med.platform.fabric.seed = first + median;
  RunMetrics m = simulate(med, catalog, trace);
  m.seeds.count = e.seeds;
  m.seeds.first = first;
  m.seeds.reported = first + median;
  const auto names = seeded_metrics(m);
  for (std::size_t k = 0; k < names.size(); ++k) {
    std::vector<double> v;
    for (const RunMetrics& r : runs)
      v.push_back(seeded_metrics(r)[k].second);
    m.seeds.metrics.emplace_back(names[k].first, percentiles(std::move(v)));
  }
  return m;
}

} // namespace

RunMetrics run_experiment(const ExperimentSpec& e, const Catalog& catalog, TraceRequest* trace)
{
  ExperimentSpec base = baseline_of(e);
  double base_per_gpu = 0;
  // the baseline is healthy: with faults, even a run of the baseline's size is measured against it
  const bool own = base.gpus == e.gpus && !e.faults.any();
  // the run before its baseline: a run that cannot be simulated is refused before the baseline
  // runs. Not on SimGrid: it allows one engine per process, and a child forked after the run
  // inherits that engine and cannot start its own, so there the baseline's child comes first.
  const bool baseline_first = !own && e.engine == "simgrid";
  if (baseline_first)
    base_per_gpu = simulate_isolated(base, catalog).tokens_per_s_per_gpu;
  RunMetrics m = e.seeds > 1 ? simulate_seeds(e, catalog, trace) : simulate(e, catalog, trace);
  if (!own && !baseline_first)
    base_per_gpu = simulate_isolated(base, catalog).tokens_per_s_per_gpu;
  m.baseline_gpus = base.gpus;
  m.scaling_efficiency = own ? 1.0 : m.tokens_per_s_per_gpu / base_per_gpu;
  return m;
}

// ------------------------------------------------------------------ JSON

Json to_json(const RunMetrics& m)
{
  Json j;
  j["name"] = m.name;
  j["platform"] = m.platform;
  j["model"] = m.model;
  j["gpus"] = m.gpus;
  j["assumptions"] = Json::array();
  for (const auto& a : m.assumptions)
    j["assumptions"].push_back({{"key", a.key}, {"value", a.value}, {"origin", a.origin}});
  j["layout"] = Json::object();
  put_layout(j["layout"], &m.training);
  if (m.training.pp > 1)
    j["pipeline"] = {{"layers_per_stage", m.layers_per_stage}, {"stages", m.pipeline}};
  j["baseline_gpus"] = m.baseline_gpus;
  j["cost_basis"] = m.cost_basis;
  if (!m.unpriced.empty())
    j["unpriced"] = m.unpriced; // why capex_usd and the owned figures are null
  Json breakdown = Json::object();
  Json least = {{"rank", m.least_loaded.rank}};
  Json memory = Json::object();
  for (const Metric& k : report_metrics()) {
    if (k.part == MetricPart::step)
      j[k.key] = metric_json(k.get(m));
    else if (k.part == MetricPart::breakdown) {
      breakdown[k.key] = k.get(m);
      if (m.has_least_loaded)
        least[k.key] = m.least_loaded.*k.share;
    } else
      memory[k.key] = k.get(m);
  }
  breakdown["critical_stage"] = m.critical_stage;
  breakdown["critical_rank"] = m.breakdown.rank;
  j["breakdown"] = breakdown;
  if (m.has_least_loaded)
    j["least_loaded_breakdown"] = least;
  memory["fits"] = m.memory.fits;
  memory["dominant"] = m.memory.dominant;
  memory["stage"] = m.memory.stage;
  j["memory"] = memory;
  j["simulation"] = {{"mode", m.mode},
                     {"engine", m.engine},
                     {"reason", m.mode_reason},
                     {"simulated_ranks", m.simulated_ranks},
                     {"tasks", m.tasks},
                     {"actors", m.stats.actors},
                     {"executions", m.stats.executions},
                     {"flows", m.stats.flows},
                     {"collectives", m.stats.collectives},
                     // "analytic": the JSON name of the exclusive-link shortcut, kept for the scripts
                     // that read it (not the contention-free mode "analytic")
                     {"analytic_collectives", m.stats.exclusive_collectives},
                     {"helped_collectives", m.stats.helped},
                     {"transfers", m.stats.transfers},
                     {"analytic_transfers", m.stats.exclusive_transfers}};
  j["network"] = Json::array();
  for (const TierLoad& l : m.network)
    j["network"].push_back({{"tier", to_string(l.tier)},
                            {"links", l.links},
                            {"used", l.used},
                            {"bytes", l.bytes},
                            {"busiest_load", l.busiest_load},
                            {"busiest_link", l.busiest_link},
                            {"mean_load", l.mean_load},
                            {"background_load", l.background}});
  if (!m.jobs.empty()) {
    Json jobs = Json::array();
    for (const SharedJob& s : m.jobs)
      jobs.push_back({{"name", s.name},
                      {"gpus", s.gpus},
                      {"first_gpu", s.first_gpu},
                      {"delay_s", s.delay_s},
                      {"steps", s.steps},
                      {"measured_steps", s.measured},
                      {"alone_step_time_s", s.alone_s},
                      {"step_time_s", s.step_s}});
    j["shared_jobs"] = jobs;
  }
  if (m.seeds.count > 0) {
    Json band = {{"count", m.seeds.count}, {"first", m.seeds.first}, {"reported", m.seeds.reported}};
    for (const auto& [name, p] : m.seeds.metrics)
      band[name] = {{"min", p.min}, {"p10", p.p10}, {"p50", p.p50}, {"p90", p.p90}, {"max", p.max}};
    j["seeds"] = band;
  }
  return j;
}

RunMetrics metrics_from_json(const Json& j)
{
  RunMetrics m;
  m.name = j.at("name");
  m.platform = j.at("platform");
  m.model = j.at("model");
  m.gpus = j.at("gpus");
  if (j.contains("assumptions"))
    for (const auto& a : j.at("assumptions"))
      m.assumptions.push_back({a.at("key"), a.at("value"), a.at("origin")});
  for (const LayoutField& f : layout_fields())
    f.set(m.training, j.at("layout").at(f.key));
  if (j.contains("pipeline")) {
    m.layers_per_stage = j.at("pipeline").at("layers_per_stage").get<std::vector<int>>();
    m.pipeline = j.at("pipeline").at("stages");
  }
  m.baseline_gpus = j.at("baseline_gpus");
  m.cost_basis = j.at("cost_basis");
  if (j.contains("unpriced"))
    m.unpriced = j.at("unpriced");
  const Json& b = j.at("breakdown");
  const Json& mem = j.at("memory");
  m.has_least_loaded = j.contains("least_loaded_breakdown");
  for (const Metric& k : report_metrics()) {
    if (k.part == MetricPart::step)
      k.set(m, metric_value(j.at(k.key)));
    else if (k.part == MetricPart::breakdown) {
      k.set(m, b.at(k.key));
      if (m.has_least_loaded)
        m.least_loaded.*k.share = j.at("least_loaded_breakdown").at(k.key);
    } else
      k.set(m, mem.at(k.key));
  }
  m.breakdown.rank = b.at("critical_rank");
  m.breakdown.step = m.step_time_s;
  m.critical_stage = b.at("critical_stage");
  if (m.has_least_loaded) {
    m.least_loaded.rank = j.at("least_loaded_breakdown").at("rank");
    m.least_loaded.step = m.step_time_s;
  }
  m.memory.fits = mem.at("fits");
  m.memory.dominant = mem.at("dominant");
  m.memory.stage = mem.at("stage");
  const Json& s = j.at("simulation");
  m.tasks = s.at("tasks");
  m.stats.actors = s.at("actors");
  m.stats.executions = s.at("executions");
  m.stats.flows = s.at("flows");
  m.stats.collectives = s.at("collectives");
  m.stats.exclusive_collectives = s.at("analytic_collectives");
  m.stats.helped = s.at("helped_collectives");
  m.stats.transfers = s.at("transfers");
  m.stats.exclusive_transfers = s.at("analytic_transfers");
  m.mode = s.at("mode");
  m.engine = s.at("engine");
  m.mode_reason = s.at("reason");
  m.simulated_ranks = s.at("simulated_ranks");
  for (const Json& n : j.at("network")) {
    TierLoad load;
    for (LinkTier t : {LinkTier::scale_up, LinkTier::host, LinkTier::nic, LinkTier::leaf_up, LinkTier::spine_up})
      if (n.at("tier") == to_string(t))
        load.tier = t;
    load.links = n.at("links");
    load.used = n.at("used");
    load.bytes = n.at("bytes");
    load.busiest_load = n.at("busiest_load");
    load.busiest_link = n.at("busiest_link");
    load.mean_load = n.at("mean_load");
    load.background = n.value("background_load", 0.0);
    m.network.push_back(load);
  }
  if (j.contains("shared_jobs")) {
    for (const Json& x : j.at("shared_jobs"))
      m.jobs.push_back({x.at("name"), x.at("gpus"), x.at("first_gpu"), x.at("delay_s"), x.at("steps"),
                        x.at("measured_steps"), x.at("alone_step_time_s"), x.at("step_time_s")});
  }
  if (j.contains("seeds")) {
    const Json& band = j.at("seeds");
    m.seeds.count = band.at("count");
    m.seeds.first = band.at("first");
    m.seeds.reported = band.at("reported");
    for (const auto& [name, v] : seeded_metrics(m)) {
      (void)v;
      const Json& p = band.at(name);
      m.seeds.metrics.emplace_back(name, Percentiles{p.at("min"), p.at("p10"), p.at("p50"), p.at("p90"), p.at("max")});
    }
  }
  return m;
}

} // namespace clustersim
