#include "strategies/LayoutRules.hpp"

#include "strategies/PipelineLayout.hpp"
#include "strategies/PipelineSchedule.hpp"
#include "strategies/StepBuilder.hpp"
#include "strategies/workload/Workload.hpp"

#include <vector>

namespace clustersim {

bool shards_with_pipeline(Framework f)
{
  // Megatron-LM's distributed optimizer shards optimizer states only (ZeRO-1) under pipeline
  // parallelism; DeepSpeed asserts "ZeRO-2 and ZeRO-3 are incompatible with pipeline
  // parallelism"; torchtitan and NeMo AutoModel apply FSDP2 to each pipeline stage.
  return f == Framework::torchtitan || f == Framework::automodel || f == Framework::other;
}

bool shards_hybrid(Framework f)
{
  // torchtitan's data_parallel_replicate_degree x data_parallel_shard_degree (torchtitan
  // job_config.py :313, :324, see LaunchConfig.cpp), NeMo AutoModel's dp_replicate_size
  // (NVIDIA-NeMo/Automodel@0565679 nemo_automodel/components/distributed/fsdp2.py,
  // FSDP2Manager._get_device_mesh: mesh pp, dp_replicate, dp_shard, cp, tp) and PyTorch FSDP's
  // ShardingStrategy.HYBRID_SHARD. Megatron-LM and DeepSpeed are written here without it.
  return f == Framework::torchtitan || f == Framework::automodel || f == Framework::fsdp || f == Framework::other;
}

namespace {

std::string s(long long v)
{
  return std::to_string(v);
}

using Rule = std::optional<LayoutViolation> (*)(const TrainingSpec&, const ModelSpec&, long long);

std::optional<LayoutViolation> broken(std::string key, std::string reason, std::string message, std::string valid)
{
  return LayoutViolation{std::move(key), std::move(reason), std::move(message), std::move(valid)};
}

std::optional<LayoutViolation> gpu_count(const TrainingSpec& t, const ModelSpec&, long long gpus)
{
  if (t.gpus() == gpus)
    return std::nullopt;
  return broken("dp", "tp*pp*cp*dp is not the GPU count",
                "tp*pp*cp*dp = " + s(t.tp) + "*" + s(t.pp) + "*" + s(t.cp) + "*" + s(t.dp) + " = " + s(t.gpus()) +
                    " but cluster.gpus is " + s(gpus),
                "a layout with tp*pp*cp*dp == " + s(gpus));
}

std::optional<LayoutViolation> heads_by_tp(const TrainingSpec& t, const ModelSpec& m, long long)
{
  if (m.heads % t.tp == 0)
    return std::nullopt;
  return broken("tp", "tp does not divide the attention heads",
                "tp " + s(t.tp) + " does not divide the model's " + s(m.heads) + " attention heads",
                "a divisor of heads");
}

std::optional<LayoutViolation> kv_heads_by_tp(const TrainingSpec& t, const ModelSpec& m, long long)
{
  if (m.kv_heads % t.tp == 0 || t.tp % m.kv_heads == 0)
    return std::nullopt;
  return broken("tp", "tp and the KV heads do not divide one another",
                "tp " + s(t.tp) + " and kv_heads " + s(m.kv_heads) + " do not divide one another",
                "tp dividing kv_heads, or kv_heads dividing tp (replicated KV heads)");
}

std::optional<LayoutViolation> batch_multiple(const TrainingSpec& t, const ModelSpec&, long long)
{
  const long long per_step = static_cast<long long>(t.micro_batch) * t.dp;
  if (t.global_batch % per_step == 0)
    return std::nullopt;
  return broken("global_batch", "global batch not a multiple of dp x micro-batch",
                "global_batch " + s(t.global_batch) + " is not a multiple of micro_batch*dp = " + s(t.micro_batch) +
                    "*" + s(t.dp),
                "a multiple of " + s(per_step));
}

// a step's micro-batches are named in its tasks' 24-bit labels (Workload.hpp)
static_assert(kMaxMicroBatches <= kMaxTaskMicroBatch + 1LL, "a task must be able to name every micro-batch");

std::optional<LayoutViolation> micro_batch_limit(const TrainingSpec& t, const ModelSpec&, long long)
{
  if (t.micro_batches() <= kMaxMicroBatches)
    return std::nullopt;
  return broken("global_batch", "more micro-batches per pipeline than a step can hold",
                "global_batch / (micro_batch*dp) = " + s(t.micro_batches()) +
                    " micro-batches per pipeline per step, more than the " + s(kMaxMicroBatches) +
                    " a simulated step holds",
                "a larger micro_batch or a smaller global_batch");
}

/// Layer slots of the pipeline split: the layers, plus the embedding and the loss where they
/// count as slots.
long long slots(const TrainingSpec& t, const ModelSpec& m)
{
  return m.layers + (t.embedding_slot ? 1 : 0) + (t.loss_slot ? 1 : 0);
}

std::optional<LayoutViolation> stages_vs_layers(const TrainingSpec& t, const ModelSpec& m, long long)
{
  if (!t.pipeline_layout.empty() || t.pp <= slots(t, m))
    return std::nullopt;
  return broken("pp", "more pipeline stages than layers",
                "pp " + s(t.pp) + " exceeds the model's " + s(slots(t, m)) + " layers" +
                    (slots(t, m) > m.layers ? " and slots" : ""),
                "at most one pipeline stage per layer");
}

std::optional<LayoutViolation> vpp_without_pp(const TrainingSpec& t, const ModelSpec&, long long)
{
  if (t.vpp == 1 || t.pp > 1)
    return std::nullopt;
  return broken("vpp", "virtual stages without pipeline parallelism", "vpp " + s(t.vpp) + " needs pipeline parallelism",
                "vpp: 1 when pp is 1");
}

std::optional<LayoutViolation> chunks_vs_layers(const TrainingSpec& t, const ModelSpec& m, long long)
{
  if (!t.pipeline_layout.empty() || t.vpp == 1 || static_cast<long long>(t.pp) * t.vpp <= slots(t, m))
    return std::nullopt;
  return broken("vpp", "more model chunks than layers",
                "pp*vpp = " + s(static_cast<long long>(t.pp) * t.vpp) + " chunks exceed the model's " +
                    s(slots(t, m)) + " layers" + (slots(t, m) > m.layers ? " and slots" : ""),
                "pp*vpp <= layers, or the embedding and loss as slots (account_for_*_in_pipeline_split), or a "
                "pipeline_layout");
}

std::optional<LayoutViolation> layout_buildable(const TrainingSpec& t, const ModelSpec& m, long long)
{
  auto why = layout_problem(m, t);
  if (!why)
    return std::nullopt;
  return broken(t.pipeline_layout.empty() ? "vpp" : "pipeline_layout", "the pipeline layout cannot be built", *why,
                "a layout of pp*vpp stages placing every layer, the embedding first and the loss last");
}

const PipelineSchedule& schedule_of(const TrainingSpec& t)
{
  return ScheduleRegistry::instance().shared(t.schedule);
}

std::optional<LayoutViolation> chunked_without_vpp(const TrainingSpec& t, const ModelSpec&, long long)
{
  if (!schedule_of(t).chunked() || t.vpp >= 2)
    return std::nullopt;
  return broken("pipeline_schedule", "the " + t.schedule + " schedule without virtual stages",
                "the " + t.schedule + " schedule needs vpp >= 2", "vpp: 2 or more");
}

std::optional<LayoutViolation> vpp_needs_chunks(const TrainingSpec& t, const ModelSpec&, long long)
{
  if (t.vpp == 1 || schedule_of(t).chunked())
    return std::nullopt;
  std::vector<std::string> chunked;
  for (const std::string& name : ScheduleRegistry::instance().names())
    if (ScheduleRegistry::instance().shared(name).chunked())
      chunked.push_back(name);
  return broken("pipeline_schedule", "virtual stages with a schedule that runs one chunk per stage",
                "vpp " + s(t.vpp) + " needs the " + join(chunked, " or ") + " schedule; " + t.schedule +
                    " runs one model chunk per stage",
                std::string("pipeline_schedule: ") + default_schedule(t.vpp) +
                    " (the default when vpp > 1), or vpp: 1");
}

std::optional<LayoutViolation> schedule_micro_batches(const TrainingSpec& t, const ModelSpec&, long long)
{
  const auto [multiple, of] = schedule_of(t).micro_batch_multiple(t.pipeline_shape());
  if (t.micro_batches() % multiple == 0)
    return std::nullopt;
  return broken("global_batch", t.schedule + ": micro-batches per pipeline not a multiple of " + of,
                "the " + t.schedule + " schedule of " + to_string(t.framework) + " needs micro-batches per pipeline (" +
                    s(t.micro_batches()) + ") to be a multiple of " + of + " (" + s(multiple) + ")",
                "global_batch / (micro_batch*dp) divisible by " + of);
}

std::optional<LayoutViolation> cp_chunks(const TrainingSpec& t, const ModelSpec& m, long long)
{
  if (m.seq_len % t.cp == 0 && (t.cp == 1 || (m.seq_len / t.cp) % 2 == 0))
    return std::nullopt;
  return broken("cp", "cp does not split the sequence into even chunks",
                "cp " + s(t.cp) + " does not split seq_len " + s(m.seq_len) + " into even chunks",
                "cp such that seq_len / cp is even (load-balanced ring attention uses 2 chunks per rank)");
}

std::optional<LayoutViolation> cp_with_window(const TrainingSpec& t, const ModelSpec& m, long long)
{
  // Transformer Engine's ring exchange (Megatron's default cp_comm_type p2p) and torch's
  // context_parallel take no sliding window; a windowed ring is not modelled
  if (t.cp == 1 || !m.has_window())
    return std::nullopt;
  return broken("cp", "context parallelism with sliding-window attention",
                "cp " + s(t.cp) + " with a sliding window of " + s(m.sliding_window) +
                    " tokens: a windowed ring exchange is not modelled",
                "cp: 1 for a model with sliding-window layers");
}

std::optional<LayoutViolation> sp_without_tp(const TrainingSpec& t, const ModelSpec&, long long)
{
  if (!t.sequence_parallel || t.tp > 1)
    return std::nullopt;
  return broken("sequence_parallel", "sequence parallelism needs tp > 1", "sequence_parallel needs tp > 1",
                "sequence_parallel: false when tp is 1");
}

std::optional<LayoutViolation> ep_divides_experts(const TrainingSpec& t, const ModelSpec& m, long long)
{
  if (m.experts == 1 || m.experts % t.ep == 0)
    return std::nullopt;
  return broken("ep", "ep does not divide the experts",
                "ep " + s(t.ep) + " does not divide the " + s(m.experts) + " experts", "a divisor of experts");
}

std::optional<LayoutViolation> ep_divides_dp(const TrainingSpec& t, const ModelSpec&, long long)
{
  // Megatron's MoE parallel folding: the expert groups (ep x etp) are drawn from the tp x cp x
  // dp ranks of a pipeline stage
  const long long ranks = static_cast<long long>(t.tp) * t.cp * t.dp;
  const long long expert = static_cast<long long>(t.ep) * t.etp;
  if (expert == 1 || ranks % expert == 0)
    return std::nullopt;
  return broken("ep", "ep x etp does not divide tp x cp x dp",
                "ep*etp = " + s(t.ep) + "*" + s(t.etp) + " does not divide tp*cp*dp = " + s(ranks),
                "ep*etp dividing tp*cp*dp (Megatron folds the expert groups over a stage's ranks)");
}

std::optional<LayoutViolation> ep_on_dense(const TrainingSpec& t, const ModelSpec& m, long long)
{
  if (t.ep == 1 || m.experts > 1)
    return std::nullopt;
  return broken("ep", "expert parallelism on a dense model", "ep " + s(t.ep) + " on a dense model",
                "ep: 1 unless experts > 1");
}

std::optional<LayoutViolation> zero_with_pipeline(const TrainingSpec& t, const ModelSpec&, long long)
{
  if (t.zero < 2 || t.pp == 1 || shards_with_pipeline(t.framework))
    return std::nullopt;
  const bool named = !t.data_parallel.empty(); // the strategy the user named, else its shorthand
  return broken(named ? "data_parallel" : "zero",
                "ZeRO-2/3 with pipeline parallelism (Megatron, DeepSpeed do not combine them)",
                (named ? "data_parallel " + t.data_parallel + " (zero " + s(t.zero) + ")" : "zero " + s(t.zero)) +
                    " with pp " + s(t.pp) + ": " + to_string(t.framework) +
                    " does not shard gradients or parameters across a pipeline's replicas",
                "zero 0 or 1 with pp > 1, or framework torchtitan or automodel (FSDP2 per pipeline stage)");
}

std::optional<LayoutViolation> strategy_stage(const TrainingSpec& t, const ModelSpec&, long long)
{
  if (t.data_parallel.empty())
    return std::nullopt;
  if (!DataParallelRegistry::instance().has(t.data_parallel))
    return broken("data_parallel", "an unknown data-parallel strategy",
                  "unknown data_parallel '" + t.data_parallel + "'",
                  RegistryDirectory::instance().describe(DataParallelStrategy::kRegistryKind));
  const int stage = data_parallel_strategy(t).zero_stage();
  if (stage == t.zero)
    return std::nullopt;
  return broken("data_parallel", "zero disagrees with the data-parallel strategy",
                "zero " + s(t.zero) + " with data_parallel " + t.data_parallel + ", which shards at ZeRO stage " +
                    s(stage),
                "zero: " + s(stage) + ", or another data_parallel");
}

/// A hybrid strategy shards within groups of dp_shard replicas, and the routed experts' states
/// within the same number of groups of their own replicas.
std::optional<LayoutViolation> shard_groups(const TrainingSpec& t, const ModelSpec&, long long)
{
  const bool hybrid = data_parallel_strategy(t).hybrid();
  const std::string name = t.data_parallel_name();
  if (!hybrid && t.dp_shard > 0)
    return broken("dp_shard", "dp_shard without a hybrid strategy",
                  "dp_shard " + s(t.dp_shard) + " with data_parallel " + name + ", which shards over every replica",
                  "dp_shard only with a hybrid strategy (data_parallel: hsdp)");
  if (!hybrid)
    return std::nullopt;
  if (t.dp_shard == 0)
    return broken("data_parallel", "a hybrid strategy without its shard group",
                  "data_parallel " + name + " needs dp_shard, the replicas in each shard group",
                  "dp_shard: a divisor of dp = " + s(t.dp));
  if (t.dp % t.dp_shard != 0)
    return broken("dp_shard", "dp_shard does not divide dp",
                  "dp_shard " + s(t.dp_shard) + " does not divide dp = " + s(t.dp), "a divisor of dp = " + s(t.dp));
  const long long edp = static_cast<long long>(t.tp) * t.cp * t.dp / (static_cast<long long>(t.ep) * t.etp);
  if (edp % t.dp_replicate() == 0)
    return std::nullopt;
  return broken("dp_shard", "the expert replicas do not split into the replicate groups",
                "dp / dp_shard = " + s(t.dp_replicate()) + " replicate groups do not divide the " + s(edp) +
                    " expert-data-parallel replicas",
                "a dp_shard whose dp / dp_shard divides tp*cp*dp / (ep*etp)");
}

const std::vector<Rule>& rules()
{
  static const std::vector<Rule> r{gpu_count,
                                   heads_by_tp,
                                   kv_heads_by_tp,
                                   batch_multiple,
                                   micro_batch_limit,
                                   stages_vs_layers,
                                   vpp_without_pp,
                                   chunks_vs_layers,
                                   chunked_without_vpp,
                                   vpp_needs_chunks,
                                   schedule_micro_batches,
                                   layout_buildable,
                                   cp_chunks,
                                   cp_with_window,
                                   sp_without_tp,
                                   ep_divides_experts,
                                   ep_divides_dp,
                                   ep_on_dense,
                                   zero_with_pipeline,
                                   strategy_stage,
                                   shard_groups};
  return r;
}

} // namespace

std::optional<LayoutViolation> check_layout(const TrainingSpec& t, const ModelSpec& model, long long gpus)
{
  for (const auto& rule : rules())
    if (auto v = rule(t, model, gpus))
      return v;
  return std::nullopt;
}

} // namespace clustersim
