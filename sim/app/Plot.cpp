#include "sim/app/Plot.hpp"

#include "sim/study/Metrics.hpp"
#include "topology/config/Suggest.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace clustersim {

namespace {

std::string read_file(const std::string& path)
{
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string gp_quote(const std::string& s)
{
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

/// "tp8" for numbers (they need their axis name), "gpt3-175b" for names (they speak for themselves).
std::string label_part(const std::string& column, const std::string& value)
{
  std::string name = column.substr(column.find_last_of('.') + 1);
  bool numeric = !value.empty() && value.find_first_not_of("0123456789.eE+-") == std::string::npos;
  return numeric ? name + value : value;
}

/// Label of a row for bar charts: the `labels` columns, the x column, or the sweep's axes.
std::string row_label(const CsvTable& t, const std::vector<std::string>& row, const PlotSpec& spec)
{
  auto cell = [&](const char* name) {
    int c = t.column(name);
    return c < 0 ? std::string() : row[static_cast<std::size_t>(c)];
  };
  std::string l;
  if (!spec.labels.empty()) {
    for (const auto& col : spec.labels)
      l += (l.empty() ? "" : " ") + label_part(col, row[static_cast<std::size_t>(t.column(col))]);
    return l;
  }
  if (!spec.x.empty() && t.column(spec.x) >= 0)
    return row[static_cast<std::size_t>(t.column(spec.x))];
  // the sweep's own axes sit between "point" and "status"
  int first = t.column("point");
  int last = t.column("status");
  if (first >= 0 && last > first + 1) {
    for (int c = first + 1; c < last; ++c)
      l += (l.empty() ? "" : " ") + label_part(t.header[static_cast<std::size_t>(c)], row[static_cast<std::size_t>(c)]);
    return l;
  }
  l = "tp" + cell("tp") + " pp" + cell("pp") + " dp" + cell("dp");
  if (!cell("cp").empty() && cell("cp") != "1")
    l += " cp" + cell("cp");
  if (!cell("zero").empty() && cell("zero") != "0")
    l += " z" + cell("zero");
  return l;
}

} // namespace

int CsvTable::column(const std::string& name) const
{
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name)
      return static_cast<int>(i);
  return -1;
}

CsvTable parse_csv(const std::string& text, const std::string& file)
{
  CsvTable t;
  std::vector<std::string> row;
  std::string cell;
  bool quoted = false;
  int line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row.push_back(cell);
      cell.clear();
    } else if (c == '\n') {
      row.push_back(cell);
      cell.clear();
      if (t.header.empty())
        t.header = row;
      else if (row.size() != t.header.size())
        throw ConfigError(SourceLocation{file, line, 1},
                          "row has " + std::to_string(row.size()) + " cells, the header " +
                              std::to_string(t.header.size()),
                          "a results.csv written by clustersim");
      else
        t.rows.push_back(row);
      row.clear();
      ++line;
    } else {
      cell += c;
    }
  }
  if (t.header.empty())
    throw ConfigError(SourceLocation{file, 1, 1}, "empty CSV", "a results.csv written by clustersim");
  return t;
}

namespace {

/// What a figure's gnuplot script needs beyond its data files.
struct Figure {
  std::ostringstream script;
  std::string plot_cmd;
  std::string xlabel;
  std::string ylabel;
};

using Rows = std::vector<const std::vector<std::string>*>;

std::size_t column_of(const CsvTable& t, const std::string& col)
{
  if (t.column(col) < 0)
    throw ConfigError(command_line("plot"), unknown_name("column", col, t.header), join(t.header));
  return static_cast<std::size_t>(t.column(col));
}

/// The rows a figure shows: those that ran (and, for memory, those that do not fit).
Rows plotted_rows(const CsvTable& t, const PlotSpec& spec)
{
  int status_col = t.column("status");
  Rows ok;
  for (const auto& r : t.rows)
    if (status_col < 0 || r[static_cast<std::size_t>(status_col)] == "ok" ||
        (spec.kind == "memory" && r[static_cast<std::size_t>(status_col)] == "oom"))
      ok.push_back(&r);
  if (ok.empty())
    throw ConfigError(command_line("plot"), "no row with status ok to plot", "results with simulated points");
  return ok;
}

/// An axis label for a column: with its unit where the column's name carries one.
std::string axis_label(const std::string& col)
{
  static const std::map<std::string, std::string> known{
      {"gpus", "GPUs"},
      {"bytes", "size per rank (bytes)"},
      {"busbw_GBps", "bus bandwidth (GB/s)"},
      {"algbw_GBps", "algorithm bandwidth (GB/s)"},
      {"mfu", "MFU (fraction of peak)"},
      {"hfu", "HFU (fraction of peak)"},
      {"scaling_efficiency", "scaling efficiency (fraction)"},
      {"tokens_per_s", "tokens/s"},
      {"tokens_per_s_per_gpu", "tokens/s per GPU"},
      {"tflops_per_gpu_model", "model TFLOP/s per GPU"},
      {"tflops_per_gpu_hardware", "hardware TFLOP/s per GPU"},
      {"time_to_train_days", "time to train (days)"},
      {"energy_mwh", "energy (MWh)"},
      {"gpu_hours", "GPU-hours"},
      {"global_batch", "global batch (sequences)"},
      {"micro_batch", "micro-batch (sequences)"}};
  auto it = known.find(col);
  if (it != known.end())
    return it->second;
  // the rest as the results name them, the unit taken from the suffix
  std::string name = col.substr(col.find_last_of('.') + 1);
  std::string unit;
  for (const auto& [suffix, u] : {std::pair<std::string, std::string>{"_s", "s"}, {"_bytes", "bytes"}, {"_usd", "USD"},
                                  {"_days", "days"}, {"_load", "fraction of capacity"}})
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      name.resize(name.size() - suffix.size());
      unit = u;
      break;
    }
  std::replace(name.begin(), name.end(), '_', ' ');
  return unit.empty() ? name : name + " (" + unit + ")";
}

/// scaling and line: one line per series.
void line_figure(const CsvTable& t, const PlotSpec& spec, const Rows& ok, const std::string& tmp, Figure& f)
{
  const std::string xcol = spec.x.empty() ? "gpus" : spec.x;
  const std::string ycol = spec.kind == "scaling" ? "scaling_efficiency" : spec.y;
  std::size_t xi = column_of(t, xcol);
  std::size_t yi = column_of(t, ycol);
  // "gpus 8" before "gpus 64": names that differ in a trailing number go in its order
  auto natural = [](const std::string& a, const std::string& b) {
    const std::size_t i = a.find_last_not_of("0123456789.") + 1, j = b.find_last_not_of("0123456789.") + 1;
    if (a.compare(0, i, b, 0, j) != 0 || i == a.size() || j == b.size())
      return a < b;
    return std::atof(a.c_str() + i) < std::atof(b.c_str() + j);
  };
  std::map<std::string, std::vector<std::pair<double, double>>, decltype(natural)> series(natural);
  for (const auto* r : ok) {
    std::string key = spec.series.empty() ? "simulated"
                                          : spec.series.substr(spec.series.find_last_of('.') + 1) + " " +
                                                (*r)[column_of(t, spec.series)];
    double xv = std::atof((*r)[xi].c_str());
    double yv = std::atof((*r)[yi].c_str()) * (spec.kind == "scaling" ? 100.0 : 1.0);
    series[key].emplace_back(xv, yv);
  }
  int k = 0;
  std::vector<std::string> parts;
  for (auto& [name, pts] : series) {
    std::sort(pts.begin(), pts.end());
    std::string file = tmp + "/s" + std::to_string(k) + ".dat";
    std::ofstream out(file);
    for (auto& [a, b] : pts)
      out << a << " " << b << "\n";
    parts.push_back(gp_quote(file) + " using 1:2 with linespoints lw 2 pt 7 title " + gp_quote(name));
    ++k;
  }
  if (spec.kind == "scaling")
    parts.push_back("100 with lines dt 2 lc rgb 'gray40' title 'ideal'");
  f.plot_cmd = "plot " + join(parts, ", ");
  f.xlabel = axis_label(xcol);
  f.ylabel = spec.kind == "scaling" ? "Scaling efficiency (%)" : axis_label(ycol);
  f.script << (xcol == "gpus" || xcol == "bytes" ? "set logscale x 2\n" : "")
           << (xcol == "bytes" ? "set format x '%.0b %BB'\n" : "") << (spec.kind == "scaling" ? "set yrange [0:110]\n" : "")
           << (xcol == "bytes" ? "set key top left\n" : "set key bottom left\n");
}

/// The parts a stacked figure shows, with their legends: the metric table's labelled figures of
/// one part of the report (the breakdown, or memory: the peak and capacity are not parts).
std::vector<std::pair<std::string, std::string>> stacked_parts(MetricPart part)
{
  std::vector<std::pair<std::string, std::string>> parts;
  for (const Metric& m : report_metrics())
    if (m.part == part && *m.label != '\0')
      parts.emplace_back(m.key, m.label);
  return parts;
}

const std::vector<std::pair<std::string, std::string>>& time_parts()
{
  static const auto parts = stacked_parts(MetricPart::breakdown);
  return parts;
}

const std::vector<std::pair<std::string, std::string>>& memory_parts()
{
  static const auto parts = stacked_parts(MetricPart::memory);
  return parts;
}

/// The data file of a bar figure, one line per row; returns the largest capacity and peak seen.
std::pair<double, double> write_bars(const CsvTable& t, const PlotSpec& spec, const Rows& ok, const std::string& file)
{
  std::ofstream out(file);
  double capacity = 0;
  double peak = 0;
  for (const auto* r : ok) {
    for (const auto& col : spec.labels)
      column_of(t, col);
    std::string label = row_label(t, *r, spec);
    if (!spec.series.empty()) {
      const std::string& name = spec.series;
      label += " " + name.substr(name.find_last_of('.') + 1) + " " + (*r)[column_of(t, spec.series)];
    }
    out << gp_quote(label);
    auto cell = [&](const std::string& col) { return std::atof((*r)[column_of(t, col)].c_str()); };
    if (spec.kind == "breakdown") {
      double total = 0;
      for (const auto& p : time_parts()) {
        out << " " << cell(p.first);
        total += cell(p.first);
      }
      out << " " << total; // the stack's height, printed above it
    } else if (spec.kind == "memory") {
      double total = 0;
      for (const auto& p : memory_parts()) {
        out << " " << cell(p.first) / 1073741824.0;
        total += cell(p.first) / 1073741824.0;
      }
      out << " " << total;
      capacity = std::max(capacity, cell("capacity_bytes") / 1073741824.0);
      peak = std::max(peak, cell("peak_bytes") / 1073741824.0);
    } else if (spec.kind == "bars") {
      out << " " << cell(spec.y);
    } else {
      out << " " << 100 * cell("mfu");
    }
    out << "\n";
  }
  return {capacity, peak};
}

/// bars, breakdown, memory, mfu: one bar (or stack) per row.
void bar_figure(const CsvTable& t, const PlotSpec& spec, const Rows& ok, const std::string& tmp, Figure& f)
{
  const std::string file = tmp + "/bars.dat";
  auto [capacity, peak] = write_bars(t, spec, ok, file);
  std::string clip_note;
  f.script << "set style data histograms\nset style fill solid 0.85 border -1\nset boxwidth 0.75\n"
           << "set xtics rotate by " << (ok.size() > 10 ? -50 : -30) << " scale 0\nset key outside right top\n";
  if (spec.kind == "breakdown" || spec.kind == "memory") {
    f.script << "set style histogram rowstacked\n";
    const auto& list = spec.kind == "breakdown" ? time_parts() : memory_parts();
    std::vector<std::string> cols;
    for (std::size_t i = 0; i < list.size(); ++i)
      cols.push_back((i == 0 ? gp_quote(file) : std::string("''")) + " using " + std::to_string(i + 2) +
                     (i == 0 ? ":xtic(1)" : "") + " title " + gp_quote(list[i].second));
    if (spec.kind == "memory") {
      char cap[128];
      std::snprintf(cap, sizeof cap, "%.3f with lines lw 2 dt 2 lc rgb 'red' title 'GPU memory (%.0f GiB)'", capacity,
                    capacity);
      cols.push_back(cap);
      // a 175B model under plain DP needs terabytes per GPU: clip the axis so that the bars
      // near the capacity line stay readable, and say so
      if (peak > 3 * capacity) {
        char range[160];
        std::snprintf(range, sizeof range, "set yrange [0:%.0f]\n", 3 * capacity);
        f.script << range;
        std::snprintf(range, sizeof range, " (bars above %.0f GiB are clipped; totals in peak_bytes)",
                      3 * capacity);
        clip_note = range;
      }
    }
    // each stack's total above it
    cols.push_back("'' using 0:" + std::to_string(list.size() + 2) + ":(sprintf('%.3g', $" +
                   std::to_string(list.size() + 2) + ")) with labels offset 0,0.8 notitle");
    f.plot_cmd = "plot " + join(cols, ", ");
    f.ylabel = spec.kind == "breakdown" ? "Step time (s)" : "Memory per GPU (GiB)";
  } else if (spec.kind == "bars") {
    f.script << "set style histogram clustered\nset yrange [0:*]\n";
    f.plot_cmd = "plot " + gp_quote(file) + " using 2:xtic(1) title " + gp_quote(axis_label(spec.y)) +
                 ", '' using 0:2:(sprintf('%.3g', $2)) with labels offset 0,0.8 notitle";
    f.ylabel = axis_label(spec.y);
  } else {
    f.script << "set style histogram clustered\nset yrange [0:*]\n";
    f.plot_cmd = "plot " + gp_quote(file) + " using 2:xtic(1) title 'MFU', '' using 0:2:(sprintf('%.1f', $2)) "
                 "with labels offset 0,0.8 notitle";
    f.ylabel = "MFU (%)";
  }
  // what names the bars: the x column, else the label columns (the sweep's axes by default)
  std::vector<std::string> named;
  for (const auto& col : spec.labels)
    named.push_back(axis_label(col));
  f.xlabel = (!spec.x.empty() ? axis_label(spec.x) : named.empty() ? std::string("sweep point") : join(named, ", ")) +
             clip_note;
}

/// What a figure shows, for its default title.
std::string describe_kind(const PlotSpec& spec)
{
  if (spec.kind == "scaling")
    return "Scaling efficiency";
  if (spec.kind == "breakdown")
    return "Step time breakdown";
  if (spec.kind == "mfu")
    return "MFU";
  if (spec.kind == "memory")
    return "Memory per GPU";
  const std::string y = axis_label(spec.y);
  return spec.kind == "line" ? y + " against " + axis_label(spec.x.empty() ? "gpus" : spec.x) : y;
}

/// The spec with its default title: the experiment's name and what the figure shows.
PlotSpec titled(PlotSpec spec, const std::string& experiment)
{
  if (spec.title.empty() && !experiment.empty())
    spec.title = experiment + ": " + describe_kind(spec);
  return spec;
}

/// Runs gnuplot on the figure: PNG and SVG, returned as (path, bytes).
std::vector<std::pair<std::string, std::string>> render(const PlotSpec& spec, const Figure& f, const std::string& tmp,
                                                        const std::string& outdir)
{
  const std::string title = spec.title.empty() ? describe_kind(spec) : spec.title;
  std::string common = f.script.str() + (spec.log_y ? "set logscale y\nset yrange [*:*]\n" : "") + "set title " +
                       gp_quote(title) + "\nset xlabel " + gp_quote(f.xlabel) + "\nset ylabel " + gp_quote(f.ylabel) +
                       "\nset grid ytics\n"
                       // gnuplot cycles 8 colours: the ninth series (the breakdown's bubble / wait)
                       // would take the first's (compute); idle time is grey
                       "set linetype 9 lc rgb 'gray65'\nset linetype 10 lc rgb 'gray35'\n";
  std::string base = tmp + "/figure";
  std::ofstream gp(tmp + "/plot.gp");
  gp << "set terminal pngcairo noenhanced size 1000,620 font 'DejaVu Sans,11'\nset output " << gp_quote(base + ".png")
     << "\n"
     << common << f.plot_cmd << "\nset terminal svg noenhanced size 1000,620 font 'DejaVu Sans,11'\nset output "
     << gp_quote(base + ".svg") << "\n"
     << "replot\n";
  gp.close();
  int rc = std::system(("gnuplot '" + tmp + "/plot.gp' 2>'" + tmp + "/gnuplot.err'").c_str());
  std::string err = read_file(tmp + "/gnuplot.err");
  std::vector<std::pair<std::string, std::string>> files;
  if (rc == 0) {
    files.emplace_back(outdir + "/" + spec.file + ".png", read_file(base + ".png"));
    files.emplace_back(outdir + "/" + spec.file + ".svg", read_file(base + ".svg"));
  }
  std::system(("rm -rf '" + tmp + "'").c_str());
  if (rc != 0)
    throw std::runtime_error("gnuplot failed (is gnuplot installed? scripts/setup.sh installs it): " + err);
  return files;
}

} // namespace

std::vector<std::pair<std::string, std::string>> draw(const CsvTable& t, const PlotSpec& spec,
                                                      const std::string& outdir)
{
  const Rows ok = plotted_rows(t, spec);
  char tmpl[] = "/tmp/clustersim-plot-XXXXXX";
  char* dir = ::mkdtemp(tmpl);
  if (!dir)
    throw std::runtime_error("cannot create a temporary directory for gnuplot");
  const std::string tmp = dir;
  Figure f;
  if (spec.kind == "scaling" || spec.kind == "line")
    line_figure(t, spec, ok, tmp, f);
  else
    bar_figure(t, spec, ok, tmp, f);
  return render(spec, f, tmp, outdir);
}

std::vector<std::pair<std::string, std::string>> draw_plots(const std::vector<PlotSpec>& specs, const std::string& csv,
                                                            const std::string& outdir, const std::string& experiment)
{
  std::vector<std::pair<std::string, std::string>> files;
  if (specs.empty())
    return files;
  CsvTable t = parse_csv(csv, outdir + "/results.csv");
  for (const auto& spec : specs)
    for (auto& f : draw(t, titled(spec, experiment), outdir))
      files.push_back(std::move(f));
  return files;
}

} // namespace clustersim
