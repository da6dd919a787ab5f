// The transformer cost model against closed forms.
#include "strategies/CostModel.hpp"
#include "strategies/LayoutRules.hpp"
#include "strategies/PipelineSchedule.hpp"
#include "tests/TestUtil.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <set>
#include <tuple>

using namespace clustersim;
using clustersim::test::catalog;

namespace {

ModelSpec gpt(int layers, int hidden, int heads, int vocab, int seq)
{
  ModelSpec m;
  m.name = "gpt";
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.ffn_hidden = 4 * hidden;
  m.vocab = vocab;
  m.seq_len = seq;
  return m;
}

/// A Llama-style layer: SwiGLU MLP of `ffn` columns, no biases.
ModelSpec swiglu(int layers, int hidden, int heads, int vocab, int seq, int ffn)
{
  ModelSpec m = gpt(layers, hidden, heads, vocab, seq);
  m.mlp = MlpKind::swiglu;
  m.ffn_hidden = ffn;
  m.bias = false;
  return m;
}

} // namespace

TEST_CASE("model and hardware FLOPs equal Narayanan et al.'s closed forms exactly")
{
  const GpuSpec& gpu = *catalog().gpus().find("a100-sxm4-80gb");
  for (auto m : {gpt(96, 12288, 96, 51200, 2048), gpt(24, 2304, 24, 51200, 2048), gpt(128, 25600, 160, 51200, 2048)}) {
    TrainingSpec t;
    t.frameworks = catalog().frameworks();
    t.global_batch = 1536;
    t.micro_batch = 1;
    t.dp = 1536;
    const double B = t.global_batch, s = m.seq_len, l = m.layers, h = m.hidden, V = m.vocab;
    t.recompute = Recompute::none;
    CostModel none(m, t, gpu);
    double model = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
    CHECK(none.model_flops_per_step() == doctest::Approx(model).epsilon(1e-12));
    CHECK(none.hardware_flops_per_step() == doctest::Approx(model).epsilon(1e-12));
    t.recompute = Recompute::full;
    CostModel full(m, t, gpu);
    double hw = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
    CHECK(full.hardware_flops_per_step() == doctest::Approx(hw).epsilon(1e-12));
  }
}

TEST_CASE("a large aligned GEMM runs at peak x the GPU's GEMM efficiency")
{
  const GpuSpec& gpu = *catalog().gpus().find("a100-sxm4-80gb");
  TrainingSpec t;
  t.frameworks = catalog().frameworks();
  CostModel c(gpt(1, 1024, 8, 1000, 128), t, gpu);
  // 108 SMs x 256x128 tiles: 27 x 40 = 1080 tiles = exactly 10 waves, no padding; what is left
  // is the K factor and the sustained-throughput factor
  double m = 27 * 256, n = 40 * 128, k = 8192;
  double eff = std::min(gpu.gemm_of(Precision::bf16).ceiling * k / (k + gpu.gemm_k_overhead),
                        gpu.gemm_of(Precision::bf16).fraction) * gpu.sustained;
  CHECK(c.gemm_efficiency(m, n, k) == doctest::Approx(eff));
  CHECK(c.gemm_seconds(m, n, k) == doctest::Approx(2 * m * n * k / (312e12 * eff)));
}

#include "topology/config/Yaml.hpp"

#include <cmath>

TEST_CASE("every preset's parameter count matches its published count")
{
  for (const auto& name : model_preset_names(catalog().models_dir())) {
    CAPTURE(name);
    ModelSpec m = load_model_preset(name, catalog().models_dir(), {});
    REQUIRE(m.published_params > 0);
    double ours = m.total_params();
    if (m.published_digits > 0) {
      // a rounded figure: ours must round to it (GPT-3's Medium is the documented exception:
      // its Table 2.1 architecture has 356M, published as 350M)
      double scale = std::pow(10.0, std::floor(std::log10(ours)) - (m.published_digits - 1));
      double rounded = std::round(ours / scale) * scale;
      if (name == "gpt3-350m")
        CHECK(ours == doctest::Approx(m.published_params).epsilon(0.02));
      else
        CHECK(rounded == doctest::Approx(m.published_params).epsilon(1e-9));
    } else {
      CHECK(ours == doctest::Approx(m.published_params).epsilon(0.005));
    }
  }
}

TEST_CASE("best-shape GEMM efficiency reproduces the measured MAMF within 5 % (A100, H100, B200, GB200), or the "
          "training shapes' median where the catalog states one below it")
{
  YamlNode root = YamlNode::load_file(clustersim::test::validation_path("gemm_mamf.yaml"));
  std::map<std::string, std::string> gpu_of{{"mamf_bf16_NVIDIA_A100_SXM", "a100-sxm4-80gb"},
                                            {"mamf_bf16_NVIDIA_H100_SXM", "h100-sxm5-80gb"},
                                            {"mamf_bf16_NVIDIA_B200_SXM", "b200"},
                                            {"mamf_bf16_NVIDIA_GB200_SXM", "gb200"}};
  int checked = 0;
  for (const auto& e : root.items()) {
    std::map<std::string, YamlNode> f;
    for (auto& [k, v] : e.entries())
      f.emplace(k.as_string(), v);
    auto it = gpu_of.find(f.at("id").as_string());
    if (it == gpu_of.end())
      continue;
    const GpuSpec& gpu = *catalog().gpus().find(it->second);
    std::string shape = f.at("best_shape_MxNxK").as_string();
    double m = std::stod(shape.substr(0, shape.find('x')));
    shape = shape.substr(shape.find('x') + 1);
    double n = std::stod(shape.substr(0, shape.find('x')));
    double k = std::stod(shape.substr(shape.find('x') + 1));
    TrainingSpec t;
    t.frameworks = catalog().frameworks();
    CostModel c(gpt(1, 1024, 8, 1000, 128), t, gpu);
    // the benchmark measures a GEMM in isolation: without the sustained-in-training factor
    double predicted = 2 * m * n * k / c.gemm_seconds(m, n, k) / 1e12 / gpu.sustained;
    double measured = f.at("mamf_tflops").as_number(0, 1e9);
    const GemmMeasurement& g = gpu.gemm_of(Precision::bf16);
    CAPTURE(it->second);
    CHECK(g.fraction * gpu.peak(Precision::bf16) / 1e12 == doctest::Approx(measured).epsilon(1e-6));
    if (g.shapes_median > 0)
      measured = g.shapes_median * gpu.peak(Precision::bf16) / 1e12;
    CHECK(predicted == doctest::Approx(measured).epsilon(0.05));
    ++checked;
  }
  CHECK(checked == 4);
}

TEST_CASE("a training stack's measured median caps every shape: B200's GEMMs run flat at it, H100's at the MAMF")
{
  TrainingSpec t;
  t.frameworks = catalog().frameworks();
  const GpuSpec& b200 = *catalog().gpus().find("b200");
  const GemmMeasurement& g = b200.gemm_of(Precision::bf16);
  REQUIRE(g.shapes_median > 0);
  CHECK(g.shapes_median < g.fraction);
  CHECK(g.limit() == g.shapes_median);
  CostModel c(gpt(1, 1024, 8, 1000, 128), t, b200);
  // Llama-3 70B's fc1 (tp 1) and its tp 8 slice, and a 16K cube: one rate, the stated median
  const double capped = g.shapes_median * b200.sustained * b200.power_factor();
  for (auto [m, n, k] : {std::array<double, 3>{4096, 57344, 8192}, {4096, 7168, 8192}, {16384, 16384, 16384}}) {
    CAPTURE(n);
    CHECK(c.gemm_efficiency(m, n, k) == doctest::Approx(capped));
  }
  // a short K (the mainloop's prologue and epilogue unamortized) stays below the cap
  CHECK(c.gemm_efficiency(149 * 256, 128, 128) < 0.7 * capped);
  // FP8's cap is TE's FP8 Linear at 8192^3 (2,377.1 TFLOP/s, TransformerEngine#1747) less the
  // delayed recipe's input and weight casts that call made, as this catalog prices them
  const GemmMeasurement& g8 = b200.gemm_of(Precision::fp8);
  const Fp8Recipe& delayed = catalog().frameworks()->recipe("delayed");
  const double n8 = 8192, flops8 = 2 * n8 * n8 * n8;
  const double casts =
      n8 * n8 * (delayed.input.bytes(2) + delayed.weight.bytes(2)) / (b200.hbm_bandwidth * b200.hbm_efficiency);
  CHECK(g8.shapes_median * b200.peak(Precision::fp8) ==
        doctest::Approx(flops8 / (flops8 / 2377.1e12 - casts)).epsilon(0.001));
  CHECK(g8.limit() == g8.shapes_median);
  // H100 states none: its large GEMMs reach the MAMF
  const GpuSpec& h100 = *catalog().gpus().find("h100-sxm5-80gb");
  CostModel ch(gpt(1, 1024, 8, 1000, 128), t, h100);
  CHECK(ch.gemm_efficiency(4096, 57344, 8192) ==
        doctest::Approx(h100.gemm_of(Precision::bf16).fraction * h100.sustained * h100.power_factor()));
}

TEST_CASE("small and skinny GEMMs lose efficiency: wave quantization and the memory roofline")
{
  const GpuSpec& gpu = *catalog().gpus().find("h100-sxm5-80gb");
  TrainingSpec t;
  t.frameworks = catalog().frameworks();
  CostModel c(gpt(1, 1024, 8, 1000, 128), t, gpu);
  // 132 tiles of 256x128 fill the 132 SMs once; one more tile row leaves the last wave nearly
  // empty whatever the tile
  const double full_wave = c.gemm_efficiency(132 * 256, 128, 4096);
  CHECK(full_wave == doctest::Approx(std::min(gpu.gemm_of(Precision::bf16).ceiling * 4096 / (4096 + gpu.gemm_k_overhead),
                                              gpu.gemm_of(Precision::bf16).fraction) *
                                     gpu.sustained));
  CHECK(c.gemm_efficiency(133 * 256, 128, 4096) < 0.7 * full_wave);
  // a short K pays the mainloop's prologue and epilogue
  CHECK(c.gemm_efficiency(132 * 256, 128, 256) == doctest::Approx(full_wave * (256.0 / 512) / (4096.0 / 4352)));
  // K = 16: bytes dominate, the GEMM runs at the memory roofline
  double m = 8192, n = 8192, k = 16;
  double bytes = 2 * (m * k + k * n + m * n);
  CHECK(c.gemm_seconds(m, n, k) == doctest::Approx(c.memory_seconds(bytes)));
}

TEST_CASE("memory: ZeRO shards states over data parallelism, TP and PP over the model")
{
  const GpuSpec& gpu = *catalog().gpus().find("a100-sxm4-80gb");
  ModelSpec m = load_model_preset("gpt3-13b", catalog().models_dir(), {});
  auto mem = [&](int tp, int pp, int dp, int zero) {
    TrainingSpec t;
    t.frameworks = catalog().frameworks();
    t.tp = tp;
    t.pp = pp;
    t.dp = dp;
    t.zero = zero;
    t.micro_batch = 1;
    t.global_batch = dp * pp;
    CostModel c(m, t, gpu);
    return c.memory(0);
  };
  MemoryBreakdown base = mem(1, 1, 8, 0);
  // Megatron, bf16, as its performance recipes run: bf16 weights and gradients, fp32 master
  // weights and Adam moments (Megatron-LM's own fp32 main gradients: state_bytes.grads 4)
  CHECK(base.weights + base.grads + base.optimizer == doctest::Approx(16 * m.total_params()));
  MemoryBreakdown z1 = mem(1, 1, 8, 1);
  CHECK(z1.optimizer == doctest::Approx(base.optimizer / 8));
  CHECK(z1.grads == doctest::Approx(base.grads));
  MemoryBreakdown z2 = mem(1, 1, 8, 2);
  CHECK(z2.grads == doctest::Approx(base.grads / 8));
  MemoryBreakdown z3 = mem(1, 1, 8, 3);
  CHECK(z3.weights == doctest::Approx(base.weights / 8));
  MemoryBreakdown tp = mem(8, 1, 1, 0);
  CHECK(tp.weights == doctest::Approx(base.weights / 8).epsilon(0.01));
  // activations per layer: s b h (34 + 5 a s / h) bytes (Korthikanti et al. 2022), no TP
  TrainingSpec t;
  t.frameworks = catalog().frameworks();
  t.micro_batch = 1;
  t.global_batch = 1;
  CostModel c(m, t, gpu);
  double s = m.seq_len, h = m.hidden, a = m.heads;
  double per_layer = s * h * (34 + 5 * a * s / h);
  // plus the embedding's 1-byte dropout mask (its output is the first layer's input, counted there)
  CHECK(c.memory(0).activations == doctest::Approx(m.layers * per_layer + s * h * 1).epsilon(1e-9));
  // 1F1B holds p micro-batches on the first stage, GPipe all of them
  TrainingSpec p4 = t;
  p4.pp = 4;
  p4.global_batch = 16;
  CostModel one(m, p4, gpu);
  p4.schedule = "gpipe";
  CostModel gp(m, p4, gpu);
  CHECK(gp.memory(0).activations > 3.9 * one.memory(0).activations);
}

namespace {

/// Four pipeline stages of two chunks each, one replica, micro-batches of one sequence.
TrainingSpec four_stages_two_chunks(int micro_batches)
{
  TrainingSpec t;
  t.frameworks = catalog().frameworks();
  t.pp = 4;
  t.dp = 1;
  t.micro_batch = 1;
  t.global_batch = micro_batches;
  t.vpp = 2;
  return t;
}

} // namespace

TEST_CASE("a pipeline schedule is a registered class: the layout rules, the memory model and the planner's "
          "options ask it, not its name")
{
  const GpuSpec& gpu = *catalog().gpus().find("h100-sxm5-80gb");
  ModelSpec m = gpt(8, 1024, 16, 32000, 2048);
  TrainingSpec t = four_stages_two_chunks(6); // 6 micro-batches: not a multiple of pp
  t.schedule = "interleaved";
  auto refused = check_layout(t, m, 4);
  REQUIRE(refused);
  CHECK(refused->key == "global_batch");
  CHECK(refused->reason == "interleaved: micro-batches per pipeline not a multiple of pp");
  // looped BFS runs the same chunks without that rule, every micro-batch in flight as GPipe
  t.schedule = "looped-bfs";
  CHECK(!check_layout(t, m, 4));
  TrainingSpec gpipe = t;
  gpipe.vpp = 1;
  gpipe.schedule = "gpipe";
  CHECK(CostModel(m, t, gpu).memory(0).activations ==
        doctest::Approx(CostModel(m, gpipe, gpu).memory(0).activations).epsilon(1e-9));
  TrainingSpec one = t;
  one.vpp = 1;
  auto unchunked = check_layout(one, m, 4);
  REQUIRE(unchunked);
  CHECK(unchunked->key == "pipeline_schedule");
  CHECK(unchunked->message == "the looped-bfs schedule needs vpp >= 2");
  // what each framework calls it, and whether the planner searches it unasked
  const PipelineSchedule& bfs = ScheduleRegistry::instance().shared("looped-bfs");
  CHECK(std::string(bfs.torchtitan_name()) == "LoopedBFS");
  CHECK(!bfs.in_megatron());
  CHECK(!bfs.searched());
  CHECK(ScheduleRegistry::instance().shared("interleaved").searched());
  CHECK(std::string(default_schedule(1)) == "1f1b");
  CHECK(std::string(default_schedule(2)) == "interleaved");
}

TEST_CASE("interleaved 1F1B groups micro-batches as the framework does: Megatron-LM by pp, PyTorch by rounds of "
          "m / max(1, m / pp)")
{
  const GpuSpec& gpu = *catalog().gpus().find("h100-sxm5-80gb");
  ModelSpec m = gpt(8, 1024, 16, 32000, 2048);
  TrainingSpec t = four_stages_two_chunks(10); // not a multiple of pp, a multiple of the 2 rounds
  t.schedule = "interleaved";
  REQUIRE(check_layout(t, m, 4));
  t.framework = Framework::torchtitan;
  CHECK(!check_layout(t, m, 4));
  t.global_batch = 3; // fewer than pp: one round of 3
  CHECK(!check_layout(t, m, 4));
  t.global_batch = 9; // 2 rounds do not divide 9
  auto refused = check_layout(t, m, 4);
  REQUIRE(refused);
  CHECK(refused->reason == "interleaved: micro-batches per pipeline not a multiple of the rounds");
  CHECK(refused->message.find("(9) to be a multiple of the rounds (2)") != std::string::npos);

  const PipelineSchedule& il = ScheduleRegistry::instance().shared("interleaved");
  const PipelineShape torch{4, 10, 2, true};
  CHECK(torch.rounds() == 2);
  CHECK(torch.group() == 5);
  for (int stage = 0; stage < 4; ++stage) {
    const auto ops = il.order(stage, torch);
    REQUIRE(ops.size() == 40u); // every micro-batch's forward and backward through both chunks once
    std::set<std::tuple<bool, int, int>> seen;
    for (const auto& op : ops)
      seen.insert({op.forward, op.micro_batch, op.chunk});
    CHECK(seen.size() == 40u);
    // warm-up: (v-1)N + 2(p-1-s) chunk forwards before the first backward
    const auto first_bwd = std::find_if(ops.begin(), ops.end(), [](const PipelineOp& op) { return !op.forward; });
    CHECK(first_bwd - ops.begin() == 5 + 2 * (3 - stage) + 1);
    // rounds of 5 micro-batches through chunk 0, then chunk 1
    CHECK(ops[4].chunk == 0);
    CHECK(ops[4].micro_batch == 4);
    CHECK(ops[5].chunk == 1);
    CHECK(ops[5].micro_batch == 0);
  }
  // the last stage holds (v-1)N + 1 chunks' activations at its peak
  CHECK(il.in_flight(3, torch) == doctest::Approx(3.0));
  // where m is a multiple of pp the two frameworks' orders are one, m == pp included (current
  // Megatron-LM no longer runs every forward first there: the last stage starts 1F1B after
  // (v-1)p chunk forwards)
  for (int mbs : {4, 8}) {
    const PipelineShape torch_shape{4, mbs, 2, true};
    const PipelineShape megatron_shape{4, mbs, 2, false};
    for (int stage = 0; stage < 4; ++stage) {
      const auto a = il.order(stage, torch_shape);
      const auto b = il.order(stage, megatron_shape);
      REQUIRE(a.size() == b.size());
      for (std::size_t i = 0; i < a.size(); ++i)
        CHECK((a[i].forward == b[i].forward && a[i].micro_batch == b[i].micro_batch && a[i].chunk == b[i].chunk));
    }
  }
  const auto last = il.order(3, PipelineShape{4, 4, 2, false});
  CHECK(last[4].forward);
  CHECK_FALSE(last[5].forward); // 4 warm-up forwards, then one forward and one backward
  // the memory model takes the framework's rounds: stage 1 holds (2·2 + 5 + 1) / 2 = 5
  // micro-batches' activations, against every one of the 10 under looped BFS
  t.global_batch = 10;
  TrainingSpec bfs = t;
  bfs.schedule = "looped-bfs";
  CHECK(CostModel(m, t, gpu).memory(1).activations ==
        doctest::Approx(0.5 * CostModel(m, bfs, gpu).memory(1).activations).epsilon(1e-9));
}

TEST_CASE("FSDP holds its root unit (embedding, final norm, output layer) gathered through the step, per-tensor ZeRO-3 "
          "does not, and fragmentation is reserved on what the step allocates and frees, not on the held model states")
{
  const GpuSpec& gpu = *catalog().gpus().find("h100-sxm5-80gb");
  ModelSpec m = swiglu(4, 1024, 8, 32000, 2048, 2816);
  m.tied_embeddings = false;
  auto mem = [&](Framework f, int dp) {
    TrainingSpec t;
    t.frameworks = catalog().frameworks();
    t.framework = f;
    t.dp = dp;
    t.zero = 3;
    t.micro_batch = 1;
    t.global_batch = dp;
    t.flash_attention = true;
    return CostModel(m, t, gpu).memory(0);
  };
  const double e = 2, unit = m.attention_params() + m.mlp_params(0);
  const double output = double(m.vocab) * m.hidden;
  const double root = m.embedding_params() + m.final_norm_params() + output;
  // torchtitan (FSDP2, one unit per block, one block prefetched): the computing unit, the one
  // prefetched and the computing unit's unsharded gradient (reduced in fp32), then the root unit
  // and the output layer's 16-bit gradient; with dp 1 nothing is gathered
  const double g = 4;
  MemoryBreakdown fsdp = mem(Framework::torchtitan, 8), whole = mem(Framework::torchtitan, 1);
  CHECK(fsdp.buffers - whole.buffers == doctest::Approx(2 * unit * e + unit * (e + g) + root * e + output * e));
  // tied embeddings: one matrix in the root, whose gradient the output layer starts
  m.tied_embeddings = true;
  MemoryBreakdown tied = mem(Framework::torchtitan, 8), tied1 = mem(Framework::torchtitan, 1);
  CHECK(tied.buffers - tied1.buffers ==
        doctest::Approx(2 * unit * e + unit * (e + g) + (root - output) * e + output * e));
  m.tied_embeddings = false;
  // DeepSpeed gathers tensor by tensor as each is used, 5e7 parameters ahead: no root unit
  MemoryBreakdown ds = mem(Framework::deepspeed, 8), ds1 = mem(Framework::deepspeed, 1);
  CHECK(ds.buffers - ds1.buffers == doctest::Approx((unit + 5e7) * e + unit * (e + 4)));
  // 1.5 GiB of runtime plus 5 % of activations and buffers, whatever the sharded states weigh
  for (const MemoryBreakdown& b : {fsdp, whole, ds})
    CHECK(b.reserved == doctest::Approx(1.5 * 1024 * 1024 * 1024 + 0.05 * (b.activations + b.buffers)));
  CHECK(whole.weights > 7 * fsdp.weights);
}

TEST_CASE("under FP8 a layer keeps 1-byte inputs for its linears, and flash attention still keeps its 16-bit output")
{
  const GpuSpec& gpu = *catalog().gpus().find("h100-sxm5-80gb");
  ModelSpec m = swiglu(4, 1024, 8, 32000, 4096, 2816);
  auto bytes = [&](Precision p, Recompute r) {
    TrainingSpec t;
    t.frameworks = catalog().frameworks();
    t.micro_batch = 1;
    t.global_batch = 1;
    t.flash_attention = true;
    t.precision = p;
    t.recompute = r;
    return CostModel(m, t, gpu).layer_activation_bytes(false);
  };
  const double T = m.seq_len, h = m.hidden, f = m.ffn_hidden;
  // saved 16-bit -> 1 byte: the QKV and FC1 inputs (h each), the FC2 input (f); the projection's
  // input O is kept twice under FP8 (16-bit by the attention, 1 byte by the projection): +1 byte
  CHECK(bytes(Precision::bf16, Recompute::none) - bytes(Precision::fp8, Recompute::none) ==
        doctest::Approx(T * (2 * h + f - h)));
  // with the attention core recomputed its output is not kept: only the FP8 copy remains
  CHECK(bytes(Precision::bf16, Recompute::selective) - bytes(Precision::fp8, Recompute::selective) ==
        doctest::Approx(T * (2 * h + f + h)));
}

TEST_CASE("a model without dropout keeps no masks: two 1-byte masks of the residual stream per layer, and with "
          "unfused attention the attention's mask and its dropped copy, fewer")
{
  const GpuSpec& gpu = *catalog().gpus().find("a100-sxm4-80gb");
  ModelSpec with = gpt(4, 1024, 16, 32000, 2048), without = with;
  without.dropout = false;
  for (bool flash : {true, false}) {
    CAPTURE(flash);
    TrainingSpec t;
    t.frameworks = catalog().frameworks();
    t.micro_batch = 2;
    t.global_batch = 2;
    t.flash_attention = flash;
    const double T = 2.0 * with.seq_len, h = with.hidden, a = with.heads, s = with.seq_len;
    const double attention = flash ? 0.0 : t.micro_batch * a * s * s * (1 + 2); // mask + dropped 16-bit copy
    CHECK(CostModel(with, t, gpu).layer_activation_bytes(false) -
              CostModel(without, t, gpu).layer_activation_bytes(false) ==
          doctest::Approx(2 * T * h + attention));
  }
}

TEST_CASE("NVFP4: the linears' GEMMs run at the FP4 rate, each tensor cast is an amax and a cast kernel, the saved "
          "inputs are 0.5625 bytes, and the cached weight casts are held besides the 16-bit weights")
{
  const GpuSpec& b200 = *catalog().gpus().find("b200");
  ModelSpec m = swiglu(4, 4096, 32, 32000, 4096, 11008);
  auto training = [](Precision p) {
    TrainingSpec t;
    t.frameworks = catalog().frameworks();
    t.micro_batch = 1;
    t.global_batch = 8; // 8 micro-batches: the weights are cast once per step
    t.flash_attention = true;
    t.precision = p;
    return t;
  };
  const CostModel fp4(m, training(Precision::fp4), b200), bf16(m, training(Precision::bf16), b200);
  const double gap = b200.launch_gap, scale = b200.sustained * b200.power_factor();

  // at the measured best shape the FP4 GEMM runs at the measurement (pytorch/ao#2427: 5.50 PFLOP/s)
  const double s = 6144;
  CHECK(fp4.gemm_seconds(s, s, s, 1, Precision::fp4) == doctest::Approx(2 * s * s * s / (5500e12 * scale)));
  CHECK(fp4.gemm_seconds(s, s, s, 1, Precision::fp4) < fp4.gemm_seconds(s, s, s, 1, Precision::fp8));

  const double T = m.seq_len, h = m.hidden, f = m.ffn_hidden;
  const BlockCost mlp = fp4.mlp_block();
  int found = 0;
  for (const OpCost& o : mlp.ops) {
    if (o.name == "fc1") {
      ++found;
      CHECK(o.precision == "fp4");
      CHECK(o.forward == doctest::Approx(fp4.gemm_seconds(T, 2 * f, h, 1, Precision::fp4) + gap));
    }
    if (o.name == "fc1_fp4_cast") {
      ++found;
      // input T x h: amax read + cast read (2 x 2 bytes), rowwise and columnwise copies (2 x 0.5625);
      // weight h x 2f once per step of 8 micro-batches: 2 x 2 bytes read, 2 x (0.5 + 1/256) written
      const double fb = T * h * (2 * 2 + 1.125) + h * 2 * f * (2 * 2 + 1.0078) / 8;
      CHECK(o.bytes == doctest::Approx(fb));
      CHECK(o.forward == doctest::Approx(fp4.memory_seconds(fb) + (2 + 2.0 / 8) * gap));
      // the output gradient T x 2f: the same two kernels
      CHECK(o.backward == doctest::Approx(fp4.memory_seconds(T * 2 * f * (2 * 2 + 1.125)) + 2 * gap));
      CHECK(o.launches_forward == doctest::Approx(2.25));
    }
    CHECK(o.name.find("fp8") == std::string::npos);
  }
  CHECK(found == 2);

  // saved inputs: 2 -> 0.5625 bytes for the QKV, FC1 and FC2 inputs; the projection's input O is
  // kept by the attention in 16 bits and by the projection as its FP4 copy
  CHECK(bf16.layer_activation_bytes(false) - fp4.layer_activation_bytes(false) ==
        doctest::Approx(T * ((2 - 0.5625) * (2 * h + f) - 0.5625 * h)));

  // the cached casts of every layer's linear weights (and its two LayerNorms' 4h), 1.0078 bytes each
  const double params = m.layers * (4 * h * h + 3 * h * f + 4 * h);
  CHECK(fp4.memory(0).cast_weights == doctest::Approx(params * 1.0078));
  CHECK(fp4.memory(0).buffers - bf16.memory(0).buffers == doctest::Approx(params * 1.0078));
  CHECK(bf16.memory(0).cast_weights == 0);
}

TEST_CASE("LoRA: the frozen base keeps its working copy only, the adapters every state, a frozen weight's backward is "
          "its data gradient, and the model FLOPs count it so")
{
  // Llama-2 70B on 8 H100 (tp 8), rank 16 adapters on the attention's qkv and output projections
  const ModelSpec m = load_model_preset("llama2-70b", catalog().models_dir(), {});
  const GpuSpec& gpu = *catalog().gpus().find("h100-sxm5-80gb");
  TrainingSpec full;
  full.frameworks = catalog().frameworks();
  full.tp = 8;
  full.sequence_parallel = true;
  full.global_batch = 8;
  full.recompute = Recompute::full;
  TrainingSpec lora = full;
  lora.lora.rank = 16;
  lora.lora.targets = {"qkv", "proj"};
  REQUIRE_FALSE(check_layout(lora, m, 8));
  const CostModel base(m, full, gpu), tuned(m, lora, gpu);

  // per layer and rank: qkv column-parallel r(h + (q + 2kv)/t), proj row-parallel r(q/t + h)
  const double h = m.hidden, q = m.q_dim(), kv = m.kv_dim(), r = 16, t = 8;
  const double per_layer = r * (h + (q + 2 * kv) / t) + r * (q / t + h);
  CHECK(per_layer == 299008);
  const double adapters = m.layers * per_layer;
  CHECK(tuned.stage_trainable_params(0).total() == doctest::Approx(adapters).epsilon(1e-12));
  const StateBytes b = lora.states();
  const MemoryBreakdown mf = base.memory(0), ml = tuned.memory(0);
  CHECK(ml.weights == doctest::Approx(mf.weights + adapters * b.weights).epsilon(1e-12));
  CHECK(ml.grads == doctest::Approx(adapters * b.grads).epsilon(1e-12));
  CHECK(ml.optimizer == doctest::Approx(adapters * b.optimizer).epsilon(1e-12));
  CHECK(mf.grads == doctest::Approx(mf.weights / b.weights * b.grads).epsilon(1e-12));

  // a frozen GEMM's backward is its data gradient; the adapters' GEMMs train in full
  const BlockCost fa = base.attention_block(), la = tuned.attention_block();
  int adapter_gemms = 0;
  for (const OpCost& o : la.ops) {
    if (o.kind != "gemm")
      continue;
    if (o.name.find("_lora_") != std::string::npos) {
      ++adapter_gemms;
      CHECK(o.flops_backward == doctest::Approx(2 * o.flops));
      continue;
    }
    const bool activations = o.name.rfind("attention_", 0) == 0;
    for (const OpCost& f : fa.ops)
      if (f.name == o.name && f.flops == o.flops) {
        CHECK(o.forward == f.forward);
        CHECK(o.backward == doctest::Approx(activations ? f.backward : f.backward_data));
        CHECK(o.flops_backward == doctest::Approx(activations ? f.flops_backward : f.flops));
      }
  }
  CHECK(adapter_gemms == 4); // A and B beside qkv and beside proj
  CHECK(tuned.mlp_block().backward < base.mlp_block().backward);
  CHECK(tuned.embedding().backward == 0);

  // model FLOPs: forward and data gradient of every weight (4 per parameter and token, 2 fewer
  // than 6), the attention core's three passes, and 6 per adapter parameter and token
  const double tokens = 8.0 * m.seq_len;
  const double fwd = base.layers_forward_flops(8) + base.logits_forward_flops(8);
  const double core = base.attention_core_flops_all(8, true);
  const double adapter_flops = m.layers * 2 * r * ((h + q + 2 * kv) + (q + h)) * tokens;
  CHECK(tuned.model_flops_per_step() == doctest::Approx(2 * fwd + core + 3 * adapter_flops).epsilon(1e-12));
  CHECK(base.model_flops_per_step() == doctest::Approx(3 * fwd).epsilon(1e-12));
}
