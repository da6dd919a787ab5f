#include "strategies/workload/Workload.hpp"

#include <algorithm>
#include <cassert>
#include <stdexcept>

namespace clustersim {

const char* to_string(Stream s)
{
  static const char* names[] = {"compute",     "tp", "cp",        "pp_send_fwd", "pp_recv_fwd", "pp_send_bwd",
                                "pp_recv_bwd", "dp", "dp_gather", "ep",          "embed"};
  return names[static_cast<std::size_t>(s)];
}

const char* to_string(Category c)
{
  static const char* names[] = {"forward", "backward", "recompute", "optimizer", "tp_comm",
                                "cp_comm", "pp_comm",  "dp_comm",   "ep_comm",   "other"};
  return names[static_cast<std::size_t>(c)];
}

bool is_communication(Category c)
{
  return c == Category::tp_comm || c == Category::cp_comm || c == Category::pp_comm || c == Category::dp_comm ||
         c == Category::ep_comm;
}

const std::vector<std::string>& coll_op_names()
{
  static const std::vector<std::string> names{"all_reduce", "reduce_scatter", "all_gather",
                                              "broadcast",  "reduce",         "all_to_all", "sendrecv"};
  return names;
}

const char* to_string(CollOp op)
{
  return coll_op_names()[static_cast<std::size_t>(op)].c_str();
}

Workload::Workload(std::uint32_t ranks) : ranks_(ranks), compute_stream_(ranks, kStreamCount)
{
  add_streams(static_cast<std::size_t>(ranks) * kStreamCount);
}

void Workload::add_streams(std::size_t streams)
{
  while (heads_.size() < streams) {
    heads_.push_back(kNoTask);
    tails_.push_back(kNoTask);
  }
  programs_.resize(streams);
}

const std::vector<TaskId>& Workload::program(std::uint32_t rank, Stream s) const
{
  const std::size_t i = rank * kStreamCount + static_cast<std::size_t>(s);
  auto& prog = programs_[i];
  if (prog.empty() && heads_[i] != kNoTask)
    for (TaskId id = heads_[i]; id != kNoTask; id = next_[id])
      prog.push_back(id);
  return prog;
}

void Workload::simulate_only(const std::vector<std::uint32_t>& ranks)
{
  simulated_.assign(ranks_, 0);
  for (auto r : ranks)
    simulated_[r] = 1;
}

std::uint32_t Workload::simulated_ranks() const
{
  if (simulated_.empty())
    return ranks_;
  std::uint32_t n = 0;
  for (auto s : simulated_)
    n += s;
  return n;
}

std::uint32_t Workload::add_group(std::vector<std::uint32_t> ranks)
{
  groups_.push_back(RankGroup{std::move(ranks)});
  return static_cast<std::uint32_t>(groups_.size() - 1);
}

std::uint16_t Workload::algo_index(const std::string& algo)
{
  auto it = std::find(algo_names_.begin(), algo_names_.end(), algo);
  if (it != algo_names_.end())
    return static_cast<std::uint16_t>(it - algo_names_.begin());
  algo_names_.push_back(algo);
  return static_cast<std::uint16_t>(algo_names_.size() - 1);
}

std::uint8_t Workload::name_index(const std::string& name)
{
  if (last_name_ < names_.size() && names_[last_name_] == name)
    return last_name_; // labels come in runs: one per rank of a stage
  auto it = std::find(names_.begin(), names_.end(), name);
  if (it != names_.end())
    return last_name_ = static_cast<std::uint8_t>(it - names_.begin());
  if (names_.size() >= 255)
    throw std::length_error("too many task names");
  names_.push_back(name);
  return last_name_ = static_cast<std::uint8_t>(names_.size() - 1);
}

void Workload::set_label(Task& t, const Label& label)
{
  if (label.micro_batch < -1 || label.micro_batch > kMaxTaskMicroBatch)
    throw std::length_error("a task labels at most " + std::to_string(kMaxTaskMicroBatch + 1) +
                            " micro-batches; this one is " + std::to_string(label.micro_batch));
  if (label.layer < -1 || label.layer > kMaxTaskLayer)
    throw std::length_error("a task labels at most " + std::to_string(kMaxTaskLayer + 1) + " layers; this one is " +
                            std::to_string(label.layer));
  t.category = label.category;
  t.layer = label.layer;
  t.micro_batch = label.micro_batch;
  t.name = name_index(label.name);
}

TaskId Workload::previous(TaskId id) const
{
  const Task& t = tasks_[id];
  const auto& prog = program(t.rank, t.stream);
  const auto it = std::lower_bound(prog.begin(), prog.end(), id);
  return it == prog.begin() ? kNoTask : *(it - 1);
}

TaskId Workload::push(Task t, const TaskIds& deps)
{
  assert(t.rank < ranks_);
  assert(simulated(t.rank));
  TaskId id = static_cast<TaskId>(tasks_.size());
  t.deps_begin = static_cast<std::uint32_t>(deps_.size());
  for (TaskId d : deps) {
    assert(d < id);
    assert(tasks_[d].rank == t.rank);
    deps_.push_back(d);
  }
  tasks_.push_back(t);
  const std::size_t s = t.rank * kStreamCount + static_cast<std::size_t>(t.stream);
  if (tails_[s] != kNoTask)
    next_[tails_[s]] = id;
  else
    heads_[s] = id;
  tails_[s] = id;
  if (!programs_[s].empty())
    programs_[s].push_back(id); // an array already made stays whole
  next_.push_back(kNoTask);
  if (t.kind == TaskKind::collective)
    ++collectives_[t.target].present;
  if (t.kind == TaskKind::compute) {
    auto& cs = compute_stream_[t.rank];
    one_compute_stream_ = one_compute_stream_ && (cs == kStreamCount || cs == static_cast<std::uint8_t>(t.stream));
    cs = static_cast<std::uint8_t>(t.stream);
  }
  return id;
}

TaskId Workload::add_compute(std::uint32_t rank, double seconds, const Label& label, const TaskIds& deps,
                             Stream stream, double host)
{
  Task t;
  t.kind = TaskKind::compute;
  t.amount = seconds;
  if (stream == Stream::compute && host > 0) {
    t.host = static_cast<float>(host);
    has_host_ = true;
  }
  t.rank = rank;
  t.stream = stream;
  set_label(t, label);
  return push(t, deps);
}

std::pair<TaskId, TaskId> Workload::add_p2p(std::uint32_t from, std::uint32_t to, double bytes, Stream send_stream,
                                            Stream recv_stream, const Label& label,
                                            const TaskIds& send_deps, const TaskIds& recv_deps)
{
  Task s;
  s.kind = TaskKind::send;
  s.amount = bytes;
  s.rank = from;
  s.stream = send_stream;
  set_label(s, label);
  TaskId send = push(s, send_deps);
  sends_.push_back(send);
  Task r = s;
  r.kind = TaskKind::recv;
  r.rank = to;
  r.stream = recv_stream;
  TaskId recv = push(r, recv_deps);
  tasks_[send].target = recv;
  tasks_[recv].target = send;
  return {send, recv};
}

std::vector<TaskId> Workload::add_collective(CollOp op, std::uint32_t group, double bytes, Stream stream,
                                             const Label& label, const std::vector<TaskIds>& deps,
                                             std::uint16_t algo)
{
  const auto& members = groups_[group].ranks;
  assert(deps.empty() || deps.size() == members.size());
  CollectiveCall c;
  c.op = op;
  c.group = group;
  c.bytes = bytes;
  c.algo = algo;
  c.category = label.category;
  c.stream = stream;
  collectives_.push_back(c);
  auto call = static_cast<std::uint32_t>(collectives_.size() - 1);
  std::vector<TaskId> out;
  out.reserve(members.size());
  static const TaskIds none;
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (!simulated(members[i])) {
      out.push_back(kNoTask);
      continue;
    }
    Task t;
    t.member = static_cast<std::uint32_t>(i);
    t.kind = TaskKind::collective;
    t.amount = bytes;
    t.target = call;
    t.rank = members[i];
    t.stream = stream;
    set_label(t, label);
    out.push_back(push(t, deps.empty() ? none : deps[i]));
  }
  return out;
}

TaskId Workload::append(const Workload& other, const std::vector<std::uint32_t>& gpu_of)
{
  if (!simulated_.empty() || !other.simulated_.empty())
    throw std::logic_error("Workload::append: a folded workload cannot be appended to or appended");
  if (gpu_of.size() != other.ranks_)
    throw std::logic_error("Workload::append: a rank map of " + std::to_string(gpu_of.size()) + " ranks for " +
                           std::to_string(other.ranks_));
  const std::uint32_t ranks = gpu_of.empty() ? 0 : *std::max_element(gpu_of.begin(), gpu_of.end()) + 1;
  if (ranks > ranks_) {
    ranks_ = ranks;
    add_streams(static_cast<std::size_t>(ranks_) * kStreamCount);
    compute_stream_.resize(ranks_, kStreamCount);
  }
  const auto group0 = static_cast<std::uint32_t>(groups_.size());
  for (const RankGroup& g : other.groups_) {
    std::vector<std::uint32_t> members = g.ranks;
    for (auto& r : members)
      r = gpu_of[r];
    groups_.push_back(RankGroup{std::move(members)});
  }
  std::vector<std::uint16_t> algos;
  for (const auto& a : other.algo_names_)
    algos.push_back(algo_index(a));
  std::vector<std::uint8_t> names;
  for (const auto& n : other.names_)
    names.push_back(name_index(n));
  const auto call0 = static_cast<std::uint32_t>(collectives_.size());
  for (CollectiveCall c : other.collectives_) {
    c.group += group0;
    c.algo = algos[c.algo];
    c.present = 0; // counted again as its tasks are pushed
    collectives_.push_back(c);
  }
  const auto first = static_cast<TaskId>(tasks_.size());
  TaskIds deps;
  for (TaskId id = 0; id < other.tasks_.size(); ++id) {
    Task t = other.tasks_[id];
    t.rank = gpu_of[t.rank];
    t.name = names[t.name];
    if (t.kind == TaskKind::collective)
      t.target += call0;
    else if (t.kind != TaskKind::compute)
      t.target += first;
    deps.clear();
    for (const TaskId* d = other.deps_begin(id); d != other.deps_end(id); ++d)
      deps.push_back(*d + first);
    const TaskId at = push(t, deps);
    if (other.flops(id) > 0)
      set_flops(at, other.flops(id));
  }
  for (TaskId s : other.sends_)
    sends_.push_back(s + first);
  has_host_ = has_host_ || other.has_host_;
  return first;
}

std::size_t Workload::memory_bytes() const
{
  std::size_t b = tasks_.capacity() * sizeof(Task) +
                  (deps_.capacity() + next_.capacity() + sends_.capacity() + heads_.capacity() + tails_.capacity()) *
                      sizeof(TaskId) +
                  compute_stream_.size();
  for (const auto& p : programs_)
    b += p.capacity() * sizeof(TaskId) + sizeof(p);
  for (const auto& g : groups_)
    b += g.ranks.capacity() * sizeof(std::uint32_t);
  b += collectives_.capacity() * sizeof(CollectiveCall);
  b += flops_.capacity() * sizeof(double);
  return b;
}

void Workload::set_flops(TaskId id, double flops)
{
  if (id >= tasks_.size() || tasks_[id].kind != TaskKind::compute)
    throw std::logic_error("Workload::set_flops: task " + std::to_string(id) + " is not a compute task");
  while (flops_.size() <= id)
    flops_.push_back(0.0);
  flops_[id] = flops;
}

} // namespace clustersim
