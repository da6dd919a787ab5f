// Faults simulated in the step: stragglers (the DP closed form), jitter, degraded and failed
// links (a spine down halves the bandwidth across leaves), and bad fault input.
#include "tests/TestUtil.hpp"

#include <nlohmann/json.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>

using namespace clustersim::test;

namespace {

const std::string kDp = R"(name: dp-straggler
model: llama2-7b
cluster: {platform: dgx-a100-80gb, gpus: 8}
training: {tp: 1, pp: 1, dp: 8, micro_batch: 1, global_batch: 16, precision: bf16, flash_attention: true, zero: 1,
           overlap: {grad_reduce: false}}
)";

nlohmann::json run_json(const std::string& yaml)
{
  std::string f = write_temp("exp.yaml", yaml);
  auto r = run_cli("run " + f + " --json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  return nlohmann::json::parse(r.out);
}

/// DGX H100 nodes on a plain two-level fat-tree of radix 16: four nodes give four leaves (one
/// node's 8 NICs each) and two spines, each leaf with 4 cables to each spine.
std::string two_spine_platform()
{
  std::string p = read_file(std::string(CLUSTERSIM_SOURCE) + "/platforms/dgx-h100.yaml");
  auto replace = [&](const std::string& a, const std::string& b) {
    auto at = p.find(a);
    REQUIRE(at != std::string::npos);
    p.replace(at, a.size(), b);
  };
  replace("name: dgx-h100", "name: two-spine-h100");
  replace("kind: rail-optimized", "kind: fat-tree");
  replace("radix: 64", "radix: 16");
  replace("rail_group_nodes: 32", "levels: 2");
  return write_temp("two-spine.yaml", p);
}

double busbw_4gib(const std::string& out)
{
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.find("4294967296") != std::string::npos) {
      std::istringstream f(line);
      std::string size, count, algo, time, algbw, busbw;
      f >> size >> count >> algo >> time >> algbw >> busbw;
      return std::stod(busbw);
    }
  FAIL("no 4 GiB row in: " << out);
  return 0;
}

} // namespace

TEST_CASE("faults: one data-parallel rank twice as slow makes the step its compute plus the exposed communication")
{
  auto base = run_json(kDp);
  auto slow = run_json(kDp + "faults:\n  stragglers:\n    - {ranks: [3], factor: 2}\n");
  const auto& b = base["breakdown"];
  const auto& s = slow["breakdown"];
  // the slow rank sets the pace, and its breakdown is the report's
  CHECK(s["critical_rank"] == 3);
  const double ratio = s["compute_s"].get<double>() / b["compute_s"].get<double>();
  MESSAGE("compute " << b["compute_s"] << " s -> " << s["compute_s"] << " s (x" << ratio << ")");
  CHECK(ratio > 1.95); // every kernel twice as slow; the launch gaps between them are not
  CHECK(ratio <= 2.0);
  // no overlap: step = the slow rank's compute + its optimizer + the all-reduce, which the
  // others start only when it arrives, so it is exposed exactly as without the straggler
  CHECK(s["exposed_dp_s"].get<double>() == doctest::Approx(b["exposed_dp_s"].get<double>()).epsilon(0.01));
  CHECK(slow["step_time_s"].get<double>() ==
        doctest::Approx(s["compute_s"].get<double>() + s["optimizer_s"].get<double>() + s["exposed_dp_s"].get<double>())
            .epsilon(1e-9));
  CHECK(slow["simulation"]["mode"] == "full");
  // the healthy ranks' breakdown says where their time went: waiting for rank 3
  const auto& l = slow["least_loaded_breakdown"];
  CHECK(l["rank"] != 3);
  CHECK(l["compute_s"].get<double>() == doctest::Approx(b["compute_s"].get<double>()).epsilon(1e-9));
  const double waited = l["bubble_s"].get<double>() + l["exposed_dp_s"].get<double>();
  CHECK(waited == doctest::Approx(slow["step_time_s"].get<double>() - l["compute_s"].get<double>() -
                                  l["optimizer_s"].get<double>())
                      .epsilon(1e-9));
  CHECK(!base.contains("least_loaded_breakdown"));
}

TEST_CASE("faults: compute-bound stragglers hurt a GEMM-heavy step more than HBM-bound ones")
{
  auto compute = run_json(kDp + "faults:\n  stragglers:\n    - {nodes: [0], factor: 1.5, on: compute}\n");
  auto hbm = run_json(kDp + "faults:\n  stragglers:\n    - {nodes: [0], factor: 1.5, on: hbm}\n");
  auto both = run_json(kDp + "faults:\n  stragglers:\n    - {nodes: [0], factor: 1.5}\n");
  const double c = compute["step_time_s"], h = hbm["step_time_s"], a = both["step_time_s"];
  MESSAGE("compute " << c << " s, hbm " << h << " s, both " << a << " s");
  CHECK(h < c);
  CHECK(c < a);
}

TEST_CASE("faults: a seeded fraction of stragglers and jitter give the same step for the same seed")
{
  const std::string f = kDp + "faults:\n  seed: 5\n  stragglers:\n    - {fraction: 0.25, factor: 1.3}\n"
                              "  jitter: {sigma: 0.05}\n";
  std::string file = write_temp("exp.yaml", f);
  auto a = run_cli("run " + file + " --json");
  auto b = run_cli("run " + file + " --json");
  REQUIRE(a.exit_code == 0);
  CHECK(a.out == b.out);
  std::string other = f;
  other.replace(other.find("seed: 5"), 7, "seed: 6");
  auto c = run_json(other);
  CHECK(c["step_time_s"] != nlohmann::json::parse(a.out)["step_time_s"]);
  // jitter alone: the slowest of 8 ranks sets each synchronisation, so the step only grows
  auto jitter = run_json(kDp + "faults:\n  jitter: {sigma: 0.05}\n");
  auto base = run_json(kDp);
  CHECK(jitter["step_time_s"].get<double>() > base["step_time_s"].get<double>());
}

TEST_CASE("faults: one spine of two down halves the bandwidth across leaves, in nccl-tests output and in a step")
{
  std::string platform = two_spine_platform();
  std::string down = write_temp("spine.yaml", "links:\n  - {switch: spine0, down: true}\n");
  auto ok = run_cli("collective --platform " + platform + " --gpus 32 --sizes 4GiB");
  auto cut = run_cli("collective --platform " + platform + " --gpus 32 --sizes 4GiB --faults " + down);
  REQUIRE_MESSAGE(ok.exit_code == 0, ok.err);
  REQUIRE_MESSAGE(cut.exit_code == 0, cut.err);
  MESSAGE(ok.out << cut.out);
  const double ratio = busbw_4gib(cut.out) / busbw_4gib(ok.out);
  // the ring's inter-node hops all cross the spines: half the up-links, half the bandwidth;
  // the NVLink part of the ring and the latency terms are unchanged
  CHECK(ratio > 0.5);
  CHECK(ratio < 0.56);
  // half the bandwidth of each cable instead: the same capacity as one spine down
  std::string half = write_temp("half.yaml", "links:\n  - {switch: spine0, factor: 0.001}\n  - {switch: spine1, factor: 1}\n");
  auto slow = run_cli("collective --platform " + platform + " --gpus 32 --sizes 4GiB --faults " + half);
  CHECK(busbw_4gib(slow.out) == doctest::Approx(busbw_4gib(cut.out)).epsilon(0.01));
  // both spines down: no path across leaves
  std::string both = write_temp("both.yaml", "links:\n  - {switch: spine0, down: true}\n  - {switch: spine1, down: true}\n");
  auto none = run_cli("collective --platform " + platform + " --gpus 32 --sizes 4GiB --faults " + both);
  CHECK(none.exit_code == 2);
  CHECK(none.err.find(both + ":3:5: no path left: leaf0-up has no capacity once this fault applies; valid: ") == 0);
  // in a step: ZeRO-3 over the four nodes, spine0 down
  const std::string exp = "model: llama2-7b\ncluster: {platform: " + platform + ", gpus: 32}\n"
                          "training: {dp: 32, micro_batch: 1, global_batch: 32, zero: 3, flash_attention: true}\n";
  auto fine = run_json(exp);
  auto broken = run_json(exp + "faults:\n  links:\n    - {switch: spine0, down: true}\n");
  MESSAGE("ZeRO-3 step " << fine["step_time_s"] << " s -> " << broken["step_time_s"] << " s with spine0 down");
  CHECK(broken["step_time_s"].get<double>() > fine["step_time_s"].get<double>());
  CHECK(broken["breakdown"]["exposed_dp_s"].get<double>() > fine["breakdown"]["exposed_dp_s"].get<double>());
}

TEST_CASE("faults: a straggler node on a job smaller than its node slows the job's GPUs of that node and no others")
{
  // 4 of a DGX's 8 GPUs: node 0 is ranks 0-3 (this wrote past the per-rank flags)
  const std::string four = "model: gpt3-1.3b\ncluster: {platform: dgx-a100-80gb, gpus: 4}\n"
                           "training: {tp: 2, pp: 2, dp: 1, micro_batch: 1, global_batch: 8}\n";
  auto node = run_json(four + "faults: {stragglers: [{nodes: [0], factor: 2}]}\n");
  auto ranks = run_json(four + "faults: {stragglers: [{ranks: [0, 1, 2, 3], factor: 2}]}\n");
  CHECK(node["step_time_s"] == ranks["step_time_s"]);
  CHECK(node["step_time_s"].get<double>() > run_json(four)["step_time_s"].get<double>());
  // a node of 1024 GPUs and a job of 2 (this aborted with a corrupted heap)
  const std::string big = "model: gpt3-1.3b\ncluster:\n  platform: {base: dgx-a100-80gb, node: {gpus: 1024}}\n"
                          "  gpus: 2\ntraining: {tp: 2, pp: 1, dp: 1, micro_batch: 1, global_batch: 8}\n";
  auto big_node = run_json(big + "faults: {stragglers: [{nodes: [0], factor: 2}]}\n");
  auto big_ranks = run_json(big + "faults: {stragglers: [{ranks: [0, 1], factor: 2}]}\n");
  CHECK(big_node["step_time_s"] == big_ranks["step_time_s"]);
  // node 1 is not in a job that fills part of node 0
  std::string f = write_temp("n1.yaml", four + "faults: {stragglers: [{nodes: [1], factor: 2}]}\n");
  auto r = run_cli("run " + f);
  CHECK(r.exit_code == 2);
  CHECK_MESSAGE(r.err.find(f + ":4:23: node 1 is not in the job; valid: nodes 0 to 0") == 0, r.err);
}

TEST_CASE("faults: unknown ranks, switches and links, factors out of range and ambiguous entries exit 2")
{
  struct Case {
    std::string yaml, message;
  };
  const std::vector<Case> cases{
      {"  stragglers:\n    - {ranks: [8], factor: 2}\n", ":8:7: rank 8 is not in the job; valid: ranks 0 to 7"},
      {"  stragglers:\n    - {nodes: [1], factor: 2}\n", ":8:7: node 1 is not in the job; valid: nodes 0 to 0"},
      {"  stragglers:\n    - {ranks: [1], factor: 0}\n", ":8:28: 0 is out of range; valid: a number from 1 to 1000"},
      // a straggler faster than its peers would run above the GPU's peak (MFU 2.56 at 0.001)
      {"  stragglers:\n    - {ranks: [1], factor: 0.5}\n", ":8:28: 0.5 is out of range; valid: a number from 1 to 1000"},
      {"  stragglers:\n    - {ranks: [1], nodes: [0], factor: 2}\n", ":8:7: a straggler takes one of ranks, nodes or "
                                                                      "fraction; valid: "},
      {"  stragglers:\n    - {ranks: [1]}\n", ":8:7: missing key 'factor'"},
      {"  stragglers:\n    - {ranks: [1], factor: 2, on: gpu}\n", ":8:35: unknown on 'gpu'"},
      {"  links:\n    - {switch: spine9, down: true}\n", ":8:7: no vertex 'spine9' in this cluster; valid: "},
      {"  links:\n    - {link: nic0-spine0, factor: 0.5}\n", ":8:7: no vertex 'spine0' in this cluster; valid: "},
      {"  links:\n    - {switch: nvswitch0, factor: 1.5}\n", ":8:35: 1.5 is out of range; valid: a number from 1e-06 to 1"},
      {"  links:\n    - {switch: nvswitch0}\n", ":8:7: a link fault needs factor or down; valid: "},
      {"  links:\n    - {switch: nvswitch0, down: true, factor: 0.5}\n", ":8:7: a link is down or at a factor, not both"},
      {"  jitter: {sigma: -1}\n", ":7:19: -1 is out of range"},
  };
  for (const auto& c : cases) {
    std::string f = write_temp("bad.yaml", kDp + "faults:\n" + c.yaml);
    auto r = run_cli("run " + f);
    CHECK_MESSAGE(r.exit_code == 2, c.yaml);
    CHECK_MESSAGE(r.err.find(f + c.message) == 0, r.err);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.out.empty());
  }
  std::string straggling = write_temp("s.yaml", "stragglers:\n  - {ranks: [1], factor: 2}\n");
  auto r = run_cli("collective --platform dgx-a100-80gb --gpus 8 --sizes 1GiB --faults " + straggling);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("a collective runs no kernels") != std::string::npos);
}

TEST_CASE("faults: a sweep reaches into a list item (faults.stragglers.0.factor), and an item that is not there exits 2")
{
  const std::string base = kDp + "faults:\n  stragglers:\n    - {ranks: [3], factor: 1}\n  links:\n"
                                 "    - {switch: nvswitch0, down: false}\n";
  std::string ok = write_temp("sweep.yaml", base + "sweep:\n  axes:\n    faults.stragglers.0.factor: [1, 2]\n");
  auto r = run_cli("run " + ok);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  std::istringstream rows(r.out);
  std::string header, healthy, slow;
  std::getline(rows, header);
  std::getline(rows, healthy);
  std::getline(rows, slow);
  CHECK(healthy.find("0,1,ok,") == 0);
  CHECK(slow.find("1,2,ok,") == 0);
  // the healthy point equals the experiment without faults (factor 1, down: false change nothing)
  auto plain = run_json(kDp);
  auto one = run_json(base);
  CHECK(one["step_time_s"].get<double>() == doctest::Approx(plain["step_time_s"].get<double>()).epsilon(1e-12));
  std::string bad = write_temp("bad.yaml", base + "sweep:\n  axes:\n    faults.stragglers.1.factor: [1, 2]\n");
  auto b = run_cli("run " + bad);
  CHECK(b.exit_code == 2);
  CHECK(b.err.find(bad + ":13:5: axis 'faults.stragglers.1.factor' names item 1 of a list of 1; valid: ") == 0);
}
