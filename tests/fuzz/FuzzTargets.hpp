#pragma once
/// The fuzz targets, one per input path: experiment and sweep YAML, platform YAML, Hugging Face
/// config.json, validation files, quantities with units, command-line argument vectors, and the
/// results.json that `merge` reads. The same functions serve libFuzzer (FuzzMain.cpp, built by
/// the `fuzz` preset with clang) and the replay of the corpora in the ordinary test suite
/// (test_fuzz_replay.cpp).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace clustersim::fuzz {

struct Target {
  const char* name;
  int (*run)(const std::uint8_t* data, std::size_t size);
};

const std::vector<Target>& targets();
/// std::invalid_argument for a name that is none of them.
const Target& target(const std::string& name);

} // namespace clustersim::fuzz
