// clustersim goodput: the simulated step against failures, checkpoints and restarts.
#include "sim/app/Arguments.hpp"
#include "sim/app/Commands.hpp"
#include "sim/app/Output.hpp"
#include "sim/app/Plot.hpp"
#include "sim/study/Goodput.hpp"
#include "sim/study/Isolated.hpp"
#include "sim/study/Simulation.hpp"
#include "sim/study/Sweep.hpp"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

namespace clustersim {
namespace {

struct GoodputOptions {
  std::string experiment;
  std::vector<std::string> settings; ///< --set KEY=VALUE
  std::string out;
  double tokens = 0;
  long long seed = -1;
  long long trials = 0;
  bool json = false;
};

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#endif
/// One number through a printf format (every caller passes a literal).
std::string fmt(const char* f, double v)
{
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

std::string span(double s)
{
  if (s < 1)
    return fmt("%.1f ms", s * 1e3);
  if (s < 120)
    return fmt("%.1f s", s);
  if (s < 7200)
    return fmt("%.1f min", s / 60);
  if (s < 3 * 86400.0)
    return fmt("%.2f h", s / 3600);
  return fmt("%.2f days", s / 86400);
}

GoodputInput input_of(const ExperimentSpec& e, const RunMetrics& m)
{
  GoodputInput in;
  in.step_s = m.step_time_s;
  in.tokens_per_step = m.tokens_per_s * m.step_time_s;
  in.budget_tokens = e.budget_tokens;
  in.gpus = e.gpus;
  in.gpus_per_node = e.platform.node.gpus;
  in.nics_per_node = e.platform.node.nics > 0 ? e.platform.node.nics : e.platform.node.gpus;
  const StateBytes st = e.training.states();
  in.checkpoint_bytes = m.params * (st.weights + st.optimizer);
  in.usd_per_gpu_hour = e.platform.cost.usd_per_gpu_hour;
  return in;
}

Json to_json(const GoodputResult& g, const RunMetrics& m)
{
  Json j;
  j["experiment"] = m.name;
  j["gpus"] = m.gpus;
  j["step_time_s"] = m.step_time_s;
  j["budget_tokens"] = m.budget_tokens;
  Json rates = Json::object();
  for (const auto& r : g.rates)
    rates[r.name] = {{"units", r.units}, {"per", r.per}, {"per_day", r.per_day}, {"hardware", r.hardware}};
  j["interruptions_per_day"] = {{"unexpected", g.unexpected_per_day}, {"planned", g.planned_per_day}, {"by_part", rates}};
  j["assumptions"]["planned_per_day"] =
      g.planned_scaled ? "default: Llama 3's 47 planned in 54 days over 2,048 nodes, per node x the job's nodes"
                       : "reliability.planned_per_day";
  j["checkpoint"] = {{"bytes", g.checkpoint_bytes}, {"write_s", g.write_s}, {"read_s", g.read_s},
                     {"interval_s", g.interval_s}, {"interval_optimal", g.interval_optimal}};
  j["restart_s"] = g.restart_s;
  j["spare_nodes"] = g.spare_nodes;
  j["p_no_spare"] = g.p_no_spare;
  j["work_s"] = g.work_s;
  j["progresses"] = g.progresses;
  if (g.progresses) {
    j["closed_form"] = {{"wall_s", g.wall_s},
                        {"ettr", g.ettr},
                        {"unexpected", g.unexpected},
                        {"planned", g.planned},
                        {"lost_work_s", g.lost_s},
                        {"checkpoint_s", g.checkpoint_total_s},
                        {"restart_s", g.restart_total_s},
                        {"spare_wait_s", g.spare_wait_s},
                        {"gpu_hours", g.gpu_hours},
                        {"cost_usd", g.cost_usd}};
    j["monte_carlo"] = {{"trials", g.trials},
                        {"trials_asked", g.trials_asked},
                        {"note", g.mc_note},
                        {"seed", g.seed},
                        {"wall_s_p05", g.mc_wall_p05},
                        {"wall_s_p50", g.mc_wall_p50},
                        {"wall_s_p95", g.mc_wall_p95},
                        {"ettr_mean", g.mc_ettr_mean},
                        {"ettr_p05", g.mc_ettr_p05},
                        {"ettr_p95", g.mc_ettr_p95},
                        {"interruptions_mean", g.mc_interruptions_mean}};
  }
  if (g.window_days > 0)
    j["window"] = {{"days", g.window_days}, {"unexpected", g.window_unexpected}, {"planned", g.window_planned}};
  return j;
}

std::string format_goodput(const GoodputResult& g, const RunMetrics& m)
{
  std::string s = "goodput: " + m.name + "\n";
  s += "  " + std::to_string(m.gpus) + " GPUs (" + fmt("%.0f", g.nodes) + " nodes), step " + span(m.step_time_s) +
       ", " + fmt("%.3g", m.budget_tokens) + " tokens in " + fmt("%.0f", g.steps) + " steps: " + span(g.work_s) +
       " without failures\n";
  s += "  interruptions per day:";
  for (const auto& r : g.rates)
    s += " " + r.name + " " + fmt("%.3g", r.per_day);
  s += ", planned " + fmt("%.3g", g.planned_per_day) +
       (g.planned_scaled ? " (Llama 3's per node x " + fmt("%.0f", g.nodes) + " nodes)" : "") + " -> " + fmt("%.3g", g.unexpected_per_day + g.planned_per_day) +
       "; job MTBF " + span(g.mtbf_s) + "\n";
  s += "  checkpoint " + fmt("%.2f TB", g.checkpoint_bytes / 1e12) + ": write " + span(g.write_s) + ", read " +
       span(g.read_s) + "; every " + span(g.interval_s) +
       (g.interval_optimal ? " of training (Young/Daly optimum)" : " of training") + "\n";
  s += "  restart " + span(g.restart_s) + " per unexpected interruption";
  if (g.spare_nodes >= 0)
    s += fmt(" (%.0f spare nodes: ", static_cast<double>(g.spare_nodes)) +
         fmt("%.2f %% of the time waiting for repaired nodes", 100 * g.p_no_spare) + ")";
  s += "\n";
  if (g.window_days > 0)
    s += "  over " + fmt("%.3g", g.window_days) + " days: " + fmt("%.3g", g.window_unexpected + g.window_planned) +
         " interruptions expected (" + fmt("%.3g", g.window_unexpected) + " unexpected, " +
         fmt("%.3g", g.window_planned) + " planned)\n";
  if (!g.progresses)
    return s + "  the run does not progress: interruptions cost more time than passes between them\n";
  s += "  closed form: " + span(g.wall_s) + " wall, ETTR " + fmt("%.3f", g.ettr) + "; " + fmt("%.0f", g.unexpected) +
       " unexpected and " + fmt("%.0f", g.planned) + " planned interruptions, lost work " + span(g.lost_s) +
       ", checkpoints " + span(g.checkpoint_total_s) + ", restarts " + span(g.restart_total_s) + "\n";
  if (g.trials == 0)
    s += "  Monte-Carlo " + g.mc_note + "\n";
  else
    s += "  Monte-Carlo (" + std::to_string(g.trials) + " runs, seed " + std::to_string(g.seed) + "): wall " +
         span(g.mc_wall_p05) + " / " + span(g.mc_wall_p50) + " / " + span(g.mc_wall_p95) + " (p5/p50/p95), ETTR " +
         fmt("%.3f", g.mc_ettr_mean) + " [" + fmt("%.3f", g.mc_ettr_p05) + ", " + fmt("%.3f", g.mc_ettr_p95) + "], " +
         fmt("%.0f", g.mc_interruptions_mean) + " interruptions" + (g.mc_note.empty() ? "" : "; " + g.mc_note) + "\n";
  s += "  " + fmt("%.3g", g.gpu_hours) + " GPU-hours" + (g.spare_nodes > 0 ? " (spares included)" : "") + ", $" +
       fmt("%.3g", g.cost_usd) + "\n";
  return s;
}

void apply_flags(const GoodputOptions& o, bool tokens, bool seed, bool trials, ExperimentSpec& e)
{
  if (tokens)
    e.budget_tokens = o.tokens;
  if (seed)
    e.reliability.seed = o.seed;
  if (trials)
    e.reliability.trials = o.trials;
}

/// The goodput columns of a sweep row, each with how it follows from the point's result and
/// when it has a value: always, only when the run progresses, or only with Monte-Carlo trials.
struct GoodputColumn {
  enum class Shown { always, progresses, monte_carlo };
  const char* key;
  Shown shown;
  double (*value)(const GoodputResult& g, const ReliabilitySpec& r, const GoodputInput& in);
};

const std::vector<GoodputColumn>& goodput_columns()
{
  using G = const GoodputResult&;
  using R = const ReliabilitySpec&;
  using I = const GoodputInput&;
  using S = GoodputColumn::Shown;
  static const std::vector<GoodputColumn> c{
      {"interruptions_per_day", S::always, [](G g, R, I) { return g.unexpected_per_day + g.planned_per_day; }},
      {"checkpoint_write_s", S::always, [](G g, R, I) { return g.write_s; }},
      {"checkpoint_interval_s", S::always, [](G g, R, I) { return g.interval_s; }},
      // the Young/Daly optimum of this point, for interval sweeps
      {"optimal_interval_s", S::always, [](G, R r, I in) { return goodput_optimal_interval_s(r, in); }},
      {"work_days", S::always, [](G g, R, I) { return g.work_s / 86400; }},
      {"wall_days", S::progresses, [](G g, R, I) { return g.wall_s / 86400; }},
      {"ettr", S::progresses, [](G g, R, I) { return g.ettr; }},
      {"mc_wall_days_p05", S::monte_carlo, [](G g, R, I) { return g.mc_wall_p05 / 86400; }},
      {"mc_wall_days_p95", S::monte_carlo, [](G g, R, I) { return g.mc_wall_p95 / 86400; }},
      {"mc_ettr_mean", S::monte_carlo, [](G g, R, I) { return g.mc_ettr_mean; }},
      {"mc_ettr_p05", S::monte_carlo, [](G g, R, I) { return g.mc_ettr_p05; }},
      {"mc_ettr_p95", S::monte_carlo, [](G g, R, I) { return g.mc_ettr_p95; }},
      {"goodput_gpu_hours", S::progresses, [](G g, R, I) { return g.gpu_hours; }},
      {"goodput_cost_usd", S::progresses, [](G g, R, I) { return g.cost_usd; }},
  };
  return c;
}

/// One sweep point: the run's row (as `run` writes it: a point that does not fit is "oom") with
/// the goodput columns after it, empty where the point did not run.
Json goodput_row(const YamlNode& doc, const SweepSpec& sweep, std::size_t index, const Catalog& catalog,
                 const std::function<void(ExperimentSpec&)>& flags)
{
  const SweepPoint point = point_at(sweep, index);
  const PointOutcome o = evaluate_point(doc, sweep, point, catalog, "", flags);
  Json row = sweep_row(sweep, point, o.status, o.reason, o.metrics ? &*o.metrics : nullptr);
  std::optional<GoodputResult> g;
  std::optional<GoodputInput> in;
  if (o.status == "ok") {
    in = input_of(*o.experiment, *o.metrics);
    g = goodput(o.experiment->reliability, *in);
  }
  for (const GoodputColumn& c : goodput_columns()) {
    using S = GoodputColumn::Shown;
    const bool shown = g && (c.shown == S::always || (g->progresses && (c.shown == S::progresses || g->trials > 0)));
    const double v = shown ? c.value(*g, o.experiment->reliability, *in) : 0;
    row[c.key] = shown && std::isfinite(v) ? Json(v) : Json();
  }
  return row;
}

int goodput_sweep(const GoodputOptions& o, const YamlNode& doc, const SweepSpec& sweep,
                  const std::function<void(ExperimentSpec&)>& flags)
{
  if (o.out.empty())
    throw ConfigError(command_line("--out"), "a sweep writes results.csv, results.json and results.jsonl", "--out DIR");
  check_directory(o.out, "--out");
  std::vector<PlotSpec> plots;
  for (auto& [k, v] : doc.entries())
    if (k.as_string() == "plot")
      plots = parse_plots(v);
  Catalog catalog = Catalog::open();
  std::vector<SweepPoint> points;
  for (std::size_t i = 0; i < sweep.points; ++i)
    points.push_back(point_at(sweep, i));
  check_sweep_document(doc, sweep, catalog, points); // as run does: a misspelt key exits 2, nothing run
  std::vector<Json> rows;
  for (std::size_t i = 0; i < sweep.points; ++i) // one process per point (one SimGrid engine each)
    rows.push_back(Json::parse(run_isolated([&] { return goodput_row(doc, sweep, i, catalog, flags).dump(); })));
  std::string name = o.experiment;
  for (auto& [k, v] : doc.entries())
    if (k.as_string() == "name")
      name = v.as_string();
  OutputSet files;
  const std::string csv = add_result_files(files, o.out, name, rows, sweep.points);
  for (auto& [file, contents] : draw_plots(plots, csv, o.out, name))
    files.add(file, contents, "--out");
  files.commit();
  std::fprintf(stderr, "wrote %s/results.csv, results.json and results.jsonl (%zu rows)\n", o.out.c_str(),
               rows.size());
  return 0;
}

} // namespace

void add_goodput_command(CLI::App& app, Action& action)
{
  auto o = std::make_shared<GoodputOptions>();
  CLI::App* cmd = app.add_subcommand(
      "goodput", "Days, GPU-hours and cost of the token budget once failures, checkpoints and restarts are counted: "
                 "the simulated step with the experiment's reliability: section (defaults: Llama 3's fleet)");
  cmd->add_option("experiment", o->experiment, "experiment YAML file (-: standard input)")->required();
  add_settings_option(*cmd, o->settings);
  cmd->add_option("--tokens", o->tokens, "token budget (default: the experiment's budget)");
  cmd->add_option("--seed", o->seed, "Monte-Carlo seed (default: reliability.seed)");
  cmd->add_option("--trials", o->trials, "Monte-Carlo runs (default: reliability.trials)");
  cmd->add_flag("--json", o->json, "print JSON");
  cmd->add_option("--out", o->out, "sweeps: write DIR/results.csv, results.json and the plot: figures");
  cmd->callback([o, cmd, &action] {
    const bool tokens = cmd->count("--tokens") > 0, seed = cmd->count("--seed") > 0,
               trials = cmd->count("--trials") > 0;
    action = [o, tokens, seed, trials] {
      if (tokens && !(o->tokens >= 1 && o->tokens <= 1e18))
        throw ConfigError(command_line("--tokens"), fmt("%g tokens", o->tokens), "1 to 1e18");
      // (a seed past 64 bits reads as the largest one: the bound names it rather than clamp)
      if (seed && (o->seed < 0 || o->seed > (1LL << 62)))
        throw ConfigError(command_line("--seed"), "seed out of range",
                          "an integer from 0 to " + std::to_string(1LL << 62) + ", as reliability.seed");
      if (trials && (o->trials < 1 || o->trials > 1000000))
        throw ConfigError(command_line("--trials"), std::to_string(o->trials) + " trials", "1 to 1000000");
      YamlNode doc = experiment_document(o->experiment, o->settings);
      auto flags = [o, tokens, seed, trials](ExperimentSpec& x) { apply_flags(*o, tokens, seed, trials, x); };
      if (auto sweep = parse_sweep(doc))
        return goodput_sweep(*o, doc, *sweep, flags);
      if (!o->out.empty())
        throw ConfigError(command_line("--out"), "'" + o->experiment + "' has no sweep",
                          "--out with an experiment that has a sweep: section");
      Catalog catalog = Catalog::open();
      ExperimentSpec e = parse_experiment(doc, catalog);
      flags(e);
      RunMetrics m = run_experiment(e, catalog);
      GoodputResult g = goodput(e.reliability, input_of(e, m));
      std::cout << (o->json ? to_json(g, m).dump(2) + "\n" : format_goodput(g, m));
      return 0;
    };
  });
}

} // namespace clustersim
