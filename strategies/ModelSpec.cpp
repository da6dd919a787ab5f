#include "strategies/ModelSpec.hpp"

#include "topology/config/Suggest.hpp"

#include <algorithm>
#include <map>
#include <dirent.h>
#include <sys/stat.h>

namespace clustersim {

namespace {

double norm_params(const ModelSpec& m, double width) { return m.norm == NormKind::layernorm ? 2.0 * width : width; }

/// One MLP of width `f` (a dense MLP, an expert): its matrices and biases.
double mlp_of(const ModelSpec& m, double f)
{
  double p = static_cast<double>(m.mlp_matrices()) * m.hidden * f;
  if (m.bias)
    p += m.mlp == MlpKind::swiglu ? 2.0 * f + m.hidden : f + m.hidden;
  return p;
}

} // namespace

double ModelSpec::attention_params() const
{
  const double h = hidden;
  double p = norm_params(*this, h);
  if (mla) {
    // DeepSeek-V2/V3: queries through a q_lora_rank latent (or directly), keys and values
    // through one kv_lora_rank latent plus a shared rotary key, each latent normalised
    const Mla& r = mla_ranks;
    const double qk = static_cast<double>(heads) * qk_head_dim();
    p += r.q_lora_rank > 0 ? h * r.q_lora_rank + norm_params(*this, r.q_lora_rank) + r.q_lora_rank * qk : h * qk;
    p += h * (r.kv_lora_rank + r.qk_rope_head_dim) + norm_params(*this, r.kv_lora_rank) +
         static_cast<double>(r.kv_lora_rank) * heads * (r.qk_nope_head_dim + r.v_head_dim);
    p += static_cast<double>(heads) * r.v_head_dim * h;
    return p;
  }
  const double q = q_dim();
  p += h * (q + 2.0 * kv_dim()) + q * h;
  if (bias)
    p += (q + 2.0 * kv_dim()) + h;
  return p;
}

double ModelSpec::mlp_params(int layer) const
{
  double p = norm_params(*this, hidden);
  if (!moe_layer(layer))
    return p + mlp_of(*this, ffn_hidden);
  return p + shared_experts * mlp_of(*this, expert_ffn()) + static_cast<double>(hidden) * experts;
}

double ModelSpec::expert_params(int layer) const
{
  return moe_layer(layer) ? experts * mlp_of(*this, expert_ffn()) : 0.0;
}

double ModelSpec::attended_share(int layer) const
{
  return windowed(layer) ? window_share() : 1.0;
}

double ModelSpec::window_share() const
{
  if (!has_window())
    return 1.0;
  const double s = seq_len;
  const double w = sliding_window;
  return (w * s - w * (w - 1) / 2) / (s * (s + 1) / 2);
}

double ModelSpec::layer_params(int layer) const
{
  return attention_params() + mlp_params(layer) + expert_params(layer);
}

std::vector<double> ModelSpec::layer_tensors(int layer) const
{
  const double h = hidden;
  std::vector<double> t;
  auto norm_ = [&] {
    t.push_back(h);
    if (norm == NormKind::layernorm)
      t.push_back(h);
  };
  norm_();
  if (mla) {
    t.push_back(attention_params() - norm_params(*this, h)); // MLA's projections, one piece per layer
  } else {
    const double q = q_dim();
    const double kv = kv_dim();
    t.push_back(h * (q + 2 * kv));
    if (bias)
      t.push_back(q + 2 * kv);
    t.push_back(q * h);
    if (bias)
      t.push_back(h);
  }
  norm_();
  auto one_mlp = [&](double f) {
    t.push_back(h * f * (mlp == MlpKind::swiglu ? 2 : 1));
    if (bias)
      t.push_back(f * (mlp == MlpKind::swiglu ? 2 : 1));
    t.push_back(f * h);
    if (bias)
      t.push_back(h);
  };
  if (!moe_layer(layer)) {
    one_mlp(ffn_hidden);
    return t;
  }
  for (int e = 0; e < experts + shared_experts; ++e)
    one_mlp(expert_ffn());
  t.push_back(h * experts);
  return t;
}

double ModelSpec::embedding_params() const
{
  double e = static_cast<double>(vocab) * hidden;
  if (position == PositionKind::learned)
    e += static_cast<double>(seq_len) * hidden;
  return e;
}

double ModelSpec::output_params() const
{
  return tied_embeddings ? 0.0 : static_cast<double>(vocab) * hidden;
}

double ModelSpec::final_norm_params() const
{
  return norm == NormKind::layernorm ? 2.0 * hidden : static_cast<double>(hidden);
}

double ModelSpec::total_params() const
{
  double p = embedding_params() + output_params() + final_norm_params();
  p += layers * (attention_params() + mlp_params(layers - 1) + expert_params(layers - 1));
  if (experts > 1 && dense_layers > 0) // the leading dense layers instead of MoE ones
    p += dense_layers * (mlp_params(0) - mlp_params(layers - 1) - expert_params(layers - 1));
  return p;
}

double ModelSpec::active_params() const
{
  if (experts <= 1)
    return total_params();
  return total_params() - moe_layer_count() * expert_params(layers - 1) * (experts - top_k) / experts;
}

namespace {

const std::vector<std::string> kMlp{"gelu", "swiglu"};
const std::vector<std::string> kNorm{"layernorm", "rmsnorm"};
const std::vector<std::string> kPosition{"learned", "rotary", "alibi"};

bool file_exists(const std::string& p)
{
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string dirname_of(const std::string& path)
{
  auto pos = path.find_last_of('/');
  return pos == std::string::npos ? std::string(".") : path.substr(0, pos);
}

} // namespace

const Section& model_section()
{
  using K = KeySpec;
  static const Section s{
      "model",
      "a transformer by its dimensions; a preset name, a mapping (optionally `preset:` or `hf_config:` to start "
      "from), or keys of the validation schema",
      {
          K::string("name", "", "what reports call it").computed("the preset's name, or the file's"),
          K::string("preset", "", "a preset of strategies/models to start from (its keys can be overridden)"),
          K::string("hf_config", "",
                    "a Hugging Face config.json to start from, relative to this file (with seq_len: its "
                    "max_position_embeddings is the longest context, not the training length)"),
          K::integer("layers", 0, 1, 100000, "transformer layers").computed("from the preset, else required"),
          K::integer("hidden", 0, 1, 1 << 20, "hidden size").computed("from the preset, else required"),
          K::integer("heads", 0, 1, 1 << 16, "attention heads").computed("from the preset, else required"),
          K::integer("kv_heads", 0, 1, 1 << 16, "key/value heads (grouped-query attention when fewer than heads)")
              .computed("heads"),
          K::integer("ffn_hidden", 0, 1, 1 << 24, "MLP width (per expert for MoE)").computed("4 * hidden"),
          K::integer("vocab", 0, 1, 1 << 26, "vocabulary size").computed("from the preset, else required"),
          K::integer("seq_len", 0, 1, 1 << 24, "sequence length in tokens")
              .computed("from the preset, else required")
              .counts("tokens"),
          K::choice("mlp", "gelu", kMlp, "MLP: gelu (2 matrices) or swiglu (3 matrices)"),
          K::choice("norm", "layernorm", kNorm, "normalisation layers")
              .computed("with mlp given: rmsnorm for swiglu (the Llama family), layernorm for gelu (GPT)"),
          K::choice("position", "learned", kPosition, "position encoding")
              .computed("with mlp given: rotary for swiglu, learned for gelu"),
          K::boolean("bias", true, "linear layers carry biases")
              .computed("with mlp given: false for swiglu, true for gelu"),
          K::boolean("dropout", true,
                     "trains with dropout: its 1-byte masks are kept for backward and its kernels run (false: "
                     "every dropout probability 0, as MPT's and Llama's)")
              .computed("the value of bias: GPT-style models train with dropout, Llama-style ones without"),
          K::boolean("tied_embeddings", false, "the output projection shares the input embedding"),
          K::integer("experts", 1, 1, 1 << 16, "routed experts per MoE layer (dense when 1)"),
          K::integer("top_k", 1, 1, 1 << 16, "experts per token"),
          K::integer(
              "router_groups", 1, 1, 1 << 16,
              "contiguous expert groups of a group-limited router (DeepSeek-V3: 8; each token's experts come "
              "from router_group_topk of them, so from at most that many nodes when a group is a node's experts)"),
          K::integer("router_group_topk", 1, 1, 1 << 16, "groups a token's experts are chosen from")
              .computed("router_groups"),
          K::integer("moe_ffn_hidden", 0, 1, 1 << 24, "FFN width of one routed expert").computed("ffn_hidden"),
          K::integer("shared_experts", 0, 0, 1 << 10, "always-active experts of every MoE layer"),
          K::integer("dense_layers", 0, 0, 100000, "leading layers with a dense MLP of ffn_hidden"),
          K::choice("attention", "mha", {"mha", "mla"},
                    "mha (multi-head, with GQA by kv_heads) or mla (DeepSeek "
                    "multi-head latent attention, ranks in section mla)"),
          K::section("mla", "model.mla", "the ranks of multi-head latent attention"),
          K::integer("mtp_layers", 0, 0, 64, "multi-token-prediction modules trained with the model"),
          K::integer("head_dim", 0, 1, 1 << 16, "head dimension where heads * head_dim != hidden")
              .computed("hidden / heads"),
          K::integer("sliding_window", 0, 0, 1 << 24,
                     "sliding-window attention: keys a query of a windowed layer attends to, itself and the ones "
                     "before it (Mistral 7B: 4096, gpt-oss: 128); 0: full attention in every layer")
              .counts("tokens"),
          K::integer("full_attention_every", 0, 0, 100000,
                     "with sliding_window: every n-th layer (the n-th, 2n-th, ...) attends to the whole sequence, the "
                     "others to the window (gpt-oss: 2, alternating); 0: every layer windowed"),
          K::number("published_params", 0, 0, 1e16, "the parameter count the authors quote (presets' tests)")
              .not_an_axis(),
          K::integer("published_digits", 0, 0, 20, "significant digits of published_params (0: exact)").not_an_axis(),
      }};
  return s;
}

const Section& mla_section()
{
  using K = KeySpec;
  static const Section s{"model.mla",
                         "DeepSeek multi-head latent attention (DeepSeek-V2/V3 config.json names)",
                         {
                             K::integer("q_lora_rank", 0, 0, 1 << 20, "rank of the query compression (0: none)"),
                             K::integer("kv_lora_rank", 0, 1, 1 << 20, "rank of the key/value compression").must(),
                             K::integer("qk_rope_head_dim", 0, 0, 1 << 16, "rotary part of a query/key head").must(),
                             K::integer("qk_nope_head_dim", 0, 1, 1 << 16, "non-rotary part of a query/key head").must(),
                             K::integer("v_head_dim", 0, 1, 1 << 16, "value head dimension").must(),
                         }};
  return s;
}

/// Groups of the router, however stated: a token may use all of them unless router_group_topk
/// (HF topk_group) says fewer.
static void set_router_groups(ModelSpec& m, int groups)
{
  m.router_groups = groups;
  m.router_group_topk = groups;
}

void read_model_fields(SectionReader& map, ModelSpec& m)
{
  auto int_field = [&](const char* key, int& field) {
    if (auto v = map.integer_if(key))
      field = static_cast<int>(*v);
  };
  if (map.has("name"))
    m.name = map.string("name");
  int_field("layers", m.layers);
  int_field("hidden", m.hidden);
  int_field("heads", m.heads);
  int_field("kv_heads", m.kv_heads);
  int_field("ffn_hidden", m.ffn_hidden);
  int_field("vocab", m.vocab);
  int_field("seq_len", m.seq_len);
  if (map.has("mlp")) {
    m.mlp = map.choice("mlp") == "swiglu" ? MlpKind::swiglu : MlpKind::gelu;
    // the MLP names the family where the mapping does not say more (the validation schema
    // gives only mlp): SwiGLU models are Llama-style, GeLU models GPT-style
    const bool llama = m.mlp == MlpKind::swiglu;
    m.norm = llama ? NormKind::rmsnorm : NormKind::layernorm;
    m.position = llama ? PositionKind::rotary : PositionKind::learned;
    m.bias = !llama;
  }
  if (map.has("norm"))
    m.norm = map.choice("norm") == "rmsnorm" ? NormKind::rmsnorm : NormKind::layernorm;
  if (map.has("position")) {
    std::string p = map.choice("position");
    m.position = p == "learned" ? PositionKind::learned : p == "rotary" ? PositionKind::rotary : PositionKind::alibi;
  }
  if (map.has("bias"))
    m.bias = map.boolean("bias");
  if (map.has("dropout"))
    m.dropout = map.boolean("dropout");
  else if (map.has("bias") || map.has("mlp"))
    m.dropout = m.bias;
  if (map.has("tied_embeddings"))
    m.tied_embeddings = map.boolean("tied_embeddings");
  int_field("experts", m.experts);
  int_field("top_k", m.top_k);
  if (auto g = map.integer_if("router_groups"))
    set_router_groups(m, static_cast<int>(*g));
  int_field("router_group_topk", m.router_group_topk);
  int_field("moe_ffn_hidden", m.moe_ffn_hidden);
  int_field("shared_experts", m.shared_experts);
  int_field("dense_layers", m.dense_layers);
  if (map.has("attention"))
    m.mla = map.choice("attention") == "mla";
  if (auto n = map.find("mla")) {
    SectionReader r(*n, mla_section());
    m.mla_ranks.q_lora_rank = static_cast<int>(r.integer("q_lora_rank"));
    m.mla_ranks.kv_lora_rank = static_cast<int>(r.integer("kv_lora_rank"));
    m.mla_ranks.qk_rope_head_dim = static_cast<int>(r.integer("qk_rope_head_dim"));
    m.mla_ranks.qk_nope_head_dim = static_cast<int>(r.integer("qk_nope_head_dim"));
    m.mla_ranks.v_head_dim = static_cast<int>(r.integer("v_head_dim"));
    r.finish();
  }
  int_field("mtp_layers", m.mtp_layers);
  int_field("head_dim", m.head_dim_override);
  int_field("sliding_window", m.sliding_window);
  int_field("full_attention_every", m.full_attention_every);
  if (map.has("published_params"))
    m.published_params = map.number("published_params");
  int_field("published_digits", m.published_digits);
}

void check_model(const ModelSpec& m, const YamlNode& where)
{
  auto need = [&](bool ok, const std::string& what, const std::string& valid) {
    if (!ok)
      where.fail(what, valid);
  };
  need(m.layers > 0, "model has no 'layers'", "layers: a positive integer");
  need(m.hidden > 0, "model has no 'hidden'", "hidden: a positive integer");
  need(m.heads > 0, "model has no 'heads'", "heads: a positive integer");
  need(m.vocab > 0, "model has no 'vocab'", "vocab: a positive integer");
  need(m.seq_len > 0, "model has no 'seq_len'", "seq_len: a positive integer");
  need(m.head_dim_override > 0 || m.hidden % m.heads == 0,
       "hidden " + std::to_string(m.hidden) + " is not divisible by heads " + std::to_string(m.heads),
       "heads that divide hidden, or head_dim");
  need(m.dense_layers <= m.layers,
       "dense_layers " + std::to_string(m.dense_layers) + " exceed the " + std::to_string(m.layers) + " layers",
       "at most layers");
  need(!m.mla || m.mla_ranks.kv_lora_rank > 0, "attention: mla needs its ranks", "an mla: {kv_lora_rank, ...} section");
  need(m.kv_heads > 0 && m.heads % m.kv_heads == 0,
       "kv_heads " + std::to_string(m.kv_heads) + " does not divide heads " + std::to_string(m.heads),
       "a divisor of heads");
  need(m.top_k <= m.experts, "top_k " + std::to_string(m.top_k) + " exceeds experts " + std::to_string(m.experts),
       "top_k <= experts");
  need(m.experts % m.router_groups == 0,
       "router_groups " + std::to_string(m.router_groups) + " does not divide experts " + std::to_string(m.experts),
       "a divisor of experts");
  need(m.router_group_topk <= m.router_groups,
       "router_group_topk " + std::to_string(m.router_group_topk) + " exceeds router_groups " +
           std::to_string(m.router_groups),
       "at most router_groups");
  need(static_cast<long long>(m.router_group_topk) * (m.experts / m.router_groups) >= m.top_k,
       "router_group_topk " + std::to_string(m.router_group_topk) + " groups of " +
           std::to_string(m.experts / m.router_groups) + " experts hold fewer than top_k " + std::to_string(m.top_k),
       "router_group_topk * experts / router_groups >= top_k");
}

static void fill_defaults(ModelSpec& m)
{
  if (m.kv_heads == 0)
    m.kv_heads = m.heads;
  if (m.ffn_hidden == 0)
    m.ffn_hidden = 4 * m.hidden;
}

std::vector<std::string> model_preset_names(const std::string& dir)
{
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n.size() > 5 && n.compare(n.size() - 5, 5, ".yaml") == 0)
        out.push_back(n.substr(0, n.size() - 5));
    }
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

ModelSpec load_model_preset(const std::string& name, const std::string& dir, const SourceLocation& where)
{
  std::string path = dir + "/" + name + ".yaml";
  // a preset is a name, not a path: "../x" must not load a file from outside the presets
  const bool plain_name = !name.empty() && name.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                                                  "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
                                               std::string::npos &&
                          name.find("..") == std::string::npos;
  if (!plain_name || !file_exists(path)) {
    auto names = model_preset_names(dir);
    throw ConfigError(where, unknown_name("model preset", name, names),
                      names.empty() ? "a model YAML or config.json (no presets in " + dir + ")" : join(names));
  }
  // presets are read once per process: sweeps and validation files name the same few often
  static std::map<std::string, ModelSpec> cache;
  if (auto it = cache.find(path); it != cache.end())
    return it->second;
  YamlNode root = YamlNode::load_file(path);
  SectionReader map(root, model_section(), "model preset '" + name + "'");
  ModelSpec m;
  m.name = name;
  read_model_fields(map, m);
  map.finish();
  fill_defaults(m);
  check_model(m, root);
  cache.emplace(path, m);
  return m;
}

ModelSpec import_hf_config(const std::string& path)
{
  // JSON is YAML: yaml-cpp gives line and column for every value.
  return parse_hf_config(YamlNode::load_file(path));
}

namespace {

/// The MoE and attention fields of a config.json by their names in the DeepSeek-V2/V3, Kimi K2,
/// Qwen2/3-MoE, Mixtral and gpt-oss configs, each within the model table's bounds.
template <class Get> void read_hf_moe(const Get& get, ModelSpec& m)
{
  auto field = [&](std::initializer_list<const char*> names, const char* key, int& out) {
    if (const YamlNode* n = get(names)) {
      const bool mla_key = std::string(key).rfind("mla.", 0) == 0; // a key of section model.mla
      const KeySpec& k = mla_key ? mla_section().at(key + 4) : model_section().at(key);
      out = static_cast<int>(n->as_int(static_cast<long long>(k.min), static_cast<long long>(k.max)));
    }
  };
  field({"n_routed_experts", "num_local_experts", "num_experts"}, "experts", m.experts);
  field({"num_experts_per_tok", "moe_top_k"}, "top_k", m.top_k);
  int groups = 0;
  field({"n_group"}, "router_groups", groups);
  if (groups > 0) {
    set_router_groups(m, groups);
    field({"topk_group"}, "router_group_topk", m.router_group_topk);
  }
  field({"moe_intermediate_size"}, "moe_ffn_hidden", m.moe_ffn_hidden);
  field({"n_shared_experts"}, "shared_experts", m.shared_experts);
  field({"first_k_dense_replace"}, "dense_layers", m.dense_layers);
  field({"num_nextn_predict_layers"}, "mtp_layers", m.mtp_layers);
  field({"head_dim"}, "head_dim", m.head_dim_override);
  if (const YamlNode* n = get({"shared_expert_intermediate_size"})) { // Qwen2-MoE: one wide shared expert
    const long long width = n->as_int(1, 1 << 24);
    const long long f = m.moe_ffn_hidden > 0 ? m.moe_ffn_hidden : m.ffn_hidden;
    const long long shared = std::max(1LL, (width + f - 1) / f);
    const auto most = static_cast<long long>(model_section().at("shared_experts").max);
    if (shared > most)
      n->fail("shared_expert_intermediate_size " + std::to_string(width) + " is " + std::to_string(shared) +
                  " shared experts of width " + std::to_string(f) + ", more than " + std::to_string(most),
              "a width of at most " + std::to_string(most * f));
    m.shared_experts = static_cast<int>(shared);
  }
  if (const YamlNode* rank = get({"kv_lora_rank"})) {
    // MLA's heads are sized by these: without them it had heads of zero width
    for (const char* key : {"qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim"})
      if (!get({key}))
        rank->fail(std::string("kv_lora_rank (multi-head latent attention) without ") + key,
                   "kv_lora_rank with qk_rope_head_dim, qk_nope_head_dim and v_head_dim, as DeepSeek-V2/V3 write them");
    m.mla = true;
    field({"q_lora_rank"}, "mla.q_lora_rank", m.mla_ranks.q_lora_rank);
    field({"kv_lora_rank"}, "mla.kv_lora_rank", m.mla_ranks.kv_lora_rank);
    field({"qk_rope_head_dim"}, "mla.qk_rope_head_dim", m.mla_ranks.qk_rope_head_dim);
    field({"qk_nope_head_dim"}, "mla.qk_nope_head_dim", m.mla_ranks.qk_nope_head_dim);
    field({"v_head_dim"}, "mla.v_head_dim", m.mla_ranks.v_head_dim);
    m.head_dim_override = 0; // MLA's heads are sized by its ranks
  }
  if (m.experts == 1) {
    m.top_k = 1;
    m.dense_layers = 0;
    m.router_groups = m.router_group_topk = 1;
  }
  m.dense_layers = std::min(m.dense_layers, m.layers);
}

/// Sliding-window attention by its config.json names: `sliding_window` (Mistral, Gemma 2/3, gpt-oss;
/// Qwen2/3 carry one but switch it off with use_sliding_window: false), `sliding_window_pattern`
/// (Gemma 3) and `layer_types` (gpt-oss: "sliding_attention" or "full_attention" per layer), whose
/// full layers must be every n-th one.
template <class Get> void read_hf_window(const Get& get, ModelSpec& m)
{
  const YamlNode* w = get({"sliding_window"});
  const YamlNode* use = get({"use_sliding_window"});
  if (!w || (use && !use->as_bool()))
    return;
  m.sliding_window = static_cast<int>(w->as_int(0, static_cast<long long>(model_section().at("sliding_window").max)));
  const YamlNode* types = get({"layer_types"});
  if (!types) {
    // Gemma 3: every sliding_window_pattern-th layer global (HF: is_sliding = (i + 1) % pattern);
    // Gemma 2 alternates from a sliding layer 0 (is_sliding = not i % 2); else every layer (Mistral)
    const auto most = static_cast<long long>(model_section().at("full_attention_every").max);
    if (const YamlNode* p = get({"sliding_window_pattern"}))
      m.full_attention_every = static_cast<int>(p->as_int(1, most));
    else if (get({"model_type"}) && get({"model_type"})->as_string() == "gemma2")
      m.full_attention_every = 2;
    return;
  }
  const std::string valid = "one of sliding_attention / full_attention per layer, full on every n-th layer";
  if (!types->is_sequence())
    types->fail("layer_types must be a list", valid);
  const std::vector<YamlNode> items = types->items();
  if (static_cast<int>(items.size()) != m.layers)
    types->fail("layer_types has " + std::to_string(items.size()) + " entries for " + std::to_string(m.layers) +
                    " layers",
                valid);
  std::vector<int> full;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string t = items[i].as_string();
    if (t == "full_attention")
      full.push_back(static_cast<int>(i));
    else if (t != "sliding_attention")
      items[i].fail("unknown layer type '" + t + "'", valid);
  }
  if (full.empty())
    return;
  if (static_cast<int>(full.size()) == m.layers) {
    m.sliding_window = 0; // no layer windowed
    return;
  }
  const int n = full.front() + 1;
  for (int l = 0; l < m.layers; ++l)
    if (((l + 1) % n == 0) != std::binary_search(full.begin(), full.end(), l))
      items[static_cast<std::size_t>(l)].fail("layer_types: layer " + std::to_string(l) + " breaks the period of " +
                                                  std::to_string(n) + " that the first full-attention layer sets",
                                              valid);
  m.full_attention_every = n;
}

} // namespace

ModelSpec parse_hf_config(const YamlNode& root)
{
  const std::string& path = root.file();
  if (!root.is_map())
    root.fail("a Hugging Face config.json must be a JSON object", "{\"model_type\": ..., \"hidden_size\": ...}");
  std::map<std::string, YamlNode> f;
  for (auto& [k, v] : root.entries("config.json")) // a key twice is an error (JSON parsers keep either)
    f.emplace(k.as_string(), v);
  auto get = [&](std::initializer_list<const char*> names) -> const YamlNode* {
    for (const char* n : names) {
      auto it = f.find(n);
      if (it != f.end() && !it->second.is_null())
        return &it->second;
    }
    return nullptr;
  };
  auto need_int = [&](std::initializer_list<const char*> names) {
    const YamlNode* n = get(names);
    if (!n) {
      std::vector<std::string> v(names.begin(), names.end());
      root.fail("config.json has none of " + join(v, " / "),
                "a Llama, Mistral, Qwen2, GPT-2, GPT-NeoX, OPT or BLOOM config");
    }
    return n;
  };
  // each dimension within the model table's bounds (a config.json is the same model keys
  // under other names)
  auto dim = [&](std::initializer_list<const char*> names, const char* key) {
    const KeySpec& k = model_section().at(key);
    return static_cast<int>(need_int(names)->as_int(static_cast<long long>(k.min), static_cast<long long>(k.max)));
  };
  ModelSpec m;
  std::string type = get({"model_type"}) ? get({"model_type"})->as_string() : "";
  m.name = type.empty() ? path : type;
  m.hidden = dim({"hidden_size", "n_embd", "n_embed", "d_model"}, "hidden");
  m.layers = dim({"num_hidden_layers", "n_layer", "num_layers"}, "layers");
  m.heads = dim({"num_attention_heads", "n_head", "num_heads"}, "heads");
  m.vocab = dim({"vocab_size"}, "vocab");
  m.kv_heads =
      get({"num_key_value_heads"}) ? static_cast<int>(get({"num_key_value_heads"})->as_int(1, 1 << 16)) : m.heads;
  if (const YamlNode* n = get({"intermediate_size", "ffn_dim", "n_inner"}))
    m.ffn_hidden = static_cast<int>(n->as_int(1, static_cast<long long>(model_section().at("ffn_hidden").max)));
  else if (4LL * m.hidden <= static_cast<long long>(model_section().at("ffn_hidden").max))
    m.ffn_hidden = 4 * m.hidden;
  else
    (get({"hidden_size", "n_embd", "n_embed", "d_model"}))
        ->fail("hidden size " + std::to_string(m.hidden) + " gives a default MLP width 4 * hidden beyond " +
                   model_section().at("ffn_hidden").valid(),
               "a config.json with intermediate_size, or a smaller hidden_size");
  bool length_found = false;
  for (const char* key : {"max_position_embeddings", "n_positions", "n_ctx", "seq_length"})
    if (const YamlNode* n = get({key}); n && !length_found) {
      m.seq_len = static_cast<int>(n->as_int(1, static_cast<long long>(model_section().at("seq_len").max)));
      m.seq_len_from_config = std::string(key) + " " + std::to_string(m.seq_len) +
                              ": the longest context the model supports, not the length it trains at";
      length_found = true;
    }
  if (!length_found) {
    m.seq_len = 2048;
    m.seq_len_from_config = "no sequence length";
  }
  const YamlNode* act_node = get({"hidden_act", "hidden_activation", "activation_function"});
  const std::string act = act_node ? act_node->as_string() : "gelu";
  // Gemma's MLP is GeGLU: gate, up and down projections, the three matrices of a SwiGLU MLP
  // (the same parameters and FLOPs; its tanh-GELU is one fused element-wise op like SiLU's)
  bool gated = act == "silu" || act == "swiglu" || type == "llama" || type == "mistral" || type == "qwen2" ||
               type == "mixtral" || type == "qwen2_moe" || type.rfind("gemma", 0) == 0;
  m.mlp = gated ? MlpKind::swiglu : MlpKind::gelu;
  m.norm = get({"rms_norm_eps"}) ? NormKind::rmsnorm : NormKind::layernorm;
  if (type == "gpt2" || type == "opt")
    m.position = PositionKind::learned;
  else if (type == "bloom")
    m.position = PositionKind::alibi;
  else
    m.position = PositionKind::rotary;
  bool default_tied = type == "gpt2" || type == "opt" || type == "bloom";
  m.tied_embeddings = get({"tie_word_embeddings"}) ? get({"tie_word_embeddings"})->as_bool() : default_tied;
  if (const YamlNode* n = get({"mlp_bias"}))
    m.bias = n->as_bool();
  else if (const YamlNode* n2 = get({"attention_bias", "bias"}))
    m.bias = n2->as_bool();
  else
    m.bias = !(m.norm == NormKind::rmsnorm);
  // dropout where the config gives any nonzero probability (GPT-2 resid/attn/embd_pdrop, OPT
  // dropout, BERT-style hidden_dropout_prob, Llama-style attention_dropout, MPT
  // resid_pdrop/emb_pdrop); where it gives none, as the biases
  bool stated = false, any = false;
  for (const char* key : {"resid_pdrop", "attn_pdrop", "embd_pdrop", "emb_pdrop", "dropout", "attention_dropout",
                          "hidden_dropout", "hidden_dropout_prob", "attention_probs_dropout_prob"})
    if (const YamlNode* n = get({key}); n && !n->is_null()) {
      stated = true;
      any = any || n->as_number(0, 1) > 0;
    }
  m.dropout = stated ? any : m.bias;
  read_hf_moe(get, m);
  read_hf_window(get, m);
  check_model(m, root);
  return m;
}

ModelSpec parse_model(const YamlNode& node, const std::string& presets_dir)
{
  if (node.is_scalar())
    return load_model_preset(node.as_string(), presets_dir, node.where());
  SectionReader map(node, model_section());
  ModelSpec m;
  if (auto p = map.find("preset"))
    m = load_model_preset(p->as_string(), presets_dir, p->where());
  if (auto hf = map.find("hf_config")) {
    std::string path = hf->as_string();
    if (!path.empty() && path[0] != '/')
      path = dirname_of(node.file()) + "/" + path;
    if (!file_exists(path))
      hf->fail("cannot open Hugging Face config '" + hf->as_string() + "'",
               "a path to a config.json (relative to this file)");
    m = import_hf_config(path);
    if (!map.has("seq_len"))
      hf->fail("the config.json gives " + m.seq_len_from_config, "seq_len: LENGTH beside hf_config (e.g. seq_len: 4096)");
    m.seq_len_from_config.clear();
  }
  read_model_fields(map, m);
  map.finish();
  fill_defaults(m);
  check_model(m, node);
  return m;
}

} // namespace clustersim
