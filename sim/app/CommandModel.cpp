// clustersim memory / estimate / model: the cost model's back-of-envelope answers.
#include "sim/app/Arguments.hpp"
#include "sim/app/Commands.hpp"
#include "sim/app/Report.hpp"
#include "sim/study/Catalog.hpp"
#include "sim/study/Sweep.hpp"
#include "strategies/CostModel.hpp"
#include "strategies/LayoutRules.hpp"
#include "strategies/PipelineSchedule.hpp"
#include "topology/config/Suggest.hpp"
#include "topology/config/Units.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>

namespace clustersim {
namespace {

using Json = nlohmann::ordered_json;

std::vector<double> state_bytes_argument(const std::string& text)
{
  std::vector<double> v;
  if (text.empty())
    return v;
  std::stringstream s(text);
  std::string item;
  while (std::getline(s, item, ','))
    v.push_back(positive_number(item, "--state-bytes"));
  if (v.size() != 3)
    throw ConfigError(command_line("--state-bytes"), "'" + text + "' is not three numbers",
                      "WEIGHTS,GRADS,OPTIMIZER bytes per parameter, e.g. 2,2,12 (mixed-precision Adam) or 2,2,4");
  return v;
}

/// Sizes as every report prints them (GiB).
std::string gb(double bytes)
{
  return format_bytes(bytes);
}

} // namespace

namespace {

struct MemOptions {
  std::string model;
  std::string params;
  std::string platform;
  std::string gpu;
  int gpus = 0; ///< 0: one model replica, tp*pp*cp
  int tp = 1, pp = 1, cp = 1, zero = 0, vpp = 1;
  int micro_batch = 1;
  int global_batch = 0;
  int seq = 0;
  std::string recompute = "none";
  std::string schedule; ///< empty: interleaved with --vpp > 1, else 1f1b
  std::string precision;
  bool sequence_parallel = false;
  bool flash = false;
  bool flash_given = false; ///< --flash-attention or --no-flash-attention on the command line
  std::string state_bytes; ///< empty: the framework's
  std::string framework = "megatron";
  bool json = false;
  std::vector<std::string> sets; ///< --set training.KEY=VALUE
  bool gpus_given = false;
  bool seq_given = false;
  bool zero_given = false;
};

/// The flags every layout needs, each within the training table's bounds.
void check_memory_flags(const MemOptions& mo)
{
  const Section& t = training_section();
  auto bound = [&](long long v, const char* flag, const char* key) {
    const KeySpec& k = t.at(key);
    int_argument(v, flag, static_cast<long long>(k.min), static_cast<long long>(k.max));
  };
  bound(mo.tp, "--tp", "tp");
  bound(mo.pp, "--pp", "pp");
  bound(mo.cp, "--cp", "cp");
  bound(mo.vpp, "--vpp", "vpp");
  bound(mo.zero, "--zero", "zero");
  bound(mo.micro_batch, "--micro-batch", "micro_batch");
  if (mo.global_batch != 0)
    bound(mo.global_batch, "--global-batch", "global_batch");
  if (mo.gpus_given)
    int_argument(mo.gpus, "--gpus", 1, kMaxGpus);
  if (mo.seq_given) {
    const KeySpec& k = model_section().at("seq_len");
    int_argument(mo.seq, "--seq", static_cast<long long>(k.min), static_cast<long long>(k.max));
  }
}

Framework framework_argument(const std::string& value)
{
  const auto& names = framework_names();
  return static_cast<Framework>(std::find(names.begin(), names.end(),
                                          choice_argument(value, names, "--framework", "framework")) -
                                names.begin());
}

/// --state-bytes, else the framework's bytes per parameter at this precision.
std::vector<double> states_of(const MemOptions& mo, const Catalog& c, const GpuSpec& gpu, std::vector<double> sb)
{
  if (!sb.empty())
    return sb;
  StateBytes s = c.frameworks()->get(framework_argument(mo.framework)).states(precision_argument(mo.precision, gpu));
  return {s.weights, s.grads, s.optimizer};
}

int memory_of_params(const MemOptions& mo, const GpuSpec& gpu, const std::vector<double>& sb)
{
  if (!mo.sets.empty()) // the model states of a parameter count read no other training key
    throw ConfigError(command_line("--set " + mo.sets.front()), "--params prices model states only",
                      "--model NAME|FILE with --set, or --params without it");
  const int replica = mo.tp * mo.pp * mo.cp;
  const int gpus = mo.gpus_given ? mo.gpus : replica;
  double n = positive_number(mo.params, "--params");
  if (gpus % replica != 0)
    throw ConfigError(command_line("--gpus"),
                      std::to_string(gpus) + " GPUs do not divide into tp*pp*cp = " + std::to_string(replica),
                      "a multiple of tp*pp*cp");
  // the memory model's rule: every parameter dense, held by tp*pp ranks, sharded over dp*cp
  const double model_parallel = static_cast<double>(mo.tp) * mo.pp;
  const double dp = gpus / model_parallel;
  const ModelStates s = sharded_states(n / model_parallel, 0, StateBytes{sb[0], sb[1], sb[2]}, mo.zero, dp, dp);
  const double w = s.weights, g = s.grads, o = s.optimizer;
  double peak = w + g + o;
  Json j = {{"params", n},
            {"weights_bytes", w},
            {"grads_bytes", g},
            {"optimizer_bytes", o},
            {"activations_bytes", 0},
            {"peak_bytes", peak},
            {"capacity_bytes", gpu.hbm_bytes},
            {"fits", peak <= gpu.hbm_bytes}};
  std::ostringstream text;
  text << "model states of " << n / 1e9 << "B parameters at " << sb[0] + sb[1] + sb[2] << " B/param: " << gb(peak)
       << " per GPU (weights " << gb(w) << ", gradients " << gb(g) << ", optimizer " << gb(o) << ") of "
       << gb(gpu.hbm_bytes) << " on " << gpu.id << " -> " << (peak <= gpu.hbm_bytes ? "fits" : "OUT OF MEMORY")
       << "\n";
  std::cout << (mo.json ? j.dump(2) + "\n" : text.str());
  return 0;
}

/// The flags of the `memory` command that set a training key, and the key each sets.
const std::map<std::string, std::string>& memory_flag_keys()
{
  static const std::map<std::string, std::string> keys = {
      // clang-format off
      {"--tp", "tp"}, {"--pp", "pp"}, {"--cp", "cp"}, {"--gpus", "dp"}, {"--vpp", "vpp"}, {"--zero", "zero"},
      {"--micro-batch", "micro_batch"}, {"--global-batch", "global_batch"}, {"--recompute", "recompute"},
      {"--schedule", "pipeline_schedule"}, {"--precision", "precision"}, {"--sequence-parallel", "sequence_parallel"},
      {"--flash-attention", "flash_attention"}, {"--no-flash-attention", "flash_attention"},
      {"--framework", "framework"}, {"--state-bytes", "state_bytes"},
      // clang-format on
  };
  return keys;
}

/// `--set training.KEY=VALUE`: any training key the command has no flag for (ep, data_parallel,
/// dp_shard, lora.rank, ...), checked as the experiment file's would be.
Setting memory_set(const std::string& text)
{
  const SourceLocation where = command_line("--set " + text);
  const auto eq = text.find('=');
  const std::string path = eq == std::string::npos ? text : text.substr(0, eq);
  if (eq == std::string::npos || path.rfind("training.", 0) != 0)
    throw ConfigError(where, "'" + text + "' is not training.KEY=VALUE",
                      "--set training.ep=8: a dotted key of the experiment's training table, '=', its value");
  const std::string key = path.substr(9, path.find('.', 9) - 9);
  for (const auto& [flag, k] : memory_flag_keys())
    if (key == k)
      throw ConfigError(where, "training." + key + " has its own flag", flag);
  return {path, text.substr(eq + 1), where};
}

/// The layout the flags describe, read by the experiment's own training parser: the same keys,
/// defaults and rules as a file's `training:` section, each error naming the flag it came from.
TrainingSpec memory_layout(const MemOptions& mo, const ModelSpec& m, const Catalog& c, const GpuSpec& gpu,
                           const std::vector<double>& sb)
{
  const int replica = mo.tp * mo.pp * mo.cp;
  const int gpus = mo.gpus_given ? mo.gpus : replica;
  if (gpus % replica != 0)
    throw ConfigError(command_line("--gpus"),
                      std::to_string(gpus) + " GPUs do not divide into tp*pp*cp = " + std::to_string(replica),
                      "a multiple of tp*pp*cp");
  const int dp = gpus / replica;
  std::vector<Setting> settings;
  auto set = [&](const std::string& flag, const std::string& text, const std::string& part = "") {
    settings.push_back({"training." + memory_flag_keys().at(flag) + part, text, command_line(flag)});
  };
  set("--tp", std::to_string(mo.tp));
  set("--pp", std::to_string(mo.pp));
  set("--cp", std::to_string(mo.cp));
  set("--gpus", std::to_string(dp));
  set("--vpp", std::to_string(mo.vpp));
  set("--micro-batch", std::to_string(mo.micro_batch));
  if (mo.zero_given)
    set("--zero", std::to_string(mo.zero));
  // by default as many micro-batches per step as pipeline stages: a 1F1B pipeline full, as every
  // pipelined run keeps it (one micro-batch per step would leave stage 0 one in flight)
  const long long per_step = static_cast<long long>(mo.micro_batch) * dp * mo.pp;
  set("--global-batch", std::to_string(mo.global_batch > 0 ? mo.global_batch : std::min<long long>(per_step, 1 << 30)));
  set("--recompute", mo.recompute);
  if (!mo.schedule.empty())
    set("--schedule", mo.schedule);
  set("--precision", to_string(precision_argument(mo.precision, gpu)));
  if (mo.sequence_parallel)
    set("--sequence-parallel", "true");
  if (mo.flash_given)
    set(mo.flash ? "--flash-attention" : "--no-flash-attention", mo.flash ? "true" : "false");
  set("--framework", mo.framework);
  const char* parts[] = {".weights", ".grads", ".optimizer"};
  for (std::size_t i = 0; i < sb.size(); ++i) {
    std::ostringstream text;
    text.precision(17);
    text << sb[i];
    set("--state-bytes", text.str(), parts[i]);
  }
  for (const auto& s : mo.sets)
    settings.push_back(memory_set(s));
  const YamlNode doc = apply_settings(YamlNode::load_string("training: {}\n", "command line"), settings);
  YamlMap top(doc, "command line");
  return parse_training(top.require("training"), gpus, m, c.frameworks());
}

int memory_of_model(const MemOptions& mo, const Catalog& c, const GpuSpec& gpu, const std::vector<double>& sb)
{
  if (mo.model.empty())
    throw ConfigError(command_line("--model"), "no model given", "--model NAME|FILE or --params N");
  ModelSpec m = model_argument(c, mo.model);
  require_training_length(m, mo.seq_given, "--seq LENGTH (e.g. --seq 4096)");
  if (mo.seq_given)
    m.seq_len = mo.seq;
  TrainingSpec t = memory_layout(mo, m, c, gpu, sb);
  std::string flash_origin = mo.flash ? "--flash-attention" : "--no-flash-attention";
  if (!mo.flash_given)
    t.flash_attention = default_flash_attention(t, gpu, &flash_origin);
  const long long gpus = t.gpus();
  const std::string batch_origin = mo.global_batch > 0 ? "--global-batch"
                                   : t.pp > 1 ? "default: micro-batch x dp x pp, the pipeline full; --global-batch sets it"
                                              : "default: micro-batch x dp; --global-batch sets it";
  CostModel cost(m, t, gpu);
  MemoryBreakdown b = cost.peak_memory();
  Json j = {{"model", m.name},
            {"params", m.total_params()},
            {"gpu", gpu.id},
            {"gpus", gpus},
            {"ep", t.ep},
            {"data_parallel", t.data_parallel_name()},
            {"weights_bytes", b.weights},
            {"grads_bytes", b.grads},
            {"optimizer_bytes", b.optimizer},
            {"activations_bytes", b.activations},
            {"buffers_bytes", b.buffers},
            {"reserved_bytes", b.reserved},
            {"peak_bytes", b.peak},
            {"capacity_bytes", b.capacity},
            {"fits", b.fits},
            {"dominant", b.dominant},
            {"stage", b.stage},
            {"global_batch", t.global_batch},
            {"flash_attention", t.flash_attention},
            {"assumptions", {{"global_batch", batch_origin}, {"flash_attention", flash_origin}}}};
  std::ostringstream text;
  text << m.name << " (" << m.total_params() / 1e9 << "B parameters) on " << gpus << " x " << gpu.id << ": tp " << t.tp
       << ", pp " << t.pp << ", cp " << t.cp << ", dp " << t.dp
       << (t.ep > 1 ? ", ep " + std::to_string(t.ep) + ", etp " + std::to_string(t.etp) : "") << ", zero " << t.zero
       << describe_strategy(t) << ", micro-batch " << t.micro_batch << ", seq " << m.seq_len << ", recompute "
       << to_string(t.recompute) << "\n";
  text << "  global batch " << t.global_batch << " (" << batch_origin << ")\n";
  text << "  flash attention " << (t.flash_attention ? "on" : "off") << " (" << flash_origin << ")\n";
  text << "  weights      " << gb(b.weights) << "\n  gradients    " << gb(b.grads) << "\n  optimizer    "
       << gb(b.optimizer) << "\n  activations  " << gb(b.activations) << "\n  buffers      " << gb(b.buffers)
       << "\n  reserved     " << gb(b.reserved) << " (CUDA context, workspaces, 5 % fragmentation of activations and buffers)\n"
       << "  peak         " << gb(b.peak) << " of " << gb(b.capacity) << " (pipeline stage " << b.stage << ") -> "
       << (b.fits ? "fits" : "OUT OF MEMORY, dominated by " + b.dominant) << "\n";
  std::cout << (mo.json ? j.dump(2) + "\n" : text.str());
  return 0;
}

void add_memory_command(CLI::App& app, Action& action)
{
  auto mo = std::make_shared<MemOptions>();
  CLI::App* mem = app.add_subcommand("memory", "Memory per GPU of a training layout: weights, gradients, optimizer "
                                               "states, activations, buffers, and whether it fits");
  mem->add_option("--model", mo->model, "preset name, model YAML, or Hugging Face config.json");
  mem->add_option("--params", mo->params, "parameter count instead of a model (model states only, no activations)");
  mem->add_option("--platform", mo->platform, "platform (for its GPU)");
  mem->add_option("--gpu", mo->gpu, "GPU id, e.g. h100-sxm5-80gb");
  mem->add_option("--gpus", mo->gpus, "GPUs, tp*pp*cp*dp (default: one replica, tp*pp*cp)");
  mem->add_option("--tp", mo->tp, "tensor parallel");
  mem->add_option("--pp", mo->pp, "pipeline parallel");
  mem->add_option("--cp", mo->cp, "context parallel");
  mem->add_option("--vpp", mo->vpp, "virtual stages per pipeline rank");
  mem->add_option("--zero", mo->zero, "ZeRO stage 0-3");
  mem->add_option("--micro-batch", mo->micro_batch, "sequences per micro-batch");
  mem->add_option("--global-batch", mo->global_batch,
                  "sequences per step (default: micro-batch x dp x pp, a full 1F1B pipeline)");
  mem->add_option("--seq", mo->seq, "sequence length (default: the model's)");
  mem->add_option("--recompute", mo->recompute, "none | selective | full");
  mem->add_option("--schedule", mo->schedule,
                  join(ScheduleRegistry::instance().names(), " | ") + " (default: " + default_schedule(2) +
                      " with --vpp > 1, else " + default_schedule(1) + ")");
  mem->add_option("--precision", mo->precision, "fp32 | tf32 | fp16 | bf16 | fp8 | fp4");
  mem->add_flag("--sequence-parallel", mo->sequence_parallel, "Megatron sequence parallelism");
  mem->add_flag("--flash-attention,!--no-flash-attention", mo->flash,
                "flash attention on or off (default: on where the framework has a flash-attention kernel for the GPU)");
  mem->add_option("--framework", mo->framework, "training framework whose properties apply (default megatron)");
  mem->add_option("--state-bytes", mo->state_bytes,
                  "bytes per parameter of weights,grads,optimizer (default: the framework's, e.g. megatron bf16 "
                  "2,4,12)");
  mem->add_option("--set", mo->sets,
                  "training.KEY=VALUE for a training key without a flag of its own, e.g. --set training.ep=8 "
                  "--set training.data_parallel=hsdp --set training.lora.rank=16 (repeatable)");
  mem->add_flag("--json", mo->json, "print JSON");
  mem->callback([mo, mem, &action] {
    mo->gpus_given = mem->count("--gpus") > 0;
    mo->seq_given = mem->count("--seq") > 0;
    mo->zero_given = mem->count("--zero") > 0;
    mo->flash_given = mem->count("--flash-attention") + mem->count("--no-flash-attention") > 0;
    action = [mo] {
      check_memory_flags(*mo);
      auto sb = state_bytes_argument(mo->state_bytes);
      Catalog c = Catalog::open();
      GpuSpec gpu = gpu_argument(c, mo->gpu, mo->platform);
      return mo->params.empty() ? memory_of_model(*mo, c, gpu, sb)
                                : memory_of_params(*mo, gpu, states_of(*mo, c, gpu, sb));
    };
  });
}

struct EstOptions {
  std::string model;
  std::string params;
  std::string tokens = "1e12";
  std::string gpu;
  std::string platform;
  int gpus = 1;
  double mfu = 0.5;
  std::string precision;
  double usd = -1;
  bool usd_given = false;
  bool json = false;
};

int estimate(const EstOptions& eo)
{
  int_argument(eo.gpus, "--gpus", 1, kMaxGpus);
  if (!(eo.mfu > 0 && eo.mfu <= 1))
    throw ConfigError(command_line("--mfu"), std::to_string(eo.mfu) + " is out of range", "a fraction in (0, 1]");
  if (eo.usd_given)
    number_argument(eo.usd, "--usd-per-gpu-hour", 0, 1e6);
  double tokens = positive_number(eo.tokens, "--tokens");
  Catalog c = Catalog::open();
  GpuSpec gpu = gpu_argument(c, eo.gpu, eo.platform);
  Precision prec = precision_argument(eo.precision, gpu);
  double flops = 0;
  std::string basis;
  if (!eo.params.empty()) {
    flops = 6 * positive_number(eo.params, "--params") * tokens;
    basis = "6 N D";
  } else if (!eo.model.empty()) {
    ModelSpec m = model_argument(c, eo.model);
    require_training_length(m, false,
                            "a model file with hf_config and seq_len (model: {hf_config: config.json, seq_len: "
                            "4096}), or --params N");
    TrainingSpec t;
    t.global_batch = 1;
    t.frameworks = c.frameworks();
    CostModel cost(m, t, gpu);
    flops = cost.model_flops_per_step() / m.seq_len * tokens;
    basis = "model FLOPs per token of " + m.name;
  } else {
    throw ConfigError(command_line("--params"), "no model size given", "--params N or --model NAME");
  }
  double rate = gpu.peak(prec) * eo.gpus * eo.mfu;
  double seconds = flops / rate;
  double gpu_hours = seconds / 3600 * eo.gpus;
  double usd = eo.usd_given ? eo.usd
                            : (!eo.platform.empty()
                                   ? c.platform(eo.platform, command_line("--platform")).cost.usd_per_gpu_hour
                                   : -1);
  Json j{{"basis", basis},
         {"total_flops", flops},
         {"gpu", gpu.id},
         {"gpus", eo.gpus},
         {"peak_flops_per_gpu", gpu.peak(prec)},
         {"mfu", eo.mfu},
         {"seconds", seconds},
         {"days", seconds / 86400},
         {"years", seconds / (365.25 * 86400)},
         {"gpu_hours", gpu_hours}};
  if (usd >= 0)
    j["usd"] = gpu_hours * usd;
  std::ostringstream o;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%.3g FLOPs (%s) on %d x %s at %.0f %% MFU of %.0f TFLOP/s (%s):\n  %.3g s = %.1f days = %.2f "
                "years, %.3g GPU-hours",
                flops, basis.c_str(), eo.gpus, gpu.id.c_str(), 100 * eo.mfu, gpu.peak(prec) / 1e12, to_string(prec),
                seconds, seconds / 86400, seconds / (365.25 * 86400), gpu_hours);
  o << buf;
  if (usd >= 0) {
    std::snprintf(buf, sizeof buf, ", $%.3g at $%.2f per GPU-hour", gpu_hours * usd, usd);
    o << buf;
  }
  o << "\n";
  std::cout << (eo.json ? j.dump(2) + "\n" : o.str());
  return 0;
}

void add_estimate_command(CLI::App& app, Action& action)
{
  auto eo = std::make_shared<EstOptions>();
  CLI::App* est = app.add_subcommand("estimate", "Training compute and time for a token budget: FLOPs (6ND, or the "
                                                 "model's exact count), time at a given MFU, GPU-hours, cost");
  est->add_option("--params", eo->params, "parameter count N (FLOPs = 6 N D)");
  est->add_option("--model", eo->model, "model instead of --params (FLOPs per token of the model, attention included)");
  est->add_option("--tokens", eo->tokens, "training tokens D (default 1e12)");
  est->add_option("--gpu", eo->gpu, "GPU id");
  est->add_option("--platform", eo->platform, "platform (its GPU and $/GPU-hour)");
  est->add_option("--gpus", eo->gpus, "number of GPUs");
  est->add_option("--mfu", eo->mfu, "model FLOPs utilisation, 0-1 (default 0.5)");
  est->add_option("--precision", eo->precision, "precision of the peak (default bf16, fp16 without bf16)");
  est->add_option("--usd-per-gpu-hour", eo->usd, "price (default: the platform's)");
  est->add_flag("--json", eo->json, "print JSON");
  est->callback([eo, est, &action] {
    eo->usd_given = est->count("--usd-per-gpu-hour") > 0;
    action = [eo] { return estimate(*eo); };
  });
}

void add_model_list_command(CLI::App& app, Action& action)
{
  CLI::App* model = app.add_subcommand("model", "Model presets: list them with their size and shape");
  model->require_subcommand(1);
  CLI::App* list = model->add_subcommand("list", "List the model presets");
  list->callback([&action] {
    action = [] {
      Catalog c = Catalog::open();
      for (const auto& n : model_preset_names(c.models_dir())) {
        ModelSpec m = load_model_preset(n, c.models_dir(), command_line("model list"));
        std::printf("%-14s %8.2fB  layers %3d  hidden %5d  heads %3d/%-3d  ffn %6d  vocab %6d  seq %5d\n", n.c_str(),
                    m.total_params() / 1e9, m.layers, m.hidden, m.heads, m.kv_heads, m.ffn_hidden, m.vocab, m.seq_len);
      }
      return 0;
    };
  });
}

} // namespace

void add_model_commands(CLI::App& app, Action& action)
{
  add_memory_command(app, action);
  add_estimate_command(app, action);
  add_model_list_command(app, action);
}

} // namespace clustersim
