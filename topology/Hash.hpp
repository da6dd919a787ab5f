#pragma once
/// One fixed, portable integer mixer for every seeded choice that must be the same on every
/// platform and run (expert loads, ECMP's cable per flow).

#include <cstdint>

namespace clustersim {

/// splitmix64's finalizer (Steele, Lea & Flood, OOPSLA 2014): every input bit moves every output
/// bit; iterated on a state it is a fast, fixed pseudo-random stream.
inline std::uint64_t splitmix64(std::uint64_t x)
{
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

} // namespace clustersim
