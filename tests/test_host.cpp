// The host as a resource: a rank's CPU issues its compute kernels in order, each costing its
// framework op's host time; host synchronisations stop it running ahead; CUDA graphs replace
// the launches they capture. Closed forms on every engine, and what the step builder emits.
#include "sim/Breakdown.hpp"
#include "sim/CollectiveEngine.hpp"
#include "sim/EventEngine.hpp"
#include "sim/Timeline.hpp"
#include "sim/simgrid/Executor.hpp"
#include "sim/simgrid/SimPlatform.hpp"
#include "sim/study/Experiment.hpp"
#include "sim/study/Isolated.hpp"
#include "sim/study/Simulation.hpp"
#include "strategies/CostModel.hpp"
#include "strategies/StepBuilder.hpp"
#include "tests/TestUtil.hpp"
#include "topology/config/Yaml.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <sstream>

using namespace clustersim;
using clustersim::test::catalog;

namespace {

ExperimentSpec experiment(const std::string& yaml)
{
  return parse_experiment(YamlNode::load_string(yaml, "test.yaml"), catalog());
}

/// Ends of every task of `w` on one engine: "event", "simgrid" (in a child process: one SimGrid
/// engine per process) or "timeline", on one DGX-H100 node.
std::vector<double> ends(const Workload& w, const std::string& engine)
{
  const PlatformSpec p = catalog().platform("dgx-h100", SourceLocation{});
  ClusterGraph cluster = ClusterGraph::build(p, 8);
  const double speed = p.node.gpu.peak(Precision::bf16);
  auto encode = [](const ExecutionResult& r) {
    std::ostringstream o;
    o.precision(17);
    for (double e : r.end)
      o << e << ' ';
    return o.str();
  };
  std::string out;
  if (engine == "simgrid") {
    out = run_isolated([&] {
      CollectiveEngine collectives(cluster, catalog().protocols());
      SimPlatform platform(cluster, speed);
      return encode(execute(w, platform, collectives));
    });
  } else {
    CollectiveEngine collectives(cluster, catalog().protocols());
    out = encode(engine == "event" ? execute_events(w, collectives, speed) : evaluate_contention_free(w, collectives));
  }
  std::istringstream in(out);
  std::vector<double> v;
  for (double e; in >> e;)
    v.push_back(e);
  REQUIRE(v.size() == w.tasks().size());
  return v;
}

ExecutionResult result_of(const Workload& w, const std::vector<double>& end)
{
  // the start of each task, for the breakdown: its end less its seconds
  ExecutionResult r;
  r.end = end;
  r.start.resize(end.size());
  for (TaskId id = 0; id < end.size(); ++id)
    r.start[id] = end[id] - w.task(id).amount;
  for (double e : end)
    r.makespan = std::max(r.makespan, e);
  return r;
}

} // namespace

TEST_CASE("a step of 100 tiny kernels is host-bound at 100 x the op's host time on every engine, GPU-bound without")
{
  // 13.48 us on the x86 class, as a task holds it (a float)
  const double h = static_cast<float>(catalog().gpus().find("h100-sxm5-80gb")->host.op);
  const double g = 1e-6;
  for (bool graphed : {false, true}) {
    Workload w(1);
    TaskId prev = kNoTask;
    for (int k = 0; k < 100; ++k) {
      TaskIds deps;
      if (prev != kNoTask)
        deps.push_back(prev);
      prev = w.add_compute(0, g, {Category::forward, "tiny", 0, 0}, deps, Stream::compute, graphed ? 0.0 : h);
    }
    for (const char* engine : {"event", "simgrid", "timeline"}) {
      CAPTURE(engine);
      CAPTURE(graphed);
      const std::vector<double> end = ends(w, engine);
      const ExecutionResult r = result_of(w, end);
      const Breakdown b = analyze_rank(w, r, 0);
      if (!graphed) {
        // kernel k is issued at k x h and runs g: the GPU idles h - g between kernels
        CHECK(r.makespan == doctest::Approx(100 * h + g).epsilon(1e-12));
        CHECK(b.host == doctest::Approx(100 * h - 99 * g).epsilon(1e-9));
      } else {
        CHECK(r.makespan == doctest::Approx(100 * g).epsilon(1e-12));
        CHECK(b.host < 1e-15);
      }
      CHECK(b.compute == doctest::Approx(100 * g).epsilon(1e-9));
    }
  }
}

TEST_CASE("a host synchronisation stops the host running ahead: what depends on it is issued after it ends")
{
  const double h = static_cast<float>(20e-6); // as a task holds it
  for (bool sync : {false, true}) {
    Workload w(1);
    TaskId a = w.add_compute(0, 1e-3, {Category::forward, "a", 0, 0}, {}, Stream::compute, h);
    if (sync)
      w.set_host_sync(a); // e.g. the token counts copied to the host
    TaskId b = w.add_compute(0, 1e-6, {Category::forward, "b", 0, 0}, {a}, Stream::compute, h);
    for (const char* engine : {"event", "simgrid", "timeline"}) {
      CAPTURE(engine);
      const std::vector<double> end = ends(w, engine);
      // a runs from h to h + 1 ms; b was issued at 2h (long before), unless the host waited for a
      CHECK(end[a] == doctest::Approx(h + 1e-3).epsilon(1e-12));
      CHECK(end[b] == doctest::Approx(h + 1e-3 + (sync ? h : 0.0) + 1e-6).epsilon(1e-12));
    }
  }
}

TEST_CASE("a small model's step is host-bound at its kernels x the op's host time, and GPU-bound under a full-iteration graph")
{
  const std::string base = R"(
name: tiny
model: {layers: 2, hidden: 256, heads: 4, vocab: 512, seq_len: 128, mlp: gelu}
cluster: {platform: dgx-h100, gpus: 1}
training: {micro_batch: 1, global_batch: 4, precision: bf16, flash_attention: true)";
  ExperimentSpec eager = experiment(base + "}\n");
  ExperimentSpec graphed = experiment(base + ", cuda_graph_impl: full_iteration}\n");
  // what the host issues per micro-batch: every kernel of every block, both passes
  CostModel c(eager.model, eager.training, eager.platform.node.gpu);
  double per_mb = c.host_issue(c.embedding(), Pass::forward) + c.host_issue(c.embedding(), Pass::backward) +
                  c.host_issue(c.logits(), Pass::forward) + c.host_issue(c.logits(), Pass::backward);
  for (const BlockCost& b : {c.attention_block(), c.mlp_block()})
    per_mb += 2 * (c.host_issue(b, Pass::forward) + c.host_issue(b, Pass::backward));
  const RunMetrics e = simulate(eager, catalog());
  const RunMetrics f = simulate(graphed, catalog());
  MESSAGE("eager " << e.step_time_s << " s (host-bound " << e.breakdown.host << " s), issue " << 4 * per_mb
                   << " s; full-iteration graph " << f.step_time_s << " s");
  // the step is the host's issue time, plus the last kernels and the optimizer; the GPU idles
  // for what its kernels do not fill of it
  CHECK(e.step_time_s >= 4 * per_mb);
  CHECK(e.step_time_s == doctest::Approx(4 * per_mb).epsilon(0.05));
  CHECK(e.breakdown.host > 0.5 * e.step_time_s);
  CHECK(e.breakdown.host + e.breakdown.compute + e.breakdown.optimizer ==
        doctest::Approx(e.step_time_s).epsilon(0.02));
  CHECK(f.breakdown.host == 0);
  CHECK(f.step_time_s < 0.5 * e.step_time_s);
}

TEST_CASE("per-layer CUDA graphs replace the launches of their scope with one replay, and dropless experts stay eager")
{
  ExperimentSpec e = experiment(R"(
name: moe
model: {layers: 2, hidden: 512, heads: 8, vocab: 1024, seq_len: 256, mlp: swiglu, experts: 8, top_k: 2}
cluster: {platform: dgx-h100, gpus: 8}
training: {ep: 8, micro_batch: 1, global_batch: 8, precision: bf16, flash_attention: true}
)");
  const GpuSpec& gpu = e.platform.node.gpu;
  auto host = [&](const std::string& impl, std::vector<std::string> scope, const BlockCost& (*pick)(const CostModel&),
                  std::initializer_list<const char*> parts) {
    TrainingSpec t = e.training;
    t.cuda_graph_impl = impl;
    t.cuda_graph_scope = std::move(scope);
    CostModel c(e.model, t, gpu);
    return c.host_issue(pick(c), Pass::forward, parts);
  };
  static BlockCost attn, moe;
  auto attention = [](const CostModel& c) -> const BlockCost& { return attn = c.attention_block(); };
  auto moe_block = [](const CostModel& c) -> const BlockCost& { return moe = c.moe_block(); };
  const double launch = gpu.host.launch;
  // norm, QKV, flash attention, its output, the projection, the residual: one kernel each
  CHECK(host("none", {}, attention, {}) == doctest::Approx(6 * gpu.host.op));
  CHECK(host("transformer_engine", {"attn"}, attention, {}) == doctest::Approx(launch));
  CHECK(host("transformer_engine", {"attn"}, moe_block, {}) == doctest::Approx(host("none", {}, moe_block, {})));
  // the router part of a MoE layer: 31 kernels with Megatron's router fusion, one replay graphed
  CHECK(host("none", {}, moe_block, {"moe_router"}) >= 31 * gpu.host.op);
  CHECK(host("transformer_engine", {"moe_router", "moe_preprocess"}, moe_block, {"moe_router", "moe_preprocess"}) ==
        doctest::Approx(2 * launch));
  // an empty scope is the whole layer, but the routed experts' dynamic shapes keep them eager
  CHECK(host("local", {}, moe_block, {"moe_experts"}) == doctest::Approx(host("none", {}, moe_block, {"moe_experts"})));
  CHECK(host("local", {"moe"}, moe_block, {"moe_experts"}) == doctest::Approx(launch));
  CHECK(host("full_iteration", {}, moe_block, {}) == 0);
  // a grouped GEMM launches one GEMM per local expert (8 experts over EP 8: one each here)
  for (const OpCost& o : moe.ops)
    if (o.name == "expert_fc1")
      CHECK(o.launches_backward == 2 * o.launches_forward);
}

TEST_CASE("where Megatron's host waits: every MoE dispatch forward and every exchange of the non-interleaved pipeline")
{
  auto synced = [](const ExperimentSpec& e) {
    CostModel cost(e.model, e.training, e.platform.node.gpu);
    StepPlan plan = build_step(cost, 0);
    int n = 0;
    for (const Task& t : plan.workload.tasks())
      n += t.host_sync ? 1 : 0;
    return n;
  };
  const std::string moe = R"(
name: moe
model: {layers: 2, hidden: 512, heads: 8, vocab: 1024, seq_len: 256, mlp: swiglu, experts: 8, top_k: 2}
cluster: {platform: dgx-h100, gpus: 8}
training: {ep: 8, micro_batch: 1, global_batch: 16, precision: bf16, flash_attention: true)";
  // 2 MoE layers x 2 micro-batches x 8 ranks, forward only
  CHECK(synced(experiment(moe + "}\n")) == 2 * 2 * 8);
  CHECK(synced(experiment(moe + ", recompute: full}\n")) == 2 * 2 * 8 * 2); // and the recomputed forward
  CHECK(synced(experiment(moe + ", cuda_graph_impl: full_iteration}\n")) == 0);
  CHECK(synced(experiment(moe + ", framework: fsdp}\n")) == 0);
  const std::string pipe = R"(
name: pipe
model: {layers: 8, hidden: 512, heads: 8, vocab: 1024, seq_len: 256, mlp: gelu}
cluster: {platform: dgx-h100, gpus: 4}
training: {pp: 4, micro_batch: 1, global_batch: 8, precision: bf16)";
  // every receive of the 1F1B schedule: 8 micro-batches x 3 boundaries x 2 directions
  CHECK(synced(experiment(pipe + "}\n")) == 8 * 3 * 2);
  CHECK(synced(experiment(pipe + ", vpp: 2}\n")) == 0); // interleaved: overlap_p2p_comm, no sync
}
