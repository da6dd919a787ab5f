#include "sim/app/Arguments.hpp"
#include "sim/app/Commands.hpp"
#include "sim/app/Output.hpp"
#include "sim/app/Report.hpp"
#include "sim/study/Isolated.hpp"
#include "sim/study/Sweep.hpp"
#include "sim/study/Validation.hpp"
#include "topology/config/Suggest.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>

namespace clustersim {
namespace {

std::string table(const ValidationReport& report)
{
  std::ostringstream table;
  char buf[512];
  std::snprintf(buf, sizeof buf, "%-44s %-22s %10s %10s %8s  %s\n", "case", "metric", "measured", "predicted", "error",
                "status");
  table << buf;
  for (const auto& row : report.rows) {
    // a case with no prediction shows none (it read +0.0 %, as if exact)
    char predicted[32] = "-", error[32] = "-";
    if (!row["predicted"].is_null())
      std::snprintf(predicted, sizeof predicted, "%.4g", row["predicted"].get<double>());
    if (!row["error"].is_null())
      std::snprintf(error, sizeof error, "%+.1f%%", 100 * row["error"].get<double>());
    // the status after the columns, whole: a long reason in the buffer cut off the row's newline
    std::snprintf(buf, sizeof buf, "%-44s %-22s %10.4g %10s %8s  ", row["id"].get<std::string>().c_str(),
                  row["metric"].get<std::string>().c_str(), row["measured"].get<double>(), predicted, error);
    table << buf << row["status"].get<std::string>() << "\n";
  }
  const Json& sum = report.summary;
  table << "\n";
  std::snprintf(buf, sizeof buf, "%-30s %6s %12s %12s\n", "source", "cases", "median |err|", "max |err|");
  table << buf;
  for (const auto& [s, j] : sum["by_source"].items()) {
    std::snprintf(buf, sizeof buf, "%-30s %6zu %11.1f%% %11.1f%%\n", s.c_str(), j["count"].get<std::size_t>(),
                  100 * j["median_abs_error"].get<double>(), 100 * j["max_abs_error"].get<double>());
    table << buf;
  }
  const std::size_t misses = sum["misses"].get<std::size_t>();
  std::snprintf(buf, sizeof buf, "%-30s %6zu %11.1f%% %11.1f%%   (%zu misses: OOM or errors)\n", "all",
                sum["count"].get<std::size_t>(), 100 * sum["median_abs_error"].get<double>(),
                100 * sum["max_abs_error"].get<double>(), misses);
  table << buf;
  if (sum.contains("cannot_build"))
    table << "  " << sum["cannot_build"].get<std::size_t>()
          << " case(s) could not be built; their rows give the reason (counted as misses)\n";
  return table.str();
}

std::string csv(const ValidationReport& report)
{
  std::ostringstream csv;
  csv << "id,metric,measured,predicted,error,memory_gib,status\n";
  for (const auto& r : report.rows) {
    std::string status = r["status"].get<std::string>();
    if (status.find_first_of(",\"") != std::string::npos) {
      std::string q = "\"";
      for (char ch : status)
        q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
      status = q + "\"";
    }
    csv << r["id"].get<std::string>() << "," << r["metric"].get<std::string>() << "," << r["measured"].dump() << ","
        << (r["predicted"].is_null() ? "" : r["predicted"].dump()) << ","
        << (r["error"].is_null() ? "" : r["error"].dump()) << ","
        << (r["memory_gib"].is_null() ? "" : r["memory_gib"].dump()) << "," << status << "\n";
  }
  return csv.str();
}

/// `validate --case ID`: the full report of one case.
int one_case(const std::vector<ValidationCase>& cases, const std::string& only, const Catalog& catalog, bool kernels)
{
  std::vector<std::string> ids;
  for (const auto& c : cases) {
    ids.push_back(c.id);
    if (c.id != only)
      continue;
    if (!c.build_error.empty())
      throw ConfigError(c.build_error);
    RunMetrics m = simulate(c.experiment, catalog);
    double p = predicted_metric(c, m);
    std::cout << format_report(m);
    if (kernels)
      std::cout << format_kernels(c.experiment);
    std::printf("\n  %s: measured %.4g, predicted %.4g, error %+.1f %%\n", c.metric.c_str(), c.measured, p,
                100 * (p - c.measured) / c.measured);
    return 0;
  }
  throw ConfigError(command_line("--case"), unknown_name("case", only, ids), join(ids));
}

} // namespace

void add_validate_command(CLI::App& app, Action& action)
{
  struct Options {
    std::vector<std::string> files;
    bool json = false;
    std::string csv;
    int jobs = 0;
    std::string only;
    bool kernels = false;
    std::string engine;
    std::vector<std::string> settings; ///< --set KEY=VALUE, on every case
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("validate", "Predict published training runs from their configuration and "
                                                 "report the error per case, overall and per source");
  cmd->add_option("files", opt->files, "validation files (schema: experiments/validation/README.md)")->required();
  cmd->add_flag("--json", opt->json, "print JSON");
  cmd->add_option("--csv", opt->csv, "also write the per-case table as CSV");
  cmd->add_option("--jobs", opt->jobs, "simulations in parallel (default: all cores)");
  cmd->add_option("--case", opt->only, "print the full report (breakdown, memory) of one case");
  cmd->add_flag("--kernels", opt->kernels, "with --case: also the priced kernels of one layer");
  cmd->add_option("--engine", opt->engine,
                  "the engine that runs every case: event (default) or simgrid (SimGrid's actors, the reference)");
  add_settings_option(*cmd, opt->settings);
  cmd->callback([opt, &action] {
    action = [opt] {
      if (!opt->csv.empty())
        check_file(opt->csv, "--csv");
      const auto& engines = engine_names();
      if (!opt->engine.empty() && std::find(engines.begin(), engines.end(), opt->engine) == engines.end())
        throw ConfigError(command_line("--engine"), unknown_name("engine", opt->engine, engines), join(engines));
      // a case holds an experiment's model, cluster and training, not its other sections
      for (const auto& s : opt->settings) {
        const std::string section = s.substr(0, s.find_first_of(".="));
        if (section != "model" && section != "cluster" && section != "training" && s.find('=') != std::string::npos)
          throw ConfigError(command_line("--set " + s), "a validation case has no '" + section + "' section",
                            "keys of model, cluster and training (--engine picks the engine)");
      }
      Catalog catalog = Catalog::open();
      std::vector<ValidationCase> cases;
      for (const auto& f : opt->files) {
        auto more = parse_validation_cases(apply_settings(YamlNode::load_file(f), opt->settings, "cases"), catalog);
        for (auto& c : more) {
          for (const auto& prev : cases)
            if (prev.id == c.id)
              throw ConfigError(SourceLocation{f, 0, 0}, "case id '" + c.id + "' also appears in " + prev.file,
                                "ids unique across the files given");
          if (!opt->engine.empty())
            c.experiment.engine = opt->engine;
          cases.push_back(std::move(c));
        }
      }
      // files of which no case can be built validate nothing: the first case's error is the answer
      if (!cases.empty() && std::all_of(cases.begin(), cases.end(), [](const ValidationCase& c) {
            return !c.build_error.empty();
          }))
        throw ConfigError(cases.front().build_error);
      if (!opt->only.empty())
        return one_case(cases, opt->only, catalog, opt->kernels);
      if (opt->kernels)
        throw ConfigError(command_line("--kernels"), "--kernels needs one case", "--case ID --kernels");
      ValidationReport report = run_validation(cases, catalog, opt->jobs);
      if (!opt->csv.empty()) {
        OutputSet out;
        out.add(opt->csv, csv(report), "--csv");
        out.commit();
      }
      Json j{{"cases", report.rows}, {"summary", report.summary}};
      std::cout << (opt->json ? j.dump(2) + "\n" : table(report));
      return 0;
    };
  });
}

} // namespace clustersim
