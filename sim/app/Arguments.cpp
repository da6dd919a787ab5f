#include "sim/app/Arguments.hpp"
#include "sim/study/Sweep.hpp"

#include "topology/config/Suggest.hpp"
#include "topology/config/Units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace clustersim {

std::vector<std::string> split(const std::string& s, char sep)
{
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

double positive_number(const std::string& text, const std::string& flag)
{
  const std::optional<double> v = parse_count(text);
  if (!v || !(*v > 0) || !std::isfinite(*v))
    throw ConfigError(command_line(flag), "'" + text + "' is not a positive number", valid_count());
  return *v;
}

long long int_argument(long long value, const std::string& flag, long long min, long long max)
{
  if (value < min || value > max)
    throw ConfigError(command_line(flag), std::to_string(value) + " is out of range",
                      "an integer from " + std::to_string(min) + " to " + std::to_string(max));
  return value;
}

double number_argument(double value, const std::string& flag, double min, double max)
{
  if (!std::isfinite(value) || value < min || value > max) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "a number from %g to %g", min, max);
    char v[64];
    std::snprintf(v, sizeof v, "%g", value);
    throw ConfigError(command_line(flag), std::string(v) + " is out of range", buf);
  }
  return value;
}

ModelSpec model_argument(const Catalog& c, const std::string& arg)
{
  bool is_path = arg.find('/') != std::string::npos || arg.size() > 5;
  if (is_path && file_exists(arg)) {
    if (arg.size() > 5 && arg.compare(arg.size() - 5, 5, ".json") == 0)
      return import_hf_config(arg);
    return parse_model(YamlNode::load_file(arg), c.models_dir());
  }
  try {
    return load_model_preset(arg, c.models_dir(), command_line("--model"));
  } catch (const ConfigError& e) {
    throw ConfigError(command_line("--model"), e.problem(), e.valid());
  }
}

GpuSpec gpu_argument(const Catalog& c, const std::string& gpu, const std::string& platform)
{
  if (!gpu.empty())
    return c.gpus().get(gpu, command_line("--gpu"));
  if (!platform.empty())
    return c.platform(platform, command_line("--platform")).node.gpu;
  throw ConfigError(command_line("--gpu"), "no GPU given",
                    "--gpu ID or --platform NAME; GPUs: " + join(c.gpus().ids()));
}

Precision precision_argument(const std::string& p, const GpuSpec& gpu)
{
  if (p.empty())
    return gpu.supports(Precision::bf16) ? Precision::bf16 : Precision::fp16;
  const auto& names = precision_names();
  if (std::find(names.begin(), names.end(), p) == names.end())
    throw ConfigError(command_line("--precision"), unknown_name("precision", p, names), join(names));
  Precision prec = parse_precision(p);
  if (!gpu.supports(prec))
    throw ConfigError(command_line("--precision"), "GPU '" + gpu.id + "' has no " + p + " support",
                      "another precision");
  return prec;
}

std::string choice_argument(const std::string& value, const std::vector<std::string>& valid, const std::string& flag,
                            const std::string& what)
{
  if (std::find(valid.begin(), valid.end(), value) == valid.end())
    throw ConfigError(command_line(flag), unknown_name(what, value, valid), join(valid));
  return value;
}

void require_training_length(const ModelSpec& m, bool seq_given, const std::string& valid)
{
  if (!seq_given && !m.seq_len_from_config.empty())
    throw ConfigError(command_line("--model"), "the config.json gives " + m.seq_len_from_config, valid);
}

/// "0-7,64": per number below `count`, 1 where the list names it; `what` names one ("GPU").
std::vector<std::uint8_t> number_set(const std::string& list, long long count, const std::string& flag,
                                     const std::string& what, const std::string& whats)
{
  std::vector<std::uint8_t> in(static_cast<std::size_t>(count), 0);
  const std::string valid =
      what + " numbers 0 to " + std::to_string(count - 1) + " and ranges A-B, separated by commas";
  auto number = [](const std::string& text) {
    if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos)
      return -1LL;
    return std::stoll(text);
  };
  for (const std::string& item : split(list, ',')) {
    const std::size_t dash = item.find('-');
    const long long a = number(item.substr(0, dash));
    const long long b = dash == std::string::npos ? a : number(item.substr(dash + 1));
    if (a < 0 || b < 0 || b < a || b >= count)
      throw ConfigError(command_line(flag), "'" + item + "' is not a " + what + " or range of " + whats +
                                                " of this experiment", valid);
    for (long long k = a; k <= b; ++k)
      in[static_cast<std::size_t>(k)] = 1;
  }
  return in;
}

YamlNode experiment_document(const std::string& path, const std::vector<std::string>& settings)
{
  return apply_settings(YamlNode::load_file(path), settings);
}

void add_settings_option(CLI::App& cmd, std::vector<std::string>& settings)
{
  cmd.add_option("--set", settings,
                 "KEY=VALUE: set a key of the experiment over its file's value, e.g. --set training.tp=4 "
                 "(repeatable; any scalar key of `clustersim schema`, checked as in the file)")
      ->allow_extra_args(false);
}

} // namespace clustersim
