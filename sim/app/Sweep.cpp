#include "Sweep.hpp"

#include "Isolated.hpp"
#include "Suggest.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace clustersim {
namespace {

const std::vector<std::string>& model_keys()
{
  static const std::vector<std::string> k{
      "name", "layers", "hidden",   "heads", "kv_heads",        "ffn_hidden", "vocab", "seq_len",
      "mlp",  "norm",   "position", "bias",  "tied_embeddings", "experts",    "top_k", "preset"};
  return k;
}

const std::vector<std::string>& training_keys()
{
  static const std::vector<std::string> k{"tp",
                                          "pp",
                                          "dp",
                                          "cp",
                                          "ep",
                                          "vpp",
                                          "pipeline_schedule",
                                          "sequence_parallel",
                                          "zero",
                                          "recompute",
                                          "micro_batch",
                                          "global_batch",
                                          "precision",
                                          "flash_attention",
                                          "bucket_size",
                                          "collective_algo"};
  return k;
}

/// Checks an axis path against the experiment schema, with the axis key's position.
void check_path(const std::string& path, const YamlNode& at)
{
  std::vector<std::string> parts;
  std::stringstream s(path);
  std::string part;
  while (std::getline(s, part, '.'))
    parts.push_back(part);
  auto fail = [&](const std::string& word, const std::vector<std::string>& valid, const std::string& where) {
    at.fail(unknown_name("axis key", word, valid, where), join(valid));
  };
  static const std::vector<std::string> sections{"model", "cluster", "training", "baseline", "budget", "simulation"};
  if (parts.empty() || std::find(sections.begin(), sections.end(), parts[0]) == sections.end())
    fail(parts.empty() ? path : parts[0], sections, "the experiment");
  auto leaf = [&](std::size_t n, const std::vector<std::string>& keys, const std::string& section) {
    if (parts.size() != n + 1)
      at.fail("axis '" + path + "' does not name a scalar of " + section, section + ".<key>");
    if (std::find(keys.begin(), keys.end(), parts[n]) == keys.end())
      fail(parts[n], keys, section);
  };
  if (parts[0] == "model") {
    if (parts.size() > 1)
      leaf(1, model_keys(), "model");
  } else if (parts[0] == "cluster") {
    leaf(1, {"platform", "gpus"}, "cluster");
  } else if (parts[0] == "training") {
    if (parts.size() == 3 && parts[1] == "overlap")
      leaf(2, {"grad_reduce", "param_gather", "tp_comm"}, "training.overlap");
    else if (parts.size() == 3 && parts[1] == "state_bytes")
      leaf(2, {"weights", "grads", "optimizer"}, "training.state_bytes");
    else
      leaf(1, training_keys(), "training");
  } else if (parts[0] == "baseline") {
    leaf(1, {"gpus"}, "baseline");
  } else if (parts[0] == "budget") {
    leaf(1, {"tokens"}, "budget");
  } else {
    leaf(1, {"mode"}, "simulation");
  }
}

std::string number(double v)
{
  char buf[64];
  if (std::floor(v) == v && std::fabs(v) < 1e15)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

std::vector<std::string> axis_values(const YamlNode& v)
{
  std::vector<std::string> out;
  if (v.is_sequence()) {
    for (const auto& item : v.items())
      out.push_back(item.as_string());
  } else if (v.is_map()) {
    YamlMap m(v, "sweep range");
    double from = m.require("from").as_number(-1e18, 1e18);
    double to = m.require("to").as_number(-1e18, 1e18);
    auto step = m.find("step");
    auto factor = m.find("factor");
    m.finish();
    if (step && factor)
      v.fail("a range has either step or factor", "{from, to, step} or {from, to, factor}");
    if (factor) {
      double f = factor->as_number(1.0000001, 1e6);
      if (from <= 0)
        v.fail("a geometric range starts above 0", "from > 0 with factor");
      for (double x = from; x <= to * (1 + 1e-12); x *= f)
        out.push_back(number(x));
    } else {
      double st = step ? step->as_number(1e-12, 1e18) : 1.0;
      for (double x = from; x <= to + st * 1e-9; x += st)
        out.push_back(number(x));
    }
    if (out.empty())
      v.fail("the range is empty", "from <= to");
    if (out.size() > 100000)
      v.fail("the range has " + std::to_string(out.size()) + " values", "at most 100000");
  } else {
    out.push_back(v.as_string());
  }
  return out;
}

void set_path(YAML::Node root, const std::string& path, const std::string& value)
{
  std::vector<std::string> parts;
  std::stringstream s(path);
  std::string part;
  while (std::getline(s, part, '.'))
    parts.push_back(part);
  if (parts[0] == "model" && parts.size() > 1 && root["model"] && root["model"].IsScalar()) {
    // a preset named by a scalar: turn it into {preset: name} to set a dimension on it
    std::string preset = root["model"].Scalar();
    YAML::Node m(YAML::NodeType::Map);
    m["preset"] = preset;
    root["model"] = m;
  }
  YAML::Node node = root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    if (!node[parts[i]] || !node[parts[i]].IsMap())
      node[parts[i]] = YAML::Node(YAML::NodeType::Map);
    node.reset(node[parts[i]]);
  }
  node[parts.back()] = value;
}

std::string csv_cell(const Json& v)
{
  if (v.is_null())
    return "";
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    if (s.find_first_of(",\"\n") == std::string::npos)
      return s;
    std::string q = "\"";
    for (char c : s)
      q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  }
  if (v.is_boolean())
    return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer() || v.is_number_unsigned())
    return v.dump();
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", v.get<double>());
  return buf;
}

} // namespace

std::optional<SweepSpec> parse_sweep(const YamlNode& doc)
{
  std::optional<YamlNode> node;
  for (auto& [k, v] : doc.entries())
    if (k.as_string() == "sweep")
      node = v;
  if (!node)
    return std::nullopt;
  YamlMap m(*node, "sweep");
  SweepSpec s;
  s.zip = m.get_choice("mode", "product", {"product", "zip"}) == "zip";
  YamlNode axes = m.require("axes");
  m.finish();
  for (auto& [k, v] : axes.entries()) {
    SweepAxis a;
    a.path = k.as_string();
    check_path(a.path, k);
    for (const auto& x : s.axes)
      if (x.path == a.path)
        k.fail("axis '" + a.path + "' appears twice", "each axis once");
    a.values = axis_values(v);
    if (s.zip && !s.axes.empty() && a.values.size() != s.axes.front().values.size())
      v.fail("zipped axes need equally long lists: " + std::to_string(a.values.size()) + " values here, " +
                 std::to_string(s.axes.front().values.size()) + " for '" + s.axes.front().path + "'",
             "lists of the same length, or mode: product");
    s.axes.push_back(a);
  }
  if (s.axes.empty())
    axes.fail("a sweep needs at least one axis", "axes: {PATH: [values]}");
  return s;
}

std::vector<SweepPoint> expand(const SweepSpec& sweep)
{
  std::vector<SweepPoint> points;
  if (sweep.zip) {
    for (std::size_t i = 0; i < sweep.axes.front().values.size(); ++i) {
      SweepPoint p;
      p.index = i;
      for (const auto& a : sweep.axes)
        p.values.push_back(a.values[i]);
      points.push_back(p);
    }
    return points;
  }
  std::size_t total = 1;
  for (const auto& a : sweep.axes)
    total *= a.values.size();
  for (std::size_t i = 0; i < total; ++i) {
    SweepPoint p;
    p.index = i;
    std::size_t rest = i;
    p.values.resize(sweep.axes.size());
    // the last axis varies fastest
    for (std::size_t k = sweep.axes.size(); k-- > 0;) {
      p.values[k] = sweep.axes[k].values[rest % sweep.axes[k].values.size()];
      rest /= sweep.axes[k].values.size();
    }
    points.push_back(p);
  }
  return points;
}

YamlNode apply_point(const YamlNode& doc, const SweepSpec& sweep, const SweepPoint& point)
{
  YAML::Node copy = YAML::Clone(doc.raw());
  copy.remove("sweep");
  copy.remove("plot");
  for (std::size_t k = 0; k < sweep.axes.size(); ++k)
    set_path(copy, sweep.axes[k].path, point.values[k]);
  return YamlNode(copy, std::make_shared<const std::string>(doc.file()));
}

Json sweep_row(const SweepSpec& sweep, const SweepPoint& point, const std::string& status, const std::string& reason,
               const RunMetrics* m)
{
  Json row;
  row["point"] = point.index;
  for (std::size_t k = 0; k < sweep.axes.size(); ++k)
    row[sweep.axes[k].path] = point.values[k];
  row["status"] = status;
  row["reason"] = reason;
  auto put = [&](const char* key, double v) { row[key] = m ? Json(v) : Json(); };
  const TrainingSpec* t = m ? &m->training : nullptr;
  row["platform"] = m ? Json(m->platform) : Json();
  row["model"] = m ? Json(m->model) : Json();
  row["gpus"] = m ? Json(m->gpus) : Json();
  row["tp"] = t ? Json(t->tp) : Json();
  row["pp"] = t ? Json(t->pp) : Json();
  row["dp"] = t ? Json(t->dp) : Json();
  row["cp"] = t ? Json(t->cp) : Json();
  row["zero"] = t ? Json(t->zero) : Json();
  row["micro_batch"] = t ? Json(t->micro_batch) : Json();
  row["global_batch"] = t ? Json(t->global_batch) : Json();
  const bool ran = m && status == "ok";
  auto perf = [&](const char* key, double v) { row[key] = ran ? Json(v) : Json(); };
  perf("step_time_s", m ? m->step_time_s : 0);
  perf("mfu", m ? m->mfu : 0);
  perf("hfu", m ? m->hfu : 0);
  perf("tokens_per_s", m ? m->tokens_per_s : 0);
  perf("tokens_per_s_per_gpu", m ? m->tokens_per_s_per_gpu : 0);
  perf("tflops_per_gpu_model", m ? m->tflops_per_gpu_model : 0);
  perf("tflops_per_gpu_hardware", m ? m->tflops_per_gpu_hardware : 0);
  perf("scaling_efficiency", m ? m->scaling_efficiency : 0);
  perf("compute_s", m ? m->breakdown.compute - m->breakdown.recompute : 0);
  perf("recompute_s", m ? m->breakdown.recompute : 0);
  perf("optimizer_s", m ? m->breakdown.optimizer : 0);
  perf("exposed_tp_s", m ? m->breakdown.exposed_tp : 0);
  perf("exposed_cp_s", m ? m->breakdown.exposed_cp : 0);
  perf("exposed_pp_s", m ? m->breakdown.exposed_pp : 0);
  perf("exposed_dp_s", m ? m->breakdown.exposed_dp : 0);
  perf("bubble_s", m ? m->breakdown.bubble : 0);
  perf("time_to_train_days", m ? m->time_to_train_s / 86400 : 0);
  perf("gpu_hours", m ? m->gpu_hours : 0);
  perf("energy_mwh", m ? m->energy_mwh : 0);
  perf("cost_usd", m ? m->cost_usd : 0);
  put("budget_tokens", m ? m->budget_tokens : 0);
  put("weights_bytes", m ? m->memory.weights : 0);
  put("grads_bytes", m ? m->memory.grads : 0);
  put("optimizer_bytes", m ? m->memory.optimizer : 0);
  put("activations_bytes", m ? m->memory.activations : 0);
  put("other_memory_bytes", m ? m->memory.buffers + m->memory.reserved : 0);
  put("peak_memory_bytes", m ? m->memory.peak : 0);
  put("memory_capacity_bytes", m ? m->memory.capacity : 0);
  row["simulation_mode"] = ran ? Json(m->mode) : Json();
  return row;
}

Json run_point(const YamlNode& doc, const SweepSpec& sweep, const SweepPoint& point, const Catalog& catalog)
{
  ExperimentSpec e;
  try {
    e = parse_experiment(apply_point(doc, sweep, point), catalog);
  } catch (const ConfigError& err) {
    return sweep_row(sweep, point, "invalid", err.problem(), nullptr);
  }
  CostModel cost(e.model, e.training, e.platform.node.gpu);
  MemoryBreakdown mem = cost.peak_memory();
  if (!mem.fits) {
    RunMetrics m;
    m.platform = e.platform.name;
    m.model = e.model.name;
    m.gpus = e.gpus;
    m.training = e.training;
    m.memory = mem;
    m.budget_tokens = e.budget_tokens;
    char buf[160];
    std::snprintf(buf, sizeof buf, "out of memory: %.1f GiB > %.1f GiB per GPU (dominated by %s)",
                  mem.peak / 1073741824.0, mem.capacity / 1073741824.0, mem.dominant.c_str());
    return sweep_row(sweep, point, "oom", buf, &m);
  }
  RunMetrics m = run_experiment(e, catalog);
  return sweep_row(sweep, point, "ok", "", &m);
}

std::string rows_to_csv(const std::vector<Json>& rows)
{
  std::ostringstream o;
  if (rows.empty())
    return "";
  bool first = true;
  for (const auto& [k, v] : rows.front().items()) {
    o << (first ? "" : ",") << k;
    first = false;
  }
  o << "\n";
  for (const auto& r : rows) {
    first = true;
    for (const auto& [k, v] : r.items()) {
      o << (first ? "" : ",") << csv_cell(v);
      first = false;
    }
    o << "\n";
  }
  return o.str();
}

std::string rows_to_json(const std::string& name, const std::vector<Json>& rows)
{
  Json j;
  j["experiment"] = name;
  j["rows"] = rows;
  return j.dump(2) + "\n";
}

std::pair<int, int> parse_shard(const std::string& text)
{
  auto slash = text.find('/');
  int i = -1;
  int n = 0;
  try {
    if (slash != std::string::npos) {
      std::size_t a = 0, b = 0;
      i = std::stoi(text.substr(0, slash), &a);
      n = std::stoi(text.substr(slash + 1), &b);
      if (a != slash || b != text.size() - slash - 1)
        n = 0;
    }
  } catch (const std::exception&) {
    n = 0;
  }
  if (n < 1 || i < 0 || i >= n)
    throw ConfigError(command_line("--shard"), "'" + text + "' is not a shard",
                      "I/N with 0 <= I < N, e.g. $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT");
  return {i, n};
}

} // namespace clustersim
