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
