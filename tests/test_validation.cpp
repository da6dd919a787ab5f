// clustersim validate on the published runs: accuracy as a regression-tested property.
#include "TestUtil.hpp"

#include <nlohmann/json.hpp>

#include <doctest/doctest.h>

using namespace clustersim::test;

TEST_CASE("public validation set: median |error| <= 3 %, max <= 20 %, every case runs and fits")
{
  auto r = run_cli("validate " + validation_path("public.yaml") + " --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto j = nlohmann::json::parse(r.out);
  const auto& s = j["summary"];
  MESSAGE("median " << s["median_abs_error"] << ", max " << s["max_abs_error"] << " over " << s["count"] << " cases");
  CHECK(s["count"].get<int>() == static_cast<int>(j["cases"].size()));
  CHECK(s["count"].get<int>() >= 31);
  // measured 1.8 % and 19.6 %: the bounds are what the accuracy work must keep (issue 16)
  CHECK(s["median_abs_error"].get<double>() <= 0.03);
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
