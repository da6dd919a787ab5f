#pragma once
/// Figures from sweep results, drawn by gnuplot (PNG through cairo, and SVG):
///   scaling    scaling efficiency (%) against GPUs, one line per series, ideal at 100 %
///   breakdown  step time (s) as stacked bars: compute, recompute, optimizer, exposed TP / CP /
///              PP / DP communication, bubble — one bar per row
///   mfu        MFU (%) per row, as bars
///   memory     memory per GPU (GiB) as stacked bars (weights, gradients, optimizer states,
///              activations, other), every row including those that do not fit, with the
///              GPU's capacity as a line
///   bars       any column per row, as bars (y)
///   line       any column against any column
/// An experiment's `plot:` section lists figures ({kind, x, y, series, title, file}); the
/// `clustersim plot` command draws one from a results.csv.

#include "Yaml.hpp"

#include <string>
#include <utility>
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
};

/// A parsed CSV (header + rows of cells).
struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  int column(const std::string& name) const; ///< -1 when absent
};

CsvTable parse_csv(const std::string& text, const std::string& file);

/// Draws a figure; returns the files (path, bytes) to write: OUTDIR/FILE.png and .svg.
std::vector<std::pair<std::string, std::string>> draw(const CsvTable& table, const PlotSpec& spec,
                                                      const std::string& outdir);

/// The figures of an experiment's `plot:` section for its results.
std::vector<std::pair<std::string, std::string>> plots_from_experiment(const YamlNode& doc, const std::string& csv,
                                                                       const std::string& outdir);
/// Reads a `plot:` section (a list of figure specs), with positions in errors.
std::vector<PlotSpec> parse_plots(const YamlNode& node);

} // namespace clustersim
