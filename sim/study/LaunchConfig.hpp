#pragma once
/// A planned layout written as the files that launch it: the experiment clustersim runs, and the
/// launch arguments of the framework it was planned for.
///
/// The flag and key names are facts of each framework's configuration, read where they are
/// defined (cited in LaunchConfig.cpp beside each writer). What a framework cannot express (a
/// ZeRO stage torchtitan lacks, GPipe in Megatron-LM) is written as a comment in the file and
/// returned in `notes`: the file launches the nearest layout the framework has, and says so.

#include "strategies/ModelSpec.hpp"
#include "strategies/TrainingSpec.hpp"

#include <string>
#include <vector>

namespace clustersim {

struct LaunchSpec {
  std::string name;       ///< the experiment's name
  std::string model_yaml; ///< the `model:` value, as YAML (a flow mapping: preset, hf_config or dimensions)
  std::string platform;   ///< a catalog platform name
  int gpus = 0;
  ModelSpec model;
  TrainingSpec training;
  double tokens = 0;             ///< budget.tokens (0: not written)
  std::vector<std::string> head; ///< comment lines every file starts with (what was planned, its step)
};

struct LaunchFile {
  std::string name; ///< file name, e.g. megatron-lm.args
  std::string text;
};

/// The experiment YAML (always) and the launch files of `spec.training.framework`:
/// megatron: megatron-lm.args and megatron-bridge.overrides (NeMo 2's Hydra keys); megatron-deepspeed: megatron-lm.args and ds_config.json;
/// deepspeed: ds_config.json; torchtitan: torchtitan.toml; fsdp, automodel, other: none (a note
/// says so). `notes` receives what the framework's files cannot express.
std::vector<LaunchFile> launch_files(const LaunchSpec& spec, std::vector<std::string>& notes);

/// Megatron-LM's command-line arguments for the model and layout, one flag per line.
std::string megatron_arguments(const ModelSpec& model, const TrainingSpec& t, std::vector<std::string>& notes);
/// Megatron-Bridge's (NeMo 2) Hydra overrides, KEY=VALUE per line, for the keys its mapping
/// from Megatron-LM's arguments names.
std::string megatron_bridge_overrides(const ModelSpec& model, const TrainingSpec& t, std::vector<std::string>& notes);
/// torchtitan's TOML job config: [training], [parallelism], [activation_checkpoint], [model].
std::string torchtitan_toml(const ModelSpec& model, const TrainingSpec& t, std::vector<std::string>& notes);
/// A DeepSpeed config: batch sizes, ZeRO stage, precision.
std::string deepspeed_json(const TrainingSpec& t, std::vector<std::string>& notes);

} // namespace clustersim
