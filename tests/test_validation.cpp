// clustersim validate on the published runs: accuracy as a regression-tested property.
#include "tests/TestUtil.hpp"
#include "topology/config/Yaml.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>

#include <doctest/doctest.h>

using namespace clustersim::test;
using clustersim::YamlNode;

TEST_CASE("public validation set: median |error| <= 4 %, max <= 20 %, every case runs and fits")
{
  auto r = run_cli("validate " + validation_path("public.yaml") + " --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto j = nlohmann::json::parse(r.out);
  const auto& s = j["summary"];
  MESSAGE("median " << s["median_abs_error"] << ", max " << s["max_abs_error"] << " over " << s["count"] << " cases");
  CHECK(s["count"].get<int>() == static_cast<int>(j["cases"].size()));
  CHECK(s["count"].get<int>() >= 31);
  // measured 3.9 % and 15.1 % (1.8 % and 19.6 % when it was the only calibration set; fitting on
  // the frontier set as well moved the one fitted constant, docs/calibration.md)
  CHECK(s["median_abs_error"].get<double>() <= 0.04);
  CHECK(s["max_abs_error"].get<double>() <= 0.20);
  CHECK(s["misses"].get<int>() == 0);
  for (const auto& c : j["cases"]) {
    CAPTURE(c["id"].get<std::string>());
    CHECK(c["status"] == "ok");
    for (const char* key : {"id", "metric", "measured", "predicted", "error", "status"})
      CHECK(c.contains(key));
  }
  for (const auto& [source, v] : s["by_source"].items())
    CHECK(v.contains("median_abs_error"));
}

TEST_CASE("frontier validation set: median |error| <= 10 %, max <= 30 %, every case runs, no OOM verdict, "
          "stated peak memory within 10 % (median)")
{
  auto r = run_cli("validate " + validation_path("frontier.yaml") + " --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto j = nlohmann::json::parse(r.out);
  const auto& s = j["summary"];
  MESSAGE("median " << s["median_abs_error"] << ", max " << s["max_abs_error"] << " over " << s["count"] << " cases");
  CHECK(s["count"].get<int>() == 48);
  // measured 9.2 % and 27.3 %, no OOM verdict (Nemotron-340B on 128 H100 without
  // recomputation, the tightest: 79.67 GiB of 80, docs/calibration.md)
  CHECK(s["median_abs_error"].get<double>() <= 0.10);
  CHECK(s["max_abs_error"].get<double>() <= 0.30);
  CHECK(s["misses"].get<int>() == 0);
  CHECK(!s.contains("cannot_build"));
  // the torchtitan cases' notes state the peak memory the run reported
  YamlNode root = YamlNode::load_file(validation_path("frontier.yaml"));
  std::map<std::string, double> stated;
  for (const auto& c : root.raw()["cases"]) {
    const std::string notes = c["notes"] ? c["notes"].as<std::string>() : "";
    const auto at = notes.find("peak memory ");
    if (at != std::string::npos)
      stated[c["id"].as<std::string>()] = std::stod(notes.substr(at + 12));
  }
  std::vector<double> errors;
  for (const auto& c : j["cases"]) {
    CHECK(c["status"] != "error");
    auto it = stated.find(c["id"].get<std::string>());
    if (it != stated.end() && c["memory_gib"].is_number())
      errors.push_back(std::fabs(c["memory_gib"].get<double>() / it->second - 1));
  }
  REQUIRE(errors.size() == 18);
  std::sort(errors.begin(), errors.end());
  const double median = 0.5 * (errors[errors.size() / 2 - 1] + errors[errors.size() / 2]);
  MESSAGE("peak memory: median |error| " << median << ", max " << errors.back());
  // measured 9.0 % and 26.6 % (the 70B 2D runs); the runs named _compile within 2 %, their eager twins 6-7 % under
  CHECK(median <= 0.10);
  CHECK(errors.back() <= 0.30);
}

TEST_CASE("moe validation set: every case runs, median |error| <= 22 %, max <= 100 %, at most 3 OOM verdicts")
{
  auto r = run_cli("validate " + validation_path("moe.yaml") + " --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto j = nlohmann::json::parse(r.out);
  const auto& s = j["summary"];
  MESSAGE("median " << s["median_abs_error"] << ", max " << s["max_abs_error"] << ", misses " << s["misses"]);
  CHECK(s["count"].get<int>() == 29);
  // measured 20.6 % and 90.7 % with 3 OOM verdicts (22.3 % and 115.9 % before B200's GEMMs were
  // capped at the training shapes' median; 24.2 % and 118.5 % before the host issued
  // the kernels and Megatron's router launched its 30 fused kernels; 25.1 % before AutoModel's round-robin fake
  // gate sent each token to the one or two expert ranks its consecutive experts are on; 7 OOM before Megatron's router probabilities
  // weighed the experts' activation instead of their outputs; 30.4 %, 198 %, 9 before expert gradients
  // reduced over their own group, the combined-1F1B partner rule of moe_a2a_overlap, DeepEP's per-destination sends, the all-to-all dispatcher's
  // regrouping, Megatron's in-place loss and AutoModel's TE modules; 53.0 %, 258 % before the
  // all-to-alls ran on the network); docs/calibration.md;
  // issue 17 asks for 15 %, 40 % and none: these bounds only guard what holds
  CHECK(s["median_abs_error"].get<double>() <= 0.22);
  CHECK(s["max_abs_error"].get<double>() <= 1.00);
  CHECK(s["misses"].get<int>() <= 3);
  for (const auto& c : j["cases"]) {
    CAPTURE(c["id"].get<std::string>());
    CHECK(c["status"] != "error");
  }
}

TEST_CASE("generalization set: every case runs, median |error| <= 10 %, max <= 80 %, at most 3 OOM verdicts")
{
  auto r = run_cli("validate " + validation_path("generalization.yaml") + " --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto j = nlohmann::json::parse(r.out);
  const auto& s = j["summary"];
  MESSAGE("median " << s["median_abs_error"] << ", max " << s["max_abs_error"] << ", misses " << s["misses"]);
  CHECK(s["count"].get<int>() == 188);
  // measured 9.0 % and 76.9 % with 3 OOM verdicts (MPT-1B at 40.29 GiB of 40: dropout masks the
  // schema cannot rule out); 14.0 % before B200's GEMMs were capped at the training shapes'
  // median; 14.9 %, 76.9 % and 41 before FSDP1's fused loss and MPT's Triton attention
  // (docs/calibration.md). Issue 36 asks for 8 %, 40 % and none: these bounds only guard what holds
  CHECK(s["median_abs_error"].get<double>() <= 0.10);
  CHECK(s["max_abs_error"].get<double>() <= 0.80);
  CHECK(s["misses"].get<int>() <= 3);
  for (const auto& c : j["cases"]) {
    CAPTURE(c["id"].get<std::string>());
    CHECK(c["status"] != "error");
  }
}

TEST_CASE("validate: a schema error is FILE:LINE:COL and exit 2 - an OOM case is a miss, not a crash")
{
  std::string bad = write_temp("bad.yaml", R"(cases:
- id: x_1
  model: {layers: 2, hidden: 256, heads: 4, vocab: 1000, seq_len: 128}
  cluster: {platform: dgx-a100-80gb, gpus: 8}
  training: {tp: 1, pp: 1, dp: 8, micro_batch: 1, global_batch: 8}
  measured: {metric: tflops, value: 1}
)");
  auto r = run_cli("validate " + bad);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(bad + ":6:22: unknown metric 'tflops'") == 0);
  CHECK(r.out.empty());

  std::string oom = write_temp("oom.yaml", R"(cases:
- id: huge_on_one
  model: gpt3-175b
  cluster: {platform: dgx-a100-80gb, gpus: 8}
  training: {tp: 1, pp: 1, dp: 8, micro_batch: 1, global_batch: 8, recompute: full}
  measured: {metric: mfu, value: 40, flops: model}
)");
  auto o = run_cli("validate " + oom + " --json");
  REQUIRE_MESSAGE(o.exit_code == 0, o.err);
  auto j = nlohmann::json::parse(o.out);
  CHECK(j["cases"][0]["status"] == "oom");
  CHECK(j["summary"]["misses"] == 1);

  std::string csv = temp_dir() + "/v.csv";
  auto c = run_cli("validate " + oom + " --csv " + csv);
  CHECK(c.exit_code == 0);
  CHECK(entries_in(csv.substr(0, csv.rfind('/'))) == 1);
}
