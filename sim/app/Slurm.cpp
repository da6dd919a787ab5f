#include "sim/app/Slurm.hpp"
#include "sim/app/Output.hpp"
#include "topology/config/ConfigError.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <regex>
#include <tuple>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace clustersim {
namespace {

constexpr int kDefaultShards = 100;
constexpr int kMaxShards = 1000000;

/// A string field of a manifest, or `fallback` where it is missing or not a string.
std::string text_field(const Json& j, const char* key, const std::string& fallback)
{
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? *it->get_ptr<const std::string*>() : fallback;
}

/// A whole-number field of a manifest (clamped to int), or `fallback` where it is missing or not one.
int int_field(const Json& j, const char* key, int fallback)
{
  auto it = j.find(key);
  if (it == j.end())
    return fallback;
  double v = fallback;
  if (const auto* u = it->get_ptr<const Json::number_unsigned_t*>())
    v = static_cast<double>(*u);
  else if (const auto* i = it->get_ptr<const Json::number_integer_t*>())
    v = static_cast<double>(*i);
  return static_cast<int>(std::clamp(v, static_cast<double>(std::numeric_limits<int>::min()),
                                     static_cast<double>(std::numeric_limits<int>::max())));
}

struct Process {
  bool started = false;
  int status = -1; ///< exit code; -1 when it did not exit normally
  std::string out;
  std::string err;
};

std::string drain(int fd)
{
  std::string s;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0)
      s.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return s;
}

/// Runs argv (found on PATH) and returns its exit code and outputs. Small outputs only (the
/// Slurm client commands): stdout is read to the end before stderr.
Process run_process(const std::vector<std::string>& argv)
{
  Process p;
  int out[2], err[2], exec_failed[2];
  if (::pipe(out) != 0 || ::pipe(err) != 0 || ::pipe(exec_failed) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  ::fcntl(exec_failed[1], F_SETFD, FD_CLOEXEC);
  pid_t pid = ::fork();
  if (pid < 0)
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::close(out[0]);
    ::close(err[0]);
    ::close(exec_failed[0]);
    std::vector<char*> args;
    for (const auto& a : argv)
      args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    char one = 1;
    (void)!::write(exec_failed[1], &one, 1);
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  ::close(exec_failed[1]);
  p.started = drain(exec_failed[0]).empty();
  p.out = drain(out[0]);
  p.err = drain(err[0]);
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  p.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return p;
}

std::string one_line(std::string s)
{
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' '))
    s.pop_back();
  auto nl = s.rfind('\n');
  return nl == std::string::npos ? s : s.substr(nl + 1);
}

bool exists(const std::string& path)
{
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::string read_text(const std::string& path)
{
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string absolute(const std::string& path)
{
  if (!path.empty() && path[0] == '/')
    return path;
  char cwd[4096];
  if (!::getcwd(cwd, sizeof cwd))
    throw std::runtime_error(std::string("getcwd: ") + std::strerror(errno));
  std::string p = path;
  while (p.rfind("./", 0) == 0)
    p = p.substr(2);
  return std::string(cwd) + "/" + p;
}

std::string self_executable()
{
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0)
    throw std::runtime_error("cannot find the clustersim executable (/proc/self/exe)");
  return std::string(buf, static_cast<std::size_t>(n));
}

/// Single-quoted for sh.
std::string quote(const std::string& s)
{
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// A path as an #SBATCH line's value: as is, or double-quoted when it holds a blank or a
/// character the line's parser would split at (sbatch reads "..." as one argument).
std::string sbatch_value(const std::string& s)
{
  return s.find_first_of(" \t'\\$`;&|<>()*?[]{}#~") == std::string::npos ? s : "\"" + s + "\"";
}

/// Refuses a path that no script can hold: a newline would end the #SBATCH block and run the
/// rest as a command in the job; a double quote cannot be quoted in an #SBATCH line.
void check_script_path(const std::string& path, const std::string& flag)
{
  for (char c : path)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '"')
      throw ConfigError(command_line(flag),
                        "the path '" + path + "' has a " +
                            (c == '"' ? std::string("double quote") : "control character (a newline, a tab, ...)") +
                            ", which a Slurm script cannot hold",
                        "a path of printable characters without '\"'");
}

std::uint64_t content_hash(const std::string& s)
{
  std::uint64_t h = 1469598103934665603ULL; // FNV-1a
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

/// What the command-line flags say, checked before anything is written or submitted.
void check_flags(const SlurmOptions& o)
{
  if (o.out.empty())
    throw ConfigError(command_line("--slurm"), "the shards and the merged results need a directory",
                      "--slurm with --out DIR");
  if (o.array_size_given && o.array_size < 1)
    throw ConfigError(command_line("--array-size"), std::to_string(o.array_size) + " tasks", "1 to 1000000");
  if (o.cpus_per_task < 1 || o.cpus_per_task > 4096)
    throw ConfigError(command_line("--cpus-per-task"), std::to_string(o.cpus_per_task) + " CPUs", "1 to 4096");
  if (!o.time.empty() && !is_slurm_time(o.time))
    throw ConfigError(command_line("--time"), "'" + o.time + "' is not a Slurm time limit",
                      "MINUTES, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS");
  static const std::regex name("[A-Za-z0-9_.-]+");
  for (const auto& [flag, value, what] : {std::tuple<const char*, const std::string&, const char*>{
                                              "--partition", o.partition, "a partition name"},
                                          {"--account", o.account, "an account name"},
                                          {"--qos", o.qos, "a QOS name"}})
    if (!value.empty() && !std::regex_match(value, name))
      throw ConfigError(command_line(flag), "'" + value + "' is not " + what, "letters, digits, '_', '.' and '-'");
  // one sbatch option per line, written as sbatch reads it; not the ones the scripts set themselves
  static const std::regex option("--[A-Za-z][A-Za-z0-9-]*(=[A-Za-z0-9_.:,/@%+=-]+)?");
  static const std::vector<std::string> ours{"array", "job-name", "chdir", "output", "ntasks", "cpus-per-task",
                                              "dependency", "parsable", "partition", "time", "account", "qos"};
  for (const auto& a : o.sbatch_args) {
    if (!std::regex_match(a, option))
      throw ConfigError(command_line("--sbatch-arg"), "'" + a + "' is not one sbatch option",
                        "--NAME or --NAME=VALUE (letters, digits and _.:,/@%+=- in the value), e.g. --mem=16G");
    const std::string key = a.substr(2, a.find('=') == std::string::npos ? std::string::npos : a.find('=') - 2);
    if (std::find(ours.begin(), ours.end(), key) != ours.end())
      throw ConfigError(command_line("--sbatch-arg"), "'" + a + "' is an option the scripts set themselves",
                        "--partition, --time, --account, --qos and --cpus-per-task for those; --sbatch-arg for "
                        "the others (--mem, --exclusive, --constraint, ...)");
  }
}

/// The partition is one Slurm knows (sinfo lists them).
/// Asks Slurm for its partitions: a machine whose client reaches no controller is refused here,
/// before a script is written; with `partition` given, it must be one of them.
void check_partition(const std::string& partition)
{
  Process p = run_process({"sinfo", "-h", "-o", "%R"});
  if (!p.started)
    throw ConfigError(command_line("--slurm"), "sinfo is not on PATH: Slurm's client commands are missing",
                      "a machine with sbatch, squeue and sinfo (or --dry-run)");
  if (p.status != 0)
    throw ConfigError(command_line("--slurm"), "Slurm cannot be reached: sinfo: " + one_line(p.err.empty() ? p.out : p.err),
                      "a machine whose Slurm client reaches a controller (or --dry-run to print the scripts)");
  if (partition.empty())
    return;
  std::vector<std::string> names;
  std::istringstream in(p.out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && std::find(names.begin(), names.end(), line) == names.end())
      names.push_back(line);
  if (std::find(names.begin(), names.end(), partition) == names.end()) {
    std::string valid;
    for (const auto& n : names)
      valid += (valid.empty() ? "" : ", ") + n;
    throw ConfigError(command_line("--partition"), "Slurm knows no partition '" + partition + "'",
                      valid.empty() ? std::string("none listed by sinfo") : valid);
  }
}

struct Plan {
  std::string exe, experiment, cwd, dir, name;
  int shards = 0;
  std::size_t points = 0;
  std::uint64_t hash = 0;
  std::vector<int> missing;       ///< shards without results
  std::vector<int> failed_before; ///< of those, the ones a previous task ran and left a log
  Json manifest;                  ///< the previous submission's, if any
};

std::string shard_dir(const Plan& p, int i) { return p.dir + "/shards/" + std::to_string(i); }
std::string slurm_dir(const Plan& p) { return p.dir + "/slurm"; }
std::string shard_log(const Plan& p, int i) { return slurm_dir(p) + "/shard-" + std::to_string(i) + ".log"; }

bool shard_done(const Plan& p, int i)
{
  recover_outputs(shard_dir(p, i));
  const std::string f = shard_dir(p, i) + "/results.json";
  if (!exists(f))
    return false;
  try {
    (void)rows_from_json(read_input_file(f, kMaxResultsBytes, "a results.json"), f);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

/// The submission: paths made absolute, the shard count, and what a previous submission into
/// the same directory left (a different sweep there is refused).
Plan make_plan(const YamlNode& doc, const SweepSpec& sweep, const SlurmOptions& o)
{
  Plan p;
  p.exe = self_executable();
  p.experiment = absolute(o.experiment);
  p.cwd = absolute(".");
  p.dir = absolute(o.out);
  while (p.dir.size() > 1 && p.dir.back() == '/')
    p.dir.pop_back();
  check_script_path(p.dir, "--out");
  check_script_path(p.experiment, "experiment");
  check_script_path(p.cwd, "--slurm (the working directory)");
  check_script_path(p.exe, "--slurm (the clustersim executable)");
  p.points = sweep.points;
  p.hash = content_hash(read_input_file(o.experiment, kMaxConfigBytes, "a readable YAML file"));
  p.name = "sweep";
  for (auto& [k, v] : doc.entries())
    if (k.as_string() == "name")
      p.name = v.as_string();
  static const std::regex unsafe("[^A-Za-z0-9_.-]");
  p.name = std::regex_replace(p.name, unsafe, "_").substr(0, 64);
  const std::string manifest = slurm_dir(p) + "/manifest.json";
  if (exists(manifest)) {
    p.manifest = Json::parse(read_input_file(manifest, kMaxResultsBytes, "a manifest"), nullptr, false);
    if (p.manifest.is_discarded() || !p.manifest.is_object())
      throw ConfigError(SourceLocation{manifest, 0, 0}, "not a manifest written by clustersim run --slurm",
                        "remove " + slurm_dir(p) + " or choose another --out");
  }
  const int previous = p.manifest.is_object() ? int_field(p.manifest, "shards", 0) : 0;
  const int max_shards = static_cast<int>(std::min<std::size_t>(sweep.points, kMaxShards));
  if (o.array_size_given)
    p.shards = std::min(o.array_size, max_shards);
  else
    p.shards = previous > 0 ? previous : std::min(kDefaultShards, max_shards);
  if (p.manifest.is_object() &&
      (text_field(p.manifest, "content_hash", "") != std::to_string(p.hash) || previous != p.shards))
    throw ConfigError(command_line("--out"),
                      "'" + o.out + "' holds the shards of another submission (" +
                          text_field(p.manifest, "experiment", "?") + ", " + std::to_string(previous) +
                          " shards)",
                      "the same, unchanged sweep and --array-size to resume, or another --out");
  for (int i = 0; i < p.shards; ++i)
    if (!shard_done(p, i)) {
      p.missing.push_back(i);
      if (exists(shard_log(p, i)))
        p.failed_before.push_back(i);
    }
  return p;
}

std::string header(const Plan& p, const SlurmOptions& o, const std::string& job, const std::string& log)
{
  std::string s = "#!/bin/sh\n";
  s += "#SBATCH --job-name=" + job + "\n";
  s += "#SBATCH --chdir=" + sbatch_value(p.cwd) + "\n";
  s += "#SBATCH --output=" + sbatch_value(log) + "\n";
  if (!o.partition.empty())
    s += "#SBATCH --partition=" + o.partition + "\n";
  if (!o.time.empty())
    s += "#SBATCH --time=" + o.time + "\n";
  if (!o.account.empty())
    s += "#SBATCH --account=" + o.account + "\n";
  if (!o.qos.empty())
    s += "#SBATCH --qos=" + o.qos + "\n";
  for (const auto& a : o.sbatch_args)
    s += "#SBATCH " + a + "\n";
  return s;
}

std::string array_script(const Plan& p, const SlurmOptions& o)
{
  std::string s = header(p, o, "clustersim-" + p.name, slurm_dir(p) + "/shard-%a.log");
  s += "#SBATCH --array=" + array_ranges(p.missing) + "\n";
  s += "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=" + std::to_string(o.cpus_per_task) + "\n";
  s += "# shard I of " + std::to_string(p.shards) + " of sweep " + quote(p.experiment) + " (" +
       std::to_string(p.points) + " points): the points with index % " + std::to_string(p.shards) + " == I\n";
  s += "set -eu\n";
  s += "i=$SLURM_ARRAY_TASK_ID\n";
  s += "exec " + quote(p.exe) + " run " + quote(p.experiment) + " --shard \"$i/" + std::to_string(p.shards) +
       "\" --out " + quote(p.dir + "/shards") + "/\"$i\" --jobs " + std::to_string(o.cpus_per_task) +
       (o.full ? " --full" : "") + "\n";
  return s;
}

std::string merge_script(const Plan& p, const SlurmOptions& o)
{
  std::string s = header(p, o, "clustersim-" + p.name + "-merge", slurm_dir(p) + "/merge.log");
  s += "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n";
  s += "# joins the " + std::to_string(p.shards) + " shards into " + quote(p.dir) + "\n";
  s += "set -eu\n";
  s += "exec " + quote(p.exe) + " merge";
  for (int i = 0; i < p.shards; ++i)
    s += " " + quote(shard_dir(p, i));
  s += " --out " + quote(p.dir) + "\n";
  return s;
}

std::string failure_script(const Plan& p, const SlurmOptions& o)
{
  std::string s = header(p, o, "clustersim-" + p.name + "-failed", slurm_dir(p) + "/failed.log");
  s += "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n";
  s += "# runs only if a shard failed: names the shards without results, with their logs' last line\n";
  s += "set -eu\n";
  s += "note=" + quote(slurm_dir(p) + "/failed.txt") + "\n";
  s += ": >\"$note.tmp\"\n";
  s += "i=0\nwhile [ $i -lt " + std::to_string(p.shards) + " ]; do\n";
  s += "  if [ ! -f " + quote(p.dir + "/shards") + "/$i/results.json ]; then\n";
  s += "    log=" + quote(slurm_dir(p)) + "/shard-$i.log\n";
  s += "    echo \"shard $i of " + std::to_string(p.shards) +
       " failed: $log: $(tail -n 1 \"$log\" 2>/dev/null || echo 'no log')\" >>\"$note.tmp\"\n";
  s += "  fi\n  i=$((i + 1))\ndone\n";
  s += "mv \"$note.tmp\" \"$note\"\n";
  return s;
}

std::string write_manifest(const Plan& p, const std::string& array_job, const std::string& merge_job,
                           const std::string& note_job)
{
  Json m;
  m["experiment"] = p.experiment;
  m["content_hash"] = std::to_string(p.hash);
  m["points"] = p.points;
  m["shards"] = p.shards;
  m["array_job"] = array_job;
  m["merge_job"] = merge_job;
  m["failure_job"] = note_job;
  return m.dump(2) + "\n";
}

std::string job_id(const Process& p)
{
  std::string id = one_line(p.out);
  auto semi = id.find(';');
  return semi == std::string::npos ? id : id.substr(0, semi);
}

std::string sbatch(const std::vector<std::string>& flags, const std::string& script)
{
  std::vector<std::string> argv{"sbatch", "--parsable"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back(script);
  Process p = run_process(argv);
  if (!p.started)
    throw ConfigError(command_line("--slurm"), "sbatch is not on PATH: Slurm's client commands are missing",
                      "a machine with sbatch, squeue and sinfo (or --dry-run)");
  if (p.status != 0 || job_id(p).empty())
    throw ConfigError(command_line("--slurm"), "sbatch " + script + " failed: " + one_line(p.err.empty() ? p.out : p.err),
                      "a submission Slurm accepts (--partition, --account, --qos, --sbatch-arg), or --dry-run");
  return job_id(p);
}

/// Jobs of the previous submission still queued or running (squeue lists only those).
std::vector<std::string> still_queued(const Json& manifest)
{
  std::string ids;
  for (const char* k : {"array_job", "merge_job", "failure_job"})
    if (manifest.is_object() && manifest.contains(k) && !manifest[k].get<std::string>().empty())
      ids += (ids.empty() ? "" : ",") + manifest[k].get<std::string>();
  if (ids.empty())
    return {};
  Process p = run_process({"squeue", "-h", "-j", ids, "-o", "%i"});
  std::vector<std::string> out;
  std::istringstream in(p.out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty())
      out.push_back(line);
  return out;
}

void print_dry_run(const Plan& p, const std::vector<std::pair<std::string, std::string>>& scripts)
{
  for (const auto& [file, text] : scripts)
    std::cout << "# ---- " << file << "\n" << text;
  std::cout << "# ---- submit\n";
  const bool array = !p.missing.empty();
  if (array)
    std::cout << "sbatch --parsable " << quote(slurm_dir(p) + "/array.sh") << "   # -> ARRAY\n";
  std::cout << "sbatch --parsable " << (array ? "--dependency=afterok:ARRAY --kill-on-invalid-dep=yes " : "")
            << quote(slurm_dir(p) + "/merge.sh") << "\n";
  if (array)
    std::cout << "sbatch --parsable --dependency=afternotok:ARRAY --kill-on-invalid-dep=yes "
              << quote(slurm_dir(p) + "/failure.sh") << "\n";
}

/// The shards without results after the jobs ended, each with its log's last line.
std::vector<std::string> failures(const Plan& p)
{
  std::vector<std::string> lines;
  for (int i = 0; i < p.shards; ++i)
    if (!shard_done(p, i)) {
      std::string tail = exists(shard_log(p, i)) ? one_line(read_text(shard_log(p, i))) : "no log";
      lines.push_back("shard " + std::to_string(i) + " of " + std::to_string(p.shards) + " failed: " + shard_log(p, i) +
                      ": " + tail);
    }
  return lines;
}

int wait_for(const Plan& p, const Json& manifest)
{
  while (!still_queued(manifest).empty())
    std::this_thread::sleep_for(std::chrono::seconds(1));
  auto failed = failures(p);
  if (failed.empty() && exists(p.dir + "/results.json")) {
    std::cout << "slurm: done: " << p.dir << "/results.csv and results.json\n";
    return 0;
  }
  for (const auto& f : failed)
    std::cout << "slurm: " << f << "\n";
  std::cout << "slurm: the merge did not run; submit the same command again to rerun the "
            << (failed.empty() ? std::string("merge") : std::to_string(failed.size()) + " failed shard(s)") << "\n";
  return 1;
}

} // namespace

std::string array_ranges(const std::vector<int>& indices)
{
  std::string s;
  for (std::size_t i = 0; i < indices.size();) {
    std::size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1)
      ++j;
    s += (s.empty() ? "" : ",") + std::to_string(indices[i]);
    if (j > i)
      s += "-" + std::to_string(indices[j]);
    i = j + 1;
  }
  return s;
}

bool is_slurm_time(const std::string& t)
{
  static const std::regex re("[0-9]+|[0-9]+:[0-5][0-9]|[0-9]+:[0-5][0-9]:[0-5][0-9]|[0-9]+-[0-9]+|"
                             "[0-9]+-[0-9]+:[0-5][0-9]|[0-9]+-[0-9]+:[0-5][0-9]:[0-5][0-9]");
  return t.size() <= 32 && std::regex_match(t, re);
}

/// Submits the first job; when Slurm refuses it, the files written for it are put back as they
/// were, and the files and directories it made are removed, before the error.
std::string first_submission(const std::vector<std::pair<std::string, std::optional<std::string>>>& before,
                             const std::string& script)
{
  try {
    return sbatch({}, script);
  } catch (const ConfigError&) {
    for (const auto& [path, text] : before) {
      struct stat st {};
      if (path.empty() || ::stat(path.c_str(), &st) != 0)
        continue;
      if (text) {
        OutputSet back;
        back.add(path, *text, "--out");
        back.commit();
      } else if (S_ISDIR(st.st_mode)) {
        ::rmdir(path.c_str());
      } else {
        std::remove(path.c_str());
      }
    }
    throw;
  }
}

int submit_slurm(const YamlNode& doc, const SweepSpec& sweep, const SlurmOptions& o)
{
  check_flags(o);
  check_directory(o.out, "--out");
  Plan p = make_plan(doc, sweep, o);
  if (!o.dry_run)
    check_partition(o.partition); // Slurm reachable (and the partition known) before anything is written
  const std::vector<std::pair<std::string, std::string>> scripts{
      {slurm_dir(p) + "/array.sh", array_script(p, o)},
      {slurm_dir(p) + "/merge.sh", merge_script(p, o)},
      {slurm_dir(p) + "/failure.sh", failure_script(p, o)}};
  if (o.dry_run) {
    print_dry_run(p, scripts);
    return 0;
  }
  if (auto queued = still_queued(p.manifest); !queued.empty()) {
    std::cout << "slurm: jobs of the previous submission into " << p.dir << " are still queued or running ("
              << queued.size() << "); nothing submitted\n";
    return o.wait ? wait_for(p, p.manifest) : 0;
  }
  for (int i : p.failed_before)
    std::cout << "slurm: shard " << i << " has no results from its last run (" << shard_log(p, i) << ": "
              << one_line(read_text(shard_log(p, i))) << "); resubmitting it\n";
  if (o.array_size_given && o.array_size > p.shards)
    std::cout << "slurm: " << p.points << " points: " << p.shards << " shards, not " << o.array_size << "\n";
  // what the submission replaces, to put back if Slurm refuses its first job
  std::vector<std::pair<std::string, std::optional<std::string>>> files_before;
  for (const auto& [file, text] : scripts)
    files_before.emplace_back(file, exists(file) ? std::optional<std::string>(read_text(file)) : std::nullopt);
  const std::string manifest_file = slurm_dir(p) + "/manifest.json";
  files_before.emplace_back(manifest_file,
                            exists(manifest_file) ? std::optional<std::string>(read_text(manifest_file)) : std::nullopt);
  // the directories it makes, innermost first
  files_before.emplace_back(exists(slurm_dir(p)) ? "" : slurm_dir(p), std::nullopt);
  files_before.emplace_back(exists(p.dir) ? "" : p.dir, std::nullopt);
  OutputSet files;
  for (const auto& [file, text] : scripts)
    files.add(file, text, "--out");
  files.add(slurm_dir(p) + "/manifest.json", write_manifest(p, "", "", ""), "--out");
  files.commit();
  for (int i : p.missing)
    std::remove(shard_log(p, i).c_str());
  std::remove((slurm_dir(p) + "/failed.txt").c_str());
  std::string array_job, note_job, merge_job;
  if (!p.missing.empty()) {
    array_job = first_submission(files_before, slurm_dir(p) + "/array.sh");
    merge_job = sbatch({"--dependency=afterok:" + array_job, "--kill-on-invalid-dep=yes"}, slurm_dir(p) + "/merge.sh");
    note_job =
        sbatch({"--dependency=afternotok:" + array_job, "--kill-on-invalid-dep=yes"}, slurm_dir(p) + "/failure.sh");
    std::cout << "slurm: array job " << array_job << ": shards " << array_ranges(p.missing) << " of " << p.shards
              << " (" << p.points << " points), logs " << slurm_dir(p) << "/shard-I.log\n";
    std::cout << "slurm: merge job " << merge_job << " after all of them succeed (afterok), into " << p.dir << "\n";
    std::cout << "slurm: failure job " << note_job << " if a shard fails (afternotok): " << slurm_dir(p)
              << "/failed.txt names it\n";
  } else {
    merge_job = first_submission(files_before, slurm_dir(p) + "/merge.sh");
    std::cout << "slurm: all " << p.shards << " shards have results; merge job " << merge_job << " into " << p.dir
              << "\n";
  }
  Json manifest = Json::parse(write_manifest(p, array_job, merge_job, note_job));
  OutputSet m;
  m.add(slurm_dir(p) + "/manifest.json", manifest.dump(2) + "\n", "--out");
  m.commit();
  return o.wait ? wait_for(p, manifest) : 0;
}

} // namespace clustersim
