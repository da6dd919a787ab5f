// libFuzzer entry point of one target, chosen at build time (CLUSTERSIM_FUZZ_TARGET).
#include "tests/fuzz/FuzzTargets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
  static const clustersim::fuzz::Target& t = clustersim::fuzz::target(CLUSTERSIM_FUZZ_TARGET);
  return t.run(data, size);
}
