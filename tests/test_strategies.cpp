// Strategies emit the tasks their closed forms predict; executed, the compute stream runs
// exactly what the cost model priced.
#include "sim/simgrid/CollectiveBench.hpp"
#include "sim/study/Experiment.hpp"
#include "sim/study/Isolated.hpp"
#include "sim/study/Metrics.hpp"
#include "sim/study/Simulation.hpp"
#include "strategies/CostModel.hpp"
#include "strategies/LayoutRules.hpp"
#include "strategies/StepBuilder.hpp"
#include "tests/TestUtil.hpp"
#include "topology/config/Yaml.hpp"

#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include <doctest/doctest.h>

using namespace clustersim;
using clustersim::test::catalog;

namespace {

ExperimentSpec dp_experiment(int gpus)
{
  ExperimentSpec e;
  e.training.frameworks = catalog().frameworks();
  e.name = "dp";
  e.model = load_model_preset("gpt3-1.3b", catalog().models_dir(), {});
  e.platform = catalog().platform("dgx-a100-80gb", {});
  e.gpus = gpus;
  e.training.dp = gpus;
  e.training.micro_batch = 2;
  e.training.global_batch = 4 * gpus;
  e.training.flash_attention = true;
  return e;
}

double collective_bytes(const Workload& w, Category c, CollOp op)
{
  double sum = 0;
  for (const auto& call : w.collectives())
    if (call.category == c && call.op == op)
      sum += call.bytes;
  return sum;
}

} // namespace

TEST_CASE("a data-parallel step computes exactly what the cost model prices")
{
  ExperimentSpec e = dp_experiment(16);
  RunMetrics m = metrics_from_json(Json::parse(run_isolated([&] { return to_json(simulate(e, catalog())).dump(); })));
  CostModel cost(e.model, e.training, e.platform.node.gpu);
  const int mbs = e.training.micro_batches();
  double per_mb = cost.embedding().forward + cost.embedding().backward + cost.logits().forward +
                  cost.logits().backward +
                  e.model.layers * (cost.attention_block().forward + cost.attention_block().backward +
                                    cost.mlp_block().forward + cost.mlp_block().backward);
  CHECK(m.breakdown.compute == doctest::Approx(mbs * per_mb).epsilon(1e-9));
  CHECK(m.breakdown.optimizer == doctest::Approx(cost.optimizer_seconds(e.model.total_params())).epsilon(1e-9));
  // GEMM-dominated: compute time is above, and near, FLOPs / (peak x sustained GEMM efficiency)
  double flops_per_gpu = cost.model_flops_per_step() / e.gpus;
  double ideal = flops_per_gpu / (312e12 * e.platform.node.gpu.gemm_of(Precision::bf16).fraction * e.platform.node.gpu.sustained);
  CHECK(m.breakdown.compute > ideal);
  CHECK(m.breakdown.compute < 1.35 * ideal); // short-K GEMMs, attention, element-wise ops and launch gaps
}

TEST_CASE("DDP reduces 2(N-1)/N x params x gradient bytes per step, in buckets")
{
  ExperimentSpec e = dp_experiment(32);
  CostModel cost(e.model, e.training, e.platform.node.gpu);
  StepPlan plan = build_step(cost);
  const Workload& w = plan.workload;
  // one bucket set per DP group (one group here)
  // the framework's reduction dtype (Megatron as NeMo's performance recipes run it: bf16)
  double grad_bytes = e.training.traits().grad_reduce(e.training.precision);
  CHECK(grad_bytes == 2.0);
  CHECK(collective_bytes(w, Category::dp_comm, CollOp::all_reduce) ==
        doctest::Approx(e.model.total_params() * grad_bytes).epsilon(1e-9));
  // a bucket closes once it reaches bucket_size, so it holds at most one unit more
  const double largest_unit = std::max(e.model.layer_params(0), e.model.embedding_params()) * grad_bytes;
  std::size_t buckets = 0;
  for (const auto& call : w.collectives())
    if (call.category == Category::dp_comm) {
      ++buckets;
      CHECK(call.bytes < 25e6 + largest_unit);
    }
  CHECK(buckets > 1);
  CHECK(buckets <= static_cast<std::size_t>(e.model.total_params() * grad_bytes / 25e6) + 1);
}

#include "sim/Breakdown.hpp"
#include "sim/CollectiveEngine.hpp"
#include "sim/simgrid/Executor.hpp"
#include "sim/simgrid/SimPlatform.hpp"

#include <fstream>

namespace {

/// A platform where communication is (almost) free: huge links, no latencies.
struct FreeComm {
  PlatformSpec platform;
  ProtocolTable protocols;
  FreeComm()
  {
    std::string dir = clustersim::test::temp_dir();
    std::ofstream(dir + "/free.yaml") << R"(name: free
node:
  gpu: a100-sxm4-80gb
  gpus: 8
  scale_up: {kind: nvswitch, bandwidth: 100TBps, latency: 0us, transport: free}
  pcie: {bandwidth: 100TBps, latency: 0us, transport: free}
  nics: {count: 8, bandwidth: 100TBps, latency: 0us, transport: free}
fabric: {kind: fat-tree, radix: 64, switch_latency: 0us}
)";
    std::ofstream(dir + "/free-coll.yaml")
        << "transports:\n  free:\n    simple: {step_latency: 0us, efficiency: 1, base_latency: 0us}\n";
    platform = load_platform(dir + "/free.yaml", catalog().gpus());
    protocols = ProtocolTable::load(dir + "/free-coll.yaml");
  }
};

ModelSpec uniform_model(int layers)
{
  ModelSpec m;
  m.name = "uniform";
  m.layers = layers;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 32;
  m.ffn_hidden = 16384;
  m.vocab = 64; // embedding and logits negligible: stages do equal work
  m.seq_len = 2048;
  return m;
}

Breakdown run_free(const TrainingSpec& t, int layers, double* step = nullptr)
{
  std::string out = run_isolated([&] {
    FreeComm free;
    CostModel cost(uniform_model(layers), t, free.platform.node.gpu);
    StepPlan plan = build_step(cost);
    ClusterGraph cg = ClusterGraph::build(free.platform, t.gpus() < 8 ? 8 : t.gpus());
    SimPlatform sp(cg, 312e12);
    CollectiveEngine ce(cg, free.protocols);
    ExecutionResult r = execute(plan.workload, sp, ce);
    Breakdown b = analyze_rank(plan.workload, r, 0);
    return std::to_string(b.step) + " " + std::to_string(b.bubble) + " " + std::to_string(b.optimizer) + " " +
           std::to_string(b.compute);
  });
  Breakdown b;
  std::istringstream in(out);
  in >> b.step >> b.bubble >> b.optimizer >> b.compute;
  if (step)
    *step = b.step;
  return b;
}

} // namespace

TEST_CASE("pipeline bubble: (p-1)/(m+p-1) for GPipe and 1F1B, (p-1)/(v*m+p-1) interleaved and looped BFS")
{
  for (auto [p, m, v, sched] : std::vector<std::tuple<int, int, int, std::string>>{{4, 8, 1, "1f1b"},
                                                                                   {4, 8, 1, "gpipe"},
                                                                                   {8, 16, 1, "1f1b"},
                                                                                   {4, 8, 2, "interleaved"},
                                                                                   {4, 12, 3, "interleaved"},
                                                                                   {4, 8, 2, "looped-bfs"},
                                                                                   {4, 6, 2, "looped-bfs"},
                                                                                   {4, 9, 3, "looped-bfs"}}) {
    TrainingSpec t;
    t.frameworks = catalog().frameworks();
    t.pp = p;
    t.vpp = v;
    t.schedule = sched;
    t.micro_batch = 1;
    t.global_batch = m;
    t.flash_attention = true;
    Breakdown b = run_free(t, 24);
    double fraction = b.bubble / (b.step - b.optimizer);
    double expected = (p - 1.0) / (v * m + p - 1.0);
    CAPTURE(p);
    CAPTURE(m);
    CAPTURE(v);
    CHECK(fraction == doctest::Approx(expected).epsilon(0.02));
  }
}

TEST_CASE("tensor parallelism: 2 all-reduces per layer forward and 2 backward, AG/RS pairs with SP")
{
  ExperimentSpec e = dp_experiment(8);
  e.training.tp = 8;
  e.training.dp = 1;
  e.training.global_batch = 2;
  CostModel cost(e.model, e.training, e.platform.node.gpu);
  auto count = [&](const Workload& w, CollOp op) {
    int n = 0;
    for (const auto& c : w.collectives())
      if (c.category == Category::tp_comm && c.op == op) {
        CHECK(c.bytes == doctest::Approx(cost.tp_message_bytes()));
        ++n;
      }
    return n;
  };
  const int mbs = e.training.micro_batches();
  const int layers = e.model.layers;
  StepPlan plain = build_step(cost);
  // per layer and micro-batch: 2 forward + 2 backward; plus the vocab-parallel embedding's
  // forward all-reduce and the logits' backward all-reduce
  CHECK(count(plain.workload, CollOp::all_reduce) == mbs * (4 * layers + 2));

  e.training.sequence_parallel = true;
  CostModel sp_cost(e.model, e.training, e.platform.node.gpu);
  StepPlan sp = build_step(sp_cost);
  // forward: AG before each block, RS after; backward: AG of the output gradient, RS of the
  // input gradient, and the input re-gather for the weight gradient
  int ag = 0, rs = 0;
  for (const auto& c : sp.workload.collectives()) {
    if (c.category != Category::tp_comm)
      continue;
    ag += c.op == CollOp::all_gather;
    rs += c.op == CollOp::reduce_scatter;
  }
  CHECK(ag == mbs * (2 * layers + 4 * layers + 2)); // + logits forward and embedding backward gathers
  CHECK(rs == mbs * (2 * layers + 2 * layers + 2)); // + embedding forward and logits backward
}

TEST_CASE("ZeRO-3 moves 1.5x the bytes of DDP")
{
  auto traffic = [](int zero) {
    ExperimentSpec e = dp_experiment(16);
    e.training.zero = zero;
    e.training.precision = Precision::fp16; // gradients and parameters both 2 bytes
    e.training.micro_batch = 1;
    e.training.global_batch = 16; // one micro-batch
    CostModel cost(e.model, e.training, e.platform.node.gpu);
    StepPlan plan = build_step(cost);
    double bytes = 0;
    for (const auto& c : plan.workload.collectives())
      if (c.category == Category::dp_comm)
        bytes += c.bytes * bus_factor(c.op, 16);
    return bytes;
  };
  double ddp = traffic(0);
  CHECK(ddp ==
        doctest::Approx(2.0 * 15 / 16 * 2 * load_model_preset("gpt3-1.3b", catalog().models_dir(), {}).total_params()));
  CHECK(traffic(3) == doctest::Approx(1.5 * ddp).epsilon(1e-9));
  CHECK(traffic(1) == doctest::Approx(ddp).epsilon(1e-9)); // reduce-scatter + all-gather = one all-reduce
}

TEST_CASE("HSDP: ZeRO-3 within groups of dp_shard replicas, each shard's gradients all-reduced across the groups")
{
  // 16 replicas in 2 shard groups of 8: the gathers and reduce-scatters of ZeRO-3 over 8 GPUs,
  // then an all-reduce of each 1/8 shard between the 2 GPUs that hold it
  ExperimentSpec e = dp_experiment(16);
  e.training.zero = 3;
  e.training.data_parallel = "hsdp";
  e.training.dp_shard = 8;
  e.training.micro_batch = 1;
  e.training.global_batch = 16;
  REQUIRE_FALSE(check_layout(e.training, e.model, e.gpus));
  CostModel cost(e.model, e.training, e.platform.node.gpu);
  StepPlan plan = build_step(cost);
  const Workload& w = plan.workload;
  double scattered = 0, reduced = 0;
  std::map<CollOp, std::set<std::vector<std::uint32_t>>> groups;
  for (const auto& c : w.collectives()) {
    if (c.category != Category::dp_comm)
      continue;
    groups[c.op].insert(w.groups()[c.group].ranks);
    if (c.op == CollOp::reduce_scatter)
      scattered += c.bytes;
    if (c.op == CollOp::all_reduce)
      reduced += c.bytes;
  }
  const std::set<std::vector<std::uint32_t>> shards{{0, 1, 2, 3, 4, 5, 6, 7}, {8, 9, 10, 11, 12, 13, 14, 15}};
  CHECK(groups[CollOp::all_gather] == shards);
  CHECK(groups[CollOp::reduce_scatter] == shards);
  std::set<std::vector<std::uint32_t>> across;
  for (std::uint32_t i = 0; i < 8; ++i)
    across.insert({i, i + 8});
  CHECK(groups[CollOp::all_reduce] == across);
  // each reduction of B bytes: a reduce-scatter of B in each of the 2 shard groups, then an
  // all-reduce of the B / 8 shard in each of the 8 replicate groups; every gradient once
  const double grads = e.model.total_params() * e.training.traits().grad_reduce(e.training.precision);
  CHECK(scattered == doctest::Approx(2 * grads).epsilon(1e-9));
  CHECK(reduced == doctest::Approx(grads).epsilon(1e-9));

  // memory: the model states of ZeRO-3 over the 8 GPUs of a shard group
  ExperimentSpec z = dp_experiment(8);
  z.training.zero = 3;
  const MemoryBreakdown hsdp = cost.memory(0);
  const MemoryBreakdown zero3 = CostModel(z.model, z.training, z.platform.node.gpu).memory(0);
  CHECK(hsdp.weights == doctest::Approx(zero3.weights).epsilon(1e-12));
  CHECK(hsdp.grads == doctest::Approx(zero3.grads).epsilon(1e-12));
  CHECK(hsdp.optimizer == doctest::Approx(zero3.optimizer).epsilon(1e-12));
}

TEST_CASE("LoRA: data parallelism reduces and the optimizer updates the adapters only")
{
  ExperimentSpec e = dp_experiment(16);
  e.training.lora.rank = 8;
  e.training.lora.targets = {"qkv", "fc2"};
  CostModel cost(e.model, e.training, e.platform.node.gpu);
  const Workload w = build_step(cost).workload;
  double adapters = 0;
  for (int l = 0; l < e.model.layers; ++l)
    adapters += cost.layer_adapters(l).params;
  // tp 1: A and B whole beside each layer: qkv h x 3h, fc2 4h x h
  const double h = e.model.hidden;
  CHECK(adapters == doctest::Approx(e.model.layers * 8 * ((h + 3 * h) + (4 * h + h))).epsilon(1e-12));
  const double grad_bytes = e.training.traits().grad_reduce(e.training.precision);
  CHECK(collective_bytes(w, Category::dp_comm, CollOp::all_reduce) ==
        doctest::Approx(adapters * grad_bytes).epsilon(1e-9));
  const RunMetrics m =
      metrics_from_json(Json::parse(run_isolated([&] { return to_json(simulate(e, catalog())).dump(); })));
  CHECK(m.breakdown.optimizer == doctest::Approx(cost.optimizer_seconds(adapters)).epsilon(1e-9));
  CHECK(m.training.lora.rank == 8);
  CHECK(m.training.lora.targets == std::vector<std::string>{"qkv", "fc2"});
}

TEST_CASE("event counts per rank follow the schedule")
{
  ExperimentSpec e = dp_experiment(8);
  e.training.pp = 4;
  e.training.dp = 2;
  e.training.micro_batch = 1;
  e.training.global_batch = 16; // 8 micro-batches per pipeline
  CostModel cost(e.model, e.training, e.platform.node.gpu);
  StepPlan plan = build_step(cost);
  const Workload& w = plan.workload;
  const int m = 8;
  const int l = e.model.layers / 4;
  // stage 1 (rank 2): per micro-batch forward 2l blocks, backward 2l; one optimizer step
  CHECK(w.program(2, Stream::compute).size() == static_cast<std::size_t>(m * 4 * l + 1));
  CHECK(w.program(2, Stream::pp_recv_fwd).size() == static_cast<std::size_t>(m));
  CHECK(w.program(2, Stream::pp_send_fwd).size() == static_cast<std::size_t>(m));
  CHECK(w.program(2, Stream::pp_recv_bwd).size() == static_cast<std::size_t>(m));
  CHECK(w.program(2, Stream::pp_send_bwd).size() == static_cast<std::size_t>(m));
  // the first stage also embeds, the last also computes the logits
  CHECK(w.program(0, Stream::compute).size() == static_cast<std::size_t>(m * (4 * l + 2) + 1));
  CHECK(w.program(0, Stream::pp_recv_fwd).empty());
}

TEST_CASE("FP8 delayed scaling: each chunk's amaxes are all-reduced over the stage's replicas after every pass, and "
          "the compute stream waits for it")
{
  ExperimentSpec e = dp_experiment(16);
  e.platform = catalog().platform("dgx-h100", {});
  e.training.precision = Precision::fp8; // Megatron's recipe: TE delayed scaling
  e.training.tp = 2;
  e.training.pp = 2;
  e.training.vpp = 2;
  e.training.dp = 4;
  e.training.schedule = "interleaved";
  e.training.micro_batch = 1;
  e.training.global_batch = 16; // 4 micro-batches per pipeline
  const Fp8Recipe* recipe = e.training.fp8();
  REQUIRE(recipe != nullptr);
  CHECK(recipe->amax_forward == 3); // input, weight, output per FP8 linear
  CHECK(recipe->amax_backward == 2); // output and input gradients
  auto amax_calls = [](const Workload& w) {
    std::vector<std::uint32_t> calls;
    for (TaskId t = 0; t < w.tasks().size(); ++t)
      if (w.task(t).kind == TaskKind::collective && w.names()[w.task(t).name] == "fp8_amax_all_reduce" &&
          w.task(t).member == 0)
        calls.push_back(w.task(t).target);
    return calls;
  };
  CostModel cost(e.model, e.training, e.platform.node.gpu);
  StepPlan plan = build_step(cost);
  const Workload& w = plan.workload;
  const auto calls = amax_calls(w);
  // stages x chunks x micro-batches x (forward, backward), one group per stage
  CHECK(calls.size() == 2u * 2 * 4 * 2);
  // 24 layers in 4 chunks of 6; 4 FP8 linears per layer (QKV, projection, FC1, FC2; the
  // vocabulary projection stays 16-bit); fp32 values
  const double linears = 6 * 4;
  int forward = 0;
  for (std::uint32_t c : calls) {
    const CollectiveCall& call = w.collectives()[c];
    CHECK(call.op == CollOp::all_reduce);
    CHECK(w.groups()[call.group].ranks.size() == 8u); // tp x dp of the stage
    if (call.bytes == doctest::Approx(4 * 3 * linears))
      ++forward;
    else
      CHECK(call.bytes == doctest::Approx(4 * 2 * linears));
  }
  CHECK(forward == 16);

  // executed: latency-bound, a delay of its predicted time that the next compute task waits for
  std::string out = run_isolated([&] {
    ClusterGraph cg = ClusterGraph::build(e.platform, e.gpus);
    SimPlatform sp(cg, e.platform.node.gpu.peak(Precision::bf16));
    CollectiveEngine ce(cg, catalog().protocols());
    ExecutionResult r = execute(w, sp, ce);
    int checked = 0, waited = 0;
    const auto& program = w.program(0, Stream::compute);
    for (std::size_t i = 0; i + 1 < program.size(); ++i) {
      const Task& t = w.task(program[i]);
      if (t.kind != TaskKind::collective)
        continue;
      const ExecPlan& p = ce.plan(w, t.target);
      checked += p.latency_bound && std::fabs(r.end[program[i]] - r.start[program[i]] - p.predicted_s) < 1e-12;
      waited += r.start[program[i + 1]] >= r.end[program[i]] - 1e-12;
    }
    return std::to_string(checked) + " " + std::to_string(waited);
  });
  CHECK(out == "16 16"); // rank 0 (stage 0): 2 chunks x 4 micro-batches x 2 passes

  // no reduction: BF16, a recipe without amax history, one rank per stage
  for (int variant = 0; variant < 3; ++variant) {
    ExperimentSpec v = e;
    if (variant == 0)
      v.training.precision = Precision::bf16;
    if (variant == 1)
      v.training.fp8_recipe = "tensorwise";
    if (variant == 2) {
      v.gpus = 2;
      v.training.tp = 1;
      v.training.dp = 1;
      v.training.global_batch = 4;
    }
    CAPTURE(variant);
    CostModel c(v.model, v.training, v.platform.node.gpu);
    CHECK(amax_calls(build_step(c).workload).empty());
  }
}

TEST_CASE("a report crosses JSON without loss: every figure of the metric table and every layout key")
{
  // distinct values in every figure: a reader that stores one in another's place is caught
  RunMetrics m;
  m.name = "roundtrip";
  m.platform = "p";
  m.model = "m";
  m.gpus = 64;
  m.training.tp = 2;
  m.training.pp = 4;
  m.training.dp = 8;
  m.training.cp = 1;
  m.training.ep = 4;
  m.training.etp = 2;
  m.training.vpp = 3;
  m.training.zero = 3;
  m.training.data_parallel = "hsdp";
  m.training.dp_shard = 4;
  m.training.lora.rank = 8;
  m.training.lora.targets = {"proj", "fc1"};
  m.training.schedule = "interleaved";
  m.training.sequence_parallel = true;
  m.training.recompute = Recompute::selective;
  m.training.micro_batch = 2;
  m.training.global_batch = 512;
  m.training.precision = Precision::fp8;
  m.training.flash_attention = true;
  m.training.framework = Framework::torchtitan;
  m.has_least_loaded = true;
  double v = 1.25;
  for (const Metric& k : report_metrics()) {
    k.set(m, v);
    if (k.share)
      m.least_loaded.*k.share = 100 + v;
    v += 1;
  }
  const Json j = to_json(m);
  const RunMetrics back = metrics_from_json(j);
  CHECK(to_json(back) == j);
  for (const Metric& k : report_metrics()) {
    CAPTURE(k.key);
    CHECK(k.get(back) == k.get(m));
    if (k.share)
      CHECK(back.least_loaded.*k.share == m.least_loaded.*k.share);
  }
  for (const LayoutField& f : layout_fields()) {
    CAPTURE(f.key);
    CHECK(f.get(back.training) == f.get(m.training));
  }
  // and a simulated step, its pipeline and breakdown included, read back from the child that ran it
  ExperimentSpec e = dp_experiment(16);
  e.training.dp = 8;
  e.training.pp = 2;
  e.training.vpp = 2;
  e.training.schedule = "interleaved";
  e.training.recompute = Recompute::full;
  e.training.global_batch = 64;
  const std::string out = run_isolated([&] { return to_json(simulate(e, catalog())).dump(); });
  const Json sim = Json::parse(out);
  CHECK(to_json(metrics_from_json(sim)) == sim);
  CHECK(sim["layout"]["pipeline_schedule"] == "interleaved");
  CHECK(sim["layout"]["recompute"] == "full");
  // the breakdown's terms add up to the step: recompute is not counted twice
  double sum = 0;
  for (const Metric& k : report_metrics())
    if (k.part == MetricPart::breakdown)
      sum += sim["breakdown"][k.key].get<double>();
  CHECK(sim["breakdown"]["recompute_s"].get<double>() > 0);
  CHECK(sum == doctest::Approx(sim["step_time_s"].get<double>()).epsilon(1e-9));
}

TEST_CASE("ZeRO's overlapped parameter gathers skip a bucket of no parameters: every collective moves bytes")
{
  // Mixtral with one expert group per rank (ep 1): a pipeline stage's expert pool can hold no
  // parameters, and its bucket was once gathered anyway, a collective of 0 bytes (a tool that
  // replays the step, ASTRA-sim, waits on it forever)
  ExperimentSpec e = parse_experiment(YamlNode::load_string(R"(
model: mixtral-8x7b
cluster: {platform: dgx-h100, gpus: 64}
training: {tp: 2, pp: 2, ep: 1, dp: 16, zero: 1, micro_batch: 1, global_batch: 64, precision: bf16,
           sequence_parallel: true, overlap: {grad_reduce: true, param_gather: true}}
)",
                                                            "zero-bytes.yaml"),
                                    catalog());
  CostModel cost(e.model, e.training, e.platform.node.gpu);
  const StepPlan plan = build_step(cost);
  std::size_t gathers = 0;
  for (const auto& call : plan.workload.collectives()) {
    CHECK(call.bytes > 0);
    gathers += call.op == CollOp::all_gather && call.category == Category::dp_comm;
  }
  CHECK(gathers > 0);
}
