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

#include "sim/study/PlotSpec.hpp"

#include <string>
#include <utility>
#include <vector>

namespace clustersim {

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

/// The figures of an experiment's `plot:` section (parse_plots) for its results.csv; a figure
/// without a title is titled "EXPERIMENT: what it shows".
std::vector<std::pair<std::string, std::string>> draw_plots(const std::vector<PlotSpec>& specs, const std::string& csv,
                                                            const std::string& outdir, const std::string& experiment);

} // namespace clustersim
