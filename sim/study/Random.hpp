#pragma once
/// Seeded draws that are the same on every platform: std::mt19937_64 is specified bit for bit,
/// the standard distributions are not, so the study layer draws through these.

#include <cmath>
#include <limits>
#include <random>

namespace clustersim {

/// A uniform double in [0, 1) from the generator's 53 high bits.
inline double uniform(std::mt19937_64& g) { return static_cast<double>(g() >> 11) * 0x1.0p-53; }

/// Exponential with `rate` (inverse CDF); +inf for rate 0.
inline double exponential(std::mt19937_64& g, double rate)
{
  if (rate <= 0)
    return std::numeric_limits<double>::infinity();
  return -std::log1p(-uniform(g)) / rate;
}

/// A standard normal (Box-Muller).
inline double normal(std::mt19937_64& g)
{
  const double u1 = 1 - uniform(g), u2 = uniform(g);
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
}

} // namespace clustersim
