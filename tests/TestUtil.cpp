#include "tests/TestUtil.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace clustersim::test {

namespace {
std::string g_root;
void cleanup()
{
  if (!g_root.empty())
    std::system(("rm -rf '" + g_root + "'").c_str());
}
} // namespace

std::string read_file(const std::string& path)
{
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string temp_dir()
{
  if (g_root.empty()) {
    char tmpl[] = "/tmp/clustersim-test-XXXXXX";
    char* d = ::mkdtemp(tmpl);
    g_root = d ? d : "/tmp";
    std::atexit(cleanup);
  }
  static int counter = 0;
  std::string dir = g_root + "/" + std::to_string(counter++);
  std::system(("mkdir -p '" + dir + "'").c_str());
  return dir;
}

std::string write_temp(const std::string& name, const std::string& text)
{
  std::string path = temp_dir() + "/" + name;
  std::ofstream out(path, std::ios::binary);
  out << text;
  return path;
}

CommandResult run_shell(const std::string& command)
{
  std::string dir = temp_dir();
  std::string out = dir + "/stdout";
  std::string err = dir + "/stderr";
  std::string cmd = "(" + command + ") >'" + out + "' 2>'" + err + "'";
  int status = std::system(cmd.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

namespace {

CommandResult run_in(const std::string& cwd, const std::string& args)
{
  std::string cmd = std::string(CLUSTERSIM_EXE) + " " + args;
  if (!cwd.empty())
    cmd = "cd '" + cwd + "' && " + cmd;
  return run_shell(cmd);
}

} // namespace

CommandResult run_cli(const std::string& args)
{
  return run_in("", args);
}

CommandResult run_cli_in_source(const std::string& args)
{
  return run_in(CLUSTERSIM_SOURCE, args);
}

const Catalog& catalog()
{
  static Catalog c = [] {
    ::setenv("CLUSTERSIM_DATA", CLUSTERSIM_SOURCE, 1);
    return Catalog::open();
  }();
  return c;
}

std::string source_path(const std::string& relative)
{
  return std::string(CLUSTERSIM_SOURCE) + "/" + relative;
}

std::string validation_path(const std::string& file)
{
  return source_path("experiments/validation/" + file);
}

void check_golden(const std::string& name, const std::string& actual)
{
  const std::string path = source_path("tests/golden/" + name);
  const char* update = std::getenv("CLUSTERSIM_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << actual;
    MESSAGE("rewrote " << path);
    return;
  }
  const std::string expected = read_file(path);
  if (expected == actual)
    return;
  const std::string kept = temp_dir() + "/" + name;
  {
    std::ofstream out(kept, std::ios::binary);
    out << actual;
  }
  std::istringstream a(actual), e(expected);
  std::string la, le;
  int line = 0;
  while (true) {
    ++line;
    bool ga = static_cast<bool>(std::getline(a, la));
    bool ge = static_cast<bool>(std::getline(e, le));
    if (!ga && !ge)
      break;
    if (!ga || !ge || la != le) {
      FAIL_CHECK("output differs from tests/golden/" << name << " at line " << line << "\n  golden: " << (ge ? le : "<end>")
                                                  << "\n  actual: " << (ga ? la : "<end>") << "\n  (actual kept in " << kept
                                                  << "; a deliberate change: scripts/update-golden.sh)");
      return;
    }
  }
  FAIL_CHECK("output differs from tests/golden/" << name << " (line endings?)");
}

int entries_in(const std::string& dir)
{
  int n = 0;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..")
        ++n;
    ::closedir(d);
  }
  return n;
}

} // namespace clustersim::test
