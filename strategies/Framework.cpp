#include "strategies/Framework.hpp"

#include "strategies/TrainingSpec.hpp"
#include "topology/config/Suggest.hpp"

#include <algorithm>
#include <stdexcept>

namespace clustersim {
namespace {

template <class T> std::vector<std::string> keys_of(const std::map<std::string, T>& m)
{
  std::vector<std::string> out;
  for (const auto& [k, v] : m)
    out.push_back(k);
  return out;
}

} // namespace

ElementwiseKernel KernelSet::op(const std::string& n) const
{
  auto it = ops.find(n);
  return it == ops.end() ? ElementwiseKernel{} : it->second;
}

StateBytes FrameworkTraits::states(Precision p) const
{
  auto it = state_bytes.find(to_string(p));
  if (it == state_bytes.end())
    it = state_bytes.find("other");
  return it == state_bytes.end() ? StateBytes{} : it->second;
}

double FrameworkTraits::grad_reduce(Precision p) const
{
  auto it = grad_reduce_bytes.find(to_string(p));
  if (it == grad_reduce_bytes.end())
    it = grad_reduce_bytes.find("other");
  return it == grad_reduce_bytes.end() ? 4.0 : it->second;
}

// ------------------------------------------------------------------------------- schema

const Section& frameworks_file_section()
{
  using K = KeySpec;
  static const Section s{"frameworks.yaml",
                         "training frameworks as documented properties (platforms/frameworks.yaml)",
                         {
                             K::value("kernel_sets", "element-wise kernels per stack: name to section kernel_set").must(),
                             K::value("fp8_recipes", "FP8 recipes: name to section fp8_recipe").must(),
                             K::value("frameworks", "every training.framework name to section framework").must(),
                         }};
  return s;
}

const Section& kernel_set_section()
{
  using K = KeySpec;
  static const Section s{"kernel_set",
                         "the element-wise kernels of a layer as one stack runs them",
                         {
                             K::string("doc", "", "what stack this is"),
                             K::value("ops", "op name (norm, rotary, swiglu, gelu, residual, attention_output, "
                                             "gqa_expand, cross_entropy, embedding, ring_attention_step, moe_permute, moe_unpermute, "
                                             "moe_sort_chunks, moe_router) to section "
                                             "kernel_op")
                                 .must(),
                         }};
  return s;
}

const Section& kernel_op_section()
{
  using K = KeySpec;
  static const Section s{"kernel_op",
                         "one element-wise op: its forward and backward passes",
                         {
                             K::section("forward", "kernel_pass", "the forward pass").must(),
                             K::section("backward", "kernel_pass", "the backward pass").must(),
                         }};
  return s;
}

const Section& kernel_pass_section()
{
  using K = KeySpec;
  static const Section s{"kernel_pass",
                         "kernels launched and HBM accesses per element of the op's tensor",
                         {
                             K::number("kernels", 0, 0, 1000, "kernels launched").counts("kernels"),
                             K::number("act", 0, 0, 1000, "reads + writes in the activation dtype").counts("accesses"),
                             K::number("fp32", 0, 0, 1000, "reads + writes in fp32").counts("accesses"),
                         }};
  return s;
}

const Section& fp8_recipe_section()
{
  using K = KeySpec;
  static const Section s{
      "fp8_recipe",
      "a low-precision recipe (FP8, or FP4): the casts each such linear layer adds and what it keeps",
      {
          K::string("doc", "", "the recipe and its source"),
          K::choice("format", "fp8", {"fp8", "fp4"}, "number format of the linear layers' GEMMs"),
          K::section("input", "fp8_cast", "cast of the layer's input, every micro-batch").must(),
          K::section("grad", "fp8_cast", "cast of the output gradient, every micro-batch").must(),
          K::section("weight", "fp8_cast", "cast of the weight").must(),
          K::number("saved_bytes", 1, 0, 8, "bytes per input element kept for backward").counts("bytes"),
          K::number("weight_copy_bytes", 0, 0, 8, "cast weight copies held per parameter besides the 16-bit weights")
              .counts("bytes"),
          K::number("param_gather_bytes", 2, 1, 8, "bytes per parameter a parameter all-gather moves").counts("bytes"),
          K::number("amax_forward", 0, 0, 16, "amaxes per FP8 linear reduced over the stage as a chunk's forward ends")
              .counts("values"),
          K::number("amax_backward", 0, 0, 16, "amaxes per FP8 linear reduced over the stage as its backward ends")
              .counts("values"),
      }};
  return s;
}

const Section& fp8_cast_section()
{
  using K = KeySpec;
  static const Section s{"fp8_cast",
                         "one cast: kernels and accesses per element cast",
                         {
                             K::choice("per", "micro_batch", {"micro_batch", "step"}, "how often the cast runs"),
                             K::number("kernels", 0, 0, 100, "kernels launched").counts("kernels"),
                             K::number("act", 0, 0, 100, "activation-dtype accesses").counts("accesses"),
                             K::number("fp8", 0, 0, 100,
                                       "bytes per element in the recipe's format (1 per FP8 copy, 0.5625 per "
                                       "NVFP4 copy: 4 bits and an E4M3 scale per 16)")
                                 .counts("bytes"),
                         }};
  return s;
}

const Section& framework_section()
{
  using K = KeySpec;
  static const Section s{
      "framework",
      "one training framework's documented properties",
      {
          K::string("doc", "", "what the framework is"),
          K::string("kernels", "", "kernel set without torch.compile").must(),
          K::boolean("compile", false, "torch.compile is on by default"),
          K::boolean("compile_with_fp8", false, "torch.compile is on by default when FP8 is"),
          K::list("attention", "flash-attention backends in order of preference (cudnn, fa1, fa2, fa3)").must(),
          K::choice("selective_recompute", "core_attention", {"core_attention", "op"},
                    "what selective recompute recomputes: the attention core (Megatron), or every op but the "
                    "saved matmuls, SDPA and collectives (torch selective activation checkpointing)"),
          K::choice("context_parallel", "ring", {"ring", "all_gather"},
                    "how context parallelism moves K/V: a P2P ring under the attention steps, or one all-gather "
                    "before them (and a reduce-scatter of dK/dV after)"),
          K::string("fp8_recipe", "delayed", "default FP8 recipe (section fp8_recipe)"),
          K::string("fp4_recipe", "", "recipe of precision fp4 (section fp8_recipe, format fp4); empty: none"),
          K::boolean("fp8_output_layer", false, "the vocabulary projection runs in FP8 too"),
          K::value("ops", "element-wise ops the framework launches otherwise than its kernel set: op name to "
                          "section kernel_op (as in a kernel set)"),
          K::number("loss_16bit_copies", 0, 0, 4,
                    "logits-sized buffers in the activations' 16-bit type alive at the loss's peak besides the "
                    "logits: 1 for flash-attn's fused cross entropy without in-place backward (its gradient)")
              .counts("buffers"),
          K::number("loss_fp32_copies", 2, 0, 4,
                    "fp32 logits-sized buffers alive at the loss's peak besides the 16-bit logits: 1 for Megatron's "
                    "vocab-parallel cross entropy (one fp32 copy; max, exp, softmax and the gradient in place), 2 for "
                    "torch's F.cross_entropy(logits.float()) (the copy and the log-softmax, then its gradient)")
              .counts("buffers"),
          K::list("host_syncs", "where the framework's host thread waits for the GPU: moe_dispatch (once per MoE "
                                "layer forward, for the token counts), p2p (after every pipeline exchange of the "
                                "non-interleaved schedule)"),
          K::choice("moe_probs", "unpermute", {"unpermute", "activation"},
                    "where a MoE layer weighs each routed copy by its router probability: in the unpermutation "
                    "(which then keeps the experts' outputs for the probabilities' gradient), or in the experts' "
                    "activation (Megatron-Core's weighted SwiGLU: nothing more is kept)"),
          K::choice("balanced_routing", "random", {"random", "round_robin"},
                    "how the router picks experts under moe_load_balance: force_balanced: at random for every "
                    "token (Megatron's random logits), or round robin (token t's j-th expert is (t x top_k + j) "
                    "mod experts: each token's experts are consecutive, on one or two expert ranks)"),
          K::choice("interleaved_groups", "pp", {"pp", "rounds"},
                    "how its interleaved 1F1B groups micro-batches through the model chunks: pp (groups of pp, "
                    "micro-batches a multiple of pp: Megatron-LM) or rounds (max(1, m / pp) rounds of m / rounds, "
                    "micro-batches a multiple of the rounds: PyTorch's ScheduleInterleaved1F1B)"),
          K::value("state_bytes", "precision name or 'other' to section training.state_bytes").must(),
          K::value("grad_reduce_bytes", "precision name or 'other' to bytes per reduced gradient element").must(),
          K::section("bucket_params", "framework.bucket_params", "gradient bucket size").must(),
          K::section("sharded", "framework.sharded", "how ZeRO-3 / FSDP runs").must(),
          K::value("tp_overlap", "GEMM pass (qkv_fprop, proj_fprop, fc1_fprop, fc2_fprop, qkv_dgrad, qkv_wgrad, "
                                 "proj_dgrad, fc1_dgrad, fc1_wgrad, fc2_dgrad) to section tp_overlap"),
      }};
  return s;
}

const Section& framework_bucket_section()
{
  using K = KeySpec;
  static const Section s{"framework.bucket_params",
                         "gradient buckets: max(min, per_dp x dp) parameters",
                         {
                             K::number("min", 25e6, 1, 1e12, "smallest bucket").counts("parameters"),
                             K::number("per_dp", 0, 0, 1e9, "growth with the data-parallel size").counts("parameters"),
                         }};
  return s;
}

const Section& tp_overlap_section()
{
  using K = KeySpec;
  static const Section s{"tp_overlap",
                         "one GEMM pass overlapped with its tensor-parallel communication",
                         {
                             K::number("sms", 0, 0, 1024, "SMs the communication kernels take from the GEMM")
                                 .counts("SMs"),
                             K::integer("splits", 1, 0, 64, "chunks the GEMM is split into (0: one per TP rank)"),
                         }};
  return s;
}

const Section& framework_sharded_section()
{
  using K = KeySpec;
  static const Section s{
      "framework.sharded",
      "fully sharded data parallelism as the framework runs it",
      {
          K::choice("granularity", "unit", {"unit", "tensor"},
                    "one all-gather per unit (layer) or per parameter tensor"),
          K::boolean("list_collectives", false, "list-of-tensors collectives: one copy kernel per rank"),
          K::number("prefetch_params", 0, 0, 1e12, "parameters gathered ahead of use (per-tensor gathering)")
              .counts("parameters"),
          K::integer("prefetch_units", 1, 0, 64, "units gathered ahead of use (per-unit gathering)").counts("units"),
          K::boolean("reshard_after_forward", true, "parameters freed after forward, gathered again for backward"),
          K::boolean("keep_with_pipeline", false,
                     "with pipeline parallelism: one gather and one reduce-scatter per step, at its first and "
                     "last micro-batch"),
      }};
  return s;
}

// ------------------------------------------------------------------------------- reading

namespace {

KernelPass read_pass(const YamlNode& n)
{
  SectionReader r(n, kernel_pass_section());
  KernelPass p{r.number("kernels"), r.number("act"), r.number("fp32")};
  r.finish();
  return p;
}

CastKernel read_cast(const YamlNode& n, bool* per_step)
{
  SectionReader r(n, fp8_cast_section());
  CastKernel c{r.number("kernels"), r.number("act"), r.number("fp8")};
  const std::string per = r.choice("per");
  if (per_step)
    *per_step = per == "step";
  r.finish();
  return c;
}

/// A mapping of element-wise op names to their passes, into `ops` (replacing what is there).
void read_ops(const YamlNode& list, std::map<std::string, ElementwiseKernel>& ops)
{
  static const std::vector<std::string> names{"norm",       "rotary",     "swiglu",        "gelu",     "residual",
                                              "attention_output", "gqa_expand", "cross_entropy", "embedding",
                                              "ring_attention_step", "moe_permute", "moe_unpermute", "moe_sort_chunks",
                                              "moe_router"};
  if (!list.is_map())
    list.fail("ops must be a mapping of op name to its passes", "{norm: {forward: ..., backward: ...}, ...}");
  for (auto& [key, value] : list.entries()) {
    std::string op = key.as_choice(names, "element-wise op");
    SectionReader o(value, kernel_op_section(), "op '" + op + "'");
    ops[op] = ElementwiseKernel{read_pass(o.require("forward")), read_pass(o.require("backward"))};
    o.finish();
  }
}

KernelSet read_kernel_set(const std::string& name, const YamlNode& n)
{
  KernelSet k;
  k.name = name;
  SectionReader r(n, kernel_set_section(), "kernel set '" + name + "'");
  k.doc = r.string("doc");
  read_ops(r.require("ops"), k.ops);
  r.finish();
  return k;
}

Fp8Recipe read_recipe(const std::string& name, const YamlNode& n)
{
  Fp8Recipe f;
  f.name = name;
  SectionReader r(n, fp8_recipe_section(), "fp8 recipe '" + name + "'");
  f.doc = r.string("doc");
  f.format = parse_precision(r.choice("format"));
  f.input = read_cast(r.require("input"), nullptr);
  f.grad = read_cast(r.require("grad"), nullptr);
  f.weight = read_cast(r.require("weight"), &f.weight_per_step);
  f.saved_bytes = r.number("saved_bytes");
  f.weight_copy_bytes = r.number("weight_copy_bytes");
  f.param_gather_bytes = r.number("param_gather_bytes");
  f.amax_forward = r.number("amax_forward");
  f.amax_backward = r.number("amax_backward");
  r.finish();
  return f;
}

std::vector<std::string> precision_keys()
{
  std::vector<std::string> keys = precision_names();
  keys.push_back("other");
  return keys;
}

void read_states(FrameworkTraits& f, const YamlNode& n)
{
  if (!n.is_map())
    n.fail("state_bytes must map precisions to state bytes", "{fp16: {weights: 2, grads: 2, optimizer: 12}, other: ...}");
  for (auto& [key, value] : n.entries()) {
    std::string p = key.as_choice(precision_keys(), "precision");
    SectionReader s(value, state_bytes_section());
    f.state_bytes[p] = StateBytes{s.number("weights"), s.number("grads"), s.number("optimizer")};
    s.finish();
  }
  if (!f.state_bytes.count("other"))
    n.fail("state_bytes has no 'other' entry", "an 'other' entry for the precisions not listed");
}

void read_reduce_bytes(FrameworkTraits& f, const YamlNode& n)
{
  if (!n.is_map())
    n.fail("grad_reduce_bytes must map precisions to bytes", "{fp16: 2, other: 4}");
  for (auto& [key, value] : n.entries())
    f.grad_reduce_bytes[key.as_choice(precision_keys(), "precision")] = value.as_number(1, 8);
  if (!f.grad_reduce_bytes.count("other"))
    n.fail("grad_reduce_bytes has no 'other' entry", "an 'other' entry for the precisions not listed");
}

void read_sharded(FrameworkTraits& f, const YamlNode& n)
{
  SectionReader r(n, framework_sharded_section());
  ShardedTraits& s = f.sharded;
  s.per_tensor = r.choice("granularity") == "tensor";
  s.list_collectives = r.boolean("list_collectives");
  s.prefetch_params = r.number("prefetch_params");
  s.prefetch_units = static_cast<int>(r.integer("prefetch_units"));
  s.reshard_after_forward = r.boolean("reshard_after_forward");
  s.keep_with_pipeline = r.boolean("keep_with_pipeline");
  r.finish();
}

FrameworkTraits read_framework(const std::string& name, const YamlNode& n, std::map<std::string, KernelSet>& sets,
                               const std::map<std::string, Fp8Recipe>& recipes)
{
  FrameworkTraits f;
  f.name = name;
  SectionReader r(n, framework_section(), "framework '" + name + "'");
  f.doc = r.string("doc");
  YamlNode kernels = r.require("kernels");
  f.kernels = r.string("kernels");
  if (!sets.count(f.kernels))
    kernels.fail(unknown_name("kernel set", f.kernels, keys_of(sets)), join(keys_of(sets)));
  if (!sets.count("compiled"))
    kernels.fail("the kernel sets have no 'compiled' set (what torch.compile runs)", "a kernel set named compiled");
  if (auto ops = r.find("ops")) {
    // the framework's own element-wise ops over its kernel set's: a set of its own
    KernelSet own = sets.at(f.kernels);
    own.name = f.kernels + "+" + name;
    own.doc += "; " + name + "'s own ops";
    read_ops(*ops, own.ops);
    f.kernels = own.name;
    sets[own.name] = std::move(own);
  }
  f.compile = r.boolean("compile");
  f.compile_with_fp8 = r.boolean("compile_with_fp8");
  for (const auto& item : r.require("attention").items())
    f.attention.push_back(item.as_choice(attention_backends(), "attention backend"));
  if (f.attention.empty())
    r.require("attention").fail("no attention backend listed", join(attention_backends()));
  f.selective = r.choice("selective_recompute");
  f.cp_all_gather = r.choice("context_parallel") == "all_gather";
  YamlNode recipe = r.has("fp8_recipe") ? r.require("fp8_recipe") : n;
  f.fp8_recipe = r.string("fp8_recipe");
  auto of_format = [&](Precision p) {
    std::vector<std::string> names;
    for (const auto& [id, rec] : recipes)
      if (rec.format == p)
        names.push_back(id);
    return names;
  };
  if (!recipes.count(f.fp8_recipe) || recipes.at(f.fp8_recipe).format != Precision::fp8)
    recipe.fail(unknown_name("fp8 recipe", f.fp8_recipe, of_format(Precision::fp8)), join(of_format(Precision::fp8)));
  f.fp4_recipe = r.string("fp4_recipe");
  if (!f.fp4_recipe.empty() && (!recipes.count(f.fp4_recipe) || recipes.at(f.fp4_recipe).format != Precision::fp4)) {
    YamlNode at = r.require("fp4_recipe");
    at.fail(unknown_name("fp4 recipe", f.fp4_recipe, of_format(Precision::fp4)), join(of_format(Precision::fp4)));
  }
  f.fp8_output_layer = r.boolean("fp8_output_layer");
  f.loss_fp32_copies = r.number("loss_fp32_copies");
  f.loss_16bit_copies = r.number("loss_16bit_copies");
  f.moe_probs_in_activation = r.choice("moe_probs") == "activation";
  if (auto syncs = r.find("host_syncs"))
    for (const auto& item : syncs->items()) {
      const std::string s = item.as_choice({"moe_dispatch", "p2p"}, "host synchronisation");
      (s == "p2p" ? f.p2p_host_sync : f.moe_host_sync) = true;
    }
  f.moe_round_robin = r.choice("balanced_routing") == "round_robin";
  f.interleaved_rounds = r.choice("interleaved_groups") == "rounds";
  read_states(f, r.require("state_bytes"));
  read_reduce_bytes(f, r.require("grad_reduce_bytes"));
  SectionReader b(r.require("bucket_params"), framework_bucket_section());
  f.bucket_min_params = b.number("min");
  f.bucket_per_dp = b.number("per_dp");
  b.finish();
  read_sharded(f, r.require("sharded"));
  if (auto o = r.find("tp_overlap")) {
    static const std::vector<std::string> passes{"qkv_fprop", "proj_fprop", "fc1_fprop", "fc2_fprop",
                                                 "qkv_dgrad", "qkv_wgrad", "proj_dgrad", "proj_wgrad",
                                                 "fc1_dgrad", "fc1_wgrad", "fc2_dgrad", "fc2_wgrad"};
    if (!o->is_map())
      o->fail("tp_overlap must map GEMM passes to their overlap", "{proj_fprop: {sms: 24, splits: 4}, ...}");
    for (auto& [key, value] : o->entries()) {
      SectionReader t(value, tp_overlap_section());
      f.tp_overlap[key.as_choice(passes, "GEMM pass")] = TpOverlap{t.number("sms"), static_cast<int>(t.integer("splits"))};
      t.finish();
    }
  }
  r.finish();
  return f;
}

template <class T> std::map<std::string, T> read_named(const YamlNode& n, const char* what,
                                                       T (*reader)(const std::string&, const YamlNode&))
{
  if (!n.is_map())
    n.fail(std::string(what) + " must be a mapping of names", "NAME: {...}");
  std::map<std::string, T> out;
  for (auto& [key, value] : n.entries())
    out[key.as_string()] = reader(key.as_string(), value);
  return out;
}

} // namespace

FrameworkCatalog FrameworkCatalog::load(const std::string& path)
{
  FrameworkCatalog c;
  YamlNode root = YamlNode::load_file(path);
  SectionReader top(root, frameworks_file_section(), "framework catalog");
  c.kernel_sets_ = read_named<KernelSet>(top.require("kernel_sets"), "kernel_sets", read_kernel_set);
  c.recipes_ = read_named<Fp8Recipe>(top.require("fp8_recipes"), "fp8_recipes", read_recipe);
  YamlNode list = top.require("frameworks");
  if (!list.is_map())
    list.fail("frameworks must be a mapping of framework names", join(framework_names()));
  for (auto& [key, value] : list.entries()) {
    std::string name = key.as_choice(framework_names(), "framework");
    c.frameworks_[name] = read_framework(name, value, c.kernel_sets_, c.recipes_);
  }
  for (const auto& name : framework_names())
    if (!c.frameworks_.count(name))
      list.fail("framework '" + name + "' is not described", "an entry for every framework: " + join(framework_names()));
  top.finish();
  return c;
}

const FrameworkTraits& FrameworkCatalog::get(Framework f) const
{
  return frameworks_.at(to_string(f));
}

const KernelSet& FrameworkCatalog::kernel_set(const std::string& name) const
{
  auto it = kernel_sets_.find(name);
  if (it == kernel_sets_.end())
    throw std::logic_error("no kernel set '" + name + "'");
  return it->second;
}

const Fp8Recipe& FrameworkCatalog::recipe(const std::string& name) const
{
  auto it = recipes_.find(name);
  if (it == recipes_.end())
    throw std::logic_error("no fp8 recipe '" + name + "'");
  return it->second;
}

std::vector<std::string> FrameworkCatalog::recipe_names() const
{
  return keys_of(recipes_);
}

} // namespace clustersim
