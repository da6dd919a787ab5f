#include "strategies/StepBuilder.hpp"

#include "strategies/LayerEmitter.hpp"

#include <algorithm>
#include <cassert>
#include <stdexcept>
#include <unordered_set>

namespace clustersim {


PerPos DataParallelStrategy::before_forward(StepContext&, int, int, int)
{
  return {};
}

PerPos DataParallelStrategy::before_backward(StepContext&, int, int, int)
{
  return {};
}

const DataParallelStrategy& data_parallel_strategy(const TrainingSpec& t)
{
  return DataParallelRegistry::instance().shared(t.data_parallel_name());
}

// ------------------------------------------------------------------ StepContext

StepContext::StepContext(Workload& w, const CostModel& cost, const Layout& layout, int fold_unit, int domain_gpus)
    : w_(w), cost_(cost), layout_(layout), domain_gpus_(domain_gpus)
{
  const int p = layout.size(Dim::pp);
  stage_ranks_.resize(static_cast<std::size_t>(p));
  position_.assign(static_cast<std::size_t>(layout.ranks()), -1);
  std::vector<std::uint32_t> simulated;
  // Folded: the replicas (tp, cp, dp coordinates) that stage 0's representative shares its
  // NVLink domain with, in every stage; the rest are mirrors.
  const int tp_n = layout.size(Dim::tp), cp_n = layout.size(Dim::cp);
  std::vector<std::uint8_t> kept;
  if (fold_unit > 0) {
    kept.assign(static_cast<std::size_t>(tp_n * cp_n * layout.size(Dim::dp)), 0);
    const int home = layout.rank(0, 0, 0, 0) / fold_unit;
    for (int r = 0; r < layout.ranks(); ++r)
      if (layout.coord(r, Dim::pp) == 0 && r / fold_unit == home)
        kept[static_cast<std::size_t>(layout.coord(r, Dim::tp) +
                                      tp_n * (layout.coord(r, Dim::cp) + cp_n * layout.coord(r, Dim::dp)))] = 1;
  }
  for (int r = 0; r < layout.ranks(); ++r) {
    if (fold_unit > 0 && !kept[static_cast<std::size_t>(layout.coord(r, Dim::tp) +
                                                        tp_n * (layout.coord(r, Dim::cp) +
                                                                cp_n * layout.coord(r, Dim::dp)))])
      continue; // a mirror
    auto& v = stage_ranks_[static_cast<std::size_t>(layout.coord(r, Dim::pp))];
    position_[static_cast<std::size_t>(r)] = static_cast<int>(v.size());
    v.push_back(static_cast<std::uint32_t>(r));
    simulated.push_back(static_cast<std::uint32_t>(r));
  }
  if (fold_unit > 0)
    w_.simulate_only(simulated);
  units_.resize(static_cast<std::size_t>(p));
  algo_ = w_.algo_index(cost.training().collective_algo);
}

double StepContext::grad_comm_bytes() const
{
  // the framework's (Megatron reduces its fp32 main gradients in fp32 for bf16, fp16 runs
  // reduce fp16; FSDP2's reduce_dtype; DeepSpeed's fp16 reduction)
  return training().traits().grad_reduce(training().precision);
}

double StepContext::bucket_bytes(double bytes_per_param) const
{
  if (training().bucket_bytes > 0)
    return training().bucket_bytes;
  const FrameworkTraits& f = training().traits();
  const double dp = static_cast<double>(training().dp) * training().cp;
  return std::max(f.bucket_min_params, f.bucket_per_dp * dp) * bytes_per_param;
}

double StepContext::param_comm_bytes() const
{
  // FP8 primary weights (the recipe's) are gathered in FP8
  const Fp8Recipe* r = training().fp8();
  return r ? r->param_gather_bytes : cost_.element_bytes();
}

const std::vector<std::uint32_t>& StepContext::groups(int stage, Dim a, Dim b)
{
  return cached_groups(stage, static_cast<int>(a), static_cast<int>(b), [&](std::uint32_t r) {
    return b == Dim::pp ? layout_.group(static_cast<int>(r), {a}) : layout_.group(static_cast<int>(r), {a, b});
  });
}

const std::vector<std::uint32_t>& StepContext::stage_group(int stage)
{
  return cached_groups(stage, 30, 0, [&](std::uint32_t r) {
    return layout_.group(static_cast<int>(r), {Dim::tp, Dim::cp, Dim::dp});
  });
}

const std::vector<std::uint32_t>& StepContext::expert_groups(int stage, Layout::ExpertDim d)
{
  const TrainingSpec& t = training();
  return cached_groups(stage, 10 + static_cast<int>(d), 0, [&](std::uint32_t r) {
    return layout_.expert_group(static_cast<int>(r), t.etp, t.ep, d);
  });
}

const std::vector<std::uint32_t>& StepContext::replica_groups(int stage, ParamPool p)
{
  return p == ParamPool::expert ? expert_groups(stage, Layout::ExpertDim::edp) : groups(stage, Dim::cp, Dim::dp);
}

int StepContext::replicas(ParamPool p) const
{
  return p == ParamPool::expert ? cost_.expert_data_parallel() : training().dp * training().cp;
}

int StepContext::shards(ParamPool p) const
{
  return replicas(p) / training().dp_replicate();
}

const std::vector<std::uint32_t>& StepContext::shard_groups(int stage, ParamPool p)
{
  if (training().dp_replicate() == 1)
    return replica_groups(stage, p);
  return split_replica_groups(stage, p, true);
}

const std::vector<std::uint32_t>& StepContext::replicate_groups(int stage, ParamPool p)
{
  static const std::vector<std::uint32_t> none;
  if (training().dp_replicate() == 1)
    return none;
  return split_replica_groups(stage, p, false);
}

const std::vector<std::uint32_t>& StepContext::split_replica_groups(int stage, ParamPool p, bool shard)
{
  const std::size_t n = static_cast<std::size_t>(shards(p));
  return cached_groups(stage, 40 + 2 * static_cast<int>(p) + (shard ? 0 : 1), 0, [&](std::uint32_t r) {
    const std::vector<std::uint32_t> all =
        p == ParamPool::expert
            ? layout_.expert_group(static_cast<int>(r), training().etp, training().ep, Layout::ExpertDim::edp)
            : layout_.group(static_cast<int>(r), {Dim::cp, Dim::dp});
    const std::size_t at = static_cast<std::size_t>(std::find(all.begin(), all.end(), r) - all.begin());
    std::vector<std::uint32_t> members;
    for (std::size_t i = 0; i < all.size(); ++i)
      if (shard ? i / n == at / n : i % n == at % n)
        members.push_back(all[i]);
    return members;
  });
}

double StepContext::sharded_params(int stage) const
{
  double sum = 0;
  for (const auto& u : units(stage))
    for (ParamPool p : kParamPools)
      sum += pool_trainable(u, p) / shards(p);
  return sum;
}

const std::vector<std::uint32_t>& StepContext::expert_hop_groups(int stage, bool rail)
{
  const TrainingSpec& t = training();
  return cached_groups(stage, 20 + static_cast<int>(rail), 0, [&](std::uint32_t r) {
    std::vector<std::uint32_t> group = layout_.expert_group(static_cast<int>(r), t.etp, t.ep, Layout::ExpertDim::ep);
    std::sort(group.begin(), group.end());
    auto domain = [this](std::uint32_t x) { return domain_of(x); };
    // index of x among the group's members in its domain (the group is sorted)
    auto local = [&](std::uint32_t x) {
      return std::count_if(group.begin(), group.end(), [&](std::uint32_t y) { return y < x && domain(y) == domain(x); });
    };
    std::vector<std::uint32_t> members;
    for (std::uint32_t x : group)
      if (rail ? local(x) == local(r) : domain(x) == domain(r))
        members.push_back(x);
    return members;
  });
}

int StepContext::domain_of(std::uint32_t rank) const
{
  return domain_gpus_ > 0 ? static_cast<int>(rank) / domain_gpus_ : 0;
}

int StepContext::expert_domains()
{
  if (expert_domains_ > 0)
    return expert_domains_;
  const TrainingSpec& t = training();
  std::vector<std::uint32_t> group = layout_.expert_group(static_cast<int>(stage_ranks(0).front()), t.etp, t.ep,
                                                          Layout::ExpertDim::ep);
  std::unordered_set<int> domains;
  for (std::uint32_t x : group)
    domains.insert(domain_of(x));
  expert_domains_ = static_cast<int>(domains.size());
  return expert_domains_;
}

template <class F>
const std::vector<std::uint32_t>& StepContext::cached_groups(int stage, int a, int b, F members_of)
{
  auto key = std::make_tuple(stage, a, b);
  auto it = group_cache_.find(key);
  if (it != group_cache_.end())
    return it->second;
  std::vector<std::uint32_t> ids;
  std::unordered_set<std::uint32_t> leaders; // smallest member of each group made so far
  for (std::uint32_t r : stage_ranks(stage)) {
    std::vector<std::uint32_t> members = members_of(r);
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
  std::vector<TaskId> out(stage_ranks(stage).size(), kNoTask);
  for (std::uint32_t g : groups) {
    const auto& members = w_.groups()[g].ranks;
    std::vector<TaskIds> d;
    if (!deps.empty()) {
      d.reserve(members.size());
      for (auto m : members)
        d.push_back(position(m) >= 0 ? deps[static_cast<std::size_t>(position(m))] : TaskIds{});
    }
    auto tasks = w_.add_collective(op, g, bytes, stream, label, d, algo_);
    for (std::size_t i = 0; i < members.size(); ++i)
      if (position(members[i]) >= 0)
        out[static_cast<std::size_t>(position(members[i]))] = tasks[i];
  }
  return out;
}

std::vector<TaskId> StepContext::compute(int stage, double seconds, const Workload::Label& label, const PerPos& deps,
                                         Stream stream, double host)
{
  const auto& ranks = stage_ranks(stage);
  std::vector<TaskId> out(ranks.size());
  static const TaskIds none;
  const double issue = host >= 0 ? host : seconds * host_rate_;
  for (std::size_t i = 0; i < ranks.size(); ++i)
    out[i] = w_.add_compute(ranks[i], seconds, label, deps.empty() ? none : deps[i], stream, issue);
  rate_flops(out);
  return out;
}

std::vector<TaskId> StepContext::compute(int stage, const std::vector<double>& seconds, const Workload::Label& label,
                                         const PerPos& deps, Stream stream, double host)
{
  const auto& ranks = stage_ranks(stage);
  std::vector<TaskId> out(ranks.size());
  static const TaskIds none;
  for (std::size_t i = 0; i < ranks.size(); ++i)
    out[i] = w_.add_compute(ranks[i], seconds[i], label, deps.empty() ? none : deps[i], stream,
                            host >= 0 ? host : seconds[i] * host_rate_);
  rate_flops(out);
  return out;
}

void StepContext::rate_flops(const std::vector<TaskId>& tasks)
{
  if (!w_.keeps_flops() || flops_rate_ <= 0)
    return;
  for (TaskId id : tasks)
    if (id != kNoTask)
      w_.set_flops(id, w_.task(id).amount * flops_rate_);
}

// ------------------------------------------------------------------ the builder

namespace {

/// Orders every stage's forward and backward passes by its pipeline schedule, places the units
/// (layers, embedding, output) on virtual stages, connects stages with point-to-point
/// transfers, and hands each unit to the LayerEmitter.
class PipelineDriver {
public:
  PipelineDriver(const CostModel& cost, Workload& w, const Layout& layout, int fold_unit, int domain_gpus)
      : cost_(cost), t_(cost.training()), ctx_(w, cost, layout, fold_unit, domain_gpus), w_(w), layout_(layout)
  {
  }

  StepPlan run();

private:
  struct Slot {
    int vstage;
    int first_unit; ///< index into ctx.units(stage)
    int count;
    int fp8_linears = 0; ///< linear layers of its units that run in FP8
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
  /// Whether op `i` of a stage's order has a pass of the other direction and another
  /// micro-batch beside it, under whose compute its EP exchanges can run (moe_a2a_overlap).
  static bool has_partner(const std::vector<PipelineOp>& list, std::size_t i);
  PerPos receive(int stage, int vstage, int mb, bool forward);
  void tied_embedding_reduction(std::vector<PerPos>& extra);
  PerPos join_pending(int stage, PerPos deps, const char* name);
  /// FP8 delayed scaling: the chunk's amaxes all-reduced as its pass ends (after `deps`).
  PerPos amax_reduction(int stage, const Slot& slot, const PipelineOp& op, PerPos deps);

  const CostModel& cost_;
  const TrainingSpec& t_;
  StepContext ctx_;
  Workload& w_;
  const Layout& layout_;
  std::unique_ptr<DataParallelStrategy> dp_;
  std::unique_ptr<LayerEmitter> layers_;
  int m_ = 0;
  std::vector<std::vector<Slot>> slots_;     ///< [stage][chunk]
  std::vector<std::vector<TaskId>> fwd_out_; ///< [vstage*m + mb] per position
  std::vector<std::vector<TaskId>> bwd_out_;
  std::vector<int> last_bwd_mb_;                     ///< per (stage, chunk): micro-batch of the last backward
  std::vector<std::vector<TaskId>> embed_grad_done_; ///< per stage: tasks after which tied-embedding grads are final
  std::vector<int> layers_per_vstage_;
};

void PipelineDriver::plan_units()
{
  const ModelSpec& model = cost_.model();
  const std::vector<VirtualStage>& stages = cost_.pipeline();
  const double t = t_.tp;
  slots_.assign(static_cast<std::size_t>(t_.pp), std::vector<Slot>(static_cast<std::size_t>(t_.vpp)));
  layers_per_vstage_.clear();
  for (const auto& v : stages)
    layers_per_vstage_.push_back(v.layers);
  for (int s = 0; s < t_.pp; ++s) {
    auto& units = ctx_.units(s);
    for (int c = 0; c < t_.vpp; ++c) {
      const int g = c * t_.pp + s;
      const VirtualStage& v = stages[static_cast<std::size_t>(g)];
      Slot slot{g, static_cast<int>(units.size()), 0};
      if (v.embedding)
        units.push_back({"embedding", -1, c, model.embedding_params() / t});
      for (int l = 0; l < v.layers; ++l) {
        const RankParams r = cost_.layer_rank_params(v.first_layer + l);
        units.push_back({"layer", v.first_layer + l, c, r.total(), r.expert});
      }
      for (int k = 0; k < v.mtp; ++k) {
        const RankParams r = cost_.layer_rank_params(model.layers + k);
        units.push_back({"mtp", model.layers + k, c, r.total(), r.expert});
      }
      if (v.loss) {
        double out =
            model.final_norm_params() +
            ((!model.tied_embeddings || t_.pp > 1) ? static_cast<double>(model.vocab) * model.hidden / t : 0.0);
        units.push_back({"output", -1, c, out});
      }
      // what trains: every parameter, or under LoRA a layer's adapters (its routed experts and
      // the embedding and output layer frozen without one)
      const bool frozen = t_.frozen_base();
      for (std::size_t k = static_cast<std::size_t>(slot.first_unit); k < units.size(); ++k) {
        ParamUnit& u = units[k];
        u.trainable = !frozen ? u.params : u.layer >= 0 ? cost_.layer_adapters(u.layer).params : 0.0;
        u.trainable_expert = frozen ? 0.0 : u.expert;
      }
      slot.count = static_cast<int>(units.size()) - slot.first_unit;
      for (int k = slot.first_unit; k < static_cast<int>(units.size()); ++k)
        slot.fp8_linears += layers_->fp8_linears(units[static_cast<std::size_t>(k)]);
      slots_[static_cast<std::size_t>(s)][static_cast<std::size_t>(c)] = slot;
    }
  }
}

bool PipelineDriver::ready(int stage, const PipelineOp& op) const
{
  int g = op.chunk * t_.pp + stage;
  if (op.forward)
    return g == 0 || !fwd_out_[out_index(g - 1, op.micro_batch)].empty();
  return g == vstages() - 1 || !bwd_out_[out_index(g + 1, op.micro_batch)].empty();
}

PerPos PipelineDriver::receive(int stage, int vstage, int mb, bool forward)
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
    if (cost_.p2p_host_sync())
      w_.set_host_sync(recv); // torch.cuda.synchronize() after the exchange
    deps[i].push_back(recv);
  }
  return deps;
}

bool PipelineDriver::has_partner(const std::vector<PipelineOp>& list, std::size_t i)
{
  // Megatron's combined 1F1B (overlap_moe_expert_parallel_comm) runs a forward and a backward
  // of different micro-batches side by side, each one's all-to-all under the other's compute:
  // the 1F1B steady state (without pipelining: F(i+1) beside B(i)). Warmup forwards and
  // cooldown backwards have no such neighbour in the stage's order.
  auto pairs = [&](std::size_t j) {
    return list[j].forward != list[i].forward && list[j].micro_batch != list[i].micro_batch;
  };
  return (i > 0 && pairs(i - 1)) || (i + 1 < list.size() && pairs(i + 1));
}

void PipelineDriver::emit(int stage, const PipelineOp& op)
{
  const Slot& slot = slots_[static_cast<std::size_t>(stage)][static_cast<std::size_t>(op.chunk)];
  const auto& units = ctx_.units(stage);
  PerPos deps = receive(stage, slot.vstage, op.micro_batch, op.forward);
  if (op.forward) {
    for (int k = 0; k < slot.count; ++k) {
      int idx = slot.first_unit + k;
      deps = layers_->forward_unit(stage, units[static_cast<std::size_t>(idx)], idx, op.micro_batch, deps, false);
    }
    deps = amax_reduction(stage, slot, op, join_pending(stage, std::move(deps), "moe_a2a_wait"));
    std::vector<TaskId> out(deps.size(), kNoTask);
    for (std::size_t i = 0; i < deps.size(); ++i)
      out[i] = deps[i].empty() ? kNoTask : *std::max_element(deps[i].begin(), deps[i].end());
    fwd_out_[out_index(slot.vstage, op.micro_batch)] = out;
  } else {
    bool last = op.micro_batch == last_bwd_mb_[static_cast<std::size_t>(stage * t_.vpp + op.chunk)];
    for (int k = slot.count - 1; k >= 0; --k) {
      int idx = slot.first_unit + k;
      const ParamUnit& u = units[static_cast<std::size_t>(idx)];
      LayerEmitter::Backward b = layers_->backward_unit(stage, u, idx, op.micro_batch, deps, last);
      deps = std::move(b.after);
      if ((u.name == "embedding" || u.name == "output") && last)
        embed_grad_done_[static_cast<std::size_t>(stage)] = std::move(b.weights_done);
    }
    deps = amax_reduction(stage, slot, op, join_pending(stage, std::move(deps), "moe_a2a_wait"));
    std::vector<TaskId> out(deps.size(), kNoTask);
    for (std::size_t i = 0; i < deps.size(); ++i)
      out[i] = deps[i].empty() ? kNoTask : *std::max_element(deps[i].begin(), deps[i].end());
    bwd_out_[out_index(slot.vstage, op.micro_batch)] = out;
  }
}

PerPos PipelineDriver::join_pending(int stage, PerPos deps, const char* name)
{
  // the pass's overlapped EP exchanges must be done before its output leaves the stage: a
  // zero-length task after all of them and the pass's last task
  PerPos pend = layers_->take_pending(stage);
  if (pend.empty())
    return deps;
  for (std::size_t i = 0; i < deps.size() && i < pend.size(); ++i)
    deps[i].insert(deps[i].end(), pend[i].begin(), pend[i].end());
  Workload::Label label{Category::other, name, -1, -1};
  return single(ctx_.compute(stage, 0.0, label, deps));
}

PerPos PipelineDriver::amax_reduction(int stage, const Slot& slot, const PipelineOp& op, PerPos deps)
{
  // TE DelayedScaling: one fp8_autocast region per model chunk; its amaxes are all-reduced over
  // the stage's replicas when its forward ends and when its backward ends, and the compute
  // stream waits for the reduction (the recipe's amax_forward / amax_backward)
  const Fp8Recipe* r = t_.fp8();
  const double per_linear = r ? (op.forward ? r->amax_forward : r->amax_backward) : 0.0;
  if (per_linear <= 0)
    return deps;
  const auto& groups = ctx_.stage_group(stage);
  if (groups.empty() || slot.fp8_linears == 0)
    return deps;
  Workload::Label label{Category::dp_comm, "fp8_amax_all_reduce", -1, op.micro_batch};
  return single(ctx_.collective(stage, groups, CollOp::all_reduce, 4.0 * per_linear * slot.fp8_linears,
                                Stream::compute, label, deps));
}

void PipelineDriver::tied_embedding_reduction(std::vector<PerPos>& extra)
{
  // Tied embeddings across stages: the first and last stage sum their copies' gradients (a
  // frozen embedding has none).
  const int p = t_.pp;
  if (!cost_.model().tied_embeddings || p == 1 || t_.frozen_base())
    return;
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

StepPlan PipelineDriver::run()
{
  auto schedule = ScheduleRegistry::instance().make(t_.schedule);
  dp_ = DataParallelRegistry::instance().make(t_.data_parallel_name());
  layers_ = std::make_unique<LayerEmitter>(ctx_, *dp_);
  m_ = t_.micro_batches();
  plan_units();
  const int p = t_.pp;
  fwd_out_.assign(static_cast<std::size_t>(vstages() * m_), {});
  bwd_out_.assign(static_cast<std::size_t>(vstages() * m_), {});
  embed_grad_done_.assign(static_cast<std::size_t>(p), {});
  std::vector<std::vector<PipelineOp>> ops(static_cast<std::size_t>(p));
  last_bwd_mb_.assign(static_cast<std::size_t>(p * t_.vpp), -1);
  for (int s = 0; s < p; ++s) {
    ops[static_cast<std::size_t>(s)] = schedule->order(s, t_.pipeline_shape());
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
        layers_->set_a2a_partner(has_partner(list, c));
        emit(s, list[c]);
        ++c;
        progress = true;
      }
    }
  }
  for (int s = 0; s < p; ++s)
    if (cursor[static_cast<std::size_t>(s)] != ops[static_cast<std::size_t>(s)].size())
      throw std::logic_error("pipeline schedule deadlocks at stage " + std::to_string(s));

  std::vector<PerPos> extra(static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s)
    extra[static_cast<std::size_t>(s)].resize(ctx_.stage_ranks(s).size());
  tied_embedding_reduction(extra);
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

StepPlan build_step(const CostModel& cost, int fold_unit, int domain_gpus, bool flops)
{
  const TrainingSpec& t = cost.training();
  if ((static_cast<long long>(t.tp) * t.cp * t.dp) % (static_cast<long long>(t.ep) * t.etp) != 0)
    throw std::logic_error("ep x etp = " + std::to_string(t.ep * t.etp) + " does not divide a stage's tp x cp x dp = " +
                           std::to_string(static_cast<long long>(t.tp) * t.cp * t.dp));
  Layout layout(t);
  StepPlan plan;
  plan.folded = fold_unit > 0;
  plan.workload = Workload(static_cast<std::uint32_t>(layout.ranks()));
  if (flops)
    plan.workload.keep_flops();
  PipelineDriver b(cost, plan.workload, layout, fold_unit, domain_gpus);
  StepPlan meta = b.run();
  plan.layers_per_stage = std::move(meta.layers_per_stage);
  plan.params_per_stage = std::move(meta.params_per_stage);
  return plan;
}

} // namespace clustersim
