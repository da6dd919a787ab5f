// Cluster graphs: facts, routes, exports.
#include "ClusterGraph.hpp"
#include "TestUtil.hpp"
#include "TopologyFacts.hpp"

#include <doctest/doctest.h>

using namespace clustersim;
using clustersim::test::catalog;

TEST_CASE("every platform of the catalog loads and builds")
{
  for (const auto& name : catalog().platform_names()) {
    CAPTURE(name);
    PlatformSpec p = catalog().platform(name, {});
    int gpus = p.gpus_per_domain() * 2;
    ClusterGraph cg = ClusterGraph::build(p, gpus);
    TopologyFacts f = compute_facts(cg);
    CHECK(f.connected);
    CHECK(f.all_gpus_reachable);
    CHECK(f.gpus == gpus);
    CHECK(f.bisection_bandwidth > 0);
  }
}

TEST_CASE("dgx-h100 at 1024 GPUs: the datasheet arithmetic")
{
  PlatformSpec p = catalog().platform("dgx-h100", {});
  ClusterGraph cg = ClusterGraph::build(p, 1024);
  TopologyFacts f = compute_facts(cg);
  CHECK(f.nodes == 128);
  CHECK(f.gpus == 1024);
  CHECK(f.injection_scale_up == doctest::Approx(450e9));       // 900 GB/s bidirectional NVLink4
  CHECK(f.injection_scale_out == doctest::Approx(50e9));       // one 400 Gb/s NIC per GPU
  CHECK(f.bisection_bandwidth == doctest::Approx(512 * 50e9)); // non-blocking: half the GPUs at line rate
}

#include "CollectiveBench.hpp"
#include "Exporters.hpp"
#include "Isolated.hpp"

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>

#include <fstream>
#include <sstream>

namespace {

using clustersim::test::write_temp;
using clustersim::test::read_file;

/// A toy cluster: one GPU per node, one 100 Gb/s NIC, fat-tree of radix `radix`.
PlatformSpec toy(int radix, double oversubscription, int levels = 0)
{
  std::ostringstream y;
  y << "name: toy\nnode:\n  gpu: a100-sxm4-80gb\n  gpus: 1\n"
    << "  scale_up: {kind: nvswitch, bandwidth: 600GBps, bidirectional: true, latency: 0.3us, transport: nvlink3}\n"
    << "  pcie: {bandwidth: 31.5GBps, latency: 0.2us, transport: pcie4}\n"
    << "  nics: {count: 1, bandwidth: 100Gbps, latency: 0.5us, transport: ib-hdr}\n"
    << "fabric: {kind: fat-tree, radix: " << radix << ", oversubscription: " << oversubscription
    << ", levels: " << levels << ", switch_latency: 0.1us}\n";
  return load_platform(write_temp("toy.yaml", y.str()), catalog().gpus());
}

double isolated(const std::function<double()>& fn)
{
  return std::stod(run_isolated([&] {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", fn());
    return std::string(buf);
  }));
}

double route_latency(const ClusterGraph& cg, int a, int b)
{
  std::vector<int> scratch;
  return cg.route(a, b, scratch);
}

} // namespace

TEST_CASE("point-to-point bandwidth: NVLink inside a node, the NIC across nodes")
{
  PlatformSpec p = catalog().platform("dgx-a100-80gb", {});
  ClusterGraph cg = ClusterGraph::build(p, 16);
  const auto& nv = *catalog().protocols().find("nvlink3", "simple");
  const auto& ib = *catalog().protocols().find("ib-hdr", "simple");
  const double bytes = 1073741824.0;
  double intra = isolated([&] { return run_transfers(cg, catalog().protocols(), {{0, 3, bytes}}); });
  double inter = isolated([&] { return run_transfers(cg, catalog().protocols(), {{0, 8, bytes}}); });
  double lat_intra = route_latency(cg, 0, 3) + nv.step_latency + nv.base_latency;
  double lat_inter = route_latency(cg, 0, 8) + ib.step_latency + ib.base_latency;
  // the achievable fraction is the protocol's; the link figure behind it is the datasheet's
  CHECK(bytes / (intra - lat_intra) / nv.efficiency == doctest::Approx(300e9).epsilon(1e-6));
  CHECK(bytes / (inter - lat_inter) / ib.efficiency == doctest::Approx(25e9).epsilon(1e-6));
}

TEST_CASE("two flows over one oversubscribed uplink share it")
{
  // radix 3 at 2:1 -> leaves with 2 NICs down and 1 link up; nodes 0,1 on leaf 0, 2,3 on leaf 1
  ClusterGraph cg = ClusterGraph::build(toy(3, 2), 4);
  const double bytes = 1e9;
  double one = isolated([&] { return run_transfers(cg, catalog().protocols(), {{0, 2, bytes}}); });
  double two = isolated([&] { return run_transfers(cg, catalog().protocols(), {{0, 2, bytes}, {1, 3, bytes}}); });
  const auto& ib = *catalog().protocols().find("ib-hdr", "simple");
  double fixed = route_latency(cg, 0, 2) + ib.step_latency + ib.base_latency;
  CHECK((two - fixed) == doctest::Approx(2 * (one - fixed)).epsilon(1e-6));
  // a flow that stays under its leaf does not touch the uplink
  double local = isolated([&] { return run_transfers(cg, catalog().protocols(), {{0, 1, bytes}, {1, 3, bytes}}); });
  CHECK(local == doctest::Approx(one).epsilon(1e-6));
}

TEST_CASE("concurrent all-reduces across a 2:1 leaf each take the time the shared uplink predicts")
{
  ClusterGraph cg = ClusterGraph::build(toy(3, 2), 4);
  const auto& ib = *catalog().protocols().find("ib-hdr", "simple");
  const double bytes = 1e9;
  // groups {0,2} and {1,3}: both rings cross leaf 0's single uplink (and leaf 1's) in each direction
  double t = isolated([&] {
    return run_collectives(
               cg, catalog().protocols(),
               {{CollOp::all_reduce, {0, 2}, bytes, "ring/simple"}, {CollOp::all_reduce, {1, 3}, bytes, "ring/simple"}})
        .seconds;
  });
  const double uplink = 12.5e9;
  double lambda = route_latency(cg, 0, 2);
  double expected = bytes / (uplink / 2 * ib.efficiency) + 2 * (ib.step_latency + lambda) + ib.base_latency;
  CHECK(t == doctest::Approx(expected).epsilon(1e-3));
}

TEST_CASE("bisection bandwidth of k-ary fat-trees matches the closed form")
{
  SUBCASE("3-level, radix 8, non-blocking: N/2 x link")
  {
    ClusterGraph cg = ClusterGraph::build(toy(8, 1, 3), 128); // k^3/4 hosts
    TopologyFacts f = compute_facts(cg);
    CHECK(f.fabric_levels == 3);
    CHECK(f.bisection_bandwidth == doctest::Approx(64 * 12.5e9));
  }
  SUBCASE("2-level, radix 6 at 2:1: N/2 x link / 2")
  {
    ClusterGraph cg = ClusterGraph::build(toy(6, 2), 24); // 6 leaves x 4 hosts, 2 uplinks each
    TopologyFacts f = compute_facts(cg);
    CHECK(f.fabric_levels == 2);
    CHECK(f.bisection_bandwidth == doctest::Approx(12 * 12.5e9 / 2));
  }
}

TEST_CASE("routes follow the graph: NVLink inside a node, NIC and fabric across, the mesh's PCIe detour")
{
  PlatformSpec a100 = catalog().platform("dgx-a100-80gb", {});
  ClusterGraph cg = ClusterGraph::build(a100, 16);
  std::vector<int> r;
  cg.route(0, 5, r);
  REQUIRE(r.size() == 2);
  for (int x : r)
    CHECK(cg.resources()[static_cast<std::size_t>(x)].kind == LinkKind::nvlink);
  r.clear();
  cg.route(0, 8, r); // GPU -> PCIe switch -> NIC -> leaf -> NIC -> PCIe switch -> GPU
  CHECK(r.size() == 6);
  CHECK(cg.resources()[static_cast<std::size_t>(r[2])].kind == LinkKind::network);

  PlatformSpec dgx1 = catalog().platform("dgx1-v100", {});
  ClusterGraph mesh = ClusterGraph::build(dgx1, 8);
  r.clear();
  mesh.route(0, 3, r); // NV2: a direct double link
  REQUIRE(r.size() == 1);
  CHECK(mesh.resources()[static_cast<std::size_t>(r[0])].bandwidth == doctest::Approx(50e9));
  r.clear();
  mesh.route(0, 5, r); // no NVLink: PCIe switch, CPU, QPI, CPU, PCIe switch
  CHECK(r.size() == 5);
  for (int x : r)
    CHECK(mesh.resources()[static_cast<std::size_t>(x)].kind != LinkKind::nvlink);

  PlatformSpec pcie = catalog().platform("pcie-4090", {});
  ClusterGraph box = ClusterGraph::build(pcie, 8);
  r.clear();
  box.route(0, 1, r); // same PCIe switch, but no peer-to-peer: through the root complex
  CHECK(r.size() == 4);

  PlatformSpec nvl = catalog().platform("gb200-nvl72", {});
  ClusterGraph rack = ClusterGraph::build(nvl, 144);
  r.clear();
  rack.route(0, 71, r); // 18 trays, one NVLink domain
  CHECK(r.size() == 2);
  CHECK(rack.path_class(0, 71) == PathClass::scale_up);
  CHECK(rack.path_class(0, 72) == PathClass::scale_out);
}

TEST_CASE("DOT export renders with Graphviz and the SimGrid XML loads in SimGrid")
{
  PlatformSpec p = catalog().platform("dgx-a100-80gb", {});
  ClusterGraph cg = ClusterGraph::build(p, 16);
  std::ostringstream dot;
  write_dot(dot, cg);
  std::string dot_path = write_temp("c.dot", dot.str());
  CHECK(std::system(("dot -Tsvg '" + dot_path + "' -o '" + dot_path + ".svg'").c_str()) == 0);
  std::string svg_text = read_file(dot_path + ".svg");
  CHECK(svg_text.find("gpu15") != std::string::npos);

  std::ostringstream xml;
  write_simgrid_xml(xml, cg, Precision::bf16);
  std::string xml_path = write_temp("c.xml", xml.str());
  std::string out = run_isolated([&] {
    int argc = 1;
    char name[] = "t";
    char* argv[] = {name, nullptr};
    simgrid::s4u::Engine e(&argc, argv);
    e.load_platform(xml_path);
    auto* a = e.host_by_name("gpu0");
    auto* b = e.host_by_name("gpu9");
    std::vector<simgrid::s4u::Link*> links;
    double lat = 0;
    a->route_to(b, links, &lat);
    return std::to_string(e.get_host_count()) + " " + std::to_string(links.size());
  });
  CHECK(out == "16 6");
}
