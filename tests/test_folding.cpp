// Folding symmetric replicas into one simulated rank per stage is exact where replicas cannot
// contend, and refused where they can; contention-free collectives run as exact delays.
#include "sim/simgrid/Executor.hpp"
#include "sim/simgrid/SimPlatform.hpp"
#include "sim/study/Isolated.hpp"
#include "sim/study/Simulation.hpp"
#include "strategies/StepBuilder.hpp"
#include "tests/TestUtil.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

using namespace clustersim;
using clustersim::test::catalog;

namespace {

ExperimentSpec experiment(const std::string& platform, int gpus, const std::string& model, int tp, int pp, int zero,
                          bool sp, int micro_batches)
{
  ExperimentSpec e;
  e.training.frameworks = catalog().frameworks();
  e.name = "fold";
  e.model = load_model_preset(model, catalog().models_dir(), {});
  e.platform = catalog().platform(platform, {});
  e.gpus = gpus;
  e.training.tp = tp;
  e.training.pp = pp;
  e.training.dp = gpus / (tp * pp);
  e.training.zero = zero;
  e.training.sequence_parallel = sp;
  e.training.micro_batch = 1;
  e.training.global_batch = micro_batches * e.training.dp;
  e.training.flash_attention = true;
  e.training.recompute = Recompute::selective;
  return e;
}

RunMetrics run(ExperimentSpec e, const std::string& mode)
{
  e.mode = mode;
  return metrics_from_json(Json::parse(run_isolated([&] { return to_json(simulate(e, catalog())).dump(); })));
}

void check_exact(const ExperimentSpec& e)
{
  RunMetrics folded = run(e, "auto");
  RunMetrics full = run(e, "full");
  CHECK(folded.mode == "folded");
  CHECK(full.mode == "full");
  CHECK(folded.simulated_ranks < full.simulated_ranks);
  // exact: replicas that cannot contend do the same work at the same instants (the tolerance is
  // the 1e-9 of summing the same delays in another order)
  CHECK(folded.step_time_s == doctest::Approx(full.step_time_s).epsilon(1e-9));
  CHECK(folded.breakdown.exposed_dp ==
        doctest::Approx(full.breakdown.exposed_dp).epsilon(1e-9).scale(full.step_time_s));
  CHECK(folded.breakdown.bubble == doctest::Approx(full.breakdown.bubble).epsilon(1e-9).scale(full.step_time_s));
}

} // namespace

TEST_CASE("folded equals full: 3D parallel on 256 H100")
{
  check_exact(experiment("dgx-h100", 256, "gpt3-6.7b", 8, 4, 0, false, 8));
}

TEST_CASE("folded equals full: TP 2 + ZeRO-1 with sequence parallelism on 512 A100")
{
  check_exact(experiment("dgx-a100-80gb", 512, "gpt3-2.7b", 2, 2, 1, true, 2));
}

TEST_CASE("folded equals full: ZeRO-3 data parallelism on 1024 H100")
{
  check_exact(experiment("dgx-h100", 1024, "gpt3-1.3b", 1, 1, 3, false, 1));
}

TEST_CASE("folded equals full: TP 2 and TP 4 with ZeRO-1 on 256 H100, where data-parallel rings relay over TP peers' NVLink")
{
  // one rank per stage was 0.1-0.2 % fast here: the PXN hops of the other TP ranks' data-parallel
  // rings land on the simulated rank's TP peers; a whole NVLink domain per stage keeps them
  check_exact(experiment("dgx-h100", 256, "gpt3-2.7b", 2, 2, 1, true, 4));
  check_exact(experiment("dgx-h100", 256, "gpt3-2.7b", 4, 2, 1, true, 4));
}

TEST_CASE("folded equals full with FP8 amax reductions: latency-bound tree all-reduces across nodes keep folding")
{
  // delayed scaling all-reduces a few hundred bytes of amaxes over each stage's 64 ranks (8
  // nodes) per chunk and pass; NCCL's tuner picks a tree, but a latency-bound call runs as a
  // delay of its predicted time in both modes and loads no node more than another
  ExperimentSpec e = experiment("dgx-h100", 256, "gpt3-6.7b", 8, 4, 1, true, 8);
  e.training.precision = Precision::fp8;
  check_exact(e);
}

TEST_CASE("a tree all-reduce across nodes is not node-symmetric: auto simulates every rank and says why")
{
  // DDP's gradient all-reduce over 16 nodes runs as NCCL's double binary tree, whose interior
  // nodes carry more than the rest; folded, the step was 3.7 % fast
  ExperimentSpec e = experiment("dgx-h100", 64, "gpt3-2.7b", 2, 2, 0, true, 4);
  RunMetrics m = run(e, "auto");
  CHECK(m.mode == "full");
  CHECK(m.mode_reason.find("tree all_reduce") != std::string::npos);
  RunMetrics folded = run(e, "folded");
  CHECK(folded.mode == "folded");
  CHECK(folded.step_time_s < m.step_time_s); // the approximation the report names, when asked for
}

TEST_CASE("on an oversubscribed fabric replicas contend: folding is refused and the report says so")
{
  ExperimentSpec e = experiment("dgx-h100-fattree-2to1", 256, "gpt3-1.3b", 1, 1, 3, false, 1);
  RunMetrics m = run(e, "auto");
  CHECK(m.mode == "full");
  CHECK(m.simulated_ranks == 256);
  CHECK(m.mode_reason.find("oversubscribed") != std::string::npos);
}

/// Executes `e`'s step with every rank simulated (no folding) under `o`, in this process: call
/// it inside run_isolated (one SimGrid engine per process).
ExecutionResult execute_every_rank(const ExperimentSpec& e, const ExecutionOptions& o)
{
  ClusterGraph cluster = ClusterGraph::build(e.platform, e.gpus);
  CostModel cost(e.model, e.training, e.platform.node.gpu);
  StepPlan plan = build_step(cost, 0);
  SimPlatform platform(cluster, e.platform.node.gpu.peak(Precision::bf16));
  CollectiveEngine collectives(cluster, catalog().protocols());
  return execute(plan.workload, platform, collectives, o);
}

/// Step time with every transfer as flows, and with contention-free ones as delays (both full).
void check_delays_exact(ExperimentSpec e)
{
  e.mode = "full";
  std::string out = run_isolated([&] {
    ExecutionOptions flows_only;
    flows_only.delay_when_exclusive = false;
    ExecutionResult r = execute_every_rank(e, flows_only);
    return std::to_string(r.makespan) + " " + std::to_string(r.stats.exclusive_collectives);
  });
  RunMetrics shortcut = run(e, "full");
  double flows_step = std::stod(out.substr(0, out.find(' ')));
  CHECK(std::stoul(out.substr(out.find(' ') + 1)) == 0);
  CHECK(shortcut.stats.exclusive_collectives > 0);
  CHECK(shortcut.stats.flows > 0);
  CHECK(shortcut.step_time_s == doctest::Approx(flows_step).epsilon(1e-6));
}

TEST_CASE("contention-free collectives run as delays of exactly their flow time")
{
  // every rank, flows everywhere vs every rank, delays where links are private
  check_delays_exact(experiment("dgx-h100", 32, "gpt3-1.3b", 8, 2, 1, true, 4));
}

TEST_CASE("delays stay exact where replicas contend: 2:1 fat-tree, 256 H100, TP inside nodes, ZeRO-1 across")
{
  // TP collectives stay on private NVLink (delays); the data-parallel reduce-scatters and
  // gathers of 16 replicas share oversubscribed uplinks and remain flows
  check_delays_exact(experiment("dgx-h100-fattree-2to1", 256, "gpt3-1.3b", 8, 2, 1, true, 2));
}

TEST_CASE("the fabric changes the winner: ZeRO-3 beats TP+PP on a non-blocking fat-tree, loses at 7:1")
{
  auto fabric = [](double oversubscription) {
    PlatformSpec p = catalog().platform("dgx-h100-fattree", {});
    p.fabric.radix = 16; // leaves of 8 NIC ports up to 14 (7:1), so rings cross leaves often
    p.fabric.oversubscription = oversubscription;
    return p;
  };
  auto step = [&](double over, int tp, int pp, int zero) {
    ExperimentSpec e = experiment("dgx-h100-fattree", 128, "gpt3-6.7b", tp, pp, zero, false, 1);
    e.platform = fabric(over);
    e.training.recompute = Recompute::none;
    e.training.global_batch = 128;
    return run(e, "auto").step_time_s;
  };
  double zero3_fast = step(1, 1, 1, 3);
  double tppp_fast = step(1, 8, 4, 0);
  double zero3_slow = step(7, 1, 1, 3);
  double tppp_slow = step(7, 8, 4, 0);
  MESSAGE("step time (s), ZeRO-3 vs TP 8 x PP 4: 1:1 " << zero3_fast << " vs " << tppp_fast << ", 7:1 " << zero3_slow
                                                       << " vs " << tppp_slow);
  CHECK(zero3_fast < tppp_fast);
  CHECK(zero3_slow > tppp_slow);
}

/// Every task's ready, start and end times, with or without helping (one stream running
/// another's ready analytic collectives), and how many tasks were helped.
std::pair<std::vector<double>, std::size_t> task_times(const ExperimentSpec& e, bool help)
{
  std::string out = run_isolated([&] {
    ExecutionOptions o;
    o.help_streams = help;
    ExecutionResult r = execute_every_rank(e, o);
    std::ostringstream s;
    s.precision(17);
    s << r.stats.helped;
    for (std::size_t i = 0; i < r.end.size(); ++i)
      s << ' ' << r.start[i] << ' ' << r.end[i];
    return s.str();
  });
  std::istringstream in(out);
  std::size_t helped = 0;
  in >> helped;
  std::vector<double> times;
  for (double v = 0; in >> v;)
    times.push_back(v);
  return {times, helped};
}

TEST_CASE("a stream helped by another runs every task at the same instants")
{
  ExperimentSpec sp3d = experiment("dgx-h100", 64, "gpt3-1.3b", 8, 2, 1, true, 4);
  ExperimentSpec interleaved = sp3d;
  interleaved.training.schedule = "interleaved";
  interleaved.training.vpp = 2;
  ExperimentSpec overlapped = sp3d;
  overlapped.training.overlap.tp_comm = true;
  ExperimentSpec cp = experiment("dgx-h100", 64, "gpt3-1.3b", 8, 2, 1, true, 4);
  cp.training.cp = 2;
  cp.training.dp /= 2;
  ExperimentSpec contended = experiment("dgx-h100-fattree-2to1", 128, "gpt3-1.3b", 8, 2, 1, true, 2);
  ExperimentSpec no_sp = experiment("dgx-h100", 32, "gpt3-1.3b", 8, 4, 0, false, 8);
  // TP 4 with DP inside the node: TP and DP share NVLink, so nothing is analytic or helped
  ExperimentSpec shared = experiment("dgx-a100-80gb", 32, "gpt3-1.3b", 4, 4, 0, false, 8);
  for (const ExperimentSpec* e : {&sp3d, &interleaved, &overlapped, &cp, &contended, &no_sp, &shared}) {
    INFO(e->platform.name, " tp ", e->training.tp, " cp ", e->training.cp, " pp ", e->training.pp);
    auto [off, none] = task_times(*e, false);
    auto [on, helped] = task_times(*e, true);
    CHECK(none == 0);
    CHECK((helped > 0) == (e != &shared));
    REQUIRE(on.size() == off.size());
    REQUIRE(!on.empty());
    double diff = 0;
    for (std::size_t i = 0; i < on.size(); ++i)
      diff = std::max(diff, std::abs(on[i] - off[i]));
    CHECK(diff <= 1e-9);
  }
}
