#pragma once
/// A transformer, by its dimensions: what the cost model prices.
///
/// Read from an inline YAML mapping, a preset (`strategies/models/NAME.yaml`) or a Hugging
/// Face `config.json` (Llama, Mistral, Qwen2/3, Gemma 2/3, GPT-2, GPT-NeoX, OPT, BLOOM field names;
/// the MoE ones of DeepSeek, Kimi K2, Qwen-MoE, Mixtral and gpt-oss).

#include "topology/config/Schema.hpp"
#include "topology/config/Yaml.hpp"

#include <string>
#include <vector>

namespace clustersim {

enum class MlpKind { gelu, swiglu };
enum class NormKind { layernorm, rmsnorm };
enum class PositionKind { learned, rotary, alibi };

struct ModelSpec {
  std::string name;
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;   ///< = heads unless grouped-query attention
  int ffn_hidden = 0; ///< per expert for MoE
  int vocab = 0;
  int seq_len = 0;
  /// What a Hugging Face config said of seq_len when it set it ("max_position_embeddings 131072:
  /// the longest context ..."): not the length the model trains at, so a caller asks for that;
  /// empty when the user or a preset gave it.
  std::string seq_len_from_config;
  MlpKind mlp = MlpKind::gelu;
  NormKind norm = NormKind::layernorm;
  PositionKind position = PositionKind::learned;
  bool bias = true;             ///< linear layers carry biases
  /// Trains with dropout (residual, attention and embedding): its 1-byte masks are kept for
  /// backward and its kernels run. Unless stated, as `bias` (GPT-style models, Megatron's 0.1
  /// defaults; Llama-style ones train without).
  bool dropout = true;
  bool tied_embeddings = false; ///< output projection shares the input embedding
  int experts = 1;              ///< MoE when > 1
  int top_k = 1;                ///< experts per token
  /// Group-limited routing (DeepSeek-V3's n_group / topk_group): the experts form
  /// `router_groups` contiguous groups and each token's top_k come from `router_group_topk` of
  /// them; 1 and 1: unrestricted
  int router_groups = 1;
  int router_group_topk = 1;
  int moe_ffn_hidden = 0;       ///< FFN width of one routed expert (0: ffn_hidden)
  int shared_experts = 0;       ///< always-active experts of every MoE layer
  int dense_layers = 0;         ///< leading layers with a dense MLP (DeepSeek's first_k_dense_replace)
  bool mla = false;             ///< DeepSeek multi-head latent attention
  struct Mla {
    int q_lora_rank = 0;
    int kv_lora_rank = 0;
    int qk_rope_head_dim = 0;
    int qk_nope_head_dim = 0;
    int v_head_dim = 0;
  } mla_ranks;
  int mtp_layers = 0;           ///< multi-token-prediction modules trained with the model
  int head_dim_override = 0;    ///< head dimension where heads * head_dim != hidden (0: hidden / heads)
  /// Sliding-window attention (Mistral, gpt-oss): a query of a windowed layer attends to at most
  /// this many keys, itself and the ones before it; 0: every layer attends to the whole sequence
  int sliding_window = 0;
  /// With a window: every n-th layer (the n-th, 2n-th, ...) attends to the whole sequence, the
  /// others to the window (gpt-oss: 2, alternating); 0: every layer is windowed
  int full_attention_every = 0;
  double published_params = 0;  ///< the count the authors quote (presets), 0 if unknown
  int published_digits = 0;     ///< significant digits of that figure (0: exact)

  int head_dim() const { return head_dim_override > 0 ? head_dim_override : hidden / heads; }
  int q_dim() const { return heads * head_dim(); } ///< width of the queries (= hidden unless head_dim is set)
  int kv_dim() const { return kv_heads * head_dim(); }
  /// Head dimension of the attention scores (queries and keys) and of the values; MLA: its
  /// nope + rope and v_head_dim, else head_dim().
  int qk_head_dim() const { return mla ? mla_ranks.qk_nope_head_dim + mla_ranks.qk_rope_head_dim : head_dim(); }
  int v_head_dim() const { return mla ? mla_ranks.v_head_dim : head_dim(); }
  int expert_ffn() const { return moe_ffn_hidden > 0 ? moe_ffn_hidden : ffn_hidden; }
  int mlp_matrices() const { return mlp == MlpKind::swiglu ? 3 : 2; }
  /// Whether transformer layer `layer` (0-based; MTP modules count from `layers`) routes its
  /// tokens to experts: every layer of a MoE model after the `dense_layers` leading ones.
  bool moe_layer(int layer) const { return experts > 1 && layer >= dense_layers; }
  int moe_layer_count() const { return experts > 1 ? layers - dense_layers : 0; }
  /// Whether some layer attends through a window shorter than the sequence (not with every
  /// layer a full one, full_attention_every 1).
  bool has_window() const { return sliding_window > 0 && sliding_window < seq_len && full_attention_every != 1; }
  /// Whether transformer layer `layer` attends through its sliding window (MTP modules attend to
  /// the whole sequence).
  bool windowed(int layer) const
  {
    return has_window() && layer < layers && !(full_attention_every > 0 && (layer + 1) % full_attention_every == 0);
  }
  /// The query-key pairs of `layer`'s causal attention over those of full causal attention,
  /// s (s + 1) / 2: a window of w leaves w s - w (w - 1) / 2 (1 for a full layer).
  double attended_share(int layer) const;
  double window_share() const; ///< that share for a windowed layer

  /// Parameters of the attention half of a layer: its norm, the Q/K/V (or MLA's down and up
  /// projections with their latent norms), the output projection, their biases.
  double attention_params() const;
  /// Parameters of the MLP half that tensor parallelism shards: its norm, and either the dense
  /// MLP (ffn_hidden) or, in a MoE layer, the shared experts and the router.
  double mlp_params(int layer) const;
  /// Parameters of the routed experts of `layer` (0 for a dense layer): what expert
  /// parallelism shards.
  double expert_params(int layer) const;
  /// Parameters of one transformer layer (all experts included).
  double layer_params(int layer) const;
  /// The same, tensor by tensor as a Megatron-style layer holds them (norm weights and biases,
  /// fused QKV, projection, MLP matrices and biases, per expert, the router): what a framework
  /// that gathers parameter by parameter (DeepSpeed ZeRO-3) gathers. Sums to layer_params().
  std::vector<double> layer_tensors(int layer) const;
  /// Input embedding (+ learned positions) parameters.
  double embedding_params() const;
  /// Output projection parameters (0 when tied).
  double output_params() const;
  /// Final norm parameters.
  double final_norm_params() const;
  /// Everything but the MTP modules (the count the authors quote).
  double total_params() const;
  /// Parameters a token passes through (MoE: top_k routed experts instead of all).
  double active_params() const;
};

/// Reads a model from a YAML value: a preset name, a mapping of dimensions (optionally with
/// `preset:` to start from), or a mapping with `hf_config: path` to a Hugging Face config.json.
/// `presets_dir` is where preset files live; relative hf_config paths resolve from the YAML file.
ModelSpec parse_model(const YamlNode& node, const std::string& presets_dir);

/// The keys of a model mapping (and of a preset file), and of its MLA ranks.
const Section& model_section();
const Section& mla_section();
/// Reads a dimensions mapping into `m` (keys of the validation schema); absent keys keep m's.
void read_model_fields(SectionReader& map, ModelSpec& m);
/// Checks consistency (heads divide hidden, kv_heads divide heads, ...) with positions.
void check_model(const ModelSpec& m, const YamlNode& where);

ModelSpec load_model_preset(const std::string& name, const std::string& presets_dir, const SourceLocation& where);
std::vector<std::string> model_preset_names(const std::string& presets_dir);
/// Imports a Hugging Face config.json.
ModelSpec import_hf_config(const std::string& path);
/// The same from a parsed document.
ModelSpec parse_hf_config(const YamlNode& root);

} // namespace clustersim
