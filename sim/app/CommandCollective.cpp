#include "sim/CollectiveEngine.hpp"
#include "sim/app/Arguments.hpp"
#include "sim/app/Commands.hpp"
#include "sim/app/Output.hpp"
#include "sim/app/Plot.hpp"
#include "sim/simgrid/CollectiveBench.hpp"
#include "sim/study/Catalog.hpp"
#include "sim/study/Experiment.hpp"
#include "sim/study/Faults.hpp"
#include "sim/study/Isolated.hpp"
#include "topology/ClusterGraph.hpp"
#include "topology/config/Registry.hpp"
#include "topology/config/Suggest.hpp"
#include "topology/config/Units.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

namespace clustersim {
namespace {


double parse_size(const std::string& text, const std::string& flag)
{
  try {
    return parse_quantity(text, Quantity::bytes);
  } catch (const UnitError& e) {
    throw ConfigError(command_line(flag), e.what(), e.valid());
  }
}

} // namespace

std::vector<double> parse_sizes(const std::string& spec)
{
  std::vector<double> sizes;
  for (const auto& part : split(spec, ',')) {
    auto range = split(part, ':');
    if (range.size() == 1) {
      sizes.push_back(parse_size(range[0], "--sizes"));
      if (!(sizes.back() > 0))
        throw ConfigError(command_line("--sizes"), "'" + part + "' is an empty message",
                          "sizes above 0 bytes, e.g. 1MiB");
    } else if (range.size() == 2) {
      double lo = parse_size(range[0], "--sizes");
      double hi = parse_size(range[1], "--sizes");
      if (lo <= 0 || hi < lo)
        throw ConfigError(command_line("--sizes"), "range '" + part + "' is empty",
                          "MIN:MAX with 0 < MIN <= MAX, e.g. 1MiB:16GiB");
      for (double s = lo; s <= hi * (1 + 1e-12); s *= 2)
        sizes.push_back(s);
    } else {
      throw ConfigError(command_line("--sizes"), "cannot read '" + part + "'",
                        "sizes with units, a MIN:MAX range doubling like nccl-tests -f 2, or a comma-separated list");
    }
  }
  return sizes;
}

namespace {

struct CollectiveOptions {
  std::string op = "all_reduce";
  std::string platform;
  std::string gpus = "8";
  std::string sizes = "1MiB:1GiB";
  std::string algo = "auto";
  bool json = false;
  bool list = false;
  int jobs = 0;
  std::string faults; ///< a faults: section's file (links only)
  std::string format = "table"; ///< table | nccl-tests
  std::string plot;             ///< a directory for the bus-bandwidth figure, or empty
};

/// nccl-tests' number cell: the widest of %.2f, %.1f, %.0f that fits `width`, else exponent form
/// (NVIDIA/nccl-tests@a0b82b2260 src/util.cu:487-492, getFloatStr).
std::string nccl_float(double value, int width)
{
  char b[32];
  for (int digits = 2; digits >= 0; --digits)
    if (std::snprintf(b, sizeof b, "%*.*f", width, digits, value) <= width)
      return b;
  std::snprintf(b, sizeof b, "%*.*e", width, width >= 7 ? 1 : 0, value);
  return b;
}

/// One GPU count's points as nccl-tests prints them (NVIDIA/nccl-tests@a0b82b2260 src/util.cu:
/// the header at 756-760, the row at 457 and 508, the footer at 777-779): float elements, the
/// out-of-place and in-place columns (the simulator times one collective: both the same), no
/// wrong elements, and the average bus bandwidth, so that parsers of nccl-tests' output read it.
/// One timed point of a sweep over sizes: what every output format prints.
struct TimedPoint {
  double bytes = 0;
  double seconds = 0;
  double algbw = 0; ///< GB/s
  double busbw = 0; ///< GB/s, nccl-tests' bus factor applied
};

std::string nccl_tests_block(const std::string& op, int gpus, const std::string& platform,
                             const std::vector<TimedPoint>& points)
{
  std::ostringstream o;
  char b[512];
  const bool reduces = op == "all_reduce" || op == "reduce_scatter" || op == "reduce";
  const bool rooted = op == "broadcast" || op == "reduce";
  o << "# clustersim collective: " << op << " on " << gpus << " GPUs of " << platform << ", simulated\n#\n";
  std::snprintf(b, sizeof b, "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n",
                "", "", "", "", "");
  o << b;
  std::snprintf(b, sizeof b, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "size", "count",
                "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong", 0, "");
  o << b;
  std::snprintf(b, sizeof b, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "(B)",
                "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", 0, "");
  o << b;
  double sum = 0;
  for (const TimedPoint& pt : points) {
    char root[16];
    std::snprintf(root, sizeof root, "%6i", rooted ? 0 : -1);
    std::snprintf(b, sizeof b, "%12lli  %12lli  %8s  %6s  %6s", static_cast<long long>(pt.bytes),
                  static_cast<long long>(pt.bytes / 4), "float", reduces ? "sum" : "none", root);
    o << b;
    for (int pass = 0; pass < 2; ++pass) {
      std::snprintf(b, sizeof b, "  %7s  %6s  %6s  %6g", nccl_float(pt.seconds * 1e6, 7).c_str(),
                    nccl_float(pt.algbw, 6).c_str(), nccl_float(pt.busbw, 6).c_str(), 0.0);
      o << b;
    }
    o << "\n";
    sum += pt.busbw;
  }
  std::snprintf(b, sizeof b, "# %-20s : %d %s\n", "Out of bounds values", 0, "OK");
  o << b;
  std::snprintf(b, sizeof b, "# %-20s : %g %s\n", "Avg bus bandwidth", sum / static_cast<double>(points.size()), "");
  o << b << "#\n";
  return o.str();
}

/// The link faults of `--faults FILE` (the keys of an experiment's faults: section).
FaultSpec collective_faults(const std::string& file)
{
  if (file.empty())
    return {};
  YamlNode doc = YamlNode::load_file(file);
  FaultSpec f = parse_faults(doc);
  if (!f.stragglers.empty() || f.jitter_sigma > 0)
    throw ConfigError(doc.where(), "a collective runs no kernels: stragglers and jitter do not apply",
                      "a faults file with links: only");
  return f;
}

std::vector<int> gpu_counts(const std::string& text, const PlatformSpec& p)
{
  std::vector<int> counts;
  for (const auto& g : split(text, ',')) {
    long long n = 0;
    try {
      std::size_t used = 0;
      n = std::stoll(g, &used);
      if (used != g.size())
        n = 0;
    } catch (const std::exception&) {
      n = 0;
    }
    if (n <= 0 || n > kMaxGpus || n % p.node.gpus != 0)
      throw ConfigError(command_line("--gpus"),
                        "'" + g + "' is not a multiple of the " + std::to_string(p.node.gpus) + " GPUs per node of '" +
                            p.name + "'",
                        "positive multiples of " + std::to_string(p.node.gpus) + " up to " + std::to_string(kMaxGpus) +
                            ", comma-separated");
    counts.push_back(static_cast<int>(n));
  }
  return counts;
}

std::vector<std::uint32_t> first_ranks(int n)
{
  std::vector<std::uint32_t> ranks;
  for (int i = 0; i < n; ++i)
    ranks.push_back(static_cast<std::uint32_t>(i));
  return ranks;
}

/// nccl-tests style rows: per GPU count a header, per size the time and bandwidths.
int print_points(const CollectiveOptions& o, const PlatformSpec& p, CollOp op, const std::vector<int>& counts,
                 const std::vector<double>& sizes, const std::vector<std::string>& results)
{
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  std::ostringstream table, nccl;
  CsvTable points_table; // the figure's data: bus bandwidth against size, a line per GPU count
  points_table.header = {"gpus", "bytes", "busbw_GBps"};
  std::size_t k = 0;
  for (int n : counts) {
    std::vector<TimedPoint> points;
    char buf[256];
    std::snprintf(buf, sizeof buf, "# %s on %d GPUs of %s (%d node%s)\n", o.op.c_str(), n, p.name.c_str(),
                  n / p.node.gpus, n / p.node.gpus == 1 ? "" : "s");
    table << buf;
    std::snprintf(buf, sizeof buf, "#%14s %13s %-14s %12s %12s %12s\n", "size(B)", "count", "algo", "time(us)",
                  "algbw(GB/s)", "busbw(GB/s)");
    table << buf;
    for (double s : sizes) {
      const std::string& out = results[k++];
      if (out.rfind("ERROR: ", 0) == 0)
        throw std::runtime_error(out.substr(7));
      auto j = nlohmann::json::parse(out);
      double t = j["time_s"];
      double algbw = s / t / 1e9;
      double busbw = algbw * bus_factor(op, n);
      std::snprintf(buf, sizeof buf, " %14.0f %13.0f %-14s %12.2f %12.2f %12.2f\n", s, std::floor(s / 4),
                    j["algo"].get<std::string>().c_str(), t * 1e6, algbw, busbw);
      table << buf;
      points.push_back({s, t, algbw, busbw});
      char bw[32];
      std::snprintf(bw, sizeof bw, "%.6g", busbw);
      points_table.rows.push_back({std::to_string(n), std::to_string(static_cast<long long>(s)), bw});
      rows.push_back({{"op", o.op},
                      {"gpus", n},
                      {"bytes", s},
                      {"algo", j["algo"]},
                      {"time_s", t},
                      {"algbw_GBps", algbw},
                      {"busbw_GBps", busbw}});
    }
    nccl << nccl_tests_block(o.op, n, p.name, points);
  }
  if (!o.plot.empty()) {
    PlotSpec spec;
    spec.kind = "line";
    spec.x = "bytes";
    spec.y = "busbw_GBps";
    spec.series = "gpus";
    spec.file = "collective-" + o.op;
    spec.title = o.op + " bus bandwidth on " + p.name + " (simulated, algorithm " + o.algo + ")";
    OutputSet out;
    for (auto& [path, bytes] : draw(points_table, spec, o.plot))
      out.add(path, std::move(bytes), "--plot");
    out.commit();
  }
  std::cout << (o.json ? rows.dump(2) + "\n" : o.format == "nccl-tests" ? nccl.str() : table.str());
  return 0;
}

int collective_command(const CollectiveOptions& o)
{
  if (o.list) {
    for (const auto& e : RegistryDirectory::instance().entries(CollectiveAlgorithm::kRegistryKind))
      std::cout << e.name << "  " << e.description << "\n";
    return 0;
  }
  if (o.jobs != 0)
    int_argument(o.jobs, "--jobs", 1, 4096);
  choice_argument(o.format, {"table", "nccl-tests"}, "--format", "output format");
  if (!o.plot.empty()) { // checked before any point runs
    check_directory(o.plot, "--plot");
    OutputSet planned;
    planned.add(o.plot + "/collective-" + o.op + ".png", "", "--plot");
    planned.add(o.plot + "/collective-" + o.op + ".svg", "", "--plot");
    planned.check();
  }
  const auto& ops = coll_op_names();
  auto op_it = std::find(ops.begin(), ops.end(), o.op);
  if (op_it == ops.end())
    throw ConfigError(command_line("--op"), unknown_name("operation", o.op, ops), join(ops));
  CollOp op = static_cast<CollOp>(op_it - ops.begin());
  check_collective_algo(o.algo, command_line("--algo"));
  Catalog catalog = Catalog::open();
  if (o.platform.empty())
    throw ConfigError(command_line("--platform"), "--platform is required", "a platform (clustersim platform list)");
  PlatformSpec p = catalog.platform(o.platform, command_line("--platform"));
  std::vector<int> counts = gpu_counts(o.gpus, p);
  std::vector<double> sizes = parse_sizes(o.sizes);
  const FaultSpec faults = collective_faults(o.faults);
  for (int n : counts) { // unknown names and lost paths are input errors, before forking
    ClusterGraph cg = ClusterGraph::build(p, n);
    apply_link_faults(faults, cg);
  }
  // the algorithm on one point before forking (a clean error, exit 2)
  {
    ClusterGraph cg = ClusterGraph::build(p, counts.front());
    apply_link_faults(faults, cg);
    CollectiveEngine engine(cg, catalog.protocols());
    try {
      engine.best_plan(op, first_ranks(counts.front()), sizes.front(), o.algo);
    } catch (const std::invalid_argument& e) {
      throw ConfigError(command_line("--algo"), e.what(), "an algorithm that implements " + o.op);
    }
  }
  std::vector<std::function<std::string()>> points;
  for (int n : counts)
    for (double s : sizes)
      points.push_back([&catalog, &p, &faults, op, n, s, algo = o.algo] {
        ClusterGraph cg = ClusterGraph::build(p, n);
        apply_link_faults(faults, cg);
        CollectiveRun r = run_collectives(cg, catalog.protocols(), {{op, first_ranks(n), s, algo}});
        nlohmann::ordered_json j{{"algo", r.algorithm + "/" + r.protocol}, {"time_s", r.seconds}};
        return j.dump();
      });
  auto results = run_isolated_all(points, o.jobs > 0 ? o.jobs : available_cores());
  return print_points(o, p, op, counts, sizes, results);
}

} // namespace

void add_collective_command(CLI::App& app, Action& action)
{
  auto opt = std::make_shared<CollectiveOptions>();
  CLI::App* cmd = app.add_subcommand("collective", "Time one collective on the simulated network, like nccl-tests: "
                                                   "size, count, time, algbw and busbw per point");
  cmd->add_option("--op", opt->op, "all_reduce | all_gather | reduce_scatter | broadcast | reduce | all_to_all | sendrecv");
  cmd->add_option("--platform", opt->platform, "catalog name or platform YAML");
  cmd->add_option("--gpus", opt->gpus, "GPU counts, comma-separated (all GPUs join the collective)");
  cmd->add_option("--sizes", opt->sizes, "bytes per rank: MIN:MAX (doubling), or a comma-separated list");
  cmd->add_option("--algo", opt->algo, "auto (NCCL-like choice), or NAME[/PROTOCOL]: see --list-algorithms");
  cmd->add_flag("--list-algorithms", opt->list, "list the collective algorithms and what each runs");
  cmd->add_flag("--json", opt->json, "print JSON rows");
  cmd->add_option("--format", opt->format,
                  "table (default: with the algorithm per row) | nccl-tests (nccl-tests' own columns and footer)");
  cmd->add_option("--jobs", opt->jobs, "parallel simulations (default: all cores)");
  cmd->add_option("--plot", opt->plot,
                  "write DIR/collective-OP.png and .svg: bus bandwidth against size, a line per GPU count");
  cmd->add_option("--faults", opt->faults,
                  "YAML file with the links: of an experiment's faults: section (degraded or failed links)");
  cmd->callback([opt, &action] { action = [opt] { return collective_command(*opt); }; });
}

} // namespace clustersim
