// Mixture-of-Experts against closed forms: parameters and FLOPs of the presets (DeepSeek-V3's
// published 260 GFLOP per token), the dispatch and combine all-to-alls of every MoE layer and
// the bytes they move, expert-parallel groups as Megatron folds them, the step time an uneven
// expert load adds, memory sharded by EP, and the HF import of MoE configs.
#include "sim/CollectiveEngine.hpp"
#include "strategies/CostModel.hpp"
#include "strategies/Layout.hpp"
#include "strategies/LayoutRules.hpp"
#include "strategies/MoeDispatcher.hpp"
#include "strategies/StepBuilder.hpp"
#include "tests/TestUtil.hpp"

#include <nlohmann/json.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <map>

using namespace clustersim;
using clustersim::test::catalog;

namespace {

ModelSpec preset(const std::string& name)
{
  return load_model_preset(name, catalog().models_dir(), SourceLocation{});
}

TrainingSpec training(int tp, int pp, int dp, int ep)
{
  TrainingSpec t;
  t.frameworks = catalog().frameworks();
  t.tp = tp;
  t.pp = pp;
  t.dp = dp;
  t.ep = ep;
  t.micro_batch = 1;
  t.global_batch = dp * 4;
  t.sequence_parallel = tp > 1;
  t.flash_attention = true;
  return t;
}

/// A small MoE model: 4 layers, the first dense, 8 experts of which 2 per token, one shared.
ModelSpec small_moe()
{
  ModelSpec m;
  m.name = "small-moe";
  m.layers = 4;
  m.hidden = 1024;
  m.heads = 8;
  m.kv_heads = 8;
  m.ffn_hidden = 4096;
  m.vocab = 32000;
  m.seq_len = 1024;
  m.mlp = MlpKind::swiglu;
  m.norm = NormKind::rmsnorm;
  m.position = PositionKind::rotary;
  m.bias = false;
  m.experts = 8;
  m.top_k = 2;
  m.moe_ffn_hidden = 1024;
  m.shared_experts = 1;
  m.dense_layers = 1;
  return m;
}

/// small_moe() as an experiment on 8 H100 (EP 8, evaluated contention-free), its training
/// section open after `moe_load_balance: ` (line 7 holds what the caller appends). One CUDA
/// graph per iteration: a model this small is host-bound eagerly, which would hide the GPU-side
/// mechanisms these tests look at.
std::string small_moe_experiment(const std::string& name)
{
  return "name: " + name + "\n" + R"(model: {layers: 4, hidden: 1024, heads: 8, kv_heads: 8, ffn_hidden: 4096, vocab: 32000, seq_len: 1024, mlp: swiglu,
        experts: 8, top_k: 2, moe_ffn_hidden: 1024, shared_experts: 1, dense_layers: 1}
cluster: {platform: dgx-h100, gpus: 8}
simulation: {mode: analytic}
training: {tp: 1, pp: 1, dp: 8, ep: 8, micro_batch: 1, global_batch: 32, precision: bf16, flash_attention: true,
           zero: 1, overlap: {grad_reduce: false}, cuda_graph_impl: full_iteration, moe_load_balance: )";
}

nlohmann::json run_json(const std::string& yaml)
{
  std::string f = clustersim::test::write_temp("moe.yaml", yaml);
  // the figures, fitting or not (the baseline test's layout does not fit: exit 3 without the flag)
  auto r = clustersim::test::run_cli("run " + f + " --json --allow-oom");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return nlohmann::json::parse(r.out);
}

} // namespace

TEST_CASE("DeepSeek-V3 counts 671B parameters, 37B active, and 260 GFLOP per token with MTP and causal attention")
{
  const ModelSpec m = preset("deepseek-v3");
  CHECK(m.total_params() == doctest::Approx(671e9).epsilon(0.002));
  CHECK(m.active_params() == doctest::Approx(37e9).epsilon(0.02));
  const GpuSpec& gpu = *catalog().gpus().find("h100-sxm5-80gb");
  TrainingSpec t = training(1, 1, 1, 1);
  t.global_batch = 1;
  CostModel c(m, t, gpu);
  const double per_token = c.model_flops_per_step(true) / m.seq_len;
  CHECK(per_token == doctest::Approx(260e9).epsilon(0.01));
  // the MTP module counts as one more MoE layer, its 2h x h projection and the output head
  ModelSpec no_mtp = m;
  no_mtp.mtp_layers = 0;
  CostModel c0(no_mtp, t, gpu);
  const double tokens = m.seq_len;
  const double mtp = 3.0 * (c.layer_forward_flops(1, m.layers) + c.logits_forward_flops(1) +
                            2.0 * tokens * 2.0 * m.hidden * m.hidden);
  CHECK(c.model_flops_per_step() - c0.model_flops_per_step() == doctest::Approx(mtp).epsilon(1e-12));
}

TEST_CASE("a MoE layer's FLOPs count top_k routed experts, the shared ones and the router, a dense layer its MLP")
{
  const ModelSpec m = small_moe();
  const GpuSpec& gpu = *catalog().gpus().find("h100-sxm5-80gb");
  CostModel c(m, training(1, 1, 1, 1), gpu);
  const double T = m.seq_len, h = m.hidden;
  const double attn = 2 * T * h * (3 * h) + 2 * T * h * h + c.attention_core_flops(1, 0);
  CHECK(c.layer_forward_flops(1, 0) == doctest::Approx(attn + 2 * T * h * 4096 * 3).epsilon(1e-12));
  CHECK(c.layer_forward_flops(1, 1) ==
        doctest::Approx(attn + 2 * T * h * 1024 * 3 * (2 + 1) + 2 * T * h * 8).epsilon(1e-12));
  // parameters: the dense layer's MLP, then 8 routed + 1 shared experts and the router
  CHECK(m.expert_params(0) == 0);
  CHECK(m.expert_params(1) == doctest::Approx(8 * 3 * h * 1024).epsilon(1e-12));
  CHECK(m.mlp_params(1) == doctest::Approx(h + 3 * h * 1024 + h * 8).epsilon(1e-12));
  CHECK(m.active_params() == doctest::Approx(m.total_params() - 3 * 6 * 3 * h * 1024).epsilon(1e-12));
}

TEST_CASE("the expert-parallel groups fold inside a stage's tp x cp x dp ranks, etp innermost")
{
  TrainingSpec t = training(2, 2, 4, 4);
  t.etp = 2;
  Layout lay(t);
  using E = Layout::ExpertDim;
  // stage 0 holds ranks 0..7 (tp 2 x dp 4); etp pairs them (0,1), ep strides by 2 over 4 groups
  CHECK(lay.expert_group(0, 2, 4, E::ep) == std::vector<std::uint32_t>{0, 2, 4, 6});
  CHECK(lay.expert_group(3, 2, 4, E::ep) == std::vector<std::uint32_t>{1, 3, 5, 7});
  CHECK(lay.expert_group(5, 2, 4, E::etp) == std::vector<std::uint32_t>{4, 5});
  CHECK(lay.expert_group(9, 2, 4, E::ep) == std::vector<std::uint32_t>{9, 11, 13, 15}); // stage 1
  TrainingSpec wide = training(2, 1, 8, 8);
  Layout l2(wide);
  CHECK(l2.expert_group(0, 1, 8, E::edp) == std::vector<std::uint32_t>{0, 8});
}

TEST_CASE("the allgather dispatcher gathers every token of the etp x ep group to each rank and reduce-scatters the "
          "outputs back, whatever top_k")
{
  // Megatron-Core's MoEAllGatherTokenDispatcher ([(S/TP)*B, H] -> [S*B*EP, H] over tp_ep_group)
  const ModelSpec m = small_moe();
  const GpuSpec& gpu = *catalog().gpus().find("h100-sxm5-80gb");
  auto count = [](const StepPlan& plan, CollOp op, double bytes, std::size_t members) {
    int n = 0;
    for (const auto& call : plan.workload.collectives())
      if (call.category == Category::ep_comm && call.op == op) {
        ++n;
        CHECK(call.bytes == doctest::Approx(bytes));
        CHECK(plan.workload.groups()[call.group].ranks.size() == members);
      }
    return n;
  };
  TrainingSpec t = training(1, 1, 8, 8);
  t.moe_dispatcher = "allgather";
  CostModel c(m, t, gpu);
  const double local = static_cast<double>(m.seq_len) * m.hidden * 2.0; // one rank's tokens
  CHECK(c.moe_gather_bytes() == doctest::Approx(8 * local));
  const StepPlan plan = build_step(c);
  // 3 MoE layers x 4 micro-batches x (forward dispatch + backward combine), and the reverse
  CHECK(count(plan, CollOp::all_gather, 8 * local, 8) == 3 * 4 * 2);
  CHECK(count(plan, CollOp::reduce_scatter, 8 * local, 8) == 3 * 4 * 2);
  CHECK(count(plan, CollOp::all_to_all, 0, 0) == 0);
  // every token reaches all 8 ranks: 7 shares leave each, against the routed copies' 2 x 7/8
  CHECK(c.moe_gather_bytes() * 7 / 8 == doctest::Approx(4 * c.moe_dispatch_bytes() * 7 / 8));
  // the gathered tokens and the combine's input are held as buffers
  TrainingSpec a2a = t;
  a2a.moe_dispatcher = "alltoall";
  CHECK(c.peak_memory().buffers - CostModel(m, a2a, gpu).peak_memory().buffers ==
        doctest::Approx(2 * (c.moe_gather_bytes() - c.moe_dispatch_bytes())));
  // with expert tensor parallelism the group is etp x ep: over ep, then over etp
  TrainingSpec folded = training(2, 1, 8, 4);
  folded.etp = 2;
  folded.moe_dispatcher = "allgather";
  const StepPlan fp = build_step(CostModel(m, folded, gpu));
  const double half = local / 2; // sequence parallel: each rank routes half the sequence
  int ep_gathers = 0, etp_gathers = 0;
  for (const auto& call : fp.workload.collectives())
    if (call.category == Category::ep_comm && call.op == CollOp::all_gather) {
      const std::size_t members = fp.workload.groups()[call.group].ranks.size();
      CHECK(call.bytes == doctest::Approx(members == 4 ? 4 * half : 8 * half));
      (members == 4 ? ep_gathers : etp_gathers) += 1;
    }
  // 16 GPUs: one call per group, 4 ep groups of 4 and 8 etp groups of 2
  CHECK(ep_gathers == 3 * 4 * 2 * 4);
  CHECK(etp_gathers == 3 * 4 * 2 * 8);
}

TEST_CASE("every MoE layer dispatches and combines tokens x top_k x hidden over its EP group, twice each way")
{
  const ModelSpec m = small_moe();
  const GpuSpec& gpu = *catalog().gpus().find("h100-sxm5-80gb");
  TrainingSpec t = training(1, 1, 8, 8);
  CostModel c(m, t, gpu);
  StepPlan plan = build_step(c);
  const double bytes = static_cast<double>(m.seq_len) * m.top_k * m.hidden * 2.0;
  CHECK(c.moe_dispatch_bytes() == doctest::Approx(bytes));
  int a2a = 0;
  for (const auto& call : plan.workload.collectives())
    if (call.op == CollOp::all_to_all) {
      ++a2a;
      CHECK(call.bytes == doctest::Approx(bytes));
      CHECK(call.category == Category::ep_comm);
      CHECK(plan.workload.groups()[call.group].ranks.size() == 8);
    }
  // 3 MoE layers x 4 micro-batches x (dispatch + combine) x (forward + backward)
  CHECK(a2a == 3 * 4 * 2 * 2);
  // what leaves a GPU: (ep - 1)/ep of it, over NVLink inside a node (direct) ...
  ClusterGraph cluster = ClusterGraph::build(catalog().platform("dgx-h100", SourceLocation{}), 16);
  CollectiveEngine engine(cluster, catalog().protocols());
  std::vector<std::uint32_t> node{0, 1, 2, 3, 4, 5, 6, 7};
  CHECK(engine.best_plan(CollOp::all_to_all, node, bytes, "auto").algorithm == "direct");
  const FlowPlan fp = AlgorithmRegistry::instance().shared("direct").plan(CollOp::all_to_all, GroupView{cluster, node}, bytes);
  double leaves = 0;
  for (const auto& f : fp.phases[0].flows)
    leaves += f.src == 0 && f.dst != 0 ? f.bytes : 0.0;
  CHECK(leaves == doctest::Approx(bytes * 7 / 8).epsilon(1e-12));
  // ... and across nodes through the destination's rail (PXN): each GPU's NIC sends (n-1)/n
  std::vector<std::uint32_t> two{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  const FlowPlan px = AlgorithmRegistry::instance().shared("pxn").plan(CollOp::all_to_all, GroupView{cluster, two}, bytes);
  double rail = 0, total_in = 0;
  for (const auto& f : px.phases[0].flows) {
    if (f.src == 3 && f.dst == 11)
      rail += f.bytes;
    if (f.dst == 11)
      total_in += f.bytes;
  }
  CHECK(rail == doctest::Approx(bytes / 2).epsilon(1e-12));  // node 0's 8 GPUs' slices for GPU 11
  CHECK(total_in == doctest::Approx(bytes / 2 + 7 * bytes / 8).epsilon(1e-12));
  CHECK(engine.best_plan(CollOp::all_to_all, two, bytes, "auto").algorithm == "pxn");
}

TEST_CASE("an uneven expert load adds the slowest expert rank's excess to every MoE layer")
{
  const std::string base = small_moe_experiment("moe-balance");
  const double balanced = run_json(base + "force_balanced}\n")["step_time_s"];
  const double uneven = run_json(base + "aux_loss}\n")["step_time_s"];
  // the expectation from the cost model: per MoE layer and micro-batch, forward and backward,
  // the combine waits for the most loaded rank
  const ModelSpec m = small_moe();
  TrainingSpec t = training(1, 1, 8, 8);
  t.global_batch = 32;
  t.zero = 1;
  t.moe_load_balance = "aux_loss";
  CostModel c(m, t, *catalog().gpus().find("h100-sxm5-80gb"));
  const BlockCost b = c.moe_block();
  double excess = 0;
  for (int layer = 1; layer < 4; ++layer)
    for (int mb = 0; mb < 4; ++mb) {
      auto loads = c.expert_loads(layer, mb, 0);
      const double worst = *std::max_element(loads.begin(), loads.end());
      CHECK(worst > 1.0);
      excess += (worst - 1.0) * (b.experts_forward + b.experts_backward);
    }
  CHECK(excess > 0);
  CHECK(uneven - balanced == doctest::Approx(excess).epsilon(1e-6));
  // the spread is the multinomial one: loads average 1 over the group
  auto loads = c.expert_loads(2, 1, 0);
  double sum = 0;
  for (double l : loads)
    sum += l;
  CHECK(sum == doctest::Approx(8.0).epsilon(1e-12));
}

TEST_CASE("a stated max/mean load puts one expert rank at it, and a capacity factor drops what exceeds it")
{
  const std::string base = small_moe_experiment("moe-stated") + "force_balanced";
  const double balanced = run_json(base + "}\n")["step_time_s"];
  const double stated = run_json(base + ", moe_max_load: 1.5}\n")["step_time_s"];
  const double capped = run_json(base + ", moe_max_load: 1.5, moe_capacity_factor: 1.2}\n")["step_time_s"];
  const ModelSpec m = small_moe();
  TrainingSpec t = training(1, 1, 8, 8);
  t.global_batch = 32;
  t.moe_load_balance = "force_balanced";
  t.moe_max_load = 1.5;
  CostModel c(m, t, *catalog().gpus().find("h100-sxm5-80gb"));
  auto loads = c.expert_loads(2, 1, 0);
  std::sort(loads.begin(), loads.end());
  CHECK(loads.back() == doctest::Approx(1.5));
  CHECK(loads.front() == doctest::Approx(6.5 / 7));
  // 3 MoE layers x 4 micro-batches, forward and backward: the slowest rank's 50 % (then 20 %)
  const BlockCost b = c.moe_block();
  const double per = 3 * 4 * (b.experts_forward + b.experts_backward);
  CHECK(stated - balanced == doctest::Approx(0.5 * per).epsilon(1e-6));
  CHECK(capped - balanced == doctest::Approx(0.2 * per).epsilon(1e-6));
  // a ratio below the mean is refused where it is written
  const std::string bad = clustersim::test::write_temp("moe-bad.yaml", base + ", moe_max_load: 0.5}\n");
  auto r = clustersim::test::run_cli("run " + bad);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("moe-bad.yaml:7:") != std::string::npos);
  CHECK(r.err.find("moe_max_load is below 1") != std::string::npos);
  CHECK(r.out.empty());
}

TEST_CASE("moe_a2a_overlap hides a pass's all-to-alls only beside another micro-batch's pass the other way")
{
  // Megatron's combined 1F1B without pipelining: F(i+1) beside B(i). One micro-batch has no
  // partner, so overlap changes nothing; with four, only the first forward's and the last
  // backward's exchanges stay exposed: one micro-batch's worth of the four
  auto run = [](int global_batch, bool overlap) {
    std::string text = small_moe_experiment("moe-overlap") + "force_balanced, moe_a2a_overlap: " +
                       (overlap ? "true" : "false") + "}\n";
    const std::string from = "global_batch: 32";
    text.replace(text.find(from), from.size(), "global_batch: " + std::to_string(global_batch));
    return run_json(text);
  };
  CHECK(run(8, true)["step_time_s"].get<double>() == run(8, false)["step_time_s"].get<double>());
  const nlohmann::json exposed = run(32, false), hidden = run(32, true);
  const double ep = exposed["breakdown"]["exposed_ep_s"], ep_hidden = hidden["breakdown"]["exposed_ep_s"];
  CHECK(ep > 0);
  CHECK(ep_hidden == doctest::Approx(ep / 4).epsilon(1e-9));
  CHECK(exposed["step_time_s"].get<double>() - hidden["step_time_s"].get<double>() ==
        doctest::Approx(ep - ep_hidden).epsilon(1e-9));
}

TEST_CASE("expert weights shard by ep x etp and their optimizer states by the expert-data-parallel ranks")
{
  const ModelSpec m = preset("mixtral-8x7b");
  const GpuSpec& gpu = *catalog().gpus().find("h100-sxm5-80gb");
  TrainingSpec t = training(2, 1, 16, 8);
  t.zero = 1;
  t.global_batch = 64;
  CostModel c(m, t, gpu);
  CHECK(c.expert_data_parallel() == 4); // 2 x 16 ranks / ep 8
  const RankParams p = c.stage_rank_params(0);
  CHECK(p.expert == doctest::Approx(m.layers * m.expert_params(0) / 8).epsilon(1e-12));
  const MemoryBreakdown mem = c.memory(0);
  const StateBytes st = t.states();
  CHECK(mem.optimizer == doctest::Approx(p.dense * st.optimizer / 16 + p.expert * st.optimizer / 4).epsilon(1e-9));
  CHECK(mem.weights == doctest::Approx(p.total() * st.weights).epsilon(1e-12));
}

TEST_CASE("Hugging Face configs of MoE models import their experts, MLA ranks and dense layers")
{
  const std::string ds = R"({"model_type": "deepseek_v3", "hidden_size": 7168, "num_hidden_layers": 61,
    "num_attention_heads": 128, "num_key_value_heads": 128, "vocab_size": 129280, "intermediate_size": 18432,
    "moe_intermediate_size": 2048, "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8,
    "first_k_dense_replace": 3, "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 128, "v_head_dim": 128, "num_nextn_predict_layers": 1, "hidden_act": "silu",
    "rms_norm_eps": 1e-06, "max_position_embeddings": 4096, "tie_word_embeddings": false})";
  ModelSpec m = import_hf_config(clustersim::test::write_temp("config.json", ds));
  const ModelSpec p = preset("deepseek-v3");
  CHECK(m.experts == 256);
  CHECK(m.top_k == 8);
  CHECK(m.dense_layers == 3);
  CHECK(m.mla);
  CHECK(m.mtp_layers == 1);
  CHECK(m.total_params() == doctest::Approx(p.total_params()).epsilon(1e-12));
  const std::string oss = R"({"model_type": "gpt_oss", "hidden_size": 2880, "num_hidden_layers": 36,
    "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "vocab_size": 201088,
    "intermediate_size": 2880, "num_local_experts": 128, "num_experts_per_tok": 4, "attention_bias": true,
    "hidden_act": "silu", "rms_norm_eps": 1e-05, "tie_word_embeddings": false, "max_position_embeddings": 4096})";
  ModelSpec g = import_hf_config(clustersim::test::write_temp("config.json", oss));
  CHECK(g.total_params() == doctest::Approx(preset("gpt-oss-120b").total_params()).epsilon(1e-12));
  CHECK(g.head_dim() == 64);
}

TEST_CASE("group-limited routing: DeepSeek-V3's tokens reach at most 4 of 8 nodes, counted exactly")
{
  const ModelSpec dsv3 = preset("deepseek-v3");
  REQUIRE(dsv3.router_groups == 8);
  REQUIRE(dsv3.router_group_topk == 4);
  const GpuSpec& gpu = *catalog().gpus().find("h100-sxm5-80gb");
  TrainingSpec t = training(1, 1, 64, 64);
  t.moe_dispatcher = "deepep";
  const CostModel c(dsv3, t, gpu);
  // brute force: every 4 of the 8 groups equally likely, the 8 experts uniform over the 128 of
  // the chosen groups; a bin of `bins` equal shares of the 256 experts is hit unless all 8 miss it
  auto exact = [](int bins) {
    double total = 0;
    int subsets = 0;
    for (int mask = 0; mask < 256; ++mask) {
      if (__builtin_popcount(static_cast<unsigned>(mask)) != 4)
        continue;
      ++subsets;
      for (int b = 0; b < bins; ++b) {
        int in = 0; // experts of the chosen groups in bin b
        for (int e = 0; e < 256; ++e)
          if ((mask >> (e / 32) & 1) && e / (256 / bins) == b)
            ++in;
        double none = 1;
        for (int i = 0; i < 8; ++i)
          none *= std::max(0.0, (128.0 - in - i) / (128.0 - i));
        total += 1 - none;
      }
    }
    return total / subsets;
  };
  for (int bins : {1, 2, 4, 8, 16, 64, 256}) {
    CAPTURE(bins);
    CHECK(c.moe_distinct_bins(bins) == doctest::Approx(exact(bins)).epsilon(1e-12));
  }
  CHECK(c.moe_distinct_bins(8) <= 4.0); // 3.63 of 8 nodes, against 5.31 unrestricted
  CHECK(c.moe_distinct_bins(256) == doctest::Approx(8));
  // groups that straddle the bins (8 groups, 3 bins cannot divide the experts evenly anyway):
  // the limit is not applied, so nothing is under-counted
  ModelSpec free = dsv3;
  free.router_groups = free.router_group_topk = 1;
  ModelSpec odd = dsv3;
  odd.experts = 24, odd.router_groups = 8, odd.router_group_topk = 4, odd.top_k = 2;
  ModelSpec odd_free = odd;
  odd_free.router_groups = odd_free.router_group_topk = 1;
  CHECK(CostModel(odd, t, gpu).moe_distinct_bins(3) == doctest::Approx(CostModel(odd_free, t, gpu).moe_distinct_bins(3)));
  CHECK(c.moe_dedup_bytes(8) < CostModel(free, t, gpu).moe_dedup_bytes(8));
}

TEST_CASE("router groups come from a preset, a model map or a config.json, and a bad one is one line")
{
  const std::string ds = R"({"model_type": "deepseek_v3", "hidden_size": 7168, "num_hidden_layers": 61,
    "num_attention_heads": 128, "num_key_value_heads": 128, "vocab_size": 129280, "intermediate_size": 18432,
    "moe_intermediate_size": 2048, "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8,
    "n_group": 8, "topk_group": 4, "first_k_dense_replace": 3, "q_lora_rank": 1536, "kv_lora_rank": 512,
    "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "hidden_act": "silu",
    "max_position_embeddings": 4096})";
  const ModelSpec m = import_hf_config(clustersim::test::write_temp("config.json", ds));
  CHECK(m.router_groups == 8);
  CHECK(m.router_group_topk == 4);
  auto r = clustersim::test::run_cli("memory --gpu h100-sxm5-80gb --model " +
                                     clustersim::test::write_temp("rg.yaml", "preset: deepseek-v3\nrouter_groups: 7\n"));
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("rg.yaml:1:") != std::string::npos);
  CHECK(r.err.find("router_groups 7 does not divide experts 256; valid: a divisor of experts") != std::string::npos);
  r = clustersim::test::run_cli("memory --gpu h100-sxm5-80gb --model " +
                                clustersim::test::write_temp("rg.yaml", "preset: deepseek-v3\nrouter_groups: 64\n"
                                                                        "router_group_topk: 1\n"));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("fewer than top_k 8") != std::string::npos);
}

TEST_CASE("the scaling baseline of a MoE layout holds whole expert-parallel groups")
{
  // tp 2 x pp 4 on 32 H100: one node would hold tp x dp = 2 ranks per stage, fewer than ep 4;
  // the baseline grows to 16 GPUs (tp x dp = 4), and the step runs
  auto j = run_json(R"(name: moe-baseline
model: {preset: deepseek-v3, layers: 16, dense_layers: 1, mtp_layers: 0}
cluster: {platform: dgx-h100, gpus: 32}
training: {tp: 2, pp: 4, ep: 4, sequence_parallel: true, micro_batch: 1, global_batch: 64, precision: bf16,
           flash_attention: true, zero: 1, moe_load_balance: force_balanced}
)");
  CHECK(j["baseline_gpus"] == 16);
  CHECK(j["step_time_s"].get<double>() > 0);
}

TEST_CASE("expert gradients reduce over the ranks that hold the same experts, dense ones over dp")
{
  const ModelSpec m = small_moe();
  const GpuSpec& gpu = *catalog().gpus().find("h100-sxm5-80gb");
  TrainingSpec t = training(1, 1, 16, 8); // 16 ranks, ep 8: every expert on 2 ranks
  for (int zero : {0, 1}) {
    CAPTURE(zero);
    t.zero = zero;
    CostModel c(m, t, gpu);
    REQUIRE(c.expert_data_parallel() == 2);
    StepPlan plan = build_step(c);
    double dense = 0, expert = 0;
    for (const auto& call : plan.workload.collectives()) {
      if (call.category != Category::dp_comm || call.op == CollOp::all_gather)
        continue;
      const auto& ranks = plan.workload.groups()[call.group].ranks;
      if (std::find(ranks.begin(), ranks.end(), 0u) == ranks.end())
        continue; // rank 0's reductions only
      if (ranks.size() == 16)
        dense += call.bytes;
      else {
        REQUIRE(ranks.size() == 2);
        // the two holders of the same experts: same place in their EP groups
        CHECK(ranks[1] - ranks[0] == 8);
        expert += call.bytes;
      }
    }
    // what rank 0 holds of each pool, in the framework's gradient bytes, once per step
    const RankParams p = c.stage_rank_params(0);
    const double g = t.traits().grad_reduce(t.precision);
    CHECK(expert == doctest::Approx(p.expert * g).epsilon(1e-9));
    CHECK(dense == doctest::Approx(p.dense * g).epsilon(1e-9));
  }
}

TEST_CASE("a round-robin balanced router sends a token to the ranks and nodes its consecutive experts span, "
          "counted exactly - Megatron's random one to as many as k random experts meet")
{
  const GpuSpec& gpu = *catalog().gpus().find("h100-sxm5-80gb");
  ModelSpec m = preset("deepseek-v3");
  TrainingSpec t = training(1, 1, 64, 64);
  t.moe_dispatcher = "deepep";
  t.moe_load_balance = "force_balanced";
  t.framework = Framework::automodel; // its fake balanced gate: token t takes (t*k + j) mod E
  REQUIRE(t.traits().moe_round_robin);
  // brute force over a full cycle of tokens: the bins (equal consecutive shares of the experts)
  // each token's experts fall in
  auto brute = [](int experts, int k, int bins) {
    double sum = 0;
    const int tokens = experts * k;
    for (int tok = 0; tok < tokens; ++tok) {
      std::vector<bool> hit(static_cast<std::size_t>(bins), false);
      for (int j = 0; j < k; ++j)
        hit[static_cast<std::size_t>(static_cast<long long>((tok * k + j) % experts) * bins / experts)] = true;
      sum += static_cast<double>(std::count(hit.begin(), hit.end(), true));
    }
    return sum / tokens;
  };
  struct Shape {
    int experts, k, bins;
  };
  // DeepSeek-V3 (4 experts a rank at EP 64, 32 a node), Qwen3-30B at EP 8, gpt-oss-120b at
  // EP 64, runs that cross a bin edge (60 experts, 4 a token, 6 bins: 1.2), and runs long
  // enough to wrap back into the bin they started in
  for (Shape sh : {Shape{256, 8, 64}, Shape{256, 8, 8}, Shape{256, 8, 1}, Shape{128, 8, 8}, Shape{128, 4, 64},
                   Shape{60, 4, 6}, Shape{12, 11, 3}, Shape{12, 10, 3}, Shape{8, 8, 2}, Shape{384, 8, 48}}) {
    CAPTURE(sh.experts);
    CAPTURE(sh.k);
    CAPTURE(sh.bins);
    m.experts = sh.experts;
    m.top_k = sh.k;
    const CostModel c(m, t, gpu);
    CHECK(c.moe_distinct_bins(sh.bins) == doctest::Approx(brute(sh.experts, sh.k, sh.bins)).epsilon(1e-12));
  }
  m = preset("deepseek-v3");
  const CostModel rr(m, t, gpu);
  CHECK(rr.moe_distinct_bins(64) == doctest::Approx(2)); // two GPUs of one node
  CHECK(rr.moe_distinct_bins(8) == doctest::Approx(1));
  m.experts = 60, m.top_k = 4;
  CHECK(CostModel(m, t, gpu).moe_distinct_bins(6) == doctest::Approx(1.2));
  // the router groups do not apply (the gate returns its indices), nor does it without forced balance
  m = preset("deepseek-v3");
  TrainingSpec real = t;
  real.moe_load_balance = "aux_loss";
  const CostModel learned(m, real, gpu);
  CHECK(learned.moe_distinct_bins(8) == doctest::Approx(3.63).epsilon(0.01)); // group-limited, random
  // Megatron's forced balance is random logits: the same expected count as real routing
  TrainingSpec meg = t;
  meg.framework = Framework::megatron;
  CHECK_FALSE(meg.traits().moe_round_robin);
  CHECK(CostModel(m, meg, gpu).moe_distinct_bins(8) == doctest::Approx(learned.moe_distinct_bins(8)));
  // the exchange a built step sends: one copy of each token per destination node, where the
  // random router's tokens reach 3.63 nodes
  m.layers = 4, m.dense_layers = 1, m.mtp_layers = 0;
  TrainingSpec s = training(1, 1, 64, 64);
  s.moe_dispatcher = "deepep", s.moe_load_balance = "force_balanced", s.framework = Framework::automodel;
  const CostModel cm(m, s, gpu);
  StepPlan plan = build_step(cm, 0, 8);
  double rail = 0;
  for (const auto& call : plan.workload.collectives())
    if (call.op == CollOp::all_to_all && plan.workload.groups()[call.group].ranks.size() == 8 &&
        plan.workload.groups()[call.group].ranks[1] - plan.workload.groups()[call.group].ranks[0] == 8)
      rail = call.bytes;
  CHECK(rail == doctest::Approx(cm.moe_tokens() * m.hidden * 2));
  CHECK(rail == doctest::Approx(CostModel(m, meg, gpu).moe_dedup_bytes(8) / CostModel(m, meg, gpu).moe_distinct_bins(8)));
}

TEST_CASE("DeepEP sends a token once per NVLink domain over RDMA, then once per GPU over NVLink")
{
  // distinct bins of top_k of E experts: k when every expert is its own bin, 1 for one bin
  // (routing unrestricted: DeepSeek-V3 without its group limit)
  ModelSpec dsv3 = preset("deepseek-v3");
  dsv3.router_groups = dsv3.router_group_topk = 1;
  const GpuSpec& gpu = *catalog().gpus().find("h100-sxm5-80gb");
  TrainingSpec t = training(1, 1, 64, 64);
  t.moe_dispatcher = "deepep";
  CostModel c(dsv3, t, gpu);
  CHECK(c.moe_distinct_bins(1) == doctest::Approx(1));
  CHECK(c.moe_distinct_bins(256) == doctest::Approx(8));
  double none = 1;
  for (int i = 0; i < 8; ++i)
    none *= (224.0 - i) / (256.0 - i);
  CHECK(c.moe_distinct_bins(8) == doctest::Approx(8 * (1 - none)).epsilon(1e-12)); // 5.31 of 8 nodes
  CHECK(c.moe_dedup_bytes(8) == doctest::Approx(c.moe_dispatch_bytes() * (1 - none)).epsilon(1e-12));

  // on 16 ranks of 8-GPU nodes with ep 16: a rail hop of 2 and an NVLink hop of 8 per exchange
  const ModelSpec m = small_moe();
  TrainingSpec s = training(1, 1, 16, 8);
  s.moe_dispatcher = "deepep";
  for (int ep : {8, 16}) {
    CAPTURE(ep);
    s.ep = ep;
    CostModel cm(m, s, gpu);
    StepPlan plan = build_step(cm, 0, 8);
    std::map<std::size_t, int> by_size;
    std::map<std::size_t, double> bytes;
    for (const auto& call : plan.workload.collectives())
      if (call.op == CollOp::all_to_all) {
        const std::size_t n = plan.workload.groups()[call.group].ranks.size();
        ++by_size[n];
        bytes[n] = call.bytes;
      }
    const int exchanges = 3 * 4 * 2 * 2 * (16 / ep); // MoE layers x micro-batches x 2 x 2, per EP group
    if (ep == 8) { // inside a node: one hop, once per destination GPU
      CHECK(by_size.size() == 1);
      CHECK(by_size[8] == exchanges);
      CHECK(bytes[8] == doctest::Approx(cm.moe_dedup_bytes(8)));
    } else {
      CHECK(by_size.size() == 2);
      CHECK(by_size[2] == exchanges * 8); // 8 rails of 2
      CHECK(by_size[8] == exchanges * 2); // 2 nodes of 8
      CHECK(bytes[2] == doctest::Approx(cm.moe_dedup_bytes(2)));
      CHECK(bytes[8] == doctest::Approx(cm.moe_dedup_bytes(16)));
      CHECK(cm.moe_dedup_bytes(2) < cm.moe_dispatch_bytes());
    }
  }
}

namespace {

/// Llama 3 8B, one sequence on one H100: the loss's buffers under each framework.
struct LossCase {
  ModelSpec m = preset("llama3-8b");
  const GpuSpec& gpu = *catalog().gpus().find("h100-sxm5-80gb");
  TrainingSpec t = [] {
    TrainingSpec s = training(1, 1, 1, 1);
    s.global_batch = 1;
    return s;
  }();
  double logits() const { return static_cast<double>(m.seq_len) * m.vocab; }
  double buffers(Framework f)
  {
    t.framework = f;
    return CostModel(m, t, gpu).memory(0).buffers;
  }
};

} // namespace

TEST_CASE("Megatron's cross entropy keeps one fp32 copy of the logits, torch's F.cross_entropy two")
{
  LossCase c;
  CHECK(c.buffers(Framework::torchtitan) - c.buffers(Framework::megatron) ==
        doctest::Approx(4 * c.logits()).epsilon(1e-9));
}

TEST_CASE("flash-attn's fused cross entropy (FSDP1 stacks) keeps no fp32 copy: the logits and their 16-bit gradient")
{
  LossCase c;
  // Megatron: 2 + 4 bytes per logit; the fused loss: 2 + 2
  CHECK(c.buffers(Framework::megatron) - c.buffers(Framework::fsdp) == doctest::Approx(2 * c.logits()).epsilon(1e-9));
  const ModelSpec& m = c.m;
  const GpuSpec& gpu = c.gpu;
  TrainingSpec& t = c.t;
  // and its kernels: one pass over the logits each way instead of Megatron's fp32 passes
  const auto ce = [&](Framework f) {
    t.framework = f;
    for (const OpCost& o : CostModel(m, t, gpu).logits().ops)
      if (o.name == "cross_entropy")
        return o;
    return OpCost{};
  };
  CHECK(ce(Framework::fsdp).kernels == 2);
  CHECK(ce(Framework::fsdp).forward < ce(Framework::megatron).forward / 4);
}

TEST_CASE("FSDP1's MPT runs the Triton flash attention: half FlashAttention-2's throughput on A100, FA2 where no curve exists")
{
  const ModelSpec m = preset("llama3-8b");
  TrainingSpec t = training(1, 1, 1, 1);
  t.global_batch = 1;
  t.flash_attention = true;
  auto core = [&](Framework f, const char* gpu) {
    t.framework = f;
    for (const OpCost& o : CostModel(m, t, *catalog().gpus().find(gpu)).attention_block().ops)
      if (o.kind == "attention")
        return o.forward + o.backward;
    return 0.0;
  };
  const double launch = 2 * catalog().gpus().find("a100-sxm4-80gb")->launch_gap;
  CHECK(core(Framework::fsdp, "a100-sxm4-80gb") - launch ==
        doctest::Approx(2 * (core(Framework::torchtitan, "a100-sxm4-80gb") - launch)).epsilon(1e-9));
  CHECK(core(Framework::fsdp, "h100-sxm5-80gb") == doctest::Approx(core(Framework::torchtitan, "h100-sxm5-80gb")));
}

TEST_CASE("recompute modules layernorm, shared_experts and moe free what they rebuild in backward - FC2 outputs kept only where the unpermutation weighs them")
{
  const ModelSpec m = small_moe();
  const GpuSpec& gpu = *catalog().gpus().find("h100-sxm5-80gb");
  TrainingSpec t = training(1, 1, 8, 8);
  t.recompute = Recompute::selective;
  auto bytes = [&](std::vector<std::string> modules, Precision p = Precision::bf16) {
    TrainingSpec u = t;
    u.recompute_modules = std::move(modules);
    u.precision = p;
    return CostModel(m, u, gpu).layer_activation_bytes(true);
  };
  const double T = m.seq_len, h = m.hidden, e = 2;
  const double none = bytes({});
  // the two norms' 16-bit outputs (the QKV and FC1 inputs)
  CHECK(none - bytes({"layernorm"}) == doctest::Approx(2 * T * h * e));
  // the shared expert's FC1 output (SwiGLU: two halves) and its activation's output
  CHECK(none - bytes({"shared_experts"}) == doctest::Approx(T * m.expert_ffn() * 3 * e));
  // the whole MoE block: its norm output, every expert's activations and the permuted copies
  // FC1 reads (Megatron weighs the activation by the router probabilities: no FC2 outputs kept)
  const double block = T * h * e + T * m.expert_ffn() * (m.top_k + m.shared_experts) * 3 * e + T * m.top_k * h * e;
  CHECK(none - bytes({"moe"}) == doctest::Approx(block));
  // a framework whose unpermutation weighs the copies keeps the experts' FC2 outputs as well
  t.framework = Framework::deepspeed;
  CHECK(bytes({}) - none == doctest::Approx(T * m.top_k * h * e));
  CHECK(bytes({}) - bytes({"moe"}) == doctest::Approx(block + T * m.top_k * h * e));
  t.framework = Framework::megatron;
  // under FP8 the linears keep their own FP8 inputs: recomputing the norms frees nothing more
  CHECK(bytes({"core_attn"}, Precision::fp8) == doctest::Approx(bytes({"core_attn", "layernorm"}, Precision::fp8)));
}

TEST_CASE("sliding-window attention: a windowed layer computes its share of the pairs, gpt-oss alternates it with "
          "full layers, and context parallelism refuses it")
{
  ModelSpec m = preset("gpt-oss-20b");
  REQUIRE(m.sliding_window == 128);
  REQUIRE(m.full_attention_every == 2);
  m.seq_len = 4096;
  const double s = 4096, w = 128;
  // layer 0 windowed, layer 1 full, ...; an MTP module (index layers) full
  CHECK(m.windowed(0));
  CHECK_FALSE(m.windowed(1));
  CHECK(m.windowed(22));
  CHECK_FALSE(m.windowed(23));
  CHECK_FALSE(m.windowed(m.layers));
  // the pairs a query of a windowed layer meets, over full causal attention's s (s + 1) / 2
  const double share = (w * s - w * (w - 1) / 2) / (s * (s + 1) / 2);
  CHECK(m.attended_share(0) == doctest::Approx(share).epsilon(1e-15));
  CHECK(m.attended_share(1) == 1.0);

  TrainingSpec t = training(1, 1, 8, 8);
  t.moe_load_balance = "force_balanced";
  const GpuSpec& gpu = *catalog().gpus().find("h100-sxm5-80gb");
  CostModel c(m, t, gpu);
  const double core = 2.0 * s * s * m.heads * (64 + 64); // scores + context per sequence, full s x s
  CHECK(c.attention_core_flops(1, 0) == doctest::Approx(core * share).epsilon(1e-12));
  CHECK(c.attention_core_flops(1, 1) == doctest::Approx(core).epsilon(1e-12));
  ModelSpec full = m;
  full.sliding_window = 0;
  CostModel cf(full, t, gpu);
  // 12 of the 24 layers windowed: the model FLOPs of a step lose 3 x 12 x (1 - share) x core per sequence
  const double b = t.global_batch;
  CHECK(cf.model_flops_per_step() - c.model_flops_per_step() ==
        doctest::Approx(3.0 * 12 * (1 - share) * core * b).epsilon(1e-9));

  // flash attention executes the windowed share, at the causal curve's rate at 2w
  const BlockCost win = c.attention_block(true), all = c.attention_block();
  auto core_op = [](const BlockCost& blk) {
    for (const auto& o : blk.ops)
      if (o.kind == "attention")
        return o;
    FAIL("no attention op");
    return OpCost{};
  };
  CHECK(core_op(win).flops == doctest::Approx(core_op(all).flops * share).epsilon(1e-12));
  const auto rate = c.attention_rate(64, true, 2 * w);
  CHECK(core_op(win).forward == doctest::Approx(core_op(win).flops / rate.forward + gpu.launch_gap).epsilon(1e-12));
  CHECK(win.forward < all.forward);
  // the stage's seconds count 12 layers of each kind
  const auto total = [](const BlockCost& blk) { return blk.forward + blk.backward + blk.recompute; };
  CHECK(cf.stage_layer_seconds(0) - c.stage_layer_seconds(0) ==
        doctest::Approx(12 * (total(all) - total(win))).epsilon(1e-9));

  // the step: a windowed layer's forward is shorter than a full one's by the attention difference
  StepPlan plan = build_step(c);
  const Workload& wl = plan.workload;
  double layer0 = 0, layer1 = 0;
  for (TaskId id : wl.program(0, Stream::compute)) {
    const Task& task = wl.task(id);
    if (task.kind != TaskKind::compute || task.category != Category::forward)
      continue;
    layer0 += task.layer == 0 ? task.amount : 0.0;
    layer1 += task.layer == 1 ? task.amount : 0.0;
  }
  CHECK(layer1 - layer0 == doctest::Approx(t.micro_batches() * (all.forward - win.forward)).epsilon(1e-9));

  // context parallelism: refused with the reason
  TrainingSpec tcp = training(1, 1, 4, 8);
  tcp.cp = 2;
  auto v = check_layout(tcp, m, 8);
  REQUIRE(v);
  CHECK(v->key == "cp");
  CHECK(v->message.find("sliding window of 128 tokens") != std::string::npos);
  ModelSpec every = m;
  every.full_attention_every = 1; // every layer a full one: no window anywhere
  CHECK_FALSE(every.has_window());
  CHECK_FALSE(every.windowed(0));
  CHECK_FALSE(check_layout(tcp, every, 8));
  m.sliding_window = 8192; // a window of the whole sequence is no window
  CHECK_FALSE(m.has_window());
  CHECK_FALSE(check_layout(tcp, m, 8));
}

TEST_CASE("Hugging Face configs: sliding_window with layer_types (gpt-oss), without (Mistral), switched off (Qwen)")
{
  auto import = [](const std::string& extra) {
    const std::string cfg = R"({"model_type": "gpt_oss", "hidden_size": 2880, "num_hidden_layers": 4,
      "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64, "vocab_size": 201088,
      "intermediate_size": 2880, "num_local_experts": 32, "num_experts_per_tok": 4, "hidden_act": "silu",
      "rms_norm_eps": 1e-05, "max_position_embeddings": 4096)" +
                            extra + "}";
    return import_hf_config(clustersim::test::write_temp("config.json", cfg));
  };
  ModelSpec g = import(R"(, "sliding_window": 128, "layer_types": ["sliding_attention", "full_attention",
      "sliding_attention", "full_attention"])");
  CHECK(g.sliding_window == 128);
  CHECK(g.full_attention_every == 2);
  ModelSpec mistral = import(R"(, "sliding_window": 1024)");
  CHECK(mistral.sliding_window == 1024);
  CHECK(mistral.full_attention_every == 0);
  CHECK(mistral.windowed(3));
  CHECK(import(R"(, "sliding_window": 1024, "use_sliding_window": false)").sliding_window == 0);
  CHECK(import(R"(, "sliding_window": null)").sliding_window == 0);
  CHECK(import(R"(, "sliding_window": 128, "layer_types": ["full_attention", "full_attention", "full_attention",
      "full_attention"])")
            .sliding_window == 0);
  // a pattern the two keys cannot say, a wrong length, an unknown type: one line each
  auto bad = [&](const std::string& extra, const std::string& what) {
    try {
      import(extra);
      FAIL("accepted " << extra);
    } catch (const ConfigError& e) {
      CHECK_MESSAGE(std::string(e.what()).find(what) != std::string::npos, e.what());
      CHECK(std::string(e.what()).find("valid: one of sliding_attention / full_attention per layer") !=
            std::string::npos);
    }
  };
  bad(R"(, "sliding_window": 128, "layer_types": ["full_attention", "sliding_attention", "sliding_attention",
      "full_attention"])",
      "layer 1 breaks the period of 1 that the first full-attention layer sets");
  bad(R"(, "sliding_window": 128, "layer_types": ["sliding_attention", "full_attention"])", "2 entries for 4 layers");
  bad(R"(, "sliding_window": 128, "layer_types": ["sliding_attention", "chunked_attention", "sliding_attention",
      "full_attention"])",
      "unknown layer type 'chunked_attention'");
}

TEST_CASE("Hugging Face Gemma configs: GeGLU's three matrices, Gemma 2's alternating and Gemma 3's 1-in-6 global layers")
{
  // google/gemma-2-9b config.json (the fields the import reads); 9.24B parameters
  const std::string g2 = R"({"model_type": "gemma2", "hidden_size": 3584, "intermediate_size": 14336,
    "num_hidden_layers": 42, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 256,
    "vocab_size": 256000, "hidden_activation": "gelu_pytorch_tanh", "hidden_act": "gelu_pytorch_tanh",
    "rms_norm_eps": 1e-06, "max_position_embeddings": 8192, "sliding_window": 4096, "tie_word_embeddings": true})";
  const ModelSpec m = import_hf_config(clustersim::test::write_temp("config.json", g2));
  CHECK(m.mlp == MlpKind::swiglu);
  CHECK(m.total_params() == doctest::Approx(9.24e9).epsilon(0.005));
  CHECK(m.sliding_window == 4096);
  CHECK(m.full_attention_every == 2);
  CHECK(m.windowed(0));
  CHECK_FALSE(m.windowed(1));
  // Gemma 3: sliding_window_pattern 6 - layers 5, 11, ... global
  const std::string g3 = R"({"model_type": "gemma3_text", "hidden_size": 2560, "intermediate_size": 10240,
    "num_hidden_layers": 34, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
    "vocab_size": 262208, "hidden_activation": "gelu_pytorch_tanh", "rms_norm_eps": 1e-06,
    "max_position_embeddings": 131072, "sliding_window": 1024, "sliding_window_pattern": 6})";
  const ModelSpec m3 = import_hf_config(clustersim::test::write_temp("config.json", g3));
  CHECK(m3.full_attention_every == 6);
  CHECK(m3.windowed(4));
  CHECK_FALSE(m3.windowed(5));
  CHECK(m3.mlp == MlpKind::swiglu);
}

TEST_CASE("an MoE token dispatcher is a registered class: the cost model, the step and the launch files ask it what "
          "it does")
{
  CHECK(MoeDispatcherRegistry::instance().names() ==
        std::vector<std::string>{"allgather", "alltoall", "deepep", "hybridep"});
  for (const RegistryEntry& e : MoeDispatcherRegistry::instance().entries())
    CHECK(!e.description.empty());
  const MoeDispatcher& a2a = MoeDispatcherRegistry::instance().shared("alltoall");
  const MoeDispatcher& deepep = MoeDispatcherRegistry::instance().shared("deepep");
  CHECK((a2a.regroups() && !a2a.deduplicates() && std::string(a2a.megatron_type()) == "alltoall" &&
         !a2a.flex_backend()));
  CHECK((!deepep.regroups() && deepep.deduplicates() && std::string(deepep.megatron_type()) == "flex" &&
         std::string(deepep.flex_backend()) == "deepep"));
  // the all-to-all dispatcher's regrouping by local expert is a kernel each way; the others have none
  const GpuSpec& gpu = *catalog().gpus().find("h100-sxm5-80gb");
  auto sorts = [&](const std::string& dispatcher) {
    TrainingSpec t = training(1, 1, 8, 4); // 8 experts over ep 4: 2 local experts each
    t.moe_dispatcher = dispatcher;
    int n = 0;
    for (const OpCost& o : CostModel(small_moe(), t, gpu).moe_block().ops)
      n += o.name == "moe_sort_chunks";
    return n;
  };
  CHECK(sorts("alltoall") == 2);
  CHECK(sorts("allgather") == 0);
  CHECK(sorts("deepep") == 0);
  CHECK(sorts("hybridep") == 0);
}

