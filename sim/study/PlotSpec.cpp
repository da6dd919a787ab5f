#include "sim/study/PlotSpec.hpp"

#include "topology/config/Suggest.hpp"

#include <algorithm>

namespace clustersim {

const std::vector<std::string>& plot_kinds()
{
  static const std::vector<std::string> k{"scaling", "breakdown", "mfu", "memory", "bars", "line"};
  return k;
}

PlotProblem check_plot_kind(const PlotSpec& p, bool flags)
{
  const auto& kinds = plot_kinds();
  if (std::find(kinds.begin(), kinds.end(), p.kind) == kinds.end())
    return {unknown_name("kind", p.kind, kinds), join(kinds)};
  if (p.kind == "line" && (p.x.empty() || p.y.empty()))
    return {"a line plot needs x and y columns", flags ? "--x COLUMN --y COLUMN" : "x: COLUMN, y: COLUMN"};
  if (p.kind == "bars" && p.y.empty())
    return {"a bar plot needs a y column", flags ? "--y COLUMN" : "y: COLUMN"};
  return {};
}

const Section& plot_section()
{
  using K = KeySpec;
  static const Section s{
      "plot",
      "one figure drawn from a sweep's results.csv",
      {
          K::choice("kind", "scaling", plot_kinds(), "what the figure shows"),
          K::string("x", "", "x column").computed("gpus for scaling, the row labels for bars"),
          K::string("y", "", "y column (line and bars)"),
          K::string("series", "", "column whose values make separate lines"),
          K::string("title", "", "figure title"),
          K::string("file", "", "base name of FILE.png and FILE.svg").computed("the kind"),
          K::list("labels", "columns naming each bar"),
          K::boolean("log_y", false, "logarithmic y axis"),
      }};
  return s;
}

std::vector<PlotSpec> parse_plots(const YamlNode& node)
{
  std::vector<PlotSpec> out;
  for (const auto& item : node.items()) {
    SectionReader m(item, plot_section());
    PlotSpec p;
    p.kind = m.choice("kind");
    p.x = m.string("x");
    p.y = m.string("y");
    p.series = m.string("series");
    for (const char* key : {"x", "y", "series"})
      if (auto c = m.find(key))
        p.columns.emplace_back(c->as_string(), c->where());
    p.title = m.string("title");
    p.file = m.has("file") ? m.string("file") : p.kind;
    // a base name inside --out: '../escaped' wrote beside it, '/tmp/x' anywhere
    if (p.file.empty() || p.file.find('/') != std::string::npos || p.file == "." || p.file == "..")
      m.find("file")->fail("plot file '" + p.file + "' is not a base name inside --out",
                           "a name of letters, digits, '-', '_' and '.', without '/' (e.g. file: scaling)");
    if (auto l = m.find("labels"))
      for (const auto& c : l->items()) {
        p.labels.push_back(c.as_string());
        p.columns.emplace_back(c.as_string(), c.where());
      }
    p.log_y = m.boolean("log_y");
    if (const PlotProblem bad = check_plot_kind(p, false); !bad.what.empty())
      item.fail(bad.what, bad.valid);
    m.finish();
    out.push_back(p);
  }
  return out;
}

void check_plot_columns(const std::vector<PlotSpec>& plots, const std::vector<std::string>& columns)
{
  for (const auto& p : plots)
    for (const auto& [name, at] : p.columns)
      if (std::find(columns.begin(), columns.end(), name) == columns.end())
        throw ConfigError(at, unknown_name("column", name, columns), join(columns));
}

} // namespace clustersim
