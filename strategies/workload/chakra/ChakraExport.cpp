// A Workload as Chakra execution traces, one per rank (see ChakraTrace.hpp for the mapping).

#include "strategies/workload/chakra/ChakraTrace.hpp"

#include <cmath>
#include <stdexcept>

namespace clustersim::chakra {

namespace {

/// Tags of the transfers a sendrecv call becomes, apart from point-to-point tags (send ids < 2^30).
constexpr std::int64_t kSendrecvTag = std::int64_t{1} << 30;

CommType comm_type(CollOp op)
{
  switch (op) {
  case CollOp::all_reduce:
    return CommType::all_reduce;
  case CollOp::reduce_scatter:
    return CommType::reduce_scatter;
  case CollOp::all_gather:
    return CommType::all_gather;
  case CollOp::broadcast:
    return CommType::broadcast;
  case CollOp::reduce:
    return CommType::reduce;
  case CollOp::all_to_all:
  case CollOp::sendrecv:
    break;
  }
  return CommType::all_to_all;
}

std::uint64_t micros(double seconds)
{
  return static_cast<std::uint64_t>(std::llround(std::max(0.0, seconds) * 1e6));
}

/// Writes one rank's nodes; `node_of` maps every task of the rank to its (first) node.
class RankWriter {
public:
  RankWriter(const Workload& w, std::uint32_t rank, std::vector<std::uint32_t>& node_of, Groups& groups)
      : w_(w), rank_(rank), node_of_(node_of), groups_(groups)
  {
  }

  void add(TaskId id, std::string& out)
  {
    const Task& t = w_.task(id);
    Node n;
    n.id = nodes_;
    n.name = w_.names()[t.name];
    for (const TaskId* d = w_.deps_begin(id); d != w_.deps_end(id); ++d)
      refer(*d, n.data_deps);
    auto& last = last_[static_cast<std::size_t>(t.stream)];
    if (last != kNoTask)
      refer(last, n.ctrl_deps);
    last = id;
    labels(t, n);
    node_of_[id] = static_cast<std::uint32_t>(n.id);
    if (t.kind == TaskKind::compute)
      compute(id, t, n);
    else if (t.kind == TaskKind::collective && w_.collectives()[t.target].op == CollOp::sendrecv) {
      sendrecv(t, n, out);
      return;
    } else if (t.kind == TaskKind::collective)
      collective(t, n);
    else
      transfer(id, t, n);
    append_node(out, n);
    ++nodes_;
  }

  std::size_t nodes() const { return nodes_; }

private:
  /// A dependency on task `d`: its node, and both nodes of a sendrecv member.
  void refer(TaskId d, std::vector<std::uint64_t>& deps) const
  {
    deps.push_back(node_of_[d]);
    const Task& t = w_.task(d);
    if (t.kind == TaskKind::collective && w_.collectives()[t.target].op == CollOp::sendrecv)
      deps.push_back(node_of_[d] + 1);
  }

  void labels(const Task& t, Node& n) const
  {
    n.attrs.push_back(Attr::text("cs_stream", to_string(t.stream)));
    n.attrs.push_back(Attr::text("cs_category", to_string(t.category)));
    if (t.layer >= 0)
      n.attrs.push_back(Attr::int64("cs_layer", t.layer));
    if (t.micro_batch >= 0)
      n.attrs.push_back(Attr::int64("cs_micro_batch", t.micro_batch));
    if (t.host_sync)
      n.attrs.push_back(Attr::boolean("cs_host_sync", true));
  }

  void compute(TaskId id, const Task& t, Node& n) const
  {
    n.type = NodeType::comp;
    n.duration_micros = micros(t.amount);
    n.attrs.push_back(Attr::boolean("is_cpu_op", false));
    // the FLOPs the GPU executes, as Chakra's feeder reads them (an int64 attribute:
    // mlcommons/chakra@21585d8 src/feeder/et_feeder_node.cpp:31-32)
    if (const double flops = w_.flops(id); flops >= 0.5)
      n.attrs.push_back(Attr::int64("num_ops", static_cast<std::int64_t>(std::llround(flops))));
    n.attrs.push_back(Attr::real("cs_seconds", t.amount));
    if (t.host_seconds() > 0)
      n.attrs.push_back(Attr::real("cs_host_s", t.host_seconds()));
  }

  std::string group(std::uint32_t g)
  {
    std::string name = std::to_string(g + 1); // ASTRA-sim reads "0" and "" as every rank
    if (!groups_.count(name))
      groups_[name] = w_.groups()[g].ranks;
    return name;
  }

  void call_attrs(const Task& t, Node& n)
  {
    const CollectiveCall& c = w_.collectives()[t.target];
    n.attrs.push_back(Attr::int64("comm_size", static_cast<std::int64_t>(std::llround(c.bytes))));
    n.attrs.push_back(Attr::text("pg_name", group(c.group)));
    n.attrs.push_back(Attr::int64("cs_call", t.target));
    n.attrs.push_back(Attr::real("cs_bytes", c.bytes));
    if (c.algo != 0)
      n.attrs.push_back(Attr::text("cs_algo", w_.algo_names()[c.algo]));
  }

  void collective(const Task& t, Node& n)
  {
    n.type = NodeType::coll;
    n.attrs.push_back(Attr::int64("comm_type", static_cast<std::int64_t>(comm_type(w_.collectives()[t.target].op))));
    call_attrs(t, n);
  }

  /// Chakra has no sendrecv: a send to the next member and a receive from the previous one.
  void sendrecv(const Task& t, Node& send, std::string& out)
  {
    const auto& members = w_.groups()[w_.collectives()[t.target].group].ranks;
    const std::size_t k = members.size();
    const std::uint32_t next = members[(t.member + 1) % k];
    const std::uint32_t prev = members[(t.member + k - 1) % k];
    const std::int64_t tag = kSendrecvTag + t.target;
    call_attrs(t, send);
    send.attrs.push_back(Attr::text("cs_op", "sendrecv"));
    Node recv = send;
    send.type = NodeType::send;
    endpoints(send, rank_, next, tag);
    recv.type = NodeType::recv;
    recv.id = send.id + 1;
    endpoints(recv, prev, rank_, tag);
    append_node(out, send);
    append_node(out, recv);
    nodes_ += 2;
  }

  static void endpoints(Node& n, std::uint32_t src, std::uint32_t dst, std::int64_t tag)
  {
    n.attrs.push_back(Attr::int32("comm_src", static_cast<std::int32_t>(src)));
    n.attrs.push_back(Attr::int32("comm_dst", static_cast<std::int32_t>(dst)));
    n.attrs.push_back(Attr::int32("comm_tag", static_cast<std::int32_t>(tag)));
  }

  void transfer(TaskId id, const Task& t, Node& n) const
  {
    const bool send = t.kind == TaskKind::send;
    const TaskId send_id = send ? id : t.target;
    if (send_id >= static_cast<TaskId>(kSendrecvTag))
      throw std::length_error("a step of more than 2^30 tasks cannot be tagged in a Chakra trace");
    n.type = send ? NodeType::send : NodeType::recv;
    const std::uint32_t peer = w_.task(t.target).rank;
    endpoints(n, send ? rank_ : peer, send ? peer : rank_, static_cast<std::int64_t>(send_id));
    n.attrs.push_back(Attr::int64("comm_size", static_cast<std::int64_t>(std::llround(t.amount))));
    n.attrs.push_back(Attr::real("cs_bytes", t.amount));
  }

  const Workload& w_;
  std::uint32_t rank_;
  std::vector<std::uint32_t>& node_of_;
  Groups& groups_;
  std::size_t nodes_ = 0;
  TaskId last_[kStreamCount] = {kNoTask, kNoTask, kNoTask, kNoTask, kNoTask, kNoTask,
                                kNoTask, kNoTask, kNoTask, kNoTask, kNoTask};
};

} // namespace

Export to_chakra(const Workload& w, const std::vector<std::uint32_t>& ranks, const std::string& description)
{
  Export out;
  out.ranks = ranks;
  if (out.ranks.empty())
    for (std::uint32_t r = 0; r < w.ranks(); ++r)
      if (w.simulated(r))
        out.ranks.push_back(r);
  std::vector<int> slot(w.ranks(), -1);
  for (std::size_t i = 0; i < out.ranks.size(); ++i) {
    if (out.ranks[i] >= w.ranks() || !w.simulated(out.ranks[i]))
      throw std::invalid_argument("rank " + std::to_string(out.ranks[i]) + " has no tasks in this step");
    slot[out.ranks[i]] = static_cast<int>(i);
  }
  out.files.resize(out.ranks.size());
  for (std::size_t i = 0; i < out.ranks.size(); ++i)
    append_metadata(out.files[i], "0.0.4",
                    {Attr::text("schema", "1.0.2-chakra.0.0.4"), Attr::text("cs_source", description),
                     Attr::int64("cs_rank", out.ranks[i]), Attr::int64("cs_ranks", w.ranks())});
  std::vector<std::uint32_t> node_of(w.tasks().size(), 0);
  std::vector<RankWriter> writers;
  writers.reserve(out.ranks.size());
  for (auto r : out.ranks)
    writers.emplace_back(w, r, node_of, out.groups);
  // one pass in task order: a rank's tasks come in order, dependencies before dependents
  for (TaskId id = 0; id < w.tasks().size(); ++id) {
    const int s = slot[w.task(id).rank];
    if (s >= 0)
      writers[static_cast<std::size_t>(s)].add(id, out.files[static_cast<std::size_t>(s)]);
  }
  for (const auto& wr : writers)
    out.nodes += wr.nodes();
  return out;
}

} // namespace clustersim::chakra
