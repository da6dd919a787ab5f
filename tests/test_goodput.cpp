// Goodput of a training run: the closed form against hand calculations, the Young/Daly optimum,
// the Monte-Carlo band (deterministic under a seed, centred on the closed form), spares, the
// Llama 3 window, and bad input.
#include "sim/study/Goodput.hpp"
#include "tests/TestUtil.hpp"

#include <nlohmann/json.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

using namespace clustersim;
using namespace clustersim::test;

namespace {

/// 1,024 GPUs, 1 s steps of 1M tokens, 1e11 tokens: W = 1e5 s; one failure source per GPU.
GoodputInput small_job()
{
  GoodputInput in;
  in.step_s = 1;
  in.tokens_per_step = 1e6;
  in.budget_tokens = 1e11;
  in.gpus = 1024;
  in.checkpoint_bytes = 1e12;
  in.usd_per_gpu_hour = 2;
  return in;
}

ReliabilitySpec one_source(double gpu_mtbf_h)
{
  ReliabilitySpec r = default_reliability();
  r.sources = {{"gpu", "GPU", 1e9 / gpu_mtbf_h, true}};
  r.planned_per_day = 0;
  r.write_bandwidth = 1e11; // delta = 10 s
  r.read_bandwidth = 1e11;  // read 10 s
  r.restart_s = 290;        // R = 300 s with the read
  r.trials = 2000;
  return r;
}

} // namespace

TEST_CASE("goodput: the closed form is W (1 + d/t) / (1 - lambda (R + (t + d)/2)), by hand")
{
  ReliabilitySpec r = one_source(1024.0 * 10); // 1,024 GPUs: one failure every 10 h
  r.interval_s = 1800;
  GoodputResult g = goodput(r, small_job());
  const double lambda = 1.0 / 36000, d = 10, t = 1800, R = 300, W = 1e5;
  const double wall = W * (1 + d / t) / (1 - lambda * (R + (t + d) / 2));
  CHECK(g.work_s == doctest::Approx(W));
  CHECK(g.write_s == doctest::Approx(d));
  CHECK(g.restart_s == doctest::Approx(R));
  CHECK(g.wall_s == doctest::Approx(wall).epsilon(1e-12));
  CHECK(g.ettr == doctest::Approx(W / wall).epsilon(1e-12));
  CHECK(g.unexpected == doctest::Approx(lambda * wall).epsilon(1e-12));
  CHECK(g.lost_s == doctest::Approx(lambda * wall * (t + d) / 2).epsilon(1e-12));
  CHECK(g.gpu_hours == doctest::Approx(1024 * wall / 3600).epsilon(1e-12));
  CHECK(g.cost_usd == doctest::Approx(2 * 1024 * wall / 3600).epsilon(1e-12));
  // no failures: only the checkpoints cost
  ReliabilitySpec none = one_source(1e12);
  none.interval_s = 1800;
  CHECK(goodput(none, small_job()).ettr == doctest::Approx(1 / (1 + d / t)).epsilon(1e-6));
}

TEST_CASE("goodput: the Young/Daly interval minimises the closed-form wall time")
{
  ReliabilitySpec r = one_source(1024.0 * 10);
  GoodputResult g = goodput(r, small_job());
  CHECK(g.interval_optimal);
  CHECK(g.interval_s == doctest::Approx(std::sqrt(2 * 10 * 36000.0) - 10).epsilon(1e-12));
  for (double f : {0.25, 0.5, 0.8, 1.25, 2.0, 4.0})
    CHECK(goodput_wall_s(r, small_job(), g.interval_s * f) > g.wall_s);
}

TEST_CASE("goodput: the Monte-Carlo is the same under a seed, changes with it, and brackets the closed form")
{
  ReliabilitySpec r = one_source(1024.0 * 10);
  GoodputResult a = goodput(r, small_job());
  GoodputResult b = goodput(r, small_job());
  CHECK(a.mc_wall_p50 == b.mc_wall_p50);
  CHECK(a.mc_ettr_mean == b.mc_ettr_mean);
  CHECK(a.mc_interruptions_mean == b.mc_interruptions_mean);
  r.seed = 2;
  GoodputResult c = goodput(r, small_job());
  CHECK(c.mc_wall_p50 != a.mc_wall_p50);
  CHECK(c.wall_s == a.wall_s);
  // first order holds here (interval and restart << MTBF): the band holds the closed form and
  // the mean is within 1 % of it
  CHECK(a.mc_wall_p05 < a.wall_s);
  CHECK(a.mc_wall_p95 > a.wall_s);
  CHECK(a.mc_ettr_mean == doctest::Approx(a.ettr).epsilon(0.01));
  CHECK(a.mc_interruptions_mean == doctest::Approx(a.unexpected).epsilon(0.05));
}

TEST_CASE("goodput: a 1 ms checkpoint interval replays whole quiet intervals as one, and the band stays on the closed form")
{
  // W = 1e5 s in 1e8 intervals of 1 ms, one failure every 10 h: replayed interval by interval
  // this took minutes per trial
  ReliabilitySpec r = one_source(1024.0 * 10);
  r.interval_s = 1e-3;
  r.write_bandwidth = 1e15; // delta = 1 ms
  r.trials = 200;
  GoodputResult g = goodput(r, small_job());
  CHECK(g.trials == 200);
  CHECK(g.mc_note.empty());
  CHECK(g.mc_ettr_mean == doctest::Approx(g.ettr).epsilon(0.01));
  CHECK(g.mc_interruptions_mean == doctest::Approx(g.unexpected).epsilon(0.1));
  CHECK(g.mc_wall_p05 <= g.wall_s);
  CHECK(g.mc_wall_p95 >= g.wall_s);
  // without failures the replay is exactly the closed form: W + (intervals - 1) x delta
  ReliabilitySpec quiet = r;
  quiet.sources.clear();
  quiet.trials = 20;
  GoodputResult q = goodput(quiet, small_job());
  CHECK(q.mc_wall_p50 == doctest::Approx(1e5 + (1e8 - 1) * 1e-3).epsilon(1e-9));
}

TEST_CASE("goodput: the Monte-Carlo's work is bounded: fewer trials past the events budget, none below the minimum, each said")
{
  ReliabilitySpec r = one_source(1024.0 * 10);
  GoodputInput in = small_job();
  // about 1.1e5 interruptions per trial: 1000 trials are past the budget
  in.budget_tokens = 4e15;
  r.trials = 1000;
  GoodputResult some = goodput(r, in);
  CHECK(some.trials_asked == 1000);
  CHECK(some.trials >= kMonteCarloMinTrials);
  CHECK(some.trials < 1000);
  CHECK(some.mc_note.find(" of 1000 trials run: each takes about ") == std::to_string(some.trials).size());
  CHECK(some.mc_ettr_mean == doctest::Approx(some.ettr).epsilon(0.01));
  // about 1.1e8 per trial: not one trial fits
  in.budget_tokens = 4e18;
  GoodputResult none = goodput(r, in);
  CHECK(none.trials == 0);
  CHECK(none.mc_note.find("not run: a trial takes about ") == 0);
  CHECK(none.wall_s > 0);
  // the command says so in text, JSON and the closed form stands
  std::string f = write_temp("g.yaml", "model: gpt3-1.3b\ncluster: {platform: dgx-a100-80gb, gpus: 16}\n"
                                       "training: {tp: 2, pp: 2, dp: 4, micro_batch: 1, global_batch: 64}\n"
                                       "reliability: {fit: {gpu: 6e7}}\n");
  auto text = run_cli("goodput " + f + " --tokens 1e18");
  REQUIRE_MESSAGE(text.exit_code == 0, text.err);
  CHECK(text.out.find("  Monte-Carlo not run: a trial takes about ") != std::string::npos);
  auto json = run_cli("goodput " + f + " --tokens 1e18 --json");
  auto j = nlohmann::json::parse(json.out);
  CHECK(j["monte_carlo"]["trials"] == 0);
  CHECK(j["monte_carlo"]["trials_asked"] == 1000);
  CHECK(j["monte_carlo"]["note"].get<std::string>().find("not run") == 0);
}

TEST_CASE("goodput: finite spares make hardware interruptions wait for repairs")
{
  ReliabilitySpec r = one_source(1024.0 * 10);
  r.repair_s = 24 * 3600.0; // 2.4 nodes in repair on average
  GoodputResult unlimited = goodput(r, small_job());
  CHECK(unlimited.p_no_spare == 0);
  CHECK(unlimited.spare_wait_s == 0);
  r.spare_nodes = 0;
  GoodputResult none = goodput(r, small_job());
  // no spare: the job is down whenever a node is in repair, P(Poisson(2.4) >= 1)
  CHECK(none.p_no_spare == doctest::Approx(1 - std::exp(-2.4)).epsilon(1e-9));
  r.spare_nodes = 8;
  GoodputResult eight = goodput(r, small_job());
  CHECK(eight.p_no_spare < 0.001);
  CHECK(eight.ettr > none.ettr);
  CHECK(eight.ettr <= unlimited.ettr);
  CHECK(eight.gpu_hours > unlimited.gpu_hours); // the spares are paid for
  r.spare_nodes = 2;
  GoodputResult two = goodput(r, small_job());
  CHECK(two.p_no_spare == doctest::Approx(1 - std::exp(-2.4) * (1 + 2.4 + 2.88)).epsilon(1e-9));
  CHECK(two.ettr < eight.ettr);
  CHECK(two.ettr == doctest::Approx(unlimited.ettr * (1 - two.p_no_spare)).epsilon(1e-12));
  // the replay takes and returns nodes itself; it agrees with the closed form
  for (const auto* g : {&none, &two, &eight})
    CHECK(g->mc_ettr_mean == doctest::Approx(g->ettr).epsilon(0.05));
}

TEST_CASE("goodput: planned interruptions come node by node - Llama 3's rate per node unless the experiment states one")
{
  ReliabilitySpec r = default_reliability();
  GoodputInput in = small_job(); // 1,024 GPUs: 128 nodes
  GoodputResult g = goodput(r, in);
  CHECK(g.planned_scaled);
  CHECK(g.planned_per_day == doctest::Approx(47.0 / 54.0 * 128 / 2048).epsilon(1e-12));
  in.gpus = 16384; // Llama 3's own cluster: its 47 in 54 days
  CHECK(goodput(r, in).planned_per_day == doctest::Approx(47.0 / 54.0).epsilon(1e-12));
  r.planned_per_day = 2;
  g = goodput(r, in);
  CHECK(!g.planned_scaled);
  CHECK(g.planned_per_day == 2);
}

TEST_CASE("goodput: Llama 3 405B on 16,384 H100 has 466 interruptions in 54 days and an ETTR above 0.9")
{
  auto r = run_cli_in_source("goodput experiments/llama3-405b-goodput.yaml --json --trials 200");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto j = nlohmann::json::parse(r.out);
  const double window = j["window"]["unexpected"].get<double>() + j["window"]["planned"].get<double>();
  MESSAGE("interruptions over 54 days: " << window << ", ETTR " << j["closed_form"]["ettr"]);
  // the published window: 466 (Llama Team 2024, Sec. 3.3.4)
  CHECK(window == doctest::Approx(466).epsilon(0.10));
  CHECK(j["window"]["unexpected"].get<double>() == doctest::Approx(419).epsilon(0.10));
  // "higher than 90% effective training time"
  CHECK(j["closed_form"]["ettr"].get<double>() > 0.9);
  CHECK(j["monte_carlo"]["ettr_p05"].get<double>() > 0.9);
  auto again = run_cli_in_source("goodput experiments/llama3-405b-goodput.yaml --json --trials 200");
  CHECK(again.out == r.out);
}

TEST_CASE("goodput: bad reliability input exits 2 with the position and what is valid")
{
  const std::string base = "model: gpt3-125m\ncluster: {platform: dgx-a100-80gb, gpus: 8}\n"
                           "training: {dp: 8, global_batch: 8}\nreliability:\n";
  struct Case {
    std::string yaml, message;
  };
  const std::vector<Case> cases{
      {"  fit: {gpu: -5}\n", ":5:14: -5 is out of range; valid: a number from 0 to 1e+12"},
      {"  fit: {tpu: 5}\n", ":5:9: unknown key 'tpu' in reliability.fit; did you mean 'gpu'?"},
      {"  checkpoint: {interval: 0s}\n", ":5:26: '0s' is out of range"},
      {"  checkpoint: {write_bandwidth: 0GBps}\n", ":5:33: '0GBps' is out of range"},
      {"  planned_per_day: -1\n", ":5:20: -1 is out of range; valid: a number from 0 to 1000"},
      {"  spare_nodes: -2\n", ":5:16: -2 is out of range"},
      {"  trials: 0\n", ":5:11: 0 is out of range"},
      {"  restart: 5GB\n", ":5:12: "},
  };
  for (const auto& c : cases) {
    std::string f = write_temp("bad.yaml", base + c.yaml);
    auto r = run_cli("goodput " + f);
    CHECK_MESSAGE(r.exit_code == 2, c.yaml);
    CHECK_MESSAGE(r.err.find(f + c.message) == 0, r.err);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find("; valid: ") != std::string::npos);
    CHECK(r.out.empty());
  }
  std::string ok = write_temp("ok.yaml", base + "  seed: 3\n");
  auto t = run_cli("goodput " + ok + " --trials 0");
  CHECK(t.exit_code == 2);
  CHECK(t.err == "command line: --trials: 0 trials; valid: 1 to 1000000\n");
}

TEST_CASE("goodput SWEEP marks a point that does not fit 'oom', as run does, with its memory and no goodput")
{
  const std::string f = write_temp("goodput-oom.yaml", R"(name: goodput-oom
model: gpt3-1.3b
cluster: {platform: dgx-a100-80gb, gpus: 8}
training: {dp: 8, micro_batch: 1, global_batch: 256}
sweep:
  axes:
    training.micro_batch: [1, 32]
)");
  const std::string out = temp_dir() + "/goodput-oom";
  auto r = run_cli("goodput " + f + " --out " + out);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto rows = nlohmann::json::parse(read_file(out + "/results.json")).at("rows");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["status"] == "ok");
  CHECK(rows[0]["ettr"].get<double>() > 0);
  CHECK(rows[1]["status"] == "oom");
  CHECK(rows[1]["reason"].get<std::string>().find("out of memory") != std::string::npos);
  CHECK(rows[1]["peak_bytes"].get<double>() > rows[1]["capacity_bytes"].get<double>());
  CHECK(rows[1]["step_time_s"].is_null());
  CHECK(rows[1]["ettr"].is_null());
  // the rows of run and goodput agree on every column they share
  auto plain = run_cli("run " + f + " --out " + out + "-run");
  REQUIRE_MESSAGE(plain.exit_code == 0, plain.err);
  auto run_rows = nlohmann::json::parse(read_file(out + "-run/results.json")).at("rows");
  for (std::size_t i = 0; i < 2; ++i)
    for (auto& [k, v] : run_rows[i].items()) {
      CAPTURE(k);
      CHECK(rows[i][k] == v);
    }
}
