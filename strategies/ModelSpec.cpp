#include "ModelSpec.hpp"

#include "Suggest.hpp"

#include <algorithm>
#include <dirent.h>
#include <sys/stat.h>

namespace clustersim {

double ModelSpec::layer_mlp_params() const
{
  double per_expert = static_cast<double>(mlp_matrices()) * hidden * ffn_hidden;
  if (bias)
    per_expert += mlp == MlpKind::swiglu ? 2.0 * ffn_hidden + hidden : static_cast<double>(ffn_hidden) + hidden;
  double router = experts > 1 ? static_cast<double>(hidden) * experts : 0.0;
  return per_expert * experts + router;
}

double ModelSpec::layer_params() const
{
  double h = hidden;
  double qkv = h * (h + 2.0 * kv_dim());
  double out = h * h;
  double attn_bias = bias ? (h + 2.0 * kv_dim()) + h : 0.0;
  double norms = norm == NormKind::layernorm ? 4.0 * h : 2.0 * h;
  return qkv + out + attn_bias + norms + layer_mlp_params();
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
  return layers * layer_params() + embedding_params() + output_params() + final_norm_params();
}

double ModelSpec::active_params() const
{
  if (experts <= 1)
    return total_params();
  double inactive_per_layer = layer_mlp_params() * (experts - top_k) / experts;
  return total_params() - layers * inactive_per_layer;
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

void read_model_fields(YamlMap& map, ModelSpec& m)
{
  m.name = map.get_string("name", m.name);
  m.layers = static_cast<int>(map.get_int("layers", m.layers, 1, 100000));
  m.hidden = static_cast<int>(map.get_int("hidden", m.hidden, 1, 1 << 20));
  m.heads = static_cast<int>(map.get_int("heads", m.heads, 1, 1 << 16));
  m.kv_heads = static_cast<int>(map.get_int("kv_heads", m.kv_heads, 0, 1 << 16));
  m.ffn_hidden = static_cast<int>(map.get_int("ffn_hidden", m.ffn_hidden, 0, 1 << 24));
  m.vocab = static_cast<int>(map.get_int("vocab", m.vocab, 1, 1 << 26));
  m.seq_len = static_cast<int>(map.get_int("seq_len", m.seq_len, 1, 1 << 24));
  if (auto n = map.find("mlp"))
    m.mlp = n->as_choice(kMlp, "mlp") == "swiglu" ? MlpKind::swiglu : MlpKind::gelu;
  if (auto n = map.find("norm"))
    m.norm = n->as_choice(kNorm, "norm") == "rmsnorm" ? NormKind::rmsnorm : NormKind::layernorm;
  if (auto n = map.find("position")) {
    std::string p = n->as_choice(kPosition, "position");
    m.position = p == "learned" ? PositionKind::learned : p == "rotary" ? PositionKind::rotary : PositionKind::alibi;
  }
  m.bias = map.get_bool("bias", m.bias);
  m.tied_embeddings = map.get_bool("tied_embeddings", m.tied_embeddings);
  m.experts = static_cast<int>(map.get_int("experts", m.experts, 1, 1 << 16));
  m.top_k = static_cast<int>(map.get_int("top_k", m.top_k, 1, 1 << 16));
  m.published_params = map.get_number("published_params", m.published_params, 0, 1e16);
  m.published_digits = static_cast<int>(map.get_int("published_digits", m.published_digits, 0, 20));
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
  need(m.hidden % m.heads == 0,
       "hidden " + std::to_string(m.hidden) + " is not divisible by heads " + std::to_string(m.heads),
       "heads that divide hidden");
  need(m.kv_heads > 0 && m.heads % m.kv_heads == 0,
       "kv_heads " + std::to_string(m.kv_heads) + " does not divide heads " + std::to_string(m.heads),
       "a divisor of heads");
  need(m.top_k <= m.experts, "top_k " + std::to_string(m.top_k) + " exceeds experts " + std::to_string(m.experts),
       "top_k <= experts");
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
  if (!file_exists(path)) {
    auto names = model_preset_names(dir);
    throw ConfigError(where, unknown_name("model preset", name, names), join(names));
  }
  YamlNode root = YamlNode::load_file(path);
  YamlMap map(root, "model preset '" + name + "'");
  ModelSpec m;
  m.name = name;
  read_model_fields(map, m);
  map.finish();
  fill_defaults(m);
  check_model(m, root);
  return m;
}

ModelSpec import_hf_config(const std::string& path)
{
  // JSON is YAML: yaml-cpp gives line and column for every value.
  YamlNode root = YamlNode::load_file(path);
  if (!root.is_map())
    root.fail("a Hugging Face config.json must be a JSON object", "{\"model_type\": ..., \"hidden_size\": ...}");
  std::map<std::string, YamlNode> f;
  for (auto& [k, v] : root.entries())
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
    return static_cast<int>(n->as_int(1, 1LL << 30));
  };
  ModelSpec m;
  std::string type = get({"model_type"}) ? get({"model_type"})->as_string() : "";
  m.name = type.empty() ? path : type;
  m.hidden = need_int({"hidden_size", "n_embd", "n_embed", "d_model"});
  m.layers = need_int({"num_hidden_layers", "n_layer", "num_layers"});
  m.heads = need_int({"num_attention_heads", "n_head", "num_heads"});
  m.vocab = need_int({"vocab_size"});
  m.kv_heads =
      get({"num_key_value_heads"}) ? static_cast<int>(get({"num_key_value_heads"})->as_int(1, 1 << 16)) : m.heads;
  if (const YamlNode* n = get({"intermediate_size", "ffn_dim", "n_inner"}))
    m.ffn_hidden = static_cast<int>(n->as_int(1, 1LL << 30));
  else
    m.ffn_hidden = 4 * m.hidden;
  if (const YamlNode* n = get({"max_position_embeddings", "n_positions", "n_ctx", "seq_length"}))
    m.seq_len = static_cast<int>(n->as_int(1, 1LL << 30));
  else
    m.seq_len = 2048;
  std::string act =
      get({"hidden_act", "activation_function"}) ? get({"hidden_act", "activation_function"})->as_string() : "gelu";
  bool gated = act == "silu" || act == "swiglu" || type == "llama" || type == "mistral" || type == "qwen2" ||
               type == "mixtral" || type == "qwen2_moe";
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
  if (const YamlNode* n = get({"num_local_experts", "num_experts"}))
    m.experts = static_cast<int>(n->as_int(1, 1 << 16));
  if (const YamlNode* n = get({"num_experts_per_tok", "moe_top_k"}))
    m.top_k = static_cast<int>(n->as_int(1, 1 << 16));
  if (m.experts == 1)
    m.top_k = 1;
  check_model(m, root);
  return m;
}

ModelSpec parse_model(const YamlNode& node, const std::string& presets_dir)
{
  if (node.is_scalar())
    return load_model_preset(node.as_string(), presets_dir, node.where());
  YamlMap map(node, "model");
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
  }
  read_model_fields(map, m);
  map.finish();
  fill_defaults(m);
  check_model(m, node);
  return m;
}

} // namespace clustersim
