// One transformer layer (and the embedding and output units) of one micro-batch on one
// pipeline stage: Megatron tensor parallelism (column/row-parallel GEMMs, all-reduces or, with
// sequence parallelism, all-gather / reduce-scatter pairs), ring-attention context parallelism,
// recomputation, and the data-parallel strategy's hooks around each unit.
#include "strategies/LayerEmitter.hpp"

#include "strategies/MoeDispatcher.hpp"

#include <algorithm>

namespace clustersim {

namespace {

/// While alive, the compute tasks emitted take `flops` FLOPs, and those emitted without their own
/// host time `host` seconds of host issue, per `gpu` seconds: a block's pass spread over the
/// tasks it is cut into (ring steps, the pieces around overlapped TP collectives), by their time.
class Rates {
public:
  Rates(StepContext& c, double host, double flops, double gpu)
      : c_(c), host_(c.host_rate()), flops_(c.flops_rate())
  {
    c_.set_host_rate(gpu > 0 ? host / gpu : 0.0);
    c_.set_flops_rate(gpu > 0 ? flops / gpu : 0.0);
  }
  ~Rates()
  {
    c_.set_host_rate(host_);
    c_.set_flops_rate(flops_);
  }
  Rates(const Rates&) = delete;
  Rates& operator=(const Rates&) = delete;

private:
  StepContext& c_;
  double host_;
  double flops_;
};

bool column_gemm(const std::string& n) { return n == "qkv_projection" || n == "fc1" || n == "expert_fc1"; }
bool row_gemm(const std::string& n) { return n == "output_projection" || n == "fc2" || n == "expert_fc2"; }

} // namespace

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

LayerEmitter::Parts LayerEmitter::parts_of(const BlockCost& b)
{
  // where each op falls: before the column-parallel GEMM, that GEMM (with its FP8 cast, pushed
  // right after it), between, the row-parallel GEMM, after
  Parts p;
  int where = 0;
  double f[5] = {0, 0, 0, 0, 0};
  double bw[5] = {0, 0, 0, 0, 0};
  for (const auto& o : b.ops) {
    if (o.kind == "gemm" && column_gemm(o.name))
      where = 1;
    else if (o.kind == "gemm" && row_gemm(o.name))
      where = 3;
    else if (o.kind != "cast" && (where == 1 || where == 3))
      ++where;
    f[where] += o.forward;
    bw[where] += o.backward;
    if (where == 1)
      p.col_data += o.kind == "gemm" ? o.backward_data : o.backward;
  }
  p.pre = f[0];
  p.col = f[1];
  p.mid = f[2];
  p.row = f[3];
  p.post = f[4];
  p.bpre = bw[0];
  p.col_weight = bw[1] - p.col_data;
  p.bmid = bw[2];
  p.brow = bw[3];
  p.bpost = bw[4];
  return p;
}

LayerEmitter::LayerEmitter(StepContext& ctx, DataParallelStrategy& dp)
    : ctx_(ctx), cost_(ctx.cost()), t_(ctx.training()), w_(ctx.workload()), dp_(dp)
{
  attn_ = cost_.attention_block();
  if (cost_.model().has_window())
    attn_window_ = cost_.attention_block(true);
  mlp_ = cost_.mlp_block();
  if (cost_.model().experts > 1)
    moe_ = cost_.moe_block();
  pending_.resize(static_cast<std::size_t>(ctx.stages()));
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

std::vector<TaskId> LayerEmitter::ring(int stage, const std::vector<double>& steps, double bytes,
                                       const Workload::Label& label, std::vector<TaskId> last)
{
  const bool backward = label.category == Category::backward;
  const auto& cp_groups = ctx_.groups(stage, Dim::cp);
  if (t_.traits().cp_all_gather) {
    // every rank's K/V gathered before the steps (and dK/dV reduce-scattered after them in
    // backward): the steps then run back to back
    Workload::Label l{Category::cp_comm, "cp_kv_all_gather", label.layer, label.micro_batch};
    auto ag = ctx_.collective(stage, cp_groups, CollOp::all_gather, cost_.cp_message_bytes() * t_.cp, Stream::cp, l,
                              single(last));
    PerPos deps = single(last);
    append(deps, ag);
    for (double sec : steps) {
      last = ctx_.compute(stage, sec, label, deps);
      deps = single(last);
    }
    if (!backward)
      return last;
    Workload::Label l2{Category::cp_comm, "cp_dkv_reduce_scatter", label.layer, label.micro_batch};
    auto rs = ctx_.collective(stage, cp_groups, CollOp::reduce_scatter, cost_.cp_message_bytes() * t_.cp, Stream::cp,
                              l2, single(last));
    PerPos after = single(last);
    append(after, rs);
    return ctx_.compute(stage, 0, label, after);
  }
  Workload::Label l{Category::cp_comm, backward ? "cp_kv_dkv_exchange" : "cp_kv_exchange", label.layer,
                    label.micro_batch};
  std::vector<TaskId> arrived;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    PerPos deps = single(last);
    // the exchange feeding step i + 1 runs while step i computes
    std::vector<TaskId> next;
    if (i + 1 < steps.size())
      next = ctx_.collective(stage, cp_groups, CollOp::sendrecv, bytes, Stream::cp, l,
                             arrived.empty() ? single(last) : single(arrived));
    if (!arrived.empty())
      append(deps, arrived);
    last = ctx_.compute(stage, steps[i], label, deps);
    arrived = next;
  }
  return last;
}

PerPos LayerEmitter::block_forward(int stage, const BlockCost& b, bool attention, int layer, int mb, PerPos deps,
                              Category cat)
{
  // recomputed whole: its forward's
  Rates rates(ctx_, cost_.host_issue(b, Pass::forward), pass_flops(b, Pass::forward), b.forward);
  const bool tp = t_.tp > 1;
  const bool sp = tp && t_.sequence_parallel;
  const bool overlap = sp && t_.overlap.tp_comm;
  const char* name = attention ? (cat == Category::recompute ? "attention_recompute" : "attention_forward")
                               : (cat == Category::recompute ? "mlp_recompute" : "mlp_forward");
  if (overlap)
    return overlapped_forward(stage, b, attention, layer, mb, deps, cat, name);
  PerPos cdeps = deps;
  PerPos extra(deps.size());
  if (sp) {
    Workload::Label l{Category::tp_comm, "tp_all_gather", layer, mb};
    cdeps = single(ctx_.collective(stage, ctx_.groups(stage, Dim::tp), CollOp::all_gather, cost_.tp_message_bytes(),
                                   Stream::tp, l, deps));
  }
  std::vector<TaskId> c;
  if (attention && !b.ring_forward.empty()) {
    // ring attention: the ops before the core, then one task per ring step, each waiting for
    // the K/V chunk the previous step's exchange brought, then the ops after the core
    const double post = b.forward - b.before_core_forward - b.core_forward;
    c = ctx_.compute(stage, b.before_core_forward, {cat, name, layer, mb}, cdeps);
    c = ring(stage, b.ring_forward, cost_.cp_message_bytes(), {cat, name, layer, mb}, c);
    c = ctx_.compute(stage, post, {cat, name, layer, mb}, single(c));
  } else {
    c = ctx_.compute(stage, b.forward, {cat, name, layer, mb}, cdeps);
  }
  if (attention && t_.cp > 1 && b.ring_forward.empty()) {
    // without flash attention: the K/V chunks all-gathered while attention computes
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
  Rates rates(ctx_, cost_.host_issue(b, Pass::backward), pass_flops(b, Pass::backward), b.backward);
  const bool tp = t_.tp > 1;
  const bool sp = tp && t_.sequence_parallel;
  const bool overlap = sp && t_.overlap.tp_comm;
  const char* name = attention ? "attention_backward" : "mlp_backward";
  if (overlap)
    return overlapped_backward(stage, b, attention, layer, mb, deps, name);
  PerPos cdeps = deps;
  PerPos extra(deps.size());
  if (sp) {
    // backward of the forward reduce-scatter: gather the output gradient
    Workload::Label l{Category::tp_comm, "tp_all_gather", layer, mb};
    cdeps = single(ctx_.collective(stage, ctx_.groups(stage, Dim::tp), CollOp::all_gather, cost_.tp_message_bytes(),
                                   Stream::tp, l, deps));
    // re-gather of the input for the weight gradient, overlapped with the data-gradient GEMM
    Workload::Label l2{Category::tp_comm, "tp_all_gather_input", layer, mb};
    auto ag2 = ctx_.collective(stage, ctx_.groups(stage, Dim::tp), CollOp::all_gather, cost_.tp_message_bytes(),
                               Stream::tp, l2, deps);
    append(extra, ag2);
  }
  double rest = b.backward;
  if (attention && !b.ring_forward.empty()) {
    // backward of the ops after the core, then the ring again: each step needs the K/V chunk
    // and passes on the accumulated dK/dV; the ops before the core are what is left
    const double post = b.backward - b.before_core_backward - b.core_backward;
    auto c = ctx_.compute(stage, post, {Category::backward, name, layer, mb}, cdeps);
    c = ring(stage, b.ring_backward, 2 * cost_.cp_message_bytes(), {Category::backward, name, layer, mb}, c);
    cdeps = single(c);
    rest = b.before_core_backward;
  } else if (attention && t_.cp > 1) {
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
    after = single(ctx_.compute(stage, rest, {Category::backward, name, layer, mb}, cdeps));
  } else if (sp) {
    // Korthikanti et al. 2022: the input-gradient reduce-scatter overlaps the weight-gradient
    // GEMM; split backward into the data-gradient half and the weight-gradient half.
    auto dgrad = ctx_.compute(stage, 0.5 * rest, {Category::backward, name, layer, mb}, cdeps);
    Workload::Label l{Category::tp_comm, "tp_reduce_scatter", layer, mb};
    auto rs = ctx_.collective(stage, ctx_.groups(stage, Dim::tp), CollOp::reduce_scatter, cost_.tp_message_bytes(),
                              Stream::tp, l, overlap ? cdeps : single(dgrad));
    auto wgrad = ctx_.compute(stage, 0.5 * rest, {Category::backward, name, layer, mb}, {});
    after = single(rs);
    append(after, wgrad);
  } else {
    // Megatron 2020-21: the input-gradient all-reduce follows the whole backward of the block
    auto c = ctx_.compute(stage, rest, {Category::backward, name, layer, mb}, cdeps);
    after = tp_post(stage, CollOp::all_reduce, layer, mb, c, cdeps, Category::backward);
  }
  for (std::size_t i = 0; i < after.size(); ++i)
    after[i].insert(after[i].end(), extra[i].begin(), extra[i].end());
  return after;
}

std::vector<TaskId> LayerEmitter::middle(int stage, const BlockCost& b, const Parts& p, bool forward,
                                         const Workload::Label& label, const PerPos& deps)
{
  // the ops between the two GEMMs; with ring attention, split around the ring's steps
  if (b.ring_forward.empty())
    return ctx_.compute(stage, forward ? p.mid : p.bmid, label, deps);
  if (forward) {
    const double before = b.before_core_forward - p.pre - p.col;
    auto c = ctx_.compute(stage, before, label, deps);
    c = ring(stage, b.ring_forward, cost_.cp_message_bytes(), label, c);
    return ctx_.compute(stage, p.mid - before - b.core_forward, label, single(c));
  }
  const double after = b.backward - b.before_core_backward - b.core_backward - p.brow - p.bpost;
  auto c = ctx_.compute(stage, after, label, deps);
  c = ring(stage, b.ring_backward, 2 * cost_.cp_message_bytes(), label, c);
  return ctx_.compute(stage, p.bmid - after - b.core_backward, label, single(c));
}

PerPos LayerEmitter::overlapped_forward(int stage, const BlockCost& b, bool attention, int layer, int mb,
                                        const PerPos& deps, Category cat, const char* name)
{
  // Sequence parallelism with overlap.tp_comm (TE userbuffers, torch async TP): the all-gather
  // of the norm's output runs under the column-parallel GEMM that consumes it, the
  // reduce-scatter under the row-parallel GEMM that produces it; nothing else hides them
  (void)attention;
  const Parts p = parts_of(b);
  const Workload::Label label{cat, name, layer, mb};
  auto pre = ctx_.compute(stage, p.pre, label, deps);
  auto mid = middle(stage, b, p, true, label, hidden(stage, CollOp::all_gather, "tp_all_gather", p.col, label,
                                                    single(pre)).both);
  auto row = hidden(stage, CollOp::reduce_scatter, "tp_reduce_scatter", p.row, label, single(mid));
  return single(ctx_.compute(stage, p.post, label, row.both));
}

PerPos LayerEmitter::overlapped_backward(int stage, const BlockCost& b, bool attention, int layer, int mb,
                                         const PerPos& deps, const char* name)
{
  // backward of the same: the output gradient's all-gather under the row-parallel GEMM's data
  // gradient, the input's re-gather under the column-parallel data gradient, the input
  // gradient's reduce-scatter under its weight gradient
  (void)attention;
  const Parts p = parts_of(b);
  const Workload::Label label{Category::backward, name, layer, mb};
  auto post = ctx_.compute(stage, p.bpost, label, deps);
  auto mid = middle(stage, b, p, false, label, hidden(stage, CollOp::all_gather, "tp_all_gather", p.brow, label,
                                                     single(post)).both);
  auto dgrad = hidden(stage, CollOp::all_gather, "tp_all_gather_input", p.col_data, label, single(mid));
  auto wgrad = hidden(stage, CollOp::reduce_scatter, "tp_reduce_scatter", p.col_weight, label, single(dgrad.compute),
                      dgrad.both);
  return single(ctx_.compute(stage, p.bpre, label, wgrad.both));
}

LayerEmitter::Hidden LayerEmitter::hidden(int stage, CollOp op, const char* name, double seconds,
                                          const Workload::Label& label, const PerPos& after)
{
  return hidden(stage, op, name, seconds, label, after, after);
}

LayerEmitter::Hidden LayerEmitter::hidden(int stage, CollOp op, const char* name, double seconds,
                                          const Workload::Label& label, const PerPos& coll_after,
                                          const PerPos& compute_after)
{
  Hidden h;
  auto coll = ctx_.collective(stage, ctx_.groups(stage, Dim::tp), op, cost_.tp_message_bytes(), Stream::tp,
                              {Category::tp_comm, name, label.layer, label.micro_batch}, coll_after);
  h.compute = ctx_.compute(stage, seconds, label, compute_after);
  h.both = single(h.compute);
  append(h.both, coll);
  return h;
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
    Rates rates(ctx_, 0, pass_flops(emb_, Pass::forward), emb_.forward);
    auto c = ctx_.compute(stage, emb_.forward, {Category::forward, "embedding_forward", -1, mb}, deps,
                          Stream::compute, cost_.host_issue(emb_, Pass::forward));
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
    Rates rates(ctx_, 0, pass_flops(logits_, Pass::forward), logits_.forward);
    return single(ctx_.compute(stage, logits_.forward, {Category::forward, "logits_forward", -1, mb}, cdeps,
                               Stream::compute, cost_.host_issue(logits_, Pass::forward)));
  }
  Category cat = recompute ? Category::recompute : Category::forward;
  PerPos a = block_forward(stage, attention(u.layer), true, u.layer, mb, deps, cat);
  PerPos out = cost_.model().moe_layer(u.layer) ? moe_forward(stage, u.layer, mb, a, cat)
                                                : block_forward(stage, mlp_, false, u.layer, mb, a, cat);
  if (u.name != "mtp" || recompute)
    return out;
  // a multi-token-prediction module: a transformer layer, then the shared output head and loss
  Rates rates(ctx_, 0, pass_flops(logits_, Pass::forward), logits_.forward);
  return single(ctx_.compute(stage, logits_.forward, {cat, "mtp_logits_forward", u.layer, mb}, out, Stream::compute,
                             cost_.host_issue(logits_, Pass::forward)));
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
    Rates rates(ctx_, 0, pass_flops(logits_, Pass::backward), logits_.backward);
    auto c = ctx_.compute(stage, logits_.backward, {Category::backward, "logits_backward", -1, mb}, deps,
                          Stream::compute, cost_.host_issue(logits_, Pass::backward));
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
    Rates rates(ctx_, 0, pass_flops(emb_, Pass::backward), emb_.backward);
    auto c = ctx_.compute(stage, emb_.backward, {Category::backward, "embedding_backward", -1, mb}, cdeps,
                          Stream::compute, cost_.host_issue(emb_, Pass::backward));
    weights_done = c;
    after = single(c);
  } else {
    PerPos d = deps;
    if (u.name == "mtp") {
      Rates rates(ctx_, 0, pass_flops(logits_, Pass::backward), logits_.backward);
      d = single(ctx_.compute(stage, logits_.backward, {Category::backward, "mtp_logits_backward", u.layer, mb}, d,
                              Stream::compute, cost_.host_issue(logits_, Pass::backward)));
    }
    if (t_.recompute == Recompute::full) {
      d = forward_unit(stage, u, unit_index, mb, d, true);
    }
    const bool moe = cost_.model().moe_layer(u.layer);
    const BlockCost& mlp = moe ? moe_ : mlp_;
    if (mlp.recompute > 0 && t_.recompute == Recompute::selective) {
      Rates rates(ctx_, 0, pass_flops(mlp, Pass::recompute), mlp.recompute);
      d = single(ctx_.compute(stage, mlp.recompute, {Category::recompute, "mlp_recompute", u.layer, mb}, d,
                              Stream::compute, cost_.host_issue(mlp, Pass::recompute)));
    }
    PerPos m = moe ? moe_backward(stage, u.layer, mb, d) : block_backward(stage, mlp_, false, u.layer, mb, d);
    const BlockCost& attn = attention(u.layer);
    if (attn.recompute > 0 && t_.recompute == Recompute::selective) {
      Rates rates(ctx_, 0, pass_flops(attn, Pass::recompute), attn.recompute);
      auto rc = ctx_.compute(stage, attn.recompute, {Category::recompute, "attention_core_recompute", u.layer, mb}, m,
                             Stream::compute, cost_.host_issue(attn, Pass::recompute));
      m = single(rc);
    }
    after = block_backward(stage, attn, true, u.layer, mb, m);
    // the weight gradients are final once the layer's last compute task has run
    const auto& ranks = ctx_.stage_ranks(stage);
    weights_done.resize(ranks.size());
    for (std::size_t i = 0; i < ranks.size(); ++i)
      weights_done[i] = w_.last(ranks[i], Stream::compute);
  }
  dp_.after_backward(ctx_, stage, unit_index, mb, last_mb, weights_done);
  return {std::move(after), std::move(weights_done)};
}

int LayerEmitter::fp8_linears(const ParamUnit& u) const
{
  auto count = [](const BlockCost& b) {
    return static_cast<int>(std::count_if(b.ops.begin(), b.ops.end(), [](const OpCost& o) {
      return o.kind == "gemm" && (o.precision == "fp8" || o.precision == "fp4");
    }));
  };
  if (u.name == "embedding")
    return 0;
  if (u.name == "output")
    return count(logits_);
  const int n = count(attention(u.layer)) + count(cost_.model().moe_layer(u.layer) ? moe_ : mlp_);
  return u.name == "mtp" ? n + count(logits_) : n;
}

PerPos LayerEmitter::take_pending(int stage)
{
  PerPos p = std::move(pending_[static_cast<std::size_t>(stage)]);
  pending_[static_cast<std::size_t>(stage)].clear();
  return p;
}

std::vector<double> LayerEmitter::expert_seconds(int stage, double balanced, int layer, int mb)
{
  const auto& ranks = ctx_.stage_ranks(stage);
  std::vector<double> out(ranks.size(), balanced);
  if (!CostModel::uneven_expert_loads(cost_.model(), t_))
    return out;
  using E = Layout::ExpertDim;
  const Layout& lay = ctx_.layout();
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const int r = static_cast<int>(ranks[i]);
    // the group: its etp and edp coordinates and the stage; the rank: its ep coordinate
    const int group = lay.expert_coord(r, t_.etp, t_.ep, E::etp) +
                      t_.etp * (lay.expert_coord(r, t_.etp, t_.ep, E::edp) + cost_.expert_data_parallel() * stage);
    out[i] = balanced * cost_.expert_loads(layer, mb, group)[static_cast<std::size_t>(
                            lay.expert_coord(r, t_.etp, t_.ep, E::ep))];
  }
  return out;
}

PerPos LayerEmitter::ep_exchange(int stage, bool dispatch, const Workload::Label& label, const PerPos& after)
{
  using E = Layout::ExpertDim;
  const double bytes = cost_.moe_dispatch_bytes();
  const bool backward = label.category == Category::backward;
  // forward: dispatch then the ETP gather; combine: the ETP reduce-scatter then the all-to-all.
  // In backward the same exchanges carry gradients the other way, in the same order.
  const std::string dir = dispatch ? (backward ? "ep_dispatch_grad" : "ep_dispatch")
                                   : (backward ? "ep_combine_grad" : "ep_combine");
  PerPos deps = after;
  auto exchange = [&](const std::vector<std::uint32_t>& groups, double b, const std::string& name) {
    if (groups.empty())
      return; // one member per group: nothing crosses
    deps = single(ctx_.collective(stage, groups, CollOp::all_to_all, b, Stream::ep,
                                  {Category::ep_comm, name, label.layer, label.micro_batch}, deps));
  };
  // Toward the experts (dispatch forward, combine's gradient backward) or back from them.
  const bool to_experts = dispatch != backward;
  auto a2a = [&] {
    if (t_.ep == 1)
      return;
    if (!MoeDispatcherRegistry::instance().shared(t_.moe_dispatcher).deduplicates()) {
      // NCCL all-to-all of the permuted copies: one per (token, expert)
      exchange(ctx_.expert_groups(stage, E::ep), bytes, dir + "_all_to_all");
      return;
    }
    // DeepEP / HybridEP send a token once per destination: over RDMA once per NVLink domain
    // holding one of its experts (to the GPU at the sender's place there), then over NVLink once
    // per GPU holding one; the combine reduces in the reverse order (DeepEP internode kernels)
    const int domains = ctx_.expert_domains();
    const double nvlink = cost_.moe_dedup_bytes(t_.ep);
    if (domains == 1) {
      exchange(ctx_.expert_groups(stage, E::ep), nvlink, dir + "_all_to_all");
      return;
    }
    const double rdma = cost_.moe_dedup_bytes(domains);
    if (to_experts)
      exchange(ctx_.expert_hop_groups(stage, true), rdma, dir + "_rdma_all_to_all");
    exchange(ctx_.expert_hop_groups(stage, false), nvlink, dir + "_nvlink_all_to_all");
    if (!to_experts)
      exchange(ctx_.expert_hop_groups(stage, true), rdma, dir + "_rdma_all_to_all");
  };
  auto etp = [&](CollOp op) {
    if (t_.etp > 1)
      deps = single(ctx_.collective(stage, ctx_.expert_groups(stage, E::etp), op, bytes * t_.etp, Stream::ep,
                                    {Category::ep_comm, dir + (op == CollOp::all_gather ? "_etp_all_gather"
                                                                                       : "_etp_reduce_scatter"),
                                     label.layer, label.micro_batch},
                                    deps));
  };
  // Megatron's allgather dispatcher: all of the etp x ep group's tokens to every rank of it, then
  // the outputs reduce-scattered back, as two nested steps (over ep, then over etp): the same bytes
  // reach each rank as one gather over the whole group
  auto gather = [&] {
    const double local = cost_.moe_gather_bytes() / (t_.ep * t_.etp); // one rank's tokens
    auto step = [&](E d, int size, double out) {
      const CollOp op = to_experts ? CollOp::all_gather : CollOp::reduce_scatter;
      if (size > 1)
        deps = single(ctx_.collective(
            stage, ctx_.expert_groups(stage, d), op, out, Stream::ep,
            {Category::ep_comm,
             dir + (d == E::ep ? "_ep" : "_etp") + (op == CollOp::all_gather ? "_all_gather" : "_reduce_scatter"),
             label.layer, label.micro_batch},
            deps));
    };
    if (to_experts) {
      step(E::ep, t_.ep, local * t_.ep);
      step(E::etp, t_.etp, local * t_.ep * t_.etp);
    } else {
      step(E::etp, t_.etp, local * t_.ep * t_.etp);
      step(E::ep, t_.ep, local * t_.ep);
    }
  };
  // a backward pass enters the combine's gradient first (the reverse of forward's dispatch)
  if (MoeDispatcherRegistry::instance().shared(t_.moe_dispatcher).gathers()) {
    gather();
  } else if (to_experts) {
    a2a();
    etp(CollOp::all_gather);
  } else {
    etp(CollOp::reduce_scatter);
    a2a();
  }
  if (!t_.moe_a2a_overlap || !a2a_partner_ || (t_.ep == 1 && t_.etp == 1))
    return deps;
  // hidden behind the partner micro-batch's compute: the pass continues, its end waits
  PerPos& pend = pending_[static_cast<std::size_t>(stage)];
  pend.resize(deps.size());
  for (std::size_t i = 0; i < deps.size(); ++i)
    pend[i].insert(pend[i].end(), deps[i].begin(), deps[i].end());
  return after;
}

PerPos LayerEmitter::moe_forward(int stage, int layer, int mb, const PerPos& deps, Category cat)
{
  const BlockCost& b = moe_;
  const Workload::Label label{cat, cat == Category::recompute ? "moe_recompute" : "moe_forward", layer, mb};
  std::vector<TaskId> pre;
  {
    Rates rates(ctx_, 0, pass_flops(b, Pass::forward, {"moe_router", "moe_preprocess"}),
                b.before_experts_forward);
    pre = ctx_.compute(stage, b.before_experts_forward, label, deps, Stream::compute,
                       cost_.host_issue(b, Pass::forward, {"moe_router", "moe_preprocess"}));
  }
  if (cost_.moe_host_sync())
    for (TaskId id : pre)
      w_.set_host_sync(id); // the token counts copied to the host before the dispatch
  PerPos in = ep_exchange(stage, true, label, single(pre));
  if (cost_.moe_host_sync())
    append(in, pre); // the host issues the experts once it has the counts, while the dispatch runs
  std::vector<TaskId> experts;
  {
    // an uneven load: each rank's share of the FLOPs as of the time
    Rates rates(ctx_, 0, pass_flops(b, Pass::forward, {"moe_experts"}), b.experts_forward);
    experts = ctx_.compute(stage, expert_seconds(stage, b.experts_forward, layer, mb), label, in, Stream::compute,
                           cost_.host_issue(b, Pass::forward, {"moe_experts"}));
  }
  PerPos out = ep_exchange(stage, false, label, single(experts));
  const double post = b.forward - b.before_experts_forward - b.experts_forward;
  Rates rates(ctx_, 0, pass_flops(b, Pass::forward, {"moe_combine"}), post);
  return single(ctx_.compute(stage, post, label, out, Stream::compute,
                             cost_.host_issue(b, Pass::forward, {"moe_combine"})));
}

PerPos LayerEmitter::moe_backward(int stage, int layer, int mb, const PerPos& deps)
{
  const BlockCost& b = moe_;
  const Workload::Label label{Category::backward, "moe_backward", layer, mb};
  const double post = b.backward - b.before_experts_backward - b.experts_backward;
  std::vector<TaskId> unpermute, experts;
  {
    Rates rates(ctx_, 0, pass_flops(b, Pass::backward, {"moe_combine"}), post);
    unpermute = ctx_.compute(stage, post, label, deps, Stream::compute,
                             cost_.host_issue(b, Pass::backward, {"moe_combine"}));
  }
  PerPos in = ep_exchange(stage, false, label, single(unpermute));
  {
    Rates rates(ctx_, 0, pass_flops(b, Pass::backward, {"moe_experts"}), b.experts_backward);
    experts = ctx_.compute(stage, expert_seconds(stage, b.experts_backward, layer, mb), label, in, Stream::compute,
                           cost_.host_issue(b, Pass::backward, {"moe_experts"}));
  }
  PerPos out = ep_exchange(stage, true, label, single(experts));
  Rates rates(ctx_, 0, pass_flops(b, Pass::backward, {"moe_router", "moe_preprocess"}),
              b.before_experts_backward);
  return single(ctx_.compute(stage, b.before_experts_backward, label, out, Stream::compute,
                             cost_.host_issue(b, Pass::backward, {"moe_router", "moe_preprocess"})));
}

} // namespace clustersim
