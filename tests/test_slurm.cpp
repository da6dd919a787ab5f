// run --slurm without a Slurm cluster: the scripts a dry run prints, the flags it refuses, and
// the messages where Slurm is missing. tests/slurm/test_slurm.sh runs it on a real Slurm.
#include "sim/app/Slurm.hpp"
#include "tests/TestUtil.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <sys/stat.h>

using namespace clustersim;
using namespace clustersim::test;

namespace {

const char* kSweep = R"(name: slurm-sweep
model: gpt3-125m
cluster: {platform: dgx-a100-80gb, gpus: 8}
training: {micro_batch: 2, precision: bf16, flash_attention: true}
sweep:
  axes:
    cluster.gpus: [8, 16, 32, 64]
    training.tp: [1, 2]
)";

bool exists(const std::string& p)
{
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

} // namespace

TEST_CASE("slurm: array lists compress consecutive shards and time limits follow Slurm's formats")
{
  CHECK(array_ranges({0, 1, 2, 3}) == "0-3");
  CHECK(array_ranges({2}) == "2");
  CHECK(array_ranges({0, 2, 3, 4, 7}) == "0,2-4,7");
  for (const char* ok : {"30", "30:00", "2:00:00", "1-0", "1-12:30", "2-00:00:00"})
    CHECK_MESSAGE(is_slurm_time(ok), ok);
  for (const char* bad : {"", "1:99", "1h", "-1", "1-2-3", "1:00:00:00", "x"})
    CHECK_MESSAGE(!is_slurm_time(bad), bad);
}

TEST_CASE("slurm: a dry run prints an array of shards, a merge after them and a failure note, and writes nothing")
{
  std::string exp = write_temp("sweep.yaml", kSweep);
  std::string out = temp_dir() + "/out";
  auto r = run_cli("run " + exp + " --out " + out + " --slurm --array-size 4 --partition gpu --time 2:00:00 "
                   "--cpus-per-task 2 --dry-run");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(!exists(out));
  CHECK(r.out.find("# ---- " + out + "/slurm/array.sh\n#!/bin/sh\n") == 0);
  for (const char* line : {"#SBATCH --array=0-3\n", "#SBATCH --partition=gpu\n", "#SBATCH --time=2:00:00\n",
                           "#SBATCH --cpus-per-task=2\n", "--shard \"$i/4\"", "/shards'/\"$i\" --jobs 2\n",
                           "#SBATCH --output=" /* logs under DIR/slurm */})
    CHECK_MESSAGE(r.out.find(line) != std::string::npos, line);
  CHECK(r.out.find(out + "/slurm/shard-%a.log") != std::string::npos);
  // the merge names every shard, in order, and writes into DIR
  CHECK(r.out.find(" merge '" + out + "/shards/0' '" + out + "/shards/1' '" + out + "/shards/2' '" + out +
                   "/shards/3' --out '" + out + "'\n") != std::string::npos);
  CHECK(r.out.find("sbatch --parsable --dependency=afterok:ARRAY --kill-on-invalid-dep=yes '" + out +
                   "/slurm/merge.sh'") != std::string::npos);
  CHECK(r.out.find("--dependency=afternotok:ARRAY") != std::string::npos);
  // more tasks than points: one point per shard
  auto wide = run_cli("run " + exp + " --out " + out + " --slurm --array-size 64 --dry-run");
  REQUIRE(wide.exit_code == 0);
  CHECK(wide.out.find("#SBATCH --array=0-7\n") != std::string::npos);
  auto byte = run_cli("run " + exp + " --out " + out + " --slurm --array-size 4 --partition gpu --time 2:00:00 "
                      "--cpus-per-task 2 --dry-run");
  CHECK(byte.out == r.out);
}

TEST_CASE("slurm: --account, --qos and --sbatch-arg reach every script, and the options the scripts own are refused")
{
  std::string exp = write_temp("sweep.yaml", kSweep);
  std::string out = temp_dir() + "/out";
  auto r = run_cli("run " + exp + " --out " + out + " --slurm --array-size 2 --account proj_42 --qos high "
                   "--sbatch-arg=--mem=16G --sbatch-arg=--exclusive --dry-run");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(!exists(out));
  for (const char* line : {"#SBATCH --account=proj_42\n", "#SBATCH --qos=high\n", "#SBATCH --mem=16G\n",
                           "#SBATCH --exclusive\n"}) {
    CAPTURE(line);
    std::size_t n = 0;
    for (auto at = r.out.find(line); at != std::string::npos; at = r.out.find(line, at + 1))
      ++n;
    CHECK(n == 3); // the array, the merge and the failure note
  }
  const std::vector<std::pair<std::string, std::string>> bad{
      {"--account 'a b'", "command line: --account: 'a b' is not an account name; valid: letters, digits, '_', '.' "
                          "and '-'\n"},
      {"--qos 'x;y'", "command line: --qos: 'x;y' is not a QOS name; valid: letters, digits, '_', '.' and '-'\n"},
      {"--sbatch-arg='--mem 16G'", "command line: --sbatch-arg: '--mem 16G' is not one sbatch option; valid: --NAME "
                                   "or --NAME=VALUE (letters, digits and _.:,/@%+=- in the value), e.g. --mem=16G\n"},
      {"--sbatch-arg=--array=0-9", "command line: --sbatch-arg: '--array=0-9' is an option the scripts set "
                                   "themselves; valid: --partition, --time, --account, --qos and --cpus-per-task for "
                                   "those; --sbatch-arg for the others (--mem, --exclusive, --constraint, ...)\n"},
  };
  for (const auto& [args, message] : bad) {
    auto b = run_cli("run " + exp + " --out " + out + " --slurm --dry-run " + args);
    CHECK_MESSAGE(b.exit_code == 2, args);
    CHECK(b.err == message);
    CHECK(b.out.empty());
  }
  auto plain = run_cli("run " + exp + " --out " + out + " --qos high");
  CHECK(plain.exit_code == 2);
  CHECK(plain.err == "command line: --qos: --qos applies to --slurm submissions; valid: --slurm --out DIR --qos ...\n");
}

TEST_CASE("slurm: bad flags exit 2 with one line and nothing written")
{
  std::string exp = write_temp("sweep.yaml", kSweep);
  std::string out = temp_dir() + "/out";
  struct Case {
    std::string args, message;
  };
  const std::vector<Case> cases{
      {"--out " + out + " --slurm --array-size 0", "command line: --array-size: 0 tasks; valid: 1 to 1000000\n"},
      {"--out " + out + " --slurm --array-size -3", "command line: --array-size: -3 tasks; valid: 1 to 1000000\n"},
      {"--slurm", "command line: --slurm: the shards and the merged results need a directory; valid: --slurm with "
                  "--out DIR\n"},
      {"--out " + out + " --slurm --cpus-per-task 0", "command line: --cpus-per-task: 0 CPUs; valid: 1 to 4096\n"},
      {"--out " + out + " --slurm --partition 'a b'",
       "command line: --partition: 'a b' is not a partition name; valid: letters, digits, '_', '.' and '-'\n"},
      {"--out " + out + " --dry-run", "command line: --dry-run: --dry-run applies to --slurm submissions; valid: "
                                      "--slurm --out DIR --dry-run ...\n"},
      {"--out " + out + " --array-size 4", "command line: --array-size: --array-size applies to --slurm "
                                           "submissions; valid: --slurm --out DIR --array-size ...\n"},
      {"--out " + out + " --slurm --shard 0/2", "command line: --shard: --slurm assigns the shards itself; valid: "
                                                "--slurm or --shard, not both\n"},
  };
  for (const auto& c : cases) {
    auto r = run_cli("run " + exp + " " + c.args);
    CHECK_MESSAGE(r.exit_code == 2, c.args);
    CHECK(r.err == c.message);
    CHECK(r.out.empty());
    CHECK(!exists(out));
  }
  std::string plain = write_temp("plain.yaml", "model: gpt3-125m\ncluster: {platform: dgx-a100-80gb, gpus: 8}\n");
  auto r = run_cli("run " + plain + " --out " + out + " --slurm --dry-run");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("command line: --slurm: '" + plain + "' has no sweep to spread over tasks") == 0);
}

TEST_CASE("slurm: without sbatch on PATH the user is told, and nothing is submitted")
{
  std::string exp = write_temp("sweep.yaml", kSweep);
  std::string out = temp_dir() + "/out";
  const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  // a PATH with the test helpers' mkdir and nothing of Slurm
  std::string bin = temp_dir();
  REQUIRE(std::system(("ln -s /bin/mkdir '" + bin + "/mkdir'").c_str()) == 0);
  ::setenv("PATH", bin.c_str(), 1);
  auto r = run_cli("run " + exp + " --out " + out + " --slurm --partition gpu");
  auto s = run_cli("run " + exp + " --out " + out + " --slurm");
  ::setenv("PATH", path.c_str(), 1);
  CHECK(r.exit_code == 2);
  CHECK(r.err == "command line: --slurm: sinfo is not on PATH: Slurm's client commands are missing; valid: a "
                 "machine with sbatch, squeue and sinfo (or --dry-run)\n");
  CHECK(s.exit_code == 2);
  CHECK(s.err.find("command line: --slurm: sinfo is not on PATH") == 0);
  CHECK(!exists(out));
}

TEST_CASE("slurm: a client that reaches no controller, or an sbatch that refuses the job, exit 2 and leave nothing")
{
  std::string exp = write_temp("sweep.yaml", kSweep);
  std::string out = temp_dir() + "/out";
  const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  auto fake = [](const std::string& dir, const std::string& name, const std::string& body) {
    std::string f = dir + "/" + name;
    REQUIRE(std::system(("printf '#!/bin/sh\n" + body + "\n' > '" + f + "' && chmod +x '" + f + "'").c_str()) == 0);
  };
  // Slurm's clients installed without a configuration (this was "internal error", exit 1, with
  // the scripts written)
  std::string none = temp_dir();
  fake(none, "sinfo", "echo \"sinfo: fatal: Could not establish a configuration source\" >&2; exit 1");
  fake(none, "sbatch", "echo \"sbatch: fatal: Could not establish a configuration source\" >&2; exit 1");
  ::setenv("PATH", (none + ":" + path).c_str(), 1);
  auto r = run_cli("run " + exp + " --out " + out + " --slurm");
  // a controller that lists partitions but refuses the job
  std::string refuse = temp_dir();
  fake(refuse, "sinfo", "echo gpu");
  fake(refuse, "squeue", "exit 0");
  fake(refuse, "sbatch", "echo \"sbatch: error: Invalid account\" >&2; exit 1");
  ::setenv("PATH", (refuse + ":" + path).c_str(), 1);
  auto s = run_cli("run " + exp + " --out " + out + " --slurm");
  ::setenv("PATH", path.c_str(), 1);
  CHECK(r.exit_code == 2);
  CHECK(r.err == "command line: --slurm: Slurm cannot be reached: sinfo: sinfo: fatal: Could not establish a "
                 "configuration source; valid: a machine whose Slurm client reaches a controller (or --dry-run to "
                 "print the scripts)\n");
  CHECK(s.exit_code == 2);
  CHECK(s.err.find("command line: --slurm: sbatch " + out + "/slurm/array.sh failed: sbatch: error: Invalid account;") == 0);
  CHECK(!exists(out));
}

TEST_CASE("slurm: paths are quoted in the scripts, and one with a newline is refused before anything is written")
{
  std::string exp = write_temp("sweep.yaml", kSweep);
  // a newline ended the #SBATCH block and ran the rest as a command in the job
  auto r = run_cli("run " + exp + " --out \"$(printf '" + temp_dir() + "/d\\ntouch INJECTED')\" --slurm --dry-run");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("command line: --out: the path '") == 0);
  CHECK(r.err.find("has a control character (a newline, a tab, ...), which a Slurm script cannot hold") !=
        std::string::npos);
  CHECK(r.out.empty());
  // a blank: sbatch splits an #SBATCH line's value at it unless it is in double quotes
  std::string spaced = temp_dir() + "/d x";
  auto d = run_cli("run " + exp + " --out '" + spaced + "' --slurm --dry-run");
  CHECK(d.exit_code == 0);
  CHECK(d.out.find("#SBATCH --output=\"" + spaced + "/slurm/shard-%a.log\"\n") != std::string::npos);
  CHECK(d.out.find("--out '" + spaced + "/shards'/\"$i\"") != std::string::npos);
  CHECK(!exists(spaced));
}
