#include "Executor.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include <cmath>
#include <stdexcept>
#include <string>
#include <unordered_map>

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
  sg4::SemaphorePtr sem;
  sg4::Mailbox* mailbox = nullptr;
  std::vector<int*> slots;

  void operator()();
  void block() { sem->acquire(); }
  void wake() { sem->release(); }
};

struct Barrier {
  std::uint32_t arrived = 0;
  std::uint32_t generation = 0;
  std::vector<Worker*> waiting;
};

struct Rendezvous {
  bool send_ready = false;
  bool recv_ready = false;
  Worker* waiting = nullptr;
};

class Run {
public:
  Run(const Workload& w, SimPlatform& p, CollectiveEngine& c) : w_(w), p_(p), c_(c)
  {
    const auto n = w.tasks().size();
    res_.ready.assign(n, -1);
    res_.start.assign(n, -1);
    res_.end.assign(n, -1);
    done_.assign(n, 0);
    first_member_.assign(w.collectives().size(), 0);
    std::vector<bool> seen(w.collectives().size(), false);
    for (TaskId t = 0; t < n; ++t) {
      const Task& task = w.task(t);
      if (task.kind == TaskKind::collective && !seen[task.target]) {
        seen[task.target] = true;
        first_member_[task.target] = t;
      }
    }
  }

  ExecutionResult go()
  {
    // Plan every collective before the simulation starts: errors surface here rather than
    // inside an actor, and planning stays out of the simulated time loop.
    for (std::uint32_t call = 0; call < w_.collectives().size(); ++call)
      c_.plan(w_, call);
    workers_.resize(static_cast<std::size_t>(w_.ranks()) * kStreamCount);
    for (std::uint32_t r = 0; r < w_.ranks(); ++r)
      for (int s = 0; s < kStreamCount; ++s) {
        const auto& prog = w_.program(r, static_cast<Stream>(s));
        if (prog.empty())
          continue;
        Worker& wk = workers_[r * kStreamCount + static_cast<std::size_t>(s)];
        wk.run = this;
        wk.rank = r;
        wk.stream = static_cast<Stream>(s);
        wk.program = &prog;
        wk.sem = sg4::Semaphore::create(0);
        wk.mailbox = sg4::Mailbox::by_name("r" + std::to_string(r) + "." + to_string(wk.stream));
      }
    for (auto& wk : workers_)
      if (wk.program) {
        sg4::Actor::create("r" + std::to_string(wk.rank) + "." + to_string(wk.stream),
                           p_.host(static_cast<int>(wk.rank)), [&wk] { wk(); });
        ++res_.stats.actors;
      }
    p_.engine().run();
    std::size_t missing = 0;
    for (auto d : done_)
      missing += d ? 0 : 1;
    if (missing)
      throw std::logic_error("workload deadlocked: " + std::to_string(missing) + " of " + std::to_string(done_.size()) +
                             " tasks never ran");
    for (double e : res_.end)
      res_.makespan = std::max(res_.makespan, e);
    return std::move(res_);
  }

  // ---- used by workers ----
  void wait_for(Worker& me, TaskId t)
  {
    while (!done_[t]) {
      waiters_[t].push_back(&me);
      me.block();
    }
  }

  void finish(TaskId t)
  {
    res_.end[t] = sg4::Engine::get_clock();
    done_[t] = 1;
    auto it = waiters_.find(t);
    if (it == waiters_.end())
      return;
    std::vector<Worker*> ws = std::move(it->second);
    waiters_.erase(it);
    for (Worker* w : ws)
      w->wake();
  }

  void barrier(Worker& me, Barrier& b, std::uint32_t n)
  {
    if (++b.arrived == n) {
      b.arrived = 0;
      ++b.generation;
      std::vector<Worker*> ws = std::move(b.waiting);
      b.waiting.clear();
      for (Worker* w : ws)
        w->wake();
      return;
    }
    std::uint32_t gen = b.generation;
    while (b.generation == gen) {
      b.waiting.push_back(&me);
      me.block();
    }
  }

  void pause(double seconds)
  {
    if (seconds <= 0)
      return;
    ++res_.stats.sleeps;
    sg4::this_actor::sleep_for(seconds);
  }

  void run_compute(const Task& t)
  {
    if (t.amount <= 0)
      return;
    ++res_.stats.executions;
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
      rendezvous_.erase(key); // both sides are past the rendezvous once the data arrived
    }
    pause(c_.p2p_extra_latency(from, to, send.amount));
  }

  void run_collective(Worker& me, TaskId id, const Task& t)
  {
    const std::uint32_t call = t.target;
    const auto& group = w_.groups()[w_.collectives()[call].group].ranks;
    const auto n = static_cast<std::uint32_t>(group.size());
    const std::uint32_t self = id - first_member_[call];
    Barrier& b = barriers_[call];
    barrier(me, b, n);
    res_.start[id] = sg4::Engine::get_clock();
    if (self == 0)
      ++res_.stats.collectives;
    const ExecPlan& plan = c_.plan(w_, call);
    static int payload = 0;
    std::vector<sg4::CommPtr> comms;
    for (const auto& ph : plan.phases) {
      comms.clear();
      for (std::uint32_t f : ph.sends[self]) {
        const PlannedFlow& flow = ph.flows[f];
        Worker& dst = worker(group[flow.dst], t.stream);
        sg4::CommPtr c = dst.mailbox->put_init(&payload, wire(flow.bytes));
        if (ph.wire_time > 0)
          c->set_rate(flow.bytes / ph.wire_time);
        c->start();
        comms.push_back(c);
        ++res_.stats.flows;
      }
      if (me.slots.size() < ph.receives[self])
        me.slots.resize(ph.receives[self]);
      for (std::uint32_t k = 0; k < ph.receives[self]; ++k)
        comms.push_back(me.mailbox->get_async<int>(&me.slots[k]));
      if (!comms.empty())
        sg4::Comm::wait_all(comms);
      barrier(me, b, n);
      pause(ph.extra_latency);
    }
    pause(plan.base_latency);
    if (++collective_done_[call] == n) {
      collective_done_.erase(call);
      barriers_.erase(call);
    }
  }

  Worker& worker(std::uint32_t rank, Stream s) { return workers_[rank * kStreamCount + static_cast<std::size_t>(s)]; }
  const Workload& workload() const { return w_; }
  ExecutionResult& result() { return res_; }

private:
  static std::uint64_t wire(double bytes) { return static_cast<std::uint64_t>(std::ceil(std::max(0.0, bytes))); }

  const Workload& w_;
  SimPlatform& p_;
  CollectiveEngine& c_;
  ExecutionResult res_;
  std::vector<std::uint8_t> done_;
  std::vector<TaskId> first_member_;
  std::vector<Worker> workers_;
  std::unordered_map<TaskId, std::vector<Worker*>> waiters_;
  std::unordered_map<std::uint32_t, Barrier> barriers_;
  std::unordered_map<std::uint32_t, std::uint32_t> collective_done_;
  std::unordered_map<TaskId, Rendezvous> rendezvous_;
};

void Worker::operator()()
{
  const Workload& w = run->workload();
  ExecutionResult& res = run->result();
  for (TaskId id : *program) {
    for (const TaskId* d = w.deps_begin(id); d != w.deps_end(id); ++d)
      run->wait_for(*this, *d);
    const double now = sg4::Engine::get_clock();
    res.ready[id] = now;
    const Task& t = w.task(id);
    switch (t.kind) {
    case TaskKind::compute:
      res.start[id] = now;
      run->run_compute(t);
      break;
    case TaskKind::send:
    case TaskKind::recv:
      run->run_p2p(*this, id, t);
      break;
    case TaskKind::collective:
      run->run_collective(*this, id, t);
      break;
    }
    run->finish(id);
  }
}

} // namespace

ExecutionResult execute(const Workload& w, SimPlatform& platform, CollectiveEngine& collectives)
{
  Run run(w, platform, collectives);
  return run.go();
}

} // namespace clustersim
