#include "sim/study/Metrics.hpp"
#include "strategies/PipelineSchedule.hpp"
#include "strategies/StepBuilder.hpp"

#include "topology/config/Suggest.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace clustersim {

namespace {

Metric step(const char* key, const char* unit, const char* doc, double RunMetrics::* field, bool before = false)
{
  Metric m{key, unit, doc, MetricPart::step};
  m.field = field;
  m.before_run = before;
  return m;
}

Metric derived(const char* key, const char* unit, const char* doc, double (*f)(const RunMetrics&))
{
  Metric m{key, unit, doc, MetricPart::step};
  m.derived = f;
  return m;
}

/// A step figure the text report tells in its own words.
Metric told(Metric m)
{
  m.narrated = true;
  return m;
}

Metric share(const char* key, const char* label, const char* doc, double Breakdown::* field)
{
  Metric m{key, "s", doc, MetricPart::breakdown, label};
  m.share = field;
  return m;
}

Metric memory(const char* key, const char* label, const char* doc, double MemoryBreakdown::* field)
{
  Metric m{key, "bytes", doc, MetricPart::memory, label};
  m.memory = field;
  m.before_run = true;
  return m;
}

/// A layout key kept as a number or a flag of TrainingSpec.
template <auto Field>
LayoutField plain(const char* key, const char* doc)
{
  using T = std::remove_reference_t<decltype(std::declval<TrainingSpec&>().*Field)>;
  return {key, doc, [](const TrainingSpec& t) { return Json(t.*Field); },
          [](TrainingSpec& t, const Json& v) { t.*Field = v.get<T>(); }};
}

/// A layout key kept as an enum of TrainingSpec, written by its name in `Names()`.
template <auto Field, const std::vector<std::string>& (*Names)()>
LayoutField named(const char* key, const char* doc)
{
  using E = std::remove_reference_t<decltype(std::declval<TrainingSpec&>().*Field)>;
  return {key, doc, [](const TrainingSpec& t) { return Json(Names()[static_cast<std::size_t>(t.*Field)]); },
          [](TrainingSpec& t, const Json& v) {
            const auto& names = Names();
            const auto it = std::find(names.begin(), names.end(), v.get<std::string>());
            if (it == names.end())
              throw std::invalid_argument("unknown layout name '" + v.get<std::string>() + "'; valid: " + join(names));
            t.*Field = static_cast<E>(it - names.begin());
          }};
}

/// A layout key kept as the name of a registered class (a TrainingSpec string), checked against
/// its registry when read back.
template <auto Field, class Registered> LayoutField registered(const char* key, const char* doc)
{
  return {key, doc, [](const TrainingSpec& t) { return Json(t.*Field); },
          [](TrainingSpec& t, const Json& v) {
            const std::string name = v.get<std::string>();
            if (!Registry<Registered>::instance().has(name))
              throw std::invalid_argument(
                  unknown_name(Registered::kRegistryKind, name, Registry<Registered>::instance().names()));
            t.*Field = name;
          }};
}

} // namespace

Json metric_json(double v)
{
  return std::isfinite(v) ? Json(v) : Json();
}

double metric_value(const Json& v)
{
  return v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.get<double>();
}

double Metric::get(const RunMetrics& m) const
{
  if (derived)
    return derived(m);
  if (field)
    return m.*field;
  if (share)
    return m.breakdown.*share;
  return m.memory.*memory;
}

void Metric::set(RunMetrics& m, double v) const
{
  if (field)
    m.*field = v;
  else if (share)
    m.breakdown.*share = v;
  else if (memory)
    m.memory.*memory = v;
}

const std::vector<Metric>& report_metrics()
{
  static const std::vector<Metric> table{
      told(step("step_time_s", "s", "time of one optimizer step (the slowest rank's)", &RunMetrics::step_time_s)),
      told(step("alone_step_time_s", "s",
                "the step alone on its cluster: with cluster.jobs, simulated without them; else step_time_s",
                &RunMetrics::alone_step_s)),
      told(derived("shared_slowdown", "1", "step_time_s / alone_step_time_s - 1: what the jobs of cluster.jobs cost it",
                   [](const RunMetrics& m) { return m.alone_step_s > 0 ? m.step_time_s / m.alone_step_s - 1 : 0.0; })),
      derived("exposed_comm_s", "s", "communication the critical rank waited for: the breakdown's exposed terms",
              [](const RunMetrics& m) { return m.breakdown.exposed_comm(); }),
      told(derived(
          "network_bound_share", "1",
          "exposed_comm_s / step_time_s: the share of the step the critical rank "
          "waited for communication",
          [](const RunMetrics& m) { return m.step_time_s > 0 ? m.breakdown.exposed_comm() / m.step_time_s : 0.0; })),
      told(step("comm_s", "s",
                "the critical rank's collectives (from every member's arrival) and transfers (from both sides'), "
                "summed: they overlap, so the sum can exceed the step",
                &RunMetrics::comm_s)),
      told(step("comm_idle_s", "s",
                "the same collectives and transfers, each timed alone on the fabric (its own flows only; a "
                "background's share stays taken), summed",
                &RunMetrics::comm_idle_s)),
      told(step("comm_slowed_s", "s",
                "each of those collectives and transfers: its time beyond its time alone, from links it shared with "
                "other flows of the step or of other jobs, summed",
                &RunMetrics::comm_slowed_s)),
      told(
          step("mfu", "1", "model FLOPs per step / (step time x GPUs x the precision's dense peak)", &RunMetrics::mfu)),
      told(step("hfu", "1", "as mfu, with the recomputed FLOPs counted", &RunMetrics::hfu)),
      told(step("tokens_per_s", "tokens/s", "global batch x sequence length / step time", &RunMetrics::tokens_per_s)),
      told(step("tokens_per_s_per_gpu", "tokens/s", "tokens_per_s / GPUs", &RunMetrics::tokens_per_s_per_gpu)),
      told(
          step("tflops_per_gpu_model", "TFLOP/s", "model FLOPs per second per GPU", &RunMetrics::tflops_per_gpu_model)),
      told(step("tflops_per_gpu_hardware", "TFLOP/s", "hardware FLOPs (recompute included) per second per GPU",
                &RunMetrics::tflops_per_gpu_hardware)),
      told(step("scaling_efficiency", "1", "tokens/s per GPU against the run's baseline (baseline_gpus)",
                &RunMetrics::scaling_efficiency)),
      step("model_flops_per_step", "FLOP", "forward and backward of every layer, attention and logits, no recompute",
           &RunMetrics::model_flops_per_step),
      step("hardware_flops_per_step", "FLOP", "model FLOPs plus recomputation", &RunMetrics::hardware_flops_per_step),
      step("params", "parameters", "the model's parameters", &RunMetrics::params, true),
      told(step("budget_tokens", "tokens", "the token budget the time and cost figures are for",
                &RunMetrics::budget_tokens, true)),
      told(step("time_to_train_s", "s", "budget_tokens / tokens_per_s", &RunMetrics::time_to_train_s)),
      told(derived("time_to_train_days", "days", "time_to_train_s in days",
                   [](const RunMetrics& m) { return m.time_to_train_s / 86400; })),
      told(step("gpu_hours", "GPU-hours", "time to train x GPUs", &RunMetrics::gpu_hours)),
      told(step("energy_mwh", "MWh", "GPUs at board power plus node overhead, times PUE, over the time to train",
                &RunMetrics::energy_mwh)),
      told(step("cost_usd", "USD", "gpu_hours x usd_per_gpu_hour", &RunMetrics::cost_usd)),
      told(step("usd_per_gpu_hour", "USD",
                "the $/GPU-hour of the cost figures: the platform's rental price (cost.usd_per_gpu_hour), or "
                "owned_usd_per_gpu_hour where cost.basis is owned",
                &RunMetrics::usd_per_gpu_hour)),
      told(derived("usd_per_mtokens", "USD", "dollars per million tokens: usd_per_gpu_hour x GPUs / tokens per hour",
                   [](const RunMetrics& m) {
                     return m.tokens_per_s > 0 ? m.usd_per_gpu_hour * m.gpus / (m.tokens_per_s * 3600) * 1e6
                                               : std::numeric_limits<double>::quiet_NaN();
                   })),
      told(step("capex_usd", "USD",
                "the cluster's nodes, fabric (switches, transceivers, cables) and facility, priced from "
                "platforms/prices.yaml and the platform's cost overrides; null where a part is not priced",
                &RunMetrics::capex_usd)),
      told(step("network_capex_share", "1", "switches, transceivers and cables over capex_usd",
                &RunMetrics::network_capex_share)),
      told(step("owned_usd_per_gpu_hour", "USD",
                "capex_usd written off over the years (cost.years or the price table's), plus energy (IT load x "
                "PUE x $/kWh), per GPU-hour",
                &RunMetrics::owned_usd_per_gpu_hour)),
      share("compute_s", "compute", "forward and backward compute of the critical rank (recompute apart)",
            &Breakdown::compute),
      share("recompute_s", "recompute", "recomputed forward passes", &Breakdown::recompute),
      share("optimizer_s", "optimizer", "the optimizer step", &Breakdown::optimizer),
      share("exposed_tp_s", "exposed TP comm", "tensor-parallel communication the compute waited for",
            &Breakdown::exposed_tp),
      share("exposed_cp_s", "exposed CP comm", "context-parallel communication the compute waited for",
            &Breakdown::exposed_cp),
      share("exposed_pp_s", "exposed PP comm", "pipeline transfers the compute waited for", &Breakdown::exposed_pp),
      share("exposed_dp_s", "exposed DP comm",
            "data-parallel gradient and parameter communication the compute waited for", &Breakdown::exposed_dp),
      share("exposed_ep_s", "exposed EP comm", "expert-parallel all-to-alls the compute waited for",
            &Breakdown::exposed_ep),
      share("bubble_s", "bubble / wait", "waiting for other ranks (pipeline bubble, stragglers)", &Breakdown::bubble),
      share("host_bound_s", "host-bound", "the next kernel ready but not yet issued by the host CPU", &Breakdown::host),
      share("other_s", "other", "idle with nothing it waited for", &Breakdown::other),
      memory("weights_bytes", "weights", "weights held per GPU at the peak", &MemoryBreakdown::weights),
      memory("grads_bytes", "gradients", "gradients", &MemoryBreakdown::grads),
      memory("optimizer_bytes", "optimizer states", "master weights and optimizer moments",
             &MemoryBreakdown::optimizer),
      memory("activations_bytes", "activations", "activations kept for backward", &MemoryBreakdown::activations),
      memory("buffers_bytes", "buffers", "communication buckets, logits workspace", &MemoryBreakdown::buffers),
      memory("reserved_bytes", "reserve", "CUDA context, library workspaces, allocator fragmentation",
             &MemoryBreakdown::reserved),
      memory("peak_bytes", "", "the peak per GPU: the sum of the above", &MemoryBreakdown::peak),
      memory("capacity_bytes", "", "the GPU's memory", &MemoryBreakdown::capacity),
  };
  return table;
}

const Metric* find_metric(const std::string& key)
{
  for (const Metric& m : report_metrics())
    if (key == m.key)
      return &m;
  return nullptr;
}

const std::vector<LayoutField>& layout_fields()
{
  using T = TrainingSpec;
  static const std::vector<LayoutField> table{
      plain<&T::tp>("tp", "tensor parallel"),
      plain<&T::pp>("pp", "pipeline parallel"),
      plain<&T::dp>("dp", "data parallel"),
      plain<&T::cp>("cp", "context parallel"),
      plain<&T::ep>("ep", "expert parallel"),
      plain<&T::etp>("etp", "expert tensor parallel"),
      plain<&T::vpp>("vpp", "virtual pipeline stages per rank"),
      plain<&T::zero>("zero", "ZeRO stage"),
      {"data_parallel", "data-parallel strategy (a registered name; zero is its shorthand)",
       [](const TrainingSpec& t) { return Json(t.data_parallel_name()); },
       [](TrainingSpec& t, const Json& v) { // after zero: a name zero already says stays zero's
         const std::string name = v.get<std::string>();
         if (!DataParallelRegistry::instance().has(name))
           throw std::invalid_argument(
               unknown_name(DataParallelStrategy::kRegistryKind, name, DataParallelRegistry::instance().names()));
         t.data_parallel = name == TrainingSpec::zero_strategy(t.zero) ? "" : name;
       }},
      plain<&T::dp_shard>("dp_shard", "replicas per shard group of a hybrid strategy (0: all of dp)"),
      {"lora_rank", "LoRA adapters' rank (0: every weight trained)",
       [](const TrainingSpec& t) { return Json(t.lora.rank); },
       [](TrainingSpec& t, const Json& v) { t.lora.rank = v.get<int>(); }},
      {"lora_targets", "linear layers with LoRA adapters, '+'-joined (empty without LoRA)",
       [](const TrainingSpec& t) { return Json(t.frozen_base() ? join(t.lora.targets, "+") : ""); },
       [](TrainingSpec& t, const Json& v) { // after lora_rank
         const std::string s = v.get<std::string>();
         if (s.empty())
           return;
         t.lora.targets.clear();
         for (std::size_t at = 0; at <= s.size();) {
           const std::size_t end = std::min(s.find('+', at), s.size());
           const std::string x = s.substr(at, end - at);
           if (std::find(lora_target_names().begin(), lora_target_names().end(), x) == lora_target_names().end())
             throw std::invalid_argument(unknown_name("LoRA target", x, lora_target_names()));
           t.lora.targets.push_back(x);
           at = end + 1;
         }
       }},
      registered<&T::schedule, PipelineSchedule>("pipeline_schedule", "pipeline schedule"),
      plain<&T::sequence_parallel>("sequence_parallel", "Megatron sequence parallelism"),
      named<&T::recompute, recompute_names>("recompute", "activation recomputation"),
      plain<&T::micro_batch>("micro_batch", "sequences per micro-batch"),
      plain<&T::global_batch>("global_batch", "sequences per step"),
      named<&T::precision, precision_names>("precision", "number format of the GEMMs"),
      plain<&T::flash_attention>("flash_attention", "fused attention kernels"),
      named<&T::framework, framework_names>("framework", "training framework"),
  };
  return table;
}

void put_layout(Json& row, const TrainingSpec* t)
{
  for (const LayoutField& f : layout_fields())
    row[f.key] = t ? f.get(*t) : Json();
}

void put_metric_columns(Json& row, const RunMetrics* m, bool ran)
{
  for (const Metric& k : report_metrics())
    row[k.key] = m && (ran || k.before_run) ? metric_json(k.get(*m)) : Json();
}

std::string metrics_markdown()
{
  std::string s;
  const char* part[] = {"", "breakdown.", "memory."};
  for (const Metric& k : report_metrics())
    s += std::string("- `") + part[static_cast<int>(k.part)] + k.key + "` (" + k.unit + "): " + k.doc + "\n";
  return s;
}

} // namespace clustersim
