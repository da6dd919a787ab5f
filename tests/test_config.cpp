// Every class of configuration error: the message names FILE:LINE:COL, says what is wrong
// and what is valid.
#include "sim/Protocols.hpp"
#include "sim/study/Experiment.hpp"
#include "tests/TestUtil.hpp"
#include "topology/ClusterGraph.hpp"
#include "topology/config/ConfigError.hpp"

#include <doctest/doctest.h>

#include <fstream>

using namespace clustersim;
using clustersim::test::catalog;
using clustersim::test::run_cli;
using clustersim::test::write_temp;

namespace {

const char* kGood = R"(name: ok
model:
  layers: 4
  hidden: 512
  heads: 8
  vocab: 1000
  seq_len: 128
cluster:
  platform: dgx-a100-80gb
  gpus: 16
training:
  tp: 2
  dp: 8
  micro_batch: 2
  global_batch: 64
)";

/// Loads `text` as an experiment and checks the error's position and wording.
void expect_error(const std::string& text, int line, int col, const std::string& what)
{
  std::string path = write_temp("exp.yaml", text);
  try {
    load_experiment(path, catalog());
    FAIL("no error for: " << what);
  } catch (const ConfigError& e) {
    std::string msg = e.what();
    std::string where = path + ":" + std::to_string(line) + ":" + std::to_string(col) + ": ";
    CHECK_MESSAGE(msg.rfind(where, 0) == 0, msg);
    CHECK_MESSAGE(msg.find(what) != std::string::npos, msg);
    CHECK_MESSAGE(msg.find("; valid: ") != std::string::npos, msg);
  }
}

std::string replace(std::string s, const std::string& from, const std::string& to)
{
  auto pos = s.find(from);
  REQUIRE(pos != std::string::npos);
  return s.replace(pos, from.size(), to);
}

} // namespace

TEST_CASE("a valid experiment loads into typed specs")
{
  ExperimentSpec e = load_experiment(write_temp("exp.yaml", kGood), catalog());
  CHECK(e.gpus == 16);
  CHECK(e.training.tp == 2);
  CHECK(e.training.dp == 8);
  CHECK(e.model.ffn_hidden == 2048);
  CHECK(e.model.kv_heads == 8);
  CHECK(e.platform.node.gpus == 8);
  CHECK(e.platform.node.nvlink.bandwidth == doctest::Approx(300e9)); // 600 GB/s bidirectional, halved
}

TEST_CASE("experiment errors point at the offending key")
{
  SUBCASE("misspelled key gets a suggestion")
  {
    expect_error(replace(kGood, "  micro_batch: 2", "  micro_bach: 2"), 14, 3,
                 "unknown key 'micro_bach' in training; did you mean 'micro_batch'?");
  }
  SUBCASE("misspelled section")
  {
    expect_error(replace(kGood, "training:", "trainig:"), 11, 1,
                 "unknown key 'trainig' in experiment; did you mean 'training'?");
  }
  SUBCASE("YAML syntax")
  {
    expect_error(replace(kGood, "  tp: 2", "  tp: [2"), 13, 5, "YAML syntax error");
  }
  SUBCASE("missing section")
  {
    expect_error(replace(kGood, "training:", "other:"), 1, 1, "missing key 'training'");
  }
  SUBCASE("not an integer")
  {
    expect_error(replace(kGood, "  tp: 2", "  tp: two"), 12, 7, "'two' is not an integer");
  }
  SUBCASE("out of range")
  {
    expect_error(replace(kGood, "  tp: 2", "  tp: 0"), 12, 7, "0 is out of range");
  }
  SUBCASE("unit missing")
  {
    expect_error(replace(kGood, "  dp: 8", "  dp: 8\n  bucket_size: 25"), 14, 16, "'25' has no unit");
  }
  SUBCASE("unknown choice")
  {
    expect_error(replace(kGood, "  dp: 8", "  dp: 8\n  recompute: fulll"), 14, 14,
                 "unknown recompute 'fulll'; did you mean 'full'?");
  }
  SUBCASE("unknown platform")
  {
    expect_error(replace(kGood, "dgx-a100-80gb", "dgx-a100-80g"), 9, 13,
                 "unknown platform 'dgx-a100-80g'; did you mean 'dgx-a100-80gb'?");
  }
  SUBCASE("unknown model preset")
  {
    std::string text = kGood;
    text = text.substr(0, text.find("model:")) + "model: gpt3-1.3 \n" + text.substr(text.find("cluster:"));
    expect_error(text, 2, 8, "unknown model preset 'gpt3-1.3'; did you mean 'gpt3-1.3b'?");
  }
  SUBCASE("GPU count not a multiple of the node")
  {
    expect_error(replace(replace(kGood, "gpus: 16", "gpus: 12"), "  dp: 8", "  dp: 6"), 10, 9,
                 "12 GPUs is not a multiple of the 8 GPUs per node");
  }
  SUBCASE("layout does not multiply to the GPU count")
  {
    expect_error(replace(kGood, "  dp: 8", "  dp: 4"), 13, 7, "tp*pp*cp*dp = 2*1*1*4 = 8 but cluster.gpus is 16");
  }
  SUBCASE("tp does not divide heads")
  {
    expect_error(replace(replace(kGood, "heads: 8", "heads: 5"), "hidden: 512", "hidden: 510"), 12, 7,
                 "tp 2 does not divide the model's 5 attention heads");
  }
  SUBCASE("global batch not a multiple of micro_batch x dp")
  {
    expect_error(replace(kGood, "global_batch: 64", "global_batch: 60"), 15, 17,
                 "global_batch 60 is not a multiple of micro_batch*dp = 2*8");
  }
  SUBCASE("heads do not divide hidden")
  {
    expect_error(replace(kGood, "hidden: 512", "hidden: 500"), 3, 3, "hidden 500 is not divisible by heads 8");
  }
  SUBCASE("precision the GPU lacks")
  {
    expect_error(replace(replace(kGood, "dgx-a100-80gb", "dgx1-v100"), "  dp: 8", "  dp: 8\n  precision: bf16"), 14, 14,
                 "GPU 'v100-sxm2-32gb' has no bf16 support");
  }
  SUBCASE("FP4 on a GPU without it, and with a framework that has no FP4 recipe")
  {
    expect_error(replace(kGood, "  dp: 8", "  dp: 8\n  precision: fp4"), 14, 14,
                 "GPU 'a100-sxm4-80gb' has no fp4 support");
    const std::string b200 = replace(kGood, "dgx-a100-80gb", "dgx-b200");
    expect_error(replace(b200, "  dp: 8", "  dp: 8\n  precision: fp4\n  framework: torchtitan"), 15, 14,
                 "framework 'torchtitan' has no FP4 training recipe");
  }
  SUBCASE("duplicate key")
  {
    expect_error(replace(kGood, "  dp: 8", "  dp: 8\n  dp: 8"), 14, 3, "duplicate key 'dp' in training");
  }
  SUBCASE("mapping expected")
  {
    expect_error(replace(kGood, "  platform: dgx-a100-80gb\n  gpus: 16", "  - dgx-a100-80gb"), 9, 3,
                 "'cluster' must be a mapping");
  }
  SUBCASE("interleaved schedule without vpp")
  {
    expect_error(replace(kGood, "  dp: 8", "  dp: 8\n  pipeline_schedule: interleaved"), 14, 22,
                 "the interleaved schedule needs vpp >= 2");
  }
}

TEST_CASE("a missing experiment file is a clean error")
{
  CHECK_THROWS_WITH_AS(load_experiment("/nonexistent/exp.yaml", catalog()),
                       doctest::Contains("/nonexistent/exp.yaml: cannot open file; valid:"), ConfigError);
}

TEST_CASE("platform file errors")
{
  auto load = [](const std::string& text) { return load_platform(write_temp("p.yaml", text), catalog().gpus()); };
  std::string base = R"(name: t
node:
  gpu: a100-sxm4-80gb
  gpus: 8
  scale_up: {kind: nvswitch, bandwidth: 600GBps, bidirectional: true, latency: 0.3us, transport: nvlink3}
  pcie: {bandwidth: 31.5GBps, latency: 0.2us, switches: 4, cpus: 2, cpu_link: 100GBps, transport: pcie4}
  nics: {count: 8, bandwidth: 200Gbps, latency: 0.6us, transport: ib-hdr}
fabric: {kind: fat-tree, radix: 40, switch_latency: 0.13us}
)";
  CHECK_NOTHROW(load(base));
  SUBCASE("unknown GPU")
  {
    CHECK_THROWS_WITH_AS(load(replace(base, "a100-sxm4-80gb", "a100-sxm4-80")),
                         doctest::Contains(":3:8: unknown gpu 'a100-sxm4-80'; did you mean 'a100-sxm4-80gb'?"),
                         ConfigError);
  }
  SUBCASE("dangling NIC")
  {
    CHECK_THROWS_WITH_AS(load(replace(base, "count: 8", "count: 8, gpus: [0, 0, 1, 1, 2, 2, 3, 3]")),
                         doctest::Contains("NIC 4 serves no GPU (dangling NIC); valid:"), ConfigError);
  }
  SUBCASE("unknown fabric kind")
  {
    CHECK_THROWS_WITH_AS(load(replace(base, "fat-tree", "fat_tree")),
                         doctest::Contains(":8:16: unknown fabric kind 'fat_tree'; did you mean 'fat-tree'?"),
                         ConfigError);
  }
  SUBCASE("radix too small for the node count")
  {
    PlatformSpec p = load(replace(base, "radix: 40", "radix: 8"));
    CHECK_THROWS_WITH_AS(ClusterGraph::build(p, 4096), doctest::Contains("fabric radix 8 is too small for 512 nodes"),
                         ConfigError);
  }
  SUBCASE("GPU count not a multiple of the node size")
  {
    PlatformSpec p = load(base);
    CHECK_THROWS_WITH_AS(ClusterGraph::build(p, 12),
                         doctest::Contains("12 GPUs is not a multiple of the 8 GPUs per node"), ConfigError);
  }
  SUBCASE("bidirectional figure is halved")
  {
    PlatformSpec p = load(base);
    CHECK(p.node.nvlink.bandwidth == doctest::Approx(300e9));
    CHECK(p.node.nic.bandwidth == doctest::Approx(25e9));
  }
}

TEST_CASE("model files: presets and Hugging Face config.json")
{
  SUBCASE("Llama-style config.json")
  {
    std::string path = write_temp("config.json", R"({
  "model_type": "llama",
  "hidden_size": 4096,
  "intermediate_size": 11008,
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 32,
  "max_position_embeddings": 4096,
  "rms_norm_eps": 1e-05,
  "tie_word_embeddings": false,
  "vocab_size": 32000,
  "hidden_act": "silu"
})");
    ModelSpec m = import_hf_config(path);
    CHECK(m.mlp == MlpKind::swiglu);
    CHECK(m.norm == NormKind::rmsnorm);
    CHECK(m.total_params() == doctest::Approx(6.738e9).epsilon(0.005)); // Llama-2 7B
  }
  SUBCASE("config.json missing a dimension")
  {
    std::string path = write_temp("config.json", R"({"model_type": "llama", "hidden_size": 4096})");
    CHECK_THROWS_WITH_AS(import_hf_config(path), doctest::Contains(":1:1: config.json has none of num_hidden_layers"),
                         ConfigError);
  }
  SUBCASE("config.json with a bad value")
  {
    std::string path = write_temp("config.json", "{\"model_type\": \"gpt2\",\n \"n_embd\": \"wide\"}");
    CHECK_THROWS_WITH_AS(import_hf_config(path), doctest::Contains(":2:12: 'wide' is not an integer"), ConfigError);
  }
}

TEST_CASE("catalog files: GPU catalog and protocol constants")
{
  SUBCASE("GPU with a figure missing its unit")
  {
    std::string path = write_temp("gpus.yaml", R"(gpus:
  x:
    sms: 10
    peak: {bf16: 100}
    memory: {capacity: 10GiB, bandwidth: 1TBps}
    tdp: 100W
    efficiency: {gemm: 0.8, hbm: 0.8, attention: 0.5}
)");
    CHECK_THROWS_WITH_AS(GpuCatalog::load(path), doctest::Contains(":4:18: '100' has no unit; valid:"), ConfigError);
  }
  SUBCASE("GPU without SM count")
  {
    std::string path = write_temp("gpus.yaml", "gpus:\n  x:\n    peak: {bf16: 1TFLOPS}\n");
    CHECK_THROWS_WITH_AS(GpuCatalog::load(path), doctest::Contains(":3:5: missing key 'sms' in gpu 'x'"), ConfigError);
  }
  SUBCASE("efficiency out of range")
  {
    std::string path = write_temp("gpus.yaml", R"(gpus:
  x:
    sms: 10
    peak: {bf16: 100TFLOPS}
    memory: {capacity: 10GiB, bandwidth: 1TBps}
    tdp: 100W
    efficiency: {gemm: 1.8, hbm: 0.8, attention: 0.5}
)");
    CHECK_THROWS_WITH_AS(GpuCatalog::load(path), doctest::Contains(":7:24: 1.8 is out of range"), ConfigError);
  }
  SUBCASE("protocol constants with a typo")
  {
    std::string path =
        write_temp("collectives.yaml",
                   "transports:\n  nvlink9:\n    simple: {step_latncy: 1us, efficiency: 0.8, base_latency: 1us}\n");
    CHECK_THROWS_WITH_AS(ProtocolTable::load(path),
                         doctest::Contains("unknown key 'step_latncy' in nvlink9.simple; did you mean 'step_latency'?"),
                         ConfigError);
  }
  SUBCASE("protocol constants: an unknown protocol")
  {
    std::string path =
        write_temp("collectives.yaml",
                   "transports:\n  nvlink9:\n    simpel: {step_latency: 1us, efficiency: 0.8, base_latency: 1us}\n");
    CHECK_THROWS_WITH_AS(ProtocolTable::load(path),
                         doctest::Contains(":3:5: unknown key 'simpel' in transport 'nvlink9'; did you mean 'simple'?"),
                         ConfigError);
  }
  SUBCASE("protocol constants: an algorithm factor for an algorithm that is not registered")
  {
    // a misspelt name would leave the real algorithm's bandwidth at 1.0 without a word
    std::string path = write_temp("collectives.yaml", "algorithms:\n  treee: {bandwidth_factor: 0.92}\ntransports:\n"
                                                      "  nvlink9:\n    simple: {step_latency: 1us, efficiency: 0.8, "
                                                      "base_latency: 1us}\n");
    CHECK_THROWS_WITH_AS(ProtocolTable::load(path),
                         doctest::Contains(":2:3: unknown collective algorithm 'treee'; did you mean 'tree'?"),
                         ConfigError);
  }
}

TEST_CASE("Hugging Face config.json of several families")
{
  struct Case {
    const char* json;
    double params;
  };
  Case cases[] = {
      // gpt2 (124M): learned positions, tied embeddings
      {R"({"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "n_positions": 1024, "vocab_size": 50257,
           "activation_function": "gelu_new", "n_inner": null})",
       124.44e6},
      // Mistral 7B: GQA, SwiGLU
      {R"({"model_type": "mistral", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
           "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000, "max_position_embeddings": 32768,
           "rms_norm_eps": 1e-05, "tie_word_embeddings": false, "hidden_act": "silu"})",
       7.2417e9},
      // Qwen2 7B
      {R"({"model_type": "qwen2", "hidden_size": 3584, "num_hidden_layers": 28, "num_attention_heads": 28,
           "num_key_value_heads": 4, "intermediate_size": 18944, "vocab_size": 152064, "max_position_embeddings": 32768,
           "rms_norm_eps": 1e-06, "tie_word_embeddings": false, "hidden_act": "silu"})",
       7.6156e9},
      // GPT-NeoX 20B: rotary, untied
      {R"({"model_type": "gpt_neox", "hidden_size": 6144, "num_hidden_layers": 44, "num_attention_heads": 64,
           "intermediate_size": 24576, "vocab_size": 50432, "max_position_embeddings": 2048, "tie_word_embeddings": false,
           "hidden_act": "gelu"})",
       20.55e9},
      // OPT 1.3B: ffn_dim, learned positions, tied
      {R"({"model_type": "opt", "hidden_size": 2048, "num_hidden_layers": 24, "num_attention_heads": 32, "ffn_dim": 8192,
           "vocab_size": 50272, "max_position_embeddings": 2048, "activation_function": "relu"})",
       1.3157e9},
  };
  for (const auto& c : cases) {
    ModelSpec m = import_hf_config(write_temp("config.json", c.json));
    CAPTURE(m.name);
    CHECK(m.total_params() == doctest::Approx(c.params).epsilon(0.005));
  }
}

TEST_CASE("dropout: stated, else as the biases, and a config.json's dropout probabilities decide where it gives them")
{
  auto yaml = [](const std::string& text) {
    return parse_model(YamlNode::load_string(text, "model.yaml"), catalog().models_dir());
  };
  const std::string dims = "layers: 2\nhidden: 256\nheads: 4\nvocab: 1000\nseq_len: 128\n";
  CHECK(yaml(dims).dropout);                         // GPT-style by default
  CHECK_FALSE(yaml(dims + "mlp: swiglu\n").dropout); // Llama-style
  CHECK_FALSE(yaml(dims + "bias: false\n").dropout);
  CHECK_FALSE(yaml(dims + "bias: true\ndropout: false\n").dropout); // MPT: biases, no dropout
  CHECK(yaml(dims + "mlp: swiglu\ndropout: true\n").dropout);
  auto hf = [](const std::string& extra) {
    return import_hf_config(write_temp("config.json", R"({"model_type": "gpt2", "n_embd": 768, "n_layer": 12,
      "n_head": 12, "n_positions": 1024, "vocab_size": 50257, "activation_function": "gelu_new")" +
                                                          extra + "}"));
  };
  CHECK(hf("").dropout);
  CHECK(hf(R"(, "resid_pdrop": 0.1, "attn_pdrop": 0.1, "embd_pdrop": 0.1)").dropout);
  CHECK_FALSE(hf(R"(, "resid_pdrop": 0.0, "attn_pdrop": 0.0, "embd_pdrop": 0.0)").dropout);
  CHECK(hf(R"(, "resid_pdrop": 0.0, "attn_pdrop": 0.1)").dropout);
  // a probability written null states nothing
  CHECK_FALSE(hf(R"(, "resid_pdrop": 0.0, "attn_pdrop": null)").dropout);
}

TEST_CASE("an experiment can import its model from a config.json next to it")
{
  std::string dir = clustersim::test::temp_dir();
  std::ofstream(dir + "/config.json") << R"({"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 4,
    "num_attention_heads": 16, "intermediate_size": 5632, "vocab_size": 32000, "rms_norm_eps": 1e-5})";
  std::ofstream(dir + "/exp.yaml") << "model: {hf_config: config.json, seq_len: 1024}\n"
                                      "cluster: {platform: dgx-a100-80gb, gpus: 8}\n"
                                      "training: {dp: 8}\n";
  ExperimentSpec e = load_experiment(dir + "/exp.yaml", catalog());
  CHECK(e.model.seq_len == 1024);
  CHECK(e.model.mlp == MlpKind::swiglu);
  std::ofstream(dir + "/bad.yaml") << "model: {hf_config: missing.json}\ncluster: {platform: dgx-a100-80gb, gpus: 8}\n"
                                      "training: {dp: 8}\n";
  CHECK_THROWS_WITH_AS(load_experiment(dir + "/bad.yaml", catalog()),
                       doctest::Contains("bad.yaml:1:20: cannot open Hugging Face config 'missing.json'"), ConfigError);
}

TEST_CASE("a config.json's max_position_embeddings is not taken as the training length: the experiment and the "
          "commands ask for one")
{
  std::string dir = clustersim::test::temp_dir();
  std::ofstream(dir + "/config.json") << R"({"model_type": "qwen2", "hidden_size": 3584, "num_hidden_layers": 28,
    "num_attention_heads": 28, "num_key_value_heads": 4, "intermediate_size": 18944, "vocab_size": 152064,
    "max_position_embeddings": 131072, "rms_norm_eps": 1e-6})";
  CHECK(import_hf_config(dir + "/config.json").seq_len_from_config ==
        "max_position_embeddings 131072: the longest context the model supports, not the length it trains at");
  std::ofstream(dir + "/exp.yaml") << "model: {hf_config: config.json}\n"
                                      "cluster: {platform: dgx-h100, gpus: 8}\ntraining: {tp: 8}\n";
  auto r = run_cli("run " + dir + "/exp.yaml");
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == dir + "/exp.yaml:1:20: the config.json gives max_position_embeddings 131072: the "
                       "longest context the model supports, not the length it trains at; valid: seq_len: LENGTH "
                       "beside hf_config (e.g. seq_len: 4096)\n");
  auto m = run_cli("memory --model " + dir + "/config.json --gpu h100-sxm5-80gb --tp 4 --gpus 8");
  CHECK(m.exit_code == 2);
  CHECK(m.err == "command line: --model: the config.json gives max_position_embeddings 131072: the "
                 "longest context the model supports, not the length it trains at; valid: --seq LENGTH (e.g. --seq "
                 "4096)\n");
  auto ok = run_cli("memory --model " + dir + "/config.json --gpu h100-sxm5-80gb --tp 4 --gpus 8 --seq 4096 --json");
  REQUIRE_MESSAGE(ok.exit_code == 0, ok.err);
  CHECK(ok.out.find("\"fits\": true") != std::string::npos);
  auto plan = run_cli("plan --model " + dir + "/config.json --platform dgx-h100 --gpus 8 --global-batch 8");
  CHECK(plan.exit_code == 2);
  CHECK(plan.err.find("valid: --seq LENGTH") != std::string::npos);
  auto est = run_cli("estimate --model " + dir + "/config.json --tokens 1T --platform dgx-h100 --gpus 8 --mfu 0.4");
  CHECK(est.exit_code == 2);
  CHECK(est.err.find("valid: a model file with hf_config and seq_len") != std::string::npos);
}
