// Every input of the fuzz corpora (tests/fuzz/corpus/TARGET: seeds from experiments/,
// platforms/, the validation files and the tests' bad inputs) and every input a fuzzer once
// crashed on (tests/fuzz/regressions/TARGET) replayed through its target in the ordinary build:
// each must end cleanly (a value, or a one-line ConfigError).
#include "tests/TestUtil.hpp"
#include "tests/fuzz/FuzzTargets.hpp"

#include <doctest/doctest.h>

#include <dirent.h>

#include <algorithm>

using namespace clustersim;

namespace {

std::vector<std::string> files_in(const std::string& dir)
{
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d))
      if (e->d_name[0] != '.')
        out.push_back(dir + "/" + e->d_name);
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace

TEST_CASE("fuzz corpora and regressions replay cleanly through every target")
{
  for (const auto& t : fuzz::targets()) {
    std::size_t n = 0;
    for (const char* kind : {"corpus", "regressions"})
      for (const auto& f : files_in(test::source_path(std::string("tests/fuzz/") + kind + "/" + t.name))) {
        CAPTURE(f);
        std::string bytes = test::read_file(f);
        CHECK_NOTHROW(t.run(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
        ++n;
      }
    CAPTURE(t.name);
    CHECK_MESSAGE(n >= 3, "target " << t.name << " has fewer than 3 seeds");
  }
}
