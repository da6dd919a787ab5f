// One fuzz target per input path. A target feeds the bytes to the parser as a user's file (or
// argument vector) would reach it, then runs what a parsed input leads to without SimGrid (the
// memory model, the step builder, the contention-free timeline, the cluster graph), so that a
// value the parser let through cannot crash what comes after.
//
// The contract under test: bad input ends in a ConfigError whose message is one line of UTF-8,
// `WHERE: what; valid: ...`. Any other exception escapes and the fuzzer reports it; so do
// sanitizer findings, hangs and allocations beyond the fuzzer's limits.
#include "FuzzTargets.hpp"

#include "Framework.hpp"
#include "GpuSpec.hpp"
#include "Protocols.hpp"

#include "ClusterGraph.hpp"
#include "CollectiveEngine.hpp"
#include "Commands.hpp"
#include "CostModel.hpp"
#include "Experiment.hpp"
#include "PlotSpec.hpp"
#include "StepBuilder.hpp"
#include "Suggest.hpp"
#include "Sweep.hpp"
#include "Timeline.hpp"
#include "TopologyFacts.hpp"
#include "Units.hpp"
#include "Validation.hpp"

#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

namespace clustersim::fuzz {
namespace {

const Catalog& catalog()
{
  static const Catalog c = [] {
    ::setenv("CLUSTERSIM_DATA", CLUSTERSIM_SOURCE, 1);
    return Catalog::open();
  }();
  return c;
}

/// The promise every error keeps; a broken one is a finding.
void check_message(const ConfigError& e)
{
  const std::string m = e.what();
  if (m.find('\n') != std::string::npos || m.find('\r') != std::string::npos)
    throw std::logic_error("error message spans lines: " + printable(m));
  if (invalid_utf8_at(m) != std::string::npos)
    throw std::logic_error("error message is not UTF-8: " + printable(m));
  if (m.find(": ") == std::string::npos || m.find("; valid: ") == std::string::npos)
    throw std::logic_error("error message is not 'WHERE: what; valid: ...': " + m);
}

template <class F> int guarded(F&& f)
{
  try {
    f();
  } catch (const ConfigError& e) {
    check_message(e);
  }
  return 0;
}

std::string text_of(const std::uint8_t* data, std::size_t size)
{
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// What a parsed experiment leads to, short of SimGrid: memory, FLOPs, the step's task graph,
/// its collective plans on the cluster and the contention-free timeline (small steps only, so
/// that one input stays fast).
void exercise(const ExperimentSpec& e)
{
  CostModel cost(e.model, e.training, e.platform.node.gpu);
  cost.peak_memory();
  cost.model_flops_per_step();
  cost.hardware_flops_per_step();
  baseline_of(e);
  const double work = static_cast<double>(e.training.micro_batches()) * (e.model.layers + 2) * e.training.vpp;
  if (work > 4096 || e.gpus > 512)
    return;
  StepPlan plan = build_step(cost, 1);
  ClusterGraph cluster = ClusterGraph::build(e.platform, std::max(e.gpus, e.platform.node.gpus));
  CollectiveEngine engine(cluster, catalog().protocols());
  try {
    evaluate_contention_free(plan.workload, engine);
  } catch (const std::invalid_argument&) {
    // an algorithm forced by collective_algo that cannot run a collective: the simulation
    // reports it at the key (Simulation.cpp); here only the planning matters
  }
}

int experiment(const std::uint8_t* data, std::size_t size)
{
  return guarded([&] {
    YamlNode doc = YamlNode::load_string(text_of(data, size), "fuzz.yaml");
    for (auto& [k, v] : doc.is_map() ? doc.entries() : std::vector<std::pair<YamlNode, YamlNode>>{})
      if (k.is_scalar() && k.as_string() == "plot")
        parse_plots(v);
    auto sweep = parse_sweep(doc);
    if (!sweep) {
      exercise(parse_experiment(doc, catalog()));
      return;
    }
    for (std::size_t i = 0; i < std::min<std::size_t>(sweep->points, 3); ++i) {
      SweepPoint p = point_at(*sweep, i);
      try {
        exercise(parse_experiment(apply_point(doc, *sweep, p), catalog()));
      } catch (const ConfigError& e) {
        check_message(e);
      }
    }
  });
}

int platform(const std::uint8_t* data, std::size_t size)
{
  return guarded([&] {
    YamlNode doc = YamlNode::load_string(text_of(data, size), "fuzz-platform.yaml");
    PlatformSpec p = parse_platform(doc, catalog().gpus(), catalog().protocols().transports());
    for (int nodes : {1, 2, 5}) {
      const int gpus = nodes * p.node.gpus;
      if (gpus > 1024)
        break;
      ClusterGraph cg = ClusterGraph::build(p, gpus);
      compute_facts(cg);
      std::vector<int> route;
      cg.route(0, gpus - 1, route);
      CollectiveEngine engine(cg, catalog().protocols());
      std::vector<std::uint32_t> ranks;
      for (int i = 0; i < gpus; ++i)
        ranks.push_back(static_cast<std::uint32_t>(i));
      engine.best_plan(CollOp::all_reduce, ranks, 1 << 20, "auto");
    }
  });
}

int hf_config(const std::uint8_t* data, std::size_t size)
{
  return guarded([&] {
    ModelSpec m = parse_hf_config(YamlNode::load_string(text_of(data, size), "config.json"));
    m.total_params();
    m.active_params();
  });
}

int validation(const std::uint8_t* data, std::size_t size)
{
  return guarded([&] {
    for (const auto& c : parse_validation_cases(YamlNode::load_string(text_of(data, size), "fuzz-cases.yaml"),
                                                catalog()))
      if (c.build_error.empty())
        exercise(c.experiment);
  });
}

int units(const std::uint8_t* data, std::size_t size)
{
  if (size == 0)
    return 0;
  const Quantity kind = static_cast<Quantity>(data[0] % 5);
  const std::string text = text_of(data + 1, size - 1);
  try {
    const double v = parse_quantity(text, kind);
    if (!(v >= 0 && v <= physical_limit(kind)))
      throw std::logic_error("parse_quantity let through " + std::to_string(v));
    const double back = parse_quantity(format_quantity(v, kind), kind);
    if (!(back >= 0 && back <= physical_limit(kind) * 1.000001))
      throw std::logic_error("format_quantity does not read back: " + format_quantity(v, kind));
  } catch (const UnitError& e) {
    check_message(ConfigError(SourceLocation{"fuzz", 1, 1}, e.what(), e.valid()));
  }
  return 0;
}

/// The argument vector, NUL-separated; the commands that are pure and cheap (memory, estimate,
/// schema, model list) also run, the others stop after their arguments are parsed.
int cli(const std::uint8_t* data, std::size_t size)
{
#ifdef CLUSTERSIM_FUZZING
  static const bool quiet = [] {
    int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1); // what the commands print is not the finding
    return true;
  }();
  (void)quiet;
#endif
  catalog();
  std::vector<std::string> args{"clustersim"};
  std::string cur;
  for (std::size_t i = 0; i < size && args.size() < 40; ++i) {
    if (data[i] == 0) {
      args.push_back(cur);
      cur.clear();
    } else {
      cur += static_cast<char>(data[i]);
    }
  }
  if (!cur.empty())
    args.push_back(cur);
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  CLI::App app{"clustersim"};
  Action action;
  add_commands(app, action);
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    // --help and --version are CLI::Success; a usage error is printed by main as this one line
    if (e.get_exit_code() != 0)
      check_message(usage_error(app, e, std::vector<std::string>(args.begin() + 1, args.end())));
    return 0;
  }
  static const std::vector<std::string> runnable{"memory", "estimate", "schema", "model"};
  bool run = false;
  for (const auto* sub : app.get_subcommands())
    run = run || std::find(runnable.begin(), runnable.end(), sub->get_name()) != runnable.end();
  if (!run || !action)
    return 0;
  std::ostringstream sink; // the replay in the test suite keeps its own output clean
  std::streambuf* out = std::cout.rdbuf(sink.rdbuf());
  try {
    guarded([&] { action(); });
  } catch (...) {
    std::cout.rdbuf(out);
    throw;
  }
  std::cout.rdbuf(out);
  return 0;
}

/// The catalog files of a data directory (CLUSTERSIM_DATA), which users edit: the first byte
/// picks frameworks.yaml, gpus.yaml or collectives.yaml, the rest is the file, read from disk
/// as the catalog reads it; what loads is then used as the cost model uses it.
int catalog_file(const std::uint8_t* data, std::size_t size)
{
  if (size == 0)
    return 0;
  static const char* const names[] = {"frameworks.yaml", "gpus.yaml", "collectives.yaml"};
  const int which = data[0] % 3;
  // one scratch directory per process, removed when the fuzzer exits
  struct ScratchDir {
    std::string path;
    ScratchDir()
    {
      char t[] = "/tmp/clustersim-fuzz-catalog-XXXXXX";
      const char* d = ::mkdtemp(t);
      if (!d)
        throw std::runtime_error("mkdtemp failed");
      path = d;
    }
    ~ScratchDir()
    {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const ScratchDir dir;
  const std::string path = dir.path + "/" + names[which];
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
  }
  return guarded([&] {
    if (which == 0) {
      const FrameworkCatalog c = FrameworkCatalog::load(path);
      for (std::size_t i = 0; i < framework_names().size(); ++i) {
        const FrameworkTraits& f = c.get(static_cast<Framework>(i));
        c.kernel_set(f.kernels).op("norm");
        c.recipe(f.fp8_recipe);
        for (Precision p : {Precision::fp16, Precision::bf16, Precision::fp8})
          f.states(p), f.grad_reduce(p);
      }
    } else if (which == 1) {
      const GpuCatalog g = GpuCatalog::load(path);
      for (const auto& id : g.ids()) {
        const GpuSpec* gpu = g.find(id);
        gpu->gemm_shape_factor(4096, 4096, 4096, 1, 0);
        gpu->gemm_shape_factor(1, 7, 96, 3, gpu->sms / 2);
        gpu->power_factor();
      }
    } else {
      ProtocolTable::load(path);
    }
  });
}

int results(const std::uint8_t* data, std::size_t size)
{
  return guarded([&] {
    SweepResult r = rows_from_json(text_of(data, size), "results.json");
    rows_to_csv(r.rows);
    rows_to_json(r.name, r.rows, r.points);
  });
}

} // namespace

const std::vector<Target>& targets()
{
  static const std::vector<Target> t{{"experiment", experiment}, {"platform", platform},   {"hf_config", hf_config},
                                     {"validation", validation}, {"units", units},         {"cli", cli},
                                     {"results", results},       {"catalog", catalog_file}};
  return t;
}

const Target& target(const std::string& name)
{
  for (const auto& t : targets())
    if (name == t.name)
      return t;
  throw std::invalid_argument("no fuzz target '" + name + "'");
}

} // namespace clustersim::fuzz
