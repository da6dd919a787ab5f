#pragma once
/// The `plot:` section of an experiment: figures drawn from a sweep's results (the command line
/// draws them, with gnuplot). Kinds:
///   scaling    scaling efficiency (%) against GPUs, one line per series, ideal at 100 %
///   breakdown  step time (s) as stacked bars, one bar per row
///   mfu        MFU (%) per row, as bars
///   memory     memory per GPU (GiB) as stacked bars, with the GPU's capacity as a line
///   bars       any column per row, as bars (y)
///   line       any column against any column

#include "topology/config/Schema.hpp"
#include "topology/config/Yaml.hpp"

#include <string>
#include <vector>

namespace clustersim {

struct PlotSpec {
  std::string kind = "scaling";
  std::string x;      ///< x column (default: per kind)
  std::string y;      ///< y column (line plots)
  std::string series; ///< column whose values split the rows into lines
  std::string title;
  std::string file;                ///< base name of the output files (default: the kind)
  std::vector<std::string> labels; ///< columns naming each bar (default: x, else the sweep axes)
  bool log_y = false;
  /// The columns written in the spec (x, y, series, labels) and where, for checking them
  /// against the results' columns before a sweep runs.
  std::vector<std::pair<std::string, SourceLocation>> columns;
};

const std::vector<std::string>& plot_kinds();
/// What is wrong with a spec's kind and the columns it needs (empty `what`: nothing); the hint
/// names the `plot:` section's keys, or with `flags` the command line's.
struct PlotProblem {
  std::string what;
  std::string valid;
};
PlotProblem check_plot_kind(const PlotSpec& p, bool flags);
/// The keys of one figure of a `plot:` list.
const Section& plot_section();
/// Reads a `plot:` section (a list of figure specs), with positions in errors.
std::vector<PlotSpec> parse_plots(const YamlNode& node);
/// Every column the specs name is one of `columns` (a sweep's results.csv header), or a
/// FILE:LINE:COL error at the spec, before any point runs.
void check_plot_columns(const std::vector<PlotSpec>& plots, const std::vector<std::string>& columns);

} // namespace clustersim
