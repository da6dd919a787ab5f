#include "StepBuilder.hpp"

#include <algorithm>
#include <cassert>
#include <stdexcept>
#include <unordered_set>

namespace clustersim {

using PerPos = std::vector<std::vector<TaskId>>;

std::vector<std::vector<TaskId>> DataParallelStrategy::before_forward(StepContext&, int, int, int)
{
  return {};
}

std::vector<std::vector<TaskId>> DataParallelStrategy::before_backward(StepContext&, int, int, int)
{
  return {};
}

std::string data_parallel_strategy_name(int zero)
{
  return zero == 0 ? "ddp" : "zero" + std::to_string(zero);
}

// ------------------------------------------------------------------ StepContext

StepContext::StepContext(Workload& w, const CostModel& cost, const Layout& layout, bool folded)
    : w_(w), cost_(cost), layout_(layout)
{
  const int p = layout.size(Dim::pp);
  stage_ranks_.resize(static_cast<std::size_t>(p));
  position_.assign(static_cast<std::size_t>(layout.ranks()), -1);
  std::vector<std::uint32_t> simulated;
  for (int r = 0; r < layout.ranks(); ++r) {
    if (folded && (layout.coord(r, Dim::tp) != 0 || layout.coord(r, Dim::cp) != 0 || layout.coord(r, Dim::dp) != 0))
      continue;
    auto& v = stage_ranks_[static_cast<std::size_t>(layout.coord(r, Dim::pp))];
    position_[static_cast<std::size_t>(r)] = static_cast<int>(v.size());
    v.push_back(static_cast<std::uint32_t>(r));
    simulated.push_back(static_cast<std::uint32_t>(r));
  }
  if (folded)
    w_.simulate_only(simulated);
  units_.resize(static_cast<std::size_t>(p));
  algo_ = w_.algo_index(cost.training().collective_algo);
}

double StepContext::grad_comm_bytes() const
{
  // Megatron keeps fp32 main gradients for bf16 and reduces them in fp32; fp16 runs reduce
  // fp16 gradients (accumulate_allreduce_grads_in_fp32 is only forced for bf16).
  Precision p = training().precision;
  return p == Precision::fp16 ? 2.0 : 4.0;
}

double StepContext::param_comm_bytes() const
{
  return cost_.element_bytes();
}

const std::vector<std::uint32_t>& StepContext::groups(int stage, Dim a, Dim b)
{
  auto key = std::make_tuple(stage, static_cast<int>(a), static_cast<int>(b));
  auto it = group_cache_.find(key);
  if (it != group_cache_.end())
    return it->second;
  std::vector<std::uint32_t> ids;
  std::unordered_set<std::uint32_t> leaders; // smallest member of each group made so far
  for (std::uint32_t r : stage_ranks(stage)) {
    std::vector<std::uint32_t> members =
        b == Dim::pp ? layout_.group(static_cast<int>(r), {a}) : layout_.group(static_cast<int>(r), {a, b});
    std::uint32_t leader = *std::min_element(members.begin(), members.end());
    if (!leaders.insert(leader).second)
      continue;
    if (members.size() > 1)
      ids.push_back(w_.add_group(std::move(members)));
  }
  return group_cache_.emplace(key, std::move(ids)).first->second;
}

std::vector<TaskId> StepContext::collective(int stage, const std::vector<std::uint32_t>& groups, CollOp op,
                                            double bytes, Stream stream, const Workload::Label& label,
                                            const PerPos& deps)
{
  std::vector<TaskId> out(stage_ranks(stage).size(), static_cast<TaskId>(-1));
  for (std::uint32_t g : groups) {
    const auto& members = w_.groups()[g].ranks;
    std::vector<std::vector<TaskId>> d;
    if (!deps.empty()) {
      d.reserve(members.size());
      for (auto m : members)
        d.push_back(position(m) >= 0 ? deps[static_cast<std::size_t>(position(m))] : std::vector<TaskId>{});
    }
    auto tasks = w_.add_collective(op, g, bytes, stream, label, d, algo_);
    for (std::size_t i = 0; i < members.size(); ++i)
      if (position(members[i]) >= 0)
        out[static_cast<std::size_t>(position(members[i]))] = tasks[i];
  }
  return out;
}

std::vector<TaskId> StepContext::compute(int stage, double seconds, const Workload::Label& label, const PerPos& deps,
                                         Stream stream)
{
  const auto& ranks = stage_ranks(stage);
  std::vector<TaskId> out(ranks.size());
  static const std::vector<TaskId> none;
  for (std::size_t i = 0; i < ranks.size(); ++i)
    out[i] = w_.add_compute(ranks[i], seconds, label, deps.empty() ? none : deps[i], stream);
  return out;
}

// ------------------------------------------------------------------ the builder

namespace {

constexpr TaskId kNone = static_cast<TaskId>(-1);

void append(PerPos& into, const std::vector<TaskId>& tasks)
{
  for (std::size_t i = 0; i < tasks.size(); ++i)
    if (tasks[i] != kNone)
      into[i].push_back(tasks[i]);
}

PerPos single(const std::vector<TaskId>& tasks)
{
  PerPos p(tasks.size());
  append(p, tasks);
  return p;
}

class Builder {
public:
  Builder(const CostModel& cost, Workload& w, const Layout& layout, bool fold)
      : cost_(cost), t_(cost.training()), ctx_(w, cost, layout, fold), w_(w), layout_(layout)
  {
    attn_ = cost.attention_block();
    mlp_ = cost.mlp_block();
    emb_ = cost.embedding();
    logits_ = cost.logits();
  }

  StepPlan run();

private:
  struct Slot {
    int vstage;
    int first_unit; ///< index into ctx.units(stage)
    int count;
  };

  int vstages() const { return t_.pp * t_.vpp; }
  int stage_of(int vstage) const { return vstage % t_.pp; }
  std::size_t out_index(int vstage, int mb) const
  {
    return static_cast<std::size_t>(vstage) * static_cast<std::size_t>(m_) + static_cast<std::size_t>(mb);
  }

  void plan_units();
  bool ready(int stage, const PipelineOp& op) const;
  void emit(int stage, const PipelineOp& op);
  PerPos receive(int stage, int vstage, int mb, bool forward);
  PerPos forward_unit(int stage, const ParamUnit& u, int unit_index, int mb, PerPos deps, bool recompute);
  PerPos backward_unit(int stage, const ParamUnit& u, int unit_index, int mb, PerPos deps, bool last_mb);
  PerPos block_forward(int stage, const BlockCost& b, bool attention, int layer, int mb, PerPos deps, Category cat);
  PerPos block_backward(int stage, const BlockCost& b, bool attention, int layer, int mb, PerPos deps);
  PerPos tp_post(int stage, CollOp op, int layer, int mb, const std::vector<TaskId>& src, const PerPos& concurrent_deps,
                 Category cat);

  const CostModel& cost_;
  const TrainingSpec& t_;
  StepContext ctx_;
  Workload& w_;
  const Layout& layout_;
  std::unique_ptr<DataParallelStrategy> dp_;
  BlockCost attn_, mlp_, emb_, logits_;
  int m_ = 0;
  std::vector<std::vector<Slot>> slots_;     ///< [stage][chunk]
  std::vector<std::vector<TaskId>> fwd_out_; ///< [vstage*m + mb] per position
  std::vector<std::vector<TaskId>> bwd_out_;
  std::vector<int> last_bwd_mb_;                     ///< per (stage, chunk): micro-batch of the last backward
  std::vector<std::vector<TaskId>> embed_grad_done_; ///< per stage: tasks after which tied-embedding grads are final
  std::vector<int> layers_per_vstage_;
};

void Builder::plan_units()
{
  const ModelSpec& model = cost_.model();
  const int V = vstages();
  // layers per virtual stage (Megatron's split; remainders to the middle stages)
  if (t_.vpp == 1) {
    layers_per_vstage_ = cost_.layers_per_stage();
  } else {
    layers_per_vstage_.assign(static_cast<std::size_t>(V), model.layers / V);
    int rest = model.layers % V;
    for (int i = 0; rest > 0; ++i, --rest)
      ++layers_per_vstage_[static_cast<std::size_t>(V <= 2 ? i % V : 1 + i % (V - 2))];
  }
  const double t = t_.tp;
  double mlp = model.layer_mlp_params();
  double dense = model.layer_params() - mlp;
  double layer_params = dense / t + (model.experts > 1 ? mlp / (t * t_.ep) : mlp / t);
  slots_.assign(static_cast<std::size_t>(t_.pp), std::vector<Slot>(static_cast<std::size_t>(t_.vpp)));
  std::vector<int> first_layer(static_cast<std::size_t>(V), 0);
  for (int g = 1; g < V; ++g)
    first_layer[static_cast<std::size_t>(g)] =
        first_layer[static_cast<std::size_t>(g - 1)] + layers_per_vstage_[static_cast<std::size_t>(g - 1)];
  for (int s = 0; s < t_.pp; ++s) {
    auto& units = ctx_.units(s);
    for (int c = 0; c < t_.vpp; ++c) {
      int g = c * t_.pp + s;
      Slot slot{g, static_cast<int>(units.size()), 0};
      if (g == 0)
        units.push_back({"embedding", -1, c, model.embedding_params() / t});
      for (int l = 0; l < layers_per_vstage_[static_cast<std::size_t>(g)]; ++l)
        units.push_back({"layer", first_layer[static_cast<std::size_t>(g)] + l, c, layer_params});
      if (g == V - 1) {
        double out =
            model.final_norm_params() +
            ((!model.tied_embeddings || t_.pp > 1) ? static_cast<double>(model.vocab) * model.hidden / t : 0.0);
        units.push_back({"output", -1, c, out});
      }
      slot.count = static_cast<int>(units.size()) - slot.first_unit;
      slots_[static_cast<std::size_t>(s)][static_cast<std::size_t>(c)] = slot;
    }
  }
}

bool Builder::ready(int stage, const PipelineOp& op) const
{
  int g = op.chunk * t_.pp + stage;
  if (op.forward)
    return g == 0 || !fwd_out_[out_index(g - 1, op.micro_batch)].empty();
  return g == vstages() - 1 || !bwd_out_[out_index(g + 1, op.micro_batch)].empty();
}

PerPos Builder::receive(int stage, int vstage, int mb, bool forward)
{
  const auto& ranks = ctx_.stage_ranks(stage);
  PerPos deps(ranks.size());
  int src_vstage = forward ? vstage - 1 : vstage + 1;
  if (src_vstage < 0 || src_vstage >= vstages())
    return deps;
  int src_stage = stage_of(src_vstage);
  const auto& produced = (forward ? fwd_out_ : bwd_out_)[out_index(src_vstage, mb)];
  // Scatter/gather over TP ranks (Narayanan et al. 2021 §4.1): each TP rank sends 1/t of the
  // boundary activation.
  double bytes = cost_.tp_message_bytes() / t_.tp;
  Workload::Label label{Category::pp_comm, forward ? "pp_activation" : "pp_gradient", -1, mb};
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    int r = static_cast<int>(ranks[i]);
    int peer = layout_.rank(layout_.coord(r, Dim::tp), layout_.coord(r, Dim::cp), layout_.coord(r, Dim::dp), src_stage);
    TaskId producer = produced[static_cast<std::size_t>(ctx_.position(static_cast<std::uint32_t>(peer)))];
    auto [send, recv] = w_.add_p2p(static_cast<std::uint32_t>(peer), static_cast<std::uint32_t>(r), bytes,
                                   forward ? Stream::pp_send_fwd : Stream::pp_send_bwd,
                                   forward ? Stream::pp_recv_fwd : Stream::pp_recv_bwd, label, {producer}, {});
    (void)send;
    deps[i].push_back(recv);
  }
  return deps;
}

PerPos Builder::tp_post(int stage, CollOp op, int layer, int mb, const std::vector<TaskId>& src,
                        const PerPos& concurrent_deps, Category cat)
{
  // The collective after a row-parallel GEMM: exposed (waits for the GEMM), or, with
  // overlap.tp_comm and sequence parallelism, pipelined with it.
  Workload::Label label{Category::tp_comm, op == CollOp::all_reduce ? "tp_all_reduce" : "tp_reduce_scatter", layer, mb};
  (void)cat;
  const bool overlap = t_.overlap.tp_comm && t_.sequence_parallel;
  auto comm = ctx_.collective(stage, ctx_.groups(stage, Dim::tp), op, cost_.tp_message_bytes(), Stream::tp, label,
                              overlap ? concurrent_deps : single(src));
  PerPos after = single(comm);
  if (overlap)
    append(after, src);
  return after;
}

PerPos Builder::block_forward(int stage, const BlockCost& b, bool attention, int layer, int mb, PerPos deps,
                              Category cat)
{
  const bool tp = t_.tp > 1;
  const bool sp = tp && t_.sequence_parallel;
  const bool overlap = sp && t_.overlap.tp_comm;
  const char* name = attention ? (cat == Category::recompute ? "attention_recompute" : "attention_forward")
                               : (cat == Category::recompute ? "mlp_recompute" : "mlp_forward");
  PerPos cdeps = deps;
  PerPos extra(deps.size());
  if (sp) {
    Workload::Label l{Category::tp_comm, "tp_all_gather", layer, mb};
    auto ag = ctx_.collective(stage, ctx_.groups(stage, Dim::tp), CollOp::all_gather, cost_.tp_message_bytes(),
                              Stream::tp, l, deps);
    if (overlap)
      append(extra, ag);
    else
      cdeps = single(ag);
  }
  auto c = ctx_.compute(stage, b.forward, {cat, name, layer, mb}, cdeps);
  if (attention && t_.cp > 1) {
    // ring attention: K/V chunks circulate over the CP ranks while attention computes
    Workload::Label l{Category::cp_comm, "cp_kv_exchange", layer, mb};
    auto kv = ctx_.collective(stage, ctx_.groups(stage, Dim::cp), CollOp::all_gather, cost_.cp_message_bytes() * t_.cp,
                              Stream::cp, l, cdeps);
    append(extra, kv);
  }
  PerPos after;
  if (tp)
    after = tp_post(stage, sp ? CollOp::reduce_scatter : CollOp::all_reduce, layer, mb, c, cdeps, cat);
  else
    after = single(c);
  for (std::size_t i = 0; i < after.size(); ++i)
    after[i].insert(after[i].end(), extra[i].begin(), extra[i].end());
  return after;
}

PerPos Builder::block_backward(int stage, const BlockCost& b, bool attention, int layer, int mb, PerPos deps)
{
  const bool tp = t_.tp > 1;
  const bool sp = tp && t_.sequence_parallel;
  const bool overlap = sp && t_.overlap.tp_comm;
  const char* name = attention ? "attention_backward" : "mlp_backward";
  PerPos cdeps = deps;
  PerPos extra(deps.size());
  if (sp) {
    // backward of the forward reduce-scatter: gather the output gradient
    Workload::Label l{Category::tp_comm, "tp_all_gather", layer, mb};
    auto ag = ctx_.collective(stage, ctx_.groups(stage, Dim::tp), CollOp::all_gather, cost_.tp_message_bytes(),
                              Stream::tp, l, deps);
    if (overlap)
      append(extra, ag);
    else
      cdeps = single(ag);
    // re-gather of the input for the weight gradient, overlapped with the data-gradient GEMM
    Workload::Label l2{Category::tp_comm, "tp_all_gather_input", layer, mb};
    auto ag2 = ctx_.collective(stage, ctx_.groups(stage, Dim::tp), CollOp::all_gather, cost_.tp_message_bytes(),
                               Stream::tp, l2, deps);
    append(extra, ag2);
  }
  if (attention && t_.cp > 1) {
    Workload::Label l{Category::cp_comm, "cp_kv_exchange", layer, mb};
    auto kv = ctx_.collective(stage, ctx_.groups(stage, Dim::cp), CollOp::all_gather, cost_.cp_message_bytes() * t_.cp,
                              Stream::cp, l, cdeps);
    append(extra, kv);
    Workload::Label l2{Category::cp_comm, "cp_dkv_reduce", layer, mb};
    auto dkv = ctx_.collective(stage, ctx_.groups(stage, Dim::cp), CollOp::reduce_scatter,
                               cost_.cp_message_bytes() * t_.cp, Stream::cp, l2, cdeps);
    append(extra, dkv);
  }
  PerPos after;
  if (!tp) {
    after = single(ctx_.compute(stage, b.backward, {Category::backward, name, layer, mb}, cdeps));
  } else if (sp) {
    // Korthikanti et al. 2022: the input-gradient reduce-scatter overlaps the weight-gradient
    // GEMM; split backward into the data-gradient half and the weight-gradient half.
    auto dgrad = ctx_.compute(stage, 0.5 * b.backward, {Category::backward, name, layer, mb}, cdeps);
    Workload::Label l{Category::tp_comm, "tp_reduce_scatter", layer, mb};
    auto rs = ctx_.collective(stage, ctx_.groups(stage, Dim::tp), CollOp::reduce_scatter, cost_.tp_message_bytes(),
                              Stream::tp, l, overlap ? cdeps : single(dgrad));
    auto wgrad = ctx_.compute(stage, 0.5 * b.backward, {Category::backward, name, layer, mb}, {});
    after = single(rs);
    append(after, wgrad);
  } else {
    // Megatron 2020-21: the input-gradient all-reduce follows the whole backward of the block
    auto c = ctx_.compute(stage, b.backward, {Category::backward, name, layer, mb}, cdeps);
    after = tp_post(stage, CollOp::all_reduce, layer, mb, c, cdeps, Category::backward);
  }
  for (std::size_t i = 0; i < after.size(); ++i)
    after[i].insert(after[i].end(), extra[i].begin(), extra[i].end());
  return after;
}

PerPos Builder::forward_unit(int stage, const ParamUnit& u, int unit_index, int mb, PerPos deps, bool recompute)
{
  if (!recompute) {
    PerPos pre = dp_->before_forward(ctx_, stage, unit_index, mb);
    for (std::size_t i = 0; i < pre.size(); ++i)
      deps[i].insert(deps[i].end(), pre[i].begin(), pre[i].end());
  }
  const bool tp = t_.tp > 1;
  const bool sp = tp && t_.sequence_parallel;
  if (u.name == "embedding") {
    auto c = ctx_.compute(stage, emb_.forward, {Category::forward, "embedding_forward", -1, mb}, deps);
    if (!tp)
      return single(c);
    // vocab-parallel embedding: partial sums over the vocabulary shards
    return tp_post(stage, sp ? CollOp::reduce_scatter : CollOp::all_reduce, -1, mb, c, deps, Category::forward);
  }
  if (u.name == "output") {
    PerPos cdeps = deps;
    if (sp) {
      Workload::Label l{Category::tp_comm, "tp_all_gather", -1, mb};
      cdeps = single(ctx_.collective(stage, ctx_.groups(stage, Dim::tp), CollOp::all_gather, cost_.tp_message_bytes(),
                                     Stream::tp, l, deps));
    }
    return single(ctx_.compute(stage, logits_.forward, {Category::forward, "logits_forward", -1, mb}, cdeps));
  }
  Category cat = recompute ? Category::recompute : Category::forward;
  PerPos a = block_forward(stage, attn_, true, u.layer, mb, deps, cat);
  return block_forward(stage, mlp_, false, u.layer, mb, a, cat);
}

PerPos Builder::backward_unit(int stage, const ParamUnit& u, int unit_index, int mb, PerPos deps, bool last_mb)
{
  PerPos pre = dp_->before_backward(ctx_, stage, unit_index, mb);
  for (std::size_t i = 0; i < pre.size(); ++i)
    deps[i].insert(deps[i].end(), pre[i].begin(), pre[i].end());
  const bool tp = t_.tp > 1;
  const bool sp = tp && t_.sequence_parallel;
  PerPos after;
  std::vector<TaskId> weights_done;
  if (u.name == "output") {
    auto c = ctx_.compute(stage, logits_.backward, {Category::backward, "logits_backward", -1, mb}, deps);
    weights_done = c;
    after = tp ? tp_post(stage, sp ? CollOp::reduce_scatter : CollOp::all_reduce, -1, mb, c, deps, Category::backward)
               : single(c);
  } else if (u.name == "embedding") {
    PerPos cdeps = deps;
    if (sp) {
      Workload::Label l{Category::tp_comm, "tp_all_gather", -1, mb};
      cdeps = single(ctx_.collective(stage, ctx_.groups(stage, Dim::tp), CollOp::all_gather, cost_.tp_message_bytes(),
                                     Stream::tp, l, deps));
    }
    auto c = ctx_.compute(stage, emb_.backward, {Category::backward, "embedding_backward", -1, mb}, cdeps);
    weights_done = c;
    after = single(c);
  } else {
    PerPos d = deps;
    if (t_.recompute == Recompute::full) {
      d = forward_unit(stage, u, unit_index, mb, d, true);
    }
    PerPos m = block_backward(stage, mlp_, false, u.layer, mb, d);
    if (attn_.recompute > 0 && t_.recompute == Recompute::selective) {
      auto rc = ctx_.compute(stage, attn_.recompute, {Category::recompute, "attention_core_recompute", u.layer, mb}, m);
      m = single(rc);
    }
    after = block_backward(stage, attn_, true, u.layer, mb, m);
    // the weight gradients are final once the layer's last compute task has run
    const auto& ranks = ctx_.stage_ranks(stage);
    weights_done.resize(ranks.size());
    for (std::size_t i = 0; i < ranks.size(); ++i)
      weights_done[i] = w_.program(ranks[i], Stream::compute).back();
  }
  dp_->after_backward(ctx_, stage, unit_index, mb, last_mb, weights_done);
  if (u.name == "embedding" || u.name == "output")
    if (last_mb)
      embed_grad_done_[static_cast<std::size_t>(stage)] = weights_done;
  return after;
}

void Builder::emit(int stage, const PipelineOp& op)
{
  const Slot& slot = slots_[static_cast<std::size_t>(stage)][static_cast<std::size_t>(op.chunk)];
  const auto& units = ctx_.units(stage);
  PerPos deps = receive(stage, slot.vstage, op.micro_batch, op.forward);
  if (op.forward) {
    for (int k = 0; k < slot.count; ++k) {
      int idx = slot.first_unit + k;
      deps = forward_unit(stage, units[static_cast<std::size_t>(idx)], idx, op.micro_batch, deps, false);
    }
    std::vector<TaskId> out(deps.size(), kNone);
    for (std::size_t i = 0; i < deps.size(); ++i)
      out[i] = deps[i].empty() ? kNone : *std::max_element(deps[i].begin(), deps[i].end());
    fwd_out_[out_index(slot.vstage, op.micro_batch)] = out;
  } else {
    bool last = op.micro_batch == last_bwd_mb_[static_cast<std::size_t>(stage * t_.vpp + op.chunk)];
    for (int k = slot.count - 1; k >= 0; --k) {
      int idx = slot.first_unit + k;
      deps = backward_unit(stage, units[static_cast<std::size_t>(idx)], idx, op.micro_batch, deps, last);
    }
    std::vector<TaskId> out(deps.size(), kNone);
    for (std::size_t i = 0; i < deps.size(); ++i)
      out[i] = deps[i].empty() ? kNone : *std::max_element(deps[i].begin(), deps[i].end());
    bwd_out_[out_index(slot.vstage, op.micro_batch)] = out;
  }
}

StepPlan Builder::run()
{
  auto schedule = ScheduleRegistry::instance().make(to_string(t_.schedule));
  dp_ = DataParallelRegistry::instance().make(data_parallel_strategy_name(t_.zero));
  m_ = t_.micro_batches();
  plan_units();
  const int p = t_.pp;
  fwd_out_.assign(static_cast<std::size_t>(vstages() * m_), {});
  bwd_out_.assign(static_cast<std::size_t>(vstages() * m_), {});
  embed_grad_done_.assign(static_cast<std::size_t>(p), {});
  std::vector<std::vector<PipelineOp>> ops(static_cast<std::size_t>(p));
  last_bwd_mb_.assign(static_cast<std::size_t>(p * t_.vpp), -1);
  for (int s = 0; s < p; ++s) {
    ops[static_cast<std::size_t>(s)] = schedule->order(s, p, m_, t_.vpp);
    for (const auto& op : ops[static_cast<std::size_t>(s)])
      if (!op.forward)
        last_bwd_mb_[static_cast<std::size_t>(s * t_.vpp + op.chunk)] = op.micro_batch;
  }
  // Emit stages round-robin, each op as soon as its input exists, so that point-to-point
  // pairs are created after their producer (interleaved schedules wrap around the stages).
  std::vector<std::size_t> cursor(static_cast<std::size_t>(p), 0);
  bool progress = true;
  while (progress) {
    progress = false;
    for (int s = 0; s < p; ++s) {
      auto& c = cursor[static_cast<std::size_t>(s)];
      const auto& list = ops[static_cast<std::size_t>(s)];
      while (c < list.size() && ready(s, list[c])) {
        emit(s, list[c]);
        ++c;
        progress = true;
      }
    }
  }
  for (int s = 0; s < p; ++s)
    if (cursor[static_cast<std::size_t>(s)] != ops[static_cast<std::size_t>(s)].size())
      throw std::logic_error("pipeline schedule deadlocks at stage " + std::to_string(s));

  // Tied embeddings across stages: the first and last stage sum their copies' gradients.
  std::vector<PerPos> extra(static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s)
    extra[static_cast<std::size_t>(s)].resize(ctx_.stage_ranks(s).size());
  if (cost_.model().tied_embeddings && p > 1) {
    double bytes = static_cast<double>(cost_.model().vocab) * cost_.model().hidden / t_.tp * ctx_.grad_comm_bytes();
    Workload::Label label{Category::dp_comm, "embedding_grad_all_reduce", -1, -1};
    for (std::uint32_t r : ctx_.stage_ranks(0)) {
      int rr = static_cast<int>(r);
      std::uint32_t last = static_cast<std::uint32_t>(
          layout_.rank(layout_.coord(rr, Dim::tp), layout_.coord(rr, Dim::cp), layout_.coord(rr, Dim::dp), p - 1));
      std::uint32_t g = w_.add_group({r, last});
      TaskId d0 = embed_grad_done_[0][static_cast<std::size_t>(ctx_.position(r))];
      TaskId d1 = embed_grad_done_[static_cast<std::size_t>(p - 1)][static_cast<std::size_t>(ctx_.position(last))];
      auto tasks = w_.add_collective(CollOp::all_reduce, g, bytes, Stream::embed, label, {{d0}, {d1}}, ctx_.algo());
      extra[0][static_cast<std::size_t>(ctx_.position(r))].push_back(tasks[0]);
      extra[static_cast<std::size_t>(p - 1)][static_cast<std::size_t>(ctx_.position(last))].push_back(tasks[1]);
    }
  }
  for (int s = 0; s < p; ++s)
    dp_->end_step(ctx_, s, extra[static_cast<std::size_t>(s)]);

  StepPlan plan;
  plan.layers_per_stage.assign(static_cast<std::size_t>(p), 0);
  for (int g = 0; g < vstages(); ++g)
    plan.layers_per_stage[static_cast<std::size_t>(stage_of(g))] += layers_per_vstage_[static_cast<std::size_t>(g)];
  for (int s = 0; s < p; ++s) {
    double sum = 0;
    for (const auto& u : ctx_.units(s))
      sum += u.params;
    plan.params_per_stage.push_back(sum);
  }
  return plan;
}

} // namespace

StepPlan build_step(const CostModel& cost, bool fold)
{
  const TrainingSpec& t = cost.training();
  Layout layout(t);
  StepPlan plan;
  plan.folded = fold;
  plan.workload = Workload(static_cast<std::uint32_t>(layout.ranks()));
  Builder b(cost, plan.workload, layout, fold);
  StepPlan meta = b.run();
  plan.layers_per_stage = std::move(meta.layers_per_stage);
  plan.params_per_stage = std::move(meta.params_per_stage);
  return plan;
}

} // namespace clustersim
