#pragma once
/// Quantities with units, parsed in one place.
///
/// YAML and the command line write quantities as strings with a suffix ("450GBps", "400Gbps",
/// "1.5us", "989TFLOPS", "80GiB", "700W"); code works in SI doubles (bytes, bytes/s, seconds,
/// FLOP/s, watts). A missing or unknown suffix is an error that lists the valid ones.

#include <optional>
#include <stdexcept>
#include <string>

namespace clustersim {

enum class Quantity { bytes, bandwidth, time, flop_rate, power };

/// Thrown by parse_quantity; the config layer turns it into a ConfigError with a position.
class UnitError : public std::runtime_error {
public:
  UnitError(const std::string& what_wrong, std::string valid) : std::runtime_error(what_wrong), valid_(std::move(valid))
  {
  }
  const std::string& valid() const { return valid_; }

private:
  std::string valid_;
};

/// Parses "NUMBER SUFFIX" into SI units. Bandwidth accepts bytes ("GBps", "GB/s") and bits
/// ("Gbps", "Gb/s"; divided by 8). Decimal prefixes are powers of 1000, binary ones (KiB, MiB,
/// GiB, TiB) powers of 1024. Negative values are rejected, and so is a value that is not finite
/// or exceeds physical_limit(kind) once scaled (1e300TB).
double parse_quantity(const std::string& text, Quantity kind);

/// A count as people write them: "1e12", "15T" tokens, "7B" or "405G" parameters, "2M"; decimal
/// multipliers K, M, B or G, T, P. nullopt when the text is not one.
std::optional<double> parse_count(const std::string& text);

/// What parse_count accepts, for a `valid:` line.
inline const char* valid_count() { return "a number, optionally with K, M, B (or G), T or P (e.g. 15T, 7B, 1e12)"; }

/// The largest value of a kind anything here can mean (an exabyte, a petabyte per second, a
/// century, an exaFLOP/s, a gigawatt): beyond it a figure is a typo or an overflow.
double physical_limit(Quantity kind);

/// "a size", "a bandwidth", ...
const char* quantity_name(Quantity kind);
/// A typical value of the kind, as written: "80GiB", "450GBps", "1.5us".
const char* quantity_example(Quantity kind);
/// A value with the largest decimal prefix that keeps it >= 1: "25MB", "400Gbps" is "50GBps",
/// "1.5us"; as parse_quantity reads it back.
std::string format_quantity(double value, Quantity kind);

/// The suffixes accepted for a kind, for error messages.
std::string valid_suffixes(Quantity kind);

/// Human-readable forms for tables: "1.00 GiB", "312.0 TFLOP/s", "1.234 ms", "450.0 GB/s".
std::string format_bytes(double bytes);
std::string format_bandwidth(double bytes_per_s);
std::string format_time(double seconds);
/// `digits` significant digits with a k / M / G / T suffix: "2.07 M", "749.1 M".
std::string format_si(double v, int digits = 3);
std::string format_flop_rate(double flops);

} // namespace clustersim
