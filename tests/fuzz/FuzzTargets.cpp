// One fuzz target per input path. A target feeds the bytes to the parser as a user's file (or
// argument vector) would reach it, then runs what a parsed input leads to without SimGrid (the
// memory model, the step builder, the contention-free timeline, the cluster graph), so that a
// value the parser let through cannot crash what comes after.
//
// The contract under test: bad input ends in a ConfigError whose message is one line of UTF-8,
// `WHERE: what; valid: ...`. Any other exception escapes and the fuzzer reports it; so do
// sanitizer findings, hangs and allocations beyond the fuzzer's limits.
#include "tests/fuzz/FuzzTargets.hpp"

#include "sim/Protocols.hpp"
#include "strategies/Framework.hpp"
#include "topology/GpuSpec.hpp"

#include "sim/CollectiveEngine.hpp"
#include "sim/EventEngine.hpp"
#include "sim/Timeline.hpp"
#include "sim/app/Commands.hpp"
#include "sim/app/Slurm.hpp"
#include "sim/study/Experiment.hpp"
#include "sim/study/Goodput.hpp"
#include "sim/study/Isolated.hpp"
#include "sim/study/PlotSpec.hpp"
#include "sim/study/Simulation.hpp"
#include "sim/study/Sweep.hpp"
#include "sim/study/Validation.hpp"
#include "strategies/CostModel.hpp"
#include "strategies/StepBuilder.hpp"
#include "strategies/workload/chakra/ChakraTrace.hpp"
#include "topology/BillOfMaterials.hpp"
#include "topology/ClusterGraph.hpp"
#include "topology/Prices.hpp"
#include "topology/TopologyFacts.hpp"
#include "topology/config/Suggest.hpp"
#include "topology/config/Units.hpp"

#include <cmath>
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

/// The input cut at its NUL bytes, into at most `most` strings (the last one kept even if empty
/// when `keep_last`).
std::vector<std::string> nul_separated(const std::uint8_t* data, std::size_t size, std::size_t most, bool keep_last)
{
  std::vector<std::string> out;
  std::string cur;
  for (std::size_t i = 0; i < size && out.size() < most; ++i) {
    if (data[i] == 0) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += static_cast<char>(data[i]);
    }
  }
  if ((keep_last || !cur.empty()) && out.size() < most)
    out.push_back(cur);
  return out;
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
  for (const ExperimentSpec& j : e.jobs)
    CostModel(j.model, j.training, j.platform.node.gpu).peak_memory();
  if (!e.jobs.empty())
    job_gpus(e);
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

/// The bill of materials of a cluster, held to what its counts must satisfy; a broken one is a
/// finding: every cable ends on two switch ports (a NIC cable on one), carries a transceiver at
/// each end, and no switch uses more ports than its radix.
void check_bill(const ClusterGraph& cg)
{
  const BillOfMaterials b = bill_of_materials(cg);
  long long ports = 0;
  for (const SwitchTier& t : b.switch_tiers) {
    ports += t.ports_used;
    if (t.most_ports_used > t.radix)
      throw std::logic_error("a " + t.tier + " switch uses " + std::to_string(t.most_ports_used) + " ports of " +
                             std::to_string(t.radix));
  }
  long long ends = 0;
  for (const CableClass& c : b.cables)
    ends += (c.tiers == "nic-leaf" ? 1 : 2) * c.cables;
  if (ports != ends || b.transceivers() != 2 * b.fabric_cables() || b.nics != cg.count(VertexKind::nic) ||
      b.gpus != cg.gpus())
    throw std::logic_error("bill of materials: " + std::to_string(ports) + " switch ports for " +
                           std::to_string(ends) + " cable ends");
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
      check_bill(cg);
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
  for (auto& a : nul_separated(data, size, 39, false))
    args.push_back(std::move(a));
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
/// picks frameworks.yaml, gpus.yaml, collectives.yaml or prices.yaml, the rest is the file, read from disk
/// as the catalog reads it; what loads is then used as the cost model uses it.
int catalog_file(const std::uint8_t* data, std::size_t size)
{
  if (size == 0)
    return 0;
  static const char* const names[] = {"frameworks.yaml", "gpus.yaml", "collectives.yaml", "prices.yaml"};
  const int which = data[0] % 4;
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
    } else if (which == 2) {
      ProtocolTable::load(path);
    } else {
      // priced as a platform is: a bill at every rate the table may or may not hold
      const PriceTable t = PriceTable::load(path);
      PlatformSpec p;
      p.name = "fuzz";
      p.node.gpu.id = t.nodes.empty() ? std::string("none") : t.nodes.begin()->first;
      p.node.gpus = 8;
      p.node.nics = 8;
      p.node.nic.bandwidth = 50e9;
      p.fabric.link.bandwidth = 100e9;
      p.cost.prices = std::make_shared<const PriceTable>(t);
      const Capex c = price_cluster({}, p);
      c.usd_per_gpu_hour();
      unpriced_parts(p);
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


/// Small enough to simulate once per input: at most `gpus` GPUs in the job (with its cluster.jobs) and in an NVLink
/// domain (whose routes are tabled pair by pair), and at most `passes` layer passes.
bool small_step(const ExperimentSpec& e, long long gpus, double passes)
{
  const double work = static_cast<double>(e.training.micro_batches()) * (e.model.layers + 2) * e.training.vpp;
  const long long domain = static_cast<long long>(e.platform.node.gpus) * std::max(1, e.platform.node.domain_nodes);
  long long all = e.gpus;
  for (const ExperimentSpec& j : e.jobs) {
    if (!small_step(j, gpus, passes))
      return false;
    all += j.gpus;
  }
  return all <= gpus && domain <= gpus && work <= passes;
}

/// What every simulated step promises, whatever the input: a finite, positive step and MFU at
/// most 1, a breakdown that adds up to the step, finite memory.
void check_step(const RunMetrics& m)
{
  auto bad = [&](const std::string& what) {
    throw std::logic_error(what + " (step " + std::to_string(m.step_time_s) + " s, mfu " + std::to_string(m.mfu) +
                           ", mode " + m.mode + ")");
  };
  if (!(std::isfinite(m.step_time_s) && m.step_time_s > 0))
    bad("a step time that is not finite and positive");
  if (!(std::isfinite(m.mfu) && m.mfu > 0 && m.mfu <= 1))
    bad("an MFU outside (0, 1]");
  if (!(std::isfinite(m.alone_step_s) && m.alone_step_s > 0))
    bad("a step alone that is not finite and positive");
  for (const SharedJob& j : m.jobs)
    if (!(std::isfinite(j.step_s) && j.step_s > 0 && std::isfinite(j.alone_s) && j.alone_s > 0 &&
          j.measured <= j.steps && j.steps > 0))
      bad("job " + j.name + ": a step of " + std::to_string(j.step_s) + " s beside, " + std::to_string(j.alone_s) +
          " s alone, " + std::to_string(j.measured) + " of " + std::to_string(j.steps) + " steps measured");
  const Breakdown& b = m.breakdown;
  const double sum = b.compute + b.recompute + b.exposed_tp + b.exposed_cp + b.exposed_ep + b.exposed_pp +
                     b.exposed_dp + b.bubble + b.optimizer + b.host + b.other;
  if (!(std::fabs(sum - m.step_time_s) <= 1e-6 * m.step_time_s + 1e-12))
    bad("a breakdown that sums to " + std::to_string(sum) + " s");
  if (!std::isfinite(m.memory.peak))
    bad("a peak memory that is not finite");
}

/// The `faults:` what-ifs of a small experiment simulated on the event engine in this process:
/// stragglers, jitter and link faults applied to the cluster and the step, every rank run.
int faults(const std::uint8_t* data, std::size_t size)
{
  return guarded([&] {
    ExperimentSpec e = parse_experiment(YamlNode::load_string(text_of(data, size), "fuzz-faults.yaml"), catalog());
    if (!small_step(e, 16, 512))
      return;
    e.engine = "event"; // SimGrid runs once per process: the engines target forks for it
    check_step(simulate(e, catalog()));
  });
}

/// A small step on both engines: the event engine here (so that the fuzzer sees its coverage),
/// SimGrid's in a forked child (SimGrid allows one engine per process), which compares its run,
/// the reference, with the event engine's: the same step and the same end for every task (as
/// tests/test_engines.cpp requires of its cases).
int engines(const std::uint8_t* data, std::size_t size)
{
  return guarded([&] {
    ExperimentSpec e = parse_experiment(YamlNode::load_string(text_of(data, size), "fuzz-engines.yaml"), catalog());
    if (!small_step(e, 32, 512) || e.mode == "analytic" || e.seeds > 1)
      return;
    e.engine = "event";
    ExecutionResult ev;
    const RunMetrics b = simulate(e, catalog(), nullptr, &ev);
    check_step(b);
    const std::string out = run_isolated([&] {
      e.engine = "simgrid";
      ExecutionResult ref;
      const RunMetrics a = simulate(e, catalog(), nullptr, &ref);
      check_step(a);
      if (ref.end.size() != ev.end.size())
        return "the engines ran " + std::to_string(ref.end.size()) + " and " + std::to_string(ev.end.size()) + " tasks";
      double worst = 0;
      for (std::size_t i = 0; i < ref.end.size(); ++i)
        worst = std::max(worst, std::fabs(ref.end[i] - ev.end[i]));
      if (!(std::fabs(a.step_time_s - b.step_time_s) <= 1e-9 * a.step_time_s) || !(worst <= 1e-8))
        return "the engines disagree: simgrid " + std::to_string(a.step_time_s) + " s, event " +
               std::to_string(b.step_time_s) + " s, a task's end by " + std::to_string(worst) + " s";
      return std::string();
    });
    if (!out.empty())
      throw std::logic_error(out);
  });
}

/// The closed form and the Monte-Carlo of `reliability:` for the experiment's job (its step
/// priced at 40 % of peak, no simulation), with the Monte-Carlo bounded per input. What they
/// promise: the wall time is at least the work, ETTR in (0, 1], the band ordered, the same seed
/// the same band.
int goodput_target(const std::uint8_t* data, std::size_t size)
{
  return guarded([&] {
    const ExperimentSpec e =
        parse_experiment(YamlNode::load_string(text_of(data, size), "fuzz-goodput.yaml"), catalog());
    const CostModel cost(e.model, e.training, e.platform.node.gpu);
    const double peak = e.platform.node.gpu.peak(e.training.precision);
    GoodputInput in;
    in.step_s = cost.model_flops_per_step() / (static_cast<double>(e.gpus) * std::max(peak, 1e12) * 0.4);
    in.tokens_per_step = static_cast<double>(e.training.global_batch) * e.model.seq_len;
    in.budget_tokens = e.budget_tokens;
    in.gpus = e.gpus;
    in.gpus_per_node = e.platform.node.gpus;
    in.nics_per_node = e.platform.node.nics > 0 ? e.platform.node.nics : e.platform.node.gpus;
    in.checkpoint_bytes = e.model.total_params() * 12; // bf16 weights, fp32 master and Adam
    in.usd_per_gpu_hour = e.platform.cost.usd_per_gpu_hour;
    in.monte_carlo_events = 2e4;
    const GoodputResult g = goodput(e.reliability, in);
    auto bad = [&](const std::string& what) {
      throw std::logic_error("goodput: " + what + " (work " + std::to_string(g.work_s) + " s, wall " +
                             std::to_string(g.wall_s) + " s)");
    };
    if (!(std::isfinite(g.work_s) && g.work_s > 0) || !(g.mtbf_s > 0) || std::isnan(g.wall_s))
      bad("a work, MTBF or wall time that is not a positive number");
    if (!g.progresses)
      return;
    if (!(g.wall_s >= g.work_s * (1 - 1e-12)) || !(g.ettr > 0 && g.ettr <= 1))
      bad("a wall time shorter than the work, or an ETTR outside (0, 1]");
    if (g.trials > 0) {
      if (!(g.mc_wall_p05 <= g.mc_wall_p50 && g.mc_wall_p50 <= g.mc_wall_p95) ||
          !(g.mc_wall_p05 >= g.work_s * (1 - 1e-12)) || !(g.mc_ettr_mean > 0 && g.mc_ettr_mean <= 1))
        bad("a Monte-Carlo band out of order, below the work or with an ETTR outside (0, 1]");
      if (goodput(e.reliability, in).mc_wall_p50 != g.mc_wall_p50)
        bad("the same seed gave another band");
    }
    const double tau = goodput_optimal_interval_s(e.reliability, in);
    if (std::isnan(tau) || std::isnan(goodput_wall_s(e.reliability, in, 0)))
      bad("a NaN interval or wall time");
  });
}

/// A sweep written as Slurm scripts (`run SWEEP --slurm --dry-run`): the flags come from the
/// input, NUL-separated (out, partition, account, qos, time, then --sbatch-arg values; a first
/// byte sets --array-size and --cpus-per-task). What the scripts promise: every #SBATCH line
/// comes before the first command (sbatch stops reading options there), each is one option, and
/// each command line is one the scripts write, so no value can end the block or add a command.
int slurm(const std::uint8_t* data, std::size_t size)
{
  if (size == 0)
    return 0;
  // the sweep is fixed and valid: only the flags can be wrong
  struct Sweep {
    std::string file;
    YamlNode doc;
    SweepSpec spec;
  };
  static const Sweep sweep = [] {
    static char dir[] = "/tmp/clustersim-fuzz-slurm-XXXXXX";
    if (!::mkdtemp(dir))
      throw std::runtime_error("mkdtemp failed");
    const std::string f = std::string(dir) + "/sweep.yaml";
    std::ofstream(f) << "name: fuzz-sweep\nmodel: gpt3-1.3b\ncluster: {platform: dgx-a100-80gb, gpus: 16}\n"
                        "training: {tp: 2, pp: 2, dp: 4, micro_batch: 1, global_batch: 64}\n"
                        "sweep: {axes: {training.global_batch: [64, 128, 256]}}\n";
    YamlNode doc = YamlNode::load_file(f);
    SweepSpec spec = *parse_sweep(doc);
    return Sweep{f, doc, spec};
  }();
  std::vector<std::string> v = nul_separated(data + 1, size - 1, 16, true);
  v.resize(std::max<std::size_t>(v.size(), 5));
  SlurmOptions o;
  o.experiment = sweep.file;
  o.out = v[0];
  o.partition = v[1];
  o.account = v[2];
  o.qos = v[3];
  o.time = v[4];
  o.sbatch_args.assign(v.begin() + 5, v.end());
  o.array_size_given = (data[0] & 0x80) != 0;
  o.array_size = (data[0] & 0x0f) - 1;
  o.cpus_per_task = ((data[0] >> 4) & 0x07);
  o.dry_run = true;
  std::ostringstream sink;
  std::streambuf* out = std::cout.rdbuf(sink.rdbuf());
  bool submitted = false;
  try {
    guarded([&] {
      submit_slurm(sweep.doc, sweep.spec, o);
      submitted = true;
    });
  } catch (...) {
    std::cout.rdbuf(out);
    throw;
  }
  std::cout.rdbuf(out);
  // every command line the three scripts and the submission write, by its start
  static const std::vector<std::string> commands{
      "set -eu", "i=$SLURM_ARRAY_TASK_ID", "exec ", "note=", ": >\"$note.tmp\"", "i=0", "while [ $i -lt ",
      "  if [ ! -f ", "    log=", "    echo \"shard $i of ", "  fi", "  i=$((i + 1))", "done", "mv \"$note.tmp\"",
      "sbatch --parsable "};
  std::istringstream lines(sink.str());
  bool in_block = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# ---- ", 0) == 0) {
      in_block = line != "# ---- submit"; // a script's header comes first; the sbatch commands have none
      continue;
    }
    if (line.rfind("#SBATCH ", 0) == 0) {
      if (!in_block)
        throw std::logic_error("an #SBATCH line after a command, which sbatch ignores: " + printable(line));
      const std::string opt = line.substr(8);
      if (opt.rfind("--", 0) != 0 || (opt.find(' ') != std::string::npos && opt.find('"') == std::string::npos))
        throw std::logic_error("an #SBATCH line that is not one option: " + printable(line));
      continue;
    }
    if (line.empty() || line[0] == '#')
      continue;
    in_block = false;
    bool known = false;
    for (const auto& c : commands)
      known = known || line.rfind(c, 0) == 0;
    if (!known)
      throw std::logic_error("a script line the scripts do not write: " + printable(line));
  }
  if (submitted && sink.str().find("\nexec ") == std::string::npos)
    throw std::logic_error("a dry run that printed no script");
  return 0;
}

/// Command-line settings (`--set KEY=VALUE`, NUL-separated, at most 8) over a small sweep: every
/// point parses with them, and a setting the document rejects is a one-line error naming it.
int settings(const std::uint8_t* data, std::size_t size)
{
  return guarded([&] {
    const YamlNode doc = YamlNode::load_string("model: {preset: gpt3-125m, layers: 2}\n"
                                               "cluster: {platform: dgx-h100, gpus: 8}\n"
                                               "training: {dp: 8, micro_batch: 1, global_batch: 8}\n"
                                               "sweep: {axes: {training.micro_batch: [1, 2]}}\n",
                                               "fuzz-settings.yaml");
    const YamlNode set = apply_settings(doc, nul_separated(data, size, 8, false));
    auto sweep = parse_sweep(set);
    for (std::size_t i = 0; sweep && i < sweep->points; ++i)
      try {
        exercise(parse_experiment(apply_point(set, *sweep, point_at(*sweep, i)), catalog()));
      } catch (const ConfigError& e) {
        check_message(e);
      }
    // `validate --set`: the same settings on every case of a validation file
    const YamlNode cases = YamlNode::load_string(
        "cases:\n- id: a\n  model: {preset: gpt3-125m, layers: 2}\n  cluster: {platform: dgx-h100, gpus: 8}\n"
        "  training: {dp: 8, micro_batch: 1, global_batch: 8}\n  measured: {metric: step_time_s, value: 1}\n"
        "- id: b\n  model: {preset: gpt3-125m, layers: 2}\n  cluster: {platform: dgx-h100, gpus: 8}\n"
        "  training: {tp: 2, dp: 4, micro_batch: 1, global_batch: 8}\n  measured: {metric: step_time_s, value: 1}\n",
        "fuzz-cases.yaml");
    try {
      for (const auto& c : parse_validation_cases(apply_settings(cases, nul_separated(data, size, 8, false), "cases"),
                                                  catalog()))
        if (c.build_error.empty())
          exercise(c.experiment);
    } catch (const ConfigError& e) {
      check_message(e);
    }
  });
}

/// Chakra execution traces: the first byte gives the ranks (1-4), the rest is split evenly into
/// their traces, whose collectives use one group of every rank ("1") or all ranks (""). A trace
/// set that reads and maps runs on the event engine on one node, and every task must end.
int chakra_traces(const std::uint8_t* data, std::size_t size)
{
  return guarded([&] {
    if (size < 1)
      return;
    const std::size_t ranks = 1 + data[0] % 4;
    const std::size_t part = (size - 1) / ranks;
    std::vector<chakra::Trace> traces;
    std::vector<std::string> files;
    for (std::size_t r = 0; r < ranks; ++r) {
      files.push_back("fuzz." + std::to_string(r) + ".et");
      const auto* begin = reinterpret_cast<const char*>(data + 1 + r * part);
      traces.push_back(chakra::decode(std::string_view(begin, part), files.back()));
    }
    chakra::Groups groups{{"1", {}}};
    for (std::uint32_t r = 0; r < ranks; ++r)
      groups["1"].push_back(r);
    Workload w = chakra::from_chakra(traces, groups, files, "fuzz.json");
    if (w.tasks().size() > 20000)
      return;
    for (const Task& t : w.tasks())
      if (!(t.amount >= 0 && t.amount < 1e6))
        return; // durations and sizes a trace may carry but a step cannot run in bounded time
    ExperimentSpec e = parse_experiment(
        YamlNode::load_string("model: gpt3-125m\ncluster: {platform: dgx-h100, gpus: 8}\n"
                              "training: {dp: 8, micro_batch: 1, global_batch: 8}\n",
                              "fuzz-chakra.yaml"),
        catalog());
    ClusterGraph cluster = ClusterGraph::build(e.platform, 8);
    CollectiveEngine collectives(cluster, catalog().protocols());
    const ExecutionResult res = execute_events(w, collectives, e.platform.node.gpu.peak(e.training.precision));
    for (double end : res.end)
      if (!(end >= 0 && end <= res.makespan))
        throw std::logic_error("a task of an imported trace ends at " + std::to_string(end) + " s, outside the step");
  });
}

} // namespace

const std::vector<Target>& targets()
{
  static const std::vector<Target> t{{"experiment", experiment}, {"platform", platform},   {"hf_config", hf_config},
                                     {"validation", validation}, {"units", units},         {"cli", cli},
                                     {"results", results},       {"catalog", catalog_file},
                                     {"faults", faults},         {"engines", engines},     {"goodput", goodput_target},
                                     {"slurm", slurm},           {"chakra", chakra_traces},
                                     {"settings", settings}};
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
