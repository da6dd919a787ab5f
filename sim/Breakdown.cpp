#include "sim/Breakdown.hpp"

#include <algorithm>

namespace clustersim {
namespace {

double& comm_slot(Breakdown& b, Category c)
{
  switch (c) {
  case Category::tp_comm:
    return b.exposed_tp;
  case Category::cp_comm:
    return b.exposed_cp;
  case Category::pp_comm:
    return b.exposed_pp;
  case Category::dp_comm:
    return b.exposed_dp;
  case Category::ep_comm:
    return b.exposed_ep;
  default:
    return b.other;
  }
}

/// The task that finished last among d's dependencies and its stream predecessor.
TaskId blocker_of(const Workload& w, const ExecutionResult& r, TaskId d)
{
  TaskId best = kNoTask;
  double latest = -1;
  for (const TaskId* x = w.deps_begin(d); x != w.deps_end(d); ++x)
    if (r.end[*x] > latest) {
      latest = r.end[*x];
      best = *x;
    }
  const TaskId before = w.previous(d);
  if (before != kNoTask && r.end[before] > latest)
    best = before;
  return best;
}

/// Attributes [from, to) to what kept the compute stream waiting on task d: while d ran, its
/// category; while d waited for its peers (a collective's other members, a transfer's other
/// side), bubble; before d was even ready, whatever d itself waited for (its stream
/// predecessor or a dependency), recursively.
void attribute(Breakdown& b, const Workload& w, const ExecutionResult& r, TaskId d, double from, double to)
{
  while (to > from) {
    const Task& t = w.task(d);
    if (t.kind == TaskKind::compute && (t.stream == Stream::compute || !is_communication(t.category))) {
      b.other += to - from; // another stream's compute
      return;
    }
    double running = std::max(from, std::min(to, r.start[d]));
    comm_slot(b, t.category) += to - running;
    // a communication stream's own kernel (torch's list-collective copies) waits for nobody
    double ready = t.kind == TaskKind::compute ? running : std::max(from, std::min(running, ready_time(w, r, d)));
    b.bubble += running - ready;
    to = ready;
    if (to <= from)
      return;
    TaskId next = blocker_of(w, r, d);
    if (next == kNoTask) {
      b.other += to - from;
      return;
    }
    d = next;
  }
}

} // namespace

TaskId latest_dependency(const Workload& w, const ExecutionResult& r, TaskId id)
{
  TaskId blocker = kNoTask;
  double latest = -1;
  for (const TaskId* d = w.deps_begin(id); d != w.deps_end(id); ++d)
    if (r.end[*d] > latest) {
      latest = r.end[*d];
      blocker = *d;
    }
  return blocker;
}

Breakdown analyze_rank(const Workload& w, const ExecutionResult& r, std::uint32_t rank)
{
  Breakdown b;
  b.rank = rank;
  b.step = r.makespan;
  double cursor = 0;
  for (TaskId id : w.stream(rank, Stream::compute)) {
    const Task& t = w.task(id);
    double gap_end = r.start[id];
    if (gap_end > cursor) {
      // once the task was ready, the GPU waited for the host to issue it
      const double ready = std::max(cursor, std::min(gap_end, ready_time(w, r, id)));
      b.host += gap_end - ready;
      gap_end = ready;
    }
    if (gap_end > cursor) {
      // what the task waited for: its latest-finishing dependency
      const TaskId blocker = latest_dependency(w, r, id);
      if (blocker == kNoTask)
        b.other += gap_end - cursor;
      else
        attribute(b, w, r, blocker, cursor, gap_end);
    }
    double dur = r.end[id] - r.start[id];
    if (t.category == Category::optimizer)
      b.optimizer += dur;
    else if (t.category == Category::recompute)
      b.recompute += dur;
    else
      b.compute += dur;
    cursor = std::max(cursor, r.end[id]);
  }
  // tail: the rank's other streams still running, then idle until the slowest rank is done
  while (cursor < b.step) {
    TaskId last = kNoTask;
    double latest = cursor;
    for (int s = 1; s < kStreamCount; ++s)
      for (TaskId id : w.stream(rank, static_cast<Stream>(s)))
        if (r.end[id] > latest) {
          latest = r.end[id];
          last = id;
        }
    if (last == kNoTask) {
      b.bubble += b.step - cursor;
      break;
    }
    attribute(b, w, r, last, cursor, latest);
    cursor = latest;
  }
  return b;
}

std::uint32_t busiest_rank(const Workload& w, const ExecutionResult& r)
{
  // one pass over the tasks in id order: a stream's ids increase, so each rank's sum is added in
  // its stream's order (walking 16k streams by next() chased a pointer per task)
  std::vector<double> busy_of(w.ranks(), 0.0);
  const auto& tasks = w.tasks();
  for (TaskId id = 0; id < tasks.size(); ++id)
    if (tasks[id].stream == Stream::compute)
      busy_of[tasks[id].rank] += r.end[id] - r.start[id];
  std::uint32_t best = 0;
  double best_busy = -1;
  for (std::uint32_t rank = 0; rank < w.ranks(); ++rank) {
    const double busy = busy_of[rank];
    if (busy > best_busy + 1e-12) {
      best_busy = busy;
      best = rank;
    }
  }
  return best;
}

} // namespace clustersim
