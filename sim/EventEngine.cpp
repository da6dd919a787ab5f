#include "sim/EventEngine.hpp"

#include "sim/ExclusiveLinks.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace clustersim {
namespace {

/// Task states.
constexpr std::uint8_t kIdle = 0;
constexpr std::uint8_t kArrived = 1; ///< running, or waiting at its rendezvous or barrier
constexpr std::uint8_t kDone = 2;

/// SimGrid's precision/timing: flows ending this close to an instant end at it.
constexpr double kTimingPrecision = 1e-9;

enum class EventKind : std::uint8_t {
  task_end,     ///< a compute delay or a contention-free transfer ended: id = task
  issued,       ///< the host has issued a compute task that was ready before: id = task
  call_end,     ///< a collective's last latency (or its whole delay) ended: id = call
  phase_end,    ///< a phase's latency ended: id = call
  transfer_end, ///< a transfer's latency after its flow ended: id = the send task
};

/// An event: 16 bytes, so that a node's four children share one cache line.
struct Event {
  double time;
  std::uint32_t seq;  ///< orders events of one instant as they were scheduled
  std::uint32_t code; ///< id << 3 | kind
  std::uint32_t id() const { return code >> 3; }
  EventKind kind() const { return static_cast<EventKind>(code & 7); }
  bool before(const Event& o) const { return time != o.time ? time < o.time : seq < o.seq; }
};
/// Task and call ids an event can name (29 bits).
constexpr std::size_t kMaxEventId = std::size_t{1} << 29;

/// A 4-ary min-heap of events: half the levels of a binary heap, each level's children one
/// cache line (the heap's sifting was a third of the engine's own time at 16k GPUs).
class EventQueue {
public:
  bool empty() const { return v_.empty(); }
  const Event& top() const { return v_.front(); }
  void push(const Event& e)
  {
    v_.push_back(e);
    std::size_t i = v_.size() - 1;
    while (i > 0) {
      const std::size_t p = (i - 1) / 4;
      if (!e.before(v_[p]))
        break;
      v_[i] = v_[p];
      i = p;
    }
    v_[i] = e;
  }
  void pop()
  {
    const Event last = v_.back();
    v_.pop_back();
    const std::size_t n = v_.size();
    if (n == 0)
      return;
    std::size_t i = 0;
    for (;;) {
      const std::size_t c = 4 * i + 1;
      if (c >= n)
        break;
      std::size_t m = c;
      const std::size_t end = std::min(c + 4, n);
      for (std::size_t k = c + 1; k < end; ++k)
        if (v_[k].before(v_[m]))
          m = k;
      if (!v_[m].before(last))
        break;
      v_[i] = v_[m];
      i = m;
    }
    v_[i] = last;
  }

private:
  std::vector<Event> v_;
};

/// Who a flow works for.
struct FlowOwner {
  enum Kind : std::uint8_t { call, transfer, compute } kind = call;
  std::uint32_t id = 0; ///< call index, send task, or compute task
};

class EventRun {
public:
  EventRun(const Workload& w, CollectiveEngine& c, double speed, const ExecutionOptions& o)
      : w_(w), c_(c), cg_(c.cluster()), speed_(speed), o_(o), net_(capacities(c.cluster(), w.ranks(), speed), o.incremental_sharing)
  {
    const auto n = w.tasks().size();
    if (n >= kMaxEventId || w.collectives().size() >= kMaxEventId)
      throw std::length_error("the event engine names at most 2^29 tasks and calls; this step has " +
                              std::to_string(n) + " tasks and " + std::to_string(w.collectives().size()) + " calls");
    assign_huge(res_.start, n, -1.0);
    assign_huge(res_.end, n, -1.0);
    if (static_cast<std::size_t>(w.ranks()) * kStreamCount >= kWaiterMask)
      throw std::length_error("the event engine runs at most " + std::to_string(kWaiterMask / kStreamCount) +
                              " ranks; this step has " + std::to_string(w.ranks()));
    assign_huge(slot_, n, std::uint32_t{kIdle} << kStateShift);
    calls_.resize(w.collectives().size());
    for (std::uint32_t call = 0; call < calls_.size(); ++call)
      calls_[call].present = w.collectives()[call].present;
    compute_as_delay_ = w.one_compute_stream();
    if (w.has_host())
      host_.assign(w.ranks(), 0.0);
    streams_.resize(static_cast<std::size_t>(w.ranks()) * kStreamCount);
    p2p_.resize(streams_.size());
    for (std::uint32_t r = 0; r < w.ranks(); ++r)
      for (int s = 0; s < kStreamCount; ++s)
        streams_[r * kStreamCount + static_cast<std::size_t>(s)].cur = w.first(r, static_cast<Stream>(s));
  }

  ExecutionResult go(EventEngineStats* stats)
  {
    for (std::uint32_t call = 0; call < w_.collectives().size(); ++call)
      calls_[call].plan = &c_.plan(w_, call);
    if (o_.delay_when_exclusive) {
      std::vector<const ExecPlan*> plans;
      plans.reserve(calls_.size());
      for (const auto& cr : calls_)
        plans.push_back(cr.plan);
      ExclusiveUse use = find_exclusive_use(w_, cg_, plans);
      for (std::uint32_t call = 0; call < calls_.size(); ++call)
        calls_[call].exclusive = use.calls[call];
      p2p_exclusive_ = std::move(use.transfers);
    }
    for (std::uint32_t s = 0; s < streams_.size(); ++s)
      if (streams_[s].cur != kNoTask)
        work_.push_back(s);
    run();
    std::vector<std::uint8_t> done(slot_.size());
    for (std::size_t i = 0; i < slot_.size(); ++i)
      done[i] = state(static_cast<TaskId>(i)) == kDone ? 1 : 0;
    close_result(done, res_);
    if (stats) {
      stats->events = events_;
      stats->instants = instants_;
      stats->network = net_.stats();
    }
    return std::move(res_);
  }

private:
  struct StreamRun {
    TaskId cur = kNoTask;          ///< the task running or next to run; kNoTask: the stream is done
    std::uint32_t next_waiter = 0; ///< 1 + the next stream waiting for the same task, 0: none
    bool busy = false;             ///< `cur` has started
  };
  struct CallRun {
    const ExecPlan* plan = nullptr;
    std::uint32_t present = 0; ///< simulated members
    std::uint32_t arrived = 0;
    std::uint32_t phase = 0;
    std::uint32_t outstanding = 0; ///< flows of the current phase still moving
    bool exclusive = false;
    Stream stream = Stream::compute;
  };

  static std::vector<double> capacities(const ClusterGraph& cg, std::uint32_t ranks, double speed)
  {
    std::vector<double> cap;
    cap.reserve(cg.resources().size() + ranks);
    for (const Resource& r : cg.resources())
      cap.push_back(r.bandwidth);
    // one more per GPU: its compute, shared by the streams that compute on it
    cap.insert(cap.end(), ranks, speed);
    return cap;
  }

  static constexpr int kStateShift = 30;
  static constexpr std::uint32_t kWaiterMask = (std::uint32_t{1} << kStateShift) - 1;
  std::uint8_t state(TaskId id) const { return static_cast<std::uint8_t>(slot_[id] >> kStateShift); }
  void set_state(TaskId id, std::uint8_t st)
  {
    slot_[id] = (slot_[id] & kWaiterMask) | std::uint32_t{st} << kStateShift;
  }

  static double wire(double bytes) { return std::ceil(std::max(0.0, bytes)); }

  void run()
  {
    for (;;) {
      drain();
      net_.solve(now_);
      const double te = heap_.empty() ? MaxMinNetwork::kUnbounded : heap_.top().time;
      const double tf = net_.next_end();
      const double t = std::min(te, tf);
      if (t == MaxMinNetwork::kUnbounded)
        break;
      if (t != now_)
        ++instants_;
      // the clock moves as SimGrid's does (now += next - now), and an instant takes every flow
      // ending within SimGrid's timing precision of it (precision/timing, 1e-9 s), so that both
      // engines round alike
      now_ += t - now_;
      // everything at this instant before the next solve
      for (bool more = true; more;) {
        more = false;
        while (!heap_.empty() && heap_.top().time <= now_) {
          const Event e = heap_.top();
          heap_.pop();
          handle(e.kind(), e.id());
          more = true;
        }
        while (net_.next_end() < now_ + kTimingPrecision) {
          flow_ended(net_.pop_end(now_));
          more = true;
        }
        if (!work_.empty()) {
          drain();
          more = true;
        }
      }
    }
  }

  void at(double time, EventKind kind, std::uint32_t id)
  {
    ++events_;
    if (seq_ == std::numeric_limits<std::uint32_t>::max())
      throw std::length_error("the event engine orders at most 2^32 events of one step");
    heap_.push({time, seq_++, id << 3 | static_cast<std::uint32_t>(kind)});
  }

  void handle(EventKind kind, std::uint32_t id)
  {
    switch (kind) {
    case EventKind::task_end: {
      const Task& t = w_.task(id);
      if (t.kind == TaskKind::send || t.kind == TaskKind::recv)
        finish(t.target);
      finish(id);
      break;
    }
    case EventKind::issued:
      res_.start[id] = now_;
      run_compute(id, w_.task(id));
      break;
    case EventKind::call_end:
      finish_call(id);
      break;
    case EventKind::phase_end:
      next_phase(id);
      break;
    case EventKind::transfer_end:
      finish(id);
      finish(w_.task(id).target);
      break;
    }
  }

  // ---- streams ----

  void drain()
  {
    while (!work_.empty()) {
      const std::uint32_t s = work_.back();
      work_.pop_back();
      advance(s);
    }
  }

  /// Starts stream `s`'s next task if it is ready, or puts the stream on its blocker's list.
  void advance(std::uint32_t s)
  {
    StreamRun& st = streams_[s];
    if (st.busy || st.cur == kNoTask)
      return;
    const TaskId id = st.cur;
    for (const TaskId* d = w_.deps_begin(id); d != w_.deps_end(id); ++d)
      if (state(*d) != kDone) {
        st.next_waiter = slot_[*d] & kWaiterMask;
        slot_[*d] = (slot_[*d] & ~kWaiterMask) | (s + 1);
        return;
      }
    st.busy = true;
    const Task& t = w_.task(id);
    switch (t.kind) {
    case TaskKind::compute:
      if (!host_.empty() && t.stream == Stream::compute) {
        const double issue = host_[t.rank] = issue_time(w_, id, host_[t.rank], res_.end);
        if (issue > now_) {
          set_state(id, kArrived);
          at(issue, EventKind::issued, id);
          break;
        }
      }
      res_.start[id] = now_;
      run_compute(id, t);
      break;
    case TaskKind::send:
    case TaskKind::recv:
      arrive_p2p(id, t);
      break;
    case TaskKind::collective:
      arrive_collective(id, t);
      break;
    }
  }

  /// Marks `id` done now: its stream moves on, its waiters look again.
  void finish(TaskId id)
  {
    res_.end[id] = now_;
    const std::uint32_t waiters = slot_[id] & kWaiterMask;
    slot_[id] = std::uint32_t{kDone} << kStateShift;
    const Task& t = w_.task(id);
    const std::uint32_t s = t.rank * kStreamCount + static_cast<std::uint32_t>(t.stream);
    StreamRun& st = streams_[s];
    st.busy = false;
    st.cur = w_.next(id); // a stream's next task lies next to the one just finished: tasks of one
                          // operation on neighbouring ranks were made together
    if (st.cur != kNoTask)
      __builtin_prefetch(&w_.task(st.cur)); // read when the stream advances, a little later
    work_.push_back(s);
    for (std::uint32_t wt = waiters; wt != 0;) {
      StreamRun& ws = streams_[wt - 1];
      work_.push_back(wt - 1);
      wt = std::exchange(ws.next_waiter, 0);
    }
  }

  /// A pause of `seconds` from now that ends with event (kind, id), or at once.
  void pause(double seconds, EventKind kind, std::uint32_t id, std::size_t sleepers)
  {
    if (seconds > 0) {
      res_.stats.sleeps += sleepers;
      at(now_ + seconds, kind, id);
    } else {
      handle(kind, id);
    }
  }

  // ---- compute ----

  void run_compute(TaskId id, const Task& t)
  {
    set_state(id, kArrived);
    if (t.amount <= 0) {
      finish(id);
      return;
    }
    ++res_.stats.executions;
    if (compute_as_delay_) {
      at(now_ + t.amount, EventKind::task_end, id);
      return;
    }
    route_.assign(1, static_cast<int>(cg_.resources().size() + t.rank));
    start_flow(route_, t.amount * speed_, MaxMinNetwork::kUnbounded, {FlowOwner::compute, id});
  }

  // ---- transfers ----

  void arrive_p2p(TaskId id, const Task& t)
  {
    set_state(id, kArrived);
    const TaskId other = t.target;
    if (state(other) != kArrived || res_.start[other] >= 0)
      return; // the partner has not arrived: it starts the transfer
    res_.start[id] = now_;
    res_.start[other] = now_;
    const TaskId send_id = t.kind == TaskKind::send ? id : other;
    const Task& send = w_.task(send_id);
    const Task& recv = w_.task(send.target);
    const P2P& p = p2p(send, recv);
    ++res_.stats.transfers;
    if (p.exclusive) {
      ++res_.stats.exclusive_transfers;
      pause(p.predicted, EventKind::task_end, send_id, 2);
      return;
    }
    const auto paths = static_cast<int>(p.routes.size()); // ecmp-qp: a share on each queue pair's route
    if (paths > 1)
      transfer_flows_[send_id] = paths;
    for (const std::vector<int>& route : p.routes) {
      ++res_.stats.flows;
      start_flow(route, p.wire / paths, MaxMinNetwork::kUnbounded, {FlowOwner::transfer, send_id});
    }
  }

  /// What a transfer costs, computed once per (sender, receiver, stream, bytes): a pipeline
  /// repeats a few shapes thousands of times.
  struct P2P {
    std::uint32_t to = 0; ///< the receiving rank
    double bytes = 0;
    bool exclusive = false;
    double predicted = 0; ///< s on idle links (the delay of an exclusive transfer)
    double wire = 0;      ///< on-wire bytes of its flow
    double extra = 0;     ///< s of latency after its flow
    std::vector<std::vector<int>> routes; ///< its flows' routes, one per queue pair (none: exclusive)
  };

  /// Looked up per (sender, stream), where a rank keeps one or two peers and a few sizes: a
  /// short scan of one small list, where a hash table missed the cache twice per transfer.
  const P2P& p2p(const Task& send, const Task& recv)
  {
    auto& known = p2p_[send.rank * kStreamCount + static_cast<std::size_t>(send.stream)];
    for (const P2P& p : known)
      if (p.to == recv.rank && p.bytes == send.amount)
        return p;
    const int from = static_cast<int>(send.rank);
    const int to = static_cast<int>(recv.rank);
    P2P p;
    p.to = recv.rank;
    p.bytes = send.amount;
    auto ex = p2p_exclusive_.find(std::make_tuple(send.rank, recv.rank, static_cast<int>(send.stream)));
    p.exclusive = ex != p2p_exclusive_.end() && ex->second;
    if (p.exclusive) {
      p.predicted = c_.p2p_predicted(from, to, send.amount);
    } else {
      p.wire = wire(c_.p2p_wire_bytes(from, to, send.amount));
      p.extra = c_.p2p_extra_latency(from, to, send.amount);
      p.routes.resize(static_cast<std::size_t>(cg_.paths()));
      for (std::size_t q = 0; q < p.routes.size(); ++q)
        cg_.route(from, to, p.routes[q], static_cast<int>(q));
    }
    known.push_back(std::move(p));
    return known.back();
  }

  // ---- collectives ----

  void arrive_collective(TaskId id, const Task& t)
  {
    set_state(id, kArrived);
    CallRun& cr = calls_[t.target];
    cr.stream = t.stream;
    if (++cr.arrived < cr.present)
      return;
    cr.arrived = 0;
    ++res_.stats.collectives;
    for_members(t.target, [this](TaskId m) { res_.start[m] = now_; });
    if (cr.exclusive) {
      ++res_.stats.exclusive_collectives;
      pause(cr.plan->predicted_s, EventKind::call_end, t.target, 1);
      return;
    }
    cr.phase = 0;
    start_phase(t.target);
  }

  /// Calls `fn` with the task of every simulated member of `call` (each is at that call now).
  template <class Fn> void for_members(std::uint32_t call, Fn fn)
  {
    const auto& group = w_.groups()[w_.collectives()[call].group].ranks;
    const auto s = static_cast<std::uint32_t>(calls_[call].stream);
    for (std::uint32_t r : group)
      if (w_.simulated(r)) {
        const StreamRun& st = streams_[r * kStreamCount + s];
        fn(st.cur);
      }
  }

  void start_phase(std::uint32_t call)
  {
    CallRun& cr = calls_[call];
    const ExecPlan& plan = *cr.plan;
    if (cr.phase == plan.phases.size()) {
      pause(plan.base_latency, EventKind::call_end, call, cr.present);
      return;
    }
    const ExecPhase& ph = plan.phases[cr.phase];
    const auto& group = w_.groups()[w_.collectives()[call].group].ranks;
    cr.outstanding = 0;
    for (const PlannedFlow& f : ph.flows) {
      const std::uint32_t a = group[f.src];
      const std::uint32_t b = group[f.dst];
      if (!w_.simulated(a) && !w_.simulated(b))
        continue; // mirrors one that is simulated
      const int paths = cg_.paths(); // ecmp-qp: a share on each queue pair's route, each paced alike
      for (int q = 0; q < paths; ++q) {
        route_.clear();
        cg_.route(static_cast<int>(a), static_cast<int>(b), route_, q);
        ++cr.outstanding;
        ++res_.stats.flows;
        start_flow(route_, wire(f.bytes) / paths,
                   ph.wire_time > 0 ? f.bytes / paths / ph.wire_time : MaxMinNetwork::kUnbounded,
                   {FlowOwner::call, call});
      }
    }
    if (cr.outstanding == 0)
      phase_done(call);
  }

  void phase_done(std::uint32_t call)
  {
    CallRun& cr = calls_[call];
    pause(cr.plan->phases[cr.phase].extra_latency, EventKind::phase_end, call, cr.present);
  }

  void next_phase(std::uint32_t call)
  {
    ++calls_[call].phase;
    start_phase(call);
  }

  void finish_call(std::uint32_t call)
  {
    members_.clear();
    for_members(call, [this](TaskId m) { members_.push_back(m); });
    for (TaskId m : members_)
      finish(m);
  }

  // ---- flows ----

  void start_flow(const std::vector<int>& route, double amount, double bound, FlowOwner owner)
  {
    const MaxMinNetwork::FlowId f = net_.start(now_, route, amount, bound);
    if (owners_.size() <= f)
      owners_.resize(f + 1);
    owners_[f] = owner;
  }

  void flow_ended(MaxMinNetwork::FlowId f)
  {
    const FlowOwner o = owners_[f];
    switch (o.kind) {
    case FlowOwner::call:
      if (--calls_[o.id].outstanding == 0)
        phase_done(o.id);
      break;
    case FlowOwner::transfer: {
      if (auto left = transfer_flows_.find(o.id); left != transfer_flows_.end()) {
        if (--left->second > 0)
          break; // another queue pair's share is still on the wire
        transfer_flows_.erase(left);
      }
      const Task& send = w_.task(o.id);
      pause(p2p(send, w_.task(send.target)).extra, EventKind::transfer_end, o.id, 2);
      break;
    }
    case FlowOwner::compute:
      finish(o.id);
      break;
    }
  }

  const Workload& w_;
  CollectiveEngine& c_;
  const ClusterGraph& cg_;
  double speed_;
  ExecutionOptions o_;
  MaxMinNetwork net_;
  ExecutionResult res_;
  /// per task: its state (top two bits) and 1 + the first stream waiting for it (0: none), one
  /// word, so that a task's check and its wake-up read one cache line
  std::vector<std::uint32_t> slot_;
  std::vector<StreamRun> streams_;
  std::vector<CallRun> calls_;
  std::map<std::tuple<std::uint32_t, std::uint32_t, int>, bool> p2p_exclusive_;
  std::vector<std::vector<P2P>> p2p_; ///< per rank and stream: the transfers it has sent
  std::vector<FlowOwner> owners_;
  std::unordered_map<TaskId, int> transfer_flows_; ///< ecmp-qp: a transfer's shares still on the wire
  EventQueue heap_;
  std::vector<std::uint32_t> work_;
  std::vector<int> route_;
  std::vector<TaskId> members_;
  std::uint32_t seq_ = 0;
  double now_ = 0;
  std::size_t events_ = 0;
  std::size_t instants_ = 0;
  bool compute_as_delay_ = true;
  /// Per rank: when its host finished issuing its last compute task (empty: no host costs).
  std::vector<double> host_;
};

} // namespace

ExecutionResult execute_events(const Workload& w, CollectiveEngine& collectives, double host_speed,
                               const ExecutionOptions& options, EventEngineStats* stats)
{
  EventRun run(w, collectives, host_speed, options);
  return run.go(stats);
}

} // namespace clustersim
