#include "sim/app/Commands.hpp"
#include "sim/simgrid/CollectiveBench.hpp"
#include "sim/simgrid/SimPlatform.hpp"
#include "sim/study/Catalog.hpp"
#include "sim/study/ChakraWorkload.hpp"
#include "sim/study/Experiment.hpp"
#include "sim/study/Isolated.hpp"
#include "sim/study/Planner.hpp"
#include "sim/study/Simulation.hpp"
#include "topology/ClusterGraph.hpp"
#include "topology/config/Suggest.hpp"
#include "topology/config/Yaml.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <sys/resource.h>
#include <sys/wait.h>

namespace clustersim {
namespace {

using Clock = std::chrono::steady_clock;

struct BenchRow {
  std::string scenario;
  std::string what;
  double wall_s = 0;
  double peak_rss_mb = 0;
  double simulated_s = 0;
  std::size_t events = 0; ///< simulated computations, flows and delays
  std::size_t flows = 0;
  std::string mode = "full";
  std::string engine = "-"; ///< what ran a training step (event, simgrid, timeline)
};

nlohmann::ordered_json to_json(const BenchRow& r)
{
  return {{"scenario", r.scenario},       {"what", r.what},     {"wall_s", r.wall_s}, {"peak_rss_mb", r.peak_rss_mb},
          {"simulated_s", r.simulated_s}, {"events", r.events}, {"flows", r.flows},   {"mode", r.mode},
          {"engine", r.engine}};
}

/// Runs `fn` in a child so that its wall time and peak RSS are its own.
BenchRow measure(const std::string& name, const std::function<BenchRow()>& fn)
{
  std::string out = run_isolated([&] {
    auto t0 = Clock::now();
    BenchRow r = fn();
    r.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
    rusage ru{};
    rusage kids{}; // the planner's workers: the largest of them
    ::getrusage(RUSAGE_SELF, &ru);
    ::getrusage(RUSAGE_CHILDREN, &kids);
    r.peak_rss_mb = static_cast<double>(std::max(ru.ru_maxrss, kids.ru_maxrss)) / 1024.0;
    r.scenario = name;
    return to_json(r).dump();
  });
  auto j = nlohmann::json::parse(out);
  BenchRow r;
  r.scenario = j["scenario"];
  r.what = j["what"];
  r.wall_s = j["wall_s"];
  r.peak_rss_mb = j["peak_rss_mb"];
  r.simulated_s = j["simulated_s"];
  r.events = j["events"];
  r.flows = j["flows"];
  r.mode = j["mode"];
  r.engine = j["engine"];
  return r;
}

BenchRow platform_build(const std::string& platform, int gpus)
{
  Catalog c = Catalog::open();
  PlatformSpec p = c.platform(platform, command_line("bench"));
  ClusterGraph cg = ClusterGraph::build(p, gpus);
  SimPlatform sp(cg, p.node.gpu.peak(Precision::bf16));
  BenchRow r;
  r.what = "build " + platform + " for " + std::to_string(gpus) + " GPUs (graph + SimGrid platform, " +
           std::to_string(sp.links()) + " links)";
  return r;
}

BenchRow allreduce(const std::string& platform, int gpus, double bytes)
{
  Catalog c = Catalog::open();
  PlatformSpec p = c.platform(platform, command_line("bench"));
  ClusterGraph cg = ClusterGraph::build(p, gpus);
  std::vector<std::uint32_t> ranks;
  for (int i = 0; i < gpus; ++i)
    ranks.push_back(static_cast<std::uint32_t>(i));
  CollectiveRun run = run_collectives(cg, c.protocols(), {{CollOp::all_reduce, ranks, bytes, "auto"}});
  BenchRow r;
  r.what = "1 GiB all-reduce on " + std::to_string(gpus) + " GPUs of " + platform + " (" + run.algorithm + ")";
  r.simulated_s = run.seconds;
  r.flows = run.stats.flows;
  r.events = run.stats.flows + run.stats.executions + run.stats.sleeps;
  return r;
}

/// One training step of an experiment given as YAML text; `full` simulates every rank; `engine`
/// overrides the experiment's (empty: keep it).
BenchRow training_step(const std::string& what, const std::string& yaml, bool full, const std::string& engine = "")
{
  Catalog c = Catalog::open();
  ExperimentSpec e = parse_experiment(YamlNode::load_string(yaml, "bench"), c);
  if (full)
    e.mode = "full";
  if (!engine.empty())
    e.engine = engine;
  RunMetrics m = simulate(e, c);
  BenchRow r;
  char step[64];
  std::snprintf(step, sizeof step, ", step %.3f s", m.step_time_s);
  r.what = what + step;
  r.simulated_s = m.step_time_s;
  r.flows = m.stats.flows;
  r.events = m.stats.flows + m.stats.executions + m.stats.sleeps;
  r.mode = m.mode;
  r.engine = m.engine;
  return r;
}

const char* kGpt3 = R"(name: gpt3-1k
model: gpt3-175b
cluster: {platform: dgx-a100-80gb, gpus: 1024}
training: {tp: 8, pp: 8, dp: 16, pipeline_schedule: 1f1b, micro_batch: 1, global_batch: 1536, precision: bf16,
           sequence_parallel: true, recompute: selective}
)";

std::string llama3(int gpus)
{
  return "name: llama3\nmodel: llama3-405b\ncluster: {platform: dgx-h100, gpus: " + std::to_string(gpus) +
         "}\ntraining: {tp: 8, pp: 16, dp: " + std::to_string(gpus / 128) +
         ", pipeline_schedule: 1f1b, micro_batch: 1, global_batch: " + std::to_string(gpus / 8) +
         ", precision: bf16, sequence_parallel: true, flash_attention: true, recompute: selective}\n";
}

/// Llama-3 405B as Meta trained it (tp 8, pp 16 interleaved with vpp 7, ZeRO-1 with overlapped
/// reductions and gathers, 16 micro-batches per replica) on a 2:1 oversubscribed fat-tree, where
/// replicas contend and the step cannot be folded.
std::string llama3_contended(int gpus)
{
  return "name: llama3-2to1\nmodel: llama3-405b\ncluster: {platform: dgx-h100-fattree-2to1, gpus: " +
         std::to_string(gpus) + "}\ntraining: {tp: 8, pp: 16, vpp: 7, dp: " + std::to_string(gpus / 128) +
         ", zero: 1, pipeline_schedule: interleaved, micro_batch: 1, global_batch: " + std::to_string(gpus / 8) +
         ", precision: bf16, sequence_parallel: true, flash_attention: true, recompute: selective, "
         "overlap: {grad_reduce: true, param_gather: true}}\n";
}

/// `clustersim plan` of a model on 1024 GPUs of a platform, the best 5 simulated.
BenchRow plan(const std::string& what, const std::string& model, const std::string& platform, int global_batch)
{
  Catalog c = Catalog::open();
  PlanRequest r;
  r.model = load_model_preset(model, c.models_dir(), command_line("bench"));
  r.platform = c.platform(platform, command_line("bench"));
  r.gpus = 1024;
  r.global_batch = global_batch;
  r.base.flash_attention = true;
  r.top = 5;
  PlanResult res = plan_layouts(r, c);
  BenchRow row;
  row.what = "plan " + what + ": " + std::to_string(res.candidates) + " layouts, " + std::to_string(res.estimated) +
             " estimated, best " + describe_layout(res.ranked.front().training);
  row.simulated_s = res.ranked.front().sim.step_time_s;
  row.mode = "plan";
  return row;
}

/// A step written as Chakra traces (every rank, in memory) and read back into a Workload.
BenchRow chakra_round_trip(const std::string& what, const std::string& yaml)
{
  Catalog c = Catalog::open();
  ExperimentSpec e = parse_experiment(YamlNode::load_string(yaml, "bench"), c);
  chakra::Export x = export_chakra(e, {});
  std::size_t bytes = 0;
  std::vector<chakra::Trace> traces;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < x.files.size(); ++i) {
    bytes += x.files[i].size();
    names.push_back("workload." + std::to_string(x.ranks[i]) + ".et");
    traces.push_back(chakra::decode(x.files[i], names.back()));
    std::string().swap(x.files[i]);
  }
  Workload w = chakra::from_chakra(traces, x.groups, names, "workload.json");
  BenchRow r;
  r.what = what + ": " + std::to_string(x.ranks.size()) + " traces, " + std::to_string(x.nodes) + " nodes, " +
           std::to_string(bytes >> 20) + " MiB, " + std::to_string(w.tasks().size()) + " tasks read back";
  r.mode = "chakra";
  return r;
}

struct Scenario {
  std::string name;
  std::function<BenchRow()> run;
};

std::vector<Scenario> scenarios()
{
  std::vector<Scenario> s;
  s.push_back({"platform-16k", [] { return platform_build("dgx-h100", 16384); }});
  s.push_back({"allreduce-1k", [] { return allreduce("dgx-a100-80gb", 1024, 1073741824.0); }});
  s.push_back({"allreduce-16k", [] { return allreduce("dgx-h100", 16384, 1073741824.0); }});
  s.push_back({"gpt3-1k",
               [] { return training_step("GPT-3 175B step, 1024 A100, tp 8 pp 8 dp 16, every rank", kGpt3, true); }});
  s.push_back({"gpt3-1k-folded",
               [] { return training_step("GPT-3 175B step, 1024 A100, tp 8 pp 8 dp 16, folded", kGpt3, false); }});
  s.push_back({"llama3-16k", [] {
                 return training_step("Llama-3 405B step, 16384 H100, tp 8 pp 16 dp 128, seq 8192", llama3(16384),
                                      false);
               }});
  s.push_back({"chakra-llama3-8b-64", [] {
                 return chakra_round_trip("Llama-3 8B step, 64 H100, tp 8 pp 2 dp 4, Chakra export and import",
                                          "name: llama3-8b\nmodel: llama3-8b\ncluster: {platform: dgx-h100, gpus: "
                                          "64}\ntraining: {tp: 8, pp: 2, dp: 4, micro_batch: 1, global_batch: 64, "
                                          "sequence_parallel: true}\n");
               }});
  s.push_back({"plan-gpt3-1k", [] { return plan("GPT-3 175B on 1024 A100", "gpt3-175b", "dgx-a100-80gb", 1536); }});
  s.push_back({"plan-dsv3-1k", [] { return plan("DeepSeek-V3 on 1024 H100", "deepseek-v3", "dgx-h100", 8192); }});
  for (int g : {1024, 2048, 4096, 8192, 16384}) {
    std::string n = "platform-" + std::to_string(g / 1024) + "k-curve";
    s.push_back({n, [g] { return platform_build("dgx-h100", g); }});
  }
  for (int g : {1024, 2048, 4096, 8192, 16384}) {
    std::string n = "allreduce-" + std::to_string(g / 1024) + "k-curve";
    s.push_back({n, [g] { return allreduce("dgx-h100", g, 1073741824.0); }});
  }
  for (int g : {1024, 2048, 4096, 8192, 16384}) {
    std::string n = "llama3-" + std::to_string(g / 1024) + "k-curve";
    s.push_back({n, [g] {
                   return training_step("Llama-3 405B step, " + std::to_string(g) + " H100, global batch " +
                                            std::to_string(g / 8),
                                        llama3(g), false);
                 }});
  }
  // steps that cannot be folded: replicas contend on a 2:1 oversubscribed fat-tree (issue: the
  // fabric what-if users ask first), on the event engine and on SimGrid's actors
  for (int g : {2048, 4096, 16384, 32768, 65536}) {
    const std::string what = "Llama-3 405B step, " + std::to_string(g) + " H100, 2:1 fat-tree, vpp 7, ZeRO-1";
    s.push_back({"contended-" + std::to_string(g / 1024) + "k",
                 [g, what] { return training_step(what, llama3_contended(g), false, "event"); }});
  }
  for (int g : {512, 2048, 4096}) {
    const std::string what = "Llama-3 405B step, " + std::to_string(g) + " H100, 2:1 fat-tree, vpp 7, ZeRO-1";
    const std::string n = g < 1024 ? std::to_string(g) : std::to_string(g / 1024) + "k";
    s.push_back({"contended-" + n + "-simgrid",
                 [g, what] { return training_step(what, llama3_contended(g), false, "simgrid"); }});
  }
  return s;
}

} // namespace

void add_bench_command(CLI::App& app, Action& action)
{
  struct Options {
    std::vector<std::string> only;
    bool json = false;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("bench", "Run the benchmark scenarios and print wall time, peak RSS and simulated "
                                              "events per scenario (each in its own process)");
  cmd->add_option("--scenario", opt->only, "run only these scenarios (repeatable)");
  cmd->add_flag("--json", opt->json, "print the table as JSON");
  cmd->callback([opt, &action] {
    action = [opt] {
      auto all = scenarios();
      std::vector<std::string> names;
      for (const auto& s : all)
        names.push_back(s.name);
      for (const auto& o : opt->only)
        if (std::find(names.begin(), names.end(), o) == names.end())
          throw ConfigError(command_line("--scenario"), unknown_name("scenario", o, names), join(names));
      std::vector<BenchRow> rows;
      for (const auto& s : all) {
        if (!opt->only.empty() && std::find(opt->only.begin(), opt->only.end(), s.name) == opt->only.end())
          continue;
        rows.push_back(measure(s.name, s.run));
        if (!opt->json) {
          const BenchRow& r = rows.back();
          std::printf("%-22s %9.3f s %9.1f MB %10zu events %9zu flows  %-6s %-8s %s\n", r.scenario.c_str(),
                      r.wall_s, r.peak_rss_mb, r.events, r.flows, r.mode.c_str(), r.engine.c_str(), r.what.c_str());
          std::fflush(stdout);
        }
      }
      if (opt->json) {
        nlohmann::ordered_json j = nlohmann::ordered_json::array();
        for (const auto& r : rows)
          j.push_back(to_json(r));
        std::cout << j.dump(2) << "\n";
      }
      return 0;
    };
  });
}

} // namespace clustersim
