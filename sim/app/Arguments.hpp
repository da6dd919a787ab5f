#pragma once
/// Command-line arguments shared by the subcommands: numbers, models, GPUs, precisions. Bad
/// values throw ConfigError located on the command line.

#include "sim/study/Catalog.hpp"
#include "strategies/ModelSpec.hpp"
#include "topology/config/Yaml.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace clustersim {

/// A finite number > 0 ("7e9"); `flag` names the option in the error.
double positive_number(const std::string& text, const std::string& flag);
/// The items of a flag's list separated by `sep`, empty ones kept ("1,,2" has three) so that
/// the caller can refuse them.
std::vector<std::string> split(const std::string& s, char sep);
/// An integer flag within [min, max]: ConfigError "command line: FLAG: N is out of range; valid:
/// an integer from MIN to MAX" otherwise.
long long int_argument(long long value, const std::string& flag, long long min, long long max);
/// One of `valid`, or exit 2 naming the flag and suggesting the nearest (`what`: "framework").
std::string choice_argument(const std::string& value, const std::vector<std::string>& valid, const std::string& flag,
                            const std::string& what);
/// A number flag within [min, max] (finite).
double number_argument(double value, const std::string& flag, double min, double max);
/// The largest cluster any command builds (as cluster.gpus in an experiment).
constexpr long long kMaxGpus = 1 << 22;
/// A model from a preset name, a model YAML or a Hugging Face config.json.
ModelSpec model_argument(const Catalog& c, const std::string& arg);
/// A model imported from a Hugging Face config.json carries its longest context, not a training
/// length: without `--seq` (seq_given false) that is an error asking for it.
void require_training_length(const ModelSpec& m, bool seq_given, const std::string& valid);
/// The GPU from --gpu, else from --platform.
GpuSpec gpu_argument(const Catalog& c, const std::string& gpu, const std::string& platform);
/// --precision (default: bf16 where the GPU has it, else fp16).
Precision precision_argument(const std::string& p, const GpuSpec& gpu);

/// "0-7,64": per number below `count`, 1 where the list names it; `what` names one ("GPU").
std::vector<std::uint8_t> number_set(const std::string& list, long long count, const std::string& flag,
                                     const std::string& what, const std::string& whats);

/// An experiment document as the commands read it: from EXPERIMENT (or standard input for "-"),
/// with the --set KEY=VALUE settings applied (Sweep.hpp's apply_settings).
YamlNode experiment_document(const std::string& path, const std::vector<std::string>& settings);
/// Adds the repeatable --set KEY=VALUE option.
void add_settings_option(CLI::App& cmd, std::vector<std::string>& settings);

} // namespace clustersim
