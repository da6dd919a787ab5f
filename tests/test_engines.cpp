// The event engine against closed-form max-min sharing and against SimGrid's actors (the
// reference): the same step, every task ending at the same instant.
#include "sim/EventEngine.hpp"
#include "sim/MaxMinNetwork.hpp"
#include "sim/study/Experiment.hpp"
#include "sim/study/Isolated.hpp"
#include "sim/study/Metrics.hpp"
#include "sim/study/Random.hpp"
#include "sim/study/Simulation.hpp"
#include "sim/study/Validation.hpp"
#include "strategies/CostModel.hpp"
#include "strategies/StepBuilder.hpp"
#include "tests/TestUtil.hpp"
#include "topology/config/Yaml.hpp"

#include <nlohmann/json.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <sstream>

using namespace clustersim;
using clustersim::test::catalog;
using clustersim::test::read_file;
using clustersim::test::run_cli;
using clustersim::test::temp_dir;
using clustersim::test::write_temp;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// Rates of every live flow of `net` after a solve at `now`.
void solve(MaxMinNetwork& net, double now = 0) { net.solve(now); }

/// Max-min fair rates by the textbook progressive filling, one bottleneck at a time: the
/// reference the incremental solver is held to.
std::vector<double> reference_maxmin(const std::vector<double>& cap, const std::vector<std::vector<int>>& routes,
                                     const std::vector<double>& bounds)
{
  const std::size_t n = routes.size();
  std::vector<double> rate(n, -1);
  std::vector<double> left = cap;
  std::size_t fixed = 0;
  while (fixed < n) {
    double share = kInf;
    int bottleneck = -1;
    for (std::size_t r = 0; r < cap.size(); ++r) {
      int users = 0;
      for (std::size_t f = 0; f < n; ++f)
        if (rate[f] < 0 && std::find(routes[f].begin(), routes[f].end(), static_cast<int>(r)) != routes[f].end())
          ++users;
      if (users > 0 && std::max(0.0, left[r]) / users < share) {
        share = std::max(0.0, left[r]) / users;
        bottleneck = static_cast<int>(r);
      }
    }
    double least_bound = kInf;
    for (std::size_t f = 0; f < n; ++f)
      if (rate[f] < 0)
        least_bound = std::min(least_bound, bounds[f]);
    for (std::size_t f = 0; f < n; ++f) {
      if (rate[f] >= 0)
        continue;
      const bool on = bottleneck >= 0 && std::find(routes[f].begin(), routes[f].end(), bottleneck) != routes[f].end();
      double v = -1;
      if (least_bound <= share && bounds[f] == least_bound)
        v = least_bound;
      else if (least_bound > share && on)
        v = share;
      if (v < 0)
        continue;
      rate[f] = v;
      ++fixed;
      for (int r : routes[f])
        left[static_cast<std::size_t>(r)] -= v;
    }
  }
  return rate;
}

} // namespace

TEST_CASE("max-min: two flows on one link share it equally, and one's end speeds up the other")
{
  MaxMinNetwork net({10.0});
  auto a = net.start(0, {0}, 10);
  auto b = net.start(0, {0}, 30);
  solve(net);
  CHECK(net.rate(a) == doctest::Approx(5));
  CHECK(net.rate(b) == doctest::Approx(5));
  // a ends at 10 / 5 = 2 s; b has 20 left and then runs alone at 10: ends at 4 s
  CHECK(net.next_end() == doctest::Approx(2));
  CHECK(net.pop_end(2) == a);
  solve(net, 2);
  CHECK(net.rate(b) == doctest::Approx(10));
  CHECK(net.next_end() == doctest::Approx(4));
  CHECK(net.pop_end(4) == b);
  CHECK(net.active() == 0);
  CHECK(net.load(0) == 0);
}

TEST_CASE("max-min: the parking lot gives the long flow the same share as each short one")
{
  // three links of capacity 1 in a row; one flow crosses all three, one flow per link
  MaxMinNetwork net({1.0, 1.0, 1.0});
  auto long_flow = net.start(0, {0, 1, 2}, 1);
  std::vector<MaxMinNetwork::FlowId> shorts;
  for (int r = 0; r < 3; ++r)
    shorts.push_back(net.start(0, {r}, 1));
  solve(net);
  CHECK(net.rate(long_flow) == doctest::Approx(0.5));
  for (auto f : shorts)
    CHECK(net.rate(f) == doctest::Approx(0.5));
  // unequal capacities: the long flow is held at the narrow link, the others take the rest
  MaxMinNetwork lot({1.0, 3.0});
  auto l = lot.start(0, {0, 1}, 1);
  auto s0 = lot.start(0, {0}, 1);
  auto s1 = lot.start(0, {1}, 1);
  solve(lot);
  CHECK(lot.rate(l) == doctest::Approx(0.5));
  CHECK(lot.rate(s0) == doctest::Approx(0.5));
  CHECK(lot.rate(s1) == doctest::Approx(2.5));
}

TEST_CASE("max-min: bounded flows keep their bound and leave the rest to the others")
{
  MaxMinNetwork net({10.0});
  auto paced = net.start(0, {0}, 1, 2.0);
  auto free1 = net.start(0, {0}, 1);
  auto free2 = net.start(0, {0}, 1);
  solve(net);
  CHECK(net.rate(paced) == doctest::Approx(2));
  CHECK(net.rate(free1) == doctest::Approx(4));
  CHECK(net.rate(free2) == doctest::Approx(4));
  // a bound above the fair share is not reached
  MaxMinNetwork two({10.0});
  auto hi = two.start(0, {0}, 1, 7.0);
  auto lo = two.start(0, {0}, 1);
  solve(two);
  CHECK(two.rate(hi) == doctest::Approx(5));
  CHECK(two.rate(lo) == doctest::Approx(5));
  // a flow never outruns its narrowest resource, bound or not
  MaxMinNetwork path({10.0, 4.0});
  auto f = path.start(0, {0, 1}, 8);
  solve(path);
  CHECK(path.rate(f) == doctest::Approx(4));
  CHECK(path.next_end() == doctest::Approx(2));
  CHECK(path.stats().fast_starts == 1);
}

TEST_CASE("max-min: flows that fit start at their bound without a solve, and one fills a resource exactly")
{
  MaxMinNetwork net({10.0});
  auto a = net.start(0, {0}, 1, 4.0);
  auto b = net.start(0, {0}, 1, 6.0); // fills the link exactly
  solve(net);
  CHECK(net.rate(a) == 4);
  CHECK(net.rate(b) == 6);
  CHECK(net.stats().fast_starts == 2);
  CHECK(net.stats().solves == 0);
  // a third, unbounded flow on the full link: the fair share 10/3 is below both bounds
  auto c = net.start(0, {0}, 1);
  solve(net);
  CHECK(net.stats().solves == 1);
  for (auto f : {a, b, c})
    CHECK(net.rate(f) == doctest::Approx(10.0 / 3));
  // paced flows whose bounds sum to the capacity up to rounding still fit
  MaxMinNetwork ring({1e11});
  const double bytes = 123456789.0;
  const double wire_time = 8 * bytes / 1e11;
  for (int i = 0; i < 8; ++i)
    ring.start(0, {0}, bytes, bytes / wire_time);
  solve(ring);
  CHECK(ring.stats().fast_starts == 8);
  CHECK(ring.next_end() == doctest::Approx(wire_time).epsilon(1e-12));
}

TEST_CASE("max-min: a border resource that binds joins the component")
{
  // Z (6) carries g alone: g runs at 6. Y (10) carries g and f. X (5) carries f and h.
  // Initially f and h share X at 2.5 each; Y has 4 to spare. When h ends, X frees 2.5 for f,
  // the component is X and f, Y is its border with 10 - 6 = 4 left: f at min(5, 4) = 4 would
  // be held by Y while g gets 6 there, so Y joins and f and g share it: 5 each.
  MaxMinNetwork net({6.0, 10.0, 5.0}); // Z, Y, X
  auto g = net.start(0, {0, 1}, 100);
  auto f = net.start(0, {1, 2}, 100);
  auto h = net.start(0, {2}, 2.5);
  solve(net);
  CHECK(net.rate(g) == doctest::Approx(6));
  CHECK(net.rate(f) == doctest::Approx(2.5));
  CHECK(net.rate(h) == doctest::Approx(2.5));
  CHECK(net.next_end() == doctest::Approx(1));
  CHECK(net.pop_end(1) == h);
  solve(net, 1);
  CHECK(net.rate(f) == doctest::Approx(5));
  CHECK(net.rate(g) == doctest::Approx(5));
  CHECK(reference_maxmin({6, 10, 5}, {{0, 1}, {1, 2}}, {kInf, kInf}) == std::vector<double>{5, 5});
}

TEST_CASE("max-min: random starts and ends always give the textbook allocation")
{
  // random fabrics of 12 resources, flows of 1-4 hops, some paced; after every solve the
  // incremental rates equal progressive filling from scratch
  std::mt19937_64 gen(7);
  struct {
    std::mt19937_64& g;
    std::uint64_t below(std::uint64_t n) { return g() % n; }
  } rng{gen};
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<double> cap;
    for (int r = 0; r < 12; ++r)
      cap.push_back(1 + static_cast<double>(rng.below(8)));
    MaxMinNetwork net(cap);
    std::vector<MaxMinNetwork::FlowId> live;
    std::vector<std::vector<int>> routes;
    std::vector<double> bounds;
    double now = 0;
    for (int step = 0; step < 30; ++step) {
      const int starts = static_cast<int>(rng.below(4));
      for (int k = 0; k < starts; ++k) {
        std::vector<int> route;
        const int hops = 1 + static_cast<int>(rng.below(4));
        while (static_cast<int>(route.size()) < hops) {
          int r = static_cast<int>(rng.below(12));
          if (std::find(route.begin(), route.end(), r) == route.end())
            route.push_back(r);
        }
        double bound = rng.below(3) == 0 ? 0.25 + static_cast<double>(rng.below(12)) / 4 : kInf;
        live.push_back(net.start(now, route, 1 + static_cast<double>(rng.below(20)), bound));
        double narrow = bound;
        for (int r : route)
          narrow = std::min(narrow, cap[static_cast<std::size_t>(r)]);
        routes.push_back(route);
        bounds.push_back(narrow);
      }
      net.solve(now);
      std::vector<double> want = reference_maxmin(cap, routes, bounds);
      for (std::size_t i = 0; i < live.size(); ++i)
        REQUIRE(net.rate(live[i]) == doctest::Approx(want[i]).epsilon(1e-9));
      // the next flow to end leaves
      const double t = net.next_end();
      if (t == kInf)
        continue;
      now = t;
      const auto ended = net.pop_end(now);
      const auto at = static_cast<std::size_t>(std::find(live.begin(), live.end(), ended) - live.begin());
      REQUIRE(at < live.size());
      live.erase(live.begin() + static_cast<long>(at));
      routes.erase(routes.begin() + static_cast<long>(at));
      bounds.erase(bounds.begin() + static_cast<long>(at));
    }
  }
}

namespace {

ExperimentSpec experiment(const std::string& yaml)
{
  return parse_experiment(YamlNode::load_string(yaml, "test.yaml"), catalog());
}

struct Comparison {
  double simgrid_step = 0;
  double event_step = 0;
  double worst_end = 0; ///< s, the largest difference of a task's end between the engines
  std::size_t tasks = 0;
  std::size_t flows = 0;
  std::string mode;
};

/// Runs `e` on both engines in one child (SimGrid allows one engine per process; the event
/// engine uses none) and compares every task's end.
Comparison compare_engines(ExperimentSpec e)
{
  std::string out = run_isolated([&] {
    e.engine = "simgrid";
    ExecutionResult ref;
    RunMetrics a = simulate(e, catalog(), nullptr, &ref);
    e.engine = "event";
    ExecutionResult ev;
    RunMetrics b = simulate(e, catalog(), nullptr, &ev);
    double worst = ref.end.size() == ev.end.size() ? 0 : kInf;
    for (std::size_t i = 0; i < ref.end.size() && i < ev.end.size(); ++i)
      worst = std::max(worst, std::fabs(ref.end[i] - ev.end[i]));
    char buf[256];
    std::snprintf(buf, sizeof buf, "%.17g %.17g %.17g %zu %zu %s", a.step_time_s, b.step_time_s, worst,
                  ref.end.size(), a.stats.flows, a.mode.c_str());
    return std::string(buf);
  });
  Comparison c;
  std::istringstream in(out);
  in >> c.simgrid_step >> c.event_step >> c.worst_end >> c.tasks >> c.flows >> c.mode;
  REQUIRE(in);
  MESSAGE("simgrid " << c.simgrid_step << " s, event " << c.event_step << " s, worst task end "
                     << c.worst_end << " s over " << c.tasks << " tasks, " << c.flows << " flows, " << c.mode);
  return c;
}

void check_same(const Comparison& c)
{
  CHECK(c.event_step == doctest::Approx(c.simgrid_step).epsilon(1e-9));
  CHECK(c.worst_end <= 1e-8);
}

} // namespace

TEST_CASE("the workload keeps, as it is built, each stream's next task, each call's members and its sends")
{
  Workload w(4);
  w.simulate_only({0, 1, 2});
  const Workload::Label label{Category::forward, "k", 0, 0};
  const TaskId a = w.add_compute(0, 1.0, label, {});
  const auto [s, r] = w.add_p2p(0, 1, 8.0, Stream::pp_send_fwd, Stream::pp_recv_fwd, label, {a}, {});
  const TaskId b = w.add_compute(0, 1.0, label, {});
  const std::uint32_t g = w.add_group({0, 1, 2, 3});
  const auto members = w.add_collective(CollOp::all_reduce, g, 64.0, Stream::dp, label, {});
  const TaskId c = w.add_compute(0, 1.0, label, {});
  CHECK(w.next(a) == b);
  CHECK(w.next(b) == c);
  CHECK(w.next(c) == kNoTask);
  CHECK(w.next(s) == kNoTask);
  CHECK(w.next(r) == kNoTask);
  REQUIRE(w.collectives().size() == 1);
  CHECK(w.collectives()[0].present == 3); // rank 3 is a mirror: no task
  CHECK(w.collectives()[0].stream == Stream::dp);
  CHECK(members[3] == kNoTask);
  REQUIRE(w.sends().size() == 1);
  CHECK(w.sends()[0] == s);
  CHECK(w.one_compute_stream());
  w.add_compute(1, 1.0, label, {}, Stream::tp); // rank 1 computes on the tp stream only: still one
  CHECK(w.one_compute_stream());
  w.add_compute(1, 1.0, label, {}); // and now on two
  CHECK_FALSE(w.one_compute_stream());
  // what the engines read off the workload is what its tasks say
  std::vector<std::uint32_t> present(w.collectives().size(), 0);
  for (const Task& t : w.tasks())
    if (t.kind == TaskKind::collective)
      ++present[t.target];
  CHECK(shape_of(w).present == present);
}


TEST_CASE("a task keeps its labels in 32 bytes, its dependencies run to the next task's, and a stream reads alike as a walk and as an array")
{
  static_assert(sizeof(Task) == 32);
  Workload w(2);
  const TaskId a = w.add_compute(0, 1.0, {Category::backward, "big", kMaxTaskLayer, kMaxTaskMicroBatch}, {});
  const TaskId b = w.add_compute(0, 1.0, {Category::recompute, "none", -1, -1}, {a}, Stream::tp, 0.25);
  const auto [s, r] = w.add_p2p(0, 1, 8.0, Stream::pp_send_fwd, Stream::pp_recv_fwd,
                                {Category::pp_comm, "p2p", 100000, 7}, {a, b}, {});
  w.set_host_sync(b);
  CHECK(w.task(a).layer == kMaxTaskLayer);
  CHECK(w.task(a).micro_batch == kMaxTaskMicroBatch);
  CHECK(w.task(a).category == Category::backward);
  CHECK_FALSE(w.task(a).host_sync);
  CHECK(w.task(b).layer == -1);
  CHECK(w.task(b).micro_batch == -1);
  CHECK(w.task(b).stream == Stream::tp);
  CHECK(w.task(b).host_sync);
  CHECK(w.task(b).host_seconds() == 0.0); // a compute task off the compute stream issues nothing
  CHECK(w.task(s).layer == 100000);
  CHECK(w.task(s).kind == TaskKind::send);
  CHECK(w.task(r).kind == TaskKind::recv);
  CHECK(w.task(r).stream == Stream::pp_recv_fwd);
  CHECK(w.deps_end(a) == w.deps_begin(a));
  REQUIRE(w.deps_end(b) - w.deps_begin(b) == 1);
  REQUIRE(w.deps_end(s) - w.deps_begin(s) == 2);
  CHECK(w.deps_end(r) == w.deps_begin(r)); // the last task's list ends with the array
  CHECK_THROWS_AS(w.add_compute(0, 1.0, {Category::forward, "k", kMaxTaskLayer + 1, 0}, {}), std::length_error);
  CHECK_THROWS_AS(w.add_compute(0, 1.0, {Category::forward, "k", 0, kMaxTaskMicroBatch + 1}, {}), std::length_error);
  CHECK(w.tasks().size() == 4); // nothing was added by a refused label

  const TaskId c = w.add_compute(0, 2.0, {Category::forward, "k", 0, 0}, {});
  CHECK(w.first(0, Stream::compute) == a);
  CHECK(w.last(0, Stream::compute) == c);
  CHECK(w.first(1, Stream::compute) == kNoTask);
  CHECK(w.stream(1, Stream::compute).empty());
  const std::vector<TaskId> made = w.program(0, Stream::compute);
  CHECK(made == std::vector<TaskId>{a, c});
  const TaskId d = w.add_compute(0, 2.0, {Category::forward, "k", 0, 0}, {}); // after the array was made
  CHECK(w.program(0, Stream::compute) == std::vector<TaskId>{a, c, d});
  std::vector<TaskId> walked;
  for (TaskId id : w.stream(0, Stream::compute))
    walked.push_back(id);
  CHECK(walked == w.program(0, Stream::compute));
  CHECK(w.previous(d) == c);
}
TEST_CASE("a workload appended on other GPUs keeps its groups, calls, transfers and dependencies, and appended again it follows itself stream by stream")
{
  const Workload::Label label{Category::forward, "k", 0, 0};
  Workload job(2);
  const TaskId a = job.add_compute(0, 1.0, label, {});
  job.add_p2p(0, 1, 8.0, Stream::pp_send_fwd, Stream::pp_recv_fwd, label, {a}, {});
  const std::uint32_t g = job.add_group({0, 1});
  job.add_collective(CollOp::all_reduce, g, 64.0, Stream::dp, label, {}, job.algo_index("ring"));
  Workload all(3);
  all.add_compute(0, 2.0, {Category::optimizer, "other", -1, -1}, {});
  const TaskId first = all.append(job, {4, 2});
  const TaskId second = all.append(job, {4, 2});
  CHECK(all.ranks() == 5);
  CHECK(first == 1);
  CHECK(second == first + job.tasks().size());
  REQUIRE(all.groups().size() == 2); // each step's groups: the second step's calls are on its own
  REQUIRE(all.collectives().size() == 2);
  for (std::uint32_t k = 0; k < 2; ++k) {
    const CollectiveCall& c = all.collectives()[k];
    CHECK(all.groups()[k].ranks == std::vector<std::uint32_t>{4, 2});
    CHECK(c.group == k);
    CHECK(c.present == 2);
    CHECK(all.algo_names()[c.algo] == "ring");
  }
  for (TaskId copy : {first, second}) {
    const Task& compute = all.task(copy);
    CHECK(compute.rank == 4);
    CHECK(all.names()[compute.name] == "k");
    const Task& send = all.task(copy + 1);
    const Task& recv = all.task(copy + 2);
    CHECK(send.kind == TaskKind::send);
    CHECK(send.rank == 4);
    CHECK(recv.rank == 2);
    CHECK(send.target == copy + 2);
    CHECK(recv.target == copy + 1);
    REQUIRE(all.deps_end(copy + 1) - all.deps_begin(copy + 1) == 1);
    CHECK(*all.deps_begin(copy + 1) == copy);
    CHECK(all.task(copy + 3).target == (copy == first ? 0u : 1u));
  }
  // the second step follows the first on each of its streams
  CHECK(all.next(first) == second);
  CHECK(all.next(first + 1) == second + 1);
  CHECK(all.next(first + 3) == second + 3);
  CHECK(all.sends().size() == 2);
  CHECK(all.program(3, Stream::compute).empty());
  CHECK_THROWS_AS(all.append(job, {4}), std::logic_error);
}

TEST_CASE("a task is ready when its stream predecessor and its dependencies have ended")
{
  Workload w(1);
  const Workload::Label label{Category::forward, "k", 0, 0};
  const TaskId a = w.add_compute(0, 1.0, label, {});
  const TaskId b = w.add_compute(0, 2.0, label, {}, Stream::tp);
  const TaskId c = w.add_compute(0, 1.0, label, {b});
  const TaskId d = w.add_compute(0, 1.0, label, {});
  CHECK(w.previous(a) == kNoTask);
  CHECK(w.previous(b) == kNoTask);
  CHECK(w.previous(c) == a);
  CHECK(w.previous(d) == c);
  ExecutionResult r;
  r.end = {1.0, 2.0, 3.0, 4.0};
  r.start = {0.0, 0.0, 2.0, 3.0};
  CHECK(ready_time(w, r, a) == 0.0);
  CHECK(ready_time(w, r, b) == 0.0);
  CHECK(ready_time(w, r, c) == 2.0); // its dependency on the other stream ended last
  CHECK(ready_time(w, r, d) == 3.0); // its predecessor
}

TEST_CASE("engines agree: Llama-3 405B on the 2:1 fat-tree, 512 GPUs, tp 8 pp 16 vpp 7, ZeRO-1 with overlap")
{
  Comparison c = compare_engines(experiment(R"(
name: llama3-2to1
model: llama3-405b
cluster: {platform: dgx-h100-fattree-2to1, gpus: 512}
training: {tp: 8, pp: 16, vpp: 7, dp: 4, zero: 1, pipeline_schedule: interleaved, micro_batch: 1, global_batch: 64,
           precision: bf16, sequence_parallel: true, flash_attention: true, recompute: selective,
           overlap: {grad_reduce: true, param_gather: true}}
)"));
  CHECK(c.mode == "full");
  CHECK(c.flows > 10000);
  check_same(c);
}

TEST_CASE("engines agree: a 64-GPU MoE whose all-to-all crosses 2:1 leaves")
{
  Comparison c = compare_engines(experiment(R"(
name: moe-2to1
model: mixtral-8x7b
cluster: {platform: dgx-h100-fattree-2to1, gpus: 64}
training: {tp: 1, pp: 1, dp: 64, ep: 8, zero: 1, micro_batch: 1, global_batch: 64, precision: bf16,
           flash_attention: true, recompute: full}
)"));
  CHECK(c.flows > 1000);
  check_same(c);
}

TEST_CASE("engines agree: ZeRO-3 on the 2:1 fat-tree, where gathers and copies share the GPU")
{
  Comparison c = compare_engines(experiment(R"(
name: zero3-2to1
model: gpt3-1.3b
cluster: {platform: dgx-h100-fattree-2to1, gpus: 64}
training: {zero: 3, micro_batch: 1, global_batch: 64, precision: bf16, flash_attention: true}
)"));
  CHECK(c.mode == "full");
  check_same(c);
}

TEST_CASE("engines agree: a tree all-reduce across nodes")
{
  Comparison c = compare_engines(experiment(R"(
name: tree
model: gpt3-2.7b
cluster: {platform: dgx-h100, gpus: 64}
training: {tp: 2, pp: 2, zero: 0, micro_batch: 1, global_batch: 64, precision: bf16, sequence_parallel: true,
           flash_attention: true, recompute: selective}
)"));
  CHECK(c.mode == "full");
  check_same(c);
}

TEST_CASE("engines agree: stragglers and a degraded cable")
{
  Comparison c = compare_engines(experiment(R"(
name: faults
model: gpt3-6.7b
cluster: {platform: dgx-h100-fattree-2to1, gpus: 128}
training: {tp: 4, pp: 2, zero: 1, micro_batch: 1, global_batch: 128, precision: bf16, sequence_parallel: true,
           flash_attention: true, recompute: selective, overlap: {grad_reduce: true}}
faults:
  seed: 3
  stragglers: [{fraction: 0.05, factor: 1.4}]
  links: [{link: leaf0-spine0, factor: 0.25}]
)"));
  CHECK(c.mode == "full");
  check_same(c);
}

TEST_CASE("engines agree: ECMP on the 2:1 fat-tree, with a failed cable hashed around and a background on the rest")
{
  Comparison c = compare_engines(experiment(R"(
name: ecmp
model: gpt3-6.7b
cluster: {platform: dgx-h100-fattree-2to1, gpus: 128, routing: ecmp, seed: 5, background: {load: 0.6, tier: leaf-up}}
training: {tp: 4, pp: 2, zero: 1, micro_batch: 1, global_batch: 128, precision: bf16, sequence_parallel: true,
           flash_attention: true, recompute: selective, overlap: {grad_reduce: true}}
faults:
  links: [{link: leaf0-spine0, down: true}]
)"));
  CHECK(c.mode == "full");
  CHECK(c.flows > 1000);
  check_same(c);
}

TEST_CASE("engines agree: two jobs on interleaved nodes of the 2:1 fat-tree under ECMP, the second trailing by a phase")
{
  Comparison c = compare_engines(experiment(R"(
name: shared
model: gpt3-1.3b
cluster:
  platform: dgx-h100-fattree-2to1
  gpus: 64
  routing: ecmp
  placement: interleaved
  jobs: [{name: other, model: gpt3-350m, gpus: 64, phase: 0.3, training: {tp: 2, dp: 32, micro_batch: 2, global_batch: 128}}]
training: {tp: 2, pp: 2, zero: 1, micro_batch: 1, global_batch: 64, sequence_parallel: true, overlap: {grad_reduce: true}}
)"));
  CHECK(c.mode == "full");
  CHECK(c.flows > 1000);
  check_same(c);
}

TEST_CASE("a rank's communication is slowed only where its flows share links: none in the contention-free evaluation, some on hashed 2:1 up-links")
{
  const std::string yaml = R"(
name: comm
model: gpt3-1.3b
cluster: {platform: dgx-h100-fattree-2to1, gpus: 64, routing: ecmp}
training: {tp: 2, pp: 2, zero: 1, micro_batch: 1, global_batch: 64, sequence_parallel: true, overlap: {grad_reduce: true}}
simulation: {mode: )";
  const RunMetrics free = simulate_isolated(experiment(yaml + "analytic}\n"), catalog());
  const RunMetrics full = simulate_isolated(experiment(yaml + "full}\n"), catalog());
  CHECK(free.comm_s > 0);
  CHECK(free.comm_s == doctest::Approx(free.comm_idle_s).epsilon(1e-9));
  CHECK(free.comm_slowed_s == 0.0);
  // the same calls alone on the fabric: the same idle time; run together, some take longer
  CHECK(full.comm_idle_s == doctest::Approx(free.comm_idle_s).epsilon(1e-9));
  CHECK(full.comm_slowed_s > 0.1 * full.comm_idle_s);
  CHECK(full.comm_s >= full.comm_idle_s + full.comm_slowed_s - 1e-12);
  const Metric* share = find_metric("network_bound_share");
  REQUIRE(share != nullptr);
  CHECK(share->get(full) == doctest::Approx(full.breakdown.exposed_comm() / full.step_time_s));
}

TEST_CASE("engines agree: static (D-mod-k) routing with a failed cable, and adaptive routing, on the 2:1 fat-tree")
{
  for (const std::string routing : {"static", "adaptive"}) {
    CAPTURE(routing);
    Comparison c = compare_engines(experiment(R"(
name: routing
model: gpt3-6.7b
cluster: {platform: dgx-h100-fattree-2to1, gpus: 128, routing: )" + routing + R"(}
training: {tp: 4, pp: 2, zero: 1, micro_batch: 1, global_batch: 128, precision: bf16, sequence_parallel: true,
           flash_attention: true, recompute: selective, overlap: {grad_reduce: true}}
faults:
  links: [{link: leaf0-spine0, down: true}]
)"));
    CHECK(c.mode == "full");
    check_same(c);
  }
}

TEST_CASE("a fabric what-if: 1:1 and 2:1 agree under ideal spreading, ECMP's hashing sets them apart by seed, queue pairs hashed apart win part of it back")
{
  // Llama-3 70B on 512 H100 (issue: rail 1:1 against 2:1 came out 17.7776 s against 17.7789 s)
  auto step = [](const std::string& platform, const std::string& cluster_extra) {
    ExperimentSpec e = experiment("name: l70\nmodel: llama3-70b\ncluster: {platform: " + platform +
                                  ", gpus: 512" + cluster_extra +
                                  "}\ntraining: {tp: 8, pp: 4, vpp: 5, dp: 16, zero: 1, pipeline_schedule: interleaved, "
                                  "micro_batch: 1, global_batch: 512, precision: bf16, sequence_parallel: true, "
                                  "flash_attention: true, overlap: {grad_reduce: true, param_gather: true}}\n");
    return simulate_isolated(e, catalog()).step_time_s;
  };
  const double rail_ideal = step("dgx-h100", "");
  const double tree_ideal = step("dgx-h100-fattree-2to1", "");
  CHECK(tree_ideal == doctest::Approx(rail_ideal).epsilon(0.002));
  std::vector<double> tree_ecmp;
  for (int seed : {1, 2, 3})
    tree_ecmp.push_back(step("dgx-h100-fattree-2to1", ", routing: ecmp, seed: " + std::to_string(seed)));
  MESSAGE("rail ideal " << rail_ideal << " s, 2:1 ideal " << tree_ideal << " s, 2:1 ecmp seeds 1-3: " << tree_ecmp[0]
                        << ", " << tree_ecmp[1] << ", " << tree_ecmp[2] << " s");
  for (double t : tree_ecmp)
    CHECK(t > tree_ideal * 1.002); // collisions on the up-links cost time at every seed
  CHECK(*std::max_element(tree_ecmp.begin(), tree_ecmp.end()) >
        *std::min_element(tree_ecmp.begin(), tree_ecmp.end()) * 1.001); // and how much depends on the seed
  // Meta's E-ECMP: four queue pairs per connection, each hashed apart, win back part of the loss
  for (int seed : {1, 2, 3}) {
    const std::string s = std::to_string(seed);
    const double one = step("dgx-h100-fattree-2to1", ", routing: ecmp-qp, qps_per_connection: 1, seed: " + s);
    const double four = step("dgx-h100-fattree-2to1", ", routing: ecmp-qp, qps_per_connection: 4, seed: " + s);
    MESSAGE("seed " << seed << ": ecmp-qp with 4 queue pairs " << four << " s");
    CHECK(one == tree_ecmp[static_cast<std::size_t>(seed - 1)]);
    CHECK(four < tree_ecmp[static_cast<std::size_t>(seed - 1)] - 0.4 * (tree_ecmp[static_cast<std::size_t>(seed - 1)] - tree_ideal));
    CHECK(four > tree_ideal);
  }
}

TEST_CASE("rail-only: dense and MoE steps equal rail-optimized's, since NCCL's PXN relays over NVLink on both")
{
  // Wang et al. (arXiv 2307.12169): dense training is identical without a spine; all-to-all
  // must be forwarded over NVLink to the destination's rail, which NCCL's PXN already does on a
  // rail-optimized fabric
  auto run = [](const std::string& kind, const std::string& model_training) {
    return experiment("name: r\nmodel: " + model_training.substr(0, model_training.find('|')) +
                      "\ncluster: {platform: {base: dgx-h100, fabric: {kind: " + kind +
                      "}}, gpus: 64}\ntraining: " + model_training.substr(model_training.find('|') + 1) +
                      "\nsimulation: {mode: full}\n");
  };
  const std::string dense = "llama3-8b|{tp: 8, pp: 2, dp: 4, zero: 1, micro_batch: 1, global_batch: 32, "
                            "precision: bf16, sequence_parallel: true, flash_attention: true}";
  const std::string moe = "qwen3-30b-a3b|{tp: 1, pp: 1, dp: 64, ep: 32, zero: 1, micro_batch: 1, global_batch: 128, "
                          "precision: bf16, flash_attention: true, recompute: full}";
  CHECK(simulate_isolated(run("rail-only", dense), catalog()).step_time_s ==
        doctest::Approx(simulate_isolated(run("rail-optimized", dense), catalog()).step_time_s).epsilon(1e-9));
  const Comparison only = compare_engines(run("rail-only", moe));
  check_same(only);
  const Comparison opt = compare_engines(run("rail-optimized", moe));
  CHECK(only.event_step == doctest::Approx(opt.event_step).epsilon(1e-9));
}

TEST_CASE("engines agree: a folded step")
{
  Comparison c = compare_engines(experiment(R"(
name: folded
model: gpt3-6.7b
cluster: {platform: dgx-h100, gpus: 256}
training: {tp: 8, pp: 4, micro_batch: 1, global_batch: 64, precision: bf16, flash_attention: true,
           recompute: selective}
)"));
  CHECK(c.mode == "folded");
  check_same(c);
}

TEST_CASE("the report names the engine that ran, and simgrid stays selectable")
{
  ExperimentSpec e = experiment(R"(
name: small
model: gpt3-1.3b
cluster: {platform: dgx-h100, gpus: 16}
training: {tp: 2, pp: 2, micro_batch: 1, global_batch: 16, precision: bf16}
simulation: {engine: simgrid}
)");
  CHECK(e.engine == "simgrid");
  RunMetrics m = simulate_isolated(e, catalog());
  CHECK(m.engine == "simgrid");
  e.engine = "event";
  CHECK(simulate_isolated(e, catalog()).engine == "event");
  e.mode = "analytic";
  CHECK(simulate_isolated(e, catalog()).engine == "timeline");
  CHECK(experiment("name: d\nmodel: gpt3-1.3b\ncluster: {platform: dgx-h100, gpus: 8}\ntraining: {tp: 8, "
                   "global_batch: 8}\n")
            .engine == "event");
  CHECK_THROWS_WITH_AS(experiment("name: d\nmodel: gpt3-1.3b\ncluster: {platform: dgx-h100, gpus: 8}\ntraining: "
                                  "{tp: 8, global_batch: 8}\nsimulation: {engine: simgird}\n"),
                       doctest::Contains("valid: event, simgrid"), ConfigError);
}


TEST_CASE("run on SimGrid with a smaller scaling baseline: the baseline's child runs before SimGrid starts in the process")
{
  // SimGrid allows one engine per process: a baseline forked after the run inherited its engine
  // and aborted ("Cannot change the model after the initialization")
  const std::string f = write_temp("sg-baseline.yaml", "name: x\nmodel: gpt3-125m\ncluster: {platform: dgx-h100, gpus: "
                                                       "16}\ntraining: {tp: 1, pp: 1, micro_batch: 1, global_batch: "
                                                       "16}\nsimulation: {engine: simgrid}\n");
  const auto sg = run_cli("run " + f + " --json");
  REQUIRE(sg.exit_code == 0);
  const auto j = nlohmann::json::parse(sg.out);
  CHECK(j.at("simulation").at("engine") == "simgrid");
  CHECK(j.at("baseline_gpus") == 8);
  const std::string g = write_temp("ev-baseline.yaml", read_file(f).substr(0, read_file(f).find("simulation")));
  const auto ev = nlohmann::json::parse(run_cli("run " + g + " --json").out);
  CHECK(j.at("scaling_efficiency").get<double>() ==
        doctest::Approx(ev.at("scaling_efficiency").get<double>()).epsilon(1e-9));
}

TEST_CASE("the incremental solve gives every task the same end as filling every flow again at each change")
{
  // ZeRO-1 reductions and gathers of 16 replicas share the 2:1 uplinks with pipeline transfers
  ExperimentSpec e = experiment(R"(
name: incremental
model: gpt3-2.7b
cluster: {platform: dgx-h100-fattree-2to1, gpus: 128}
training: {tp: 4, pp: 2, zero: 1, micro_batch: 1, global_batch: 64, precision: bf16, sequence_parallel: true,
           flash_attention: true, overlap: {grad_reduce: true, param_gather: true}}
)");
  ClusterGraph cluster = ClusterGraph::build(e.platform, e.gpus);
  CostModel cost(e.model, e.training, e.platform.node.gpu);
  StepPlan plan = build_step(cost, 0);
  CollectiveEngine collectives(cluster, catalog().protocols());
  const double speed = e.platform.node.gpu.peak(e.training.precision);
  EventEngineStats fast_stats;
  EventEngineStats full_stats;
  ExecutionResult fast = execute_events(plan.workload, collectives, speed, {}, &fast_stats);
  ExecutionOptions every;
  every.incremental_sharing = false;
  ExecutionResult full = execute_events(plan.workload, collectives, speed, every, &full_stats);
  REQUIRE(fast.end.size() == full.end.size());
  double worst = 0;
  for (std::size_t i = 0; i < fast.end.size(); ++i)
    worst = std::max(worst, std::fabs(fast.end[i] - full.end[i]));
  MESSAGE("worst task end difference " << worst << " s; incremental: " << fast_stats.network.solves << " solves of "
                                       << fast_stats.network.solved_flows << " flows, full: "
                                       << full_stats.network.solved_flows << " flows");
  CHECK(worst <= 1e-12 * fast.makespan);
  CHECK(fast_stats.network.fast_starts > 0);
  CHECK(fast_stats.network.solved_flows < full_stats.network.solved_flows);
}

TEST_CASE("a folded step whose mirror flows contend: both engines equal the full simulation")
{
  // NeMo AutoModel's gpt-oss-120b on 64 H100 (moe.yaml): ZeRO-3 gathers over 64 ranks, 8
  // simulated, share NICs with the reduce-scatters. Flows to and from mirrors are host-to-host
  // comms in the SimGrid executor; SimGrid 3.32 dropped their pacing rate, and the folded step
  // came out 0.27 ms (8e-5) short of the full one.
  ValidationCase c;
  for (auto& v : load_validation_cases(clustersim::test::validation_path("moe.yaml"), catalog()))
    if (v.id == "automodel_2510_h100_gptoss120b_64gpu")
      c = v;
  REQUIRE(c.id == "automodel_2510_h100_gptoss120b_64gpu");
  std::vector<double> steps;
  for (const char* mode : {"auto", "full"})
    for (const char* engine : {"simgrid", "event"}) {
      ExperimentSpec e = c.experiment;
      e.mode = mode;
      e.engine = engine;
      RunMetrics m = simulate_isolated(e, catalog());
      CHECK(m.mode == (std::string(mode) == "auto" ? "folded" : "full"));
      steps.push_back(m.step_time_s);
    }
  for (double s : steps)
    CHECK(s == doctest::Approx(steps[3]).epsilon(1e-9));
}

TEST_CASE("simulation.seeds runs ECMP seeds: the report is the median seed's, with the band over all of them")
{
  const std::string base = "name: s\nmodel: gpt3-1.3b\ncluster: {platform: dgx-h100-fattree-2to1, gpus: 128, routing: ecmp, "
                           "seed: SEED}\ntraining: {tp: 1, pp: 1, dp: 128, zero: 0, micro_batch: 1, global_batch: 128, "
                           "precision: bf16}\n";
  auto with_seed = [&base](int seed) {
    std::string y = base;
    return y.replace(y.find("SEED"), 4, std::to_string(seed));
  };
  std::vector<double> each;
  for (int seed = 4; seed < 9; ++seed)
    each.push_back(simulate_isolated(experiment(with_seed(seed)), catalog()).step_time_s);
  const std::string file = write_temp("seeds.yaml", with_seed(4) + "simulation: {seeds: 5}\n");
  auto r = run_cli("run " + file + " --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  const auto& band = j.at("seeds");
  CHECK(band.at("count") == 5);
  CHECK(band.at("first") == 4);
  std::vector<double> sorted = each;
  std::sort(sorted.begin(), sorted.end());
  const auto& step = band.at("step_time_s");
  CHECK(step.at("min").get<double>() == doctest::Approx(sorted[0]).epsilon(1e-12));
  CHECK(step.at("max").get<double>() == doctest::Approx(sorted[4]).epsilon(1e-12));
  CHECK(step.at("p50").get<double>() == doctest::Approx(sorted[2]).epsilon(1e-12));
  CHECK(step.at("p10").get<double>() == doctest::Approx(sorted[0] + 0.4 * (sorted[1] - sorted[0])).epsilon(1e-12));
  CHECK(step.at("p90").get<double>() == doctest::Approx(sorted[3] + 0.6 * (sorted[4] - sorted[3])).epsilon(1e-12));
  CHECK(sorted[4] > sorted[0]); // the seeds differ
  // the report is the median seed's run
  const int reported = band.at("reported");
  CHECK(j.at("step_time_s").get<double>() == doctest::Approx(sorted[2]).epsilon(1e-12));
  CHECK(each[static_cast<std::size_t>(reported - 4)] == doctest::Approx(sorted[2]).epsilon(1e-12));
  auto text = run_cli("run " + file);
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("step over ECMP seeds") != std::string::npos);
  // in a sweep the rows carry the band
  const std::string sweep = write_temp("seeds-sweep.yaml", with_seed(4) + "simulation: {seeds: 3}\n"
                                                                          "sweep: {axes: {cluster.gpus: [64, 128]}}\n");
  const std::string out = temp_dir();
  auto s = run_cli("run " + sweep + " --out " + out);
  REQUIRE_MESSAGE(s.exit_code == 0, s.err);
  const std::string csv = read_file(out + "/results.csv");
  CHECK(csv.find("step_time_p10_s,step_time_p50_s,step_time_p90_s") != std::string::npos);
}

TEST_CASE("link load per tier: within the link's capacity, ECMP's hashing shows as a busiest link above the mean")
{
  auto run = [](const std::string& cluster) {
    return simulate_isolated(experiment("name: n\nmodel: gpt3-1.3b\ncluster: {platform: dgx-h100-fattree-2to1, gpus: 128" +
                                        cluster +
                                        "}\ntraining: {tp: 1, pp: 1, dp: 128, zero: 0, micro_batch: 1, "
                                        "global_batch: 128, precision: bf16}\nsimulation: {mode: full}\n"),
                             catalog());
  };
  auto tier = [](const RunMetrics& m, LinkTier t) {
    for (const TierLoad& l : m.network)
      if (l.tier == t)
        return l;
    FAIL("no tier " << to_string(t));
    return TierLoad{};
  };
  const RunMetrics ideal = run("");
  const RunMetrics ecmp = run(", routing: ecmp, seed: 5");
  for (const RunMetrics* m : {&ideal, &ecmp}) {
    REQUIRE(m->network.size() == 4); // NVLink, PCIe, NICs, leaf up-links (two levels)
    for (const TierLoad& l : m->network) {
      const std::string name = to_string(l.tier);
      CAPTURE(name);
      CHECK(l.used > 0);
      CHECK(l.used <= l.links);
      CHECK(l.busiest_load <= 1 + 1e-9); // no link moves more than it can in the step
      CHECK(l.mean_load <= l.busiest_load * (1 + 1e-12));
      CHECK(l.mean_load > 0);
    }
  }
  // the same bytes leave the NICs whatever the routing
  CHECK(tier(ecmp, LinkTier::nic).bytes == doctest::Approx(tier(ideal, LinkTier::nic).bytes).epsilon(1e-12));
  // ideal spreading loads a leaf's up-links as one bundle; hashing loads some cables more
  const TierLoad up_ideal = tier(ideal, LinkTier::leaf_up);
  const TierLoad up_ecmp = tier(ecmp, LinkTier::leaf_up);
  CHECK(up_ecmp.busiest_load / up_ecmp.mean_load > 1.5 * up_ideal.busiest_load / up_ideal.mean_load);
  // folded and full steps load a simulated rank's links alike
  auto folded = [](const std::string& mode) {
    return simulate_isolated(experiment("name: f\nmodel: gpt3-1.3b\ncluster: {platform: dgx-h100, gpus: 64}\n"
                                        "training: {tp: 8, pp: 1, dp: 8, micro_batch: 1, global_batch: 64, "
                                        "precision: bf16, sequence_parallel: true}\nsimulation: {mode: " +
                                        mode + "}\n"),
                             catalog());
  };
  const RunMetrics f = folded("auto");
  const RunMetrics full = folded("full");
  REQUIRE(f.mode == "folded");
  for (LinkTier t : {LinkTier::scale_up, LinkTier::nic})
    CHECK(tier(f, t).busiest_load == doctest::Approx(tier(full, t).busiest_load).epsilon(1e-9));
}

TEST_CASE("per-tier speeds and ratios: 1:7 leaves, and up-links twice the NICs' rate take an ECMP collision without loss")
{
  auto platform = [](const std::string& fabric) {
    return catalog().platform(write_temp("tier.yaml", "base: dgx-h100\nname: tier\nnode: {nics: {bandwidth: 200Gbps}}\n"
                                                      "fabric: {kind: fat-tree, routing: ecmp, " +
                                                          fabric + "}\n"),
                              {});
  };
  auto up_cables = [](const ClusterGraph& cg) {
    int n = 0;
    for (const Resource& r : cg.resources())
      n += r.name.rfind("leaf0-spine", 0) == 0 ? 1 : 0;
    return n;
  };
  // radix 64: 1:1 is 32 down and 32 up, 2:1 42 and 21, 1:7 8 and 56
  CHECK(up_cables(ClusterGraph::build(platform("oversubscription: 1"), 512)) == 32);
  CHECK(up_cables(ClusterGraph::build(platform("oversubscription: 2"), 512)) == 21);
  CHECK(up_cables(ClusterGraph::build(platform("oversubscription: 0.142857142857"), 512)) == 56);
  // MegaScale (NSDI'24 section 3.6): 200G down-links under 400G up-links, so that two flows
  // hashed onto one up-link still run at their NICs' rate
  for (const char* link : {"200Gbps", "400Gbps"}) {
    CAPTURE(link);
    ClusterGraph cg = ClusterGraph::build(platform(std::string("oversubscription: 1, link_bandwidth: ") + link), 512);
    // two GPUs of node 0 whose flows to node 40 ECMP puts on one up-link of leaf 0
    std::vector<int> ra;
    std::vector<int> rb;
    int up = -1;
    for (int a = 0; a < 8 && up < 0; ++a)
      for (int b = a + 1; b < 8 && up < 0; ++b) {
        ra.clear();
        rb.clear();
        cg.route(a, 320 + a, ra);
        cg.route(b, 320 + b, rb);
        for (int r : ra)
          if (cg.resources()[static_cast<std::size_t>(r)].name.rfind("leaf0-spine", 0) == 0 &&
              std::find(rb.begin(), rb.end(), r) != rb.end())
            up = r;
      }
    REQUIRE(up >= 0);
    std::vector<double> cap;
    for (const Resource& r : cg.resources())
      cap.push_back(r.bandwidth);
    MaxMinNetwork net(cap);
    const auto fa = net.start(0, ra, 1e9);
    const auto fb = net.start(0, rb, 1e9);
    net.solve(0);
    const double nic = 200e9 / 8;
    const double want = std::string(link) == "400Gbps" ? nic : nic / 2;
    CHECK(net.rate(fa) == doctest::Approx(want));
    CHECK(net.rate(fb) == doctest::Approx(want));
  }
}
