// One transformer layer (and the embedding and output units) of one micro-batch on one
// pipeline stage: Megatron tensor parallelism (column/row-parallel GEMMs, all-reduces or, with
// sequence parallelism, all-gather / reduce-scatter pairs), ring-attention context parallelism,
// recomputation, and the data-parallel strategy's hooks around each unit.
#include "LayerEmitter.hpp"

#include <algorithm>

namespace clustersim {

void append(PerPos& into, const std::vector<TaskId>& tasks)
{
  for (std::size_t i = 0; i < tasks.size(); ++i)
    if (tasks[i] != kNoTask)
      into[i].push_back(tasks[i]);
}

PerPos single(const std::vector<TaskId>& tasks)
{
  PerPos p(tasks.size());
  append(p, tasks);
  return p;
}

LayerEmitter::LayerEmitter(StepContext& ctx, DataParallelStrategy& dp)
    : ctx_(ctx), cost_(ctx.cost()), t_(ctx.training()), w_(ctx.workload()), dp_(dp)
{
  attn_ = cost_.attention_block();
  mlp_ = cost_.mlp_block();
  emb_ = cost_.embedding();
  logits_ = cost_.logits();
}

PerPos LayerEmitter::tp_post(int stage, CollOp op, int layer, int mb, const std::vector<TaskId>& src,
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

PerPos LayerEmitter::block_forward(int stage, const BlockCost& b, bool attention, int layer, int mb, PerPos deps,
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

PerPos LayerEmitter::block_backward(int stage, const BlockCost& b, bool attention, int layer, int mb, PerPos deps)
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

PerPos LayerEmitter::forward_unit(int stage, const ParamUnit& u, int unit_index, int mb, PerPos deps, bool recompute)
{
  if (!recompute) {
    PerPos pre = dp_.before_forward(ctx_, stage, unit_index, mb);
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
  PerPos out = block_forward(stage, mlp_, false, u.layer, mb, a, cat);
  if (u.name != "mtp" || recompute)
    return out;
  // a multi-token-prediction module: a transformer layer, then the shared output head and loss
  return single(ctx_.compute(stage, logits_.forward, {cat, "mtp_logits_forward", u.layer, mb}, out));
}

LayerEmitter::Backward LayerEmitter::backward_unit(int stage, const ParamUnit& u, int unit_index, int mb, PerPos deps,
                                                  bool last_mb)
{
  PerPos pre = dp_.before_backward(ctx_, stage, unit_index, mb);
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
    if (u.name == "mtp")
      d = single(ctx_.compute(stage, logits_.backward, {Category::backward, "mtp_logits_backward", u.layer, mb}, d));
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
  dp_.after_backward(ctx_, stage, unit_index, mb, last_mb, weights_done);
  return {std::move(after), std::move(weights_done)};
}

} // namespace clustersim
