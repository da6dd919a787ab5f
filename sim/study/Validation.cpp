#include "sim/study/Validation.hpp"

#include "sim/study/Isolated.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <regex>

namespace clustersim {

const Section& validation_section()
{
  using K = KeySpec;
  static const Section s{"validation",
                         "a file of published runs (experiments/validation/README.md)",
                         {K::list("cases", "the runs, each a case").must()}};
  return s;
}

const Section& accuracy_section()
{
  using K = KeySpec;
  static const Section s{"accuracy",
                         "the validated error of the simulator (experiments/validation/accuracy.yaml)",
                         {K::section("dense", "accuracy.kind", "dense models").must(),
                          K::section("moe", "accuracy.kind", "mixture-of-experts models").must()}};
  return s;
}

const Section& accuracy_kind_section()
{
  using K = KeySpec;
  static const Section s{"accuracy.kind",
                         "the published runs of one kind of model",
                         {K::integer("cases", 0, 1, 1000000, "published runs pooled").must(),
                          K::number("median_abs_error", 0, 0, 100, "median |predicted - measured| / measured").must(),
                          K::list("sets", "the validation sets they come from").must()}};
  return s;
}

ValidatedError validated_error(const std::string& path, bool moe)
{
  SectionReader top(YamlNode::load_file(path), accuracy_section());
  std::vector<ValidatedError> kinds;
  for (const char* name : {"dense", "moe"}) {
    SectionReader kind(top.require(name), accuracy_kind_section());
    ValidatedError e;
    e.kind = name;
    e.cases = kind.integer("cases");
    e.median_abs_error = kind.number("median_abs_error");
    for (const auto& item : kind.require("sets").items())
      e.sets.push_back(item.as_string());
    kind.finish();
    kinds.push_back(e);
  }
  top.finish();
  return kinds[moe ? 1 : 0];
}

const Section& case_section()
{
  using K = KeySpec;
  static const Section s{"case",
                         "one published run: its configuration and what was measured",
                         {
                             K::string("id", "", "unique, [A-Za-z0-9_.-]; the part before '_' names the source")
                                 .must(),
                             K::string("source", "", "the publication"),
                             K::value("model", "as in an experiment").must(),
                             K::section("cluster", "cluster", "as in an experiment").must(),
                             K::section("training", "training", "as in an experiment").must(),
                             K::section("measured", "measured", "the published figure").must(),
                             K::list("assumed", "fields the source does not state"),
                             K::string("notes", "", "free text"),
                         }};
  return s;
}

const Section& measured_section()
{
  using K = KeySpec;
  static const Section s{
      "measured",
      "the published figure a case is scored on",
      {
          K::choice("metric", "", {"tflops_per_gpu", "mfu", "step_time_s", "tokens_per_s_per_gpu"},
                    "what was measured (mfu in percent)")
              .must(),
          K::number("value", 0, 1e-12, 1e12, "the published value").must(),
          K::choice("flops", "model", {"model", "hardware"},
                    "for tflops_per_gpu and mfu: model FLOPs (no recompute) or hardware FLOPs (with)"),
      }};
  return s;
}

std::string case_source(const std::string& id)
{
  auto p = id.find('_');
  return p == std::string::npos ? id : id.substr(0, p);
}

namespace {

/// Bounds a published value must respect for its metric (beyond them it is a typo).
void check_measured(const YamlNode& value, const std::string& metric, double v)
{
  char text[64];
  std::snprintf(text, sizeof text, "%g", v);
  if (metric == "mfu" && v > 100)
    value.fail(std::string(text) + " % is not an MFU", "a percentage, 0 < mfu <= 100");
  if (metric == "tflops_per_gpu" && v > 1e5)
    value.fail(std::string(text) + " TFLOP/s per GPU is beyond any GPU", "TFLOP/s per GPU, at most 1e5");
}

ValidationCase read_case(const YamlNode& item, const std::string& path, const Catalog& catalog,
                         const std::vector<ValidationCase>& before)
{
  static const std::regex id_re("[A-Za-z0-9_.-]+");
  SectionReader m(item, case_section());
  ValidationCase c;
  c.file = path;
  YamlNode id = m.require("id");
  c.id = id.as_string();
  if (!std::regex_match(c.id, id_re))
    id.fail("id '" + c.id + "' has characters outside [A-Za-z0-9_.-]", "letters, digits, '_', '.', '-'");
  for (const auto& prev : before)
    if (prev.id == c.id)
      id.fail("duplicate case id '" + c.id + "'", "unique ids");
  c.source = m.string("source");
  SectionReader meas(m.require("measured"), measured_section());
  c.metric = meas.choice("metric");
  c.measured = meas.number("value");
  check_measured(meas.require("value"), c.metric, c.measured);
  c.flops = meas.choice("flops");
  meas.finish();
  m.find("assumed");
  m.find("notes");
  c.experiment.name = c.id;
  c.experiment.file = path;
  try {
    read_case_sections(m, catalog, c.experiment);
    m.finish();
  } catch (const ConfigError& e) {
    c.build_error = e.what();
  }
  return c;
}

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

std::vector<ValidationCase> load_validation_cases(const std::string& path, const Catalog& catalog)
{
  return parse_validation_cases(YamlNode::load_file(path), catalog);
}

std::vector<ValidationCase> parse_validation_cases(const YamlNode& root, const Catalog& catalog)
{
  const std::string& path = root.file();
  SectionReader top(root, validation_section());
  YamlNode cases = top.require("cases");
  top.finish();
  std::vector<ValidationCase> out;
  for (const auto& item : cases.items())
    out.push_back(read_case(item, path, catalog, out));
  return out;
}

double predicted_metric(const ValidationCase& c, const RunMetrics& m)
{
  if (c.metric == "tflops_per_gpu")
    return c.flops == "hardware" ? m.tflops_per_gpu_hardware : m.tflops_per_gpu_model;
  if (c.metric == "mfu")
    return 100 * (c.flops == "hardware" ? m.hfu : m.mfu);
  if (c.metric == "step_time_s")
    return m.step_time_s;
  return m.tokens_per_s_per_gpu;
}

ValidationReport run_validation(const std::vector<ValidationCase>& cases, const Catalog& catalog, int jobs)
{
  std::vector<std::function<std::string()>> tasks;
  std::vector<std::size_t> ran;
  for (std::size_t i = 0; i < cases.size(); ++i)
    if (cases[i].build_error.empty()) {
      ran.push_back(i);
      tasks.push_back([&cases, i, &catalog] { return to_json(simulate(cases[i].experiment, catalog)).dump(); });
    }
  auto results = run_isolated_all(tasks, jobs > 0 ? jobs : available_cores());
  std::vector<std::string> outcome(cases.size());
  for (std::size_t k = 0; k < ran.size(); ++k)
    outcome[ran[k]] = results[k];

  ValidationReport report;
  std::vector<double> all;
  std::map<std::string, std::vector<double>> by_source;
  std::size_t misses = 0;
  std::size_t unbuilt = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const ValidationCase& c = cases[i];
    Json row{{"id", c.id},
             {"metric", c.metric + (c.metric == "tflops_per_gpu" || c.metric == "mfu" ? " (" + c.flops + ")" : "")},
             {"measured", c.measured}};
    std::string status = "ok";
    if (!c.build_error.empty() || outcome[i].rfind("ERROR: ", 0) == 0) {
      status = c.build_error.empty() ? "error: " + outcome[i].substr(7) : "cannot build: " + c.build_error;
      unbuilt += c.build_error.empty() ? 0 : 1;
      row["predicted"] = nullptr;
      row["error"] = nullptr;
      row["memory_gib"] = nullptr;
    } else {
      RunMetrics m = metrics_from_json(Json::parse(outcome[i]));
      const double predicted = predicted_metric(c, m);
      const double error = (predicted - c.measured) / c.measured;
      if (!m.memory.fits)
        status = "oom";
      row["predicted"] = predicted;
      row["error"] = error;
      row["memory_gib"] = m.memory.peak / (1024.0 * 1024.0 * 1024.0);
      all.push_back(std::fabs(error));
      by_source[case_source(c.id)].push_back(std::fabs(error));
    }
    misses += status == "ok" ? 0 : 1;
    row["status"] = status;
    report.rows.push_back(row);
  }
  report.summary = summary(all);
  Json sources = Json::object();
  for (const auto& [s, errs] : by_source)
    sources[s] = summary(errs);
  report.summary["by_source"] = sources;
  report.summary["misses"] = misses;
  if (unbuilt > 0)
    report.summary["cannot_build"] = unbuilt;
  return report;
}

} // namespace clustersim
