// Cluster graphs: facts, routes, exports.
#include "tests/TestUtil.hpp"
#include "topology/BillOfMaterials.hpp"
#include "topology/ClusterGraph.hpp"
#include "topology/Prices.hpp"
#include "topology/TopologyFacts.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

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

#include "sim/simgrid/CollectiveBench.hpp"
#include "sim/study/Isolated.hpp"
#include "topology/Exporters.hpp"

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>

#include <fstream>
#include <sstream>

namespace {

using clustersim::test::write_temp;
using clustersim::test::read_file;

/// A toy cluster: one GPU per node, one 100 Gb/s NIC, fat-tree of radix `radix`.
PlatformSpec toy(int radix, double oversubscription, int levels = 0, const std::string& routing = "ideal", int seed = 0)
{
  std::ostringstream y;
  y << "name: toy\nnode:\n  gpu: a100-sxm4-80gb\n  gpus: 1\n"
    << "  scale_up: {kind: nvswitch, bandwidth: 600GBps, bidirectional: true, latency: 0.3us, transport: nvlink3}\n"
    << "  pcie: {bandwidth: 31.5GBps, latency: 0.2us, transport: pcie4}\n"
    << "  nics: {count: 1, bandwidth: 100Gbps, latency: 0.5us, transport: ib-hdr}\n"
    << "fabric: {kind: fat-tree, radix: " << radix << ", oversubscription: " << oversubscription
    << ", levels: " << levels << ", switch_latency: 0.1us, routing: " << routing << ", seed: " << seed << "}\n";
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

TEST_CASE("ECMP: 1,000 flows hashed onto a leaf's 16 up-links load the busiest 1.2x the mean and more")
{
  // radix 32 at 1:1: 32 leaves of 16 GPUs, each leaf with 16 up-links (one per spine)
  double ratio_sum = 0;
  const int seeds = 20;
  std::set<std::vector<int>> placements;
  for (int seed = 0; seed < seeds; ++seed) {
    ClusterGraph cg = ClusterGraph::build(toy(32, 1, 0, "ecmp", seed), 512);
    REQUIRE(cg.fabric_levels() == 2);
    std::map<int, int> per_cable; // leaf 0's up cables
    for (std::size_t r = 0; r < cg.resources().size(); ++r)
      if (cg.resources()[r].name.rfind("leaf0-spine", 0) == 0)
        per_cable[static_cast<int>(r)] = 0;
    REQUIRE(per_cable.size() == 16);
    int flows = 0;
    std::vector<int> route;
    std::vector<int> placement;
    for (int a = 0; a < 16 && flows < 1000; ++a)
      for (int b = 16; b < 512 && flows < 1000; ++b, ++flows) {
        route.clear();
        cg.route(a, b, route);
        int on = 0;
        for (int r : route)
          if (per_cable.count(r)) {
            ++per_cable[r];
            placement.push_back(r);
            ++on;
          }
        REQUIRE(on == 1); // one cable up, never the bundle
      }
    int busiest = 0;
    for (auto [r, n] : per_cable) {
      CHECK(n > 0);
      busiest = std::max(busiest, n);
    }
    ratio_sum += busiest / (1000.0 / 16);
    placements.insert(placement);
  }
  const double mean_ratio = ratio_sum / seeds;
  MESSAGE("mean max/mean over " << seeds << " seeds: " << mean_ratio);
  CHECK(mean_ratio > 1.2); // a binomial(1000, 1/16) maximum of 16 draws: about 1.22
  CHECK(mean_ratio < 1.4);
  CHECK(placements.size() == seeds); // every seed hashes differently

  // ideal spreading: the same leaf has one up resource carrying every flow
  ClusterGraph ideal = ClusterGraph::build(toy(32, 1), 512);
  int bundles = 0;
  for (const auto& r : ideal.resources())
    bundles += r.name == "leaf0-up" ? 1 : 0;
  CHECK(bundles == 1);
}

TEST_CASE("ECMP routes cross as many switches as ideal ones, with the same latency, on two and three levels")
{
  for (auto [radix, levels, gpus] : {std::tuple{8, 2, 32}, std::tuple{8, 3, 128}}) {
    CAPTURE(levels);
    ClusterGraph ideal = ClusterGraph::build(toy(radix, 1, levels), gpus);
    ClusterGraph ecmp = ClusterGraph::build(toy(radix, 1, levels, "ecmp", 7), gpus);
    REQUIRE(ecmp.fabric_levels() == levels);
    CHECK(compute_facts(ecmp).connected);
    std::vector<int> ri;
    std::vector<int> re;
    for (int a = 0; a < gpus; a += 3)
      for (int b = 0; b < gpus; b += 5) {
        ri.clear();
        re.clear();
        CAPTURE(a);
        CAPTURE(b);
        CHECK(ecmp.route(a, b, re) == doctest::Approx(ideal.route(a, b, ri)));
        CHECK(re.size() == ri.size());
        for (int r : re) { // every fabric hop is one cable, never a bundle
          const Resource& res = ecmp.resources()[static_cast<std::size_t>(r)];
          if (res.kind == LinkKind::network)
            CHECK(res.bandwidth <= 12.5e9 * (1 + 1e-12));
        }
      }
  }
}

TEST_CASE("ECMP: a failed cable takes no flow, its switch hashes over the cables left")
{
  ClusterGraph cg = ClusterGraph::build(toy(8, 1, 2, "ecmp", 3), 32);
  // leaf 0's up cables, and the flows of leaf 0's GPUs to the other leaves on them
  std::vector<int> up_arcs;
  for (auto [e, end] = boost::edges(cg.graph()); e != end; ++e) {
    const ArcInfo& arc = cg.graph()[*e];
    if (cg.resources()[static_cast<std::size_t>(arc.resource)].name.rfind("leaf0-spine", 0) == 0)
      up_arcs.push_back(arc.id);
  }
  REQUIRE(up_arcs.size() == 4);
  CHECK(cg.ecmp_cut().empty());
  cg.scale_arc(up_arcs[0], 0);
  CHECK(cg.ecmp_cut().empty());
  const int dead = cg.graph()[*std::find_if(boost::edges(cg.graph()).first, boost::edges(cg.graph()).second,
                                            [&](auto e) { return cg.graph()[e].id == up_arcs[0]; })]
                       .resource;
  std::vector<int> route;
  std::set<int> used;
  for (int a = 0; a < 4; ++a)
    for (int b = 4; b < 32; ++b) {
      route.clear();
      cg.route(a, b, route);
      for (int r : route) {
        CHECK(r != dead);
        used.insert(r);
      }
    }
  for (int arc : {up_arcs[1], up_arcs[2], up_arcs[3]})
    CHECK(used.count(cg.graph()[*std::find_if(boost::edges(cg.graph()).first, boost::edges(cg.graph()).second,
                                               [&](auto e) { return cg.graph()[e].id == arc; })]
                         .resource));
  cg.scale_arc(up_arcs[1], 0);
  cg.scale_arc(up_arcs[2], 0);
  CHECK(cg.ecmp_cut().empty()); // the last one left carries them all
  cg.scale_arc(up_arcs[3], 0);
  CHECK(cg.ecmp_cut().rfind("leaf0 reaches leaf1 over no live cable", 0) == 0);
}

namespace {

/// The switch-to-switch cables of a route (its network hops between the first NIC-to-leaf hop
/// and the last leaf-to-NIC one).
std::vector<int> switch_cables(const ClusterGraph& cg, int a, int b, int path = 0)
{
  std::vector<int> route;
  cg.route(a, b, route, path);
  std::vector<int> net;
  for (int r : route)
    if (cg.resources()[static_cast<std::size_t>(r)].kind == LinkKind::network)
      net.push_back(r);
  REQUIRE(net.size() >= 2);
  return {net.begin() + 1, net.end() - 1};
}

} // namespace

TEST_CASE("static routing (D-mod-k): a leaf reaches another leaf's NICs over distinct cables, whatever the seed")
{
  // radix 32 at 1:1: leaves of 16 one-GPU nodes, 16 up-links each; every shift permutation from
  // leaf 0 to leaf 1 (GPU a to GPU 16 + (a + s) % 16) under static routing, then under ECMP
  ClusterGraph fixed = ClusterGraph::build(toy(32, 1, 0, "static"), 512);
  ClusterGraph reseeded = ClusterGraph::build(toy(32, 1, 0, "static", 9), 512);
  REQUIRE(fixed.fabric_levels() == 2);
  int ecmp_collisions = 0;
  for (int shift = 0; shift < 16; ++shift) {
    CAPTURE(shift);
    std::map<int, int> on_cable;
    std::map<int, int> on_ecmp;
    for (int a = 0; a < 16; ++a) {
      const int b = 16 + (a + shift) % 16;
      const std::vector<int> cables = switch_cables(fixed, a, b);
      REQUIRE(cables.size() == 2); // one cable up to a spine, one down
      CHECK(cables == switch_cables(reseeded, a, b)); // no hash: the seed changes nothing
      for (int r : cables)
        ++on_cable[r];
    }
    CHECK(on_cable.size() == 32); // 16 flows, 16 cables up and 16 down: none shared
    ClusterGraph ecmp = ClusterGraph::build(toy(32, 1, 0, "ecmp", shift), 512);
    for (int a = 0; a < 16; ++a)
      for (int r : switch_cables(ecmp, a, 16 + (a + shift) % 16))
        ++on_ecmp[r];
    ecmp_collisions += on_ecmp.size() < 32 ? 1 : 0;
  }
  CHECK(ecmp_collisions == 16); // 16 flows hashed onto 16 cables: a collision at every seed

  // 2:1 (radix 30: 20 NICs and 10 up-links per leaf): every cable carries two of the 20 flows
  ClusterGraph half = ClusterGraph::build(toy(30, 2, 0, "static"), 200);
  REQUIRE(half.fabric_levels() == 2);
  std::map<int, int> on_cable;
  for (int a = 0; a < 20; ++a)
    for (int r : switch_cables(half, a, 20 + a))
      ++on_cable[r];
  CHECK(on_cable.size() == 20);
  for (auto [r, n] : on_cable)
    CHECK(n == 2);

  // a failed up-link: the leaf's table sends its destinations over the cables left
  ClusterGraph failed = ClusterGraph::build(toy(32, 1, 0, "static"), 512);
  const int dead = switch_cables(failed, 0, 16)[0];
  int dead_arc = -1;
  for (auto [e, end] = boost::edges(failed.graph()); e != end; ++e)
    if (failed.graph()[*e].resource == dead)
      dead_arc = failed.graph()[*e].id;
  REQUIRE(dead_arc >= 0);
  failed.scale_arc(dead_arc, 0);
  CHECK(failed.ecmp_cut().empty());
  for (int a = 0; a < 16; ++a)
    for (int b = 16; b < 512; b += 7)
      for (int r : switch_cables(failed, a, b))
        CHECK(r != dead);
}

TEST_CASE("ecmp-qp: a connection's queue pairs hashed apart, the first on ECMP's path, and one queue pair is ECMP")
{
  PlatformSpec p = toy(32, 1, 0, "ecmp-qp", 5);
  CHECK(p.fabric.qps_per_connection == 1); // NCCL_IB_QPS_PER_CONNECTION's default
  ClusterGraph single = ClusterGraph::build(p, 512);
  ClusterGraph ecmp = ClusterGraph::build(toy(32, 1, 0, "ecmp", 5), 512);
  CHECK(single.paths() == 1);
  p.fabric.qps_per_connection = 4;
  ClusterGraph qp = ClusterGraph::build(p, 512);
  CHECK(qp.paths() == 4);
  double distinct = 0;
  int pairs = 0;
  for (int a = 0; a < 16; ++a)
    for (int b = 16; b < 512; b += 37, ++pairs) {
      CHECK(switch_cables(single, a, b) == switch_cables(ecmp, a, b));
      std::vector<int> first;
      qp.route(a, b, first, 0);
      std::vector<int> plain;
      ecmp.route(a, b, plain);
      CHECK(first == plain);
      std::set<int> up;
      for (int q = 0; q < 4; ++q) {
        std::vector<int> r;
        CHECK(qp.route(a, b, r, q) == doctest::Approx(route_latency(ecmp, a, b))); // as many hops
        up.insert(switch_cables(qp, a, b, q).front());
      }
      distinct += static_cast<double>(up.size());
      // alone, a connection runs at its NIC's rate however its queue pairs are hashed
      CHECK(qp.pair_bandwidth(a, b) == doctest::Approx(12.5e9));
    }
  // four draws over 16 up-links: 16 (1 - (15/16)^4) = 3.63 distinct on average
  MESSAGE("distinct up cables per connection of 4 queue pairs: " << distinct / pairs);
  CHECK(distinct / pairs > 3.3);
  CHECK(distinct / pairs < 3.9);
}

TEST_CASE("adaptive routing: ideal's one capacity per bundle, at the stated share of the cables' rate")
{
  auto bundle = [](const PlatformSpec& p) {
    ClusterGraph cg = ClusterGraph::build(p, 512);
    for (const Resource& r : cg.resources())
      if (r.name == "leaf0-up")
        return r.bandwidth;
    return -1.0;
  };
  const double ideal = bundle(toy(32, 2));
  REQUIRE(ideal == doctest::Approx(11 * 12.5e9)); // radix 32 at 2:1: 21 down, 11 up
  PlatformSpec adaptive = toy(32, 2, 0, "adaptive");
  CHECK(adaptive.fabric.adaptive_efficiency == 0.95); // NVIDIA, Spectrum-X at xAI Colossus (Oct 2024)
  CHECK(bundle(adaptive) == doctest::Approx(0.95 * ideal));
  adaptive.fabric.adaptive_efficiency = 0.98;
  CHECK(bundle(adaptive) == doctest::Approx(0.98 * ideal));
  // the NICs' own links are not the fabric's to spread
  ClusterGraph cg = ClusterGraph::build(toy(32, 2, 0, "adaptive"), 512);
  std::vector<int> route;
  cg.route(0, 100, route);
  const auto nic = std::find_if(route.begin(), route.end(), [&](int r) {
    return cg.resources()[static_cast<std::size_t>(r)].kind == LinkKind::network;
  });
  REQUIRE(nic != route.end());
  CHECK(cg.resources()[static_cast<std::size_t>(*nic)].bandwidth == doctest::Approx(12.5e9));
  CHECK(route_latency(cg, 0, 100) == doctest::Approx(route_latency(ClusterGraph::build(toy(32, 2), 512), 0, 100)));
}

TEST_CASE("a background takes its share of every cable of its tier, bundles and single cables alike, and of no other link")
{
  auto with = [](PlatformSpec p, double load, BackgroundTier tier) {
    p.fabric.background_load = load;
    p.fabric.background_tier = tier;
    return p;
  };
  auto compare = [](const ClusterGraph& quiet, const ClusterGraph& busy, LinkTier tier, double kept) {
    REQUIRE(quiet.resources().size() == busy.resources().size());
    int taken = 0;
    for (std::size_t r = 0; r < quiet.resources().size(); ++r) {
      const Resource& q = quiet.resources()[r];
      const Resource& b = busy.resources()[r];
      CHECK(b.latency == q.latency);
      if (q.tier == tier) {
        CHECK(b.bandwidth == doctest::Approx(kept * q.bandwidth));
        ++taken;
      } else {
        CHECK(b.bandwidth == q.bandwidth);
      }
    }
    if (taken > 0)
      CHECK(busy.background_share(tier) == doctest::Approx(1 - kept));
    return taken;
  };
  for (const std::string routing : {"ideal", "ecmp", "static"}) {
    CAPTURE(routing);
    const PlatformSpec two = toy(32, 2, 0, routing);
    // two levels: the leaves' cables to the spines, as one bundle per leaf (ideal) or one by one
    CHECK(compare(ClusterGraph::build(two, 512), ClusterGraph::build(with(two, 0.3, BackgroundTier::leaf_up), 512),
                  LinkTier::leaf_up, 0.7) > 0);
    CHECK(compare(ClusterGraph::build(two, 512), ClusterGraph::build(with(two, 0.3, BackgroundTier::all), 512),
                  LinkTier::leaf_up, 0.7) > 0);
    // a two-level fabric has no cables to cores: a spine-up background finds nothing to take
    CHECK(compare(ClusterGraph::build(two, 512), ClusterGraph::build(with(two, 0.3, BackgroundTier::spine_up), 512),
                  LinkTier::spine_up, 1.0) == 0);
    const PlatformSpec three = toy(8, 1, 3, routing);
    CHECK(compare(ClusterGraph::build(three, 128), ClusterGraph::build(with(three, 0.6, BackgroundTier::spine_up), 128),
                  LinkTier::spine_up, 0.4) > 0);
  }
  // the routes are the quiet fabric's
  const PlatformSpec ecmp = toy(32, 2, 0, "ecmp", 3);
  ClusterGraph quiet = ClusterGraph::build(ecmp, 512);
  ClusterGraph busy = ClusterGraph::build(with(ecmp, 0.5, BackgroundTier::all), 512);
  std::vector<int> a, b;
  for (int dst : {17, 100, 300, 511}) {
    a.clear();
    b.clear();
    CHECK(quiet.route(0, dst, a) == busy.route(0, dst, b));
    CHECK(a == b);
  }
}

TEST_CASE("a flow across a leaf's one up-link runs at the rate a background leaves it, and two flows share that")
{
  // radix 3 at 2:1: nodes 0,1 on leaf 0, 2,3 on leaf 1, one cable up per leaf at the NICs' rate
  PlatformSpec p = toy(3, 2);
  const double bytes = 1e9;
  const auto& ib = *catalog().protocols().find("ib-hdr", "simple");
  auto wire = [&](double load, const std::vector<TransferSpec>& transfers) {
    p.fabric.background_load = load;
    ClusterGraph cg = ClusterGraph::build(p, 4);
    const double fixed = route_latency(cg, 0, 2) + ib.step_latency + ib.base_latency;
    return isolated([&] { return run_transfers(cg, catalog().protocols(), transfers); }) - fixed;
  };
  const double quiet = wire(0, {{0, 2, bytes}});
  CHECK(wire(0.25, {{0, 2, bytes}}) == doctest::Approx(quiet / 0.75).epsilon(1e-6));
  CHECK(wire(0.5, {{0, 2, bytes}}) == doctest::Approx(2 * quiet).epsilon(1e-6));
  CHECK(wire(0.5, {{0, 2, bytes}, {1, 3, bytes}}) == doctest::Approx(4 * quiet).epsilon(1e-6));
  // a flow under one leaf crosses no cable between switches: it does not share the up-link
  CHECK(wire(0.5, {{0, 1, bytes}, {1, 3, bytes}}) == doctest::Approx(2 * quiet).epsilon(1e-6));
}

TEST_CASE("rail-only: each rail its own network, a flow to another rail crosses NVLink to that rail's GPU first")
{
  const std::string base = "base: dgx-h100\nname: h100-rails\nfabric: {kind: ";
  const PlatformSpec only = catalog().platform(write_temp("rail-only.yaml", base + "rail-only}\n"), {});
  const PlatformSpec opt = catalog().platform(write_temp("rail-opt.yaml", base + "rail-optimized}\n"), {});
  for (const std::string routing : {"ideal", "ecmp"}) {
    CAPTURE(routing);
    PlatformSpec p = only;
    p.fabric.routing = fabric_routing(routing);
    PlatformSpec q = opt;
    q.fabric.routing = p.fabric.routing;
    // 64 nodes: two scalable units of 32 nodes, 16 leaves, each rail's two leaves under its own spine
    ClusterGraph g = ClusterGraph::build(p, 512);
    ClusterGraph r = ClusterGraph::build(q, 512);
    REQUIRE(g.fabric_levels() == 2);
    CHECK(compute_facts(g).connected);
    const Graph& graph = g.graph();
    for (auto v : boost::make_iterator_range(boost::vertices(graph))) {
      if (graph[v].kind != VertexKind::spine)
        continue;
      std::set<int> rails;
      for (auto e : boost::make_iterator_range(boost::out_edges(v, graph)))
        rails.insert(graph[boost::target(e, graph)].global % 8);
      CHECK(rails.size() == 1); // a spine joins the leaves of one rail
    }
    const auto names = [](const ClusterGraph& cg, int a, int b) {
      std::vector<int> route;
      cg.route(a, b, route);
      std::vector<std::string> out;
      for (int x : route)
        out.push_back(cg.resources()[static_cast<std::size_t>(x)].name);
      return out;
    };
    // same rail, other unit: the rail-optimized route (under ECMP, hashed onto other cables)
    if (routing == "ideal")
      CHECK(names(g, 3, 8 * 40 + 3) == names(r, 3, 8 * 40 + 3));
    CHECK(names(g, 3, 8 * 40 + 3).size() == names(r, 3, 8 * 40 + 3).size());
    // GPU 0 (rail 0) to GPU 3 of node 40 (rail 3): NVLink to GPU 3 of node 0, then its rail
    std::vector<std::string> relay = names(g, 0, 3);
    for (const auto& n : names(g, 3, 8 * 40 + 3))
      relay.push_back(n);
    CHECK(names(g, 0, 8 * 40 + 3) == relay);
    std::vector<int> route;
    const double lat = g.route(0, 8 * 40 + 3, route);
    std::vector<int> scratch;
    CHECK(lat == doctest::Approx(g.route(0, 3, scratch) + g.route(3, 8 * 40 + 3, scratch)));
    // on rail-optimized the same flow leaves from GPU 0's own NIC and crosses the spine
    CHECK(names(r, 0, 8 * 40 + 3).front() != names(g, 0, 8 * 40 + 3).front());
  }
}

namespace {

/// Switches and cables of a tier of a bill of materials (0 where the tier is absent).
std::pair<int, long long> tier(const BillOfMaterials& b, const std::string& name)
{
  for (const SwitchTier& t : b.switch_tiers)
    if (t.tier == name)
      return {t.switches, t.ports_used};
  return {0, 0};
}

long long cables(const BillOfMaterials& b, const std::string& tiers)
{
  for (const CableClass& c : b.cables)
    if (c.tiers == tiers)
      return c.cables;
  return 0;
}

} // namespace

TEST_CASE("bill of materials: a two-tier fat-tree of k-port switches has the textbook counts, and 2:1 halves the "
          "spine ports")
{
  // k = 8 at full size: k^2/2 = 32 hosts under k leaves (k/2 down, k/2 up) and k/2 spines,
  // k^2/2 cables at each tier, every port used; the same whether parallel cables are bundled
  // (ideal) or each its own link (ecmp)
  for (const char* routing : {"ideal", "ecmp"}) {
    CAPTURE(routing);
    const BillOfMaterials b = bill_of_materials(ClusterGraph::build(toy(8, 1, 0, routing), 32));
    CHECK(b.nodes == 32);
    CHECK(b.nics == 32);
    CHECK(tier(b, "leaf") == std::pair<int, long long>{8, 64});
    CHECK(tier(b, "spine") == std::pair<int, long long>{4, 32});
    CHECK(tier(b, "core").first == 0);
    CHECK(cables(b, "nic-leaf") == 32);
    CHECK(cables(b, "leaf-spine") == 32);
    CHECK(b.switches() == 12);
    CHECK(b.fabric_cables() == 64);
    CHECK(b.transceivers() == 128); // one at each end of every cable
    CHECK(b.node_watts == doctest::Approx(32 * 400.0)); // A100-SXM4 at its 400 W TDP, no node overhead stated
  }
  // k = 12, 48 hosts: 1:1 puts 6 hosts and 6 up-links on each of 8 leaves; 2:1 puts 8 hosts
  // and 4 up-links on each of 6 leaves, so the spines terminate half the cables
  const BillOfMaterials one = bill_of_materials(ClusterGraph::build(toy(12, 1), 48));
  const BillOfMaterials two = bill_of_materials(ClusterGraph::build(toy(12, 2), 48));
  CHECK(tier(one, "leaf").first == 8);
  CHECK(tier(two, "leaf").first == 6);
  CHECK(cables(one, "leaf-spine") == 48);
  CHECK(cables(two, "leaf-spine") == 24);
  CHECK(tier(two, "spine").second * 2 == tier(one, "spine").second);
  CHECK(cables(one, "nic-leaf") == cables(two, "nic-leaf"));
}

TEST_CASE("bill of materials: a three-tier fat-tree of 4-port switches is Al-Fares et al.'s k = 4 tree")
{
  // k^3/4 = 16 hosts, 5k^2/4 = 20 switches (8 edge, 8 aggregation in 4 pods, 4 core) and
  // k^3/4 cables at each of the three tiers (Al-Fares, Loukissas and Vahdat, SIGCOMM 2008, sec. 2.2)
  const BillOfMaterials b = bill_of_materials(ClusterGraph::build(toy(4, 1, 3), 16));
  CHECK(tier(b, "leaf") == std::pair<int, long long>{8, 32});
  CHECK(tier(b, "spine") == std::pair<int, long long>{8, 32});
  CHECK(tier(b, "core") == std::pair<int, long long>{4, 16});
  CHECK(cables(b, "nic-leaf") == 16);
  CHECK(cables(b, "leaf-spine") == 16);
  CHECK(cables(b, "spine-core") == 16);
  CHECK(b.switches() == 20);
}

TEST_CASE("bill of materials: a DGX H100 SuperPOD of 4 scalable units (1,024 GPUs)")
{
  // NVIDIA DGX SuperPOD H100 reference architecture (RA-11333): 32 nodes per SU, one leaf per
  // rail per SU and 16 spines for 4 SUs; 4 NVSwitch chips per node
  const BillOfMaterials b = bill_of_materials(ClusterGraph::build(catalog().platform("dgx-h100", {}), 1024));
  CHECK(b.nodes == 128);
  CHECK(b.nics == 1024);
  CHECK(b.nvswitch_chips == 512);
  CHECK(tier(b, "leaf").first == 32);
  CHECK(tier(b, "spine").first == 16);
  CHECK(cables(b, "nic-leaf") == 1024);
  CHECK(cables(b, "leaf-spine") == 1024);
  CHECK(b.node_watts == doctest::Approx(128 * (8 * 700.0 + 4600.0)));
}

TEST_CASE("bill of materials: a rail-optimized 2:1 leaf sends up half the NICs it serves, not half its radix")
{
  // dgx-h100-2to1: radix-64 leaves, one per rail per 32-node SU, so 32 NIC ports each and 16
  // up-links (21, from the radix's 42:21 split, would be 1.52:1); the bisection halves with them
  const ClusterGraph two = ClusterGraph::build(catalog().platform("dgx-h100-2to1", {}), 1024);
  const BillOfMaterials b = bill_of_materials(two);
  CHECK(tier(b, "leaf") == std::pair<int, long long>{32, 32 * (32 + 16)});
  CHECK(cables(b, "leaf-spine") == 512);
  const ClusterGraph one = ClusterGraph::build(catalog().platform("dgx-h100", {}), 1024);
  CHECK(compute_facts(two).bisection_bandwidth == doctest::Approx(compute_facts(one).bisection_bandwidth / 2));
}

namespace {

/// A price table stated in the test: round numbers, so the capex has a closed form.
std::shared_ptr<const PriceTable> stated_prices(const std::string& rates = "400Gbps")
{
  const std::string src = "source: test, date: 2026-12";
  std::string y = "amortisation: {years: 4, " + src +
                  "}\n"
                  "energy: {usd_per_kwh: 0.1, " +
                  src +
                  "}\n"
                  "facility: {usd_per_kw: 10000, " +
                  src +
                  "}\n"
                  "nodes: {h100-sxm5-80gb: {usd: 200000, gpus: 8, " +
                  src +
                  "}}\n"
                  "switches: {" +
                  rates + ": {usd: 30000, radix: 64, watts: 1000, watts_source: test, " + src +
                  "}}\n"
                  "transceivers: {" +
                  rates + ": {usd: 500, watts: 10, watts_source: test, " + src +
                  "}}\n"
                  "cables: {" +
                  rates + ": {usd: 100, " + src + "}}\n";
  return std::make_shared<const PriceTable>(PriceTable::parse(YamlNode::load_string(y, "stated.yaml")));
}

PlatformSpec priced_with(const std::string& name, std::shared_ptr<const PriceTable> t)
{
  PlatformSpec p = catalog().platform(name, {});
  p.cost.prices = std::move(t);
  return p;
}

} // namespace

TEST_CASE("capex: a DGX H100 SuperPOD of 4 scalable units priced in closed form from a stated table")
{
  const PlatformSpec p = priced_with("dgx-h100", stated_prices());
  const BillOfMaterials b = bill_of_materials(ClusterGraph::build(p, 1024));
  const Capex c = price_cluster(b, p);
  REQUIRE(c.priced());
  // 48 switches, 2,048 cables and 4,096 transceivers (the bill's test above); 128 nodes drawing
  // 8 x 700 W + 4,600 W each; the fabric's 48 switches at 1,000 W and 4,096 transceivers at 10 W
  // (cables draw nothing)
  const double network = 48 * 30000.0 + 4096 * 500.0 + 2048 * 100.0;
  const double fabric_kw = (48 * 1000.0 + 4096 * 10.0) / 1000;
  const double kw = 128 * (8 * 700.0 + 4600.0) / 1000 + fabric_kw;
  CHECK(c.network_kw == doctest::Approx(fabric_kw));
  CHECK(c.it_kw == doctest::Approx(kw));
  CHECK(c.network() == doctest::Approx(network));
  CHECK(c.total() == doctest::Approx(128 * 200000.0 + network + kw * 10000));
  CHECK(c.network_share() == doctest::Approx(network / c.total()));
  // written off over 4 years of 8,760 hours, plus energy at dgx-h100's PUE of 1.2
  CHECK(c.energy_usd_per_gpu_hour() == doctest::Approx(kw * 1.2 * 0.1 / 1024));
  CHECK(c.usd_per_gpu_hour() == doctest::Approx(c.total() / (4 * 8760.0) / 1024 + kw * 1.2 * 0.1 / 1024));
  // the same through the platform's owned price, which builds the cluster itself
  PlatformSpec owned = p;
  owned.cost.basis = CostBasis::owned;
  CHECK(usd_per_gpu_hour(owned, 1024) == doctest::Approx(c.usd_per_gpu_hour()));
  CHECK(usd_per_gpu_hour(p, 1024) == p.cost.usd_per_gpu_hour); // rental: the platform's price
}

TEST_CASE("capex: 2:1 costs less network than 1:1 at the same size, and the nodes the same")
{
  const auto t = stated_prices();
  const PlatformSpec one = priced_with("dgx-h100", t), two = priced_with("dgx-h100-2to1", t);
  const Capex a = price_cluster(bill_of_materials(ClusterGraph::build(one, 1024)), one);
  const Capex b = price_cluster(bill_of_materials(ClusterGraph::build(two, 1024)), two);
  // 2:1 drops half the 1,024 leaf-spine cables (their 1,024 transceivers) and 8 of 16 spines,
  // and their power (8 x 1,000 W + 1,024 x 10 W) from the facility's IT load
  CHECK(a.network() - b.network() == doctest::Approx(8 * 30000.0 + 512 * (2 * 500.0 + 100.0)));
  const double kw_saved = (8 * 1000.0 + 1024 * 10.0) / 1000;
  CHECK(a.network_kw - b.network_kw == doctest::Approx(kw_saved));
  CHECK(a.node_kw == b.node_kw);
  CHECK(a.total() - b.total() == doctest::Approx(a.network() - b.network() + kw_saved * 10000));
}

TEST_CASE("capex: a part is priced at its rate or the next faster one, named so, and none fast enough leaves it unpriced")
{
  // dgx-h100-200g runs its NICs and cables at 200 Gb/s: priced as the table's 400 Gb/s parts
  const PlatformSpec p = priced_with("dgx-h100-200g", stated_prices());
  const Capex c = price_cluster(bill_of_materials(ClusterGraph::build(p, 256)), p);
  REQUIRE(c.priced());
  bool named = false;
  for (const CapexLine& l : c.lines)
    named = named || (l.what.find("nic-leaf transceiver 50.0 GB/s (for 25.0 GB/s)") != std::string::npos);
  CHECK(named);
  // a table that stops at 100 Gb/s cannot price a 400 Gb/s cable, and says which
  const PlatformSpec slow = priced_with("dgx-h100", stated_prices("100Gbps"));
  const Capex u = price_cluster(bill_of_materials(ClusterGraph::build(slow, 256)), slow);
  CHECK_FALSE(u.priced());
  CHECK(u.unpriced == "no leaf switch price at 50.0 GB/s or faster in platforms/prices.yaml");
  CHECK(unpriced_parts(slow) == u.unpriced);
  // a GPU the table has no server for
  const PlatformSpec a100 = priced_with("dgx-a100-80gb", stated_prices());
  CHECK(unpriced_parts(a100).find("no node price for GPU 'a100-sxm4-80gb' in platforms/prices.yaml (priced: "
                                  "h100-sxm5-80gb), nor cost.node_usd in the platform") == 0);
  PlatformSpec owned = a100;
  owned.cost.basis = CostBasis::owned;
  CHECK_THROWS_AS(usd_per_gpu_hour(owned, 64), ConfigError);
}

TEST_CASE("capex: the platform's cost overrides replace the table's node price, years, energy and facility")
{
  PlatformSpec p = priced_with("dgx-h100", stated_prices());
  p.cost.node_usd = 300000;
  p.cost.years = 6;
  p.cost.usd_per_kwh = 0.05;
  p.cost.facility_usd_per_kw = 0;
  const BillOfMaterials b = bill_of_materials(ClusterGraph::build(p, 256));
  const Capex c = price_cluster(b, p);
  const Capex table = price_cluster(b, priced_with("dgx-h100", stated_prices()));
  const double network = table.network();
  const double kw = 32 * (8 * 700.0 + 4600.0) / 1000 + table.network_kw;
  CHECK(c.total() == doctest::Approx(32 * 300000.0 + network + kw * 10000)); // facility: the table's
  CHECK(c.usd_per_gpu_hour() == doctest::Approx(c.total() / (6 * 8760.0) / 256 + kw * 1.2 * 0.05 / 256));
  // priced without any table, from the platform alone: a platform without a fabric can be
  PlatformSpec lone = catalog().platform("dgx-h100", {});
  lone.cost.prices = nullptr;
  CHECK_FALSE(price_cluster(bill_of_materials(ClusterGraph::build(lone, 8)), lone).priced());
}

TEST_CASE("price table: each bad entry is one clear error at its place")
{
  auto error = [](const std::string& y) {
    try {
      PriceTable::parse(YamlNode::load_string(y, "prices.yaml"));
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string head = "amortisation: {years: 5, source: s, date: d}\nenergy: {usd_per_kwh: 0.1, source: s, date: "
                           "d}\nfacility: {usd_per_kw: 1, source: s, date: d}\nnodes: {}\n";
  const std::string rest = "transceivers: {}\ncables: {}\n";
  CHECK(error(head + "switches: {400Gbps: {usd: 1, radix: 64, date: d}}\n" + rest).find("prices.yaml:5:") == 0);
  CHECK(error(head + "switches: {400Gbps: {usd: 1, radix: 64, date: d}}\n" + rest).find("source") != std::string::npos);
  CHECK(error(head + "switches: {400Gbps: {usd: 1, source: s, date: d}, 50GBps: {usd: 2, source: s, date: d}}\n" + rest)
            .find("two switch prices at 50.0 GB/s") != std::string::npos);
  CHECK(error(head + "switches: {fast: {usd: 1, source: s, date: d}}\n" + rest).find("prices.yaml:5:") == 0);
  CHECK(error(head + "switches: {}\n" + rest) == "no error");
  // a power without its source
  CHECK(error(head + "switches: {}\ntransceivers: {400Gbps: {usd: 1, watts: 9, source: s, date: d}}\ncables: {}\n") ==
        "prices.yaml:6:41: transceiver power at 400Gbps has no watts_source; valid: watts_source: the datasheet or "
        "estimate the power comes from");
  CHECK(error(head + "switches: {400Gbps: {usd: 1, watts: -1, watts_source: w, source: s, date: d}}\n" + rest)
            .find("prices.yaml:5:") == 0);
  CHECK(error(head + "switches: {}\n") ==
        "prices.yaml:1:1: missing key 'transceivers' in price table; valid: a mapping with 'transceivers'");
}

TEST_CASE("bill of materials: DeepSeek's multi-plane fat-tree at 16,384 GPUs has the switches and links of its Table 3")
{
  // Insights into DeepSeek-V3 (ISCA'25, arXiv 2505.09343) Table 3: MPFT, eight planes of two-layer
  // fat-trees of 64-port switches, 16,384 endpoints, 768 switches; each plane 64 leaves (32 down,
  // 32 up) and 32 spines, so 2 x 16,384 links. rail-only is that fabric: each rail its own Clos.
  PlatformSpec p = catalog().platform("dgx-h100", {});
  p.fabric.kind = FabricKind::rail_only;
  const BillOfMaterials b = bill_of_materials(ClusterGraph::build(p, 16384));
  CHECK(b.switches() == 768);
  CHECK(tier(b, "leaf").first == 512);
  CHECK(tier(b, "spine").first == 256);
  CHECK(tier(b, "core").first == 0);
  CHECK(b.fabric_cables() == 32768);
  // the rail-optimized fabric of the same GPUs needs a third tier: 1,280 switches, 49,152 cables
  const BillOfMaterials r = bill_of_materials(ClusterGraph::build(catalog().platform("dgx-h100", {}), 16384));
  CHECK(r.switches() == 1280);
  CHECK(r.fabric_cables() == 49152);
}
