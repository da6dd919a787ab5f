// Collectives on the simulated network against closed forms.
#include "CollectiveBench.hpp"
#include "Isolated.hpp"
#include "TestUtil.hpp"

#include <doctest/doctest.h>

using namespace clustersim;
using clustersim::test::catalog;

namespace {

double simulate_isolated(const ClusterGraph& cg, const std::vector<CollectiveSpec>& calls)
{
  std::string out =
      run_isolated([&] { return std::to_string(run_collectives(cg, catalog().protocols(), calls).seconds); });
  return std::stod(out);
}

/// 2(N-1)/N·S/B + 2(N-1)·(α + λ) + base, with α the protocol step latency, λ the largest
/// route latency of a ring hop and B the achievable link bandwidth.
double ring_allreduce_closed_form(const ClusterGraph& cg, const std::vector<std::uint32_t>& ranks, double bytes,
                                  double bandwidth, const TransportConstants& t)
{
  const double n = static_cast<double>(ranks.size());
  double lambda = 0;
  std::vector<int> scratch;
  for (std::size_t i = 0; i < ranks.size(); ++i)
    lambda = std::max(lambda,
                      cg.route(static_cast<int>(ranks[i]), static_cast<int>(ranks[(i + 1) % ranks.size()]), scratch));
  return 2 * (n - 1) / n * bytes / (bandwidth * t.efficiency) + 2 * (n - 1) * (t.step_latency + lambda) +
         t.base_latency;
}

} // namespace

TEST_CASE("ring all-reduce inside an NVSwitch node matches 2(N-1)/N*S/B + 2(N-1)*alpha")
{
  PlatformSpec p = catalog().platform("dgx-a100-80gb", {});
  ClusterGraph cg = ClusterGraph::build(p, 8);
  const TransportConstants& nv = *catalog().protocols().find("nvlink3");
  for (int n : {2, 3, 4, 8})
    for (double bytes : {1048576.0, 1073741824.0}) {
      std::vector<std::uint32_t> ranks;
      for (int i = 0; i < n; ++i)
        ranks.push_back(static_cast<std::uint32_t>(i));
      double sim = simulate_isolated(cg, {{CollOp::all_reduce, ranks, bytes, "ring"}});
      double expected = ring_allreduce_closed_form(cg, ranks, bytes, p.node.nvlink.bandwidth, nv);
      CHECK_MESSAGE(sim == doctest::Approx(expected).epsilon(0.001), "N=" << n << " bytes=" << bytes);
    }
}

TEST_CASE("ring all-reduce across nodes (one GPU per node) matches the closed form up to 1024 ranks")
{
  PlatformSpec p = catalog().platform("dgx-a100-80gb", {});
  const TransportConstants& ib = *catalog().protocols().find("ib-hdr");
  for (int n : {2, 3, 16, 64, 256, 1024}) {
    ClusterGraph cg = ClusterGraph::build(p, 8 * n);
    std::vector<std::uint32_t> ranks;
    for (int i = 0; i < n; ++i)
      ranks.push_back(static_cast<std::uint32_t>(8 * i));
    double bytes = 1073741824.0;
    double sim = simulate_isolated(cg, {{CollOp::all_reduce, ranks, bytes, "ring"}});
    double expected = ring_allreduce_closed_form(cg, ranks, bytes, p.node.nic.bandwidth, ib);
    CHECK_MESSAGE(sim == doctest::Approx(expected).epsilon(0.001), "N=" << n);
  }
}

TEST_CASE("all-gather and reduce-scatter move (N-1)/N of the data")
{
  PlatformSpec p = catalog().platform("dgx-h100", {});
  ClusterGraph cg = ClusterGraph::build(p, 8);
  const TransportConstants& nv = *catalog().protocols().find("nvlink4");
  std::vector<std::uint32_t> ranks{0, 1, 2, 3, 4, 5, 6, 7};
  double bytes = 4.0 * 1073741824.0;
  double lambda = 2 * p.node.nvlink.latency;
  double expected =
      7.0 / 8 * bytes / (p.node.nvlink.bandwidth * nv.efficiency) + 7 * (nv.step_latency + lambda) + nv.base_latency;
  for (CollOp op : {CollOp::all_gather, CollOp::reduce_scatter})
    CHECK(simulate_isolated(cg, {{op, ranks, bytes, "ring"}}) == doctest::Approx(expected).epsilon(0.001));
}
