// The studies in experiments/ run end to end with one command each, produce their figures, and
// still say what docs/studies.md says they say (the claims are asserted, not the digits).
#include "tests/TestUtil.hpp"

#include <nlohmann/json.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>
#include <string>
#include <vector>

using namespace clustersim::test;
using nlohmann::json;

namespace {

struct Study {
  json rows;
  std::string dir;
};

/// Runs `clustersim run experiments/NAME.yaml --out DIR` and loads its results.json.
Study run_study(const std::string& name, const std::vector<std::string>& figures)
{
  Study s;
  s.dir = temp_dir() + "/" + name;
  auto r = run_cli("run " + source_path("experiments/" + name + ".yaml") + " --out " + s.dir + " --jobs 2");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  std::ifstream in(s.dir + "/results.json");
  json doc = json::parse(in);
  CHECK(doc.at("experiment") == name);
  s.rows = doc.at("rows");
  REQUIRE(!s.rows.empty());
  for (const auto& f : figures)
    for (const char* ext : {".png", ".svg"}) {
      std::string path = s.dir + "/" + f + ext;
      INFO(path);
      REQUIRE(std::filesystem::exists(path));
      CHECK(std::filesystem::file_size(path) > 8000);
    }
  return s;
}

double num(const json& row, const char* key)
{
  INFO(key << " in " << row.dump());
  REQUIRE(row.at(key).is_number());
  return row.at(key).get<double>();
}

} // namespace

TEST_CASE("study dp-scaling-7b: overlapped ZeRO-1 scales better than exposed, both decline with GPUs")
{
  Study s = run_study("dp-scaling-7b", {"scaling", "breakdown"});
  REQUIRE(s.rows.size() == 18);
  std::vector<json> on, off;
  for (const auto& r : s.rows) {
    CHECK(r.at("status") == "ok");
    (r.at("training.overlap.grad_reduce") == "true" ? on : off).push_back(r);
  }
  REQUIRE(on.size() == 9);
  REQUIRE(off.size() == 9);
  for (std::size_t i = 0; i < on.size(); ++i) {
    CHECK(num(on[i], "gpus") == num(off[i], "gpus"));
    CHECK(num(on[i], "exposed_dp_s") < num(off[i], "exposed_dp_s"));
    CHECK(num(on[i], "step_time_s") < num(off[i], "step_time_s"));
  }
  CHECK(num(on.back(), "scaling_efficiency") > num(off.back(), "scaling_efficiency"));
  CHECK(num(off.back(), "scaling_efficiency") < num(off[1], "scaling_efficiency"));
  CHECK(num(off.back(), "exposed_dp_s") > num(off.front(), "exposed_dp_s"));
}

TEST_CASE("study zero-stages-7b: plain DP does not fit, every ZeRO stage cuts memory, ZeRO-3 costs time")
{
  Study s = run_study("zero-stages-7b", {"breakdown", "memory"});
  REQUIRE(s.rows.size() == 4);
  CHECK(s.rows[0].at("status") == "oom");
  for (int i = 1; i < 4; ++i)
    CHECK(s.rows[static_cast<std::size_t>(i)].at("status") == "ok");
  for (int i = 1; i < 4; ++i)
    CHECK(num(s.rows[static_cast<std::size_t>(i)], "peak_bytes") <
          num(s.rows[static_cast<std::size_t>(i - 1)], "peak_bytes"));
  CHECK(num(s.rows[3], "exposed_dp_s") > num(s.rows[1], "exposed_dp_s"));
}

TEST_CASE("study gpt3-175b-layouts: every layout fits and runs - TP 4 trades TP traffic for bubble")
{
  Study s = run_study("gpt3-175b-layouts", {"breakdown", "mfu"});
  REQUIRE(s.rows.size() >= 4);
  const json* tp4 = nullptr;
  const json* tp8 = nullptr;
  for (const auto& r : s.rows) {
    CHECK(r.at("status") == "ok");
    CHECK(num(r, "gpus") == 1024);
    if (r.at("tp") == 4 && r.at("pp") == 16)
      tp4 = &r;
    if (r.at("tp") == 8 && r.at("pp") == 8)
      tp8 = &r;
  }
  REQUIRE(tp4);
  REQUIRE(tp8);
  CHECK(num(*tp4, "exposed_tp_s") < num(*tp8, "exposed_tp_s"));
  CHECK(num(*tp4, "bubble_s") > num(*tp8, "bubble_s"));
}

TEST_CASE("study memory-walls: 70B and 175B need model parallelism on 80 GB cards")
{
  Study s = run_study("memory-walls", {"memory"});
  REQUIRE(s.rows.size() == 20);
  for (const auto& r : s.rows) {
    bool model_parallel = r.at("tp") != 1;
    bool big = r.at("model") == "llama2-70b" || r.at("model") == "gpt3-175b";
    INFO(r.dump());
    if (model_parallel)
      CHECK(r.at("status") == "ok");
    else if (big)
      CHECK(r.at("status") == "oom");
    if (!model_parallel && r.at("zero") == 0)
      CHECK(r.at("status") == "oom");
  }
}

TEST_CASE("study compute-walls: one GPU cannot train either model - days fall with GPUs, GPU-hours do not")
{
  Study s = run_study("compute-walls", {"days"});
  std::map<std::string, std::vector<json>> by_model;
  for (const auto& r : s.rows)
    by_model[r.at("model").get<std::string>()].push_back(r);
  for (auto& [model, rows] : by_model) {
    INFO(model);
    REQUIRE(rows.size() >= 3);
    CHECK(rows.front().at("gpus") == 1);
    CHECK(rows.front().at("status") == "oom");
    for (std::size_t i = 2; i < rows.size(); ++i) {
      CHECK(num(rows[i], "time_to_train_days") < num(rows[i - 1], "time_to_train_days"));
      // more GPUs never make the job cheaper in GPU-hours: scaling efficiency is at most 1
      CHECK(num(rows[i], "gpu_hours") >= num(rows[i - 1], "gpu_hours") * (1 - 1e-9));
    }
  }
}

TEST_CASE("study cluster-whatif: 200 Gb/s costs time - rail-aligned rings do not feel a 2:1 spine")
{
  Study s = run_study("cluster-whatif", {"breakdown"});
  REQUIRE(s.rows.size() == 5);
  std::map<std::string, double> step;
  for (const auto& r : s.rows) {
    CHECK(r.at("status") == "ok");
    step[r.at("platform").get<std::string>()] = num(r, "step_time_s");
  }
  CHECK(step.at("dgx-h100-200g") > 1.1 * step.at("dgx-h100"));
  CHECK(step.at("dgx-h100-2to1") == doctest::Approx(step.at("dgx-h100")).epsilon(0.01));
  CHECK(step.at("dgx-h100-fattree-2to1") >= step.at("dgx-h100-fattree") * 0.999);
}

TEST_CASE("study deepseek-v3-ep: on 8-GPU nodes a node-wide EP group wins, on NVL72 racks a wide one does")
{
  Study s = run_study("deepseek-v3-ep", {"breakdown"});
  REQUIRE(s.rows.size() == 18);
  std::map<std::tuple<std::string, int, int>, json> at;
  for (const auto& r : s.rows)
    at[{r.at("cluster.platform").get<std::string>(), std::stoi(r.at("cluster.gpus").get<std::string>()),
        std::stoi(r.at("training.ep").get<std::string>())}] = r;
  auto step = [&](const char* p, int gpus, int ep) { return num(at.at({p, gpus, ep}), "step_time_s"); };
  auto ep_s = [&](const char* p, int gpus, int ep) { return num(at.at({p, gpus, ep}), "exposed_ep_s"); };
  // 80 GB H100s hold the experts only spread over 32 GPUs or more
  CHECK(at.at({"dgx-h100", 256, 8}).at("status") == "oom");
  CHECK(at.at({"dgx-h100", 1024, 8}).at("status") == "oom");
  CHECK(at.at({"dgx-h100", 1024, 32}).at("status") == "ok");
  CHECK(at.at({"dgx-b200", 256, 64}).at("status") == "invalid");
  // 8-GPU NVLink nodes: leaving the node costs the all-to-alls the network
  CHECK(step("dgx-b200", 1024, 64) > 1.5 * step("dgx-b200", 1024, 8));
  CHECK(ep_s("dgx-b200", 1024, 64) > 5 * ep_s("dgx-b200", 1024, 8));
  // ... while a narrow group leaves every expert on one GPU per node, reduced at the NIC's rate
  auto dp_s = [&](const char* p, int gpus, int ep) { return num(at.at({p, gpus, ep}), "exposed_dp_s"); };
  CHECK(dp_s("dgx-b200", 1024, 8) > 5 * dp_s("dgx-b200", 1024, 64));
  // NVL72 racks: a 64-way group stays on NVLink, so wider is better, and far better than on B200 nodes
  CHECK(step("gb200-nvl72", 1024, 64) < step("gb200-nvl72", 1024, 8));
  CHECK(ep_s("gb200-nvl72", 1024, 64) < 1.5 * ep_s("gb200-nvl72", 1024, 8));
  CHECK(step("gb200-nvl72", 1024, 64) < 0.5 * step("dgx-b200", 1024, 64));
}

namespace {

/// Runs `clustersim goodput experiments/NAME.yaml --out DIR` and loads its results.json.
Study goodput_study(const std::string& name, const std::vector<std::string>& figures)
{
  Study s;
  s.dir = temp_dir() + "/" + name;
  auto r = run_cli("goodput " + source_path("experiments/" + name + ".yaml") + " --out " + s.dir);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  std::ifstream in(s.dir + "/results.json");
  s.rows = json::parse(in).at("rows");
  for (const auto& f : figures)
    REQUIRE(std::filesystem::exists(s.dir + "/" + f + ".png"));
  return s;
}

} // namespace

TEST_CASE("study goodput-scale: ETTR falls with GPUs, from above 0.98 at 1k to below 0.8 at 64k and 0.7 at 128k")
{
  Study s = goodput_study("goodput-scale", {"ettr", "days"});
  REQUIRE(s.rows.size() == 9);
  double last = 1;
  for (const auto& row : s.rows) {
    CHECK(row.at("status") == "ok");
    CHECK(num(row, "ettr") <= last);
    CHECK(num(row, "mc_ettr_p05") <= num(row, "mc_ettr_p95"));
    last = num(row, "ettr");
  }
  CHECK(num(s.rows.front(), "ettr") > 0.98);
  CHECK(num(s.rows[4], "ettr") > 0.9); // 16k: Llama 3's "higher than 90 %"
  CHECK(num(s.rows[6], "ettr") < 0.8);
  // 64k on dgx-h100 and on the radix-128 variant: the fabric does not move the result
  CHECK(num(s.rows[7], "ettr") == doctest::Approx(num(s.rows[6], "ettr")).epsilon(1e-3));
  CHECK(num(s.rows[8], "mc_ettr_p95") < 0.7);
  // GPU-hours grow with the cluster: the same tokens cost more through failures
  CHECK(num(s.rows[6], "goodput_gpu_hours") > 1.2 * num(s.rows.front(), "goodput_gpu_hours"));
}

TEST_CASE("study goodput-interval: the ETTR peaks at the sweep's interval nearest the Young/Daly optimum")
{
  Study s = goodput_study("goodput-interval", {"ettr"});
  REQUIRE(s.rows.size() == 8);
  std::size_t best = 0, nearest = 0;
  const double optimum = num(s.rows[0], "optimal_interval_s");
  for (std::size_t i = 0; i < s.rows.size(); ++i) {
    if (num(s.rows[i], "ettr") > num(s.rows[best], "ettr"))
      best = i;
    if (std::abs(std::log(num(s.rows[i], "checkpoint_interval_s") / optimum)) <
        std::abs(std::log(num(s.rows[nearest], "checkpoint_interval_s") / optimum)))
      nearest = i;
  }
  CHECK(best == nearest);
}

TEST_CASE("study dp-jitter-7b: per-rank jitter of sigma 0.1 brings 96 GPUs to the practitioners' 70-80x")
{
  Study s = run_study("dp-jitter-7b", {"scaling"});
  REQUIRE(s.rows.size() == 36);
  std::map<std::string, double> at96;
  for (const auto& row : s.rows)
    if (num(row, "gpus") == 96)
      at96[row.at("faults.jitter.sigma").get<std::string>()] = num(row, "scaling_efficiency");
  CHECK(at96.at("0") > 0.99);
  CHECK(at96.at("0.02") < at96.at("0"));
  CHECK(at96.at("0.05") < at96.at("0.02"));
  CHECK(at96.at("0.1") * 96 > 70);
  CHECK(at96.at("0.1") * 96 < 80);
}

TEST_CASE("study faults-3d: 1 % of GPUs 1.5x slower slow the whole 3D job by more than 30 %, one cable down does not")
{
  Study s = run_study("faults-3d", {"step", "breakdown"});
  REQUIRE(s.rows.size() == 3);
  const double healthy = num(s.rows[0], "step_time_s");
  CHECK(num(s.rows[1], "step_time_s") > 1.3 * healthy);
  CHECK(num(s.rows[1], "step_time_s") < 1.5 * healthy);
  CHECK(num(s.rows[2], "step_time_s") == doctest::Approx(healthy).epsilon(0.01));
}

TEST_CASE("study fabric-whatif: ideal spreading cannot tell fabrics apart, ECMP can, static tables and adaptive routing recover it, and rail-only is rail-optimized")
{
  Study s = run_study("fabric-whatif", {"step", "exposed_dp"});
  REQUIRE(s.rows.size() == 24);
  std::map<std::tuple<std::string, std::string, std::string>, double> step;
  std::map<std::tuple<std::string, std::string, std::string>, double> dp;
  for (const auto& r : s.rows) {
    CHECK(r.at("status") == "ok");
    const auto key = std::make_tuple(r.at("cluster.platform.fabric.kind").get<std::string>(),
                                     r.at("cluster.platform.fabric.oversubscription").get<std::string>(),
                                     r.at("cluster.platform.fabric.routing").get<std::string>());
    step[key] = num(r, "step_time_s");
    dp[key] = num(r, "exposed_dp_s");
  }
  const double base = step.at({"rail-optimized", "1", "ideal"});
  for (const char* kind : {"rail-optimized", "rail-only", "fat-tree"})
    for (const char* o : {"1", "2"})
      CHECK(step.at({kind, o, "ideal"}) == doctest::Approx(base).epsilon(0.002));
  for (const char* o : {"1", "2"})
    CHECK(step.at({"rail-only", o, "ideal"}) == doctest::Approx(step.at({"rail-optimized", o, "ideal"})).epsilon(1e-9));
  // a node's NICs on one leaf: ECMP collisions expose data-parallel time, more at 2:1
  CHECK(step.at({"fat-tree", "1", "ecmp"}) > step.at({"fat-tree", "1", "ideal"}) * 1.003);
  CHECK(step.at({"fat-tree", "2", "ecmp"}) > step.at({"fat-tree", "1", "ecmp"}));
  CHECK(dp.at({"fat-tree", "2", "ecmp"}) > 4 * dp.at({"fat-tree", "2", "ideal"}));
  // rail-aligned fabrics spread the same hops over a leaf per rail
  for (const char* kind : {"rail-optimized", "rail-only"})
    CHECK(step.at({kind, "2", "ecmp"}) < step.at({"fat-tree", "2", "ecmp"}));
  for (const char* kind : {"rail-optimized", "rail-only", "fat-tree"})
    for (const char* o : {"1", "2"}) {
      CAPTURE(kind);
      CAPTURE(o);
      // adaptive routing: ideal's spreading at 95 % of the cables' rate, never faster than ideal
      CHECK(step.at({kind, o, "adaptive"}) >= step.at({kind, o, "ideal"}));
      CHECK(step.at({kind, o, "adaptive"}) == doctest::Approx(step.at({kind, o, "ideal"})).epsilon(0.002));
      // static D-mod-k tables never collide worse than the hash here
      CHECK(step.at({kind, o, "static"}) <= step.at({kind, o, "ecmp"}));
    }
  // a node's NICs on consecutive ports of one leaf reach the next node's over distinct cables:
  // at 1:1 static routing is ideal's step; at 2:1 two destinations share each up-link, between
  // ideal and ECMP (DeepSeek, ISCA'25 section 5.2.2: static and adaptive routing beat ECMP)
  CHECK(step.at({"fat-tree", "1", "static"}) == doctest::Approx(step.at({"fat-tree", "1", "ideal"})).epsilon(1e-9));
  CHECK(step.at({"fat-tree", "2", "static"}) > step.at({"fat-tree", "2", "ideal"}));
  CHECK(step.at({"fat-tree", "2", "static"}) < step.at({"fat-tree", "2", "ecmp"}));
}

TEST_CASE("study fabric-shared: a background on the leaf-spine cables slows the job, ECMP's hashed flows the most")
{
  Study s = run_study("fabric-shared", {"step", "exposed_dp"});
  REQUIRE(s.rows.size() == 8);
  std::map<std::pair<std::string, double>, double> step;
  std::map<std::pair<std::string, double>, double> dp;
  for (const auto& r : s.rows) {
    CHECK(r.at("status") == "ok");
    const std::string routing = r.at("cluster.routing").get<std::string>();
    const double load = std::stod(r.at("cluster.background.load").get<std::string>());
    step[{routing, load}] = num(r, "step_time_s");
    dp[{routing, load}] = num(r, "exposed_dp_s");
    // the busiest leaf-spine cable carries the background and the job's bytes
    CHECK(num(r, "leaf_up_busiest_load") > load);
    CHECK(num(r, "leaf_up_busiest_load") <= 1.0 + 1e-9);
  }
  const std::vector<double> loads{0, 0.25, 0.5, 0.75};
  for (const char* routing : {"ideal", "ecmp"})
    for (std::size_t i = 1; i < loads.size(); ++i) {
      CAPTURE(routing);
      CAPTURE(loads[i]);
      CHECK(step.at({routing, loads[i]}) > step.at({routing, loads[i - 1]}));
      CHECK(dp.at({routing, loads[i]}) >= dp.at({routing, loads[i - 1]}));
    }
  // ideal spreading has room to spare on the 2:1 up-links: a quarter taken barely shows; the
  // hashed flows that collide on one cable lose their share of it, so ECMP loses more at every load
  CHECK(step.at({"ideal", 0.25}) == doctest::Approx(step.at({"ideal", 0.0})).epsilon(0.005));
  for (double load : loads)
    CHECK(step.at({"ecmp", load}) - step.at({"ecmp", 0.0}) >= step.at({"ideal", load}) - step.at({"ideal", 0.0}));
  CHECK(step.at({"ecmp", 0.75}) > 1.1 * step.at({"ecmp", 0.0}));
  // the background slows the rank's collectives and transfers more at every load
  for (const char* routing : {"ideal", "ecmp"}) {
    std::vector<double> slowed;
    for (const auto& r : s.rows)
      if (r.at("cluster.routing") == routing)
        slowed.push_back(num(r, "comm_slowed_s"));
    REQUIRE(slowed.size() == 4);
    CAPTURE(routing);
    for (std::size_t i = 1; i < slowed.size(); ++i)
      CHECK(slowed[i] > slowed[i - 1]);
  }
}

TEST_CASE("study fabric-jobs: a second job slows the first only where they share cables, under ECMP, on interleaved nodes")
{
  Study s = run_study("fabric-jobs", {"slowdown", "exposed_dp"});
  REQUIRE(s.rows.size() == 4);
  std::map<std::pair<std::string, std::string>, json> at;
  for (const auto& r : s.rows) {
    CHECK(r.at("status") == "ok");
    at[{r.at("cluster.routing").get<std::string>(), r.at("cluster.placement").get<std::string>()}] = r;
    CHECK(num(r, "shared_slowdown") == doctest::Approx(num(r, "step_time_s") / num(r, "alone_step_time_s") - 1));
  }
  // packed, each job holds its own run of nodes; only the leaf where the 8B's last NICs and the
  // 70B's first meet (42-port leaves: nodes straddle them) carries both: nothing under ideal
  // spreading, a trace under ECMP
  CHECK(num(at.at({"ideal", "packed"}), "shared_slowdown") == 0.0);
  CHECK(std::fabs(num(at.at({"ecmp", "packed"}), "shared_slowdown")) < 0.002);
  // interleaved node by node they share every leaf: ideal spreading has room on the 2:1 up-links,
  // ECMP's hashed flows collide with the other job's
  CHECK(std::fabs(num(at.at({"ideal", "interleaved"}), "shared_slowdown")) < 0.002);
  const json& hit = at.at({"ecmp", "interleaved"});
  CHECK(num(hit, "shared_slowdown") > 0.02);
  CHECK(num(hit, "exposed_dp_s") > 2 * num(at.at({"ecmp", "packed"}), "exposed_dp_s"));
  // its collectives and transfers: slowed by the other job's flows where they share cables
  CHECK(num(hit, "comm_slowed_s") > 10 * num(at.at({"ecmp", "packed"}), "comm_slowed_s"));
}

TEST_CASE("study fabric-planes: DeepSeek-V3 on 2,048 H800 takes one step on eight planes and on shared spines, as DeepSeek measured, and a fat-tree's ECMP sets itself apart")
{
  Study s = run_study("fabric-planes", {"step"});
  REQUIRE(s.rows.size() == 6);
  std::map<std::pair<std::string, std::string>, double> step;
  for (const auto& r : s.rows) {
    CHECK(r.at("status") == "ok");
    step[{r.at("cluster.platform.fabric.kind").get<std::string>(), r.at("cluster.platform.fabric.routing").get<std::string>()}] =
        num(r, "step_time_s");
  }
  // ISCA'25 Table 4: 19.926 s (multi-plane) against 19.946 s (multi-rail), 0.1 %: no difference
  // beyond 0.5 % under either routing, since PXN keeps every flow on its own rail on both
  for (const char* routing : {"ideal", "ecmp"}) {
    CAPTURE(routing);
    const double planes = step.at({"rail-only", routing}), rails = step.at({"rail-optimized", routing});
    CHECK(std::fabs(planes / rails - 1) < 0.005);
  }
  // the same study tells fabrics apart where they differ: a node's eight NICs on one leaf, hashed
  CHECK(step.at({"fat-tree", "ecmp"}) > 1.005 * step.at({"rail-optimized", "ecmp"}));
  CHECK(step.at({"fat-tree", "ecmp"}) > 1.005 * step.at({"fat-tree", "ideal"}));
}

TEST_CASE("study fabric-cost-dsv3: priced and owned, rail-only trains a DeepSeek-V3 token for the least, and a 2:1 "
          "fat-tree's saving is mostly eaten by its slower all-to-all")
{
  Study s = run_study("fabric-cost-dsv3", {"usd_per_mtokens", "step"});
  REQUIRE(s.rows.size() == 6);
  std::map<std::pair<std::string, std::string>, json> row;
  for (const auto& r : s.rows) {
    CHECK(r.at("status") == "ok");
    CHECK(r.at("platform").get<std::string>().find("cost.basis: owned") != std::string::npos);
    row[{r.at("cluster.platform.fabric.kind").get<std::string>(),
         r.at("cluster.platform.fabric.oversubscription").get<std::string>()}] = r;
  }
  auto at = [&](const char* kind, const char* ratio, const char* key) { return num(row.at({kind, ratio}), key); };
  // owned: the cost figures take the capex-derived GPU-hour, and a token's price follows
  for (const auto& [k, r] : row) {
    CHECK(num(r, "usd_per_gpu_hour") == num(r, "owned_usd_per_gpu_hour"));
    CHECK(num(r, "usd_per_mtokens") == doctest::Approx(num(r, "cost_usd") / num(r, "budget_tokens") * 1e6));
  }
  // rail-only drops the core tier: less capex, a smaller network share, the cheapest token
  CHECK(at("rail-only", "1", "capex_usd") < at("rail-optimized", "1", "capex_usd"));
  CHECK(at("rail-only", "1", "network_capex_share") < at("rail-optimized", "1", "network_capex_share"));
  for (const auto& [k, r] : row)
    CHECK(at("rail-only", "2", "usd_per_mtokens") <= num(r, "usd_per_mtokens"));
  // the same step on the rail fabrics (PXN keeps the cross-rail all-to-all on NVLink)
  CHECK(std::fabs(at("rail-only", "1", "step_time_s") / at("rail-optimized", "1", "step_time_s") - 1) < 0.005);
  // a 2:1 fat-tree saves capex and loses most of it in step time: its token keeps under a quarter
  // of the GPU-hour's saving
  auto saving = [&](const char* kind, const char* key) { return 1 - at(kind, "2", key) / at(kind, "1", key); };
  CHECK(at("fat-tree", "2", "capex_usd") < at("fat-tree", "1", "capex_usd"));
  CHECK(at("fat-tree", "2", "step_time_s") > 1.02 * at("fat-tree", "1", "step_time_s"));
  CHECK(saving("fat-tree", "usd_per_mtokens") < 0.25 * saving("fat-tree", "owned_usd_per_gpu_hour"));
  // on rail fabrics the expert group stays under its leaves: 2:1 keeps nearly all of its saving
  CHECK(saving("rail-optimized", "usd_per_mtokens") > 0.9 * saving("rail-optimized", "owned_usd_per_gpu_hour"));
  CHECK(at("rail-optimized", "2", "usd_per_mtokens") < 0.98 * at("rail-optimized", "1", "usd_per_mtokens"));
}

TEST_CASE("study hsdp-scale: sharding over every replica falls off at 4,096 GPUs, sharding within a node does not, "
          "for more memory")
{
  Study s = run_study("hsdp-scale", {"scaling", "breakdown", "memory"});
  REQUIRE(s.rows.size() == 8);
  std::map<std::pair<std::string, int>, const json*> at;
  for (const auto& r : s.rows) {
    CHECK(r.at("status") == "ok");
    CHECK(r.at("framework") == "torchtitan");
    at[{r.at("data_parallel").get<std::string>(), r.at("gpus").get<int>()}] = &r;
  }
  const json& z64 = *at.at({"zero3", 64});
  const json& z4k = *at.at({"zero3", 4096});
  const json& h64 = *at.at({"hsdp", 64});
  const json& h4k = *at.at({"hsdp", 4096});
  CHECK(h64.at("dp_shard") == 8);
  CHECK(z64.at("dp_shard") == 0);
  // full sharding: a small edge on one node's worth of nodes, half the efficiency at 4,096
  CHECK(num(z64, "step_time_s") <= num(h64, "step_time_s"));
  CHECK(num(z4k, "scaling_efficiency") < 0.7);
  CHECK(num(z4k, "exposed_dp_s") > 10 * num(h4k, "exposed_dp_s"));
  // hybrid: the step at 4,096 within 1 % of the step at 64, for more memory per GPU
  CHECK(num(h4k, "step_time_s") < 1.01 * num(h64, "step_time_s"));
  CHECK(num(h4k, "scaling_efficiency") > 0.95);
  CHECK(num(h64, "peak_bytes") > num(z64, "peak_bytes"));
  CHECK(num(h4k, "peak_bytes") == num(h64, "peak_bytes"));
}

TEST_CASE("study llama3-405b-precision: FP8 and NVFP4 each shorten the GB200 step and the $ per token, NVFP4 by less "
          "than its doubled peak, and NVFP4 holds more memory than FP8")
{
  Study s = run_study("llama3-405b-precision", {"breakdown", "memory", "usd_per_mtokens"});
  REQUIRE(s.rows.size() == 3);
  std::map<std::string, const json*> by;
  for (const auto& r : s.rows) {
    CHECK(r.at("status") == "ok");
    by[r.at("precision").get<std::string>()] = &r;
  }
  REQUIRE(by.size() == 3);
  const json &bf16 = *by.at("bf16"), &fp8 = *by.at("fp8"), &fp4 = *by.at("fp4");
  CHECK(num(fp8, "step_time_s") < num(bf16, "step_time_s"));
  CHECK(num(fp4, "step_time_s") < num(fp8, "step_time_s"));
  // attention, the element-wise kernels and the casts stay in 16 bits: the 2x peak buys less
  CHECK(num(fp8, "step_time_s") / num(fp4, "step_time_s") < 1.6);
  CHECK(num(fp4, "usd_per_mtokens") < num(fp8, "usd_per_mtokens"));
  CHECK(num(fp4, "energy_mwh") < num(fp8, "energy_mwh"));
  // NVFP4 keeps 16-bit primary weights and caches both layouts of their FP4 casts; FP8 keeps FP8
  // primary weights in their place
  CHECK(num(fp4, "buffers_bytes") > num(fp8, "buffers_bytes"));
  CHECK(num(fp4, "peak_bytes") > num(fp8, "peak_bytes"));
  CHECK(num(fp4, "activations_bytes") < num(fp8, "activations_bytes"));
}
