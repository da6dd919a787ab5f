#include "topology/config/Units.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <utility>
#include <vector>

namespace clustersim {
namespace {

struct Suffix {
  const char* text;
  double factor;
};

const std::vector<Suffix>& suffixes(Quantity kind)
{
  static const std::vector<Suffix> bytes{
      {"B", 1},     {"KB", 1e3},     {"MB", 1e6},        {"GB", 1e9},           {"TB", 1e12},
      {"PB", 1e15}, {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
      // nccl-tests' -b/-e sizes: binary, one letter, either case (NVIDIA/nccl-tests@a0b82b2260
      // src/common.cu:226-250, parsesize)
      {"K", 1024.0}, {"M", 1048576.0}, {"G", 1073741824.0}, {"k", 1024.0}, {"m", 1048576.0}, {"g", 1073741824.0}};
  static const std::vector<Suffix> bandwidth{
      {"Bps", 1},     {"KBps", 1e3},     {"MBps", 1e6},     {"GBps", 1e9},     {"TBps", 1e12},
      {"B/s", 1},     {"KB/s", 1e3},     {"MB/s", 1e6},     {"GB/s", 1e9},     {"TB/s", 1e12},
      {"bps", 0.125}, {"Kbps", 1e3 / 8}, {"Mbps", 1e6 / 8}, {"Gbps", 1e9 / 8}, {"Tbps", 1e12 / 8},
      {"b/s", 0.125}, {"Kb/s", 1e3 / 8}, {"Mb/s", 1e6 / 8}, {"Gb/s", 1e9 / 8}, {"Tb/s", 1e12 / 8},
      {"bit/s", 0.125}, {"Kbit/s", 1e3 / 8}, {"Mbit/s", 1e6 / 8}, {"Gbit/s", 1e9 / 8}, {"Tbit/s", 1e12 / 8}};
  static const std::vector<Suffix> time{{"s", 1},    {"ms", 1e-3}, {"us", 1e-6},
                                        {"ns", 1e-9}, {"min", 60},  {"h", 3600}, {"d", 86400}};
  static const std::vector<Suffix> flops{{"FLOPS", 1},      {"KFLOPS", 1e3},  {"MFLOPS", 1e6}, {"GFLOPS", 1e9},
                                         {"TFLOPS", 1e12},  {"PFLOPS", 1e15}, {"FLOP/s", 1},   {"GFLOP/s", 1e9},
                                         {"TFLOP/s", 1e12}, {"PFLOP/s", 1e15}};
  static const std::vector<Suffix> power{{"W", 1}, {"kW", 1e3}, {"MW", 1e6}};
  switch (kind) {
  case Quantity::bytes:
    return bytes;
  case Quantity::bandwidth:
    return bandwidth;
  case Quantity::time:
    return time;
  case Quantity::flop_rate:
    return flops;
  case Quantity::power:
    return power;
  }
  return bytes;
}

} // namespace

const char* quantity_name(Quantity kind)
{
  switch (kind) {
  case Quantity::bytes:
    return "a size";
  case Quantity::bandwidth:
    return "a bandwidth";
  case Quantity::time:
    return "a time";
  case Quantity::flop_rate:
    return "a FLOP rate";
  case Quantity::power:
    return "a power";
  }
  return "a quantity";
}

const char* quantity_example(Quantity kind)
{
  switch (kind) {
  case Quantity::bytes:
    return "80GiB";
  case Quantity::bandwidth:
    return "450GBps";
  case Quantity::time:
    return "1.5us";
  case Quantity::flop_rate:
    return "989TFLOPS";
  case Quantity::power:
    return "700W";
  }
  return "";
}

namespace {

std::string trim(const std::string& s)
{
  std::size_t b = 0;
  std::size_t e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b])))
    ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1])))
    --e;
  return s.substr(b, e - b);
}

std::string with_digits(double v, int digits)
{
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

} // namespace

std::string valid_suffixes(Quantity kind)
{
  std::string out = std::string("a number with one of the suffixes ");
  const auto& list = suffixes(kind);
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (i)
      out += ", ";
    out += list[i].text;
  }
  out += std::string(" (e.g. ") + quantity_example(kind) + ")";
  return out;
}

double parse_quantity(const std::string& raw, Quantity kind)
{
  const std::string text = trim(raw);
  const char* begin = text.c_str();
  char* end = nullptr;
  double value = std::strtod(begin, &end);
  if (end == begin || !std::isfinite(value))
    throw UnitError("'" + raw + "' is not " + quantity_name(kind), valid_suffixes(kind));
  std::string suffix = trim(std::string(end));
  if (suffix.empty())
    throw UnitError("'" + raw + "' has no unit", valid_suffixes(kind));
  for (const auto& s : suffixes(kind)) {
    if (suffix == s.text) {
      if (value < 0)
        throw UnitError("'" + raw + "' is negative", valid_suffixes(kind));
      const double scaled = value * s.factor;
      if (!std::isfinite(scaled) || scaled > physical_limit(kind))
        throw UnitError("'" + raw + "' is beyond " + format_quantity(physical_limit(kind), kind),
                        std::string(quantity_name(kind)) + " up to " + format_quantity(physical_limit(kind), kind));
      return scaled;
    }
  }
  throw UnitError("'" + raw + "' has an unknown unit '" + suffix + "' for " + quantity_name(kind), valid_suffixes(kind));
}

std::optional<double> parse_count(const std::string& raw)
{
  const std::string text = trim(raw);
  const char* begin = text.c_str();
  char* end = nullptr;
  const double value = std::strtod(begin, &end);
  if (text.empty() || end == begin || !std::isfinite(value))
    return std::nullopt;
  const std::string suffix(end);
  static const std::vector<Suffix> multipliers{{"", 1},    {"K", 1e3},  {"M", 1e6},  {"B", 1e9},
                                               {"G", 1e9}, {"T", 1e12}, {"P", 1e15}};
  for (const auto& m : multipliers)
    if (suffix == m.text)
      return value * m.factor;
  return std::nullopt;
}

double physical_limit(Quantity kind)
{
  switch (kind) {
  case Quantity::bytes:
    return 1e18;
  case Quantity::bandwidth:
    return 1e15;
  case Quantity::time:
    return 3.6e9; // 1e6 h (114 years): the longest any key's schema documents (reliability's repair, window)
  case Quantity::flop_rate:
    return 1e18;
  case Quantity::power:
    return 1e9;
  }
  return 0;
}

std::string format_quantity(double value, Quantity kind)
{
  // the suffixes that are plain powers of ten, smallest first
  struct Unit {
    const char* text;
    double factor;
  };
  static const std::vector<Unit> bytes{{"B", 1}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"PB", 1e15}};
  static const std::vector<Unit> bandwidth{{"Bps", 1},    {"KBps", 1e3},  {"MBps", 1e6},
                                           {"GBps", 1e9}, {"TBps", 1e12}, {"TBps", 1e12}};
  static const std::vector<Unit> time{{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1}, {"min", 60}, {"h", 3600}};
  static const std::vector<Unit> flops{{"FLOPS", 1}, {"GFLOPS", 1e9}, {"TFLOPS", 1e12}, {"PFLOPS", 1e15}};
  static const std::vector<Unit> power{{"W", 1}, {"kW", 1e3}, {"MW", 1e6}};
  const std::vector<Unit>& units = kind == Quantity::bytes       ? bytes
                                   : kind == Quantity::bandwidth ? bandwidth
                                   : kind == Quantity::time      ? time
                                   : kind == Quantity::flop_rate ? flops
                                                                 : power;
  const Unit* pick = &units.front();
  for (const auto& u : units)
    if (std::fabs(value) >= u.factor)
      pick = &u;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g%s", value / pick->factor, pick->text);
  return buf;
}

std::string format_bytes(double bytes)
{
  static const char* names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int i = 0;
  double v = bytes;
  while (std::fabs(v) >= 1024.0 && i < 5) {
    v /= 1024.0;
    ++i;
  }
  return with_digits(v, i == 0 ? 0 : 2) + " " + names[i];
}

std::string format_bandwidth(double bps)
{
  if (bps >= 1e12)
    return with_digits(bps / 1e12, 2) + " TB/s";
  if (bps >= 1e9)
    return with_digits(bps / 1e9, 1) + " GB/s";
  return with_digits(bps / 1e6, 1) + " MB/s";
}

std::string format_si(double v, int digits)
{
  static const char* suffix[] = {"", " k", " M", " G", " T"};
  int k = 0;
  while (std::fabs(v) >= 1000 && k < 4) {
    v /= 1000;
    ++k;
  }
  char s[48];
  std::snprintf(s, sizeof s, "%.*g%s", digits, v, suffix[k]);
  return s;
}

std::string format_time(double s)
{
  double a = std::fabs(s);
  if (a >= 86400 * 2)
    return with_digits(s / 86400, 1) + " days";
  if (a >= 3600 * 2)
    return with_digits(s / 3600, 1) + " h";
  if (a >= 1)
    return with_digits(s, 3) + " s";
  if (a >= 1e-3)
    return with_digits(s * 1e3, 3) + " ms";
  return with_digits(s * 1e6, 3) + " us";
}

std::string format_flop_rate(double f)
{
  if (f >= 1e15)
    return with_digits(f / 1e15, 2) + " PFLOP/s";
  return with_digits(f / 1e12, 1) + " TFLOP/s";
}

} // namespace clustersim
