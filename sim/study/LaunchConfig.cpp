#include "sim/study/LaunchConfig.hpp"

#include "sim/study/Metrics.hpp"
#include "strategies/MoeDispatcher.hpp"
#include "strategies/PipelineSchedule.hpp"

#include <nlohmann/json.hpp>

#include <sstream>

namespace clustersim {

namespace {

std::string comments(const std::vector<std::string>& lines, const char* mark = "# ")
{
  std::string s;
  for (const auto& l : lines)
    s += mark + l + "\n";
  return s;
}

/// Layers per virtual pipeline stage, or 0 when the layers do not split evenly.
int layers_per_virtual_stage(const ModelSpec& m, const TrainingSpec& t)
{
  const int stages = t.pp * t.vpp;
  return stages > 0 && m.layers % stages == 0 ? m.layers / stages : 0;
}

/// What a launch file without LoRA says of an experiment that trains adapters.
std::string lora_unmapped(const TrainingSpec& t, const char* framework)
{
  return "LoRA (rank " + std::to_string(t.lora.rank) + " on " + join(t.lora.targets) + "): no " + framework +
         " option is written for it here, so this file trains every weight";
}

/// What a launch file without hybrid sharding says of an experiment that has it.
std::string hybrid_unmapped(const TrainingSpec& t, const char* framework)
{
  return t.data_parallel_name() + " (shard groups of " + std::to_string(t.shard_degree()) + ", " +
         std::to_string(t.dp_replicate()) + " replicas of each): no " + framework +
         " option is written for it here, so this file shards over all " + std::to_string(t.dp) + " replicas";
}

} // namespace

// Flags: NVIDIA/Megatron-LM@93da800461fd4f6a8262c3bab227868b966aaa69 megatron/training/arguments.py
// (model: --num-layers :1638, --hidden-size :1644, --ffn-hidden-size :1646, --num-attention-heads
// :1649, --group-query-attention :1657, --num-query-groups :1659, --max-position-embeddings :1674,
// --position-embedding-type :1677, --normalization :1717, --swiglu :1735,
// --untie-embeddings-and-output-weights :1751, --disable-bias-linear :2289, --seq-length :2975;
// layout: --tensor-model-parallel-size :2669, --pipeline-model-parallel-size :2671,
// --pipeline-model-parallel-layout :2681, --num-layers-per-virtual-pipeline-stage :2692,
// --num-virtual-stages-per-pipeline-rank :2694, --context-parallel-size :2816,
// --sequence-parallel :2332, --expert-model-parallel-size :3193, --expert-tensor-parallel-size
// :3195, --num-experts :3197, --moe-ffn-hidden-size :3207, --moe-router-topk :3254,
// --moe-token-dispatcher-type :3294 (allgather | alltoall | flex), --moe-flex-dispatcher-backend
// :3300 (deepep | hybridep); batch: --micro-batch-size :2067, --global-batch-size :2074;
// memory: --recompute-granularity :2103, --recompute-method :2124, --recompute-num-layers :2133,
// --use-distributed-optimizer :2770, --use-megatron-fsdp :2786, --data-parallel-sharding-strategy
// :2789 (no_shard | optim | optim_grads | optim_grads_params); precision: --fp16 :2626, --bf16
// :2628, --fp8-format :1389, --fp8-recipe :1394, --attention-backend :1651; overlap:
// --overlap-grad-reduce :2713, --overlap-param-gather :2741, --tp-comm-overlap :2185).
namespace {

/// `--name value` lines of a Megatron-LM argument file.
struct MegatronArgs {
  std::ostringstream o;
  void flag(const std::string& name, const std::string& value = "")
  {
    o << "--" << name << (value.empty() ? "" : " " + value) << "\n";
  }
  void num(const std::string& name, long long v) { flag(name, std::to_string(v)); }
};

/// The model's architecture arguments.
void megatron_model_arguments(MegatronArgs& a, const ModelSpec& m, std::vector<std::string>& notes)
{
  a.num("num-layers", m.layers);
  a.num("hidden-size", m.hidden);
  a.num("ffn-hidden-size", m.ffn_hidden);
  a.num("num-attention-heads", m.heads);
  if (m.kv_heads > 0 && m.kv_heads != m.heads) {
    a.flag("group-query-attention");
    a.num("num-query-groups", m.kv_heads);
  }
  a.num("seq-length", m.seq_len);
  a.num("max-position-embeddings", m.seq_len);
  if (m.position == PositionKind::rotary)
    a.flag("position-embedding-type", "rope");
  if (m.norm == NormKind::rmsnorm)
    a.flag("normalization", "RMSNorm");
  if (m.mlp == MlpKind::swiglu)
    a.flag("swiglu");
  if (!m.tied_embeddings)
    a.flag("untie-embeddings-and-output-weights");
  if (!m.bias)
    a.flag("disable-bias-linear");
  // Megatron-Core's dropouts default to 0.1 (NVIDIA/Megatron-LM@d98e8a6
  // megatron/core/transformer/transformer_config.py:188, :191)
  if (!m.dropout) {
    a.flag("hidden-dropout", "0.0");
    a.flag("attention-dropout", "0.0");
  }
  if (m.mla || m.mtp_layers > 0 || m.sliding_window > 0 || m.dense_layers > 0 || m.shared_experts > 0)
    notes.push_back("the model's multi-latent attention, MTP, sliding-window, dense-layer and shared-expert "
                    "arguments are not written: take them from the model's recipe");
}

} // namespace

std::string megatron_arguments(const ModelSpec& m, const TrainingSpec& t, std::vector<std::string>& notes)
{
  MegatronArgs a;
  auto flag = [&a](const std::string& name, const std::string& value = "") { a.flag(name, value); };
  auto num = [&a](const std::string& name, long long v) { a.num(name, v); };
  megatron_model_arguments(a, m, notes);
  num("tensor-model-parallel-size", t.tp);
  num("pipeline-model-parallel-size", t.pp);
  if (!t.pipeline_layout.empty())
    flag("pipeline-model-parallel-layout", "'" + t.pipeline_layout + "'");
  else if (t.vpp > 1 && layers_per_virtual_stage(m, t) > 0)
    num("num-layers-per-virtual-pipeline-stage", layers_per_virtual_stage(m, t));
  else if (t.vpp > 1)
    num("num-virtual-stages-per-pipeline-rank", t.vpp);
  if (!ScheduleRegistry::instance().shared(t.schedule).in_megatron())
    notes.push_back("Megatron-LM has no " + t.schedule + " schedule: it runs " + default_schedule(t.vpp) +
                    " with these arguments");
  num("context-parallel-size", t.cp);
  if (t.sequence_parallel)
    flag("sequence-parallel");
  if (m.experts > 1) {
    num("num-experts", m.experts);
    num("moe-router-topk", m.top_k);
    num("moe-ffn-hidden-size", m.expert_ffn());
    num("expert-model-parallel-size", t.ep);
    num("expert-tensor-parallel-size", t.etp);
    const MoeDispatcher& d = MoeDispatcherRegistry::instance().shared(t.moe_dispatcher);
    flag("moe-token-dispatcher-type", d.megatron_type());
    if (d.flex_backend())
      flag("moe-flex-dispatcher-backend", d.flex_backend());
  }
  num("micro-batch-size", t.micro_batch);
  num("global-batch-size", t.global_batch);
  if (t.recompute == Recompute::selective) {
    flag("recompute-granularity", "selective");
    if (!t.recompute_modules.empty()) {
      std::string mods;
      for (const auto& r : t.recompute_modules)
        mods += (mods.empty() ? "" : " ") + r;
      flag("recompute-modules", mods);
    }
  } else if (t.recompute == Recompute::full) {
    flag("recompute-granularity", "full");
    flag("recompute-method", "uniform");
    num("recompute-num-layers", 1);
  }
  if (t.dp_replicate() > 1)
    notes.push_back(hybrid_unmapped(t, "Megatron-LM"));
  if (t.frozen_base())
    notes.push_back(lora_unmapped(t, "Megatron-LM"));
  if (t.zero == 1) {
    flag("use-distributed-optimizer");
  } else if (t.zero >= 2) {
    flag("use-megatron-fsdp");
    flag("data-parallel-sharding-strategy", t.zero == 2 ? "optim_grads" : "optim_grads_params");
  }
  if (t.precision == Precision::fp16) {
    flag("fp16");
  } else if (activation_precision(t.precision) == Precision::bf16) {
    flag("bf16");
  } else {
    notes.push_back(std::string("precision ") + to_string(t.precision) + ": Megatron-LM's default fp32 (no flag)");
  }
  if (const Fp8Recipe* r = t.fp8()) {
    // --fp4-format e2m1 / --fp4-recipe (megatron/core/transformer/transformer_config.py:673-681)
    const bool fp4 = r->format == Precision::fp4;
    flag(fp4 ? "fp4-format" : "fp8-format", fp4 ? "e2m1" : "hybrid");
    flag(fp4 ? "fp4-recipe" : "fp8-recipe", r->name);
  }
  flag("attention-backend", t.flash_attention ? "flash" : "unfused");
  if (t.overlap.grad_reduce)
    flag("overlap-grad-reduce");
  if (t.overlap.param_gather && t.zero >= 1)
    flag("overlap-param-gather");
  if (t.overlap.tp_comm && t.tp > 1)
    flag("tp-comm-overlap");
  return a.o.str();
}

// Keys: NVIDIA-NeMo/Megatron-Bridge@5b045b74647070f8034891241176ad4a2badbe37
// docs/megatron-lm-to-megatron-bridge.md, its table from Megatron-LM's arguments to Hydra keys
// (model topology, architecture, MoE, training, and the distributed-optimizer and overlap rows).
// Only keys that table names are written; the rest is a comment naming the planned value.
std::string megatron_bridge_overrides(const ModelSpec& m, const TrainingSpec& t, std::vector<std::string>& notes)
{
  std::ostringstream o;
  auto key = [&o](const std::string& k, const std::string& v) { o << k << "=" << v << "\n"; };
  auto num = [&key](const std::string& k, long long v) { key(k, std::to_string(v)); };
  auto flag = [&key](const std::string& k, bool v) { key(k, v ? "true" : "false"); };
  num("model.num_layers", m.layers);
  num("model.hidden_size", m.hidden);
  num("model.ffn_hidden_size", m.ffn_hidden);
  num("model.num_attention_heads", m.heads);
  if (m.kv_heads > 0 && m.kv_heads != m.heads)
    num("model.num_query_groups", m.kv_heads);
  num("model.seq_length", m.seq_len);
  num("dataset.sequence_length", m.seq_len);
  key("model.position_embedding_type", m.position == PositionKind::rotary ? "rope" : "learned_absolute");
  key("model.normalization", m.norm == NormKind::rmsnorm ? "RMSNorm" : "LayerNorm");
  flag("model.gated_linear_unit", m.mlp == MlpKind::swiglu);
  flag("model.share_embeddings_and_output_weights", m.tied_embeddings);
  flag("model.add_bias_linear", m.bias);
  if (!m.dropout) {
    key("model.hidden_dropout", "0.0");
    key("model.attention_dropout", "0.0");
  }
  num("model.tensor_model_parallel_size", t.tp);
  num("model.pipeline_model_parallel_size", t.pp);
  num("model.context_parallel_size", t.cp);
  flag("model.sequence_parallel", t.sequence_parallel);
  if (t.embedding_slot)
    flag("model.account_for_embedding_in_pipeline_split", true);
  if (t.loss_slot)
    flag("model.account_for_loss_in_pipeline_split", true);
  if (m.experts > 1) {
    num("model.num_moe_experts", m.experts);
    num("model.moe_router_topk", m.top_k);
    num("model.moe_ffn_hidden_size", m.expert_ffn());
    num("model.expert_model_parallel_size", t.ep);
    num("model.expert_tensor_parallel_size", t.etp);
    key("model.moe_token_dispatcher_type", MoeDispatcherRegistry::instance().shared(t.moe_dispatcher).megatron_type());
  }
  num("train.micro_batch_size", t.micro_batch);
  num("train.global_batch_size", t.global_batch);
  flag("ddp.use_distributed_optimizer", t.zero >= 1);
  flag("optimizer.use_distributed_optimizer", t.zero >= 1);
  flag("ddp.overlap_grad_reduce", t.overlap.grad_reduce);
  flag("ddp.overlap_param_gather", t.overlap.param_gather && t.zero >= 1);
  std::string unmapped;
  if (t.vpp > 1)
    unmapped += ", " + std::to_string(t.vpp) + " virtual stages per pipeline rank";
  if (t.recompute != Recompute::none)
    unmapped += std::string(", ") + to_string(t.recompute) + " recomputation";
  if (t.zero >= 2)
    unmapped += ", ZeRO-" + std::to_string(t.zero) + " (Megatron-FSDP)";
  if (t.dp_replicate() > 1)
    unmapped += ", hybrid sharding (" + t.data_parallel_name() + ")";
  if (t.frozen_base())
    unmapped += ", LoRA (the recipe's peft: LoRA(dim=" + std::to_string(t.lora.rank) + ", target_modules=...))";
  unmapped += std::string(", ") + to_string(t.precision) + " (the recipe's mixed_precision preset)";
  notes.push_back("Megatron-Bridge's mapping table does not name keys for" + unmapped.substr(1) +
                  ": set them in the recipe");
  return o.str();
}

// Keys: pytorch/torchtitan@238fa9953e4aec2a62582121564273d7cbb1e9f1 torchtitan/config/job_config.py
// ([training] local_batch_size :253 "per-device", global_batch_size :256, seq_len :261,
// mixed_precision_param :282 (bfloat16 | float32); [parallelism] data_parallel_replicate_degree
// :313 (DDP, HSDP with shard > 1), data_parallel_shard_degree :324 (FSDP), tensor_parallel_degree
// :351, pipeline_parallel_degree :360, pipeline_parallel_layers_per_stage :389,
// pipeline_parallel_schedule :396 (torch.distributed.pipelining's names: 1F1B, Interleaved1F1B,
// GPipe), pipeline_parallel_microbatch_size :412, context_parallel_degree :428,
// expert_parallel_degree :454, expert_tensor_parallel_degree :464 (1 or tp); [activation_checkpoint] mode
// :652 (selective | full | none); [model] converters :118, "float8" in
// torchtitan/models/llama3/train_configs/llama3_405b.toml). The next commit (#2386) replaced the
// TOML files by Python config registries with the same fields.
std::string torchtitan_toml(const ModelSpec& m, const TrainingSpec& t, std::vector<std::string>& notes)
{
  std::ostringstream o;
  if (t.zero == 1 || t.zero == 2)
    notes.push_back("torchtitan has no ZeRO-" + std::to_string(t.zero) +
                    ": data parallelism written as FSDP (data_parallel_shard_degree), which also shards the weights");
  if (t.tp > 1 && !t.sequence_parallel)
    notes.push_back("torchtitan's tensor parallelism always shards the norms over the sequence (sequence parallel)");
  if (t.frozen_base())
    notes.push_back(lora_unmapped(t, "torchtitan"));
  o << "[training]\n";
  // without a pipeline a rank's batch is one micro-batch and the rest is gradient accumulation
  o << "local_batch_size = " << (t.pp > 1 ? t.global_batch / t.dp : t.micro_batch) << "\n";
  o << "global_batch_size = " << t.global_batch << "\n";
  o << "seq_len = " << m.seq_len << "\n";
  const bool half = activation_precision(t.precision) == Precision::bf16;
  o << "mixed_precision_param = \"" << (half ? "bfloat16" : "float32") << "\"\n";
  if (t.precision == Precision::fp16)
    notes.push_back("torchtitan trains in bfloat16 or float32, not fp16: bfloat16 is the nearest");
  o << "\n[parallelism]\n";
  o << "data_parallel_replicate_degree = " << (t.zero > 0 ? t.dp_replicate() : t.dp) << "\n";
  o << "data_parallel_shard_degree = " << (t.zero > 0 ? t.shard_degree() : 1) << "\n";
  o << "tensor_parallel_degree = " << t.tp << "\n";
  o << "context_parallel_degree = " << t.cp << "\n";
  o << "pipeline_parallel_degree = " << t.pp << "\n";
  if (t.pp > 1) {
    const char* schedule = ScheduleRegistry::instance().shared(t.schedule).torchtitan_name();
    o << "pipeline_parallel_schedule = \"" << schedule << "\"\n";
    o << "pipeline_parallel_microbatch_size = " << t.micro_batch << "\n";
    if (const int per = layers_per_virtual_stage(m, t); per > 0)
      o << "pipeline_parallel_layers_per_stage = " << per << "\n";
  }
  if (m.experts > 1 && t.etp != 1 && t.etp != t.tp)
    notes.push_back("torchtitan's expert tensor parallelism is 1 or the tensor-parallel degree, not " +
                    std::to_string(t.etp));
  if (m.experts > 1) {
    o << "expert_parallel_degree = " << t.ep << "\n";
    o << "expert_tensor_parallel_degree = " << t.etp << "\n";
  }
  o << "\n[activation_checkpoint]\n";
  o << "mode = \"" << to_string(t.recompute) << "\"\n";
  if (t.fp8()) {
    o << "\n[model]\nconverters = [\"float8\"]\n";
  }
  return o.str();
}

// Keys: deepspeedai/DeepSpeed@edaa7221267243c7be7fb49c5d5f5c4fb97b4641 deepspeed/runtime/constants.py
// (train_batch_size :19, train_micro_batch_size_per_gpu :95, gradient_accumulation_steps :107,
// bf16 :134 and fp16 :176 with "enabled" :137, :178) and deepspeed/runtime/zero/config.py
// (zero_optimization :57, its stage :95).
std::string deepspeed_json(const TrainingSpec& t, std::vector<std::string>& notes)
{
  nlohmann::ordered_json j;
  j["train_batch_size"] = t.global_batch;
  j["train_micro_batch_size_per_gpu"] = t.micro_batch;
  j["gradient_accumulation_steps"] = t.micro_batches();
  j["zero_optimization"] = {{"stage", t.zero}};
  j["bf16"] = {{"enabled", activation_precision(t.precision) == Precision::bf16}};
  j["fp16"] = {{"enabled", t.precision == Precision::fp16}};
  if (t.fp8())
    notes.push_back("DeepSpeed's config has no FP8 switch: FP8 GEMMs come from Transformer Engine in the model code");
  if (t.zero >= 2 && t.pp > 1)
    notes.push_back("DeepSpeed's pipeline engine runs with ZeRO stages 0 and 1 only");
  if (t.dp_replicate() > 1)
    notes.push_back(hybrid_unmapped(t, "DeepSpeed"));
  if (t.frozen_base())
    notes.push_back(lora_unmapped(t, "DeepSpeed"));
  return j.dump(2) + "\n";
}

namespace {

std::string experiment_yaml(const LaunchSpec& s)
{
  std::ostringstream o;
  o << "name: " << nlohmann::json(s.name).dump() << "\n";
  o << "model: " << s.model_yaml << "\n";
  o << "cluster: {platform: " << s.platform << ", gpus: " << s.gpus << "}\n";
  o << "training:\n";
  const TrainingSpec& t = s.training;
  Json layout;
  put_layout(layout, &t);
  for (const LayoutField& f : layout_fields())
    if (std::string(f.key).rfind("lora_", 0) != 0) // the layout's LoRA columns are the lora section
      o << "  " << f.key << ": " << layout[f.key].dump() << "\n";
  if (t.frozen_base())
    o << "  lora: {rank: " << t.lora.rank << ", targets: " << nlohmann::json(t.lora.targets).dump() << "}\n";
  if (!t.pipeline_layout.empty())
    o << "  pipeline_layout: " << nlohmann::json(t.pipeline_layout).dump() << "\n";
  if (t.embedding_slot)
    o << "  account_for_embedding_in_pipeline_split: true\n";
  if (t.loss_slot)
    o << "  account_for_loss_in_pipeline_split: true\n";
  if (!t.fp8_recipe.empty())
    o << "  fp8_recipe: " << t.fp8_recipe << "\n";
  if (s.model.experts > 1)
    o << "  moe_token_dispatcher: " << t.moe_dispatcher << "\n";
  // the schema's defaults are not written (a default that has no effect on a layout would warn)
  const Overlap d;
  if (t.overlap.grad_reduce != d.grad_reduce || t.overlap.param_gather != d.param_gather ||
      t.overlap.tp_comm != d.tp_comm)
    o << "  overlap: {grad_reduce: " << (t.overlap.grad_reduce ? "true" : "false")
      << ", param_gather: " << (t.overlap.param_gather ? "true" : "false")
      << ", tp_comm: " << (t.overlap.tp_comm ? "true" : "false") << "}\n";
  if (s.tokens > 0)
    o << "budget: {tokens: " << nlohmann::json(s.tokens).dump() << "}\n";
  return o.str();
}

} // namespace

std::vector<LaunchFile> launch_files(const LaunchSpec& s, std::vector<std::string>& notes)
{
  std::vector<LaunchFile> out;
  const Framework f = s.training.framework;
  std::vector<std::string> own;
  if (f == Framework::megatron || f == Framework::megatron_deepspeed) {
    std::vector<std::string> n;
    std::string args = megatron_arguments(s.model, s.training, n);
    out.push_back({"megatron-lm.args", comments(s.head) + comments(n) +
                                           "# data parallel: " + std::to_string(s.training.dp) +
                                           " (Megatron-LM derives it: GPUs / (tp x pp x cp)); vocabulary: " +
                                           std::to_string(s.model.vocab) + " (from the tokenizer)\n" + args});
    own.insert(own.end(), n.begin(), n.end());
  }
  if (f == Framework::megatron) {
    std::vector<std::string> n;
    std::string keys = megatron_bridge_overrides(s.model, s.training, n);
    out.push_back({"megatron-bridge.overrides", comments(s.head) + comments(n) + keys});
  }
  if (f == Framework::deepspeed || f == Framework::megatron_deepspeed)
    out.push_back({"ds_config.json", deepspeed_json(s.training, own)});
  if (f == Framework::torchtitan) {
    std::vector<std::string> n;
    std::string toml = torchtitan_toml(s.model, s.training, n);
    out.push_back({"torchtitan.toml", comments(s.head) + comments(n) + toml});
    own.insert(own.end(), n.begin(), n.end());
  }
  if (out.empty())
    own.push_back(std::string("no launch file is written for framework ") + to_string(f) +
                  ": the experiment file holds the layout");
  out.insert(out.begin(), LaunchFile{"experiment.yaml", comments(s.head) + comments(own) + experiment_yaml(s)});
  notes.insert(notes.end(), own.begin(), own.end());
  return out;
}

} // namespace clustersim
