#include "sim/study/Planner.hpp"
#include "sim/study/PlanObjective.hpp"

#include "sim/CollectiveEngine.hpp"
#include "sim/Timeline.hpp"
#include "sim/study/Isolated.hpp"
#include "sim/study/Sweep.hpp"
#include "strategies/LayoutRules.hpp"
#include "strategies/MoeDispatcher.hpp"
#include "strategies/PipelineSchedule.hpp"
#include "strategies/StepBuilder.hpp"
#include "topology/ClusterGraph.hpp"
#include "topology/config/Suggest.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <tuple>

namespace clustersim {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<int> divisors(int n)
{
  std::vector<int> d;
  for (int i = 1; i <= n; ++i)
    if (n % i == 0)
      d.push_back(i);
  return d;
}

/// Cluster sizes to consider: the one asked for, or (cost, deadline) every node multiple that
/// doubles up to it.
std::vector<int> gpu_counts(const PlanRequest& r)
{
  if (!plan_objective_named(r.objective).sizes_the_cluster())
    return {r.gpus};
  // every node multiple that doubles up to --gpus
  std::vector<int> out;
  for (int g = r.platform.node.gpus; g < r.gpus; g *= 2)
    out.push_back(g);
  out.push_back(r.gpus);
  return out;
}

struct Option {
  std::string schedule;
  int vpp;
  bool searched; ///< tried without --fixed naming it
};

} // namespace

/// Contention-free step time of a layout's task graph (folded: replicas are symmetric).
double evaluate_layout(const ModelSpec& model, const GpuSpec& gpu, TrainingSpec t, CollectiveEngine& engine)
{
  CostModel cost(model, t, gpu);
  StepPlan plan = build_step(cost, 1, engine.cluster().gpus_per_domain());
  TimelineOptions o;
  o.share_ports = true;
  return evaluate_contention_free(plan.workload, engine, o).makespan;
}

/// The estimate: evaluated directly when the pipeline holds few micro-batches, else at p and 2p
/// micro-batches and extrapolated (a full pipeline adds one micro-batch's work per micro-batch).
double estimate_layout(const ModelSpec& model, const GpuSpec& gpu, const TrainingSpec& t, CollectiveEngine& engine)
{
  const int m = t.micro_batches();
  const int p = std::max(2, t.pp);
  if (m <= 2 * p)
    return evaluate_layout(model, gpu, t, engine);
  auto at = [&](int count) {
    TrainingSpec u = t;
    u.global_batch = count * u.micro_batch * u.dp;
    return evaluate_layout(model, gpu, u, engine);
  };
  const double s1 = at(p);
  const double s2 = at(2 * p);
  return s2 + (s2 - s1) / p * (m - 2 * p);
}

namespace {

/// The busiest pipeline stage's compute for all micro-batches: a floor under any step time.
double compute_bound(const CostModel& cost)
{
  const TrainingSpec& t = cost.training();
  const BlockCost e = cost.embedding();
  const BlockCost l = cost.logits();
  double worst = 0;
  for (int stage = 0; stage < t.pp; ++stage) {
    // an MTP module: a layer and the output head
    double v = cost.stage_layer_seconds(stage) + cost.mtp_modules(stage) * (l.forward + l.backward);
    if (cost.holds_embedding(stage))
      v += e.forward + e.backward + e.recompute;
    if (cost.holds_loss(stage))
      v += l.forward + l.backward + l.recompute;
    worst = std::max(worst, v);
  }
  return worst * static_cast<double>(t.micro_batches());
}

/// The busiest stage's expert-parallel exchanges for all micro-batches, at the NIC's rate for
/// what must leave the NVLink domain (as much of each EP group inside one as fits): dispatch
/// and combine of every MoE layer, forward and backward. A floor under the time they take.
double exchange_bound(const CostModel& cost, const PlatformSpec& p, int gpus)
{
  const TrainingSpec& t = cost.training();
  const double nic = p.node.nic.bandwidth * p.node.nics / p.node.gpus; // per GPU
  const int domain = ClusterGraph::job_domain_nodes(p, std::max(1, gpus / p.node.gpus)) * p.node.gpus;
  if (t.ep <= domain || nic <= 0)
    return 0;
  const int domains = (t.ep + domain - 1) / domain;
  const MoeDispatcher& dispatcher = MoeDispatcherRegistry::instance().shared(t.moe_dispatcher);
  const double out = dispatcher.deduplicates() ? cost.moe_dedup_bytes(domains) * (domains - 1) / domains
                     : dispatcher.gathers()    ? cost.moe_gather_bytes() / t.etp * (t.ep - domain) / t.ep
                                               : cost.moe_dispatch_bytes() * (t.ep - domain) / t.ep;
  int layers = 0;
  for (int stage = 0; stage < t.pp; ++stage)
    layers = std::max(layers, cost.moe_layers_on(stage));
  return 4.0 * out / nic * layers * static_cast<double>(t.micro_batches());
}

} // namespace

double step_bound(const CostModel& cost, const PlatformSpec& p, int gpus)
{
  const double compute = compute_bound(cost);
  const double exchanges = exchange_bound(cost, p, gpus);
  return cost.training().moe_a2a_overlap ? std::max(compute, exchanges) : compute + exchanges;
}

namespace {

double spearman(const std::vector<double>& a, const std::vector<double>& b)
{
  const std::size_t n = a.size();
  if (n < 2)
    return 1;
  auto ranks = [n](const std::vector<double>& v) {
    std::vector<std::size_t> idx(n);
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](std::size_t x, std::size_t y) { return v[x] < v[y]; });
    std::vector<double> r(n);
    for (std::size_t i = 0; i < n;) { // ties share their mean rank
      std::size_t j = i;
      while (j + 1 < n && v[idx[j + 1]] == v[idx[i]])
        ++j;
      for (std::size_t k = i; k <= j; ++k)
        r[idx[k]] = 0.5 * static_cast<double>(i + j);
      i = j + 1;
    }
    return r;
  };
  auto ra = ranks(a);
  auto rb = ranks(b);
  double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / static_cast<double>(n);
  double mb = std::accumulate(rb.begin(), rb.end(), 0.0) / static_cast<double>(n);
  double num = 0, da = 0, db = 0;
  for (std::size_t i = 0; i < n; ++i) {
    num += (ra[i] - ma) * (rb[i] - mb);
    da += (ra[i] - ma) * (ra[i] - ma);
    db += (rb[i] - mb) * (rb[i] - mb);
  }
  return da > 0 && db > 0 ? num / std::sqrt(da * db) : 1;
}

} // namespace

std::string describe_layout(const TrainingSpec& t)
{
  std::string s = "tp " + std::to_string(t.tp) + " pp " + std::to_string(t.pp) + " dp " + std::to_string(t.dp);
  if (t.cp > 1)
    s += " cp " + std::to_string(t.cp);
  if (t.ep > 1 || t.etp > 1)
    s += " ep " + std::to_string(t.ep) + (t.etp > 1 ? " etp " + std::to_string(t.etp) : "");
  if (t.pp > 1)
    s += " " + t.schedule;
  if (t.vpp > 1)
    s += " vpp " + std::to_string(t.vpp);
  s += " mb " + std::to_string(t.micro_batch) + " zero " + std::to_string(t.zero) + " " + to_string(t.recompute);
  if (t.dp_shard > 0)
    s += " " + t.data_parallel_name() + " " + std::to_string(t.dp_shard);
  if (t.sequence_parallel)
    s += " sp";
  return s;
}

std::string layout_key(const TrainingSpec& t)
{
  return "tp " + std::to_string(t.tp) + " pp " + std::to_string(t.pp) + " cp " + std::to_string(t.cp) + " dp " +
         std::to_string(t.dp) + " vpp " + std::to_string(t.vpp) +
         (t.ep > 1 || t.etp > 1 ? " ep " + std::to_string(t.ep) + " etp " + std::to_string(t.etp) : "");
}

double usd_per_mtokens(const PlanRequest& r, int gpus, double step_s, double usd_per_gpu_hour)
{
  const double tokens_per_step = static_cast<double>(r.global_batch) * r.model.seq_len;
  return usd_per_gpu_hour * gpus * step_s / 3600 / tokens_per_step * 1e6;
}

double plan_objective(const PlanRequest& r, int gpus, double step_s)
{
  return plan_objective_named(r.objective).value(r, gpus, step_s);
}

const PlanObjective& plan_objective_named(const std::string& name)
{
  return PlanObjectiveRegistry::instance().shared(name);
}

namespace {

const std::vector<Option>& schedule_options()
{
  static const std::vector<Option> o = [] {
    std::vector<Option> v;
    for (const std::string& name : ScheduleRegistry::instance().names())
      for (int vpp : ScheduleRegistry::instance().shared(name).planner_chunks())
        v.push_back({name, vpp, ScheduleRegistry::instance().shared(name).searched()});
    return v;
  }();
  return o;
}

} // namespace

FixedLayout parse_fixed(const std::vector<std::string>& texts)
{
  static const std::map<std::string, std::string> aliases{
      {"schedule", "pipeline_schedule"}, {"sp", "sequence_parallel"}, {"mb", "micro_batch"}};
  const Section& table = training_section();
  std::vector<std::string> keys;
  for (const auto& k : table.keys)
    if (k.fixable)
      keys.push_back(k.key);
  std::vector<Setting> settings;
  for (const std::string& text : texts) {
    auto eq = text.find('=');
    if (eq == std::string::npos)
      throw ConfigError(command_line("--fixed"), "'" + text + "' is not KEY=VALUE", "e.g. --fixed pp=8");
    std::string key = text.substr(0, eq);
    const std::string value = text.substr(eq + 1);
    if (auto a = aliases.find(key); a != aliases.end())
      key = a->second;
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      throw ConfigError(command_line("--fixed"), unknown_key_message("layout field", key, keys, "", table.hints),
                        join(keys));
    // each value alone first, so that the error says which --fixed it is
    if (auto bad = check_scalar(table.at(key), value))
      throw ConfigError(command_line("--fixed"), key + "=" + value + ": " + bad->first, bad->second);
    settings.push_back({"training." + key, value, command_line("--fixed")});
  }
  FixedLayout f;
  const YamlNode doc = apply_settings(YamlNode::load_string("training: {}\n", "command line"), settings);
  f.values = parse_training_keys(YamlMap(doc, "command line").require("training"), f.keys);
  return f;
}

void apply_fixed_to_base(PlanRequest& r)
{
  // the fixed keys the search does not enumerate
  r.fixed.pin("framework", &TrainingSpec::framework, r.base);
  r.fixed.pin("pipeline_layout", &TrainingSpec::pipeline_layout, r.base);
  r.fixed.pin("account_for_embedding_in_pipeline_split", &TrainingSpec::embedding_slot, r.base);
  r.fixed.pin("account_for_loss_in_pipeline_split", &TrainingSpec::loss_slot, r.base);
}

namespace {

/// The expert layouts of a stage of `ranks` (tp x cp x dp) ranks: ep over the divisors of the
/// experts that divide the ranks, etp 1 or the attention's tp (Megatron's MoE parallel
/// folding); a dense model has only (1, 1).
std::vector<std::pair<int, int>> expert_layouts(const PlanRequest& r, int ranks, int tp)
{
  std::vector<std::pair<int, int>> out;
  if (r.model.experts <= 1)
    return {{r.base.ep, r.base.etp}};
  for (int ep : divisors(r.model.experts)) {
    if (!r.fixed.allows("ep", &TrainingSpec::ep, ep))
      continue;
    for (int etp : {1, tp}) {
      if ((etp == tp && tp == 1 && !out.empty() && out.back().first == ep) || ranks % (ep * etp) != 0 ||
          !r.fixed.allows("etp", &TrainingSpec::etp, etp))
        continue;
      out.push_back({ep, etp});
    }
  }
  return out;
}

/// The data-parallel strategies tried for a layout: the one its ZeRO stage names, and where
/// the framework shards hybrid, each hybrid strategy of that stage with one NVLink domain's
/// replicas per shard group (so that the gathers stay on NVLink and only the shards' all-reduce
/// crosses the fabric).
std::vector<std::pair<std::string, int>> data_parallel_options(const PlanRequest& r, const TrainingSpec& t)
{
  std::vector<std::pair<std::string, int>> out;
  if (r.fixed.allows("data_parallel", &TrainingSpec::data_parallel, TrainingSpec::zero_strategy(t.zero)))
    out.push_back({"", 0});
  const int shard = r.platform.gpus_per_domain() / (t.tp * t.cp);
  if ((!shards_hybrid(t.framework) && !r.fixed.has("data_parallel")) || shard < 2 || shard >= t.dp || t.dp % shard != 0)
    return out;
  for (const auto& name : DataParallelRegistry::instance().names()) {
    const DataParallelStrategy& s = DataParallelRegistry::instance().shared(name);
    if (s.hybrid() && s.zero_stage() == t.zero && r.fixed.allows("data_parallel", &TrainingSpec::data_parallel, name))
      out.push_back({name, shard});
  }
  return out;
}

} // namespace

std::size_t enumerate_layouts(const PlanRequest& r, const std::function<void(int gpus, const TrainingSpec&)>& fn)
{
  static const std::vector<int> micro_batches{1, 2, 4, 8};
  static const std::vector<int> cps{1, 2, 4, 8, 16};
  static const std::vector<Recompute> recomputes{Recompute::none, Recompute::selective, Recompute::full};
  TrainingSpec base = r.base;
  base.global_batch = r.global_batch;
  std::size_t n = 0;
  for (int g : gpu_counts(r))
    for (int tp : divisors(g)) {
      if (tp > r.model.heads || !r.fixed.allows("tp", &TrainingSpec::tp, tp))
        continue;
      for (int cp : cps) {
        if (g % (tp * cp) != 0 || !r.fixed.allows("cp", &TrainingSpec::cp, cp))
          continue;
        for (int pp : divisors(g / (tp * cp))) {
          const int dp = g / (tp * cp * pp);
          if (!r.fixed.allows("pp", &TrainingSpec::pp, pp) || !r.fixed.allows("dp", &TrainingSpec::dp, dp))
            continue;
          for (int mb : micro_batches) {
            if (!r.fixed.allows("micro_batch", &TrainingSpec::micro_batch, mb))
              continue;
            for (const Option& o : schedule_options()) {
              if ((!o.searched && !r.fixed.has("pipeline_schedule")) ||
                  !r.fixed.allows("vpp", &TrainingSpec::vpp, o.vpp) ||
                  !r.fixed.allows("pipeline_schedule", &TrainingSpec::schedule, o.schedule))
                continue;
              for (int zero = 0; zero <= 3; ++zero) {
                if (!r.fixed.allows("zero", &TrainingSpec::zero, zero))
                  continue;
                for (Recompute rc : recomputes) {
                  if (!r.fixed.allows("recompute", &TrainingSpec::recompute, rc))
                    continue;
                  for (bool sp : {false, true}) {
                    if (!r.fixed.allows("sequence_parallel", &TrainingSpec::sequence_parallel, sp))
                      continue;
                    TrainingSpec t = base;
                    t.tp = tp;
                    t.cp = cp;
                    t.pp = pp;
                    t.dp = dp;
                    t.micro_batch = mb;
                    t.schedule = o.schedule;
                    t.vpp = o.vpp;
                    t.zero = zero;
                    t.recompute = rc;
                    t.sequence_parallel = sp;
                    for (const auto& [ep, etp] : expert_layouts(r, tp * cp * dp, tp)) {
                      t.ep = ep;
                      t.etp = etp;
                      for (const auto& [name, shard] : data_parallel_options(r, t)) {
                        t.data_parallel = name;
                        t.dp_shard = shard;
                        ++n;
                        fn(g, t);
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  return n;
}

std::optional<std::string> prune_reason(const PlanRequest& r, int gpus, const TrainingSpec& t)
{
  const int max_tp = r.max_tp > 0 ? r.max_tp : r.platform.gpus_per_domain();
  if (t.tp > max_tp)
    return std::string("tp beyond the NVLink domain (--max-tp)");
  // what the simulator cannot run: the rules every experiment meets
  if (auto v = check_layout(t, r.model, gpus))
    return v->reason;
  // the same layout written twice: options that change nothing here
  if (t.pp == 1 && t.schedule != default_schedule(1))
    return std::string("no pipeline: the schedule does not apply");
  if (t.recompute == Recompute::selective && t.flash_attention)
    return std::string("selective recompute with flash attention (nothing to recompute: same as none)");
  if (t.zero > 0 && static_cast<long long>(t.dp) * t.cp == 1)
    return std::string("ZeRO needs data parallelism");
  // what does not fit, then what is dominated (kept when --fixed asks for it)
  const GpuSpec& gpu = r.platform.node.gpu;
  if (!CostModel(r.model, t, gpu).peak_memory().fits)
    return std::string("out of memory");
  if (t.recompute != Recompute::none && !r.fixed.has("recompute")) {
    // recomputation only adds compute: dominated where less of it fits
    TrainingSpec lighter = t;
    lighter.recompute = t.recompute == Recompute::full && !t.flash_attention ? Recompute::selective : Recompute::none;
    bool fits = CostModel(r.model, lighter, gpu).peak_memory().fits;
    if (!fits && lighter.recompute == Recompute::selective) {
      lighter.recompute = Recompute::none;
      fits = CostModel(r.model, lighter, gpu).peak_memory().fits;
    }
    if (fits)
      return std::string("dominated: recomputes where less recomputation fits");
  }
  if (const char* why = ScheduleRegistry::instance().shared(t.schedule).dominated();
      why && !r.fixed.has("pipeline_schedule"))
    return std::string(why);
  return std::nullopt;
}

namespace {

/// Estimates the candidates in forked workers, a chunk each (the cluster graphs are built once).
void estimate_all(const PlanRequest& r, const Catalog& catalog, const std::map<int, ClusterGraph>& clusters, int jobs,
                  std::vector<PlanCandidate*>& batch, const std::function<void(const std::string&)>& say)
{
  const GpuSpec& gpu = r.platform.node.gpu;
  const std::size_t chunks = std::min<std::size_t>(batch.size(), static_cast<std::size_t>(jobs) * 8);
  std::vector<std::function<std::string()>> tasks;
  for (std::size_t k = 0; k < chunks; ++k)
    tasks.push_back([&, k] {
      std::map<int, CollectiveEngine> engines;
      nlohmann::json est = nlohmann::json::array();
      for (std::size_t i = k; i < batch.size(); i += chunks) {
        const int g = batch[i]->gpus;
        auto it = engines.find(g);
        if (it == engines.end())
          it = engines
                   .emplace(std::piecewise_construct, std::forward_as_tuple(g),
                            std::forward_as_tuple(clusters.at(g), catalog.protocols()))
                   .first;
        est.push_back(estimate_layout(r.model, gpu, batch[i]->training, it->second));
      }
      return est.dump();
    });
  std::size_t done = 0;
  auto results = run_isolated_all(tasks, jobs, [&](std::size_t) {
    ++done;
    say("plan: estimating " + std::to_string(batch.size()) + " layouts, " + std::to_string(done) + "/" +
        std::to_string(chunks) + " chunks");
  });
  for (std::size_t k = 0; k < chunks; ++k) {
    if (results[k].rfind("ERROR: ", 0) == 0)
      throw std::runtime_error("planner estimate: " + results[k].substr(7));
    auto est = nlohmann::json::parse(results[k]);
    std::size_t j = 0;
    for (std::size_t i = k; i < batch.size(); i += chunks)
      batch[i]->estimate_s = est.at(j++).get<double>();
  }
}

/// Branch and bound: the layouts with the smallest compute bound are estimated first; a layout
/// whose compute (and EP exchange) floor is slower than the max(K, 64)-th best estimate so far cannot enter the
/// ranking (or a top-64 comparison), so it is not estimated. Bounded-out layouts leave `fit`.
void estimate_with_bound(const PlanRequest& r, const Catalog& catalog, std::vector<PlanCandidate>& fit,
                         PlanResult& out, const std::function<void(const std::string&)>& say)
{
  std::map<int, ClusterGraph> clusters;
  for (const auto& c : fit)
    if (!clusters.count(c.gpus))
      clusters.emplace(c.gpus, ClusterGraph::build(r.platform, std::max(c.gpus, r.platform.node.gpus)));
  const int jobs = r.jobs > 0 ? r.jobs : available_cores();
  std::vector<PlanCandidate*> order;
  for (auto& c : fit)
    order.push_back(&c);
  std::stable_sort(order.begin(), order.end(), [&](const PlanCandidate* a, const PlanCandidate* b) {
    return plan_objective(r, a->gpus, a->bound_s) < plan_objective(r, b->gpus, b->bound_s);
  });
  const bool bounded = !plan_objective_named(r.objective).has_deadline() && order.size() > 256;
  std::vector<PlanCandidate*> first(
      order.begin(), bounded
                         ? order.begin() + static_cast<std::ptrdiff_t>(std::max<std::size_t>(128, order.size() / 10))
                         : order.end());
  estimate_all(r, catalog, clusters, jobs, first, say);
  if (bounded) {
    std::vector<double> seen;
    for (const PlanCandidate* c : first)
      seen.push_back(plan_objective(r, c->gpus, c->estimate_s));
    std::sort(seen.begin(), seen.end());
    const std::size_t keep = std::min(seen.size(), static_cast<std::size_t>(std::max(r.top, 64)));
    const double bar = seen[keep - 1];
    std::vector<PlanCandidate*> rest;
    for (std::size_t i = first.size(); i < order.size(); ++i)
      if (plan_objective(r, order[i]->gpus, order[i]->bound_s) <= bar)
        rest.push_back(order[i]);
      else
        order[i]->estimate_s = -1; // bounded out
    estimate_all(r, catalog, clusters, jobs, rest, say);
    std::size_t out_of_bound = 0;
    for (const auto& c : fit)
      out_of_bound += c.estimate_s < 0 ? 1 : 0;
    if (out_of_bound > 0)
      out.rejected["bounded: compute (and EP exchanges) alone slower than the 64 best estimates"] = out_of_bound;
    fit.erase(std::remove_if(fit.begin(), fit.end(), [](const PlanCandidate& c) { return c.estimate_s < 0; }),
              fit.end());
  }
  out.estimated = fit.size();
}

/// Deadline: keeps the fewest GPUs whose best estimate trains the tokens in time.
void keep_deadline_size(const PlanRequest& r, std::vector<PlanCandidate>& fit, PlanResult& out)
{
  if (!plan_objective_named(r.objective).has_deadline() || fit.empty())
    return;
  const double tokens_per_step = static_cast<double>(r.global_batch) * r.model.seq_len;
  std::map<int, double> best;
  for (const auto& c : fit)
    best[c.gpus] = best.count(c.gpus) ? std::min(best[c.gpus], c.estimate_s) : c.estimate_s;
  int chosen = best.rbegin()->first;
  out.deadline_met = false;
  for (const auto& [g, s] : best)
    if (r.tokens / tokens_per_step * s <= r.deadline_days * 86400) {
      chosen = g;
      out.deadline_met = true;
      break;
    }
  fit.erase(std::remove_if(fit.begin(), fit.end(), [&](const PlanCandidate& c) { return c.gpus != chosen; }),
            fit.end());
}

/// Simulates the best K (by estimate), as `run` would, one process each, and ranks them.
void simulate_top(const PlanRequest& r, const Catalog& catalog, const std::vector<PlanCandidate>& fit,
                  PlanResult& out)
{
  const std::size_t k = std::min<std::size_t>(static_cast<std::size_t>(std::max(1, r.top)), fit.size());
  std::vector<std::function<std::string()>> sims;
  for (std::size_t i = 0; i < k; ++i)
    sims.push_back([&, i] {
      ExperimentSpec e;
      e.name = "plan";
      e.model = r.model;
      e.platform = r.platform;
      e.gpus = fit[i].gpus;
      e.training = fit[i].training;
      e.budget_tokens = r.tokens;
      return to_json(simulate(e, catalog)).dump();
    });
  auto sim_out = run_isolated_all(sims, r.jobs > 0 ? r.jobs : available_cores());
  for (std::size_t i = 0; i < k; ++i) {
    if (sim_out[i].rfind("ERROR: ", 0) == 0)
      throw std::runtime_error("planner simulation: " + sim_out[i].substr(7));
    PlanCandidate c = fit[i];
    c.sim = metrics_from_json(nlohmann::json::parse(sim_out[i]));
    c.simulated = true;
    out.ranked.push_back(c);
  }
  std::stable_sort(out.ranked.begin(), out.ranked.end(), [&](const PlanCandidate& a, const PlanCandidate& b) {
    double oa = plan_objective(r, a.gpus, a.sim.step_time_s);
    double ob = plan_objective(r, b.gpus, b.sim.step_time_s);
    if (oa != ob)
      return oa < ob;
    return describe_layout(a.training) < describe_layout(b.training);
  });
  std::vector<double> est, sim;
  for (const auto& c : out.ranked) {
    est.push_back(plan_objective(r, c.gpus, c.estimate_s));
    sim.push_back(plan_objective(r, c.gpus, c.sim.step_time_s));
  }
  out.rank_correlation = spearman(est, sim);
}

} // namespace

PlanResult plan_layouts(const PlanRequest& request, const Catalog& catalog,
                        const std::function<void(const std::string&)>& progress)
{
  PlanRequest r = request;
  if (!r.base.frameworks)
    r.base.frameworks = catalog.frameworks();
  const auto t0 = Clock::now();
  auto say = [&](const std::string& s) {
    if (progress)
      progress(s);
  };
  PlanResult out;
  std::vector<PlanCandidate> fit;
  out.candidates = enumerate_layouts(r, [&](int gpus, const TrainingSpec& t) {
    if (auto why = prune_reason(r, gpus, t)) {
      ++out.rejected[*why];
      return;
    }
    CostModel cost(r.model, t, r.platform.node.gpu);
    PlanCandidate c;
    c.gpus = gpus;
    c.training = t;
    c.peak_bytes = cost.peak_memory().peak;
    c.bound_s = step_bound(cost, r.platform, gpus);
    fit.push_back(c);
  });
  say("plan: " + std::to_string(out.candidates) + " layouts enumerated, " + std::to_string(fit.size()) +
      " fit; estimating");
  estimate_with_bound(r, catalog, fit, out, say);
  keep_deadline_size(r, fit, out);
  auto by_objective = [&](const PlanCandidate& a, const PlanCandidate& b) {
    double oa = plan_objective(r, a.gpus, a.estimate_s);
    double ob = plan_objective(r, b.gpus, b.estimate_s);
    if (oa != ob)
      return oa < ob;
    return describe_layout(a.training) < describe_layout(b.training); // deterministic ties
  };
  std::stable_sort(fit.begin(), fit.end(), by_objective);
  out.by_estimate = fit;
  say("plan: simulating the best " + std::to_string(std::min<std::size_t>(static_cast<std::size_t>(r.top), fit.size())));
  simulate_top(r, catalog, fit, out);
  if (!out.ranked.empty()) {
    out.gpus = out.ranked.front().gpus;
    if (plan_objective_named(r.objective).has_deadline()) {
      const double tokens_per_step = static_cast<double>(r.global_batch) * r.model.seq_len;
      out.deadline_met = r.tokens / tokens_per_step * out.ranked.front().sim.step_time_s <= r.deadline_days * 86400;
    }
  }
  out.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return out;
}

} // namespace clustersim
