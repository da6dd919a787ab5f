// clustersim plan: the best parallel layout for a model on a cluster, searched and simulated;
// `--check FILE` plans every published run of a validation file and compares.
#include "sim/app/Arguments.hpp"
#include "sim/app/Commands.hpp"
#include "sim/app/Output.hpp"
#include "sim/study/Experiment.hpp"
#include "sim/study/Isolated.hpp"
#include "sim/study/LaunchConfig.hpp"
#include "sim/study/Metrics.hpp"
#include "sim/study/PlanObjective.hpp"
#include "sim/study/Planner.hpp"
#include "sim/study/Validation.hpp"
#include "topology/config/Suggest.hpp"
#include "topology/config/Units.hpp"

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <sstream>

#include <unistd.h>

namespace clustersim {
namespace {

using OJson = nlohmann::ordered_json;

double usd_per_million_tokens(const PlanRequest& r, const PlanCandidate& c)
{
  PlanRequest cost = r;
  cost.objective = "cost";
  return plan_objective(cost, c.gpus, c.sim.step_time_s);
}

OJson candidate_json(const PlanRequest& r, const PlanCandidate& c)
{
  OJson j{{"gpus", c.gpus}};
  put_layout(j, &c.training);
  j["estimated_step_time_s"] = c.estimate_s;
  j["estimated_peak_bytes"] = c.peak_bytes;
  if (c.simulated) {
    put_metric_columns(j, &c.sim, true);
    j["usd_per_million_tokens"] = usd_per_million_tokens(r, c);
    if (const std::string key = plan_objective_named(r.objective).json_key(); !key.empty())
      j[key] = plan_objective(r, c.gpus, c.sim.step_time_s);
    j["simulation_mode"] = c.sim.mode;
  }
  return j;
}

/// Whether a simulated layout's objective lies within the validated error of the best's.
bool ties_best(const PlanRequest& r, const PlanResult& res, const PlanCandidate& c, const ValidatedError& band)
{
  const PlanCandidate& best = res.ranked.front();
  return plan_objective(r, c.gpus, c.sim.step_time_s) <=
         plan_objective(r, best.gpus, best.sim.step_time_s) * (1 + band.median_abs_error);
}

std::string report(const PlanRequest& r, const PlanResult& res, const ValidatedError& band)
{
  std::ostringstream o;
  char buf[512];
  std::snprintf(buf, sizeof buf, "plan: %s on %d x %s, global batch %d, seq %d, %s; objective: %s\n",
                r.model.name.c_str(), r.gpus, r.platform.name.c_str(), r.global_batch, r.model.seq_len,
                to_string(r.base.precision),
                plan_objective_named(r.objective).title().c_str());
  o << buf;
  std::snprintf(buf, sizeof buf, "  %zu layouts enumerated, %zu estimated, %zu simulated; %.1f s\n", res.candidates,
                res.estimated, res.ranked.size(), res.wall_s);
  o << buf;
  std::vector<std::pair<std::size_t, std::string>> rej;
  for (const auto& [why, n] : res.rejected)
    rej.emplace_back(n, why);
  std::sort(rej.rbegin(), rej.rend());
  o << "  rejected:\n";
  for (const auto& [n, why] : rej) {
    std::snprintf(buf, sizeof buf, "    %8zu  ", n);
    o << buf << why << "\n";
  }
  if (plan_objective_named(r.objective).has_deadline())
    o << "  deadline " << r.deadline_days << " days for " << r.tokens
      << " tokens: " << (res.deadline_met ? "met" : "NOT met (the largest cluster is shown)") << " with " << res.gpus
      << " GPUs\n";
  if (res.ranked.empty()) {
    o << "\n  no layout fits\n";
    return o.str();
  }
  const PlanObjective& objective = plan_objective_named(r.objective);
  const bool shown = !objective.json_key().empty();
  int width = 6;
  for (const auto& c : res.ranked)
    width = std::max(width, static_cast<int>(describe_layout(c.training).size()));
  std::snprintf(buf, sizeof buf,
                "\n   #    GPUs  %-*s estimate   simulated    MFU   tokens/s  peak mem  exp. comm   bubble  $/Mtok%s\n",
                width, "layout", shown ? "  objective" : "");
  o << buf;
  int i = 0;
  for (const auto& c : res.ranked) {
    const char* tie = i > 0 && ties_best(r, res, c, band) ? "~" : " ";
    std::snprintf(buf, sizeof buf, "  %2d %s  %4d  %-*s %8.3f s %8.3f s %5.1f %% %9.0f %6.1f GiB %8.3f s %7.3f s %7.3f\n",
                  ++i, tie, c.gpus, width, describe_layout(c.training).c_str(), c.estimate_s, c.sim.step_time_s,
                  100 * c.sim.mfu, c.sim.tokens_per_s, c.peak_bytes / 1073741824.0, c.sim.breakdown.exposed_comm(),
                  c.sim.breakdown.bubble, usd_per_million_tokens(r, c));
    o << buf;
    if (shown) { // the objective's value at the simulated step, where it is not the step
      o.seekp(-1, std::ios_base::end);
      o << "  " << objective.text(objective.value(r, c.gpus, c.sim.step_time_s)) << "\n";
    }
  }
  std::snprintf(buf, sizeof buf, "\n  rank correlation of estimate and simulation over these %zu: %.2f (Spearman)\n",
                res.ranked.size(), res.rank_correlation);
  o << buf;
  std::snprintf(buf, sizeof buf,
                "  validated error: median %.1f %% over %lld published runs of %s models "
                "(experiments/validation/accuracy.yaml);\n  ~ marks a layout within it of the best: a tie the "
                "model cannot order\n",
                100 * band.median_abs_error, band.cases, band.kind.c_str());
  o << buf;
  return o.str();
}

OJson result_json(const PlanRequest& r, const PlanResult& res, const ValidatedError& band)
{
  OJson ranked = OJson::array();
  for (const auto& c : res.ranked) {
    ranked.push_back(candidate_json(r, c));
    ranked.back()["ties_best"] = &c != &res.ranked.front() && ties_best(r, res, c, band);
  }
  OJson rejected = OJson::object();
  for (const auto& [why, n] : res.rejected)
    rejected[why] = n;
  OJson j{{"model", r.model.name},    {"platform", r.platform.name},
          {"gpus", res.gpus},         {"global_batch", r.global_batch},
          {"objective", r.objective}, {"candidates", res.candidates},
          {"rejected", rejected},     {"estimated", res.estimated},
          {"ranked", ranked},         {"rank_correlation", res.rank_correlation}};
  if (plan_objective_named(r.objective).has_deadline())
    j["deadline_met"] = res.deadline_met;
  j["validated_error"] = {{"kind", band.kind},
                          {"cases", band.cases},
                          {"median_abs_error", band.median_abs_error},
                          {"sets", band.sets},
                          {"source", "experiments/validation/accuracy.yaml"}};
  return j;
}

/// `plan --check FILE`: per published case, the planner's best layout against the published one.
int check(const std::vector<std::string>& files, const std::string& only, int top, int jobs, bool json,
          const Catalog& catalog)
{
  std::vector<ValidationCase> cases;
  for (const auto& f : files)
    for (auto& c : load_validation_cases(f, catalog))
      if (only.empty() || c.id == only)
        cases.push_back(c);
  if (!only.empty() && cases.empty())
    throw ConfigError(command_line("--case"), "no case '" + only + "'", "a case id of the validation file");
  OJson rows = OJson::array();
  int faster = 0, in_top10 = 0;
  if (!json)
    std::printf("%-40s %-30s %9s  %-52s %9s  %s\n", "case", "published layout", "step", "planner's best", "step",
                "rank of published");
  for (const auto& c : cases) {
    const ExperimentSpec& e = c.experiment;
    PlanRequest r;
    r.model = e.model;
    r.platform = e.platform;
    r.gpus = e.gpus;
    r.global_batch = e.training.global_batch;
    r.base = e.training;
    r.top = top;
    r.jobs = jobs;
    PlanResult res = plan_layouts(r, catalog);
    RunMetrics published =
        metrics_from_json(Json::parse(run_isolated([&] { return to_json(simulate(e, catalog)).dump(); })));
    // rank of the published layout among the distinct layouts, by estimate
    std::vector<std::string> seen;
    int rank = 0;
    const std::string key = layout_key(e.training);
    for (const auto& cand : res.by_estimate) {
      std::string k = layout_key(cand.training);
      if (std::find(seen.begin(), seen.end(), k) != seen.end())
        continue;
      seen.push_back(k);
      if (k == key) {
        rank = static_cast<int>(seen.size());
        break;
      }
    }
    const double best = res.ranked.empty() ? 0 : res.ranked.front().sim.step_time_s;
    bool ok_fast = !res.ranked.empty() && best <= published.step_time_s * 1.0005;
    faster += ok_fast ? 1 : 0;
    in_top10 += rank >= 1 && rank <= 10 ? 1 : 0;
    OJson row{{"case", c.id},
              {"published_layout", describe_layout(e.training)},
              {"published_step_time_s", published.step_time_s},
              {"best_layout", res.ranked.empty() ? "" : describe_layout(res.ranked.front().training)},
              {"best_step_time_s", best},
              {"best_at_least_as_fast", ok_fast},
              {"published_rank", rank},
              {"candidates", res.candidates},
              {"estimated", res.estimated}};
    rows.push_back(row);
    if (!json) {
      std::printf("%-40s %-30s %8.3fs  %-52s %8.3fs  %s%s\n", c.id.c_str(), layout_key(e.training).c_str(),
                  published.step_time_s,
                  res.ranked.empty() ? "(none fits)" : describe_layout(res.ranked.front().training).c_str(), best,
                  rank > 0 ? std::to_string(rank).c_str() : "not estimated", ok_fast ? "" : "  SLOWER");
      std::fflush(stdout);
    }
  }
  if (json) {
    std::cout << OJson{{"cases", rows}, {"best_at_least_as_fast", faster}, {"published_in_top10", in_top10}}.dump(2)
              << "\n";
  } else {
    std::printf(
        "\nplanner's best at least as fast as published: %d of %zu; published layout in the top 10: %d of %zu\n",
        faster, cases.size(), in_top10, cases.size());
  }
  return 0;
}

} // namespace

namespace {

struct PlanOptions {
  std::string model, platform, precision, objective = "time", tokens = "1e12", check, only, emit;
  int gpus = 0, global_batch = 0, seq = 0, top = 5, max_tp = 0, jobs = 0;
  double deadline_days = 0;
  std::vector<std::string> fixed;
  bool json = false, no_flash = false;
  bool gpus_given = false, seq_given = false, max_tp_given = false, batch_given = false;
};

/// The request the flags describe for one platform of --platform, every flag checked before any work.
PlanRequest plan_request(const PlanOptions& o, const std::string& platform, const Catalog& catalog)
{
  auto need = [](bool missing, const char* flag, const char* what) {
    if (missing)
      throw ConfigError(command_line(flag), std::string(flag) + " is required", what);
  };
  need(o.model.empty(), "--model", "a model preset (clustersim model list), YAML or config.json");
  need(o.platform.empty(), "--platform", "a platform (clustersim platform list)");
  need(!o.gpus_given, "--gpus", "a positive number of GPUs");
  need(!o.batch_given, "--global-batch", "a positive number of sequences per step");
  int_argument(o.gpus, "--gpus", 1, kMaxGpus);
  const KeySpec& gb = training_section().at("global_batch");
  int_argument(o.global_batch, "--global-batch", 1, static_cast<long long>(gb.max));
  if (o.seq_given)
    int_argument(o.seq, "--seq", 1, static_cast<long long>(model_section().at("seq_len").max));
  if (o.max_tp_given)
    int_argument(o.max_tp, "--max-tp", 1, static_cast<long long>(training_section().at("tp").max));
  int_argument(o.top, "--top", 1, 1000);
  if (o.jobs != 0)
    int_argument(o.jobs, "--jobs", 1, 4096);
  const auto& objectives = PlanObjectiveRegistry::instance();
  if (!objectives.has(o.objective))
    throw ConfigError(command_line("--objective"), unknown_name("objective", o.objective, objectives.names()),
                      RegistryDirectory::instance().describe(PlanObjective::kRegistryKind));
  if (plan_objective_named(o.objective).has_deadline() && !(o.deadline_days > 0 && std::isfinite(o.deadline_days)))
    throw ConfigError(command_line("--deadline-days"), "the " + o.objective + " objective needs --deadline-days",
                      "a positive number of days");
  PlanRequest r;
  r.fixed = parse_fixed(o.fixed);
  apply_fixed_to_base(r);
  r.tokens = positive_number(o.tokens, "--tokens");
  r.model = model_argument(catalog, o.model);
  require_training_length(r.model, o.seq_given, "--seq LENGTH (e.g. --seq 4096)");
  if (o.seq_given)
    r.model.seq_len = o.seq;
  r.platform = catalog.platform(platform, command_line("--platform"));
  if (o.gpus % r.platform.node.gpus != 0 && o.gpus > r.platform.node.gpus)
    throw ConfigError(command_line("--gpus"), std::to_string(o.gpus) + " GPUs are not whole " + r.platform.name +
                                                  " nodes",
                      "a multiple of " + std::to_string(r.platform.node.gpus));
  r.gpus = o.gpus;
  r.global_batch = o.global_batch;
  r.base.precision = precision_argument(o.precision, r.platform.node.gpu);
  r.base.frameworks = catalog.frameworks();
  r.base.flash_attention = !o.no_flash && default_flash_attention(r.base, r.platform.node.gpu, nullptr);
  r.max_tp = o.max_tp_given ? o.max_tp : 0;
  r.objective = o.objective;
  r.deadline_days = o.deadline_days;
  r.top = o.top;
  r.jobs = o.jobs;
  plan_objective_named(r.objective).check(r);
  return r;
}

/// The `model:` of an emitted experiment, as the user named the model: a preset, a Hugging Face
/// config.json or a model YAML (inlined, its hf_config made absolute), with the planned seq_len.
std::string model_yaml(const PlanOptions& o, const ModelSpec& m)
{
  namespace fs = std::filesystem;
  YAML::Node node;
  const bool file = (o.model.find('/') != std::string::npos || o.model.size() > 5) && fs::is_regular_file(o.model);
  if (!file) {
    node["preset"] = o.model;
  } else if (o.model.size() > 5 && o.model.compare(o.model.size() - 5, 5, ".json") == 0) {
    node["hf_config"] = fs::absolute(o.model).lexically_normal().string();
  } else {
    node = YAML::Clone(YamlNode::load_file(o.model).raw());
    if (node["hf_config"])
      node["hf_config"] = (fs::absolute(o.model).parent_path() / node["hf_config"].as<std::string>())
                              .lexically_normal()
                              .string();
  }
  node["seq_len"] = m.seq_len;
  // one line after `model:`: every mapping and list in flow style, whatever the file's
  std::function<void(YAML::Node)> flow = [&flow](YAML::Node n) {
    if (n.IsMap() || n.IsSequence()) {
      n.SetStyle(YAML::EmitterStyle::Flow);
      for (auto it = n.begin(); it != n.end(); ++it)
        flow(n.IsMap() ? it->second : *it);
    }
  };
  flow(node);
  YAML::Emitter e;
  e << node;
  return e.c_str();
}

/// `plan --emit DIR`: each simulated layout as DIR/rank-N/ (experiment.yaml and the framework's
/// launch files), and DIR/plan.json.
void emit_plans(const PlanOptions& o, const PlanRequest& r, const PlanResult& res, const ValidatedError& band)
{
  OutputSet out;
  const std::string model = model_yaml(o, r.model);
  std::size_t files = 0;
  for (std::size_t i = 0; i < res.ranked.size(); ++i) {
    const PlanCandidate& c = res.ranked[i];
    LaunchSpec spec;
    spec.name = r.model.name + "-plan-" + std::to_string(i + 1);
    spec.model_yaml = model;
    spec.platform = r.platform.name;
    spec.gpus = c.gpus;
    spec.model = r.model;
    spec.training = c.training;
    spec.tokens = r.tokens;
    char line[256];
    std::snprintf(line, sizeof line, "clustersim plan: layout %zu of %zu, %s on %d x %s: %s", i + 1,
                  res.ranked.size(), r.model.name.c_str(), c.gpus, r.platform.name.c_str(),
                  describe_layout(c.training).c_str());
    spec.head.push_back(line);
    std::snprintf(line, sizeof line, "simulated step %.4f s, MFU %.1f %%; validated error of %s models: median %.1f %%%s",
                  c.sim.step_time_s, 100 * c.sim.mfu, band.kind.c_str(), 100 * band.median_abs_error,
                  i > 0 && ties_best(r, res, c, band) ? " (a tie with layout 1)" : "");
    spec.head.push_back(line);
    std::vector<std::string> notes;
    for (auto& f : launch_files(spec, notes)) {
      out.add(o.emit + "/rank-" + std::to_string(i + 1) + "/" + f.name, std::move(f.text), "--emit");
      ++files;
    }
  }
  out.add(o.emit + "/plan.json", result_json(r, res, band).dump(2) + "\n", "--emit");
  out.commit();
  if (!o.json)
    std::printf("\n  wrote %zu layout%s (%zu files) and plan.json to %s\n", res.ranked.size(),
                res.ranked.size() == 1 ? "" : "s", files, o.emit.c_str());
}

/// One plan of `plan --platform A,B,...`: its best layout by the objective, for the comparison.
struct PlatformPlan {
  PlanRequest request;
  PlanResult result;
  double best = 0; ///< the objective at the best layout's simulated step
};

/// `plan --platform A,B,...`: the same search on each platform (a fabric, a GPU, a price), then
/// the platforms ranked by their best layout's objective.
std::string compared_text(const std::vector<PlatformPlan>& plans)
{
  std::ostringstream o;
  char buf[512];
  const PlanObjective& objective = plan_objective_named(plans.front().request.objective);
  o << "\nplatforms compared by " << objective.title() << " (each at its best layout):\n";
  std::snprintf(buf, sizeof buf, "   #  %-28s %5s  %10s  %6s  %12s  %9s  %9s  %s\n", "platform", "GPUs", "step", "MFU",
                "capex", "rent $/h", "own $/h", "objective");
  o << buf;
  int i = 0;
  for (const PlatformPlan& p : plans) {
    if (p.result.ranked.empty()) {
      std::snprintf(buf, sizeof buf, "  %2d  %-28s no layout fits\n", ++i, p.request.platform.name.c_str());
      o << buf;
      continue;
    }
    const PlanCandidate& c = p.result.ranked.front();
    const std::string capex =
        std::isfinite(c.sim.capex_usd) ? "$" + format_si(c.sim.capex_usd, 4) : std::string("unpriced");
    const std::string value = objective.json_key().empty() ? format_time(p.best) : objective.text(p.best);
    char owned[32] = "-";
    if (std::isfinite(c.sim.owned_usd_per_gpu_hour))
      std::snprintf(owned, sizeof owned, "%.3f", c.sim.owned_usd_per_gpu_hour);
    std::snprintf(buf, sizeof buf, "  %2d  %-28s %5d  %8.3f s  %4.1f %%  %12s  %9.3f  %9s  %s\n", ++i,
                  p.request.platform.name.c_str(), c.gpus, c.sim.step_time_s, 100 * c.sim.mfu, capex.c_str(),
                  p.request.platform.cost.usd_per_gpu_hour, owned, value.c_str());
    o << buf;
  }
  return o.str();
}

int plan_platforms(const PlanOptions& o, const std::vector<std::string>& platforms, const Catalog& catalog)
{
  if (!o.emit.empty())
    throw ConfigError(command_line("--emit"), "--emit writes the layouts of one platform",
                      "one --platform with --emit, or no --emit");
  std::vector<PlatformPlan> plans;
  for (const std::string& name : platforms) {
    for (const PlatformPlan& p : plans)
      if (p.request.platform.name == catalog.platform(name, command_line("--platform")).name)
        throw ConfigError(command_line("--platform"), "platform '" + name + "' is named twice",
                          "each platform once, e.g. --platform dgx-h100,dgx-h100-2to1");
    plans.push_back({plan_request(o, name, catalog), {}, 0});
  }
  for (PlatformPlan& p : plans) {
    p.result = plan_layouts(p.request, catalog, [](const std::string&) {});
    if (!p.result.ranked.empty())
      p.best = plan_objective(p.request, p.result.ranked.front().gpus, p.result.ranked.front().sim.step_time_s);
  }
  // best first; a platform where nothing fits last, in the order given
  std::stable_sort(plans.begin(), plans.end(), [](const PlatformPlan& a, const PlatformPlan& b) {
    if (a.result.ranked.empty() || b.result.ranked.empty())
      return !a.result.ranked.empty() && b.result.ranked.empty();
    return a.best < b.best;
  });
  const ValidatedError band =
      validated_error(catalog.root() + "/experiments/validation/accuracy.yaml", plans.front().request.model.experts > 1);
  if (o.json) {
    OJson all = OJson::array(), compared = OJson::array();
    for (const PlatformPlan& p : plans) {
      all.push_back(result_json(p.request, p.result, band));
      OJson row{{"platform", p.request.platform.name}, {"fits", !p.result.ranked.empty()}};
      if (!p.result.ranked.empty()) {
        const PlanCandidate& c = p.result.ranked.front();
        row["gpus"] = c.gpus;
        row["layout"] = describe_layout(c.training);
        row["step_time_s"] = c.sim.step_time_s;
        row["capex_usd"] = metric_json(c.sim.capex_usd);
        row["rental_usd_per_gpu_hour"] = p.request.platform.cost.usd_per_gpu_hour;
        row["owned_usd_per_gpu_hour"] = metric_json(c.sim.owned_usd_per_gpu_hour);
        row["objective"] = p.best;
      }
      compared.push_back(row);
    }
    std::cout << OJson{{"objective", o.objective}, {"compared", compared}, {"plans", all}}.dump(2) << "\n";
  } else {
    for (const PlatformPlan& p : plans)
      std::cout << report(p.request, p.result, band) << "\n";
    std::cout << compared_text(plans);
  }
  return plans.front().result.ranked.empty() ? 1 : 0;
}

int plan_command(const PlanOptions& o)
{
  Catalog catalog = Catalog::open();
  if (!o.check.empty()) {
    int_argument(o.top, "--top", 1, 1000);
    return check({o.check}, o.only, o.top, o.jobs, o.json, catalog);
  }
  const std::vector<std::string> platforms = o.platform.empty() ? std::vector<std::string>{""} : split(o.platform, ',');
  if (platforms.size() > 1)
    return plan_platforms(o, platforms, catalog);
  PlanRequest r = plan_request(o, platforms.front(), catalog);
  if (!o.emit.empty())
    check_directory(o.emit, "--emit");
  const ValidatedError band =
      validated_error(catalog.root() + "/experiments/validation/accuracy.yaml", r.model.experts > 1);
  // progress on a terminal only: a log file or a pipe gets the report, not carriage returns
  const bool tty = !o.json && ::isatty(2) != 0;
  PlanResult res = plan_layouts(r, catalog, [tty](const std::string& s) {
    if (tty) {
      std::fprintf(stderr, "\r%-78s", s.c_str());
      std::fflush(stderr);
    }
  });
  if (tty)
    std::fprintf(stderr, "\r%-78s\r", "");
  if (o.json)
    std::cout << result_json(r, res, band).dump(2) << "\n";
  else
    std::cout << report(r, res, band);
  if (!o.emit.empty() && !res.ranked.empty())
    emit_plans(o, r, res, band);
  return res.ranked.empty() ? 1 : 0;
}

} // namespace

void add_plan_command(CLI::App& app, Action& action)
{
  auto opt = std::make_shared<PlanOptions>();
  CLI::App* cmd = app.add_subcommand(
      "plan", "Search the parallel layouts of a model on a cluster: enumerate, prune by memory, rank by a fast "
              "contention-free estimate, simulate the best K");
  cmd->add_option("--model", opt->model, "preset name, model YAML, or Hugging Face config.json");
  cmd->add_option("--platform", opt->platform,
                  "platform from the catalog; several, comma-separated (e.g. dgx-h100,dgx-h100-2to1), are each "
                  "searched and then ranked by the objective at their best layout");
  cmd->add_option("--gpus", opt->gpus, "GPUs (cost and deadline objectives: the most to consider)");
  cmd->add_option("--global-batch", opt->global_batch, "sequences per step");
  cmd->add_option("--seq", opt->seq, "sequence length (default: the model's)");
  cmd->add_option("--precision", opt->precision, "fp32 | tf32 | fp16 | bf16 | fp8 | fp4 (default bf16)");
  cmd->add_option("--top", opt->top, "layouts to simulate (default 5)");
  cmd->add_option("--max-tp", opt->max_tp, "largest tensor-parallel degree (default: the NVLink domain)");
  cmd->add_option("--fixed", opt->fixed, "fix a layout field, e.g. --fixed pp=8 --fixed zero=1 (repeatable)");
  cmd->add_option("--objective", opt->objective,
                  "what the layouts are ranked by: " + RegistryDirectory::instance().describe(PlanObjective::kRegistryKind));
  cmd->add_option("--tokens", opt->tokens, "token budget for cost and deadline (default 1e12)");
  cmd->add_option("--deadline-days", opt->deadline_days, "deadline objective: days to train --tokens");
  cmd->add_flag("--no-flash-attention", opt->no_flash, "price attention without flash attention (default: with it where the framework has a flash-attention kernel for the GPU)");
  cmd->add_option("--jobs", opt->jobs, "processes (default: all cores)");
  cmd->add_flag("--json", opt->json, "print JSON");
  cmd->add_option("--emit", opt->emit,
                  "write each simulated layout as DIR/rank-N/experiment.yaml with the launch arguments of the "
                  "framework (Megatron-LM, torchtitan TOML, DeepSpeed JSON), and DIR/plan.json");
  cmd->add_option("--check", opt->check, "plan every case of a validation file and compare with its published layout");
  cmd->add_option("--case", opt->only, "with --check: one case");
  cmd->callback([opt, cmd, &action] {
    opt->gpus_given = cmd->count("--gpus") > 0;
    opt->seq_given = cmd->count("--seq") > 0;
    opt->max_tp_given = cmd->count("--max-tp") > 0;
    opt->batch_given = cmd->count("--global-batch") > 0;
    action = [opt] { return plan_command(*opt); };
  });
}

} // namespace clustersim
