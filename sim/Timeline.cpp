#include "sim/Timeline.hpp"

#include <algorithm>
#include <map>
#include <queue>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>

namespace clustersim {
namespace {

constexpr double kUnset = -1;
constexpr int kScaleUp = 1;
constexpr int kScaleOut = 2;

/// A discrete-event pass: a stream's next task is queued at the time it becomes ready and runs
/// when the clock reaches it, so port reservations are made in time order.
class Timeline {
public:
  Timeline(const Workload& w, CollectiveEngine& c, const TimelineOptions& o) : w_(w), c_(c), o_(o)
  {
    const auto n = w.tasks().size();
    queued_.assign(n, 0);
    res_.start.assign(n, kUnset);
    res_.end.assign(n, kUnset);
    done_.assign(n, 0);
    arrived_.assign(n, 0);
    calls_.resize(w.collectives().size());
    for (std::uint32_t call = 0; call < calls_.size(); ++call)
      calls_[call].present = w.collectives()[call].present;
    streams_.resize(static_cast<std::size_t>(w.ranks()) * kStreamCount);
    for (std::uint32_t r = 0; r < w.ranks(); ++r)
      for (int s = 0; s < kStreamCount; ++s)
        streams_[r * kStreamCount + static_cast<std::size_t>(s)].program = &w.program(r, static_cast<Stream>(s));
    if (o_.share_ports)
      port_free_.assign(static_cast<std::size_t>(w.ranks()) * 2, 0.0);
    if (w.has_host())
      host_.assign(w.ranks(), 0.0);
  }

  ExecutionResult run()
  {
    for (std::size_t s = 0; s < streams_.size(); ++s)
      if (!streams_[s].program->empty())
        schedule(static_cast<std::uint32_t>(s));
    while (!heap_.empty()) {
      auto [time, seq, s] = heap_.top();
      heap_.pop();
      execute(s, time);
    }
    close_result(done_, res_);
    return std::move(res_);
  }

private:
  struct StreamState {
    const std::vector<TaskId>* program = nullptr;
    std::size_t pos = 0;
    double clock = 0; ///< end of the previous task
  };
  struct CallState {
    std::uint32_t present = 0;
    std::uint32_t arrived = 0;
    double latest = 0;
    std::vector<TaskId> members;
  };
  /// What a call costs: its time on idle links and the port classes it uses. Calls with the
  /// same group, operation, algorithm and size share it (a step repeats a few shapes
  /// thousands of times).
  struct Shape {
    double seconds = 0;
    int ports = 0; ///< kScaleUp | kScaleOut
  };
  using ShapeKey = std::tuple<std::uint32_t, int, std::uint16_t, double>;
  using Event = std::tuple<double, std::uint64_t, std::uint32_t>;

  static std::uint32_t stream_of(const Task& t) { return t.rank * kStreamCount + static_cast<std::uint32_t>(t.stream); }

  int port_class(std::uint32_t a, std::uint32_t b) const
  {
    return c_.cluster().path_class(static_cast<int>(a), static_cast<int>(b)) == PathClass::scale_out ? kScaleOut
                                                                                                     : kScaleUp;
  }

  const Shape& shape(std::uint32_t call)
  {
    const CollectiveCall& cc = w_.collectives()[call];
    ShapeKey key{cc.group, static_cast<int>(cc.op), cc.algo, cc.bytes};
    auto it = shapes_.find(key);
    if (it != shapes_.end())
      return it->second;
    const ExecPlan& plan = c_.plan(w_, call);
    Shape sh;
    sh.seconds = plan.predicted_s;
    if (o_.share_ports) {
      const auto& group = w_.groups()[cc.group].ranks;
      for (const auto& ph : plan.phases) {
        for (const auto& f : ph.flows) {
          sh.ports |= port_class(group[f.src], group[f.dst]);
          if (sh.ports == (kScaleUp | kScaleOut))
            break;
        }
        if (sh.ports == (kScaleUp | kScaleOut))
          break;
      }
    }
    return shapes_.emplace(key, sh).first->second;
  }

  /// With share_ports: the earliest time at or after `t` when every port in `mask` of every
  /// rank is free, and reserves them until `t + duration`.
  double reserve(const std::vector<std::uint32_t>& ranks, int mask, double t, double duration)
  {
    if (!o_.share_ports || mask == 0)
      return t;
    for (std::uint32_t r : ranks)
      for (int k = 0; k < 2; ++k)
        if (mask & (1 << k))
          t = std::max(t, port_free_[r * 2 + static_cast<std::size_t>(k)]);
    for (std::uint32_t r : ranks)
      for (int k = 0; k < 2; ++k)
        if (mask & (1 << k))
          port_free_[r * 2 + static_cast<std::size_t>(k)] = t + duration;
    return t;
  }

  void finish(TaskId id, double start, double end)
  {
    res_.start[id] = start;
    res_.end[id] = end;
    done_[id] = 1;
    auto it = waiters_.find(id);
    if (it == waiters_.end())
      return;
    std::vector<std::uint32_t> ws = std::move(it->second);
    waiters_.erase(it);
    for (std::uint32_t s : ws)
      schedule(s);
  }

  /// Queues stream `s` at the time its next task becomes ready (or registers it as a waiter).
  void schedule(std::uint32_t s)
  {
    StreamState& st = streams_[s];
    const auto& prog = *st.program;
    while (st.pos < prog.size() && done_[prog[st.pos]]) { // completed by the last member to arrive
      st.clock = res_.end[prog[st.pos]];
      ++st.pos;
    }
    if (st.pos == prog.size())
      return;
    const TaskId id = prog[st.pos];
    if (arrived_[id])
      return; // waiting for the other members
    double ready = st.clock;
    for (const TaskId* d = w_.deps_begin(id); d != w_.deps_end(id); ++d) {
      if (!done_[*d]) {
        waiters_[*d].push_back(s);
        return;
      }
      ready = std::max(ready, res_.end[*d]);
    }
    if (queued_[id])
      return;
    queued_[id] = 1;
    heap_.emplace(ready, seq_++, s);
  }

  void execute(std::uint32_t s, double now)
  {
    const TaskId id = (*streams_[s].program)[streams_[s].pos];
    const Task& t = w_.task(id);
    switch (t.kind) {
    case TaskKind::compute: {
      if (t.amount > 0)
        ++res_.stats.executions;
      double start = now;
      if (!host_.empty() && t.stream == Stream::compute) // no earlier than the host issued it
        start = std::max(now, host_[t.rank] = issue_time(w_, id, host_[t.rank], res_.end));
      finish(id, start, start + std::max(0.0, t.amount));
      schedule(s);
      break;
    }
    case TaskKind::collective: {
      arrived_[id] = 1;
      CallState& call = calls_[t.target];
      call.latest = std::max(call.latest, now);
      call.members.push_back(id);
      if (++call.arrived < call.present)
        return;
      ++res_.stats.collectives;
      ++res_.stats.exclusive_collectives;
      const Shape& sh = shape(t.target);
      const double duration = sh.seconds;
      double start = call.latest;
      if (o_.share_ports) {
        ranks_.clear();
        for (TaskId m : call.members)
          ranks_.push_back(w_.task(m).rank);
        start = reserve(ranks_, sh.ports, start, duration);
      }
      std::vector<TaskId> members = std::move(call.members);
      std::vector<TaskId>().swap(call.members);
      for (TaskId m : members)
        finish(m, start, start + duration);
      for (TaskId m : members)
        schedule(stream_of(w_.task(m)));
      break;
    }
    case TaskKind::send:
    case TaskKind::recv: {
      arrived_[id] = 1;
      const TaskId other = t.target;
      if (!arrived_[other])
        return;
      const Task& send = t.kind == TaskKind::send ? t : w_.task(other);
      const Task& recv = t.kind == TaskKind::send ? w_.task(other) : t;
      ++res_.stats.transfers;
      ++res_.stats.exclusive_transfers;
      const double duration = c_.p2p_predicted(static_cast<int>(send.rank), static_cast<int>(recv.rank), send.amount);
      double start = now;
      if (o_.share_ports) {
        ranks_.assign({send.rank, recv.rank});
        start = reserve(ranks_, port_class(send.rank, recv.rank), start, duration);
      }
      finish(id, start, start + duration);
      finish(other, start, start + duration);
      schedule(s);
      schedule(stream_of(w_.task(other)));
      break;
    }
    }
  }

  const Workload& w_;
  CollectiveEngine& c_;
  TimelineOptions o_;
  ExecutionResult res_;
  std::vector<std::uint8_t> done_;
  std::vector<std::uint8_t> queued_; ///< per task: its stream is queued for it
  std::vector<double> host_; ///< per rank: when its host issued its last compute task (empty: no host costs)
  std::vector<std::uint8_t> arrived_;
  std::vector<CallState> calls_;
  std::vector<StreamState> streams_;
  std::vector<double> port_free_;
  std::vector<std::uint32_t> ranks_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> heap_;
  std::uint64_t seq_ = 0;
  std::unordered_map<TaskId, std::vector<std::uint32_t>> waiters_;
  std::map<ShapeKey, Shape> shapes_;
};

} // namespace

ExecutionResult evaluate_contention_free(const Workload& w, CollectiveEngine& collectives,
                                         const TimelineOptions& options)
{
  return Timeline(w, collectives, options).run();
}

} // namespace clustersim
