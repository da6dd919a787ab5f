#include "strategies/TrainingSpec.hpp"

#include "strategies/LayoutRules.hpp"
#include "strategies/ModelSpec.hpp"
#include "strategies/MoeDispatcher.hpp"
#include "strategies/PipelineSchedule.hpp"
#include "strategies/StepBuilder.hpp"
#include "topology/config/Suggest.hpp"

#include <algorithm>

namespace clustersim {

const std::vector<std::string>& recompute_names()
{
  static const std::vector<std::string> names{"none", "selective", "full"};
  return names;
}

const std::vector<std::string>& framework_names()
{
  static const std::vector<std::string> names{"megatron",  "megatron-deepspeed", "deepspeed", "torchtitan",
                                              "automodel", "fsdp",               "other"};
  return names;
}

const std::vector<std::string>& lora_target_names()
{
  static const std::vector<std::string> names{"qkv", "proj", "fc1", "fc2"};
  return names;
}

bool Lora::targets_linear(const std::string& target) const
{
  return rank > 0 && std::find(targets.begin(), targets.end(), target) != targets.end();
}

const char* to_string(Recompute r)
{
  return recompute_names()[static_cast<std::size_t>(r)].c_str();
}

const char* to_string(Framework f)
{
  return framework_names()[static_cast<std::size_t>(f)].c_str();
}

/// The names users bring from Megatron-LM's command line (megatron/training/arguments.py, with
/// or without the dashes) and torchtitan's job config (torchtitan/config/job_config.py), and what
/// this schema calls each.
std::vector<std::pair<std::string, std::string>> training_hints()
{
  auto megatron = [](const char* ours, const char* flag) {
    return std::string("'") + ours + "' (Megatron-LM's --" + flag + ")";
  };
  auto titan = [](const char* ours, const char* field) {
    return std::string("'") + ours + "' (torchtitan's " + field + ")";
  };
  return {
      {"tensor_model_parallel_size", megatron("tp", "tensor-model-parallel-size")},
      {"pipeline_model_parallel_size", megatron("pp", "pipeline-model-parallel-size")},
      {"context_parallel_size", megatron("cp", "context-parallel-size")},
      {"expert_model_parallel_size", megatron("ep", "expert-model-parallel-size")},
      {"expert_tensor_parallel_size", megatron("etp", "expert-tensor-parallel-size")},
      {"data_parallel_size", "'dp' (Megatron-LM derives it: GPUs / (tp x pp x cp))"},
      {"virtual_pipeline_model_parallel_size", megatron("vpp", "virtual-pipeline-model-parallel-size")},
      {"num_layers_per_virtual_pipeline_stage",
       "'vpp' (Megatron-LM's --num-layers-per-virtual-pipeline-stage counts layers; vpp is layers per pipeline "
       "rank divided by it)"},
      {"pipeline_model_parallel_layout", megatron("pipeline_layout", "pipeline-model-parallel-layout")},
      {"micro_batch_size", megatron("micro_batch", "micro-batch-size")},
      {"global_batch_size", megatron("global_batch", "global-batch-size")},
      {"recompute_granularity", megatron("recompute", "recompute-granularity")},
      {"recompute_activations", "'recompute: selective' (Megatron-LM's --recompute-activations)"},
      {"use_distributed_optimizer", "'zero: 1' (Megatron-LM's --use-distributed-optimizer)"},
      {"use_flash_attn", megatron("flash_attention", "use-flash-attn")},
      {"attention_backend", "'flash_attention' (Megatron-LM's --attention-backend: flash or fused is true)"},
      {"bf16", "'precision: bf16' (Megatron-LM's --bf16)"},
      {"fp16", "'precision: fp16' (Megatron-LM's --fp16)"},
      {"fp8_format", "'precision: fp8' and 'fp8_recipe' (Megatron-LM's --fp8-format, --fp8-recipe)"},
      {"fp4_format", "'precision: fp4' (Megatron-LM's --fp4-format e2m1 with --fp4-recipe nvfp4)"},
      {"overlap_grad_reduce", "'overlap: {grad_reduce: true}' (Megatron-LM's --overlap-grad-reduce)"},
      {"overlap_param_gather", "'overlap: {param_gather: true}' (Megatron-LM's --overlap-param-gather)"},
      {"tp_comm_overlap", "'overlap: {tp_comm: true}' (Megatron-LM's --tp-comm-overlap)"},
      {"moe_token_dispatcher_type", megatron("moe_token_dispatcher", "moe-token-dispatcher-type")},
      {"tensor_parallel_degree", titan("tp", "parallelism.tensor_parallel_degree")},
      {"pipeline_parallel_degree", titan("pp", "parallelism.pipeline_parallel_degree")},
      {"context_parallel_degree", titan("cp", "parallelism.context_parallel_degree")},
      {"expert_parallel_degree", titan("ep", "parallelism.expert_parallel_degree")},
      {"data_parallel_shard_degree", "'dp' with 'zero: 3' (torchtitan's parallelism.data_parallel_shard_degree: "
                                     "FSDP), or 'dp_shard' with 'data_parallel: hsdp' when it replicates as well"},
      {"data_parallel_replicate_degree", "'dp' (torchtitan's parallelism.data_parallel_replicate_degree), or "
                                         "'data_parallel: hsdp' with 'dp_shard' when it shards as well"},
      {"pipeline_parallel_schedule", titan("pipeline_schedule", "parallelism.pipeline_parallel_schedule")},
      {"pipeline_parallel_microbatch_size", titan("micro_batch", "parallelism.pipeline_parallel_microbatch_size")},
      {"local_batch_size", titan("micro_batch", "training.local_batch_size, sequences per rank and step; "
                                                "global_batch is it x dp")},
      {"activation_checkpoint", titan("recompute", "activation_checkpoint.mode: none | selective | full")},
      {"mixed_precision_param", titan("precision", "training.mixed_precision_param")},
      {"seq_len", "'seq_len' of the model section (torchtitan's training.seq_len)"},
  };
}

const Section& training_section()
{
  using K = KeySpec;
  static const Section s{
      "training",
      "how the model is trained: parallel layout, batch, precision, framework options",
      {
          K::integer("tp", 1, 1, 1 << 16, "tensor-parallel degree (Megatron column/row-parallel layers)")
              .fixed_by_planner(),
          K::integer("pp", 1, 1, 1 << 16, "pipeline-parallel stages").fixed_by_planner(),
          K::integer("dp", 1, 1, 1 << 24, "data-parallel replicas").computed("gpus / (tp*pp*cp)").fixed_by_planner(),
          K::integer("cp", 1, 1, 1 << 16, "context-parallel degree (ring attention over sequence chunks)")
              .fixed_by_planner(),
          K::integer("ep", 1, 1, 1 << 16, "expert-parallel degree, folded inside tp*cp*dp (Megatron's MoE parallel "
                                          "folding)")
              .fixed_by_planner(),
          K::integer("etp", 1, 1, 1 << 16, "expert tensor-parallel degree (Megatron's MoE parallel folding)")
              .fixed_by_planner(),
          K::integer("vpp", 1, 1, 1 << 10, "virtual stages per pipeline rank (interleaved 1F1B when > 1)")
              .fixed_by_planner(),
          K::from_registry("pipeline_schedule", "", PipelineSchedule::kRegistryKind,
                           "order of forward and backward passes on a stage")
              .computed(std::string(default_schedule(2)) + " when vpp > 1, else " + default_schedule(1))
              .called("pipeline schedule")
              .fixed_by_planner(),
          K::boolean("sequence_parallel", false, "Megatron sequence parallelism (norms and dropout sharded by tp)")
              .fixed_by_planner(),
          K::integer("zero", 0, 0, 3, "ZeRO stage: 1 optimizer states, 2 + gradients, 3 + parameters (FSDP)")
              .computed("the data_parallel strategy's stage, else 0")
              .fixed_by_planner(),
          K::from_registry("data_parallel", "", DataParallelStrategy::kRegistryKind,
                           "how data-parallel replicas synchronise and shard the model states")
              .computed("the one zero names: ddp for 0, zeroN for N")
              .called("data-parallel strategy")
              .fixed_by_planner(),
          K::integer("dp_shard", 0, 0, 1 << 24,
                     "replicas per shard group of a hybrid strategy (hsdp); the groups replicate "
                     "(torchtitan's data_parallel_shard_degree); 0: all of dp, no replication"),
          K::choice("recompute", "none", recompute_names(), "activation recomputation in backward")
              .fixed_by_planner(),
          K::integer("micro_batch", 1, 1, 1 << 20, "sequences per micro-batch").counts("sequences").fixed_by_planner(),
          K::integer("global_batch", 1, 1, 1 << 30, "sequences per optimizer step")
              .computed("micro_batch * dp")
              .counts("sequences"),
          K::choice("precision", "bf16", precision_names(), "number format of the GEMMs and activations"),
          K::boolean("flash_attention", false, "fused flash attention (no s x s activations, causal blocks skipped)")
              .computed("on where the framework calls a flash-attention kernel the GPU has a curve for"),
          K::choice("framework", "megatron", framework_names(),
                    "the training framework the run used; its documented kernels, buckets and overlap rules")
              .fixed_by_planner(),
          K::string("pipeline_layout", "",
                    "Megatron's --pipeline-model-parallel-layout: '|'-separated virtual stages of E, t, m, L "
                    "(e.g. Et*4|(t*4|)*14tmL)")
              .computed("the layers split evenly, the remainder to the middle stages")
              .fixed_by_planner(),
          K::boolean("account_for_embedding_in_pipeline_split", false,
                     "the embedding takes one layer slot of the pipeline split")
              .fixed_by_planner(),
          K::boolean("account_for_loss_in_pipeline_split", false, "the loss takes one layer slot of the pipeline split")
              .fixed_by_planner(),
          K::list("recompute_modules", "Megatron's selective-recompute modules (core_attn, mlp, moe_act, layernorm, "
                                       "mla_up_proj, moe, shared_experts)"),
          K::choice("fp8_recipe", "", {"delayed", "tensorwise", "mxfp8", "blockwise"},
                    "FP8 scaling (precision fp8): delayed or current per-tensor, 32-element blocks, 128x128 tiles")
              .computed("the framework's (platforms/frameworks.yaml)"),
          K::boolean("compile", false, "torch.compile of each transformer block (fused element-wise kernels)")
              .computed("the framework's default (torchtitan, automodel: on with FP8)"),
          K::from_registry("moe_token_dispatcher", "alltoall", MoeDispatcher::kRegistryKind,
                           "how MoE tokens reach their experts"),
          K::choice("cuda_graph_impl", "none", {"none", "transformer_engine", "local", "full_iteration"},
                    "CUDA graphs (Megatron-Core's --cuda-graph-impl): none (every kernel launched from the host), "
                    "per-layer graphs of cuda_graph_scope (transformer_engine, local), or one graph per "
                    "forward-backward iteration with no host synchronisation (full_iteration)"),
          K::list("cuda_graph_scope", "the parts of each layer per-layer graphs capture (attn, mlp, moe, moe_router, "
                                      "moe_preprocess, mamba); empty: the whole layer"),
          K::boolean("moe_a2a_overlap", false, "the EP all-to-all of one micro-batch hidden behind the compute of another's pass the other way (Megatron's combined 1F1B: pipeline warmup forwards and cooldown backwards wait for theirs)"),
          K::choice("moe_load_balance", "aux_loss", {"force_balanced", "aux_loss", "dropless"},
                    "routing balance: forced uniform, auxiliary loss, or DeepSeek's bias balancing"),
          K::number("moe_max_load", 0, 0, 65536,
                    "the most loaded expert rank's tokens over the mean, as measured (the others share the rest "
                    "equally); 0: drawn per layer and micro-batch (multinomial routing; equal when force_balanced)")
              .counts("ratio"),
          K::number("moe_capacity_factor", 0, 0, 65536,
                    "tokens an expert rank takes at most, over the mean: the excess is dropped (Megatron's "
                    "moe_expert_capacity_factor); 0: dropless")
              .counts("ratio"),
          K::section("overlap", "training.overlap", "what communication runs behind compute"),
          K::quantity_of("bucket_size", Quantity::bytes, "", 1e3, 1e12,
                         "gradient / parameter bucket of the data-parallel strategy")
              .computed("DDP 25MB; ZeRO max(40M, 1M x dp) parameters"),
          K::list("order", "rank placement, innermost first: a permutation of [tp, cp, dp, pp]"),
          K::string("collective_algo", "auto",
                    "algorithm of every collective: auto (NCCL's tuner), or NAME[/PROTOCOL] of `clustersim schema "
                    "collective-algorithm`"),
          K::section("state_bytes", "training.state_bytes", "bytes per parameter of the model states in memory"),
          K::section("lora", "training.lora", "low-rank adapters trained on frozen base weights (fine-tuning)"),
      },
      training_hints()};
  return s;
}

const Section& overlap_section()
{
  using K = KeySpec;
  static const Section s{
      "training.overlap",
      "communication overlapped with compute",
      {
          K::boolean("grad_reduce", true, "gradient reduction in buckets during backward"),
          K::boolean("param_gather", true, "ZeRO parameter all-gather prefetched under compute"),
          K::boolean("tp_comm", false, "tensor-parallel collectives pipelined with their GEMMs (userbuffers)"),
      }};
  return s;
}

const Section& lora_section()
{
  using K = KeySpec;
  static const Section s{
      "training.lora",
      "LoRA: every base weight frozen, low-rank adapters A (in x rank) and B (rank x out) trained on the "
      "targeted linear layers (Megatron-Bridge's defaults)",
      {
          K::integer("rank", 32, 1, 1 << 16, "the adapters' inner dimension (Megatron-Bridge's dim)"),
          K::list("targets", "linear layers given adapters: qkv, proj (attention), fc1, fc2 (dense MLP and shared "
                             "experts); routed experts stay frozen without one")
              .computed("[qkv, proj, fc1, fc2]"),
      }};
  return s;
}

const Section& state_bytes_section()
{
  using K = KeySpec;
  static const Section s{"training.state_bytes",
                         "bytes per parameter of the model states (mixed-precision Adam: 2 + 2 + 12)",
                         {
                             K::number("weights", 2, 0, 64, "working copy of the weights")
                                 .counts("bytes")
                                 .computed("the framework's"),
                             K::number("grads", 2, 0, 64, "gradients").counts("bytes").computed("the framework's"),
                             K::number("optimizer", 12, 0, 64, "master weights, Adam momentum and variance")
                                 .counts("bytes")
                                 .computed("the framework's"),
                         }};
  return s;
}

const FrameworkTraits& TrainingSpec::traits() const
{
  if (!frameworks)
    throw std::logic_error("training spec without a framework catalog (platforms/frameworks.yaml)");
  return frameworks->get(framework);
}

PipelineShape TrainingSpec::pipeline_shape() const
{
  // without a framework catalog, Megatron-LM's grouping: interleaved_groups' default
  return {pp, static_cast<int>(micro_batches()), vpp, frameworks && traits().interleaved_rounds};
}

StateBytes TrainingSpec::states() const
{
  StateBytes s = traits().states(precision);
  if (weight_state_bytes)
    s.weights = *weight_state_bytes;
  if (grad_state_bytes)
    s.grads = *grad_state_bytes;
  if (optimizer_state_bytes)
    s.optimizer = *optimizer_state_bytes;
  return s;
}

bool TrainingSpec::compiled() const
{
  if (compile)
    return *compile;
  const FrameworkTraits& f = traits();
  return f.compile || (precision == Precision::fp8 && f.compile_with_fp8);
}

const KernelSet& TrainingSpec::kernel_set() const
{
  return frameworks->kernel_set(compiled() ? "compiled" : traits().kernels);
}

const Fp8Recipe* TrainingSpec::fp8() const
{
  if (precision == Precision::fp4)
    return traits().fp4_recipe.empty() ? nullptr : &frameworks->recipe(traits().fp4_recipe);
  if (precision != Precision::fp8)
    return nullptr;
  return &frameworks->recipe(fp8_recipe.empty() ? traits().fp8_recipe : fp8_recipe);
}

namespace {

std::size_t index_of(const std::vector<std::string>& v, const std::string& s)
{
  return static_cast<std::size_t>(std::find(v.begin(), v.end(), s) - v.begin());
}

void read_overlap(SectionReader& r, TrainingSpec& t, SourceMap* where)
{
  auto o = r.find("overlap");
  if (!o)
    return;
  SectionReader om(*o, overlap_section());
  t.overlap.grad_reduce = om.boolean("grad_reduce");
  t.overlap.param_gather = om.boolean("param_gather");
  t.overlap.tp_comm = om.boolean("tp_comm");
  if (where)
    for (const char* key : {"grad_reduce", "param_gather", "tp_comm"})
      if (om.has(key))
        (*where)[std::string("overlap.") + key] = om.where(key);
  om.finish();
}

void read_state_bytes(SectionReader& r, TrainingSpec& t)
{
  auto st = r.find("state_bytes");
  if (!st)
    return;
  SectionReader sm(*st, state_bytes_section());
  if (sm.has("weights"))
    t.weight_state_bytes = sm.number("weights");
  if (sm.has("grads"))
    t.grad_state_bytes = sm.number("grads");
  if (sm.has("optimizer"))
    t.optimizer_state_bytes = sm.number("optimizer");
  sm.finish();
}

void read_lora(SectionReader& r, TrainingSpec& t)
{
  auto l = r.find("lora");
  if (!l)
    return;
  SectionReader lr(*l, lora_section());
  t.lora.rank = static_cast<int>(lr.integer("rank"));
  if (auto list = lr.find("targets")) {
    t.lora.targets.clear();
    for (const auto& item : list->items()) {
      std::string target = item.as_choice(lora_target_names(), "LoRA target");
      if (std::find(t.lora.targets.begin(), t.lora.targets.end(), target) != t.lora.targets.end())
        item.fail("'" + target + "' appears twice in targets", "each of qkv, proj, fc1, fc2 at most once");
      t.lora.targets.push_back(target);
    }
    if (t.lora.targets.empty())
      list->fail("LoRA without a target trains nothing", "one or more of qkv, proj, fc1, fc2");
  }
  lr.finish();
}

void read_order(SectionReader& r, TrainingSpec& t)
{
  auto o = r.find("order");
  if (!o)
    return;
  static const std::vector<std::string> dims{"tp", "cp", "dp", "pp"};
  std::vector<std::string> order;
  for (const auto& item : o->items()) {
    std::string d = item.as_choice(dims, "parallel dimension");
    if (std::find(order.begin(), order.end(), d) != order.end())
      item.fail("'" + d + "' appears twice in order", "each of tp, cp, dp, pp once");
    order.push_back(d);
  }
  if (order.size() != dims.size())
    o->fail("order must list tp, cp, dp and pp", "a permutation of [tp, cp, dp, pp], innermost first");
  t.order = order;
}

/// `data_parallel` names the strategy and `zero` is its shorthand: written together they must
/// agree; `zero` alone leaves the name to follow it (TrainingSpec::data_parallel_name).
void read_data_parallel(SectionReader& r, TrainingSpec& t)
{
  t.zero = static_cast<int>(r.integer_if("zero").value_or(0));
  if (auto name = r.choice_if("data_parallel")) {
    const int stage = DataParallelRegistry::instance().shared(*name).zero_stage();
    if (r.has("zero") && t.zero != stage)
      r.require("zero").fail("zero " + std::to_string(t.zero) + " disagrees with data_parallel " + *name +
                                 ", which shards at ZeRO stage " + std::to_string(stage),
                             "zero: " + std::to_string(stage) + ", or one of the two keys alone");
    t.zero = stage;
    t.data_parallel = *name;
  }
  if (auto shard = r.integer_if("dp_shard"))
    t.dp_shard = static_cast<int>(*shard);
}

/// cuda_graph_impl and its scope (Megatron-Core transformer_config.py: the scope selects what
/// per-layer graphs capture, is empty for the whole layer and must be empty with
/// full_iteration; the older spelling local + [full_iteration] is one graph per iteration).
void read_cuda_graphs(SectionReader& r, TrainingSpec& t)
{
  t.cuda_graph_impl = r.choice("cuda_graph_impl");
  auto list = r.find("cuda_graph_scope");
  if (!list)
    return;
  static const std::vector<std::string> parts{"attn", "mlp", "moe", "moe_router", "moe_preprocess", "mamba",
                                              "full_iteration"};
  const bool per_layer = t.cuda_graph_impl == "transformer_engine" || t.cuda_graph_impl == "local";
  for (const auto& item : list->items()) {
    std::string part = item.as_choice(parts, "graph scope");
    if (!per_layer)
      item.fail("cuda_graph_scope '" + part + "' with cuda_graph_impl " + t.cuda_graph_impl,
                "a scope only with cuda_graph_impl transformer_engine or local");
    if (part == "full_iteration") {
      if (t.cuda_graph_impl != "local")
        item.fail("graph scope full_iteration is the older spelling of cuda_graph_impl full_iteration with local",
                  "cuda_graph_impl: full_iteration, or local with [full_iteration]");
      t.cuda_graph_impl = "full_iteration";
      continue;
    }
    t.cuda_graph_scope.push_back(part);
  }
  if (t.cuda_graph_impl == "full_iteration" && !t.cuda_graph_scope.empty())
    list->fail("cuda_graph_scope mixes full_iteration with per-layer parts", "either [full_iteration] or layer parts");
  const bool router = std::find(t.cuda_graph_scope.begin(), t.cuda_graph_scope.end(), "moe_router") !=
                      t.cuda_graph_scope.end();
  const bool pre = std::find(t.cuda_graph_scope.begin(), t.cuda_graph_scope.end(), "moe_preprocess") !=
                   t.cuda_graph_scope.end();
  if (pre && !router)
    list->fail("graph scope moe_preprocess without moe_router", "moe_preprocess together with moe_router");
}

} // namespace

bool TrainingSpec::graph_captures(const std::string& part) const
{
  if (cuda_graph_impl != "transformer_engine" && cuda_graph_impl != "local")
    return false;
  auto has = [&](const char* s) {
    return std::find(cuda_graph_scope.begin(), cuda_graph_scope.end(), s) != cuda_graph_scope.end();
  };
  // an empty scope is the whole layer, but a dropless MoE layer's routed experts have dynamic
  // shapes: only the `moe` scope (static, capacity-sized) captures them
  if (part == "attn" || part == "mlp")
    return cuda_graph_scope.empty() || has(part.c_str());
  if (part == "moe_router" || part == "moe_preprocess")
    return cuda_graph_scope.empty() || has(part.c_str()) || has("moe");
  if (part == "moe_experts" || part == "moe_combine")
    return has("moe");
  return false; // embedding, logits: outside the layers
}

bool default_flash_attention(const TrainingSpec& t, const GpuSpec& gpu, std::string* origin)
{
  std::string backend;
  const bool on = gpu.attention_curve(t.traits().attention, &backend) != nullptr;
  if (origin)
    *origin = on ? "default: " + std::string(to_string(t.framework)) + " calls " + backend + " on " + gpu.id
                 : "default: " + std::string(to_string(t.framework)) + " has no flash-attention kernel with a curve for " +
                       gpu.id;
  return on;
}

namespace {

/// Every key of `training:` into `t`, each at its default where not written; dp and
/// global_batch only where written (parse_training derives them from the cluster).
void read_training_keys(SectionReader& r, TrainingSpec& t, SourceMap* where)
{
  auto int_at = [&](const char* key) { return static_cast<int>(r.integer(key)); };
  t.tp = int_at("tp");
  t.pp = int_at("pp");
  t.cp = int_at("cp");
  t.ep = int_at("ep");
  t.etp = int_at("etp");
  t.vpp = int_at("vpp");
  if (auto dp = r.integer_if("dp"))
    t.dp = static_cast<int>(*dp);
  t.schedule = r.choice_if("pipeline_schedule").value_or(default_schedule(t.vpp));
  t.sequence_parallel = r.boolean("sequence_parallel");
  read_data_parallel(r, t);
  t.recompute = static_cast<Recompute>(index_of(recompute_names(), r.choice("recompute")));
  t.micro_batch = int_at("micro_batch");
  if (auto gb = r.integer_if("global_batch"))
    t.global_batch = static_cast<int>(*gb);
  t.precision = parse_precision(r.choice("precision"));
  if (r.has("flash_attention")) // otherwise the experiment resolves it for the GPU (default_flash_attention)
    t.flash_attention = r.boolean("flash_attention");
  t.framework = static_cast<Framework>(index_of(framework_names(), r.choice("framework")));
  t.pipeline_layout = r.string("pipeline_layout");
  t.embedding_slot = r.boolean("account_for_embedding_in_pipeline_split");
  t.loss_slot = r.boolean("account_for_loss_in_pipeline_split");
  if (auto list = r.find("recompute_modules")) {
    static const std::vector<std::string> modules{"core_attn", "mlp",         "moe_act", "layernorm",
                                                  "mla_up_proj", "moe",      "shared_experts"};
    for (const auto& item : list->items())
      t.recompute_modules.push_back(item.as_choice(modules, "recompute module"));
  }
  if (auto recipe = r.choice_if("fp8_recipe"))
    t.fp8_recipe = *recipe;
  if (r.has("compile"))
    t.compile = r.boolean("compile");
  t.moe_dispatcher = r.choice("moe_token_dispatcher");
  read_cuda_graphs(r, t);
  t.moe_a2a_overlap = r.boolean("moe_a2a_overlap");
  t.moe_load_balance = r.choice("moe_load_balance");
  for (const char* key : {"moe_max_load", "moe_capacity_factor"}) {
    const double v = r.number(key);
    if (v > 0 && v < 1)
      r.require(key).fail(std::string(key) + " is below 1, the mean load", "0 (none), or a ratio of at least 1");
  }
  t.moe_max_load = r.number("moe_max_load");
  t.moe_capacity_factor = r.number("moe_capacity_factor");
  read_overlap(r, t, where);
  if (r.has("bucket_size"))
    t.bucket_bytes = r.quantity("bucket_size");
  read_order(r, t);
  read_lora(r, t);
  t.collective_algo = r.string("collective_algo");
  read_state_bytes(r, t);
}

} // namespace

TrainingSpec parse_training(const YamlNode& node, long long gpus, const ModelSpec& model,
                            std::shared_ptr<const FrameworkCatalog> frameworks, SourceMap* where)
{
  TrainingSpec t;
  t.frameworks = std::move(frameworks);
  SectionReader r(node, training_section());
  read_training_keys(r, t, where);
  if (!r.has("dp")) {
    if (gpus % t.model_parallel() != 0)
      throw ConfigError(node.where(),
                        "tp*pp*cp = " + std::to_string(t.model_parallel()) + " does not divide the " +
                            std::to_string(gpus) + " GPUs",
                        "a layout whose tp*pp*cp divides cluster.gpus", ConfigError::Kind::rule);
    t.dp = static_cast<int>(gpus / t.model_parallel());
  }
  if (!r.has("global_batch")) {
    const long long per_step = static_cast<long long>(t.micro_batch) * t.dp;
    if (per_step > static_cast<long long>(training_section().at("global_batch").max))
      r.require("micro_batch")
          .fail("micro_batch*dp = " + std::to_string(per_step) + " sequences per step exceed the largest global_batch",
                training_section().at("global_batch").valid());
    t.global_batch = static_cast<int>(per_step);
  }
  r.finish();
  if (where) // the keys written, so that a caller can tell a default from a choice
    for (const auto& key : training_section().key_names())
      if (r.has(key))
        (*where)[key] = r.where(key);

  if (auto v = check_layout(t, model, gpus))
    throw ConfigError(r.where(v->key), v->message, v->valid, ConfigError::Kind::rule);
  if (t.precision == Precision::fp4 && t.frameworks && t.traits().fp4_recipe.empty()) {
    std::vector<std::string> with;
    for (std::size_t i = 0; i < framework_names().size(); ++i)
      if (!t.frameworks->get(static_cast<Framework>(i)).fp4_recipe.empty())
        with.push_back(framework_names()[i]);
    throw ConfigError(r.where(r.has("framework") ? "framework" : "precision"),
                      std::string("framework '") + to_string(t.framework) + "' has no FP4 training recipe",
                      "a framework with one (" + join(with) + "), or precision bf16 or fp8", ConfigError::Kind::rule);
  }
  return t;
}

TrainingSpec parse_training_keys(const YamlNode& node, std::set<std::string>& written)
{
  TrainingSpec t;
  SectionReader r(node, training_section());
  read_training_keys(r, t, nullptr);
  r.finish();
  for (const auto& key : training_section().key_names())
    if (r.has(key))
      written.insert(key);
  return t;
}

} // namespace clustersim
