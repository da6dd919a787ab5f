// Hardware and layouts as users have them: GPUs and transports described in a platform file,
// published pipeline layouts, and validation files that report every case.
#include "strategies/ModelSpec.hpp"
#include "strategies/PipelineLayout.hpp"
#include "tests/TestUtil.hpp"

#include <nlohmann/json.hpp>

#include <doctest/doctest.h>

using namespace clustersim;
using namespace clustersim::test;

namespace {

/// A Grand-Teton-like node the catalog does not have: an H100 with 96 GB HBM2e at 2.4 TB/s and
/// a 500 W cap, RoCE NICs.
const char* kUserPlatform = R"(name: my-h100-96g
description: "a user's H100 96 GB cluster"
node:
  gpu:
    base: h100-sxm5-80gb
    memory: {capacity: 96GB, bandwidth: 2.4TBps}
    power_cap: 500W
  gpus: 8
  scale_up: {kind: nvswitch, bandwidth: 900GBps, bidirectional: true, latency: 0.3us, transport: nvlink4}
  pcie: {bandwidth: 63GBps, latency: 0.2us, switches: 4, cpus: 2, cpu_link: 64GBps, transport: pcie5}
  nics: {count: 8, bandwidth: 400Gbps, latency: 1us, transport: roce}
fabric: {kind: rail-optimized, radix: 64, rail_group_nodes: 32, switch_latency: 0.6us}
cost: {usd_per_gpu_hour: 2.5, node_overhead: 4600W}
)";

std::string user_dir_with(const std::string& platform_text)
{
  std::string dir = temp_dir();
  FILE* f = std::fopen((dir + "/cluster.yaml").c_str(), "w");
  std::fputs(platform_text.c_str(), f);
  std::fclose(f);
  return dir;
}

std::string write_in(const std::string& dir, const std::string& name, const std::string& text)
{
  FILE* f = std::fopen((dir + "/" + name).c_str(), "w");
  std::fputs(text.c_str(), f);
  std::fclose(f);
  return dir + "/" + name;
}

/// The report (JSON) of `experiment` run on the user platform `platform_text` (its cluster.yaml).
nlohmann::json run_on_user_platform(const std::string& platform_text, const std::string& experiment)
{
  const std::string exp = write_in(user_dir_with(platform_text), "exp.yaml", experiment);
  auto r = run_cli("run " + exp + " --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return nlohmann::json::parse(r.out);
}

ModelSpec model(int layers, int mtp = 0)
{
  ModelSpec m;
  m.layers = layers;
  m.hidden = 1024;
  m.heads = 8;
  m.kv_heads = 8;
  m.ffn_hidden = 4096;
  m.vocab = 1000;
  m.seq_len = 128;
  m.mtp_layers = mtp;
  return m;
}

TrainingSpec pipe(int pp, int vpp)
{
  TrainingSpec t;
  t.frameworks = catalog().frameworks();
  t.pp = pp;
  t.vpp = vpp;
  return t;
}

} // namespace

TEST_CASE("a cluster the catalog does not know, described in one user file, runs as an experiment and in validate")
{
  std::string dir = user_dir_with(kUserPlatform);
  std::string exp = write_in(dir, "exp.yaml", "name: user\nmodel: llama2-7b\ncluster: {platform: cluster.yaml, gpus: 16}\n"
                                              "training: {tp: 2, dp: 8, micro_batch: 1, global_batch: 16, "
                                              "flash_attention: true, zero: 1}\n");
  auto r = run_cli("run " + exp + " --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["platform"] == "my-h100-96g");
  CHECK(j["memory"]["capacity_bytes"].get<double>() == doctest::Approx(96e9));
  // energy at the 500 W cap, not the 700 W TDP: 16 x 500 W + 2 nodes x 4600 W, PUE 1
  const double hours = j["time_to_train_s"].get<double>() / 3600;
  CHECK(j["energy_mwh"].get<double>() == doctest::Approx((16 * 500.0 + 2 * 4600.0) * hours / 1e6).epsilon(1e-9));
  std::string cases = write_in(dir, "cases.yaml", "cases:\n- id: user_1\n  model: llama2-7b\n"
                                                  "  cluster: {platform: cluster.yaml, gpus: 16}\n"
                                                  "  training: {tp: 2, dp: 8, micro_batch: 1, global_batch: 16, "
                                                  "flash_attention: true, zero: 1}\n"
                                                  "  measured: {metric: mfu, value: 40}\n");
  auto v = run_cli("validate " + cases + " --json");
  REQUIRE_MESSAGE(v.exit_code == 0, v.err);
  CHECK(nlohmann::json::parse(v.out)["cases"][0]["status"] == "ok");
}

TEST_CASE("a misspelt GPU field of a user platform exits 2 at its line")
{
  std::string text = kUserPlatform;
  text.replace(text.find("power_cap"), 9, "power_caps");
  std::string dir = user_dir_with(text);
  std::string exp = write_in(dir, "exp.yaml", "model: llama2-7b\ncluster: {platform: cluster.yaml, gpus: 16}\n"
                                              "training: {tp: 2, dp: 8}\n");
  auto r = run_cli("run " + exp);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find(dir + "/cluster.yaml:7:5: unknown key 'power_caps' in gpu 'h100-sxm5-80gb@my-h100-96g'; did you "
                         "mean 'power_cap'?; valid:") == 0);
  std::string over = kUserPlatform;
  over.replace(over.find("power_cap: 500W"), 15, "power_cap: 800W");
  auto o = run_cli("platform show " + user_dir_with(over) + "/cluster.yaml");
  CHECK(o.exit_code == 2);
  CHECK(o.err.find(":7:16: power_cap 800W exceeds the tdp of 700W") != std::string::npos);
}

TEST_CASE("an inline GPU with every figure, no catalog entry behind it")
{
  std::string text = kUserPlatform;
  text.replace(text.find("    base: h100-sxm5-80gb\n"), 25,
               "    name: Accelerator X\n    sms: 100\n    peak: {bf16: 500TFLOPS, fp16: 500TFLOPS}\n"
               "    tdp: 600W\n    efficiency: {gemm: 0.8, hbm: 0.8, attention: 0.5}\n");
  std::string dir = user_dir_with(text);
  auto r = run_cli("platform show " + dir + "/cluster.yaml --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["gpu"] == "my-h100-96g-gpu");
  CHECK(j["gpu_name"] == "Accelerator X");
  CHECK(j["gpu_peak_bf16_flops"].get<double>() == doctest::Approx(500e12));
  CHECK(j["gpu_power_cap_watts"].get<double>() == doctest::Approx(500));
  std::string missing = kUserPlatform;
  missing.replace(missing.find("    base: h100-sxm5-80gb\n"), 25, "    name: Accelerator X\n");
  auto m = run_cli("platform show " + user_dir_with(missing) + "/cluster.yaml");
  CHECK(m.exit_code == 2);
  CHECK(m.err.find("missing key 'sms' in gpu 'my-h100-96g-gpu'") != std::string::npos);
}

TEST_CASE("a training-shapes median caps a user GPU's GEMMs, and one above its MAMF exits 2 at its column")
{
  auto gpu_with = [](const std::string& gemm) {
    std::string text = kUserPlatform;
    text.replace(text.find("    base: h100-sxm5-80gb\n"), 25,
                 "    name: Accelerator X\n    sms: 132\n    peak: {bf16: 1000TFLOPS, fp16: 1000TFLOPS}\n"
                 "    tdp: 700W\n    efficiency:\n      gemm: {bf16: " + gemm + "}\n      hbm: 0.85\n      attention: 0.5\n");
    return text;
  };
  auto step = [&](const std::string& gemm) {
    return run_on_user_platform(gpu_with(gemm), "model: llama2-7b\ncluster: {platform: cluster.yaml, gpus: 16}\n"
                                                "training: {tp: 2, dp: 8, micro_batch: 1, zero: 1}\n")["step_time_s"]
        .get<double>();
  };
  const double mamf = step("{mamf: 800TFLOPS, shape: 2048x2048x8192}");
  const double capped = step("{mamf: 800TFLOPS, shape: 2048x2048x8192, shapes_median: 500TFLOPS}");
  CHECK(capped > 1.2 * mamf);
  CHECK(step("{mamf: 800TFLOPS, shape: 2048x2048x8192, shapes_median: 800TFLOPS}") == doctest::Approx(mamf));
  std::string dir = user_dir_with(gpu_with("{mamf: 800TFLOPS, shape: 2048x2048x8192, shapes_median: 900TFLOPS}"));
  auto r = run_cli("platform show " + dir + "/cluster.yaml");
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find(dir + "/cluster.yaml:") == 0);
  CHECK(r.err.find(":10:76: shapes_median 900TFLOPS above the MAMF of 800TFLOPS; valid: a median at or below the "
                   "best shape's rate") != std::string::npos);
}

TEST_CASE("a GPU states its own kernel constants: a sustained clock under load below the catalog's slows its GEMMs, "
          "and platform show lists them")
{
  // a GPU that runs well below its peak clock under load (issue: an MI350X at 1,000 W against an
  // MI355X at 1,400 W) says so in its description instead of taking the catalog's one figure
  auto with = [](const std::string& kernels) {
    std::string text = kUserPlatform;
    text.replace(text.find("    power_cap: 500W\n"), 20, kernels.empty() ? "" : "    kernels: " + kernels + "\n");
    return text;
  };
  auto step = [&](const std::string& kernels) {
    return run_on_user_platform(with(kernels),
                                "model: llama3-8b\ncluster: {platform: cluster.yaml, gpus: 8}\n"
                                "training: {tp: 1, dp: 8, micro_batch: 1, zero: 1}\n")["breakdown"]["compute_s"]
        .get<double>();
  };
  const double catalog_sustained = catalog().gpus().find("h100-sxm5-80gb")->sustained;
  const double own = step("{sustained: " + std::to_string(catalog_sustained / 2) + "}");
  const double base = step("");
  // the compute-bound GEMMs take twice as long; the memory-bound kernels do not move
  CHECK(own > 1.6 * base);
  CHECK(own < 2.0 * base);
  CHECK(step("{launch_gap: 50us}") > base);
  std::string dir = user_dir_with(with("{sustained: 0.5, launch_gap: 5us}"));
  auto shown = run_cli("platform show " + dir + "/cluster.yaml --gpus 8");
  REQUIRE_MESSAGE(shown.exit_code == 0, shown.err);
  CHECK(shown.out.find("GPU kernel constants               launch_gap 5us, sustained 0.5 (its own, in place of the "
                       "catalog's)") != std::string::npos);
  const auto j = nlohmann::json::parse(run_cli("platform show " + dir + "/cluster.yaml --gpus 8 --json").out);
  CHECK(j["gpu_own_kernels"]["sustained"] == 0.5);
  // a GPU described without a base takes the catalog's constants where it states none
  GpuSpec described = *catalog().gpus().find("h100-sxm5-80gb");
  described.own_kernels = {{"sustained", 0.5}};
  const GpuSpec given = catalog().gpus().with_kernel_constants(described);
  CHECK(given.sustained == 0.5);
  CHECK(given.launch_gap == catalog().gpus().find("h100-sxm5-80gb")->launch_gap);
  // the catalog's GPUs keep the catalog's figures
  CHECK(nlohmann::json::parse(run_cli("platform show dgx-h100 --gpus 8 --json").out)["gpu_own_kernels"].empty());
  // a misspelt or out-of-range constant exits 2 at its place
  dir = user_dir_with(with("{sustaned: 0.5}"));
  auto bad = run_cli("platform show " + dir + "/cluster.yaml");
  CHECK(bad.exit_code == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err.find(dir + "/cluster.yaml:7:") == 0);
  CHECK(bad.err.find("unknown key 'sustaned' in kernels of gpu") != std::string::npos);
  dir = user_dir_with(with("{sustained: 1.5}"));
  bad = run_cli("platform show " + dir + "/cluster.yaml");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find(dir + "/cluster.yaml:7:") == 0);
}

TEST_CASE("the platforms the published sets name are in the catalog, and each runs from a user's copy")
{
  for (const char* name : {"grand-teton-h100", "dgx-b300", "gb300-nvl72", "hgx-h800", "dgx-b200", "gb200-nvl72"}) {
    CAPTURE(name);
    std::string dir = user_dir_with(read_file(source_path(std::string("platforms/") + name + ".yaml")));
    const int gpus = std::string(name).find("nvl72") != std::string::npos ? 144 : 16;
    std::string exp = write_in(dir, "exp.yaml", "model: llama2-7b\ncluster: {platform: cluster.yaml, gpus: " +
                                                    std::to_string(gpus) + "}\ntraining: {tp: 4, dp: " +
                                                    std::to_string(gpus / 4) + ", micro_batch: 1, flash_attention: "
                                                    "true, zero: 1}\n");
    auto r = run_cli("run " + exp + " --json");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(nlohmann::json::parse(r.out)["step_time_s"].get<double>() > 0);
  }
  auto gt = run_cli("platform show grand-teton-h100 --json");
  auto j = nlohmann::json::parse(gt.out);
  CHECK(j["gpu_memory_bytes"].get<double>() == doctest::Approx(96e9));
  CHECK(j["gpu_memory_bandwidth_Bps"].get<double>() == doctest::Approx(2.4e12));
  CHECK(j["gpu_power_cap_watts"].get<double>() == doctest::Approx(500));
  auto h800 = nlohmann::json::parse(run_cli("platform show hgx-h800 --json").out);
  CHECK(h800["injection_scale_up_Bps"].get<double>() == doctest::Approx(200e9)); // 400 GB/s bidirectional, halved
}

TEST_CASE("the scale-out transports include RoCE, Omni-Path and 800 Gb/s XDR")
{
  for (const char* t : {"roce", "opa", "ib-xdr"}) {
    std::string text = kUserPlatform;
    text.replace(text.find("transport: roce"), 15, std::string("transport: ") + t);
    std::string dir = user_dir_with(text);
    auto r = run_cli("collective --op all_reduce --platform " + dir + "/cluster.yaml --gpus 32 --sizes 1GiB --json");
    CAPTURE(t);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    auto rows = nlohmann::json::parse(r.out);
    // a 1 GiB all-reduce over 4 nodes is bandwidth-bound on the 8 NICs of each node
    CHECK(rows[0]["busbw_GBps"].get<double>() > 100);
  }
  std::string text = kUserPlatform;
  text.replace(text.find("transport: roce"), 15, "transport: rocee");
  auto r = run_cli("platform show " + user_dir_with(text) + "/cluster.yaml");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(":11:65: unknown transport 'rocee'; did you mean 'roce'?") != std::string::npos);
}

TEST_CASE("pipeline layouts: Megatron's layout strings, the embedding and loss slots, and the default split")
{
  SUBCASE("DeepSeek-V3's Et*4|(t*4|)*14tmL on pp 16")
  {
    TrainingSpec t = pipe(16, 1);
    t.pipeline_layout = "Et*4|(t*4|)*14tmL";
    auto v = pipeline_layout(model(61, 1), t);
    REQUIRE(v.size() == 16);
    CHECK(v.front().embedding);
    CHECK(v.front().layers == 4);
    CHECK(v[7].layers == 4);
    CHECK(v.back().layers == 1);
    CHECK(v.back().mtp == 1);
    CHECK(v.back().loss);
    CHECK(v.back().first_layer == 60);
  }
  SUBCASE("Et|(tt|)*30mL on pp 8 x vpp 4")
  {
    TrainingSpec t = pipe(8, 4);
    t.pipeline_layout = "Et|(tt|)*30mL";
    auto v = pipeline_layout(model(61, 1), t);
    REQUIRE(v.size() == 32);
    CHECK(v.back().layers == 0);
    CHECK(layers_per_rank(v, 8) == std::vector<int>{7, 8, 8, 8, 8, 8, 8, 6});
  }
  SUBCASE("Llama 3 405B: 126 layers + embedding + loss on pp 16 x vpp 8, one slot each")
  {
    TrainingSpec t = pipe(16, 8);
    t.embedding_slot = true;
    t.loss_slot = true;
    auto v = pipeline_layout(model(126), t);
    REQUIRE(v.size() == 128);
    CHECK(v.front().layers == 0);
    CHECK(v.front().embedding);
    CHECK(v.back().layers == 0);
    CHECK(v.back().loss);
    std::vector<int> per = layers_per_rank(v, 16);
    CHECK(per.front() == 7);
    CHECK(per.back() == 7);
    CHECK(per[5] == 8);
  }
  SUBCASE("without slots the remainder goes to the middle stages")
  {
    auto v = pipeline_layout(model(126), pipe(8, 1));
    CHECK(layers_per_rank(v, 8) == std::vector<int>{15, 16, 16, 16, 16, 16, 16, 15});
  }
  SUBCASE("malformed and mismatched layouts say why")
  {
    for (const auto& [text, why] : std::vector<std::pair<std::string, std::string>>{
             {"Et*4|(t*4|*14tmL", "'(' without ')'"},
             {"Et*4|x", "unknown symbol 'x'"},
             {"Et*|t", "'*' needs a count"},
             {"Et*4|(t*4|)*13tmL", "15 stages for pp*vpp = 16"},
             {"Et*4|(t*4|)*14tL", "places 0 MTP modules"},
             {"t*4|(t*4|)*14tmEL", "the embedding E once, in the first stage"}}) {
      TrainingSpec t = pipe(16, 1);
      t.pipeline_layout = text;
      auto p = layout_problem(model(61, 1), t);
      CAPTURE(text);
      REQUIRE(p);
      CHECK(p->find(why) != std::string::npos);
    }
  }
}

TEST_CASE("Llama 3 405B on 16,384 H100 with Meta's layout runs and reports its per-stage layers")
{
  // the memory model puts Meta's layout 1 % over 80 GiB (80.89 GiB, activations without
  // recompute), so run exits 3 on it; the layers are what this test reads
  auto r = run_cli("run " + source_path("experiments/llama3-405b-16k.yaml") + " --json --allow-oom");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["gpus"] == 16384);
  CHECK(j["layout"]["vpp"] == 8);
  CHECK(j["pipeline"]["layers_per_stage"].size() == 16);
  CHECK(j["pipeline"]["layers_per_stage"][0] == 7);
  CHECK(j["pipeline"]["layers_per_stage"][15] == 7);
  CHECK(j["pipeline"]["stages"].get<std::string>().rfind("E 7 | 8 |", 0) == 0);
  auto t = run_cli("run " + source_path("experiments/llama3-405b-16k.yaml") + " --allow-oom");
  CHECK(t.out.find("layers per pipeline stage: E 7 | 8 | 8") != std::string::npos);
  // without the slots the same layout is refused at vpp, as Megatron refuses it
  std::string bad = write_temp("l3.yaml", "model: llama3-405b\ncluster: {platform: dgx-h100, gpus: 16384}\n"
                                          "training: {tp: 8, pp: 16, vpp: 8, micro_batch: 1, global_batch: 2048}\n");
  auto b = run_cli("run " + bad);
  CHECK(b.exit_code == 2);
  CHECK(b.err.find(":3:32: pp*vpp = 128 chunks exceed the model's 126 layers") != std::string::npos);
}

TEST_CASE("validate reports a case that cannot be built in its row and runs the others")
{
  std::string f = write_temp("cases.yaml", R"(cases:
- id: good_1
  model: gpt3-125m
  cluster: {platform: dgx-a100-80gb, gpus: 8}
  training: {dp: 8}
  measured: {metric: mfu, value: 20}
- id: badlayout_1
  model: llama3-405b
  cluster: {platform: dgx-h100, gpus: 2048}
  training: {tp: 8, pp: 16, vpp: 8, micro_batch: 1, global_batch: 256}
  measured: {metric: mfu, value: 40}
- id: badplatform_1
  model: gpt3-125m
  cluster: {platform: dgx-x100, gpus: 8}
  training: {dp: 8}
  measured: {metric: mfu, value: 20}
)");
  auto r = run_cli("validate " + f + " --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["cases"].size() == 3);
  CHECK(j["cases"][0]["status"] == "ok");
  CHECK(j["cases"][1]["status"].get<std::string>().rfind("cannot build: " + f + ":10:", 0) == 0);
  CHECK(j["cases"][1]["status"].get<std::string>().find("chunks exceed the model's 126 layers") != std::string::npos);
  CHECK(j["cases"][2]["status"].get<std::string>().find("unknown platform 'dgx-x100'") != std::string::npos);
  CHECK(j["summary"]["misses"] == 2);
  CHECK(j["summary"]["cannot_build"] == 2);
  CHECK(j["summary"]["count"] == 1);
  auto text = run_cli("validate " + f);
  CHECK(text.out.find("2 case(s) could not be built") != std::string::npos);
}

TEST_CASE("all three published sets parse and run every case, and the framework is reported")
{
  for (const char* file : {"public.yaml", "frontier.yaml", "moe.yaml"}) {
    auto r = run_cli("validate " + validation_path(file) + " --json");
    CAPTURE(file);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    auto j = nlohmann::json::parse(r.out);
    for (const auto& c : j["cases"]) {
      CAPTURE(c["id"].get<std::string>());
      const std::string status = c["status"];
      CHECK((status == "ok" || status == "oom"));
    }
  }
  std::string f = write_temp("fw.yaml", "model: gpt3-125m\ncluster: {platform: dgx-a100-80gb, gpus: 8}\n"
                                        "training: {dp: 8, framework: torchtitan}\n");
  auto r = run_cli("run " + f + " --json");
  REQUIRE(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out)["layout"]["framework"] == "torchtitan");
  std::string g = write_temp("fw2.yaml", "model: gpt3-125m\ncluster: {platform: dgx-a100-80gb, gpus: 8}\n"
                                         "training: {dp: 8, framework: titan}\n");
  auto b = run_cli("run " + g);
  CHECK(b.exit_code == 2);
  CHECK(b.err.find(":3:30: unknown framework 'titan'") != std::string::npos);
}

TEST_CASE("a catalog platform with overrides: in a file with base:, in place in an experiment, and as sweep axes")
{
  const PlatformSpec h100 = catalog().platform("dgx-h100", {});
  // a file: only what it writes changes, sections merge key by key
  const std::string file = write_temp("h100-800g.yaml", "base: dgx-h100\nname: h100-800g\nnode:\n"
                                                        "  nics: {bandwidth: 800Gbps}\nfabric: {oversubscription: 2}\n");
  const PlatformSpec p = catalog().platform(file, {});
  CHECK(p.name == "h100-800g");
  CHECK(p.description == h100.description);
  CHECK(p.node.nic.bandwidth == doctest::Approx(2 * h100.node.nic.bandwidth));
  CHECK(p.fabric.link.bandwidth == doctest::Approx(p.node.nic.bandwidth)); // links default to the NIC's rate
  CHECK(p.node.nic.latency == h100.node.nic.latency);
  CHECK(p.node.nic_transport == h100.node.nic_transport);
  CHECK(p.node.nvlink.bandwidth == h100.node.nvlink.bandwidth);
  CHECK(p.fabric.kind == h100.fabric.kind);
  CHECK(p.fabric.radix == h100.fabric.radix);
  CHECK(p.fabric.oversubscription == 2);
  CHECK(p.cost.usd_per_gpu_hour == h100.cost.usd_per_gpu_hour);
  // in place: the name lists what changed
  const std::string exp = write_temp("inline.yaml", R"(name: inline
model: gpt3-1.3b
cluster:
  platform: {base: dgx-h100, node: {nics: {bandwidth: 100Gbps}}}
  gpus: 64
training: {tp: 1, pp: 1, dp: 64, micro_batch: 1, global_batch: 64, precision: bf16}
)");
  auto slow = run_cli("run " + exp + " --json");
  REQUIRE_MESSAGE(slow.exit_code == 0, slow.err);
  auto j = nlohmann::json::parse(slow.out);
  CHECK(j["platform"] == "dgx-h100 (node.nics.bandwidth: 100Gbps)");
  // a sweep over the NIC's rate: slower NICs make the data-parallel all-reduce slower
  const std::string sweep = write_temp("nics.yaml", R"(name: nics
model: gpt3-1.3b
cluster: {platform: dgx-h100, gpus: 64}
training: {tp: 1, pp: 1, dp: 64, micro_batch: 1, global_batch: 64, precision: bf16}
sweep:
  axes:
    cluster.platform.node.nics.bandwidth: [100Gbps, 400Gbps, 800Gbps]
)");
  const std::string out = temp_dir();
  auto r = run_cli("run " + sweep + " --out " + out);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto rows = nlohmann::json::parse(read_file(out + "/results.json"))["rows"];
  REQUIRE(rows.size() == 3);
  const double at100 = rows[0]["step_time_s"], at400 = rows[1]["step_time_s"], at800 = rows[2]["step_time_s"];
  CHECK(rows[0]["cluster.platform.node.nics.bandwidth"] == "100Gbps");
  CHECK(at100 == doctest::Approx(j["step_time_s"].get<double>()).epsilon(1e-12));
  CHECK(at100 > at400 * 1.05);
  CHECK(at800 <= at400);
}

TEST_CASE("800 Gb/s NICs on an H100 node: the node's PCIe 5.0 x16 lets through about 63 GB/s, not twice 400G")
{
  auto show = [](const std::string& name) {
    auto r = run_cli("platform show " + name + " --json");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    return nlohmann::json::parse(r.out);
  };
  CHECK(show("dgx-h100")["injection_scale_out_Bps"].get<double>() == doctest::Approx(50e9));
  CHECK(show("dgx-h100-800g")["injection_scale_out_Bps"].get<double>() == doctest::Approx(63e9));
  auto busbw = [](const std::string& platform) {
    auto r = run_cli("collective --op sendrecv --platform " + platform + " --gpus 16 --sizes 1GiB --json");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    return nlohmann::json::parse(r.out)[0]["busbw_GBps"].get<double>();
  };
  const double at400 = busbw("dgx-h100"), at800 = busbw("dgx-h100-800g"), b300 = busbw("dgx-b300");
  CHECK(at800 > 1.1 * at400);
  CHECK(at800 < 63.0);   // PCIe 5.0 x16, per direction
  CHECK(b300 > 1.4 * at800); // the same NIC behind PCIe 6.0 gives its rate
}
