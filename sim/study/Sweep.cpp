#include "sim/study/Sweep.hpp"

#include "sim/study/Experiment.hpp"
#include "sim/study/Isolated.hpp"
#include "sim/study/Metrics.hpp"
#include "topology/config/Suggest.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

namespace clustersim {

const Section& sweep_section()
{
  using K = KeySpec;
  static const Section s{
      "sweep",
      "run the experiment once per point of its axes",
      {
          K::choice("mode", "product", {"product", "zip"}, "product: every combination; zip: the lists in lockstep"),
          K::section("axes", "", "PATH: [values] or PATH: {from, to, step | factor}; PATH a scalar key, e.g. "
                                 "training.tp")
              .must(),
      }};
  return s;
}

const Section& sweep_range_section()
{
  using K = KeySpec;
  static const Section s{"sweep.range",
                         "a range of axis values",
                         {
                             K::number("from", 0, -1e18, 1e18, "first value").must(),
                             K::number("to", 0, -1e18, 1e18, "last value (inclusive)").must(),
                             K::number("step", 1, 1e-12, 1e18, "arithmetic step"),
                             K::number("factor", 2, 1.0000001, 1e6, "geometric factor (from > 0)")
                                 .computed("none: a range has step or factor"),
                         }};
  return s;
}

namespace {

std::vector<std::string> split_path(const std::string& path)
{
  std::vector<std::string> parts;
  std::stringstream s(path);
  std::string part;
  while (std::getline(s, part, '.'))
    parts.push_back(part);
  return parts;
}

const Section* section_named(const std::string& name)
{
  for (const Section* s : all_sections())
    if (s->name == name)
      return s;
  return nullptr;
}

/// The key a dotted path names (a sweep axis, or a --set key), checked against the experiment's
/// tables; `fail(what, valid)` throws where the path was written. A setting may name any scalar
/// key; an axis only one that may vary between points.
template <class Fail> const KeySpec& path_key(const std::string& path, bool setting, Fail fail)
{
  const std::string noun = setting ? "'" + path + "'" : "axis '" + path + "'";
  const std::vector<std::string> parts = split_path(path);
  const Section* section = &experiment_section();
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const KeySpec* k = section->find(parts[i]);
    if (!k)
      fail(unknown_key_message(setting ? "key" : "axis key", parts[i], section->key_names(), section->name,
                               section->hints),
           join(section->key_names()));
    if (i + 1 == parts.size()) {
      if ((!k->axis && !setting) || k->type == KeyType::section || k->type == KeyType::list)
        fail(noun + " does not name a scalar of " + section->name, section->name + ".<key>");
      return *k;
    }
    if (k->type == KeyType::list && !k->nested.empty() && i + 2 < parts.size() &&
        parts[i + 1].find_first_not_of("0123456789") == std::string::npos && parts[i + 1].size() < 7) {
      // an item of a list of sections: list.N.key
      section = section_named(k->nested);
      ++i;
      continue;
    }
    const Section* next = k->type == KeyType::section                       ? section_named(k->nested)
                          : k->key == "model"                                ? &model_section()
                          : k->key == "platform" && section->name == "cluster" ? &platform_section()
                                                                             : nullptr;
    if (!next)
      fail(noun + " goes into '" + parts[i] + "', which has no keys of its own", section->name + ".<key>");
    section = next;
  }
  fail(noun + " is empty", "a dotted path such as training.tp");
  throw std::logic_error("unreachable");
}

const KeySpec& axis_key(const std::string& path, const YamlNode& at)
{
  return path_key(path, false, [&at](const std::string& what, const std::string& valid) { at.fail(what, valid); });
}

/// An axis into a list item (list.N.key) needs the document to have item N.
void check_list_items(const YAML::Node& root, const std::string& path, const YamlNode& at)
{
  const std::vector<std::string> parts = split_path(path);
  YAML::Node node = root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    if (!node.IsMap() && !node.IsSequence())
      return;
    if (node.IsSequence()) {
      const std::size_t item = std::stoul(parts[i]);
      if (item >= node.size())
        at.fail("axis '" + path + "' names item " + parts[i] + " of a list of " + std::to_string(node.size()),
                "an item the experiment has (counted from 0)");
      node.reset(node[item]);
      continue;
    }
    YAML::Node next = node[parts[i]];
    if (!next) {
      if (i + 1 < parts.size() && parts[i + 1].find_first_not_of("0123456789") == std::string::npos)
        at.fail("axis '" + path + "' names an item of '" + parts[i] + "', which the experiment does not have",
                "the list written in the experiment, then its items as " + parts[i] + ".N.key");
      return;
    }
    node.reset(next);
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

/// The values of a range, counted before any is generated.
std::vector<SweepValue> range_values(const YamlNode& v)
{
  SectionReader m(v, sweep_range_section());
  const double from = m.number("from");
  const double to = m.number("to");
  const bool has_step = m.has("step");
  const bool has_factor = m.has("factor");
  if (has_step && has_factor)
    v.fail("a range has either step or factor", "{from, to, step} or {from, to, factor}");
  const double step = m.number("step");
  const double factor = has_factor ? m.number("factor") : 0;
  m.finish();
  if (to < from)
    v.fail("the range is empty", "from <= to");
  double count = 0;
  if (has_factor) {
    if (from <= 0)
      v.fail("a geometric range starts above 0", "from > 0 with factor");
    count = std::floor(std::log(to / from) / std::log(factor) + 1e-9) + 1;
  } else {
    count = std::floor((to - from) / step + 1e-9) + 1;
  }
  if (count > static_cast<double>(kMaxAxisValues))
    v.fail("the range has " + number(count) + " values", "at most " + std::to_string(kMaxAxisValues));
  if (!has_factor && (from + step == from || to + step == to))
    v.fail("step " + number(step) + " is below the precision of the range's values", "a larger step");
  std::vector<SweepValue> out;
  const SourceLocation where = v.where();
  if (has_factor) {
    double x = from;
    for (std::size_t i = 0; i < static_cast<std::size_t>(count) && x <= to * (1 + 1e-12); ++i, x *= factor)
      out.push_back({number(x), -1, where});
  } else {
    for (std::size_t i = 0; i < static_cast<std::size_t>(count); ++i)
      out.push_back({number(from + static_cast<double>(i) * step), -1, where});
  }
  return out;
}

std::vector<SweepValue> axis_values(const YamlNode& v, const KeySpec& key)
{
  std::vector<SweepValue> out;
  if (v.is_sequence()) {
    auto items = v.items();
    if (items.empty())
      v.fail("an axis needs at least one value", "a list of one or more values");
    if (items.size() > kMaxAxisValues)
      v.fail("the axis has " + std::to_string(items.size()) + " values", "at most " + std::to_string(kMaxAxisValues));
    for (std::size_t i = 0; i < items.size(); ++i)
      out.push_back({items[i].as_string(), static_cast<int>(i), items[i].where()});
  } else if (v.is_map()) {
    out = range_values(v);
  } else {
    out.push_back({v.as_string(), -2, v.where()}); // a single scalar: the value node itself
  }
  for (const auto& x : out)
    if (auto bad = check_scalar(key, x.text))
      throw ConfigError(x.where, bad->first, bad->second);
  return out;
}

void set_path(YAML::Node root, const std::string& path, const YAML::Node& value)
{
  std::vector<std::string> parts = split_path(path);
  if (parts[0] == "model" && parts.size() > 1 && root["model"] && root["model"].IsScalar()) {
    // a preset named by a scalar: turn it into {preset: name} to set a dimension on it
    std::string preset = root["model"].Scalar();
    YAML::Node m(YAML::NodeType::Map);
    m["preset"] = preset;
    root["model"] = m;
  }
  if (parts.size() > 2 && parts[0] == "cluster" && parts[1] == "platform" && root["cluster"] &&
      root["cluster"]["platform"] && root["cluster"]["platform"].IsScalar()) {
    // a platform named by a scalar: turn it into {base: name} to set a key over it
    std::string base = root["cluster"]["platform"].Scalar();
    YAML::Node p(YAML::NodeType::Map);
    p["base"] = base;
    root["cluster"]["platform"] = p;
  }
  YAML::Node node = root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    if (node.IsSequence()) { // list.N: the item must be there
      const std::size_t item = std::stoul(parts[i]);
      if (item >= node.size())
        throw std::runtime_error("axis '" + path + "': the list has " + std::to_string(node.size()) + " item(s)");
      node.reset(node[item]);
      continue;
    }
    const bool list_next = i + 2 < parts.size() && node[parts[i]] && node[parts[i]].IsSequence();
    if (!list_next && (!node[parts[i]] || !node[parts[i]].IsMap()))
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


/// Whether an error in another file than the sweep's comes from a value of this point (a
/// platform file it names): then it is the point's error, not the document's.
bool named_by_point(const ConfigError& e, const YamlNode& doc, const SweepSpec& sweep, const SweepPoint& point)
{
  const std::string& file = e.where().file;
  if (file == doc.file())
    return false;
  for (std::size_t k = 0; k < sweep.axes.size(); ++k) {
    const std::string& v = value_of(sweep, point, k).text;
    if (!v.empty() && file.size() >= v.size() && file.compare(file.size() - v.size(), v.size(), v) == 0)
      return true;
  }
  return false;
}

} // namespace

std::optional<SweepSpec> parse_sweep(const YamlNode& doc)
{
  std::optional<YamlNode> node;
  for (auto& [k, v] : doc.entries())
    if (k.as_string() == "sweep") {
      if (node) // apply_point and this must read the same section
        k.fail("duplicate key 'sweep' in experiment", "each key once");
      node = v;
    }
  if (!node)
    return std::nullopt;
  SectionReader m(*node, sweep_section());
  SweepSpec s;
  s.zip = m.choice("mode") == "zip";
  YamlNode axes = m.require("axes");
  m.finish();
  for (auto& [k, v] : axes.entries()) {
    SweepAxis a;
    a.path = k.as_string();
    const KeySpec& key = axis_key(a.path, k);
    check_list_items(doc.raw(), a.path, k);
    for (const auto& x : s.axes)
      if (x.path == a.path)
        k.fail("axis '" + a.path + "' appears twice", "each axis once");
    a.values = axis_values(v, key);
    if (s.zip && !s.axes.empty() && a.values.size() != s.axes.front().values.size())
      v.fail("zipped axes need equally long lists: " + std::to_string(a.values.size()) + " values here, " +
                 std::to_string(s.axes.front().values.size()) + " for '" + s.axes.front().path + "'",
             "lists of the same length, or mode: product");
    if (!s.zip && !s.axes.empty() && s.points > kMaxSweepPoints / a.values.size())
      v.fail("the sweep would have more than " + std::to_string(kMaxSweepPoints) + " points",
             "at most " + std::to_string(kMaxSweepPoints) + " points (fewer values, or mode: zip)");
    s.points = s.axes.empty() ? a.values.size() : s.zip ? s.points : s.points * a.values.size();
    s.axes.push_back(std::move(a));
  }
  if (s.axes.empty())
    axes.fail("a sweep needs at least one axis", "axes: {PATH: [values]}");
  // not an axis, so every point has the document's value (checked where each point is read)
  const YAML::Node sim = doc.raw()["simulation"];
  if (sim && sim.IsMap() && sim["seeds"] && sim["seeds"].IsScalar())
    s.seeded = std::strtol(sim["seeds"].Scalar().c_str(), nullptr, 10) > 1;
  return s;
}

SweepPoint point_at(const SweepSpec& sweep, std::size_t index)
{
  SweepPoint p;
  p.index = index;
  p.choice.resize(sweep.axes.size());
  std::size_t rest = index;
  for (std::size_t k = sweep.axes.size(); k-- > 0;) {
    const std::size_t n = sweep.axes[k].values.size();
    p.choice[k] = sweep.zip ? index : rest % n; // product: the last axis varies fastest
    rest /= n;
  }
  return p;
}

const SweepValue& value_of(const SweepSpec& sweep, const SweepPoint& point, std::size_t k)
{
  return sweep.axes[k].values[point.choice[k]];
}

YamlNode apply_settings(const YamlNode& doc, const std::vector<std::string>& settings, const std::string& each)
{
  std::vector<Setting> list;
  for (const std::string& s : settings) {
    const SourceLocation where = command_line("--set " + s);
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ConfigError(where, "'" + s + "' is not KEY=VALUE",
                        "--set training.tp=4: a dotted key of the experiment, '=', its value");
    list.push_back({s.substr(0, eq), s.substr(eq + 1), where});
  }
  return apply_settings(doc, list, each);
}

YamlNode apply_settings(const YamlNode& doc, const std::vector<Setting>& settings, const std::string& each)
{
  if (settings.empty())
    return doc;
  struct Placed {
    std::string path, text, origin;
  };
  std::vector<Placed> list;
  for (const Setting& s : settings) {
    auto fail = [&s](const std::string& what, const std::string& valid) { throw ConfigError(s.origin, what, valid); };
    Placed x{s.path, s.text, s.origin.str()};
    const KeySpec& key = path_key(x.path, true, fail);
    if (auto bad = check_scalar(key, x.text))
      fail(bad->first, bad->second);
    for (const auto& y : list)
      if (y.path == x.path)
        fail("'" + x.path + "' is set twice", "each key once");
    list.push_back(std::move(x));
  }
  auto apply = [list, each](YAML::Node root) {
    YamlEdits::Placed placed;
    std::vector<YAML::Node> targets;
    if (each.empty())
      targets.push_back(root);
    else if (root.IsMap() && root[each].IsSequence())
      for (std::size_t i = 0; i < root[each].size(); ++i)
        targets.push_back(root[each][i]);
    for (const auto& x : list) {
      YAML::Node value(x.text);
      try {
        for (auto& target : targets)
          set_path(target, x.path, value);
      } catch (const ConfigError&) {
        throw;
      } catch (const std::runtime_error& e) {
        throw ConfigError(SourceLocation{x.origin, 0, 0}, e.what(), "an item the experiment has (counted from 0)");
      }
      placed.emplace_back(value, x.origin);
    }
    return placed;
  };
  return doc.edited(apply);
}

YamlNode apply_point(const YamlNode& doc, const SweepSpec& sweep, const SweepPoint& point)
{
  YamlNode fresh = doc.reparse();
  YAML::Node root = fresh.raw();
  // the point's value nodes, taken before the sweep section goes: list items keep their marks
  std::vector<YAML::Node> values;
  for (std::size_t k = 0; k < sweep.axes.size(); ++k) {
    const SweepValue& v = value_of(sweep, point, k);
    YAML::Node axis = root["sweep"]["axes"][sweep.axes[k].path];
    values.push_back(v.item >= 0 ? axis[static_cast<std::size_t>(v.item)] : v.item == -2 ? axis : YAML::Node(v.text));
  }
  root.remove("sweep");
  root.remove("plot");
  for (std::size_t k = 0; k < sweep.axes.size(); ++k)
    set_path(root, sweep.axes[k].path, values[k]);
  return fresh;
}

Json sweep_row(const SweepSpec& sweep, const SweepPoint& point, const std::string& status, const std::string& reason,
               const RunMetrics* m)
{
  Json row;
  row["point"] = point.index;
  for (std::size_t k = 0; k < sweep.axes.size(); ++k)
    row[sweep.axes[k].path] = value_of(sweep, point, k).text;
  row["status"] = status;
  row["reason"] = reason;
  row["platform"] = m ? Json(m->platform) : Json();
  row["model"] = m ? Json(m->model) : Json();
  row["gpus"] = m ? Json(m->gpus) : Json();
  put_layout(row, m ? &m->training : nullptr);
  const bool ran = m && status == "ok";
  put_metric_columns(row, m, ran);
  if (sweep.seeded) {
    const bool band = ran && m->seeds.count > 0;
    const Percentiles p = band ? m->seeds.metrics.front().second : Percentiles{};
    row["step_time_p10_s"] = band ? Json(p.p10) : Json();
    row["step_time_p50_s"] = band ? Json(p.p50) : Json();
    row["step_time_p90_s"] = band ? Json(p.p90) : Json();
  }
  // the busiest link of each scale-out tier (null where the cluster has none)
  for (const auto& [key, tier] : {std::pair{"nic_busiest_load", LinkTier::nic},
                                  std::pair{"leaf_up_busiest_load", LinkTier::leaf_up},
                                  std::pair{"spine_up_busiest_load", LinkTier::spine_up}}) {
    Json v;
    if (ran)
      for (const TierLoad& l : m->network)
        if (l.tier == tier)
          v = l.busiest_load;
    row[key] = v;
  }
  row["simulation_mode"] = ran ? Json(m->mode) : Json();
  return row;
}

PointOutcome evaluate_point(const YamlNode& doc, const SweepSpec& sweep, const SweepPoint& point, const Catalog& catalog,
                            const std::string& mode, const std::function<void(ExperimentSpec&)>& adjust)
{
  PointOutcome out;
  try {
    out.experiment = parse_experiment(apply_point(doc, sweep, point), catalog);
  } catch (const ConfigError& err) {
    const bool rule = err.kind() == ConfigError::Kind::rule;
    out.status = rule ? "invalid" : "error";
    out.reason = rule ? err.problem() : err.what();
    return out;
  }
  ExperimentSpec& e = *out.experiment;
  if (!mode.empty())
    e.mode = mode;
  if (adjust)
    adjust(e);
  try {
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
      m.params = e.model.total_params();
      char buf[160];
      std::snprintf(buf, sizeof buf, "out of memory: %.1f GiB > %.1f GiB per GPU (dominated by %s)",
                    mem.peak / 1073741824.0, mem.capacity / 1073741824.0, mem.dominant.c_str());
      out.status = "oom";
      out.reason = buf;
      out.metrics = std::move(m);
      return out;
    }
    out.metrics = run_experiment(e, catalog);
    out.status = "ok";
  } catch (const ConfigError& err) {
    out.status = err.kind() == ConfigError::Kind::rule ? "invalid" : "error";
    out.reason = err.problem();
  } catch (const std::exception& err) {
    out.status = "error";
    out.reason = err.what();
  }
  return out;
}

Json run_point(const YamlNode& doc, const SweepSpec& sweep, const SweepPoint& point, const Catalog& catalog,
               const std::string& mode)
{
  const PointOutcome o = evaluate_point(doc, sweep, point, catalog, mode);
  return sweep_row(sweep, point, o.status, o.reason, o.metrics ? &*o.metrics : nullptr);
}

void check_sweep_document(const YamlNode& doc, const SweepSpec& sweep, const Catalog& catalog,
                          const std::vector<SweepPoint>& points)
{
  // A mistake in the document (not in a point's values) is reported once, as bad input,
  // before anything runs.
  for (const auto& p : points) {
    try {
      parse_experiment(apply_point(doc, sweep, p), catalog);
    } catch (const ConfigError& e) {
      if (e.kind() == ConfigError::Kind::input && !named_by_point(e, doc, sweep, p))
        throw;
    }
  }
}

SweepResult run_sweep(const YamlNode& doc, const SweepSpec& sweep, const Catalog& catalog, const SweepOptions& o)
{
  SweepResult out;
  out.name = doc.file();
  out.points = sweep.points;
  for (auto& [k, v] : doc.entries())
    if (k.as_string() == "name")
      out.name = v.as_string();
  std::vector<SweepPoint> mine;
  for (std::size_t i = static_cast<std::size_t>(o.shard); i < sweep.points; i += static_cast<std::size_t>(o.shards))
    mine.push_back(point_at(sweep, i));
  check_sweep_document(doc, sweep, catalog, mine);
  std::vector<std::function<std::string()>> tasks;
  for (const auto& p : mine)
    tasks.push_back([&doc, &sweep, p, &catalog, &o] { return run_point(doc, sweep, p, catalog, o.mode).dump(); });
  std::size_t done = 0;
  auto results = run_isolated_all(tasks, o.jobs > 0 ? o.jobs : available_cores(), [&](std::size_t) {
    if (o.progress)
      o.progress(++done, tasks.size());
  });
  for (std::size_t i = 0; i < results.size(); ++i) {
    // a child that died (a signal, an allocation failure) is that point's error, not the sweep's
    Json row = results[i].rfind("ERROR: ", 0) == 0 ? sweep_row(sweep, mine[i], "error", results[i].substr(7), nullptr)
                                                   : Json::parse(results[i]);
    out.errors += row["status"] == "error" ? 1 : 0;
    out.rows.push_back(std::move(row));
  }
  return out;
}

std::vector<std::string> sweep_columns(const SweepSpec& sweep)
{
  std::vector<std::string> out;
  const Json row = sweep_row(sweep, point_at(sweep, 0), "", "", nullptr);
  for (const auto& [k, v] : row.items())
    out.push_back(k);
  return out;
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

std::string rows_to_jsonl(const std::vector<Json>& rows)
{
  std::string out;
  for (const auto& r : rows)
    out += r.dump() + "\n";
  return out;
}

std::string rows_to_json(const std::string& name, const std::vector<Json>& rows, std::size_t points)
{
  Json j;
  j["experiment"] = name;
  j["points"] = points;
  j["rows"] = rows;
  return j.dump(2) + "\n";
}

SweepResult rows_from_json(const std::string& text, const std::string& file)
{
  auto bad = [&](const std::string& what) {
    return ConfigError(SourceLocation{file, 0, 0}, "not a results file: " + what,
                       "results.json written by clustersim run --out");
  };
  Json j;
  try {
    j = Json::parse(text);
  } catch (const std::exception& e) {
    throw bad(e.what());
  }
  if (!j.is_object() || !j.contains("experiment") || !j["experiment"].is_string())
    throw bad("no string 'experiment'");
  if (!j.contains("rows") || !j["rows"].is_array())
    throw bad("no list 'rows'");
  SweepResult r;
  r.name = j["experiment"].get<std::string>();
  if (j.contains("points")) {
    if (!j["points"].is_number_unsigned())
      throw bad("'points' is not a count");
    r.points = j["points"].get<std::size_t>();
  }
  std::vector<std::string> columns;
  for (const auto& row : j["rows"]) {
    if (!row.is_object() || !row.contains("point") || !row["point"].is_number_unsigned())
      throw bad("a row without a point number");
    std::vector<std::string> keys;
    for (const auto& [k, v] : row.items()) {
      keys.push_back(k);
      if (v.is_object() || v.is_array())
        throw bad("row " + std::to_string(row["point"].get<std::size_t>()) + " has a nested value at '" + k + "'");
    }
    if (columns.empty())
      columns = keys;
    else if (keys != columns)
      throw bad("row " + std::to_string(row["point"].get<std::size_t>()) + " has other columns than the first row");
    r.rows.push_back(row);
  }
  return r;
}

SweepResult merge_shards(const std::vector<ShardResult>& shards, const SourceLocation& missing_at)
{
  SweepResult merged;
  std::map<std::size_t, Json> rows;
  std::vector<std::string> columns;
  std::string first;
  for (const auto& [file, shard] : shards) {
    const SourceLocation at{file, 0, 0};
    if (!first.empty() && shard.name != merged.name)
      throw ConfigError(at, "rows of experiment '" + shard.name + "', not '" + merged.name + "'",
                        "shards of one sweep");
    if (!first.empty() && shard.points != merged.points)
      throw ConfigError(at,
                        "rows of a sweep of " + std::to_string(shard.points) + " points, and " + first + " of " +
                            std::to_string(merged.points),
                        "shards of one sweep");
    merged.name = shard.name;
    merged.points = shard.points;
    first = file;
    for (const auto& r : shard.rows) {
      std::vector<std::string> keys;
      for (const auto& [k, v] : r.items())
        keys.push_back(k);
      if (columns.empty())
        columns = keys;
      else if (keys != columns)
        throw ConfigError(at, "rows with other columns than the first shard's", "shards of one sweep");
      const std::size_t p = r["point"];
      if (rows.count(p))
        throw ConfigError(at, "point " + std::to_string(p) + " appears in two shards",
                          "disjoint shards (--shard I/N with the same N)");
      rows[p] = r;
    }
  }
  if (merged.points > 0 && rows.size() != merged.points) {
    std::string missing;
    std::size_t count = 0;
    for (std::size_t p = 0; p < merged.points; ++p)
      if (rows.count(p) == 0 && ++count <= 5)
        missing += (missing.empty() ? "" : ", ") + std::to_string(p);
    throw ConfigError(missing_at,
                      std::to_string(rows.size()) + " of the sweep's " + std::to_string(merged.points) +
                          " points; no row for point " + missing + (count > 5 ? ", ..." : ""),
                      "the output directories of every shard (--shard I/N for each I from 0 to N-1)");
  }
  for (auto& [p, r] : rows) {
    merged.errors += r.contains("status") && r.at("status") == Json("error") ? 1 : 0;
    merged.rows.push_back(std::move(r));
  }
  return merged;
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
