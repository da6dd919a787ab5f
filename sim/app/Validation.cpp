#include "Validation.hpp"

#include <regex>

namespace clustersim {

std::string case_source(const std::string& id)
{
  auto p = id.find('_');
  return p == std::string::npos ? id : id.substr(0, p);
}

std::vector<ValidationCase> load_validation_cases(const std::string& path, const Catalog& catalog)
{
  YamlNode root = YamlNode::load_file(path);
  YamlMap top(root, "validation file");
  YamlNode cases = top.require("cases");
  top.finish();
  std::vector<ValidationCase> out;
  static const std::regex id_re("[A-Za-z0-9_.-]+");
  for (const auto& item : cases.items()) {
    YamlMap m(item, "case");
    ValidationCase c;
    c.file = path;
    YamlNode id = m.require("id");
    c.id = id.as_string();
    if (!std::regex_match(c.id, id_re))
      id.fail("id '" + c.id + "' has characters outside [A-Za-z0-9_.-]", "letters, digits, '_', '.', '-'");
    for (const auto& prev : out)
      if (prev.id == c.id)
        id.fail("duplicate case id '" + c.id + "'", "unique ids");
    c.source = m.get_string("source", "");
    c.experiment.name = c.id;
    c.experiment.file = path;
    read_case_sections(m, catalog, c.experiment);
    YamlMap meas(m.require("measured"), "measured");
    c.metric =
        meas.require("metric").as_choice({"tflops_per_gpu", "mfu", "step_time_s", "tokens_per_s_per_gpu"}, "metric");
    c.measured = meas.require("value").as_number(1e-12, 1e12);
    c.flops = meas.get_choice("flops", "model", {"model", "hardware"});
    meas.finish();
    m.allow({"assumed", "notes"});
    m.finish();
    out.push_back(std::move(c));
  }
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

} // namespace clustersim
