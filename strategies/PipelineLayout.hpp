#pragma once
/// Which units every virtual pipeline stage holds: the embedding, a run of transformer layers,
/// multi-token-prediction modules, the loss (final norm, output projection, cross-entropy). One
/// place decides it for the memory model, the pipeline driver and the layout rules, the way
/// Megatron-LM does:
///
///  * `pipeline_layout` (Megatron's --pipeline-model-parallel-layout): one '|'-separated entry
///    per virtual stage, E embedding, t transformer layer, m MTP module, L loss; `x*n` repeats a
///    symbol, `(...)*n` a group. "Et*4|(t*4|)*14tmL" is DeepSeek-V3 on 16 stages.
///  * `account_for_embedding_in_pipeline_split` / `account_for_loss_in_pipeline_split`: the
///    embedding and the loss each take one layer slot; the slots are split evenly, so the first
///    and last stages hold one transformer layer fewer (Llama 3 405B: 126 layers + 2 slots on
///    pp 16 x vpp 8 = 128 stages of one slot: the first holds the embedding alone).
///  * otherwise the layers are split evenly and a remainder goes to the middle stages, first and
///    last (which also hold the embedding and the loss) kept lightest.
///
/// Virtual stage g runs on pipeline rank g % pp, as chunk g / pp.

#include "strategies/ModelSpec.hpp"
#include "strategies/TrainingSpec.hpp"

#include <optional>
#include <string>
#include <vector>

namespace clustersim {

struct VirtualStage {
  bool embedding = false;
  int first_layer = 0; ///< global index of its first transformer layer
  int layers = 0;      ///< transformer layers
  int mtp = 0;         ///< multi-token-prediction modules
  bool loss = false;
};

/// The virtual stages of `t` for `m`, in pipeline order (pp * vpp of them). Throws
/// std::invalid_argument with a message for a layout that cannot be built (check_layout
/// reports it at the key first).
std::vector<VirtualStage> pipeline_layout(const ModelSpec& m, const TrainingSpec& t);

/// Why `t`'s layout cannot be built for `m` (a malformed or mismatched pipeline_layout, an
/// empty stage), nullopt when it can.
std::optional<std::string> layout_problem(const ModelSpec& m, const TrainingSpec& t);

/// Per pipeline rank: transformer layers over all its chunks.
std::vector<int> layers_per_rank(const std::vector<VirtualStage>& v, int pp);

/// "E t*4 | t*4 | ... " made short for reports: layers per rank, with where E and L sit.
std::string describe_pipeline(const std::vector<VirtualStage>& v, int pp);

} // namespace clustersim
