// A command's output files are published as a set (sim/app/Output.hpp): a new directory by one
// rename, an existing one under its lock after a journal, so that a crash between two renames
// never leaves a new file beside an old one once the directory is next written or read.
#include "sim/app/Output.hpp"
#include "sim/app/Report.hpp"
#include "sim/study/Metrics.hpp"
#include "tests/TestUtil.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

using namespace clustersim;
using namespace clustersim::test;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> names_in(const std::string& dir)
{
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

void put(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

} // namespace

TEST_CASE("an output set into a directory that does not exist appears whole, by one rename of a staged copy")
{
  const std::string root = temp_dir() + "/new-set";
  fs::create_directories(root);
  OutputSet set;
  set.add(root + "/out/results.csv", "csv\n", "--out");
  set.add(root + "/out/results.json", "{}\n", "--out");
  set.add(root + "/out/figures/step.svg", "<svg/>", "--out");
  set.commit();
  CHECK(names_in(root) == std::vector<std::string>{"out"}); // no staging directory left beside it
  CHECK(names_in(root + "/out") == std::vector<std::string>{"figures", "results.csv", "results.json"});
  CHECK(read_file(root + "/out/figures/step.svg") == "<svg/>");
  // cut short before its one rename, nothing of it is at the target
  OutputSet cut;
  cut.add(root + "/cut/results.csv", "csv\n", "--out");
  cut.add(root + "/cut/results.json", "{}\n", "--out");
  cut.commit(0);
  CHECK_FALSE(fs::exists(root + "/cut"));
}

TEST_CASE("a publish cut short between two renames is finished by the next command that reads or writes the directory")
{
  const std::string dir = temp_dir() + "/cut-short";
  fs::create_directories(dir);
  put(dir + "/results.csv", "old csv\n");
  put(dir + "/results.json", "old json\n");
  OutputSet set;
  set.add(dir + "/results.csv", "new csv\n", "--out");
  set.add(dir + "/results.json", "new json\n", "--out");
  set.commit(1); // a crash after the first rename
  REQUIRE(read_file(dir + "/results.csv") == "new csv\n");
  REQUIRE(read_file(dir + "/results.json") == "old json\n");
  CHECK(fs::exists(dir + "/" + kPublishJournal));
  // a reader (merge, the Slurm resubmission) finishes it before it reads
  recover_outputs(dir);
  CHECK(read_file(dir + "/results.json") == "new json\n");
  CHECK(names_in(dir) == std::vector<std::string>{"results.csv", "results.json"});

  // a writer finishes it before its own files: here a later set that writes another file
  OutputSet again;
  again.add(dir + "/results.csv", "newer csv\n", "--out");
  again.add(dir + "/results.json", "newer json\n", "--out");
  again.commit(1);
  OutputSet report;
  report.add(dir + "/report.txt", "report\n", "--out");
  report.commit();
  CHECK(read_file(dir + "/results.json") == "newer json\n");
  CHECK(names_in(dir) == std::vector<std::string>{"report.txt", "results.csv", "results.json"});
}

TEST_CASE("merge reads a shard whose publish was cut short as the shard's new results")
{
  // a shard written by run --shard, its results.json renamed but not yet its results.csv
  const std::string s = write_temp("shard-sweep.yaml", "name: shard\nmodel: gpt3-125m\n"
                                                       "cluster: {platform: dgx-a100-80gb, gpus: 8}\n"
                                                       "training: {dp: 8, global_batch: 8}\n"
                                                       "sweep: {axes: {training.global_batch: [8, 16]}}\n");
  const std::string out = temp_dir() + "/merge-cut";
  auto r = run_cli("run " + s + " --out " + out + "/shard");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const std::string fresh = read_file(out + "/shard/results.json");
  put(out + "/shard/results.json", "{\"not\": \"results\"}\n"); // what the previous run left
  OutputSet set;
  set.add(out + "/shard/results.json", fresh, "--out");
  set.add(out + "/shard/results.csv", read_file(out + "/shard/results.csv"), "--out");
  // the journal names results.json first: the crash leaves the old file in place
  set.commit(0);
  REQUIRE_FALSE(read_file(out + "/shard/results.json") == fresh);
  auto m = run_cli("merge " + out + "/shard --out " + out + "/merged");
  REQUIRE_MESSAGE(m.exit_code == 0, m.err);
  CHECK(read_file(out + "/shard/results.json") == fresh);
  CHECK(read_file(out + "/merged/results.json").find("\"shard\"") != std::string::npos);
}

TEST_CASE("the text report lists, by key, every step figure of the metric table it does not tell in its own words")
{
  RunMetrics m;
  m.name = "figures";
  m.model = "a model";
  m.platform = "a platform";
  m.gpus = 8;
  m.step_time_s = 1;
  m.params = 7e9;
  m.model_flops_per_step = 1e15;
  const std::string text = format_report(m);
  REQUIRE(text.find("  other figures\n") != std::string::npos);
  std::size_t listed = 0;
  for (const Metric& metric : report_metrics())
    if (metric.part == MetricPart::step && !metric.narrated) {
      CHECK(text.find(std::string("\n    ") + metric.key + " ") != std::string::npos);
      ++listed;
    }
  CHECK(listed >= 1);
  CHECK(text.find("    params                     7e+09 parameters\n") != std::string::npos);
  // a figure told in the report's own words is not listed again
  CHECK(text.find("    step_time_s") == std::string::npos);
}
