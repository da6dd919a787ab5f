#include "sim/simgrid/Executor.hpp"

#include "sim/ExclusiveLinks.hpp"
#include "sim/simgrid/HostToHostRate.hpp"

#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace sg4 = simgrid::s4u;

namespace clustersim {
namespace {

class Run;

/// One (rank, stream): an actor body and what others need to wake it or send to it.
struct Worker {
  Run* run = nullptr;
  std::uint32_t rank = 0;
  Stream stream = Stream::compute;
  const std::vector<TaskId>* program = nullptr;
  sg4::ActorPtr actor;
  std::uint32_t index = 0;             ///< in Run::workers_
  std::uint32_t next_waiter = 0;       ///< 1 + index of the next worker waiting for the same task, 0: none
  std::size_t cursor = 0;              ///< next task of the program (advanced by helpers too)
  std::vector<std::uint32_t> deferred; ///< same-rank workers this one finished a task for, not yet woken
  sg4::Mailbox* mailbox = nullptr;
  std::vector<int*> slots;

  void operator()();
  /// Blocks until another worker calls wake(). A worker only blocks right after putting itself
  /// on a waiting list, and is woken only from such a list, so a wake never precedes its block
  /// (actors do not interleave between the two).
  void block() { sg4::this_actor::suspend(); }
  void wake();
};

/// Resumes workers from the kernel, not from the waking actor: an actor's resume() is a
/// simcall (a switch to maestro and back), while a kernel timer at the current instant lets
/// maestro resume every worker woken in this round at once, at the same simulated time.
/// Setting a kernel timer from an actor is safe because actors run one at a time in maestro's
/// thread (SimPlatform never enables parallel contexts).
class Waker {
public:
  void wake(sg4::Actor* a)
  {
    pending_.push_back(a);
    if (pending_.size() == 1)
      simgrid::kernel::timer::Timer::set(sg4::Engine::get_clock(), [this] { flush(); });
  }

private:
  void flush()
  {
    std::vector<sg4::Actor*> now;
    now.swap(pending_);
    for (sg4::Actor* a : now)
      a->resume(); // maestro: no simcall
  }
  std::vector<sg4::Actor*> pending_;
};

struct Barrier {
  std::uint32_t arrived = 0;
  std::uint32_t generation = 0;
  std::uint32_t waiting = 0; ///< 1 + the first blocked worker (a list through next_waiter), 0: none
  double opened_at = 0;      ///< when the last member arrived
};

struct Rendezvous {
  bool send_ready = false;
  bool recv_ready = false;
  Worker* waiting = nullptr;
};

/// What the executor knows about a collective call before the simulation starts.
struct CallInfo {
  const ExecPlan* plan = nullptr;
  std::uint32_t present = 0; ///< simulated members
  bool exclusive = false; ///< no other (group, stream) uses its links: runs as a delay of its predicted time
  Barrier barrier;
  bool started = false;
};

class Run {
public:
  Run(const Workload& w, SimPlatform& p, CollectiveEngine& c, const ExecutionOptions& o) : w_(w), p_(p), c_(c), o_(o)
  {
    const auto n = w.tasks().size();
    res_.start.assign(n, -1);
    res_.end.assign(n, -1);
    done_.assign(n, 0);
    waiters_.assign(n, 0);
    calls_.resize(w.collectives().size());
    const WorkloadShape shape = shape_of(w);
    for (std::uint32_t call = 0; call < calls_.size(); ++call)
      calls_[call].present = shape.present[call];
    compute_as_delay_ = shape.one_compute_stream;
    if (w.has_host())
      host_.assign(w.ranks(), 0.0);
  }

  ExecutionResult go()
  {
    help_ = o_.help_streams;
    for (std::uint32_t r = 0; r < w_.ranks() && help_; ++r)
      for (int s = 0; s < kStreamCount; ++s) {
        const auto& prog = w_.program(r, static_cast<Stream>(s));
        for (std::size_t i = 1; i < prog.size(); ++i)
          if (prog[i] <= prog[i - 1])
            help_ = false; // "later in the stream" is read from task ids below
      }
    // Plan every collective before the simulation starts: errors surface here rather than
    // inside an actor, and planning stays out of the simulated time loop.
    for (std::uint32_t call = 0; call < w_.collectives().size(); ++call)
      calls_[call].plan = &c_.plan(w_, call);
    find_exclusive();

    workers_.resize(static_cast<std::size_t>(w_.ranks()) * kStreamCount);
    for (std::uint32_t r = 0; r < w_.ranks(); ++r)
      for (int s = 0; s < kStreamCount; ++s) {
        const auto& prog = w_.program(r, static_cast<Stream>(s));
        if (prog.empty())
          continue;
        Worker& wk = workers_[r * kStreamCount + static_cast<std::size_t>(s)];
        wk.run = this;
        wk.index = r * kStreamCount + static_cast<std::uint32_t>(s);
        wk.rank = r;
        wk.stream = static_cast<Stream>(s);
        wk.program = &prog;
        wk.mailbox = sg4::Mailbox::by_name("r" + std::to_string(r) + "." + to_string(wk.stream));
      }
    for (auto& wk : workers_)
      if (wk.program) {
        wk.actor = sg4::Actor::create("r" + std::to_string(wk.rank) + "." + to_string(wk.stream),
                                      p_.host(static_cast<int>(wk.rank)), [&wk] { wk(); });
        ++res_.stats.actors;
      }
    p_.engine().run();
    close_result(done_, res_);
    return std::move(res_);
  }

private:
  friend struct Worker;

  // ---- used by workers ----

  /// The first dependency of `id` not yet done, or kNoTask.
  TaskId first_undone_dep(TaskId id) const
  {
    for (const TaskId* d = w_.deps_begin(id); d != w_.deps_end(id); ++d)
      if (!done_[*d])
        return *d;
    return kNoTask;
  }

  /// Puts `wk` on the waiting list of task `t` (it is woken when `t` finishes).
  void enlist(Worker& wk, TaskId t)
  {
    wk.next_waiter = waiters_[t];
    waiters_[t] = wk.index + 1;
  }

  /// Runs task `id` of `owner`'s stream on `me` (the owner itself, or a helper) and finishes it.
  void run_task(Worker& me, Worker& owner, TaskId id)
  {
    ++owner.cursor;
    const Task& t = w_.task(id);
    switch (t.kind) {
    case TaskKind::compute:
      wait_for_issue(me, t);
      res_.start[id] = sg4::Engine::get_clock();
      run_compute(me, t);
      break;
    case TaskKind::send:
    case TaskKind::recv:
      run_p2p(me, id, t);
      break;
    case TaskKind::collective:
      run_collective(me, id, t);
      break;
    }
    finish(me, id);
  }

  /// Marks `t` done at the current time. Its waiters are woken, except those of the
  /// finisher's own rank when helping is on: they are deferred to help_or_wake().
  void finish(Worker& me, TaskId t)
  {
    res_.end[t] = sg4::Engine::get_clock();
    done_[t] = 1;
    for (std::uint32_t w = std::exchange(waiters_[t], 0); w != 0;) {
      Worker& wk = workers_[w - 1];
      w = std::exchange(wk.next_waiter, 0);
      if (help_ && wk.rank == me.rank && &wk != &me)
        me.deferred.push_back(wk.index);
      else
        wk.wake();
    }
  }

  /// Whether `me`'s next task waits at least until `x` (a task of another stream of `me`'s
  /// rank) has finished: it depends on `x` or on a later task of that stream, not yet done.
  bool next_waits_for(const Worker& me, TaskId x) const
  {
    if (me.cursor == me.program->size())
      return true; // nothing of mine to delay
    const Task& tx = w_.task(x);
    const TaskId n = (*me.program)[me.cursor];
    for (const TaskId* d = w_.deps_begin(n); d != w_.deps_end(n); ++d) {
      const Task& td = w_.task(*d);
      if (!done_[*d] && *d >= x && td.rank == tx.rank && td.stream == tx.stream)
        return true;
    }
    return false;
  }

  /// Decides for a parked worker `d` of `me`'s rank: true if `me` may run d's next task itself
  /// (it is ready, an exclusive collective, and `me`'s own next task waits for it anyway);
  /// otherwise `d` is put on the list of its next blocker, or woken.
  bool take_over(Worker& me, Worker& d, bool may_help)
  {
    if (d.cursor == d.program->size()) {
      d.wake(); // let it return
      return false;
    }
    const TaskId x = (*d.program)[d.cursor];
    const TaskId blocker = first_undone_dep(x);
    if (blocker != kNoTask) {
      enlist(d, blocker); // it would wake only to wait for this
      return false;
    }
    if (may_help && helpable(x) && next_waits_for(me, x))
      return true;
    d.wake();
    return false;
  }

  /// After `me` finished a task: runs the ready exclusive collectives of at most one deferred
  /// worker's stream (helping blocks `me`, so only one stream can be helped) for as long as
  /// take_over() allows; every other deferred worker is enlisted or woken.
  void help_or_wake(Worker& me)
  {
    Worker* helped = nullptr;
    for (std::uint32_t i : me.deferred)
      if (take_over(me, workers_[i], helped == nullptr))
        helped = &workers_[i];
    me.deferred.clear();
    while (helped) {
      ++res_.stats.helped;
      run_task(me, *helped, (*helped->program)[helped->cursor]);
      // deferred meanwhile: woken (the helped worker is on no list, so it is not among them)
      for (std::uint32_t i : me.deferred)
        workers_[i].wake();
      me.deferred.clear();
      if (!take_over(me, *helped, true))
        helped = nullptr;
    }
  }

  bool helpable(TaskId x) const
  {
    const Task& t = w_.task(x);
    return t.kind == TaskKind::collective && calls_[t.target].exclusive;
  }

  void barrier(Worker& me, Barrier& b, std::uint32_t n)
  {
    if (++b.arrived == n) {
      b.arrived = 0;
      ++b.generation;
      wake_all(b);
      return;
    }
    block_at(me, b);
  }

  /// Blocks `me` on `b` until its generation changes.
  void block_at(Worker& me, Barrier& b)
  {
    const std::uint32_t gen = b.generation;
    while (b.generation == gen) {
      me.next_waiter = b.waiting;
      b.waiting = me.index + 1;
      me.block();
    }
  }

  void wake_all(Barrier& b) { wake_list(std::exchange(b.waiting, 0)); }

  void wake_list(std::uint32_t w)
  {
    while (w != 0) {
      Worker& wk = workers_[w - 1];
      w = std::exchange(wk.next_waiter, 0);
      wk.wake();
    }
  }

  /// Lets `me` sit out `seconds` of simulated time: a kernel timer resumes it (cheaper than a
  /// sleep activity, which SimGrid 3.32 backs with a CPU-model variable).
  void pause(Worker& me, double seconds)
  {
    if (seconds <= 0)
      return;
    ++res_.stats.sleeps;
    delay(me, seconds);
  }

  static void delay(Worker& me, double seconds)
  {
    sg4::Actor* actor = me.actor.get();
    simgrid::kernel::timer::Timer::set(sg4::Engine::get_clock() + seconds, [actor] { actor->resume(); });
    sg4::this_actor::suspend();
  }

  /// The host issues the rank's compute tasks in order, each after the one before: `me` waits
  /// until this one is issued.
  void wait_for_issue(Worker& me, const Task& t)
  {
    if (host_.empty() || t.stream != Stream::compute)
      return;
    const TaskId id = static_cast<TaskId>(&t - w_.tasks().data());
    const double issue = host_[t.rank] = issue_time(w_, id, host_[t.rank], res_.end);
    if (issue <= sg4::Engine::get_clock())
      return;
    ++res_.stats.sleeps;
    sg4::Actor* actor = me.actor.get();
    simgrid::kernel::timer::Timer::set(issue, [actor] { actor->resume(); });
    sg4::this_actor::suspend();
  }

  void run_compute(Worker& me, const Task& t)
  {
    if (t.amount <= 0)
      return;
    ++res_.stats.executions;
    if (compute_as_delay_)
      delay(me, t.amount);
    else
      sg4::this_actor::execute(t.amount * p_.host_speed());
  }

  void run_p2p(Worker& me, TaskId id, const Task& t)
  {
    const bool sender = t.kind == TaskKind::send;
    TaskId key = sender ? id : t.target;
    Rendezvous& rv = rendezvous_[key];
    (sender ? rv.send_ready : rv.recv_ready) = true;
    bool partner = sender ? rv.recv_ready : rv.send_ready;
    if (!partner) {
      rv.waiting = &me;
      while (!(sender ? rv.recv_ready : rv.send_ready))
        me.block();
    } else if (rv.waiting) {
      Worker* w = rv.waiting;
      rv.waiting = nullptr;
      w->wake();
    }
    res_.start[id] = sg4::Engine::get_clock();
    const Task& send = sender ? t : w_.task(t.target);
    const Task& recv = sender ? w_.task(t.target) : t;
    int from = static_cast<int>(send.rank);
    int to = static_cast<int>(recv.rank);
    if (sender)
      ++res_.stats.transfers;
    if (exclusive_p2p(send)) {
      if (sender)
        ++res_.stats.exclusive_transfers;
      pause(me, c_.p2p_predicted(from, to, send.amount));
    } else {
      if (sender) {
        Worker& dst = worker(recv.rank, recv.stream);
        static int payload = 0;
        ++res_.stats.flows;
        auto comm = dst.mailbox->put_async(&payload, wire(c_.p2p_wire_bytes(from, to, send.amount)));
        comm->wait();
      } else {
        int* slot = nullptr;
        auto comm = me.mailbox->get_async<int>(&slot);
        comm->wait();
      }
      pause(me, c_.p2p_extra_latency(from, to, send.amount));
    }
    if (!sender)
      rendezvous_.erase(key); // both sides are past the rendezvous once the data arrived
  }

  void run_collective(Worker& me, TaskId id, const Task& t)
  {
    const std::uint32_t call = t.target;
    CallInfo& info = calls_[call];
    const auto& group = w_.groups()[w_.collectives()[call].group].ranks;
    const std::uint32_t self = t.member;
    Barrier& b = info.barrier;
    const ExecPlan& plan = *info.plan;
    if (info.exclusive) {
      // Nothing else uses these links: the call takes its predicted time from the moment the
      // last member arrives. That member sleeps it and wakes the others, who wait blocked —
      // one timer per call instead of one per member, with the same clock for everyone.
      if (++b.arrived == info.present) {
        b.arrived = 0;
        b.opened_at = sg4::Engine::get_clock();
        res_.start[id] = b.opened_at;
        ++res_.stats.collectives;
        ++res_.stats.exclusive_collectives;
        pause(me, plan.predicted_s);
        ++b.generation;
        wake_all(b);
      } else {
        block_at(me, b);
        res_.start[id] = b.opened_at;
      }
    } else {
      barrier(me, b, info.present);
      res_.start[id] = sg4::Engine::get_clock();
      if (!std::exchange(info.started, true))
        ++res_.stats.collectives;
      static int payload = 0;
      std::vector<sg4::CommPtr> comms;
      for (const auto& ph : plan.phases) {
        comms.clear();
        auto rate_of = [&ph](const PlannedFlow& f) { return ph.wire_time > 0 ? f.bytes / ph.wire_time : -1.0; };
        for (std::uint32_t f : ph.sends[self]) {
          const PlannedFlow& flow = ph.flows[f];
          std::uint32_t dst_rank = group[flow.dst];
          sg4::CommPtr c;
          if (w_.simulated(dst_rank)) {
            c = worker(dst_rank, t.stream).mailbox->put_init(&payload, wire(flow.bytes));
            if (rate_of(flow) > 0)
              c->set_rate(rate_of(flow));
            c->start();
          } else { // to a mirror: issued host to host
            c = host_to_host(static_cast<int>(t.rank), static_cast<int>(dst_rank), flow.bytes, rate_of(flow));
          }
          comms.push_back(c);
          ++res_.stats.flows;
        }
        // the slots receive the payload pointers of pending gets: size them once, before any
        // get refers to them (growing the vector would leave those gets writing freed memory)
        if (me.slots.size() < ph.receives[self].size())
          me.slots.resize(ph.receives[self].size());
        std::size_t slot = 0;
        for (std::uint32_t f : ph.receives[self]) {
          const PlannedFlow& flow = ph.flows[f];
          std::uint32_t src_rank = group[flow.src];
          if (w_.simulated(src_rank)) {
            comms.push_back(me.mailbox->get_async<int>(&me.slots[slot++]));
          } else { // from a mirror: this side issues it
            sg4::CommPtr c =
                host_to_host(static_cast<int>(src_rank), static_cast<int>(t.rank), flow.bytes, rate_of(flow));
            comms.push_back(c);
            ++res_.stats.flows;
          }
        }
        if (!comms.empty())
          sg4::Comm::wait_all(comms);
        barrier(me, b, info.present);
        pause(me, ph.extra_latency);
      }
      pause(me, plan.base_latency);
    }
  }

  Worker& worker(std::uint32_t rank, Stream s) { return workers_[rank * kStreamCount + static_cast<std::size_t>(s)]; }
  Waker& waker() { return waker_; }

  static std::uint64_t wire(double bytes) { return static_cast<std::uint64_t>(std::ceil(std::max(0.0, bytes))); }

  /// A started comm between two hosts (in SimGrid 3.32 setting both hosts starts it, so the
  /// rate and size are set first; the rate on the CommImpl, which set_rate() does not reach).
  sg4::CommPtr host_to_host(int from, int to, double bytes, double rate)
  {
    sg4::CommPtr c = sg4::Comm::sendto_init();
    if (rate > 0)
      set_host_to_host_rate(*c, rate);
    c->set_payload_size(wire(bytes));
    c->set_source(p_.host(from));
    c->set_destination(p_.host(to));
    return c;
  }

  bool exclusive_p2p(const Task& send) const
  {
    auto it = p2p_exclusive_.find(std::make_tuple(send.rank, w_.task(send.target).rank, static_cast<int>(send.stream)));
    return it != p2p_exclusive_.end() && it->second;
  }

  /// Marks the calls and transfers that cannot be contended (ExclusiveLinks.hpp).
  void find_exclusive()
  {
    if (!o_.delay_when_exclusive)
      return;
    std::vector<const ExecPlan*> plans;
    for (const auto& c : calls_)
      plans.push_back(c.plan);
    ExclusiveUse use = find_exclusive_use(w_, c_.cluster(), plans);
    for (std::uint32_t call = 0; call < calls_.size(); ++call)
      calls_[call].exclusive = use.calls[call];
    p2p_exclusive_ = std::move(use.transfers);
  }

  const Workload& w_;
  SimPlatform& p_;
  CollectiveEngine& c_;
  ExecutionOptions o_;
  ExecutionResult res_;
  std::vector<std::uint8_t> done_;
  std::vector<CallInfo> calls_;
  std::map<std::tuple<std::uint32_t, std::uint32_t, int>, bool> p2p_exclusive_;
  std::vector<Worker> workers_;
  /// Every rank computes on one stream only, so a GPU never runs two kernels at once: a
  /// computation is a delay of its seconds (a kernel timer, no CPU-model solve) rather than an
  /// execution sharing the host's speed.
  Waker waker_;
  bool compute_as_delay_ = true;
  /// Per rank: when its host finished issuing its last compute task (empty: no host costs).
  std::vector<double> host_;
  bool help_ = false;
  std::vector<std::uint32_t> waiters_; ///< per task: 1 + the first worker waiting for it (a list through next_waiter)
  std::unordered_map<TaskId, Rendezvous> rendezvous_;
};

void Worker::wake()
{
  run->waker().wake(actor.get());
}

void Worker::operator()()
{
  const std::vector<TaskId>& prog = *program;
  while (cursor < prog.size()) {
    const TaskId id = prog[cursor];
    const TaskId blocker = run->first_undone_dep(id);
    if (blocker != kNoTask) {
      run->enlist(*this, blocker);
      block();
      continue; // a helper may have run tasks of this stream meanwhile
    }
    run->run_task(*this, *this, id);
    run->help_or_wake(*this);
  }
}

} // namespace

ExecutionResult execute(const Workload& w, SimPlatform& platform, CollectiveEngine& collectives,
                        const ExecutionOptions& options)
{
  if (collectives.cluster().paths() > 1) // the experiment refuses this at simulation.engine
    throw std::logic_error("SimGrid routes one path per GPU pair; ecmp-qp's queue pairs need the event engine");
  Run run(w, platform, collectives, options);
  return run.go();
}

} // namespace clustersim
