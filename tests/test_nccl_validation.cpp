// Collective bandwidth against the published nccl-tests measurements in
// experiments/validation/nccl_busbw.yaml: large messages within 10 %, the curve's shape
// (from 1 MiB up) within 25 %.
#include "sim/simgrid/CollectiveBench.hpp"
#include "sim/study/Isolated.hpp"
#include "tests/TestUtil.hpp"
#include "topology/config/Yaml.hpp"

#include <nlohmann/json.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>

using namespace clustersim;
using clustersim::test::catalog;
using clustersim::test::validation_path;

namespace {

struct Point {
  std::string label;
  std::string platform;
  int gpus = 8;
  double bytes = 0;
  double measured = 0;
  double tolerance = 0.10;
  std::string algo = "auto";
};

YamlNode entry(const std::string& id)
{
  YamlNode root = YamlNode::load_file(validation_path("nccl_busbw.yaml"));
  for (const auto& e : root.items())
    for (auto& [k, v] : e.entries())
      if (k.as_string() == "id" && v.as_string() == id)
        return e;
  FAIL("no entry " << id);
  return root;
}

std::string field(const YamlNode& e, const std::string& key)
{
  for (auto& [k, v] : e.entries())
    if (k.as_string() == key)
      return v.is_scalar() ? v.as_string() : std::string();
  return "";
}

YamlNode results(const YamlNode& e)
{
  for (auto& [k, v] : e.entries())
    if (k.as_string() == "results")
      return v;
  FAIL("no results");
  return e;
}

/// Simulates every point (in parallel children) and checks it; prints the comparison.
void check(const std::vector<Point>& points)
{
  std::vector<std::function<std::string()>> jobs;
  for (const auto& p : points)
    jobs.push_back([&p] {
      PlatformSpec plat = catalog().platform(p.platform, {});
      ClusterGraph cg = ClusterGraph::build(plat, p.gpus);
      std::vector<std::uint32_t> ranks;
      for (int i = 0; i < p.gpus; ++i)
        ranks.push_back(static_cast<std::uint32_t>(i));
      CollectiveRun r = run_collectives(cg, catalog().protocols(), {{CollOp::all_reduce, ranks, p.bytes, p.algo}});
      return nlohmann::json{{"t", r.seconds}, {"algo", r.algorithm + "/" + r.protocol}}.dump();
    });
  auto out = run_isolated_all(jobs, 2);
  std::string table =
      "\n  point                                   gpus        bytes  algo          measured  simulated   error\n";
  for (std::size_t i = 0; i < points.size(); ++i) {
    REQUIRE_MESSAGE(out[i].rfind("ERROR", 0) != 0, out[i]);
    auto j = nlohmann::json::parse(out[i]);
    const Point& p = points[i];
    double busbw = p.bytes / j["t"].get<double>() / 1e9 * bus_factor(CollOp::all_reduce, p.gpus);
    double err = (busbw - p.measured) / p.measured;
    char buf[256];
    std::snprintf(buf, sizeof buf, "  %-38s %5d %12.0f  %-12s %9.1f %10.1f %+7.1f%%\n", p.label.c_str(), p.gpus,
                  p.bytes, j["algo"].get<std::string>().c_str(), p.measured, busbw, 100 * err);
    table += buf;
    CHECK_MESSAGE(std::fabs(err) <= p.tolerance, p.label << " " << p.bytes << " B: measured " << p.measured
                                                         << " GB/s, simulated " << busbw << " GB/s");
  }
  std::printf("%s", table.c_str());
}

std::vector<Point> sweep(const std::string& id, const std::string& platform)
{
  std::vector<Point> pts;
  for (const auto& r : results(entry(id)).items()) {
    double bytes = parse_quantity(field(r, "size"), Quantity::bytes);
    if (bytes < 1048576.0)
      continue; // the shape is judged from 1 MiB up
    Point p;
    p.label = id.substr(0, 38);
    p.platform = platform;
    p.bytes = bytes;
    p.measured = std::stod(field(r, "busbw_GBps"));
    p.tolerance = bytes >= 512.0 * 1048576 ? 0.10 : 0.25;
    pts.push_back(p);
  }
  return pts;
}

} // namespace

TEST_CASE("A100 8-GPU NVLink3 all-reduce sweep")
{
  check(sweep("a100_8gpu_nvlink3_allreduce_sweep", "dgx-a100-80gb"));
}

TEST_CASE("H200 8-GPU all-reduce sweep (NVLS)")
{
  check(sweep("h200_8gpu_nvlink4_allreduce_sweep_nvls", "hgx-h200"));
}

TEST_CASE("large-message all-reduce by GPU count and across nodes")
{
  std::vector<Point> pts;
  for (const auto& r : results(entry("h200_allreduce_by_gpu_count_8GiB")).items()) {
    int n = std::stoi(field(r, "num_gpus"));
    if (n == 8) // the platform's node is 8 GPUs; smaller counts are sub-node groups, below
      pts.push_back({"h200 by gpu count", "hgx-h200", n, 8.0 * 1073741824, std::stod(field(r, "busbw_GBps"))});
  }
  for (const auto& r : results(entry("b200_allreduce_by_gpu_count_8GiB")).items()) {
    int n = std::stoi(field(r, "num_gpus"));
    if (n == 8)
      pts.push_back({"b200 by gpu count", "dgx-b200", n, 8.0 * 1073741824, std::stod(field(r, "busbw_GBps"))});
  }
  for (const auto& r : results(entry("b200_1node_vs_4node_allreduce_sweep")).items())
    if (field(r, "size") == "16GiB")
      pts.push_back(
          {"b200 4 nodes (EFA)", "dgx-b200", 32, 16.0 * 1073741824, std::stod(field(r, "busbw_GBps_4node_32gpu"))});
  pts.push_back({"h200 4 nodes p5en, ring", "hgx-h200", 32, 4.0 * 1073741824,
                 std::stod(field(results(entry("h200_4node_p5en_allreduce_4GiB")).items()[0], "busbw_GBps"))});
  // GTC slides: 32 GPUs inter-node (GTC25 states the count), plateau values
  pts.push_back({"gtc DGX A100 8x200Gb", "dgx-a100-80gb", 32, 16.0 * 1073741824, 192});
  pts.push_back({"gtc DGX H100 8x400Gb", "dgx-h100", 32, 16.0 * 1073741824, 370});
  // arXiv 2411.13055 scan (read from a plot): 340-360 GB/s at 16 GiB for 4 to 512 nodes
  pts.push_back({"h100 scan 4 nodes", "dgx-h100", 32, 16.0 * 1073741824, 350});
  pts.push_back({"h100 scan 512 nodes", "dgx-h100", 4096, 16.0 * 1073741824, 350});
  check(pts);
}
