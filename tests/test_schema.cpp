// The tables of configuration keys and the registries: one place for each rule, and the
// documents that list them generated from it.
#include "sim/collectives/CollectiveAlgorithm.hpp"
#include "sim/study/Experiment.hpp"
#include "strategies/PipelineSchedule.hpp"
#include "strategies/StepBuilder.hpp"
#include "tests/TestUtil.hpp"
#include "topology/config/Registry.hpp"

#include <doctest/doctest.h>

using namespace clustersim;
using namespace clustersim::test;

namespace {

/// The text between `<!-- NAME:begin -->` and `<!-- NAME:end -->` of a file.
std::string block(const std::string& file, const std::string& name)
{
  std::string text = read_file(source_path(file));
  const std::string begin = "<!-- " + name + ":begin -->\n";
  const std::string end = "<!-- " + name + ":end -->";
  auto a = text.find(begin);
  auto b = text.find(end);
  REQUIRE_MESSAGE(a != std::string::npos, file << " has no " << begin);
  REQUIRE(b != std::string::npos);
  return text.substr(a + begin.size(), b - a - begin.size());
}

struct Dummy {
  static constexpr const char* kRegistryKind = "dummy thing";
  virtual ~Dummy() = default;
};

} // namespace

TEST_CASE("the README's key lists are the tables' (clustersim schema --summary)")
{
  auto r = run_cli("schema --summary");
  REQUIRE(r.exit_code == 0);
  CHECK_MESSAGE(block("README.md", "schema:summary") == r.out,
                "README.md's key lists drifted from the tables: scripts/update-docs.sh regenerates them");
}

TEST_CASE("the README's list of report figures is the metric table's (clustersim schema --metrics)")
{
  auto r = run_cli("schema --metrics");
  REQUIRE(r.exit_code == 0);
  CHECK_MESSAGE(block("README.md", "metrics:list") == r.out,
                "README.md's metric list drifted from the table: scripts/update-docs.sh regenerates it");
}

TEST_CASE("docs/configuration.md is the tables' (clustersim schema --markdown)")
{
  auto r = run_cli("schema --markdown");
  REQUIRE(r.exit_code == 0);
  CHECK_MESSAGE(block("docs/configuration.md", "schema:markdown") == r.out,
                "docs/configuration.md drifted from the tables: scripts/update-docs.sh regenerates it");
}

TEST_CASE("schema names a catalog file with or without .yaml: schema prices is the price table's keys")
{
  auto r = run_cli("schema prices");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == run_cli("schema prices.yaml").out);
  CHECK(r.out.rfind("prices.yaml: the price table (platforms/prices.yaml): every price with its source and date\n",
                    0) == 0);
  for (const char* key : {"amortisation", "energy", "facility", "nodes", "switches", "transceivers", "cables"})
    CHECK(r.out.find(std::string("\n  ") + key + "  (") != std::string::npos);
  auto parts = run_cli("schema switch_price part_price");
  REQUIRE(parts.exit_code == 0);
  CHECK(parts.out.find("  source  (") != std::string::npos);
  CHECK(parts.out.find("  date  (") != std::string::npos);
}

TEST_CASE("schema training prints every training key with its default and doc")
{
  auto r = run_cli("schema training");
  REQUIRE(r.exit_code == 0);
  for (const auto& k : training_section().keys) {
    CAPTURE(k.key);
    CHECK(r.out.find("\n  " + k.key + "  (") != std::string::npos);
    CHECK(r.out.find("default: " + k.default_text() + ")") != std::string::npos);
    CHECK(r.out.find(k.doc) != std::string::npos);
  }
  auto bad = run_cli("schema trainig");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("command line: schema: unknown section 'trainig'; did you mean 'training'?") == 0);
}

TEST_CASE("every section names a key once, and every nested section exists")
{
  std::vector<std::string> names;
  for (const Section* s : all_sections())
    names.push_back(s->name);
  for (const Section* s : all_sections()) {
    CAPTURE(s->name);
    std::vector<std::string> keys = s->key_names();
    std::sort(keys.begin(), keys.end());
    CHECK(std::adjacent_find(keys.begin(), keys.end()) == keys.end());
    for (const auto& k : s->keys) {
      CHECK(!k.doc.empty());
      if (k.type == KeyType::section && !k.nested.empty())
        CHECK_MESSAGE(std::find(names.begin(), names.end(), k.nested) != names.end(), k.key << " -> " << k.nested);
    }
  }
}

TEST_CASE("registries: a name registered twice is an error, an unknown name lists every name with its doc")
{
  auto& r = Registry<Dummy>::instance();
  r.add("one", "the first", [] { return std::make_unique<Dummy>(); });
  CHECK_THROWS_WITH_AS(r.add("one", "again", [] { return std::make_unique<Dummy>(); }),
                       "dummy thing 'one' registered twice", std::logic_error);
  CHECK_THROWS_WITH_AS(r.make("onee"), "unknown dummy thing 'onee'; did you mean 'one'?", std::invalid_argument);
  CHECK(RegistryDirectory::instance().describe("dummy thing") == "one (the first)");
  for (const char* kind : {"pipeline schedule", "data-parallel strategy", "collective algorithm"}) {
    CAPTURE(kind);
    auto entries = RegistryDirectory::instance().entries(kind);
    CHECK(entries.size() >= 3);
    for (const auto& e : entries)
      CHECK(!e.description.empty());
  }
  auto list = run_cli("schema collective-algorithm");
  CHECK(list.exit_code == 0);
  for (const char* name : {"ring", "tree", "hier", "nvls", "direct"})
    CHECK(list.out.find(std::string("\n  ") + name + "  ") != std::string::npos);
}

TEST_CASE("every registered name used in an experiment is resolved when it is parsed")
{
  const std::string base = "name: x\nmodel: gpt3-125m\ncluster: {platform: dgx-a100-80gb, gpus: 8}\ntraining:\n  "
                           "tp: 2\n  dp: 4\n";
  SUBCASE("collective algorithm")
  {
    std::string f = write_temp("algo.yaml", base + "  collective_algo: rnig\n");
    auto r = run_cli("run " + f);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(f + ":7:20: unknown collective algorithm 'rnig'; did you mean 'ring'?; valid: auto, or "
                         "NAME[/PROTOCOL] with NAME one of direct (") == 0);
    CHECK(r.err.find("ring (NCCL ring") != std::string::npos);
    CHECK(r.out.empty());
  }
  SUBCASE("protocol of an algorithm")
  {
    std::string f = write_temp("proto.yaml", base + "  collective_algo: ring/ll129\n");
    auto r = run_cli("run " + f);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(f + ":7:20: unknown protocol of ring 'll129'; did you mean 'll128'?; valid: ll, ll128, simple") ==
          0);
  }
  SUBCASE("pipeline schedule")
  {
    std::string f = write_temp("sched.yaml", base + "  pipeline_schedule: 1f1f\n");
    auto r = run_cli("run " + f);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(f + ":7:22: unknown pipeline schedule '1f1f'; did you mean '1f1b'?; valid:") == 0);
  }
  SUBCASE("an algorithm that cannot run a collective the layout needs")
  {
    std::string f = write_temp("tree.yaml", base + "  sequence_parallel: true\n  collective_algo: tree\n");
    auto r = run_cli("run " + f);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(f + ":8:20: collective_algo 'tree' cannot run reduce_scatter") == 0);
    CHECK(r.err.find("; valid: ") != std::string::npos);
    CHECK(r.out.empty());
  }
}
