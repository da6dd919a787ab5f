// The command line as users drive it.
#include "TestUtil.hpp"

#include <nlohmann/json.hpp>

#include <doctest/doctest.h>

using namespace clustersim::test;

TEST_CASE("clustersim run quickstart reports the documented keys with sane values")
{
  auto r = run_cli("run " + source_path("experiments/quickstart.yaml") + " --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto j = nlohmann::json::parse(r.out);
  for (const char* key :
       {"step_time_s", "compute_s", "exposed_comm_s", "mfu", "hfu", "tokens_per_s", "tokens_per_s_per_gpu",
        "tflops_per_gpu_model", "tflops_per_gpu_hardware", "scaling_efficiency", "gpus"})
    CHECK_MESSAGE(j.contains(key), key);
  CHECK(j["mfu"].get<double>() > 0);
  CHECK(j["mfu"].get<double>() < 1);
  CHECK(j["scaling_efficiency"].get<double>() <= 1.0);
  CHECK(j["scaling_efficiency"].get<double>() > 0.5);
  CHECK(j["step_time_s"].get<double>() > 0);
}

TEST_CASE("two runs give byte-identical JSON")
{
  auto a = run_cli("run " + source_path("experiments/quickstart.yaml") + " --json");
  auto b = run_cli("run " + source_path("experiments/quickstart.yaml") + " --json");
  REQUIRE(a.exit_code == 0);
  CHECK(a.out == b.out);
}

TEST_CASE("a misspelled key exits 2 with FILE:LINE:COL and a suggestion, and writes nothing")
{
  std::string exp = write_temp("bad.yaml", R"(name: bad
model: gpt3-1.3b
cluster: {platform: dgx-a100-80gb, gpus: 8}
training:
  dp: 8
  micro_bach: 1
)");
  std::string out = temp_dir() + "/out";
  auto r = run_cli("run " + exp + " --out " + out);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err ==
        exp + ":6:3: unknown key 'micro_bach' in training; did you mean 'micro_batch'?; valid: " +
            "bucket_size, collective_algo, cp, dp, ep, flash_attention, global_batch, micro_batch, order, overlap, "
            "pipeline_schedule, pp, precision, recompute, sequence_parallel, state_bytes, tp, vpp, zero\n");
  CHECK(entries_in(out) == 0);
}

TEST_CASE("--out writes the report files")
{
  std::string out = temp_dir() + "/nested/out";
  auto r = run_cli("run " + source_path("experiments/quickstart.yaml") + " --out " + out);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(entries_in(out) == 2);
}

TEST_CASE("command-line usage errors exit 2, help and version exit 0")
{
  CHECK(run_cli("--version").exit_code == 0);
  CHECK(run_cli("--help").exit_code == 0);
  CHECK(run_cli("run --help").exit_code == 0);
  CHECK(run_cli("platform show --help").exit_code == 0);
  auto r = run_cli("rnu x.yaml");
  CHECK(r.exit_code == 2);
  CHECK(run_cli("run").exit_code == 2);
  auto missing = run_cli("run /nonexistent.yaml");
  CHECK(missing.exit_code == 2);
  CHECK(missing.err == "/nonexistent.yaml: cannot open file; valid: a readable YAML file\n");
}
