// Sweeps, shards and merge, traces and figures: what users take away from a run.
#include "sim/study/PlotSpec.hpp"
#include "sim/study/Sweep.hpp"
#include "tests/TestUtil.hpp"
#include "topology/config/Suggest.hpp"

#include <nlohmann/json.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

using namespace clustersim::test;
using clustersim::check_plot_kind;
using clustersim::join;
using clustersim::plot_kinds;
using clustersim::PlotSpec;

namespace {

const char* kSweep = R"(name: small-sweep
model: gpt3-125m
cluster: {platform: dgx-a100-80gb, gpus: 8}
training:
  micro_batch: 2
  precision: bf16
  flash_attention: true
sweep:
  axes:
    cluster.gpus: {from: 8, to: 32, factor: 2}
    training.tp: [1, 3]
plot:
  - {kind: scaling, series: training.tp, title: "GPT-3 125M"}
  - {kind: breakdown}
  - {kind: mfu}
)";

} // namespace

TEST_CASE("a sweep writes CSV and JSON rows, keeping invalid points with their reason, and figures")
{
  std::string exp = write_temp("sweep.yaml", kSweep);
  std::string out = temp_dir() + "/out";
  auto r = run_cli("run " + exp + " --out " + out + " --jobs 2");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.err.find("sweep: 6/6 points") != std::string::npos);
  auto j = nlohmann::json::parse(read_file(out + "/results.json"));
  REQUIRE(j["rows"].size() == 6);
  int ok = 0, invalid = 0;
  for (const auto& row : j["rows"]) {
    if (row["status"] == "ok") {
      ++ok;
      CHECK(row["step_time_s"].get<double>() > 0);
      CHECK(row["mfu"].get<double>() > 0);
      CHECK(row["time_to_train_days"].get<double>() > 0);
      CHECK(row["cost_usd"].get<double>() > 0);
    } else {
      ++invalid;
      CHECK(row["status"] == "invalid");
      CHECK(row["reason"].get<std::string>().find("does not divide") != std::string::npos);
      CHECK(row["step_time_s"].is_null());
    }
  }
  CHECK(ok == 3);
  CHECK(invalid == 3);
  std::string csv = read_file(out + "/results.csv");
  CHECK(csv.rfind("point,cluster.gpus,training.tp,status,reason,", 0) == 0);
  for (const char* col : {"step_time_s", "mfu", "tokens_per_s", "scaling_efficiency", "exposed_dp_s", "gpu_hours",
                          "energy_mwh", "cost_usd", "peak_bytes"})
    CHECK_MESSAGE(csv.find(col) != std::string::npos, col);
  for (const char* fig : {"scaling", "breakdown", "mfu"}) {
    std::string png = read_file(out + "/" + fig + ".png");
    std::string svg = read_file(out + "/" + fig + ".svg");
    CAPTURE(fig);
    CHECK(png.size() > 10000);
    CHECK(png.compare(1, 3, "PNG") == 0);
    CHECK(svg.find("<svg") != std::string::npos);
    CHECK(svg.size() > 5000);
  }
  CHECK(read_file(out + "/scaling.svg").find("Scaling efficiency (%)") != std::string::npos);
  CHECK(read_file(out + "/breakdown.svg").find("Step time (s)") != std::string::npos);
}

TEST_CASE("shards merged are byte-identical to the unsharded sweep")
{
  std::string exp = write_temp("sweep.yaml", kSweep);
  std::string whole = temp_dir();
  std::string a = temp_dir();
  std::string b = temp_dir();
  std::string merged = temp_dir() + "/merged";
  REQUIRE(run_cli("run " + exp + " --out " + whole).exit_code == 0);
  REQUIRE(run_cli("run " + exp + " --out " + a + " --shard 0/2").exit_code == 0);
  REQUIRE(run_cli("run " + exp + " --out " + b + " --shard 1/2 --jobs 1").exit_code == 0);
  auto m = run_cli("merge " + b + " " + a + " --out " + merged);
  REQUIRE_MESSAGE(m.exit_code == 0, m.err);
  CHECK(read_file(merged + "/results.csv") == read_file(whole + "/results.csv"));
  CHECK(read_file(merged + "/results.json") == read_file(whole + "/results.json"));
  CHECK(read_file(a + "/results.csv") != read_file(whole + "/results.csv"));
}

TEST_CASE("merge_shards: rows in point order, errors at the shard that breaks the sweep")
{
  using clustersim::ShardResult;
  using clustersim::SweepResult;
  auto row = [](std::size_t p, const char* status) {
    return nlohmann::ordered_json{{"point", p}, {"status", status}, {"step_time_s", 1.0 + static_cast<double>(p)}};
  };
  auto shard = [](std::vector<nlohmann::ordered_json> rows, std::size_t points = 4, const char* name = "s") {
    SweepResult r;
    r.name = name;
    r.points = points;
    r.rows = std::move(rows);
    return r;
  };
  const clustersim::SourceLocation at{"command line: dirs", 0, 0};
  const SweepResult m = clustersim::merge_shards({{"a/results.json", shard({row(1, "ok"), row(3, "error")})},
                                                  {"b/results.json", shard({row(0, "ok"), row(2, "oom")})}},
                                                 at);
  CHECK(m.name == "s");
  CHECK(m.points == 4);
  REQUIRE(m.rows.size() == 4);
  for (std::size_t p = 0; p < 4; ++p)
    CHECK(m.rows[p]["point"] == p);
  CHECK(m.errors == 1);
  auto error = [&](const std::vector<ShardResult>& shards) {
    try {
      clustersim::merge_shards(shards, at);
    } catch (const clustersim::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::vector<ShardResult> twice{{"a", shard({row(0, "ok"), row(1, "ok")})}, {"b", shard({row(1, "ok")})}};
  CHECK(error(twice).rfind("b: point 1 appears in two shards", 0) == 0);
  const std::vector<ShardResult> other{{"a", shard({row(0, "ok")})}, {"b", shard({row(1, "ok")}, 4, "t")}};
  CHECK(error(other).rfind("b: rows of experiment 't', not 's'", 0) == 0);
  const std::vector<ShardResult> sizes{{"a", shard({row(0, "ok")})}, {"b", shard({row(1, "ok")}, 6)}};
  CHECK(error(sizes).rfind("b: rows of a sweep of 6 points, and a of 4", 0) == 0);
  const std::vector<ShardResult> half{{"a", shard({row(0, "ok"), row(2, "ok")})}};
  CHECK(error(half).rfind("command line: dirs: 2 of the sweep's 4 points; no row for point 1, 3", 0) == 0);
}

TEST_CASE("sweep and merge reject bad input with exit 2")
{
  std::string typo = write_temp(
      "typo.yaml", std::string(kSweep).replace(std::string(kSweep).find("training.tp:"), 12, "training.tpp:"));
  auto r = run_cli("run " + typo + " --out " + temp_dir() + "/x");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unknown axis key 'tpp' in training; did you mean 'tp'?") != std::string::npos);
  std::string exp = write_temp("sweep.yaml", kSweep);
  auto shard = run_cli("run " + exp + " --shard 2/2");
  CHECK(shard.exit_code == 2);
  CHECK(shard.err.find("command line: --shard: '2/2' is not a shard") == 0);
  auto merge = run_cli("merge " + temp_dir() + " --out " + temp_dir() + "/m");
  CHECK(merge.exit_code == 2);
  CHECK(merge.err.find("results.json: cannot open file") != std::string::npos);
  std::string bad_range =
      write_temp("range.yaml", std::string(kSweep).replace(std::string(kSweep).find("factor: 2"), 9, "factor: 0"));
  auto range = run_cli("run " + bad_range);
  CHECK(range.exit_code == 2);
}

TEST_CASE("the trace follows the Chrome trace event format")
{
  std::string exp = write_temp("exp.yaml", R"(name: traced
model: gpt3-125m
cluster: {platform: dgx-a100-80gb, gpus: 16}
training: {tp: 2, pp: 2, dp: 4, micro_batch: 1, global_batch: 16, sequence_parallel: true}
)");
  std::string trace = temp_dir() + "/t.json";
  auto r = run_cli("run " + exp + " --trace " + trace);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto j = nlohmann::json::parse(read_file(trace));
  REQUIRE(j["traceEvents"].is_array());
  std::map<std::pair<int, int>, double> last_end;
  std::map<std::string, int> categories;
  int complete = 0;
  std::map<long long, double> flow_start, flow_end; // transfers: id -> the arrow's two ends
  for (const auto& e : j["traceEvents"]) {
    for (const char* key : {"name", "ph", "pid", "tid"})
      REQUIRE(e.contains(key));
    std::string ph = e["ph"];
    CHECK((ph == "X" || ph == "M" || ph == "s" || ph == "f"));
    if (ph == "s" || ph == "f") {
      CHECK(e["cat"] == "pp_comm");
      (ph == "s" ? flow_start : flow_end)[e["id"].get<long long>()] = e["ts"].get<double>();
      if (ph == "f")
        CHECK(e["bp"] == "e"); // bound to the receive that ends there
      continue;
    }
    if (ph != "X")
      continue;
    ++complete;
    REQUIRE(e.contains("ts"));
    REQUIRE(e.contains("dur"));
    double ts = e["ts"];
    double dur = e["dur"];
    CHECK(dur >= 0);
    auto key = std::make_pair(e["pid"].get<int>(), e["tid"].get<int>());
    // one track's spans are in order and never overlap (so they nest trivially)
    if (last_end.count(key))
      CHECK(ts >= last_end[key] - 1e-6);
    last_end[key] = ts + dur;
    ++categories[e.value("cat", "")];
    if (e.value("cat", "") == "forward") {
      CHECK(e["args"].contains("layer"));
      CHECK(e["args"].contains("micro_batch"));
    }
  }
  CHECK(complete > 100);
  for (const char* cat : {"forward", "backward", "tp_comm", "pp_comm", "dp_comm", "optimizer", "idle"})
    CHECK_MESSAGE(categories[cat] > 0, cat);
  CHECK(j["metadata"]["step_time_s"].get<double>() > 0);
  // every pipeline transfer is an arrow from its send's start to its receive's end
  CHECK(flow_start.size() == 2 * 2 * 4 * 4); // 2 directions x 4 micro-batches per replica x 4 replicas x tp 2
  REQUIRE(flow_start.size() == flow_end.size());
  for (const auto& [id, ts] : flow_start) {
    REQUIRE(flow_end.count(id));
    CHECK(flow_end[id] >= ts);
  }
}

TEST_CASE("--trace-ranks and --trace-streams keep a trace to the GPUs and streams asked for")
{
  // 64 GPUs, tp 8 pp 2 dp 4: the whole trace, then the first node's 8 GPUs, then their compute
  // and pipeline streams only
  std::string exp = write_temp("exp64.yaml", R"(name: traced64
model: gpt3-1.3b
cluster: {platform: dgx-a100-80gb, gpus: 64}
training: {tp: 8, pp: 2, dp: 4, micro_batch: 1, global_batch: 32, sequence_parallel: true}
)");
  const std::string all = temp_dir() + "/all.json", eight = temp_dir() + "/eight.json",
                    some = temp_dir() + "/some.json";
  REQUIRE(run_cli("run " + exp + " --full --trace " + all).exit_code == 0);
  auto r = run_cli("run " + exp + " --full --trace " + eight + " --trace-ranks 0-3,4,5-7");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto threads = [](const std::string& file) {
    std::set<std::string> names;
    const auto trace = nlohmann::json::parse(read_file(file));
    for (const auto& e : trace["traceEvents"])
      if (e.value("name", std::string()) == "thread_name")
        names.insert(e["args"]["name"].get<std::string>());
    return names;
  };
  const auto every = threads(all), first = threads(eight);
  CHECK(every.count("gpu63 compute") == 1);
  CHECK(first.count("gpu7 compute") == 1);
  CHECK(first.count("gpu8 compute") == 0);
  for (const std::string& t : first) // "gpuN stream"
    CHECK_MESSAGE(std::stoi(t.substr(3, t.find(' ') - 3)) < 8, t);
  CHECK(first.size() * 8 == every.size()); // 8 of 64 GPUs, every stream of each
  const std::size_t whole = read_file(all).size(), part = read_file(eight).size();
  MESSAGE("64-GPU trace " << whole << " bytes, 8 GPUs " << part << " bytes");
  CHECK(part * 6 < whole);
  // the first node holds stage 0 only: its transfers go to stage 1, outside the filter, so no arrow
  CHECK(read_file(eight).find("\"ph\":\"s\"") == std::string::npos);
  r = run_cli("run " + exp + " --full --trace " + some + " --trace-ranks 0,32 --trace-streams compute,pp");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto two = threads(some);
  CHECK(two == std::set<std::string>{"gpu0 compute", "gpu0 pp_recv_bwd", "gpu0 pp_send_fwd", "gpu32 compute",
                                     "gpu32 pp_recv_fwd", "gpu32 pp_send_bwd"});
  CHECK(read_file(some).find("\"ph\":\"s\"") != std::string::npos); // gpu0 -> gpu32 is a stage's hop
  // micro-batches: only their tasks (the optimizer and the gradient reductions belong to none)
  const std::string firsts = temp_dir() + "/firsts.json";
  r = run_cli("run " + exp + " --full --trace " + firsts + " --trace-ranks 0-7 --trace-micro-batches 0-1");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto mb = nlohmann::json::parse(read_file(firsts));
  std::set<int> seen;
  for (const auto& e : mb["traceEvents"])
    if (e.value("ph", std::string()) == "X" && e.contains("args"))
      seen.insert(e["args"]["micro_batch"].get<int>());
  CHECK(seen == std::set<int>{0, 1});
  MESSAGE("8 GPUs, micro-batches 0-1: " << read_file(firsts).size() << " bytes");
  CHECK(read_file(firsts).size() * 2 < part);
}

TEST_CASE("collective --plot draws bus bandwidth against size, a line per GPU count, in GPU-count order")
{
  const std::string out = temp_dir();
  auto r = run_cli("collective --op all_reduce --platform dgx-a100-80gb --gpus 8,16 --sizes 1MiB:16MiB --plot " + out);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(read_file(out + "/collective-all_reduce.png").size() > 10000);
  const std::string svg = read_file(out + "/collective-all_reduce.svg");
  CHECK(svg.find("bus bandwidth (GB/s)") != std::string::npos);
  CHECK(svg.find("size per rank (bytes)") != std::string::npos);
  CHECK(svg.find("all_reduce bus bandwidth on dgx-a100-80gb") != std::string::npos);
  CHECK(svg.find("MiB") != std::string::npos); // sizes read as nccl-tests users write them
  const auto eight = svg.find("gpus 8<"), sixteen = svg.find("gpus 16<");
  REQUIRE(eight != std::string::npos);
  REQUIRE(sixteen != std::string::npos);
  CHECK(eight < sixteen);
  CHECK(r.out.find("busbw(GB/s)") != std::string::npos); // the table is printed as without --plot
}

TEST_CASE("a figure without a title is titled after its experiment, axes say their units, and bars carry their values")
{
  std::string exp = write_temp("titled.yaml", R"(name: titled-sweep
model: gpt3-125m
cluster: {platform: dgx-a100-80gb, gpus: 8}
training: {micro_batch: 2, precision: bf16, flash_attention: true}
sweep:
  axes:
    cluster.gpus: [8, 16]
plot:
  - {kind: breakdown}
  - {kind: bars, y: tokens_per_s_per_gpu, file: throughput}
  - {kind: line, x: gpus, y: time_to_train_days, file: days}
)");
  std::string out = temp_dir();
  auto r = run_cli("run " + exp + " --out " + out);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const std::string breakdown = read_file(out + "/breakdown.svg"), bars = read_file(out + "/throughput.svg"),
                    days = read_file(out + "/days.svg");
  CHECK(breakdown.find("titled-sweep: Step time breakdown") != std::string::npos);
  CHECK(bars.find("titled-sweep: tokens/s per GPU") != std::string::npos);
  CHECK(days.find("titled-sweep: time to train (days) against GPUs") != std::string::npos);
  CHECK(days.find(">time to train (days)<") != std::string::npos); // the y axis, with its unit
  CHECK(bars.find(">sweep point<") != std::string::npos);           // not "layout"
  // each bar's value above it, as the results have it (3 significant digits)
  std::istringstream csv(read_file(out + "/results.csv"));
  auto cells = [](const std::string& line) {
    std::vector<std::string> c;
    std::stringstream in(line);
    for (std::string cell; std::getline(in, cell, ',');)
      c.push_back(cell);
    return c;
  };
  std::string line;
  REQUIRE(std::getline(csv, line));
  const auto header = cells(line);
  const auto col = static_cast<std::size_t>(
      std::find(header.begin(), header.end(), "tokens_per_s_per_gpu") - header.begin());
  REQUIRE(col < header.size());
  int rows = 0;
  while (std::getline(csv, line)) {
    const auto row = cells(line);
    REQUIRE(row.size() > col);
    char v[32];
    std::snprintf(v, sizeof v, ">%.3g<", std::atof(row[col].c_str()));
    CHECK_MESSAGE(bars.find(v) != std::string::npos, v);
    ++rows;
  }
  CHECK(rows == 2);
}

TEST_CASE("clustersim plot draws from a results.csv and rejects unknown columns")
{
  std::string exp = write_temp("sweep.yaml", kSweep);
  std::string out = temp_dir();
  REQUIRE(run_cli("run " + exp + " --out " + out).exit_code == 0);
  auto r = run_cli("plot " + out + "/results.csv --kind line --x gpus --y tokens_per_s --title tokens");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(read_file(out + "/line.png").size() > 10000);
  auto bad = run_cli("plot " + out + "/results.csv --kind line --x gpus --y tokens_per_sec");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("unknown column 'tokens_per_sec'; did you mean 'tokens_per_s'?") != std::string::npos);
  auto bars = run_cli("plot " + out + "/results.csv --kind bars --y step_time_s --labels tp gpus --log-y --out " + out +
                      "/bars");
  REQUIRE_MESSAGE(bars.exit_code == 0, bars.err);
  CHECK(read_file(out + "/bars/bars.svg").find("tp1 gpus16") != std::string::npos);
  auto bad_label =
      run_cli("plot " + out + "/results.csv --kind bars --y step_time_s --labels tpp --out " + out + "/b2");
  CHECK(bad_label.exit_code == 2);
  CHECK(bad_label.err.find("unknown column 'tpp'; did you mean 'tp'?") != std::string::npos);
  CHECK(entries_in(out + "/b2") == 0);
}

TEST_CASE("plot kinds and the columns each needs are one rule for the plot section and the plot command")
{
  for (const std::string& kind : plot_kinds()) {
    PlotSpec p;
    p.kind = kind;
    p.x = "gpus";
    p.y = "step_time_s";
    CHECK_MESSAGE(check_plot_kind(p, false).what.empty(), kind);
  }
  PlotSpec line;
  line.kind = "line";
  CHECK(check_plot_kind(line, false).valid == "x: COLUMN, y: COLUMN");
  CHECK(check_plot_kind(line, true).valid == "--x COLUMN --y COLUMN");
  const std::string csv = write_temp("results.csv", "gpus,step_time_s\n8,1.0\n");
  auto pie = run_cli("plot " + csv + " --kind pie");
  CHECK(pie.exit_code == 2);
  CHECK(pie.err.find("unknown kind 'pie'") != std::string::npos);
  CHECK(pie.err.find("valid: " + join(plot_kinds())) != std::string::npos); // every registered kind, no other
  auto bars = run_cli("plot " + csv + " --kind bars");
  CHECK(bars.exit_code == 2);
  CHECK(bars.err.find("a bar plot needs a y column; valid: --y COLUMN") != std::string::npos);
  std::string doc = kSweep;
  doc.replace(doc.find("{kind: breakdown}"), 17, "{kind: line, x: gpus}");
  auto section = run_cli("run " + write_temp("lineplot.yaml", doc) + " --out " + temp_dir() + "/never");
  CHECK(section.exit_code == 2);
  CHECK(section.err.find("a line plot needs x and y columns; valid: x: COLUMN, y: COLUMN") != std::string::npos);
}

TEST_CASE("a malformed plot section is reported before the sweep runs, and nothing is written")
{
  std::string doc = kSweep;
  doc.replace(doc.find("{kind: breakdown}"), 17, "{kind: breakdown, labels: model}");
  std::string exp = write_temp("badplot.yaml", doc);
  std::string out = temp_dir() + "/never";
  auto r = run_cli("run " + exp + " --out " + out);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("badplot.yaml:14:31: expected a list") != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.find("sweep:") == std::string::npos); // no progress line: nothing ran
  CHECK(entries_in(out) == 0);
}
