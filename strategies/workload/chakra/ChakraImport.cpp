// Chakra execution traces onto a Workload (see ChakraTrace.hpp).
//
// Every rank's operations are laid out on streams (the `cs_stream` a trace written here names,
// else compute, a collective stream or the transfer streams), each stream in the trace's
// dependency order. Operations are then made in a dataflow order over all ranks: one whose
// dependencies and stream predecessor exist is made at once if it computes; a collective
// waits until every member of its group has reached it, a transfer until its peer has. What
// is never made is a trace that would deadlock, or one whose ranks disagree, and is refused.

#include "strategies/workload/chakra/ChakraTrace.hpp"
#include "topology/config/ConfigError.hpp"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <map>
#include <queue>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace clustersim::chakra {

namespace {

/// One operation of a rank: a node that computes or communicates (a sendrecv's two nodes are one).
struct Op {
  std::uint32_t node = 0;           ///< its (first) node in the trace
  std::vector<std::uint32_t> preds; ///< operations of the rank it waits for, stream predecessor included
  /// Its dependencies in the Workload: the data dependencies, and the control dependencies other
  /// than its stream predecessor (which the stream implies; a dependency on a host_sync task
  /// differs from following it on a stream, so a data dependency on it is kept).
  std::vector<std::uint32_t> deps;
  std::vector<std::uint32_t> succs;
  std::uint32_t waiting = 0;
  Stream stream = Stream::compute;
  std::string key; ///< what matches it across ranks (collectives and transfers)
  TaskId task = kNoTask;
};

struct RankOps {
  std::vector<Op> ops;
  ImportSummary summary;
};

[[noreturn]] void fail(const std::string& file, const std::string& what, const std::string& valid = "")
{
  throw ConfigError(SourceLocation{file, 0, 0}, what, valid);
}

std::string node_label(const Node& n)
{
  return "node " + std::to_string(n.id) + " (" + to_string(n.type) + (n.name.empty() ? "" : " '" + n.name + "'") + ")";
}

bool is_op(const Node& n)
{
  if (n.type == NodeType::comp) {
    const Attr* cpu = n.attr("is_cpu_op");
    return !(cpu && cpu->kind == Attr::Kind::boolean && cpu->i);
  }
  return n.type == NodeType::coll || n.type == NodeType::send || n.type == NodeType::recv;
}

Stream stream_of(const Node& n)
{
  if (const Attr* a = n.attr("cs_stream"); a && a->kind == Attr::Kind::str)
    for (int s = 0; s < kStreamCount; ++s)
      if (a->s == to_string(static_cast<Stream>(s)))
        return static_cast<Stream>(s);
  switch (n.type) {
  case NodeType::coll:
    return Stream::dp;
  case NodeType::send:
    return Stream::pp_send_fwd;
  case NodeType::recv:
    return Stream::pp_recv_fwd;
  default:
    return Stream::compute;
  }
}

bool sendrecv_half(const Node& n)
{
  const Attr* a = n.attr("cs_op");
  return a && a->kind == Attr::Kind::str && a->s == "sendrecv";
}

/// The nodes of one trace in a dependency order (file order where it allows).
std::vector<std::uint32_t> topological(const Trace& t, const std::unordered_map<std::uint64_t, std::uint32_t>& index,
                                       const std::string& file)
{
  const std::size_t n = t.nodes.size();
  std::vector<std::uint32_t> indegree(n, 0);
  std::vector<std::vector<std::uint32_t>> out(n);
  for (std::uint32_t i = 0; i < n; ++i)
    for (const auto* deps : {&t.nodes[i].ctrl_deps, &t.nodes[i].data_deps})
      for (auto d : *deps) {
        auto it = index.find(d);
        if (deps == &t.nodes[i].ctrl_deps && !(it != index.end() && it->second < i))
          continue; // not a control parent listed before its child: ignored (see ImportSummary)
        if (it == index.end())
          fail(file, node_label(t.nodes[i]) + " depends on node " + std::to_string(d) + ", which the trace lacks",
               "data dependencies on nodes of the same trace");
        out[it->second].push_back(i);
        ++indegree[i];
      }
  std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>> ready;
  for (std::uint32_t i = 0; i < n; ++i)
    if (!indegree[i])
      ready.push(i);
  std::vector<std::uint32_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    const auto i = ready.top();
    ready.pop();
    order.push_back(i);
    for (auto j : out[i])
      if (--indegree[j] == 0)
        ready.push(j);
  }
  if (order.size() != n)
    for (std::uint32_t i = 0; i < n; ++i)
      if (indegree[i])
        fail(file, node_label(t.nodes[i]) + " is on a cycle of dependencies", "an acyclic graph of nodes");
  return order;
}

void add_unique(std::vector<std::uint32_t>& v, std::uint32_t x)
{
  if (std::find(v.begin(), v.end(), x) == v.end())
    v.push_back(x);
}

/// The operations of one rank, their dependencies on each other (through pass-through nodes),
/// their streams and the keys that match them to other ranks'.
class RankLayout {
public:
  RankLayout(const Trace& t, std::uint32_t rank, std::size_t ranks, const std::string& file)
      : t_(t), rank_(rank), ranks_(static_cast<std::int64_t>(ranks)), file_(file)
  {
  }

  RankOps run()
  {
    std::unordered_map<std::uint64_t, std::uint32_t> index;
    index.reserve(t_.nodes.size());
    for (std::uint32_t i = 0; i < t_.nodes.size(); ++i)
      if (!index.emplace(t_.nodes[i].id, i).second)
        fail(file_, "two nodes have id " + std::to_string(t_.nodes[i].id), "a unique id per node");
    resolved_.assign(t_.nodes.size(), {});
    for (auto i : topological(t_, index, file_))
      place(i, index);
    return RankOps{std::move(ops_), summary_};
  }

private:
  void place(std::uint32_t i, const std::unordered_map<std::uint64_t, std::uint32_t>& index)
  {
    const Node& n = t_.nodes[i];
    std::vector<std::uint32_t> data, ctrl;
    for (auto d : n.data_deps)
      for (auto p : resolved_[index.at(d)])
        add_unique(data, p);
    for (auto d : n.ctrl_deps) {
      auto it = index.find(d);
      if (it == index.end() || it->second >= i) {
        ++summary_.ignored_ctrl_deps;
        continue;
      }
      for (auto p : resolved_[it->second])
        add_unique(ctrl, p);
    }
    std::vector<std::uint32_t> preds = data;
    for (auto p : ctrl)
      add_unique(preds, p);
    if (!is_op(n)) { // passed through: its dependents wait for what it waited for
      resolved_[i] = std::move(preds);
      ++summary_.passed_through;
      return;
    }
    if (n.type == NodeType::recv && sendrecv_half(n) && !ops_.empty()) {
      Op& send = ops_.back();
      const Node& first = t_.nodes[send.node];
      if (first.type == NodeType::send && sendrecv_half(first) &&
          first.integer("cs_call", -1) == n.integer("cs_call", -2)) {
        const auto self = static_cast<std::uint32_t>(ops_.size() - 1);
        for (auto p : preds)
          if (p != self)
            add_unique(send.preds, p);
        for (auto p : data)
          if (p != self)
            add_unique(send.deps, p);
        resolved_[i] = {self};
        return;
      }
    }
    Op op;
    op.node = i;
    op.stream = stream_of(n);
    op.preds = std::move(preds);
    auto& last = last_[static_cast<std::size_t>(op.stream)];
    if (last >= 0)
      add_unique(op.preds, static_cast<std::uint32_t>(last));
    op.deps = std::move(data);
    for (auto p : ctrl)
      if (static_cast<int>(p) != last)
        add_unique(op.deps, p);
    op.key = key(n);
    last = static_cast<int>(ops_.size());
    resolved_[i] = {static_cast<std::uint32_t>(ops_.size())};
    ops_.push_back(std::move(op));
  }

  std::string key(const Node& n)
  {
    if (n.type == NodeType::comp)
      return {};
    if (n.type == NodeType::coll || sendrecv_half(n)) {
      const Attr* pg = n.attr("pg_name");
      const std::string group = pg && pg->kind == Attr::Kind::str ? pg->s : "";
      const std::int64_t call = n.integer("cs_call", -1);
      if (call >= 0)
        return "c" + std::to_string(call);
      return "g" + group + "#" + std::to_string(seq_[group]++);
    }
    const std::int64_t src = n.integer("comm_src", -1), dst = n.integer("comm_dst", -1);
    if (src < 0 || dst < 0)
      fail(file_, node_label(n) + " lacks comm_src or comm_dst", "int32 attributes comm_src and comm_dst");
    if (src >= ranks_ || dst >= ranks_)
      fail(file_, node_label(n) + " goes from rank " + std::to_string(src) + " to rank " + std::to_string(dst) +
                      " among " + std::to_string(ranks_) + " traces",
           "ranks 0-" + std::to_string(ranks_ - 1));
    if ((n.type == NodeType::send ? src : dst) != rank_)
      fail(file_, node_label(n) + " is on rank " + std::to_string(rank_) + " but names " +
                      std::to_string(n.type == NodeType::send ? src : dst) + " as its " +
                      (n.type == NodeType::send ? "source" : "destination"),
           "a trace file per rank, PREFIX.RANK.et");
    // the k-th transfer with these endpoints and tag on one side meets the k-th on the other
    const std::string pair = std::to_string(src) + ">" + std::to_string(dst) + "#" + std::to_string(n.integer("comm_tag", 0));
    return "p" + pair + "#" + std::to_string(seq_["p" + pair]++);
  }

  const Trace& t_;
  std::uint32_t rank_;
  std::int64_t ranks_;
  const std::string& file_;
  std::vector<Op> ops_;
  std::vector<std::vector<std::uint32_t>> resolved_; ///< per node: the operations it stands for
  std::map<std::string, std::int64_t> seq_;
  ImportSummary summary_;
  int last_[kStreamCount] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
};

CollOp coll_op(const Node& n, const std::string& file)
{
  if (sendrecv_half(n))
    return CollOp::sendrecv;
  const std::int64_t t = n.integer("comm_type", 0);
  switch (static_cast<CommType>(t)) {
  case CommType::all_reduce:
  case CommType::barrier: // a barrier is an all-reduce of nothing: its latency alone
    return CollOp::all_reduce;
  case CommType::reduce:
    return CollOp::reduce;
  case CommType::all_gather:
    return CollOp::all_gather;
  case CommType::broadcast:
    return CollOp::broadcast;
  case CommType::all_to_all:
    return CollOp::all_to_all;
  case CommType::reduce_scatter:
  case CommType::reduce_scatter_block:
    return CollOp::reduce_scatter;
  case CommType::gather:
  case CommType::scatter:
    break;
  }
  fail(file, node_label(n) + " has comm_type " + std::to_string(t) + ", which clustersim does not simulate",
       "ALL_REDUCE (0), REDUCE (1), ALL_GATHER (2), BROADCAST (5), ALL_TO_ALL (6), REDUCE_SCATTER (7, 8), BARRIER (9)");
}

/// The most seconds and bytes a node may carry (31 years; an exabyte): beyond, a trace is broken.
constexpr double kMostSeconds = 1e9;
constexpr double kMostBytes = 1e18;

/// A value a trace written here keeps exactly (a double attribute), else `fallback`; checked to
/// be finite, at least 0 and at most `most`.
double exact(const Node& n, const char* name, double fallback, double most, const std::string& file,
             const char* fallback_name = "duration_micros")
{
  const Attr* a = n.attr(name);
  const bool has = a && a->kind == Attr::Kind::dbl;
  const double v = has ? a->d : fallback;
  if (!(v >= 0 && v <= most)) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", v);
    fail(file, node_label(n) + " has " + (has ? name : fallback_name) + " " + text,
         std::string("a number from 0 to ") + (most == kMostBytes ? "1e18 bytes" : "1e9 seconds"));
  }
  return v;
}

/// A compute node's FLOPs: `num_ops`, which Chakra's feeder reads as an int64 attribute
/// (mlcommons/chakra@21585d8 src/feeder/et_feeder_node.cpp:31-32), a uint64 taken as well; 0
/// without.
double flops_of(const Node& n, const std::string& file)
{
  const Attr* a = n.attr("num_ops");
  if (!a || (a->kind != Attr::Kind::i64 && a->kind != Attr::Kind::u64))
    return 0;
  if (a->kind == Attr::Kind::u64)
    return static_cast<double>(static_cast<std::uint64_t>(a->i));
  if (a->i < 0)
    fail(file, node_label(n) + " has num_ops " + std::to_string(a->i), "a count of FLOPs of at least 0");
  return static_cast<double>(a->i);
}

double bytes_of(const Node& n, const std::string& file)
{
  const std::int64_t size = n.integer("comm_size", 0);
  return exact(n, "cs_bytes", static_cast<double>(size), kMostBytes, file, "comm_size");
}

/// Makes the operations of every rank in a dataflow order (see the file comment).
class Builder {
public:
  Builder(const std::vector<Trace>& traces, const Groups& groups, const std::vector<std::string>& files,
          const std::string& groups_file)
      : traces_(traces), groups_(groups), files_(files), groups_file_(groups_file),
        w_(static_cast<std::uint32_t>(traces.size()))
  {
  }

  Workload run(ImportSummary* summary)
  {
    ranks_.reserve(traces_.size());
    for (std::uint32_t r = 0; r < traces_.size(); ++r) {
      ranks_.push_back(RankLayout(traces_[r], r, traces_.size(), files_[r]).run());
      if (summary) {
        summary->passed_through += ranks_.back().summary.passed_through;
        summary->ignored_ctrl_deps += ranks_.back().summary.ignored_ctrl_deps;
      }
    }
    std::size_t work = 0, passed = 0;
    for (const auto& rank : ranks_) {
      work += rank.ops.size();
      passed += rank.summary.passed_through;
    }
    if (work == 0) // a step of nothing would read as 0 s
      fail(files_.empty() ? groups_file_ : files_.front(),
           "the traces hold no GPU work: " + std::to_string(passed) +
               " nodes, all CPU operators, metadata or memory nodes",
           "traces with COMP_NODE (not is_cpu_op), COMM_COLL_NODE, COMM_SEND_NODE or COMM_RECV_NODE nodes (a "
           "PyTorch host trace carries its GPU kernels once linked with its Kineto trace, chakra_trace_link)");
    for (std::uint32_t r = 0; r < ranks_.size(); ++r) {
      auto& ops = ranks_[r].ops;
      for (std::uint32_t o = 0; o < ops.size(); ++o) {
        ops[o].waiting = static_cast<std::uint32_t>(ops[o].preds.size());
        for (auto p : ops[o].preds)
          ops[p].succs.push_back(o);
        if (!ops[o].waiting)
          queue_.emplace_back(r, o);
      }
    }
    while (!queue_.empty()) {
      const auto [r, o] = queue_.front();
      queue_.pop_front();
      reach(r, o);
    }
    for (std::uint32_t r = 0; r < ranks_.size(); ++r)
      for (const auto& op : ranks_[r].ops)
        if (op.task == kNoTask)
          stuck(r, op);
    return std::move(w_);
  }

private:
  const Node& node(std::uint32_t r, const Op& op) const { return traces_[r].nodes[op.node]; }

  void reach(std::uint32_t r, std::uint32_t o)
  {
    Op& op = ranks_[r].ops[o];
    const Node& n = node(r, op);
    if (n.type == NodeType::comp) {
      const std::string& file = files_[r];
      op.task = w_.add_compute(r, exact(n, "cs_seconds", static_cast<double>(n.duration_micros) * 1e-6, kMostSeconds, file),
                               label(n), deps(r, op), op.stream, exact(n, "cs_host_s", 0, kMostSeconds, file, "cs_host_s"));
      if (const double flops = flops_of(n, file); flops > 0)
        w_.set_flops(op.task, flops);
      made(r, o);
      return;
    }
    auto& waiting = pending_[op.key];
    waiting.emplace_back(r, o);
    if (op.key[0] == 'p') {
      if (waiting.size() == 2)
        transfer(waiting);
      return;
    }
    const auto& members = members_of(r, n);
    if (waiting.size() == members.size())
      collective(waiting, members);
  }

  void made(std::uint32_t r, std::uint32_t o)
  {
    Op& op = ranks_[r].ops[o];
    if (const Attr* a = node(r, op).attr("cs_host_sync"); a && a->i)
      w_.set_host_sync(op.task);
    for (auto s : op.succs)
      if (--ranks_[r].ops[s].waiting == 0)
        queue_.emplace_back(r, s);
  }

  TaskIds deps(std::uint32_t r, const Op& op) const
  {
    TaskIds out;
    const auto& ops = ranks_[r].ops;
    for (auto p : op.deps)
      out.push_back(ops[p].task);
    return out;
  }

  Workload::Label label(const Node& n)
  {
    Workload::Label l;
    l.category = n.type == NodeType::comp ? Category::forward
                 : n.type == NodeType::coll ? Category::dp_comm
                                            : Category::pp_comm;
    if (const Attr* a = n.attr("cs_category"); a && a->kind == Attr::Kind::str)
      for (int c = 0; c < kCategoryCount; ++c)
        if (a->s == to_string(static_cast<Category>(c)))
          l.category = static_cast<Category>(c);
    l.layer = static_cast<int>(n.integer("cs_layer", -1));
    l.micro_batch = static_cast<int>(n.integer("cs_micro_batch", -1));
    // a Workload keeps at most 255 names: a foreign trace's kernels beyond that go by their kind
    l.name = n.name.empty() ? to_string(n.type) : n.name;
    if (!names_.count(l.name)) {
      if (names_.size() >= 240)
        l.name = to_string(n.type);
      names_.insert(l.name);
    }
    return l;
  }

  const std::vector<std::uint32_t>& members_of(std::uint32_t r, const Node& n)
  {
    const Attr* pg = n.attr("pg_name");
    const std::string name = pg && pg->kind == Attr::Kind::str ? pg->s : "";
    auto it = group_index_.find(name);
    if (it == group_index_.end()) {
      std::vector<std::uint32_t> ranks;
      if (name.empty() || name == "0") // ASTRA-sim's reading: every rank
        for (std::uint32_t i = 0; i < traces_.size(); ++i)
          ranks.push_back(i);
      else if (auto g = groups_.find(name); g != groups_.end())
        ranks = g->second;
      else
        fail(files_[r], node_label(n) + " names communicator group '" + name + "', which " + groups_file_ + " lacks",
             "a group of " + groups_file_);
      for (auto m : ranks)
        if (m >= traces_.size())
          fail(groups_file_, "group '" + name + "' lists rank " + std::to_string(m) + " of " +
                                 std::to_string(traces_.size()) + " traces",
               "ranks 0-" + std::to_string(traces_.size() - 1));
      it = group_index_.emplace(name, w_.add_group(ranks)).first;
    }
    const auto& ranks = w_.groups()[it->second].ranks;
    if (std::find(ranks.begin(), ranks.end(), r) == ranks.end())
      fail(files_[r], node_label(n) + " is a collective of group '" + name + "', which lacks rank " + std::to_string(r),
           "the groups of " + groups_file_);
    return ranks;
  }

  void collective(std::vector<std::pair<std::uint32_t, std::uint32_t>>& arrived,
                  const std::vector<std::uint32_t>& members)
  {
    const auto [r0, o0] = arrived.front();
    const Node& first = node(r0, ranks_[r0].ops[o0]);
    const CollOp op = coll_op(first, files_[r0]);
    const double bytes = bytes_of(first, files_[r0]);
    std::vector<TaskIds> d(members.size());
    for (const auto& [r, o] : arrived) {
      const Node& n = node(r, ranks_[r].ops[o]);
      if (coll_op(n, files_[r]) != op || bytes_of(n, files_[r]) != bytes)
        fail(files_[r], node_label(n) + " meets " + node_label(first) + " of " + files_[r0] +
                            " in the same collective with another type or size",
             "the same comm_type and comm_size on every member");
      const auto pos = std::find(members.begin(), members.end(), r) - members.begin();
      d[static_cast<std::size_t>(pos)] = deps(r, ranks_[r].ops[o]);
    }
    std::uint16_t algo = 0;
    if (const Attr* a = first.attr("cs_algo"); a && a->kind == Attr::Kind::str)
      algo = w_.algo_index(a->s);
    auto tasks = w_.add_collective(op, group_of(first), bytes,
                                   ranks_[r0].ops[o0].stream, label(first), d, algo);
    for (const auto& [r, o] : arrived) {
      const auto pos = std::find(members.begin(), members.end(), r) - members.begin();
      ranks_[r].ops[o].task = tasks[static_cast<std::size_t>(pos)];
    }
    const auto done = arrived;
    pending_.erase(ranks_[r0].ops[o0].key);
    for (const auto& [r, o] : done)
      made(r, o);
  }

  std::uint32_t group_of(const Node& n) const
  {
    const Attr* pg = n.attr("pg_name");
    return group_index_.at(pg && pg->kind == Attr::Kind::str ? pg->s : "");
  }

  void transfer(std::vector<std::pair<std::uint32_t, std::uint32_t>>& pair)
  {
    auto [rs, os] = pair[0];
    auto [rr, orr] = pair[1];
    if (node(rs, ranks_[rs].ops[os]).type != NodeType::send)
      std::swap(rs, rr), std::swap(os, orr);
    const Node& send = node(rs, ranks_[rs].ops[os]);
    const Node& recv = node(rr, ranks_[rr].ops[orr]);
    if (send.type != NodeType::send || recv.type != NodeType::recv)
      fail(files_[rs], node_label(send) + " and " + node_label(recv) + " of " + files_[rr] +
                           " are both " + to_string(send.type) + " with the same endpoints and tag",
           "a COMM_SEND_NODE on the source and a COMM_RECV_NODE on the destination");
    const double bytes = bytes_of(send, files_[rs]);
    if (bytes_of(recv, files_[rr]) != bytes)
      fail(files_[rr], node_label(recv) + " receives another size than " + node_label(send) + " of " + files_[rs] +
                           " sends", "the same comm_size on both sides");
    const auto [s, r] = w_.add_p2p(rs, rr, bytes, ranks_[rs].ops[os].stream, ranks_[rr].ops[orr].stream,
                                   label(send), deps(rs, ranks_[rs].ops[os]), deps(rr, ranks_[rr].ops[orr]));
    ranks_[rs].ops[os].task = s;
    ranks_[rr].ops[orr].task = r;
    const std::string key = ranks_[rs].ops[os].key;
    pending_.erase(key);
    made(rs, os);
    made(rr, orr);
  }

  [[noreturn]] void stuck(std::uint32_t r, const Op& op) const
  {
    const Node& n = node(r, op);
    std::string why = "never runs: ";
    if (op.waiting)
      why += "it waits for an operation that never runs";
    else if (op.key[0] == 'p')
      why += "its peer never reaches the matching " +
             std::string(n.type == NodeType::send ? "COMM_RECV_NODE" : "COMM_SEND_NODE");
    else
      why += "not every member of its group reaches it";
    fail(files_[r], node_label(n) + " " + why, "traces whose collectives and transfers meet on every rank");
  }

  const std::vector<Trace>& traces_;
  const Groups& groups_;
  const std::vector<std::string>& files_;
  const std::string& groups_file_;
  Workload w_;
  std::vector<RankOps> ranks_;
  std::deque<std::pair<std::uint32_t, std::uint32_t>> queue_;
  std::map<std::string, std::vector<std::pair<std::uint32_t, std::uint32_t>>> pending_;
  std::map<std::string, std::uint32_t> group_index_;
  std::unordered_set<std::string> names_; // labels given so far (at most 240 of a trace's own)
};

} // namespace

Workload from_chakra(const std::vector<Trace>& traces, const Groups& groups, const std::vector<std::string>& files,
                     const std::string& groups_file, ImportSummary* summary)
{
  return Builder(traces, groups, files, groups_file).run(summary);
}

} // namespace clustersim::chakra
