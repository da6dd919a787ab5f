#include "Commands.hpp"
#include "Isolated.hpp"
#include "Output.hpp"
#include "Suggest.hpp"
#include "Validation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>

namespace clustersim {
namespace {

double median(std::vector<double> v)
{
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

Json summary(const std::vector<double>& abs_errors)
{
  double mx = abs_errors.empty() ? 0 : *std::max_element(abs_errors.begin(), abs_errors.end());
  return Json{{"count", abs_errors.size()}, {"median_abs_error", median(abs_errors)}, {"max_abs_error", mx}};
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
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("validate", "Predict published training runs from their configuration and "
                                                 "report the error per case, overall and per source");
  cmd->add_option("files", opt->files, "validation files (schema: experiments/validation/README.md)")->required();
  cmd->add_flag("--json", opt->json, "print JSON");
  cmd->add_option("--csv", opt->csv, "also write the per-case table as CSV");
  cmd->add_option("--jobs", opt->jobs, "simulations in parallel (default: all cores)");
  cmd->add_option("--case", opt->only, "print the full report (breakdown, memory) of one case");
  cmd->callback([opt, &action] {
    action = [opt] {
      Catalog catalog = Catalog::open();
      std::vector<ValidationCase> cases;
      for (const auto& f : opt->files) {
        auto more = load_validation_cases(f, catalog);
        for (auto& c : more) {
          for (const auto& prev : cases)
            if (prev.id == c.id)
              throw ConfigError(SourceLocation{f, 0, 0}, "case id '" + c.id + "' also appears in " + prev.file,
                                "ids unique across the files given");
          cases.push_back(std::move(c));
        }
      }
      if (!opt->only.empty()) {
        std::vector<std::string> ids;
        for (const auto& c : cases) {
          ids.push_back(c.id);
          if (c.id == opt->only) {
            RunMetrics m = simulate(c.experiment, catalog);
            double p = predicted_metric(c, m);
            std::cout << format_report(m);
            std::printf("\n  %s: measured %.4g, predicted %.4g, error %+.1f %%\n", c.metric.c_str(), c.measured, p,
                        100 * (p - c.measured) / c.measured);
            return 0;
          }
        }
        throw ConfigError(command_line("--case"), unknown_name("case", opt->only, ids), join(ids));
      }
      std::vector<std::function<std::string()>> tasks;
      for (const auto& c : cases)
        tasks.push_back([&c, &catalog] { return to_json(simulate(c.experiment, catalog)).dump(); });
      auto results = run_isolated_all(tasks, opt->jobs > 0 ? opt->jobs : available_cores());

      Json rows = Json::array();
      std::vector<double> all;
      std::map<std::string, std::vector<double>> by_source;
      std::ostringstream table;
      char buf[512];
      std::snprintf(buf, sizeof buf, "%-44s %-22s %10s %10s %8s  %s\n", "case", "metric", "measured", "predicted",
                    "error", "status");
      table << buf;
      for (std::size_t i = 0; i < cases.size(); ++i) {
        const ValidationCase& c = cases[i];
        Json row{{"id", c.id},
                 {"metric", c.metric + (c.metric == "tflops_per_gpu" || c.metric == "mfu" ? " (" + c.flops + ")" : "")},
                 {"measured", c.measured}};
        std::string status = "ok";
        double predicted = 0;
        double error = 0;
        if (results[i].rfind("ERROR: ", 0) == 0) {
          status = "error: " + results[i].substr(7);
          row["predicted"] = nullptr;
          row["error"] = nullptr;
        } else {
          RunMetrics m = metrics_from_json(Json::parse(results[i]));
          predicted = predicted_metric(c, m);
          error = (predicted - c.measured) / c.measured;
          if (!m.memory.fits)
            status = "oom";
          row["predicted"] = predicted;
          row["error"] = error;
          all.push_back(std::fabs(error));
          by_source[case_source(c.id)].push_back(std::fabs(error));
        }
        row["status"] = status;
        rows.push_back(row);
        std::snprintf(buf, sizeof buf, "%-44s %-22s %10.4g %10.4g %+7.1f%%  %s\n", c.id.c_str(),
                      row["metric"].get<std::string>().c_str(), c.measured, predicted, 100 * error, status.c_str());
        table << buf;
      }
      Json sum = summary(all);
      Json sources = Json::object();
      for (const auto& [s, errs] : by_source)
        sources[s] = summary(errs);
      sum["by_source"] = sources;
      std::size_t misses = 0;
      for (const auto& r : rows)
        misses += r["status"] != "ok";
      sum["misses"] = misses;
      table << "\n";
      std::snprintf(buf, sizeof buf, "%-30s %6s %12s %12s\n", "source", "cases", "median |err|", "max |err|");
      table << buf;
      for (const auto& [s, j] : sources.items()) {
        std::snprintf(buf, sizeof buf, "%-30s %6zu %11.1f%% %11.1f%%\n", s.c_str(), j["count"].get<std::size_t>(),
                      100 * j["median_abs_error"].get<double>(), 100 * j["max_abs_error"].get<double>());
        table << buf;
      }
      std::snprintf(buf, sizeof buf, "%-30s %6zu %11.1f%% %11.1f%%   (%zu misses: OOM or errors)\n", "all",
                    sum["count"].get<std::size_t>(), 100 * sum["median_abs_error"].get<double>(),
                    100 * sum["max_abs_error"].get<double>(), misses);
      table << buf;
      if (!opt->csv.empty()) {
        std::ostringstream csv;
        csv << "id,metric,measured,predicted,error,status\n";
        for (const auto& r : rows) {
          csv << r["id"].get<std::string>() << "," << r["metric"].get<std::string>() << "," << r["measured"].dump()
              << "," << (r["predicted"].is_null() ? "" : r["predicted"].dump()) << ","
              << (r["error"].is_null() ? "" : r["error"].dump()) << "," << r["status"].get<std::string>() << "\n";
        }
        OutputSet out;
        out.add(opt->csv, csv.str());
        out.commit();
      }
      Json j{{"cases", rows}, {"summary", sum}};
      std::cout << (opt->json ? j.dump(2) + "\n" : table.str());
      return 0;
    };
  });
}

} // namespace clustersim
