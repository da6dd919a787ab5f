#include "sim/app/Arguments.hpp"
#include "sim/app/Commands.hpp"
#include "sim/app/Output.hpp"
#include "sim/app/Plot.hpp"
#include "sim/app/Report.hpp"
#include "sim/app/Slurm.hpp"
#include "sim/study/Isolated.hpp"
#include "sim/study/Simulation.hpp"
#include "sim/study/Sweep.hpp"
#include "topology/config/Suggest.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <unistd.h>

namespace clustersim {
namespace {

int run_sweep_command(const YamlNode& doc, const SweepSpec& sweep, const std::string& out, const std::string& shard,
                      int jobs, bool full, const std::string& trace, bool json)
{
  if (!trace.empty())
    throw ConfigError(command_line("--trace"), "a sweep has no single step to trace",
                      "--trace with a plain experiment");
  SweepOptions o;
  if (!shard.empty())
    std::tie(o.shard, o.shards) = parse_shard(shard);
  o.jobs = jobs;
  o.mode = full ? "full" : "";
  std::vector<PlotSpec> plots;
  for (auto& [k, v] : doc.entries())
    if (k.as_string() == "plot")
      plots = parse_plots(v);
  check_plot_columns(plots, sweep_columns(sweep)); // a typo costs nothing, not the whole sweep
  if (!out.empty())
    check_directory(out, "--out");
  Catalog catalog = Catalog::open();
  auto t0 = std::chrono::steady_clock::now();
  const bool tty = ::isatty(2) != 0;
  o.progress = [&, tty](std::size_t done, std::size_t total) {
    if (!tty)
      return; // a log file gets the summary lines only
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double eta = elapsed / static_cast<double>(done) * static_cast<double>(total - done);
    std::fprintf(stderr, "\rsweep: %zu/%zu points, %.0f s elapsed, ETA %.0f s   ", done, total, elapsed, eta);
    if (done == total)
      std::fprintf(stderr, "\n");
    std::fflush(stderr);
  };
  SweepResult result = run_sweep(doc, sweep, catalog, o);
  if (!tty)
    std::fprintf(stderr, "sweep: %zu/%zu points, %.0f s\n", result.rows.size(), result.rows.size(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  if (result.errors > 0)
    std::fprintf(stderr, "sweep: %zu point(s) failed; their rows say why (status error)\n", result.errors);
  std::string csv = rows_to_csv(result.rows);
  if (out.empty()) {
    std::cout << (json ? rows_to_jsonl(result.rows) : csv);
    return 0;
  }
  OutputSet files;
  add_result_files(files, out, result.name, result.rows, sweep.points);
  std::size_t figures = 0;
  if (o.shards == 1)
    for (auto& [file, contents] : draw_plots(plots, csv, out, result.name)) {
      files.add(file, contents, "--out");
      ++figures;
    }
  files.commit();
  std::fprintf(stderr, "wrote %s/results.csv, results.json and results.jsonl (%zu rows)", out.c_str(),
               result.rows.size());
  if (figures > 0)
    std::fprintf(stderr, " and %zu figure files", figures);
  std::fprintf(stderr, "\n");
  return 0;
}

/// --slurm's options given without --slurm, or with flags it replaces, are refused.
template <class Options>
void check_slurm_flags(const Options& o)
{
  if (o.slurm) {
    if (!o.shard.empty())
      throw ConfigError(command_line("--shard"), "--slurm assigns the shards itself", "--slurm or --shard, not both");
    if (!o.trace.empty())
      throw ConfigError(command_line("--trace"), "a sweep has no single step to trace",
                        "--trace with a plain experiment");
    return;
  }
  const char* only_slurm = o.s.array_size_given ? "--array-size"
                           : !o.s.partition.empty() ? "--partition"
                           : !o.s.time.empty()      ? "--time"
                           : !o.s.account.empty()   ? "--account"
                           : !o.s.qos.empty()       ? "--qos"
                           : !o.s.sbatch_args.empty() ? "--sbatch-arg"
                           : o.s.cpus_per_task != 1 ? "--cpus-per-task"
                           : o.s.dry_run            ? "--dry-run"
                           : o.s.wait               ? "--wait"
                                                    : nullptr;
  if (only_slurm)
    throw ConfigError(command_line(only_slurm), std::string(only_slurm) + " applies to --slurm submissions",
                      "--slurm --out DIR " + std::string(only_slurm) + " ...");
}

/// The trace's filters from --trace-ranks ("0-7,64"), --trace-streams ("compute,pp") and
/// --trace-micro-batches ("0-1").
TraceRequest trace_request(const std::string& trace, const std::string& ranks, const std::string& streams,
                           const std::string& micro_batches, const ExperimentSpec& e)
{
  TraceRequest r;
  for (const auto& [flag, text] : {std::pair<const char*, const std::string*>{"--trace-ranks", &ranks},
                                   {"--trace-streams", &streams},
                                   {"--trace-micro-batches", &micro_batches}})
    if (!text->empty() && trace.empty())
      throw ConfigError(command_line(flag), std::string(flag) + " without --trace",
                        std::string("--trace FILE.json ") + flag + " ...");
  if (!ranks.empty())
    r.ranks = number_set(ranks, e.gpus, "--trace-ranks", "GPU", "GPUs");
  if (!micro_batches.empty())
    r.micro_batches = number_set(micro_batches, e.training.micro_batches(), "--trace-micro-batches", "micro-batch", "micro-batches");
  if (!streams.empty()) {
    r.streams = 0;
    std::vector<std::string> names{"pp"};
    for (int s = 0; s < kStreamCount; ++s)
      names.push_back(to_string(static_cast<Stream>(s)));
    for (const std::string& item : split(streams, ',')) {
      std::uint32_t bits = 0;
      for (int s = 0; s < kStreamCount; ++s) {
        const std::string name = to_string(static_cast<Stream>(s));
        if (item == name || (item == "pp" && name.compare(0, 3, "pp_") == 0))
          bits |= 1u << s;
      }
      if (bits == 0)
        throw ConfigError(command_line("--trace-streams"), unknown_name("stream", item, names), join(names));
      r.streams |= bits;
    }
  }
  return r;
}

/// The flags of `run`.
struct RunOptions {
  std::string experiment;
  std::vector<std::string> settings; ///< --set KEY=VALUE
  bool json = false;
  bool full = false;
  std::string out;
  std::string shard;
  int jobs = 0;
  std::string trace;
  std::string trace_ranks;
  std::string trace_streams;
  std::string trace_micro_batches;
  bool kernels = false;
  bool allow_oom = false;
  bool strict = false;
  bool slurm = false;
  SlurmOptions s;
};

/// One experiment without a sweep: simulate, write the report and the trace, exit 3 when it
/// does not fit (unless --allow-oom).
int run_single(const RunOptions& o, const YamlNode& doc)
{
  Catalog catalog = Catalog::open();
  ExperimentSpec e = parse_experiment(doc, catalog);
  if (o.full)
    e.mode = "full";
  // the files it will write, checked before it runs (contents come after)
  OutputSet planned;
  if (!o.out.empty()) {
    check_directory(o.out, "--out");
    planned.add(o.out + "/report.json", "", "--out");
    planned.add(o.out + "/report.txt", "", "--out");
  }
  if (!o.trace.empty())
    planned.add(o.trace, "", "--trace");
  planned.check();
  for (const ConfigWarning& w : experiment_warnings(e)) {
    if (o.strict)
      throw ConfigError(w.where, w.what + " (--strict)", w.valid.empty() ? "a setting that counts" : w.valid);
    std::fprintf(stderr, "%s\n", w.line().c_str());
  }
  TraceRequest trace = trace_request(o.trace, o.trace_ranks, o.trace_streams, o.trace_micro_batches, e);
  RunMetrics m = run_experiment(e, catalog, o.trace.empty() ? nullptr : &trace);
  std::string json = to_json(m).dump(2) + "\n";
  std::string text = format_report(m) + (o.kernels ? format_kernels(e) : std::string());
  OutputSet out;
  if (!o.out.empty()) {
    out.add(o.out + "/report.json", json, "--out");
    out.add(o.out + "/report.txt", text, "--out");
  }
  if (!o.trace.empty())
    out.add(o.trace, trace.json, "--trace");
  out.commit();
  std::cout << (o.json ? json : text);
  if (!m.memory.fits && !o.allow_oom) {
    std::fflush(stdout);
    std::fprintf(stderr, "clustersim: %s does not fit in GPU memory: %s (exit 3; --allow-oom exits 0)\n",
                 e.name.c_str(), describe_oom(m.memory).c_str());
    return kExitOutOfMemory;
  }
  return 0;
}

} // namespace

void add_run_command(CLI::App& app, Action& action)
{
  auto opt = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Simulate one training step of an experiment and report step time, MFU, "
                                            "scaling efficiency, the step breakdown and memory per GPU; an experiment "
                                            "with a sweep: section runs every point");
  cmd->add_option("experiment", opt->experiment, "experiment YAML file (-: standard input)")->required();
  add_settings_option(*cmd, opt->settings);
  cmd->add_flag("--json", opt->json, "print the report as JSON (a sweep without --out: one JSON row per line)");
  cmd->add_option("--out", opt->out, "write DIR/report.json and report.txt (sweeps: results.csv, results.json and results.jsonl)");
  cmd->add_flag("--full", opt->full, "simulate every rank even where folding replicas would be exact");
  cmd->add_option("--shard", opt->shard, "sweeps: run the points with index % N == I (I/N)");
  cmd->add_option("--jobs", opt->jobs, "sweeps: simulations in parallel (default: all cores)");
  cmd->add_option("--trace", opt->trace, "write a Chrome/Perfetto trace of the step to FILE.json");
  cmd->add_option("--trace-ranks", opt->trace_ranks, "--trace: only these GPUs, e.g. 0-7,64 (default: every one simulated)");
  cmd->add_option("--trace-streams", opt->trace_streams,
                  "--trace: only these streams, e.g. compute,pp (default: all; pp is the four pipeline streams)");
  cmd->add_option("--trace-micro-batches", opt->trace_micro_batches,
                  "--trace: only the tasks of these micro-batches, e.g. 0-1 (per pipeline; default: all, with the "
                  "step's other tasks)");
  cmd->add_flag("--kernels", opt->kernels, "also print the priced kernels of one layer (text report)");
  cmd->add_flag("--allow-oom", opt->allow_oom,
                "exit 0 when the step does not fit in GPU memory (default: exit 3, after the report)");
  cmd->add_flag("--strict", opt->strict,
                "a warning (an implausible figure, a setting with no effect) is an error: exit 2, nothing run");
  cmd->add_flag("--slurm", opt->slurm,
                "sweeps: submit the shards as a Slurm job array into DIR/shards/I and a job that merges them "
                "into DIR (needs --out)");
  auto* array = cmd->add_option("--array-size", opt->s.array_size, "--slurm: shards (default: min(points, 100))");
  cmd->add_option("--partition", opt->s.partition, "--slurm: the Slurm partition");
  cmd->add_option("--time", opt->s.time, "--slurm: time limit per task (Slurm's format, e.g. 2:00:00)");
  cmd->add_option("--account", opt->s.account, "--slurm: the Slurm account to charge");
  cmd->add_option("--qos", opt->s.qos, "--slurm: the Slurm quality of service");
  cmd->add_option("--sbatch-arg", opt->s.sbatch_args,
                  "--slurm: one more sbatch option for every script, e.g. --sbatch-arg=--mem=16G (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--cpus-per-task", opt->s.cpus_per_task, "--slurm: CPUs per task, the sweep's --jobs in each");
  cmd->add_flag("--dry-run", opt->s.dry_run, "--slurm: print the scripts and sbatch commands; submit nothing");
  cmd->add_flag("--wait", opt->s.wait, "--slurm: wait for the jobs; exit 1 naming the shards that failed");
  cmd->callback([opt, array, &action] {
    opt->s.array_size_given = array->count() > 0;
    action = [opt] {
      YamlNode doc = experiment_document(opt->experiment, opt->settings);
      check_slurm_flags(*opt);
      auto sweep = parse_sweep(doc);
      if (opt->slurm) {
        if (!opt->settings.empty() || opt->experiment == "-")
          throw ConfigError(command_line(opt->settings.empty() ? "-" : "--set"),
                            "--slurm's tasks each read the experiment from its file, without --set or standard input",
                            "--slurm with the settings written into the experiment file");
        if (!sweep)
          throw ConfigError(command_line("--slurm"), "'" + opt->experiment + "' has no sweep to spread over tasks",
                            "--slurm with an experiment that has a sweep: section");
        opt->s.experiment = opt->experiment;
        opt->s.out = opt->out;
        opt->s.full = opt->full;
        return submit_slurm(doc, *sweep, opt->s);
      }
      if (sweep)
        return run_sweep_command(doc, *sweep, opt->out, opt->shard, opt->jobs, opt->full, opt->trace, opt->json);
      if (!opt->shard.empty())
        throw ConfigError(command_line("--shard"), "'" + opt->experiment + "' has no sweep to shard",
                          "--shard with an experiment that has a sweep: section");
      return run_single(*opt, doc);
    };
  });
}

void add_merge_command(CLI::App& app, Action& action)
{
  struct Options {
    std::vector<std::string> dirs;
    std::string out;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("merge", "Join the results of sweep shards into one results.csv / results.json / results.jsonl, "
                                              "identical to an unsharded run");
  cmd->add_option("dirs", opt->dirs, "shard output directories")->required();
  cmd->add_option("--out", opt->out, "output directory")->required();
  cmd->callback([opt, &action] {
    action = [opt] {
      check_directory(opt->out, "--out");
      std::vector<ShardResult> shards;
      for (const auto& dir : opt->dirs) {
        recover_outputs(dir); // a shard's publish cut short is finished before it is read
        std::string file = dir + "/results.json";
        shards.push_back(
            {file, rows_from_json(read_input_file(file, kMaxResultsBytes, "a directory written by run --out"), file)});
      }
      const SweepResult merged = merge_shards(shards, command_line("dirs"));
      OutputSet files;
      add_result_files(files, opt->out, merged.name, merged.rows, merged.points);
      files.commit();
      std::fprintf(stderr, "merged %zu rows into %s\n", merged.rows.size(), opt->out.c_str());
      return 0;
    };
  });
}

} // namespace clustersim

namespace clustersim {

void add_plot_command(CLI::App& app, Action& action)
{
  struct Options {
    std::string csv;
    PlotSpec spec;
    std::string out;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("plot", "Draw a figure (PNG and SVG, with gnuplot) from a results.csv");
  cmd->add_option("results", opt->csv, "results.csv of a sweep")->required();
  cmd->add_option("--kind", opt->spec.kind, join(plot_kinds(), " | "));
  cmd->add_option("--x", opt->spec.x, "x column (default: gpus for scaling, the layout for bars)");
  cmd->add_option("--y", opt->spec.y, "y column (line plots)");
  cmd->add_option("--series", opt->spec.series, "column whose values make separate lines");
  cmd->add_option("--title", opt->spec.title, "figure title");
  cmd->add_option("--labels", opt->spec.labels, "columns naming each bar (bar kinds), e.g. --labels model gpus");
  cmd->add_flag("--log-y", opt->spec.log_y, "logarithmic y axis");
  cmd->add_option("--out", opt->out, "output directory (default: the CSV's)");
  cmd->callback([opt, &action] {
    action = [opt] {
      if (const PlotProblem bad = check_plot_kind(opt->spec, true); !bad.what.empty())
        throw ConfigError(command_line("--kind"), bad.what, bad.valid);
      CsvTable t =
          parse_csv(read_input_file(opt->csv, kMaxResultsBytes, "a results.csv written by clustersim"), opt->csv);
      PlotSpec spec = opt->spec;
      if (spec.file.empty())
        spec.file = spec.kind;
      std::string out = opt->out.empty() ? directory_of(opt->csv) : opt->out;
      OutputSet files;
      for (auto& [f, bytes] : draw(t, spec, out))
        files.add(f, bytes, "--out");
      files.commit();
      std::fprintf(stderr, "wrote %s/%s.png and %s.svg\n", out.c_str(), spec.file.c_str(), spec.file.c_str());
      return 0;
    };
  });
}

} // namespace clustersim
