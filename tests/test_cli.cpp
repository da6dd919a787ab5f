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

TEST_CASE("platform show: facts, exports, and bad arguments")
{
  auto r = run_cli("platform show dgx-h100 --gpus 1024 --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["nodes"] == 128);
  CHECK(j["gpus"] == 1024);
  CHECK(j["bisection_bandwidth_Bps"].get<double>() == doctest::Approx(512 * 50e9));
  CHECK(j["injection_scale_up_Bps"].get<double>() == doctest::Approx(450e9));
  CHECK(j["injection_scale_out_Bps"].get<double>() == doctest::Approx(50e9));

  auto bad_count = run_cli("platform show dgx-h100 --gpus 12");
  CHECK(bad_count.exit_code == 2);
  CHECK(bad_count.err == "command line: --gpus: 12 is not a multiple of the 8 GPUs per node of 'dgx-h100'; valid: a "
                         "positive multiple of 8\n");
  auto typo = run_cli("platform show dgx-h10");
  CHECK(typo.exit_code == 2);
  CHECK(typo.err.find("unknown platform 'dgx-h10'; did you mean 'dgx-h100'?; valid: ") != std::string::npos);
  std::string dir = temp_dir();
  auto too_big = run_cli("platform show dgx-h100 --gpus 1024 --xml " + dir + "/x.xml --dot " + dir + "/x.dot");
  CHECK(too_big.exit_code == 2);
  CHECK(entries_in(dir) == 0); // neither export written
  auto ok = run_cli("platform show dgx1-v100 --gpus 16 --xml " + dir + "/y.xml --dot " + dir + "/y.dot");
  CHECK(ok.exit_code == 0);
  CHECK(entries_in(dir) == 2);
}

TEST_CASE("platform list names every platform file")
{
  auto r = run_cli("platform list");
  REQUIRE(r.exit_code == 0);
  for (const char* name : {"dgx1-v100", "dgx2-v100", "dgx-a100-40gb", "dgx-a100-80gb", "dgx-h100", "hgx-h200",
                           "dgx-b200", "gb200-nvl72", "pcie-4090", "dgx-h100-2to1", "dgx-h100-200g"})
    CHECK_MESSAGE(r.out.find(name) != std::string::npos, name);
}

TEST_CASE("bench rejects an unknown scenario")
{
  auto r = run_cli("bench --scenario platform-16");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unknown scenario 'platform-16'; did you mean 'platform-16k'?") != std::string::npos);
}
