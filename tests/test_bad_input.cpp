// Bad input gets one line `FILE:LINE:COL: what is wrong; valid: ...` (or `command line: --flag
// ...; valid: ...`), exit 2, nothing on stdout and nothing written: one test per defect found by
// feeding the parsers wrong, hostile and huge inputs, each with its reproduction. A few were
// valid inputs wrongly refused; those must run.
#include "tests/TestUtil.hpp"

#include <nlohmann/json.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <tuple>
#include <sys/stat.h>
#include <unistd.h>

using namespace clustersim::test;

namespace {

/// Runs `clustersim ARGS` and checks the one-line error: exit 2, stderr starting with `where`
/// and containing `what` and "; valid: ", nothing on stdout.
void expect_error(const std::string& args, const std::string& where, const std::string& what)
{
  auto r = run_cli(args);
  INFO("clustersim " << args << "\nstderr: " << r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.rfind(where, 0) == 0);
  CHECK(r.err.find(what) != std::string::npos);
  CHECK(r.err.find("; valid: ") != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

std::string experiment(const std::string& name, const std::string& training, const std::string& extra = "",
                       const std::string& cluster = "{platform: dgx-a100-80gb, gpus: 8}",
                       const std::string& model = "gpt3-125m")
{
  return write_temp(name, "name: x\nmodel: " + model + "\ncluster: " + cluster + "\ntraining: " + training + "\n" +
                              extra);
}

/// A `training:` mapping that is an error at its line 4, column `col`, saying `what`.
struct TrainingErrorCase {
  const char* training;
  const char* col; ///< where the offending value starts
  const char* what;
};

template <std::size_t N> void expect_training_errors(const std::string& name, const TrainingErrorCase (&cases)[N])
{
  for (const TrainingErrorCase& c : cases) {
    const std::string f = experiment(name, c.training);
    expect_error("run " + f, f + c.col, c.what);
  }
}

/// A copy of a catalog platform with one line replaced.
std::string platform_with(const std::string& from, const std::string& to)
{
  std::string text = read_file(source_path("platforms/dgx-h100.yaml"));
  auto pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  return write_temp("p.yaml", text.replace(pos, from.size(), to));
}

const char* kSweepBase = "name: s\nmodel: gpt3-125m\ncluster: {platform: dgx-a100-80gb, gpus: 8}\n"
                         "training: {dp: 8, global_batch: 8}\n";

} // namespace

TEST_CASE("micro_batch*dp beyond int is a batch error, not SIGFPE, and one such sweep point does not end the sweep")
{
  std::string f = experiment("d1.yaml", "{tp: 1, pp: 1, dp: 4096, micro_batch: 1048576, global_batch: 1}", "",
                             "{platform: dgx-a100-80gb, gpus: 4096}");
  expect_error("run " + f, f + ":4:", "is not a multiple of micro_batch*dp = 1048576*4096");
  std::string sweep = write_temp("d1s.yaml", std::string(kSweepBase) +
                                                 "sweep:\n  axes:\n    training.micro_batch: [1, 1048576]\n");
  auto r = run_cli("run " + sweep);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("\n0,1,ok,") != std::string::npos);
  CHECK(r.out.find("\n1,1048576,invalid,") != std::string::npos);
}

TEST_CASE("Megatron-LM's and torchtitan's names for a training key are suggested as ours, in a file, a sweep axis "
          "and plan --fixed")
{
  auto f = experiment("megatron-names.yaml", "{tensor_model_parallel_size: 8}");
  expect_error("run " + f, f + ":4:12:",
               "unknown key 'tensor_model_parallel_size' in training; did you mean 'tp' (Megatron-LM's "
               "--tensor-model-parallel-size)?");
  auto dashes = experiment("megatron-dashes.yaml", "{--micro-batch-size: 2}");
  expect_error("run " + dashes, dashes + ":4:12:",
               "unknown key '--micro-batch-size' in training; did you mean 'micro_batch' (Megatron-LM's "
               "--micro-batch-size)?");
  auto vpp = experiment("megatron-vpp.yaml", "{num_layers_per_virtual_pipeline_stage: 2}");
  expect_error("run " + vpp, vpp + ":4:12:", "did you mean 'vpp' (Megatron-LM's --num-layers-per-virtual-pipeline-stage "
                                             "counts layers; vpp is layers per pipeline rank divided by it)?");
  auto titan = experiment("torchtitan-names.yaml", "{data_parallel_shard_degree: 8}");
  expect_error(
      "run " + titan, titan + ":4:12:",
      "did you mean 'dp' with 'zero: 3' (torchtitan's parallelism.data_parallel_shard_degree: FSDP), or 'dp_shard' "
      "with 'data_parallel: hsdp' when it replicates as well?");
  // a plain typo still gets the nearest key
  auto typo = experiment("typo.yaml", "{tpp: 8}");
  expect_error("run " + typo, typo + ":4:12:", "unknown key 'tpp' in training; did you mean 'tp'?");
  auto sweep = write_temp("megatron-axis.yaml", std::string(kSweepBase) +
                                                    "sweep:\n  axes:\n    training.pipeline_model_parallel_size: [1, 2]\n");
  expect_error("run " + sweep + " --out " + temp_dir() + "/o", sweep + ":7:5:",
               "unknown axis key 'pipeline_model_parallel_size' in training; did you mean 'pp' (Megatron-LM's "
               "--pipeline-model-parallel-size)?");
  expect_error("plan --model gpt3-125m --platform dgx-a100-80gb --gpus 8 --global-batch 8 --fixed "
               "tensor_parallel_degree=2",
               "command line: --fixed:",
               "unknown layout field 'tensor_parallel_degree'; did you mean 'tp' (torchtitan's "
               "parallelism.tensor_parallel_degree)?");
}

TEST_CASE("a plot that names a column the results will not have is refused at its position before any point runs")
{
  auto sweep = write_temp("plot-typo.yaml", std::string(kSweepBase) +
                                                "sweep:\n  axes:\n    training.micro_batch: [1]\nplot:\n"
                                                "  - {kind: line, x: gpus, y: step_tme_s}\n  - {kind: bars, y: mfu, "
                                                "labels: [modle]}\n");
  const std::string out = temp_dir() + "/never";
  auto r = run_cli("run " + sweep + " --out " + out);
  CHECK(r.exit_code == 2);
  CHECK(r.err == sweep + ":9:30: unknown column 'step_tme_s'; did you mean 'step_time_s'?; valid: " +
                     r.err.substr(r.err.find("; valid: ") + 9));
  CHECK(r.err.find("sweep:") == std::string::npos); // no point ran
  CHECK(!std::filesystem::exists(out));
  auto labels = write_temp("plot-labels.yaml", std::string(kSweepBase) +
                                                   "sweep:\n  axes:\n    training.micro_batch: [1]\nplot:\n"
                                                   "  - {kind: bars, y: mfu, labels: [modle]}\n");
  expect_error("run " + labels + " --out " + out, labels + ":9:35:", "unknown column 'modle'; did you mean 'model'?");
}

TEST_CASE("memory checks tp, pp and cp before dividing by them")
{
  expect_error("memory --model gpt3-125m --gpu a100-sxm4-80gb --tp 0", "command line: --tp: 0 is out of range", "");
  expect_error("memory --params 7e9 --gpu a100-sxm4-80gb --cp 0", "command line: --cp: 0 is out of range", "");
  expect_error("memory --params 7e9 --gpu a100-sxm4-80gb --pp -2", "command line: --pp: -2 is out of range", "");
}

TEST_CASE("a misspelt, protocol-less or inapplicable collective_algo is an error at its key, and a sweep point")
{
  std::string f = experiment("d3.yaml", "{tp: 2, dp: 4, collective_algo: rnig}");
  expect_error("run " + f, f + ":4:", "unknown collective algorithm 'rnig'; did you mean 'ring'?");
  std::string g = experiment("d3b.yaml", "{tp: 2, dp: 4, collective_algo: ring/fast}");
  expect_error("run " + g, g + ":4:", "unknown protocol of ring 'fast'");
  std::string h = experiment("d3c.yaml", "{tp: 2, dp: 4, sequence_parallel: true, collective_algo: tree}");
  expect_error("run " + h, h + ":4:", "collective_algo 'tree' cannot run reduce_scatter");
  std::string sweep = write_temp("d3s.yaml", std::string(kSweepBase) +
                                                 "sweep:\n  axes:\n    training.collective_algo: [ring, tree, direct]\n");
  auto r = run_cli("run " + sweep);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("\n0,ring,ok,") != std::string::npos);
  CHECK(r.out.find("\n1,tree,ok,") != std::string::npos); // a DP all-reduce: tree runs it
  CHECK(r.out.find("\n2,direct,invalid,\"collective_algo 'direct' cannot run all_reduce") != std::string::npos);
}

TEST_CASE("vpp > 1 with a schedule that runs one chunk per stage is an error at pipeline_schedule")
{
  for (const char* s : {"1f1b", "gpipe"}) {
    std::string f = experiment("d4.yaml", std::string("{pp: 2, dp: 4, vpp: 2, global_batch: 16, pipeline_schedule: ") +
                                              s + "}",
                               "", "{platform: dgx-a100-80gb, gpus: 8}", "gpt3-1.3b");
    expect_error("run " + f, f + ":4:", std::string("vpp 2 needs the interleaved or looped-bfs schedule; ") + s);
  }
}

TEST_CASE("a LoRA section with a rank out of range or targets that are unknown, repeated or none is an error there")
{
  const TrainingErrorCase cases[] = {
      {"{dp: 8, lora: {rank: 0}}", ":4:32", "0 is out of range; valid: an integer from 1 to 65536"},
      {"{dp: 8, lora: {targets: [qkv, mlp]}}", ":4:41", "unknown LoRA target 'mlp'"},
      {"{dp: 8, lora: {targets: [qkv, qkv]}}", ":4:41", "'qkv' appears twice in targets"},
      {"{dp: 8, lora: {targets: []}}", ":4:35", "LoRA without a target trains nothing"},
  };
  expect_training_errors("lora.yaml", cases);
}

TEST_CASE("a data-parallel strategy and its shard groups that do not fit the layout are errors at the key")
{
  const TrainingErrorCase cases[] = {
      {"{dp: 8, data_parallel: hsdp}", ":4:34",
       "data_parallel hsdp needs dp_shard, the replicas in each shard group; "
       "valid: dp_shard: a divisor of dp = 8"},
      {"{dp: 8, data_parallel: hsdp, dp_shard: 3}", ":4:50", "dp_shard 3 does not divide dp = 8"},
      {"{dp: 8, zero: 1, dp_shard: 4}", ":4:38",
       "dp_shard 4 with data_parallel zero1, which shards over every replica"},
      {"{dp: 8, zero: 1, data_parallel: zero3}", ":4:25",
       "zero 1 disagrees with data_parallel zero3, which shards at ZeRO stage 3; valid: zero: 3"},
      {"{dp: 8, data_parallel: hsdpp}", ":4:34", "hsdp"},
  };
  expect_training_errors("dp.yaml", cases);
  // the expert replicas split into as many groups: dp 16 in shard groups of 2 is 8 replicate
  // groups, but Mixtral's experts over ep 8 have 2 replicas, which cannot make 8
  const std::string moe = experiment("moe.yaml", "{dp: 16, ep: 8, data_parallel: hsdp, dp_shard: 2}", "",
                                     "{platform: dgx-h100, gpus: 16}", "mixtral-8x7b");
  expect_error("run " + moe, moe + ":4:",
               "dp / dp_shard = 8 replicate groups do not divide the 2 expert-data-parallel "
               "replicas");
}

TEST_CASE("text that is not UTF-8 is an error where it is written, in experiments and platforms")
{
  std::string f = write_temp("d5.yaml", "name: sm\xe9"
                                        "all\nmodel: gpt3-125m\ncluster: {platform: dgx-a100-80gb, gpus: 8}\n"
                                        "training: {dp: 8}\n");
  expect_error("run " + f + " --json", f + ":1:7:", "text is not valid UTF-8");
  std::string p = platform_with("name: dgx-h100", "name: dgx-h100-\xff");
  expect_error("platform show " + p, p + ":", "text is not valid UTF-8");
}

TEST_CASE("quantities that overflow after unit scaling are errors at their key")
{
  std::string f = experiment("d6.yaml", "{dp: 8, bucket_size: 1e300TB}");
  expect_error("run " + f, f + ":4:", "'1e300TB' is beyond");
  std::string p = platform_with("bandwidth: 900GBps", "bandwidth: 1e300TBps");
  expect_error("platform show " + p, p + ":", "'1e300TBps' is beyond");
}

TEST_CASE("zero or denormal bandwidths are errors at their key, NIC, NVLink and PCIe alike")
{
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"bandwidth: 400Gbps", "bandwidth: 0Gbps"},
           {"bandwidth: 900GBps", "bandwidth: 1e-300GBps"},
           {"bandwidth: 63GBps", "bandwidth: 0GBps"}}) {
    std::string p = platform_with(from, to);
    CAPTURE(to);
    expect_error("platform show " + p, p + ":", "is out of range");
    std::string f = experiment("d7.yaml", "{dp: 8}", "", "{platform: " + p + ", gpus: 8}");
    expect_error("collective --platform " + p + " --gpus 8 --sizes 1MiB", p + ":", "is out of range");
  }
}

TEST_CASE("an output that cannot be written is found before anything runs, and nothing is left behind")
{
  std::string dir = temp_dir();
  std::string out = dir + "/out";
  std::string blocker = dir + "/file";
  std::system(("mkdir -p '" + dir + "/adir' && touch '" + blocker + "'").c_str());
  const std::string q = "experiments/quickstart.yaml";
  expect_error("run " + source_path(q) + " --out " + out + " --trace " + dir + "/adir",
               "command line: --trace: '" + dir + "/adir' is a directory", "");
  CHECK(entries_in(out) == 0);
  expect_error("run " + source_path(q) + " --out " + blocker + "/sub", "command line: --out: cannot write", "");
  std::string sweep = source_path("experiments/zero-stages-7b.yaml");
  expect_error("run " + sweep + " --out " + blocker + "/sub", "command line: --out: cannot write", "");
  expect_error("validate " + validation_path("public.yaml") + " --csv " + dir + "/adir",
               "command line: --csv: '" + dir + "/adir' is a directory", "");
  expect_error("platform show dgx-h100 --dot " + dir + "/adir", "command line: --dot:", "is a directory");
  expect_error("platform show dgx-h100 --xml " + blocker + "/x.xml", "command line: --xml: cannot write", "");
  // no stale FILE.tmp anywhere
  auto r = run_cli("platform show dgx-h100 --gpus 16 --dot " + dir + "/g.dot");
  CHECK(r.exit_code == 0);
  CHECK(entries_in(dir) == 3); // adir, file, g.dot
}

TEST_CASE("tp*pp*cp beyond a node and not a node multiple runs, with a baseline on whole nodes")
{
  std::string f = experiment("d9.yaml", "{tp: 4, pp: 3, dp: 2, global_batch: 16}", "",
                             "{platform: dgx-a100-80gb, gpus: 24}", "gpt3-1.3b");
  auto r = run_cli("run " + f + " --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["baseline_gpus"] == 24);
  CHECK(j["step_time_s"].get<double>() > 0);
  std::string g = experiment("d9b.yaml", "{tp: 4, pp: 3, dp: 4, global_batch: 16}", "baseline: {gpus: 12}\n",
                             "{platform: dgx-a100-80gb, gpus: 48}", "gpt3-1.3b");
  expect_error("run " + g, g + ":5:", "baseline of 12 GPUs is not whole dgx-a100-80gb nodes");
}

TEST_CASE("tp*pp*cp*dp is checked in 64 bits")
{
  std::string f = experiment("d10.yaml", "{tp: 1, pp: 354, dp: 12132676, global_batch: 12132676}", "",
                             "{platform: dgx-a100-80gb, gpus: 8}",
                             "{layers: 400, hidden: 512, heads: 8, vocab: 1000, seq_len: 128}");
  expect_error("run " + f, f + ":4:", "= 4294967304 but cluster.gpus is 8");
}

TEST_CASE("a Hugging Face hidden size whose default MLP width overflows is an error at hidden_size")
{
  std::string f = write_temp("config.json", R"({"model_type": "llama", "hidden_size": 536870912,
 "num_hidden_layers": 2, "num_attention_heads": 8, "vocab_size": 100})");
  expect_error("memory --model " + f + " --gpu a100-sxm4-80gb", f + ":1:", "536870912 is out of range");
  std::string g = write_temp("config.json", R"({"model_type": "llama", "hidden_size": 8388608,
 "num_hidden_layers": 2, "num_attention_heads": 8, "vocab_size": 100})");
  expect_error("memory --model " + g + " --gpu a100-sxm4-80gb", g + ":1:", "is out of range");
}

TEST_CASE("sweep sizes are bounded before anything is expanded")
{
  auto sweep = [](const std::string& axes) { return write_temp("d12.yaml", std::string(kSweepBase) + axes); };
  std::string a = sweep("sweep:\n  axes:\n    training.global_batch: {from: 1, to: 1e18, step: 1}\n");
  expect_error("run " + a, a + ":7:", "the range has 1e+18 values");
  std::string b = sweep("sweep:\n  axes:\n    training.global_batch: {from: 1, to: 1000}\n"
                        "    training.micro_batch: {from: 1, to: 1000}\n    budget.tokens: {from: 1, to: 1000}\n");
  expect_error("run " + b, b + ":9:", "more than 1000000 points");
  std::string c = sweep("sweep:\n  axes:\n    training.global_batch: []\n");
  expect_error("run " + c, c + ":7:", "an axis needs at least one value");
  std::string d = sweep("sweep:\n  axes:\n    budget.tokens: {from: 1e17, to: 1.0000000000001e17, step: 1}\n");
  expect_error("run " + d, d + ":7:", "below the precision");
  std::string e = sweep("sweep:\n  axes:\n    training.tp: {from: 1, to: 64, factor: 1.0000001}\n");
  expect_error("run " + e, e + ":7:", "the range has");
}

TEST_CASE("a sweep point whose run fails is a row with its reason, and the other points run")
{
  std::string dir = temp_dir();
  std::system(("printf 'name: broken\\nnode: {gpu: a100-sxm4-80gb, gpus: 8}\\n' > '" + dir + "/broken.yaml'").c_str());
  std::string f = dir + "/d13.yaml";
  std::system(("printf '%s' '" + std::string(kSweepBase) +
               "sweep:\n  axes:\n    cluster.platform: [dgx-a100-80gb, broken.yaml, dgx-a100-40gb]\n' > '" + f + "'")
                  .c_str());
  auto r = run_cli("run " + f + " --out " + dir + "/out");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  std::string csv = read_file(dir + "/out/results.csv");
  CHECK(csv.find("\n0,dgx-a100-80gb,ok,") != std::string::npos);
  CHECK(csv.find("\n1,broken.yaml,error,") != std::string::npos);
  CHECK(csv.find("missing key 'scale_up'") != std::string::npos);
  CHECK(csv.find("\n2,dgx-a100-40gb,ok,") != std::string::npos);
  CHECK(r.err.find("1 point(s) failed") != std::string::npos);
}

TEST_CASE("merge rejects a malformed results.json with its file, whatever the malformation")
{
  for (const char* bad : {R"({"experiment": 5, "rows": []})", R"({"experiment": "x", "rows": [{"point": -1}]})",
                          R"({"experiment": "x", "rows": {}})", R"([1, 2])", "{", R"({"experiment": "x"})",
                          R"({"experiment": "x", "rows": [{"point": 0, "a": [1]}]})"}) {
    std::string dir = temp_dir();
    std::string file = dir + "/results.json";
    FILE* fp = std::fopen(file.c_str(), "w");
    std::fputs(bad, fp);
    std::fclose(fp);
    CAPTURE(bad);
    expect_error("merge " + dir + " --out " + dir + "/merged", file + ": not a results file", "");
    CHECK(entries_in(dir + "/merged") == 0);
  }
}

TEST_CASE("newlines, CR and NUL in a bad value are escaped: the message stays one line")
{
  std::string f = experiment("d15.yaml", "{tp: \"2\\nx\", dp: 4}");
  expect_error("run " + f, f + ":4:", "'2\\nx' is not an integer");
  std::string g = experiment("d15b.yaml", "{tp: \"2\\r\\u0000x\", dp: 4}");
  expect_error("run " + g, g + ":4:", "'2\\r\\x00x' is not an integer");
}

TEST_CASE("a bad sweep value is reported where it is written, and a directory given as a file says so")
{
  std::string f = write_temp("d16.yaml", std::string(kSweepBase) + "sweep:\n  axes:\n    model: [gpt3-125m, gpt3-125mm]\n");
  expect_error("run " + f, f + ":7:24:", "unknown model preset 'gpt3-125mm'; did you mean 'gpt3-125m'?");
  std::string g =
      write_temp("d16b.yaml", std::string(kSweepBase) + "sweep:\n  axes:\n    training.recompute: [none, sometimes]\n");
  expect_error("run " + g, g + ":7:32:", "unknown recompute 'sometimes'");
  std::string dir = temp_dir();
  expect_error("run " + dir, dir + ": is a directory, not a file", "");
}

TEST_CASE("simulation mode folded, as the README documents, runs")
{
  std::string f = experiment("d17.yaml", "{tp: 2, dp: 4}", "simulation: {mode: folded}\n");
  auto r = run_cli("run " + f + " --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(nlohmann::json::parse(r.out)["simulation"]["mode"] == "folded");
  // on a fabric where replicas contend, folding is an approximation the report names
  std::string g = experiment("d17b.yaml", "{tp: 2, dp: 8}", "simulation: {mode: folded}\n",
                             "{platform: dgx-h100-fattree-2to1, gpus: 16}");
  auto s = run_cli("run " + g + " --json");
  REQUIRE_MESSAGE(s.exit_code == 0, s.err);
  auto j = nlohmann::json::parse(s.out);
  CHECK(j["simulation"]["mode"] == "folded");
  CHECK(j["simulation"]["reason"].get<std::string>().find("approximation") != std::string::npos);
}

TEST_CASE("command-line values out of range are errors on their flag")
{
  for (const auto& [args, where] : std::vector<std::pair<std::string, std::string>>{
           {"memory --model gpt3-125m --gpu a100-sxm4-80gb --zero 4", "command line: --zero: 4 is out of range"},
           {"memory --model gpt3-125m --gpu a100-sxm4-80gb --seq -1", "command line: --seq: -1 is out of range"},
           {"plan --model gpt3-125m --platform dgx-a100-80gb --gpus 8 --global-batch 8 --seq 0",
            "command line: --seq: 0 is out of range"},
           {"plan --model gpt3-125m --platform dgx-a100-80gb --gpus 8 --global-batch 8 --max-tp 0",
            "command line: --max-tp: 0 is out of range"},
           {"plan --model gpt3-125m --platform dgx-a100-80gb --gpus 0 --global-batch 8",
            "command line: --gpus: 0 is out of range"},
           {"platform show dgx-h100 --gpus 0", "command line: --gpus: 0 is out of range"},
           {"platform show dgx-h100 --gpus -8", "command line: --gpus: -8 is out of range"},
           {"estimate --params 7e9 --gpu h100-sxm5-80gb --usd-per-gpu-hour -5",
            "command line: --usd-per-gpu-hour: -5 is out of range"},
           {"estimate --params 7e9 --gpu h100-sxm5-80gb --usd-per-gpu-hour nan",
            "command line: --usd-per-gpu-hour: nan is out of range"},
           {"collective --op all_reduce --platform dgx-h100 --sizes 0B", "command line: --sizes: '0B'"},
       })
    expect_error(args, where, "");
}

TEST_CASE("usage errors CLI11 finds are one line naming the commands or the options of the command reached")
{
  // an unknown or missing command lists the commands (with the nearest); an unexpected,
  // missing or malformed argument names the command and lists its options
  for (const auto& [args, where, what, valid] : std::vector<std::tuple<std::string, std::string, std::string, std::string>>{
           {"runn x.yaml", "command line: unknown command 'runn'", "did you mean 'run'?", "valid: run, platform,"},
           {"", "command line: clustersim: A subcommand is required", "", "valid: run, platform,"},
           {"platform frobnicate", "command line: unknown command 'frobnicate' in 'clustersim platform'", "",
            "valid: list, show"},
           {"run --bogus x.yaml", "command line: clustersim run: ", "--bogus", "the options of 'clustersim run': "},
           {"run", "command line: clustersim run: experiment is required", "", "--out"},
           {"plan --gpus abc", "command line: clustersim plan: ", "abc", "the options of 'clustersim plan': "},
       }) {
    expect_error(args, where, what);
    CHECK(run_cli(args).err.find(valid) != std::string::npos);
  }
}

TEST_CASE("lenient values are refused: an empty bucket, an absurd latency, a preset outside the presets, MFU over 100")
{
  std::string f = experiment("d19.yaml", "{dp: 8, bucket_size: 0B}");
  expect_error("run " + f, f + ":4:", "'0B' is out of range");
  std::string p = platform_with("switch_latency: 0.13us", "switch_latency: 1e300h");
  expect_error("platform show " + p, p + ":", "'1e300h' is beyond");
  std::string q = platform_with("switch_latency: 0.13us", "switch_latency: 1h");
  expect_error("platform show " + q, q + ":", "'1h' is out of range");
  std::string g = experiment("d19b.yaml", "{dp: 8}", "", "{platform: dgx-a100-80gb, gpus: 8}", "../../platforms/dgx-h100");
  expect_error("run " + g, g + ":2:8:", "unknown model preset '../../platforms/dgx-h100'");
  std::string v = write_temp("v.yaml", "cases:\n- id: x_1\n  model: gpt3-125m\n  cluster: {platform: dgx-a100-80gb, "
                                       "gpus: 8}\n  training: {dp: 8}\n  measured: {metric: mfu, value: 150}\n");
  expect_error("validate " + v, v + ":6:", "150 % is not an MFU");
}

TEST_CASE("a global batch beyond what a step holds is an error at global_batch, not an allocation failure")
{
  std::string f = experiment("d20.yaml", "{dp: 8, global_batch: 1073741824}");
  expect_error("run " + f, f + ":4:", "micro-batches per pipeline per step, more than the 65536");
}

TEST_CASE("a catalog file edited wrong (frameworks.yaml, gpus.yaml under CLUSTERSIM_DATA) is FILE:LINE:COL and exit 2")
{
  namespace fs = std::filesystem;
  struct Edit {
    std::string file, from, to, what;
  };
  const Edit edits[] = {
      {"frameworks.yaml", "\n    moe_probs: activation", "\n    moe_probs: actvation", "did you mean 'activation'?"},
      {"frameworks.yaml", "\n    loss_fp32_copies: 1", "\n    loss_fp32_copies: -1", "-1"},
      {"frameworks.yaml", "\n    amax_forward: 3", "\n    amax_forward: -3", "-3"},
      {"frameworks.yaml", "\n    balanced_routing: round_robin", "\n    balanced_routing: roundrobin",
       "did you mean 'round_robin'?"},
      {"gpus.yaml", "  sustained: 0.78", "  sustained: 7.8", "7.8"},
      {"gpus.yaml", "    of: fa2-ampere", "    of: fa2-amper", "did you mean 'fa2-ampere'?"},
      {"gpus.yaml", "    of: fa2-ampere", "    of: fa3-hopper", "attention curve defined above"},
      {"gpus.yaml", "    scale: 0.5", "    scale: 5", "5"},
      {"gpus.yaml", "    peak: 312TFLOPS\n    of: fa2-ampere\n    scale: 0.5", "    peak: 312TFLOPS\n    scale: 0.5",
       "scale without of"},
      {"frameworks.yaml",
       "\n    ops:\n      cross_entropy:", "\n    ops:\n      cross_entrpy:", "did you mean 'cross_entropy'?"},
      {"frameworks.yaml", "\n    loss_16bit_copies: 1", "\n    loss_16bit_copies: 9", "9"},
      // an FP4 recipe where an FP8 one is due, and the reverse; a format that is neither
      {"frameworks.yaml", "\n    fp8_recipe: delayed\n    # --fp4", "\n    fp8_recipe: nvfp4\n    # --fp4",
       "unknown fp8 recipe 'nvfp4'"},
      {"frameworks.yaml", "\n    fp4_recipe: nvfp4", "\n    fp4_recipe: mxfp8", "unknown fp4 recipe 'mxfp8'"},
      {"frameworks.yaml", "\n    format: fp4", "\n    format: fp6", "'fp6'"},
      {"frameworks.yaml", "\n    host_syncs: [moe_dispatch, p2p]", "\n    host_syncs: [moe_dispatch, p2q]",
       "did you mean 'p2p'?"},
      {"gpus.yaml", "    op: 13.48us", "    op: -13.48us", "-13.48us"},
      {"gpus.yaml", "  grace:\n    doc:", "  graze:\n    doc:", "did you mean 'grace'?"},
      {"gpus.yaml", "    host_cpu: grace", "    host_cpu: arm", "'arm'"},
      // a GPU id twice (the second replaced the first without a word)
      {"gpus.yaml", "\n  v100-sxm3-32gb:", "\n  v100-sxm2-32gb:", "duplicate key 'v100-sxm2-32gb' in the GPU catalog"},
  };
  const std::string saved = std::getenv("CLUSTERSIM_DATA") ? std::getenv("CLUSTERSIM_DATA") : "";
  for (const Edit& e : edits) {
    CAPTURE(e.to);
    const std::string root = temp_dir() + "/data-" + e.file + "-" + std::to_string(&e - edits);
    fs::remove_all(root);
    fs::create_directories(root);
    fs::copy(source_path("platforms"), root + "/platforms", fs::copy_options::recursive);
    fs::create_directories(root + "/strategies");
    fs::copy(source_path("strategies/models"), root + "/strategies/models", fs::copy_options::recursive);
    const std::string path = root + "/platforms/" + e.file;
    std::string text = read_file(path);
    const auto at = text.find(e.from);
    REQUIRE(at != std::string::npos);
    text.replace(at, e.from.size(), e.to);
    { std::ofstream(path, std::ios::binary | std::ios::trunc) << text; }
    ::setenv("CLUSTERSIM_DATA", root.c_str(), 1);
    expect_error("run " + source_path("experiments/quickstart.yaml") + " --out " + root + "/out", path + ":", e.what);
    CHECK_FALSE(fs::exists(root + "/out"));
  }
  // a data directory without the presets: the preset named is unknown, and the line says why
  const std::string bare = temp_dir() + "/data-bare";
  fs::remove_all(bare);
  fs::create_directories(bare);
  fs::copy(source_path("platforms"), bare + "/platforms", fs::copy_options::recursive);
  ::setenv("CLUSTERSIM_DATA", bare.c_str(), 1);
  expect_error("run " + source_path("experiments/quickstart.yaml"), source_path("experiments/quickstart.yaml") + ":",
               "no presets in");
  if (saved.empty())
    ::unsetenv("CLUSTERSIM_DATA");
  else
    ::setenv("CLUSTERSIM_DATA", saved.c_str(), 1);
}

TEST_CASE("a sliding window below zero is an error at its key, and context parallelism with one at cp")
{
  std::string f = experiment("sw.yaml", "{dp: 8}", "", "{platform: dgx-a100-80gb, gpus: 8}",
                             "{preset: gpt3-125m, sliding_window: -1}");
  expect_error("run " + f, f + ":2:44:", "-1 is out of range");
  std::string g = experiment("swcp.yaml", "{cp: 2, dp: 4}", "", "{platform: dgx-a100-80gb, gpus: 8}",
                             "{preset: gpt3-125m, sliding_window: 256}");
  expect_error("run " + g, g + ":4:", "cp 2 with a sliding window of 256 tokens");
}

TEST_CASE("an unknown engine is one line, in an experiment and on validate's command line")
{
  const std::string f = experiment("engine.yaml", "{global_batch: 8}", "simulation: {engine: simgird}\n");
  expect_error("run " + f, f + ":5:22:", "'simgird'");
  expect_error("validate " + source_path("experiments/validation/public.yaml") + " --engine evnt", "command line:",
               "unknown engine 'evnt'; did you mean 'event'?");
}

TEST_CASE("a GPU family name resolves to its one catalog GPU, and an ambiguous one lists them")
{
  auto r = run_cli("memory --params 7e9 --gpu h100");
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("on h100-sxm5-80gb") != std::string::npos);
  expect_error("memory --params 7e9 --gpu a100", "command line: --gpu:", "'a100' names 2 GPUs of the catalog");
  expect_error("memory --params 7e9 --gpu h10", "command line: --gpu:", "unknown gpu 'h10'");
}

TEST_CASE("implausible hardware is one warning line, and an error under --strict")
{
  // a NIC's 400 Gb/s written as 400 GB/s: 3.2 Tb/s
  const std::string nic = platform_with("    bandwidth: 400Gbps", "    bandwidth: 400GBps");
  const std::string e = experiment("nic.yaml", "{dp: 8, global_batch: 8}", "",
                                   "{platform: " + nic + ", gpus: 8}");
  auto r = run_cli("run " + e);
  CHECK(r.exit_code == 0);
  CHECK(r.err.rfind(nic + ":", 0) == 0);
  CHECK(r.err.find(": warning: nics.bandwidth 400GBps is 400.0 GB/s (3.20 Tb/s) per NIC and direction, beyond the "
                   "fastest NICs (1.6 Tb/s): a rate in bits written in bytes?") != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  expect_error("run " + e + " --strict", nic + ":", "beyond the fastest NICs (1.6 Tb/s): a rate in bits written in bytes? "
                                                    "(--strict)");
  CHECK(run_cli("platform show " + nic).err.find("warning: nics.bandwidth") != std::string::npos);
  // plausible, but in bytes: 50 GB/s is 400 Gb/s
  const std::string bytes = platform_with("    bandwidth: 400Gbps", "    bandwidth: 50GBps");
  CHECK(run_cli("platform show " + bytes).err.find("is written in bytes (400 Gb/s); NIC rates are quoted in bits; "
                                                   "usual: 400Gbps") != std::string::npos);
  // NVLink4's two-way 900 GB/s as one-way: twice the H100's
  const std::string nvl = platform_with("    bidirectional: true\n    latency: 0.3us", "    bidirectional: false\n    latency: 0.3us");
  auto n = run_cli("platform show " + nvl);
  CHECK(n.err.find("scale_up.bandwidth 900GBps is 900.0 GB/s per GPU and direction, more than h100-sxm5-80gb's NVLink "
                   "(450.0 GB/s each way): a two-way figure without bidirectional: true?") != std::string::npos);
  // the catalog's own platforms are all plausible
  for (const std::string& name : catalog().platform_names())
    CHECK_MESSAGE(catalog().platform(name, clustersim::SourceLocation{}).warnings.empty(), name);
  // --strict with nothing to warn about runs
  CHECK(run_cli("run " + experiment("ok.yaml", "{dp: 8, global_batch: 8}") + " --strict").exit_code == 0);
}

TEST_CASE("a platform's host CPU is a class of the catalog")
{
  std::string p = platform_with("  cpu: x86", "  cpu: xeon");
  expect_error("platform show " + p, p + ":", "'xeon'");
}

TEST_CASE("CUDA graph settings are checked where they are written")
{
  const std::string a = experiment("cg1.yaml", "{dp: 8, cuda_graph_impl: partial}");
  expect_error("run " + a, a + ":4:", "'partial'");
  const std::string b = experiment("cg2.yaml", "{dp: 8, cuda_graph_impl: none, cuda_graph_scope: [attn]}");
  expect_error("run " + b, b + ":4:", "cuda_graph_scope 'attn' with cuda_graph_impl none");
  const std::string c =
      experiment("cg3.yaml", "{dp: 8, cuda_graph_impl: transformer_engine, cuda_graph_scope: [moe_preprocess]}");
  expect_error("run " + c, c + ":4:", "moe_preprocess without moe_router");
  const std::string d = experiment("cg4.yaml", "{dp: 8, cuda_graph_impl: transformer_engine, cuda_graph_scope: [atn]}");
  expect_error("run " + d, d + ":4:", "did you mean 'attn'");
  const std::string e =
      experiment("cg5.yaml", "{dp: 8, cuda_graph_impl: transformer_engine, cuda_graph_scope: [full_iteration]}");
  expect_error("run " + e, e + ":4:", "older spelling");
  // the older spelling itself is one graph per iteration
  const std::string ok = experiment("cg6.yaml", "{dp: 8, global_batch: 8, cuda_graph_impl: local, "
                                                "cuda_graph_scope: [full_iteration]}");
  CHECK(run_cli("run " + ok).exit_code == 0);
}

TEST_CASE("fabric routing: an unknown routing, a negative seed, and routing without a fabric are errors at the key")
{
  const std::string t = "{tp: 1, pp: 1, micro_batch: 1, global_batch: 8}";
  std::string f = experiment("r1.yaml", t, "", "{platform: dgx-a100-80gb, gpus: 8, routing: spray}");
  expect_error("run " + f, f + ":3:", "ideal, ecmp");
  f = experiment("r2.yaml", t, "", "{platform: dgx-a100-80gb, gpus: 8, routing: ecmp, seed: -1}");
  expect_error("run " + f, f + ":3:", "-1 is out of range");
  const std::string p = write_temp("nofabric.yaml", "name: box\nnode:\n  gpu: a100-sxm4-80gb\n  gpus: 2\n"
                                                    "  scale_up: {kind: nvswitch, bandwidth: 600GBps, bidirectional: "
                                                    "true, latency: 0.3us, transport: nvlink3}\n"
                                                    "  pcie: {bandwidth: 31.5GBps, latency: 0.2us, transport: pcie4}\n"
                                                    "  nics: {count: 0}\n");
  f = experiment("r3.yaml", "{tp: 1, pp: 1, micro_batch: 1, global_batch: 2}", "",
                 "{platform: " + p + ", gpus: 2, routing: ecmp}");
  expect_error("run " + f, f + ":3:", "cluster.routing needs a scale-out fabric");
  const std::string pf = platform_with("  oversubscription: 1", "  oversubscription: 1\n  routing: sprayed");
  expect_error("platform show " + pf, pf + ":", "ideal, ecmp, ecmp-qp, adaptive, static");
  // adaptive routing's efficiency is a share of the cables' rate
  const std::string pe = platform_with("  oversubscription: 1", "  oversubscription: 1\n  routing: adaptive\n"
                                                                 "  adaptive_efficiency: 1.2");
  expect_error("platform show " + pe, pe + ":", "1.2 is out of range");
  const std::string t16 = "{tp: 1, pp: 1, micro_batch: 1, global_batch: 16}";
  f = experiment("r4.yaml", t16, "simulation: {seeds: 3}\n", "{platform: dgx-h100, gpus: 16, routing: static}");
  expect_error("run " + f, f + ":", "routes static");
  // queue pairs: NCCL's range, and SimGrid's one route per GPU pair
  f = experiment("r5.yaml", t16, "", "{platform: dgx-h100, gpus: 16, routing: ecmp-qp, qps_per_connection: 129}");
  expect_error("run " + f, f + ":3:", "129 is out of range");
  f = experiment("r6.yaml", t16, "simulation: {engine: simgrid}\n",
                 "{platform: dgx-h100, gpus: 16, routing: ecmp-qp, qps_per_connection: 4}");
  expect_error("run " + f, f + ":", "SimGrid routes one path per GPU pair");
  f = experiment("r7.yaml", t16, "simulation: {engine: simgrid}\n",
                 "{platform: dgx-h100, gpus: 16, routing: ecmp-qp, qps_per_connection: 1}");
  CHECK(run_cli("run " + f).exit_code == 0);
  const std::string pq = platform_with("  oversubscription: 1", "  oversubscription: 1\n  routing: ecmp-qp\n"
                                                                 "  qps_per_connection: 4");
  expect_error("platform show " + pq + " --gpus 16 --xml " + temp_dir() + "/q.xml", "command line: --xml:",
               "splits each over 4 queue pairs");
}

TEST_CASE("a background: its load a share below 1, its tier one of three, a mapping, and only where there is a fabric")
{
  const std::string t = "{tp: 1, pp: 1, micro_batch: 1, global_batch: 16}";
  std::string f = experiment("b1.yaml", t, "", "{platform: dgx-h100, gpus: 16, background: {load: 1.0}}");
  expect_error("run " + f, f + ":3:", "1.0 is out of range; valid: a number from 0 to 0.99");
  f = experiment("b2.yaml", t, "", "{platform: dgx-h100, gpus: 16, background: {load: -0.1}}");
  expect_error("run " + f, f + ":3:", "out of range");
  f = experiment("b3.yaml", t, "", "{platform: dgx-h100, gpus: 16, background: {load: 0.3, tier: spine}}");
  expect_error("run " + f, f + ":3:", "leaf-up, spine-up, all");
  f = experiment("b4.yaml", t, "", "{platform: dgx-h100, gpus: 16, background: {tier: all}}");
  expect_error("run " + f, f + ":3:", "missing key 'load' in cluster.background");
  f = experiment("b5.yaml", t, "", "{platform: dgx-h100, gpus: 16, background: 0.3}");
  expect_error("run " + f, f + ":3:", "");
  f = experiment("b6.yaml", t, "", "{platform: dgx-h100, gpus: 16, background: {load: 0.3, lod: 1}}");
  expect_error("run " + f, f + ":3:", "unknown key 'lod'");
  const std::string p = write_temp("nofabric-b.yaml", "name: box\nnode:\n  gpu: a100-sxm4-80gb\n  gpus: 2\n"
                                                      "  scale_up: {kind: nvswitch, bandwidth: 600GBps, bidirectional: "
                                                      "true, latency: 0.3us, transport: nvlink3}\n"
                                                      "  pcie: {bandwidth: 31.5GBps, latency: 0.2us, transport: pcie4}\n"
                                                      "  nics: {count: 0}\n");
  f = experiment("b7.yaml", "{tp: 1, pp: 1, micro_batch: 1, global_batch: 2}", "",
                 "{platform: " + p + ", gpus: 2, background: {load: 0.3}}");
  expect_error("run " + f, f + ":3:", "cluster.background needs a scale-out fabric");
  // a valid one runs, and says what it took
  f = experiment("b8.yaml", t, "", "{platform: dgx-h100, gpus: 16, background: {load: 0.3, tier: leaf-up}}");
  CHECK(run_cli("run " + f).exit_code == 0);
}

TEST_CASE("a platform's fabric.background: the same checks, at the platform file's line")
{
  std::string p = platform_with("  oversubscription: 1", "  oversubscription: 1\n  background: {load: 1.5}");
  expect_error("platform show " + p + " --gpus 16", p + ":35:", "1.5 is out of range; valid: a number from 0 to 0.99");
  expect_error("collective --op all_reduce --platform " + p + " --gpus 16 --sizes 1MiB", p + ":35:", "out of range");
  p = platform_with("  oversubscription: 1", "  oversubscription: 1\n  background: {load: 0.2, tier: core}");
  expect_error("platform show " + p + " --gpus 16", p + ":35:", "leaf-up, spine-up, all");
  p = platform_with("  oversubscription: 1", "  oversubscription: 1\n  background: {tier: all}");
  expect_error("platform show " + p + " --gpus 16", p + ":35:", "missing key 'load' in fabric.background");
  p = platform_with("  oversubscription: 1", "  oversubscription: 1\n  background: [0.2]");
  expect_error("platform show " + p + " --gpus 16", p + ":35:", "");
  p = platform_with("  oversubscription: 1", "  oversubscription: 1\n  background: {load: 0.2, tier: all, x: 1}");
  expect_error("platform show " + p + " --gpus 16", p + ":35:", "unknown key 'x'");
}

TEST_CASE("other jobs on the cluster: a list of whole-node jobs with a model, GPUs and a layout, beside a full simulation")
{
  const std::string t = "{tp: 1, pp: 1, micro_batch: 1, global_batch: 16}";
  const std::string job = "{model: gpt3-125m, gpus: 8, training: {dp: 8, micro_batch: 1, global_batch: 8}";
  std::string f = experiment("j1.yaml", t, "", "{platform: dgx-h100, gpus: 16, jobs: " + job + "}}");
  expect_error("run " + f, f + ":3:", "expected a list of jobs");
  f = experiment("j2.yaml", t, "", "{platform: dgx-h100, gpus: 16, jobs: [{model: gpt3-125m, gpus: 4, training: "
                                   "{dp: 4, micro_batch: 1, global_batch: 4}}]}");
  expect_error("run " + f, f + ":3:", "4 GPUs are not whole 8-GPU nodes");
  f = experiment("j3.yaml", t, "", "{platform: dgx-h100, gpus: 16, jobs: [" + job + ", phase: 1}]}");
  expect_error("run " + f, f + ":3:", "out of range");
  f = experiment("j4.yaml", t, "", "{platform: dgx-h100, gpus: 16, jobs: [" + job + ", gpu: 8}]}");
  expect_error("run " + f, f + ":3:", "unknown key 'gpu'");
  f = experiment("j5.yaml", t, "", "{platform: dgx-h100, gpus: 16, jobs: [{model: gpt3-125m, gpus: 8, training: "
                                   "{dp: 16, micro_batch: 1, global_batch: 16}}]}");
  expect_error("run " + f, f + ":3:", "");
  f = experiment("j6.yaml", "{tp: 1, pp: 1, micro_batch: 1, global_batch: 4}", "",
                 "{platform: dgx-h100, gpus: 4, jobs: [" + job + "}]}");
  expect_error("run " + f, f + ":3:", "beside cluster.jobs the experiment runs on whole nodes");
  f = experiment("j7.yaml", t, "simulation: {mode: analytic}\n", "{platform: dgx-h100, gpus: 16, jobs: [" + job + "}]}");
  expect_error("run " + f, f + ":5:", "mode: analytic cannot share the cluster");
  f = experiment("j8.yaml", t, "", "{platform: dgx-h100, gpus: 16, placement: interleaved}");
  expect_error("run " + f, f + ":3:", "cluster.placement places the jobs of cluster.jobs, and there are none");
  f = experiment("j9.yaml", t, "", "{platform: dgx-h100, gpus: 16, placement: mixed, jobs: [" + job + "}]}");
  expect_error("run " + f, f + ":3:", "packed, interleaved");
  f = experiment("j10.yaml", t, "", "{platform: dgx-h100, gpus: 16, jobs: [{gpus: 8, training: {dp: 8}}]}");
  expect_error("run " + f, f + ":3:", "model");
  const std::string p = write_temp("nofabric-j.yaml", "name: box\nnode:\n  gpu: a100-sxm4-80gb\n  gpus: 2\n"
                                                      "  scale_up: {kind: nvswitch, bandwidth: 600GBps, bidirectional: "
                                                      "true, latency: 0.3us, transport: nvlink3}\n"
                                                      "  pcie: {bandwidth: 31.5GBps, latency: 0.2us, transport: pcie4}\n"
                                                      "  nics: {count: 0}\n");
  f = experiment("j11.yaml", "{tp: 1, pp: 1, micro_batch: 1, global_batch: 2}", "",
                 "{platform: " + p + ", gpus: 2, jobs: [{model: gpt3-125m, gpus: 2, training: {dp: 2}}]}");
  expect_error("run " + f, f + ":3:", "cluster.jobs needs a scale-out fabric");
  // a step beside more steps of a short job than simulation.max_tasks allows
  f = experiment("j12.yaml", "{tp: 1, pp: 1, micro_batch: 1, global_batch: 256}", "simulation: {max_tasks: 1000}\n",
                 "{platform: dgx-h100, gpus: 16, jobs: [" + job + "}]}");
  expect_error("run " + f, f + ":3:", "tasks to simulate, more than the 1000 of simulation.max_tasks");
  // a valid one runs, and names its neighbour
  f = experiment("j13.yaml", t, "", "{platform: dgx-h100, gpus: 16, placement: interleaved, jobs: [" + job + "}]}");
  auto r = run_cli("run " + f);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("job job 1") != std::string::npos);
}

TEST_CASE("platform overrides: a bad key, value, base or shape is an error where it is written")
{
  const std::string t = "{tp: 1, pp: 1, micro_batch: 1, global_batch: 8}";
  // in an experiment's cluster.platform
  std::string f = experiment("o1.yaml", t, "", "{platform: {base: dgx-a100-80gb, node: {nics: {bandwith: 400Gbps}}}, gpus: 8}");
  expect_error("run " + f, f + ":3:", "unknown key 'bandwith' in node.nics; did you mean 'bandwidth'?");
  f = experiment("o2.yaml", t, "", "{platform: {base: dgx-a100-80gb, node: {nics: {bandwidth: fast}}}, gpus: 8}");
  expect_error("run " + f, f + ":3:", "fast");
  f = experiment("o3.yaml", t, "", "{platform: {base: dgx-a100-80g}, gpus: 8}");
  expect_error("run " + f, f + ":3:", "did you mean 'dgx-a100-80gb'?");
  f = experiment("o4.yaml", t, "", "{platform: [dgx-a100-80gb], gpus: 8}");
  expect_error("run " + f, f + ":3:", "cluster.platform must be a platform name, a path, or a mapping");
  f = experiment("o5.yaml", t, "", "{platform: {base: dgx-a100-80gb, fabric: {oversubscription: 0.001}}, gpus: 8}");
  expect_error("run " + f, f + ":3:", "out of range");
  // a platform file with a base: its errors are in that file; a base of a base is refused
  const std::string p = write_temp("over.yaml", "base: dgx-h100\nname: h100-800g\nnode:\n  nics: {bandwidth: 800Gbps, "
                                                "latncy: 0.6us}\n");
  expect_error("platform show " + p, p + ":4:", "did you mean 'latency'?");
  const std::string q = write_temp("over2.yaml", "base: " + write_temp("mid.yaml", "base: dgx-h100\n") + "\n");
  expect_error("platform show " + q, q + ":1:7:", "has a base of its own");
  // an axis into the platform is checked against the platform's keys
  const std::string s = write_temp("o6.yaml", std::string(kSweepBase) +
                                                  "sweep: {axes: {cluster.platform.node.nics.bandwidht: [400Gbps]}}\n");
  expect_error("run " + s, s + ":5:", "did you mean 'bandwidth'?");
  const std::string v = write_temp("o7.yaml", std::string(kSweepBase) +
                                                  "sweep: {axes: {cluster.platform.node.nics.bandwidth: [400Gbps, 7]}}\n");
  expect_error("run " + v, v + ":5:", "7");
}

TEST_CASE("simulation.seeds: several seeds without ECMP, zero seeds, and seeds as an axis are errors at the key")
{
  const std::string t = "{tp: 1, pp: 1, micro_batch: 1, global_batch: 8}";
  std::string f = experiment("s1.yaml", t, "simulation: {seeds: 4}\n", "{platform: dgx-h100, gpus: 8}");
  expect_error("run " + f, f + ":5:", "runs ECMP hash seeds, and the fabric of 'dgx-h100' routes ideal");
  f = experiment("s2.yaml", t, "simulation: {seeds: 0}\n", "{platform: dgx-h100, gpus: 8, routing: ecmp}");
  expect_error("run " + f, f + ":5:", "out of range");
  const std::string s = write_temp("s3.yaml", std::string(kSweepBase) + "sweep: {axes: {simulation.seeds: [1, 2]}}\n");
  expect_error("run " + s, s + ":5:", "simulation.seeds");
}

TEST_CASE("a mapping of 200,000 keys is read in one pass: its duplicate and its unknown key are found where written")
{
  std::string keys;
  for (int i = 0; i < 200000; ++i)
    keys += "  k" + std::to_string(i) + ": 1\n";
  // the duplicate is the last key (the check compared each key with every earlier one)
  std::string d = write_temp("d23.yaml", "name: x\nmodel: gpt3-125m\ncluster: {platform: dgx-a100-80gb, gpus: 8}\n"
                                         "training:\n" + keys + "  k0: 2\n");
  expect_error("run " + d, d + ":200005:3:", "duplicate key 'k0' in training");
  std::string u = write_temp("d23u.yaml", "name: x\nmodel: gpt3-125m\ncluster: {platform: dgx-a100-80gb, gpus: 8}\n"
                                          "training:\n  dp: 8\n" + keys);
  expect_error("run " + u, u + ":6:3:", "unknown key 'k0' in training");
}

TEST_CASE("an input is read up to its limit and no further: /dev/zero and a file over 4 MiB are refused naming it")
{
  expect_error("run /dev/zero", "/dev/zero: longer than the limit of 4 MiB", "a readable YAML file of at most 4 MiB");
  std::string big = write_temp("big.json", "{\"hidden_size\": 4096, \"pad\": \"" + std::string(5 << 20, 'x') + "\"}\n");
  expect_error("memory --model " + big + " --gpu h100 --seq 4096", big + ": longer than the limit of 4 MiB", "4 MiB");
  std::string exp = write_temp("big.yaml", "name: x\n# " + std::string(5 << 20, 'x') + "\n");
  expect_error("run " + exp, exp + ": longer than the limit of 4 MiB", "4 MiB");
}

TEST_CASE("a fabric that cannot hold the job, and a graph past its bound, are refused before the graph is built")
{
  // 4,194,304 A100 on radix-40 switches: the radix was checked after a 9 GB graph was built
  expect_error("platform show dgx-a100-80gb --gpus 4194304", CLUSTERSIM_SOURCE "/platforms/dgx-a100-80gb.yaml:1:1:",
               "leaves exceed what three levels of this radix join");
  expect_error("plan --model gpt3-1.3b --platform dgx-a100-80gb --gpus 4194304 --seq 2048 --global-batch 4194304",
               CLUSTERSIM_SOURCE "/platforms/dgx-a100-80gb.yaml:1:1:", "radix 40 is too small");
  // radix 256 holds them, but not in a graph of at most 2M links (this ended in bad_alloc)
  std::string p = write_temp("wide.yaml", "name: wide\nbase: dgx-h100\nfabric: {kind: fat-tree, radix: 256, levels: 3}\n");
  expect_error("platform show " + p + " --gpus 4194304", p + ":1:1:",
               "4194304 GPUs of platform 'wide' are 27787264 links, more than the 2097152");
  auto ok = run_cli("platform show " + p + " --gpus 8192");
  CHECK(ok.exit_code == 0);
}

TEST_CASE("a step of 16,384 micro-batches per pipeline is refused at global_batch before it is built")
{
  // gpt3-1.3b on 16 A100, tp 2 pp 2 dp 4: this took 268 s and 5.6 GB, of which the baseline ran first
  std::string f = write_temp("d25.yaml", "name: x\nmodel: gpt3-1.3b\ncluster: {platform: dgx-a100-80gb, gpus: 16}\n"
                                         "training:\n  tp: 2\n  pp: 2\n  dp: 4\n  micro_batch: 1\n"
                                         "  global_batch: 65536\n");
  expect_error("run " + f, f + ":9:17:",
               "a step of 16384 micro-batches per pipeline is about 26476688 tasks to simulate, more than the 16777216 "
               "of simulation.max_tasks");
  auto r = run_cli("run " + f);
  CHECK(r.err.find("valid: a global_batch of at most 41524 here") != std::string::npos);
  CHECK(r.err.find(", or simulation.max_tasks: 26476688 (about 2 GB)") != std::string::npos);
}

TEST_CASE("simulation.max_tasks bounds the step a run may build, and the bound can be raised")
{
  // 64 micro-batches per pipeline: probed, about 100k tasks
  const std::string exp = "name: x\nmodel: gpt3-1.3b\ncluster: {platform: dgx-a100-80gb, gpus: 16}\n"
                          "training: {tp: 2, pp: 2, dp: 4, micro_batch: 1, global_batch: 256}\n";
  std::string small = write_temp("max-tasks.yaml", exp + "simulation: {mode: full, max_tasks: 20000}\n");
  expect_error("run " + small, small + ":4:", "tasks to simulate, more than the 20000 of simulation.max_tasks");
  // an export builds the same step, so it is bounded the same way, before anything is written
  const std::string out = temp_dir() + "/et";
  expect_error("export " + small + " --chakra " + out, small + ":4:",
               "tasks to simulate, more than the 20000 of simulation.max_tasks");
  CHECK(!std::filesystem::exists(out));
  std::string raised = write_temp("max-tasks-raised.yaml", exp + "simulation: {mode: full, max_tasks: 2000000}\n");
  auto r = run_cli("run " + raised);
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  std::string bad = write_temp("max-tasks-bad.yaml", exp + "simulation: {max_tasks: 99999999999}\n");
  expect_error("run " + bad, bad + ":5:25:", "out of range; valid: an integer from 1000 to 1073741824");
}

TEST_CASE("a GPU of fewer SMs than the TP overlap takes is an error at tp_comm, and fewer SMs over a base are less peak")
{
  auto exp = [](const std::string& name, int sms, const std::string& overlap) {
    return write_temp(name, "name: x\nmodel: gpt3-1.3b\ncluster:\n  platform: {base: dgx-a100-80gb, node: {gpu: "
                            "{base: a100-sxm4-80gb, sms: " + std::to_string(sms) + "}}}\n  gpus: 16\n"
                            "training: {tp: 2, pp: 2, dp: 4, micro_batch: 1, global_batch: 64, "
                            "sequence_parallel: true" + overlap + "}\n");
  };
  // this deadlocked: "internal error: workload deadlocked", exit 1
  std::string f = exp("d26.yaml", 16, ", overlap: {tp_comm: true}");
  expect_error("run " + f, f + ":6:", "communication on 16 SMs, and the GPU 'a100-sxm4-80gb@dgx-a100-80gb' has 16");
  // 1 SM ran faster than 108: the peak did not follow the SMs
  auto step = [&](int sms) {
    auto r = run_cli("run " + exp("d26-" + std::to_string(sms) + ".yaml", sms, "") + " --json");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    return nlohmann::json::parse(r.out)["step_time_s"].get<double>();
  };
  const double full = step(108), half = step(54), one = step(1);
  CHECK(half > 1.5 * full);
  CHECK(one > 50 * full);
}

TEST_CASE("goodput's sweep refuses a misspelt top-level key before any point runs, as run does")
{
  const std::string f = write_temp("d28.yaml", std::string(kSweepBase) +
                                                   "reliabilty: {trials: 10}\nsweep: {axes: {training.global_batch: [8, 16]}}\n");
  const std::string out = temp_dir() + "/d28-out";
  expect_error("goodput " + f + " --out " + out, f + ":5:1:", "unknown key 'reliabilty' in experiment; did you mean 'reliability'?");
  CHECK_FALSE(std::filesystem::exists(out));
  expect_error("run " + f + " --out " + out, f + ":5:1:", "unknown key 'reliabilty'");
}

TEST_CASE("validate of a file whose every case cannot be built exits 2 with the case's error, and a partial one shows no error for them")
{
  const std::string one_case = "cases:\n- id: a\n  source: test\n  model: gpt3-125m\n"
                               "  cluster: {platform: dgx-a100-80gb, gpus: 8}\n"
                               "  training: {dp: 8, global_batch: 8, collective_algo: rnig}\n"
                               "  measured: {metric: mfu, value: 40, flops: model}\n";
  const std::string f = write_temp("d32.yaml", one_case);
  expect_error("validate " + f, f + ":6:55:", "unknown collective algorithm 'rnig'; did you mean 'ring'?");
  // one good case beside it: the bad one's row has no prediction and no error (it read +0.0 %), and
  // its long reason does not swallow the next row
  const std::string g = write_temp("d32b.yaml", one_case + "- id: b\n  source: test\n  model: gpt3-125m\n"
                                                           "  cluster: {platform: dgx-a100-80gb, gpus: 8}\n"
                                                           "  training: {dp: 8, global_batch: 8}\n"
                                                           "  measured: {metric: mfu, value: 40, flops: model}\n");
  auto r = run_cli("validate " + g);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  std::istringstream lines(r.out);
  std::string header, a, b;
  std::getline(lines, header);
  std::getline(lines, a);
  std::getline(lines, b);
  CHECK(a.rfind("a ", 0) == 0);
  CHECK(a.find("         -        -  cannot build: " + g + ":6:55:") != std::string::npos);
  CHECK(b.rfind("b ", 0) == 0);
  CHECK(b.find("%  ok") != std::string::npos);
}

TEST_CASE("merge of some shards of a sweep exits 2 naming the points without rows, and writes nothing")
{
  const std::string f = write_temp("d41.yaml", std::string(kSweepBase) + "sweep: {axes: {training.global_batch: [8, 16, 32]}}\n");
  const std::string s0 = temp_dir() + "/d41-s0", s1 = temp_dir() + "/d41-s1", m = temp_dir() + "/d41-m";
  REQUIRE(run_cli("run " + f + " --shard 0/2 --out " + s0).exit_code == 0);
  REQUIRE(run_cli("run " + f + " --shard 1/2 --out " + s1).exit_code == 0);
  expect_error("merge " + s0 + " --out " + m, "command line: dirs: 2 of the sweep's 3 points; no row for point 1",
               "every shard");
  CHECK_FALSE(std::filesystem::exists(m));
  auto all = run_cli("merge " + s0 + " " + s1 + " --out " + m);
  CHECK(all.exit_code == 0);
  CHECK(nlohmann::json::parse(read_file(m + "/results.json"))["points"] == 3);
}

TEST_CASE("a time up to the 1e6 h the schema documents is accepted, and beyond it names that bound")
{
  std::string ok = experiment("d36.yaml", "{dp: 8, global_batch: 8}", "reliability: {repair: 900000h, spare_nodes: 1}\n");
  auto r = run_cli("goodput " + ok);
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  std::string bad = experiment("d36b.yaml", "{dp: 8, global_batch: 8}", "reliability: {repair: 2000000h}\n");
  expect_error("goodput " + bad, bad + ":5:23:", "'2000000h' is beyond 1e+06h");
}

TEST_CASE("a seed past 64 bits on the command line is out of range, not clamped")
{
  std::string f = experiment("d37.yaml", "{dp: 8, global_batch: 8}");
  expect_error("goodput " + f + " --seed 99999999999999999999", "command line: --seed: seed out of range",
               "an integer from 0 to 4611686018427387904");
  expect_error("goodput " + f + " --seed 4611686018427387905", "command line: --seed:", "4611686018427387904");
}

TEST_CASE("a Hugging Face config is held to the model's rules: shared experts, MLA's dimensions, each key once")
{
  const std::string base = R"({"model_type": "qwen2_moe", "hidden_size": 2048, "num_hidden_layers": 24,
 "num_attention_heads": 16, "vocab_size": 151936, "intermediate_size": 5632, "moe_intermediate_size": 1408,
 "num_experts": 60, "num_experts_per_tok": 4)";
  auto cfg = [&](const std::string& name, const std::string& extra) { return write_temp(name, base + extra + "}\n"); };
  const std::string mem = " --gpu h100 --seq 4096 --tp 8";
  // 16M wide over 1408-wide experts: 11,916 shared experts, past the model table's 1,024
  std::string wide = cfg("wide.json", ", \"shared_expert_intermediate_size\": 16777216");
  expect_error("memory --model " + wide + mem, wide + ":3:82:", "11916 shared experts of width 1408, more than 1024");
  // kv_lora_rank alone made MLA heads of zero width
  std::string mla = cfg("mla.json", ", \"kv_lora_rank\": 512");
  expect_error("memory --model " + mla + mem, mla + ":3:63:", "kv_lora_rank (multi-head latent attention) without qk_rope_head_dim");
  std::string twice = cfg("twice.json", ", \"num_experts\": 64");
  expect_error("memory --model " + twice + mem, twice + ":3:47:", "duplicate key 'num_experts' in config.json");
}

TEST_CASE("a sweep killed with -9 leaves no worker simulating")
{
  namespace fs = std::filesystem;
  // two points of GPT-3 175B on 1024 GPUs, every rank simulated: seconds each
  std::string exp = read_file(source_path("experiments/quickstart.yaml"));
  exp += "simulation: {mode: full}\nsweep: {axes: {training.global_batch: [1536, 1024]}}\n";
  const std::string f = write_temp("d35-sweep.yaml", exp);
  const std::string out = temp_dir() + "/d35-out";
  auto r = run_cli("run " + f + " --jobs 1 --out " + out + " >/dev/null 2>&1 & p=$!; sleep 2; kill -9 $p; wait $p; true");
  CHECK(r.exit_code == 0);
  // a worker runs as a fork of the sweep: its command line names the experiment
  auto workers = [&] {
    int n = 0;
    for (const auto& d : fs::directory_iterator("/proc")) {
      const std::string cmdline = read_file(d.path().string() + "/cmdline");
      if (cmdline.find(f) != std::string::npos)
        ++n;
    }
    return n;
  };
  // a worker dies with its parent at once (an orphan would run its point's seconds to the end)
  for (int i = 0; i < 10 && workers() > 0; ++i)
    ::usleep(50000);
  CHECK(workers() == 0);
  CHECK_FALSE(fs::exists(out + "/results.json"));
}

TEST_CASE("outputs replace only regular files: a device, a FIFO and a symbolic link are refused before the run")
{
  namespace fs = std::filesystem;
  std::string f = experiment("d29.yaml", "{dp: 8, global_batch: 8}");
  const std::string dir = temp_dir();
  REQUIRE(::mkfifo((dir + "/fifo").c_str(), 0644) == 0);
  fs::create_symlink(dir + "/elsewhere.json", dir + "/link.json");
  expect_error("run " + f + " --trace /dev/null", "command line: --trace: '/dev/null' is a device", "a regular file");
  expect_error("run " + f + " --trace " + dir + "/fifo", "command line: --trace: '" + dir + "/fifo' is a FIFO",
               "a regular file");
  expect_error("run " + f + " --trace " + dir + "/link.json", "command line: --trace: '" + dir + "/link.json' is a symbolic link",
               "a regular file");
  CHECK_FALSE(fs::exists(dir + "/elsewhere.json"));
  expect_error("platform show dgx-a100-80gb --gpus 8 --dot /dev/null", "command line: --dot: '/dev/null' is a device", "");
}

TEST_CASE("a run's files are checked as a set before it runs: a directory in the way, or two files on one path, leave nothing")
{
  namespace fs = std::filesystem;
  std::string f = experiment("d30.yaml", "{dp: 8, global_batch: 8}");
  const std::string out = temp_dir() + "/d30-out";
  fs::create_directories(out + "/report.txt");
  // this wrote report.json, then failed on report.txt
  expect_error("run " + f + " --out " + out, "command line: --out: '" + out + "/report.txt' is a directory", "a file path");
  CHECK_FALSE(fs::exists(out + "/report.json"));
  const std::string clean = temp_dir() + "/d43-out";
  expect_error("run " + f + " --out " + clean + " --trace " + clean + "/report.json",
               "command line: --trace: '" + clean + "/report.json' is also written by --out", "a path of its own");
  CHECK_FALSE(fs::exists(clean));
}

TEST_CASE("a trace path that names a directory leaves no directory behind")
{
  std::string f = experiment("d34.yaml", "{dp: 8, global_batch: 8}");
  const std::string t = temp_dir() + "/tdir/";
  expect_error("run " + f + " --trace " + t, "command line: --trace: '" + t + "' is a directory", "a file path");
  CHECK_FALSE(std::filesystem::exists(t));
}

TEST_CASE("a plot's file is a base name inside --out")
{
  const std::string s = write_temp("d42.yaml", std::string(kSweepBase) + "sweep: {axes: {training.global_batch: [8, 16]}}\n"
                                                                         "plot:\n  - {kind: scaling, file: ../escaped}\n");
  const std::string out = temp_dir() + "/d42-out";
  expect_error("run " + s + " --out " + out, s + ":7:27:", "plot file '../escaped' is not a base name inside --out");
  CHECK_FALSE(std::filesystem::exists(out));
  CHECK_FALSE(std::filesystem::exists(temp_dir() + "/escaped.png"));
}

TEST_CASE("messages: a huge value is cut, a byte order mark is shown, a missing name is not blamed on node, an empty peak is named")
{
  // a 3 MB value was echoed whole
  std::string big = write_temp("d40big.yaml", "name: x\nmodel: " + std::string(3000000, 'a') + "\n");
  auto r = run_cli("run " + big);
  CHECK(r.exit_code == 2);
  CHECK(r.err.size() < 6000);
  CHECK(r.err.find("bytes in all)") != std::string::npos);
  // a byte order mark before a key: "missing key 'model'" with the key in plain sight
  std::string bom = write_temp("d40bom.yaml", "name: x\n\xEF\xBB\xBFmodel: gpt3-125m\n");
  expect_error("run " + bom, bom + ":2:1:", "key '<U+FEFF>model' has a zero-width character in it");
  // a platform without name: said "unknown key 'node'; did you mean 'name'?"
  std::string text = read_file(source_path("platforms/dgx-a100-80gb.yaml"));
  text.erase(text.find("name: dgx-a100-80gb\n"), std::string("name: dgx-a100-80gb\n").size());
  std::string noname = write_temp("noname.yaml", text);
  expect_error("platform show " + noname + " --gpus 8", noname + ":", "missing key 'name' in platform");
  CHECK(run_cli("platform show " + noname + " --gpus 8").err.find("'node'") == std::string::npos);
  // an empty peak: {} where it is written
  std::string peak = experiment("d40peak.yaml", "{dp: 8, global_batch: 8}", "",
                                "{platform: {base: dgx-a100-80gb, node: {gpu: {base: a100-sxm4-80gb, peak: {}}}}, gpus: 8}");
  expect_error("run " + peak, peak + ":3:", "peak of gpu 'a100-sxm4-80gb@dgx-a100-80gb' names no precision");
}

TEST_CASE("trace filters: a GPU outside the experiment, a reversed or empty range, an unknown stream, or a filter without --trace")
{
  std::string exp = experiment("trace-filter.yaml", "{tp: 2, pp: 2, dp: 2, micro_batch: 1, global_batch: 8}", "",
                               "{platform: dgx-a100-80gb, gpus: 8}");
  const std::string none = temp_dir() + "/none.json";
  const std::string run = "run " + exp + " --trace " + none;
  expect_error(run + " --trace-ranks 0-8", "command line: --trace-ranks: ",
               "'0-8' is not a GPU or range of GPUs of this experiment; valid: GPU numbers 0 to 7");
  expect_error(run + " --trace-ranks 3-1", "command line: --trace-ranks: ", "'3-1' is not a GPU");
  expect_error(run + " --trace-ranks x", "command line: --trace-ranks: ", "'x' is not a GPU");
  expect_error(run + " --trace-ranks -1", "command line: --trace-ranks: ", "'-1' is not a GPU");
  expect_error(run + " --trace-ranks 1,,2", "command line: --trace-ranks: ", "'' is not a GPU");
  expect_error(run + " --trace-ranks 99999999999999999999999", "command line: --trace-ranks: ", "is not a GPU");
  expect_error(run + " --trace-streams compte", "command line: --trace-streams: ",
               "unknown stream 'compte'; did you mean 'compute'?");
  expect_error("run " + exp + " --trace-ranks 0", "command line: --trace-ranks: ", "--trace-ranks without --trace");
  // the experiment's global batch 8 over dp 2 at micro-batch 1: 4 micro-batches per pipeline
  expect_error(run + " --trace-micro-batches 4", "command line: --trace-micro-batches: ",
               "'4' is not a micro-batch or range of micro-batches of this experiment; valid: micro-batch numbers 0 to 3");
  expect_error("run " + exp + " --trace-micro-batches 0", "command line: --trace-micro-batches: ",
               "--trace-micro-batches without --trace");
  CHECK_FALSE(std::ifstream(none).good());
}

TEST_CASE("collective --plot into a path that is a file is refused before any point runs")
{
  const std::string file = write_temp("not-a-dir", "x");
  expect_error("collective --op all_reduce --platform dgx-a100-80gb --gpus 8 --sizes 1MiB --plot " + file,
               "command line: --plot: ", "is not a directory");
}

TEST_CASE("platform show --svg into a directory is refused and writes nothing")
{
  const std::string dir = temp_dir();
  expect_error("platform show dgx-h100 --gpus 16 --svg " + dir, "command line: --svg: ", "");
}
