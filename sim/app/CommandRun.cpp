#include "Commands.hpp"
#include "Isolated.hpp"
#include "Output.hpp"
#include "Plot.hpp"
#include "Simulation.hpp"
#include "Suggest.hpp"
#include "Sweep.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <unistd.h>

namespace clustersim {
namespace {

/// Structural mistakes in a sweep's base document are input errors, not invalid points.
bool structural(const ConfigError& e)
{
  const std::string& p = e.problem();
  for (const char* s : {"unknown key", "YAML syntax", "missing key", "cannot open", "duplicate key",
                        "must be a mapping", "expected a", "unknown platform", "unknown model preset"})
    if (p.find(s) != std::string::npos)
      return true;
  return false;
}

int run_sweep(const std::string& path, const YamlNode& doc, const SweepSpec& sweep, const std::string& out,
              const std::string& shard, int jobs, bool full, const std::string& trace)
{
  if (!trace.empty())
    throw ConfigError(command_line("--trace"), "a sweep has no single step to trace",
                      "--trace with a plain experiment");
  Catalog catalog = Catalog::open();
  std::vector<SweepPoint> points = expand(sweep);
  int shard_i = 0, shard_n = 1;
  if (!shard.empty())
    std::tie(shard_i, shard_n) = parse_shard(shard);
  std::vector<SweepPoint> mine;
  for (const auto& p : points)
    if (static_cast<int>(p.index % static_cast<std::size_t>(shard_n)) == shard_i)
      mine.push_back(p);
  // Parse every point here first: a mistake in the document (not in a point's values) is
  // reported once, as bad input, before anything runs.
  std::string name = path;
  for (auto& [k, v] : doc.entries()) {
    if (k.as_string() == "name")
      name = v.as_string();
    if (k.as_string() == "plot")
      parse_plots(v);
  }
  for (const auto& p : mine) {
    try {
      parse_experiment(apply_point(doc, sweep, p), catalog);
    } catch (const ConfigError& e) {
      if (structural(e))
        throw;
    }
  }
  std::vector<std::function<std::string()>> tasks;
  for (const auto& p : mine)
    tasks.push_back([&doc, &sweep, p, &catalog, full] {
      YamlNode point_doc = doc;
      if (full) {
        YAML::Node copy = YAML::Clone(doc.raw());
        copy["simulation"]["mode"] = "full";
        point_doc = YamlNode(copy, std::make_shared<const std::string>(doc.file()));
      }
      return run_point(point_doc, sweep, p, catalog).dump();
    });
  auto t0 = std::chrono::steady_clock::now();
  std::size_t done = 0;
  auto progress = [&](std::size_t) {
    ++done;
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double eta = elapsed / static_cast<double>(done) * static_cast<double>(tasks.size() - done);
    std::fprintf(stderr, "\rsweep: %zu/%zu points, %.0f s elapsed, ETA %.0f s   ", done, tasks.size(), elapsed, eta);
    if (done == tasks.size())
      std::fprintf(stderr, "\n");
    std::fflush(stderr);
  };
  auto results = run_isolated_all(tasks, jobs > 0 ? jobs : available_cores(), progress);
  std::vector<Json> rows;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (results[i].rfind("ERROR: ", 0) == 0)
      throw std::runtime_error("sweep point " + std::to_string(mine[i].index) + ": " + results[i].substr(7));
    rows.push_back(Json::parse(results[i]));
  }
  std::string csv = rows_to_csv(rows);
  if (out.empty()) {
    std::cout << csv;
    return 0;
  }
  OutputSet files;
  files.add(out + "/results.csv", csv);
  files.add(out + "/results.json", rows_to_json(name, rows));
  std::size_t figures = 0;
  if (shard_n == 1)
    for (auto& [file, contents] : plots_from_experiment(doc, csv, out)) {
      files.add(file, contents);
      ++figures;
    }
  files.commit();
  std::fprintf(stderr, "wrote %s/results.csv and %s/results.json (%zu rows)", out.c_str(), out.c_str(), rows.size());
  if (figures > 0)
    std::fprintf(stderr, " and %zu figure files", figures);
  std::fprintf(stderr, "\n");
  return 0;
}

} // namespace

void add_run_command(CLI::App& app, Action& action)
{
  struct Options {
    std::string experiment;
    bool json = false;
    bool full = false;
    std::string out;
    std::string shard;
    int jobs = 0;
    std::string trace;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("run", "Simulate one training step of an experiment and report step time, MFU, "
                                            "scaling efficiency, the step breakdown and memory per GPU; an experiment "
                                            "with a sweep: section runs every point");
  cmd->add_option("experiment", opt->experiment, "experiment YAML file")->required();
  cmd->add_flag("--json", opt->json, "print the report as JSON");
  cmd->add_option("--out", opt->out, "write DIR/report.json and report.txt (sweeps: results.csv and results.json)");
  cmd->add_flag("--full", opt->full, "simulate every rank even where folding replicas would be exact");
  cmd->add_option("--shard", opt->shard, "sweeps: run the points with index % N == I (I/N)");
  cmd->add_option("--jobs", opt->jobs, "sweeps: simulations in parallel (default: all cores)");
  cmd->add_option("--trace", opt->trace, "write a Chrome/Perfetto trace of the step to FILE.json");
  cmd->callback([opt, &action] {
    action = [opt] {
      YamlNode doc = YamlNode::load_file(opt->experiment);
      if (auto sweep = parse_sweep(doc))
        return run_sweep(opt->experiment, doc, *sweep, opt->out, opt->shard, opt->jobs, opt->full, opt->trace);
      if (!opt->shard.empty())
        throw ConfigError(command_line("--shard"), "'" + opt->experiment + "' has no sweep to shard",
                          "--shard with an experiment that has a sweep: section");
      Catalog catalog = Catalog::open();
      ExperimentSpec e = parse_experiment(doc, catalog);
      if (opt->full)
        e.mode = "full";
      std::string trace;
      RunMetrics m = run_experiment(e, catalog, opt->trace.empty() ? nullptr : &trace);
      std::string json = to_json(m).dump(2) + "\n";
      std::string text = format_report(m);
      OutputSet out;
      if (!opt->out.empty()) {
        out.add(opt->out + "/report.json", json);
        out.add(opt->out + "/report.txt", text);
      }
      if (!opt->trace.empty())
        out.add(opt->trace, trace);
      out.commit();
      std::cout << (opt->json ? json : text);
      return 0;
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
  CLI::App* cmd = app.add_subcommand("merge", "Join the results of sweep shards into one results.csv / results.json, "
                                              "identical to an unsharded run");
  cmd->add_option("dirs", opt->dirs, "shard output directories")->required();
  cmd->add_option("--out", opt->out, "output directory")->required();
  cmd->callback([opt, &action] {
    action = [opt] {
      std::string name;
      std::map<std::size_t, Json> rows;
      for (const auto& dir : opt->dirs) {
        std::string file = dir + "/results.json";
        std::ifstream in(file);
        if (!in)
          throw ConfigError(SourceLocation{file, 0, 0}, "cannot open file", "a directory written by run --out");
        Json j;
        try {
          j = Json::parse(in);
        } catch (const std::exception& e) {
          throw ConfigError(SourceLocation{file, 0, 0}, std::string("not a results file: ") + e.what(),
                            "results.json written by clustersim run --out");
        }
        if (!j.contains("experiment") || !j.contains("rows"))
          throw ConfigError(SourceLocation{file, 0, 0}, "not a results file",
                            "results.json written by clustersim run --out");
        if (!name.empty() && j["experiment"] != name)
          throw ConfigError(SourceLocation{file, 0, 0},
                            "rows of experiment '" + j["experiment"].get<std::string>() + "', not '" + name + "'",
                            "shards of one sweep");
        name = j["experiment"];
        for (const auto& r : j["rows"]) {
          std::size_t p = r["point"];
          if (rows.count(p))
            throw ConfigError(SourceLocation{file, 0, 0}, "point " + std::to_string(p) + " appears in two shards",
                              "disjoint shards (--shard I/N with the same N)");
          rows[p] = r;
        }
      }
      std::vector<Json> ordered;
      for (auto& [p, r] : rows)
        ordered.push_back(r);
      OutputSet files;
      files.add(opt->out + "/results.csv", rows_to_csv(ordered));
      files.add(opt->out + "/results.json", rows_to_json(name, ordered));
      files.commit();
      std::fprintf(stderr, "merged %zu rows into %s\n", ordered.size(), opt->out.c_str());
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
  cmd->add_option("--kind", opt->spec.kind, "scaling | breakdown | mfu | memory | bars | line");
  cmd->add_option("--x", opt->spec.x, "x column (default: gpus for scaling, the layout for bars)");
  cmd->add_option("--y", opt->spec.y, "y column (line plots)");
  cmd->add_option("--series", opt->spec.series, "column whose values make separate lines");
  cmd->add_option("--title", opt->spec.title, "figure title");
  cmd->add_option("--labels", opt->spec.labels, "columns naming each bar (bar kinds), e.g. --labels model gpus");
  cmd->add_flag("--log-y", opt->spec.log_y, "logarithmic y axis");
  cmd->add_option("--out", opt->out, "output directory (default: the CSV's)");
  cmd->callback([opt, &action] {
    action = [opt] {
      static const std::vector<std::string> kinds{"scaling", "breakdown", "mfu", "memory", "bars", "line"};
      if (std::find(kinds.begin(), kinds.end(), opt->spec.kind) == kinds.end())
        throw ConfigError(command_line("--kind"), unknown_name("kind", opt->spec.kind, kinds), join(kinds));
      if (opt->spec.kind == "line" && (opt->spec.x.empty() || opt->spec.y.empty()))
        throw ConfigError(command_line("--kind"), "a line plot needs --x and --y", "--x COLUMN --y COLUMN");
      if (opt->spec.kind == "bars" && opt->spec.y.empty())
        throw ConfigError(command_line("--kind"), "a bar plot needs --y", "--y COLUMN");
      std::ifstream in(opt->csv, std::ios::binary);
      if (!in)
        throw ConfigError(SourceLocation{opt->csv, 0, 0}, "cannot open file", "a results.csv written by clustersim");
      std::stringstream s;
      s << in.rdbuf();
      CsvTable t = parse_csv(s.str(), opt->csv);
      PlotSpec spec = opt->spec;
      if (spec.file.empty())
        spec.file = spec.kind;
      std::string out = opt->out.empty() ? directory_of(opt->csv) : opt->out;
      OutputSet files;
      for (auto& [f, bytes] : draw(t, spec, out))
        files.add(f, bytes);
      files.commit();
      std::fprintf(stderr, "wrote %s/%s.png and %s.svg\n", out.c_str(), spec.file.c_str(), spec.file.c_str());
      return 0;
    };
  });
}

} // namespace clustersim
