#include "Breakdown.hpp"

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

/// Attributes [from, to) to task d: its running part to its category, earlier to bubble.
void attribute(Breakdown& b, const Workload& w, const ExecutionResult& r, TaskId d, double from, double to)
{
  if (to <= from)
    return;
  const Task& t = w.task(d);
  if (t.kind == TaskKind::compute) {
    b.other += to - from; // another stream's compute (not emitted by current strategies)
    return;
  }
  double running = std::max(from, std::min(to, r.start[d]));
  b.bubble += running - from;
  comm_slot(b, t.category) += to - running;
}

} // namespace

Breakdown analyze_rank(const Workload& w, const ExecutionResult& r, std::uint32_t rank)
{
  Breakdown b;
  b.rank = rank;
  b.step = r.makespan;
  const auto& prog = w.program(rank, Stream::compute);
  double cursor = 0;
  for (TaskId id : prog) {
    const Task& t = w.task(id);
    double gap_end = r.start[id];
    if (gap_end > cursor) {
      // what the task waited for: its latest-finishing dependency
      TaskId blocker = static_cast<TaskId>(-1);
      double latest = -1;
      for (const TaskId* d = w.deps_begin(id); d != w.deps_end(id); ++d)
        if (r.end[*d] > latest) {
          latest = r.end[*d];
          blocker = *d;
        }
      if (blocker == static_cast<TaskId>(-1))
        b.other += gap_end - cursor;
      else
        attribute(b, w, r, blocker, cursor, gap_end);
    }
    double dur = r.end[id] - r.start[id];
    if (t.category == Category::optimizer)
      b.optimizer += dur;
    else {
      b.compute += dur;
      if (t.category == Category::recompute)
        b.recompute += dur;
    }
    cursor = std::max(cursor, r.end[id]);
  }
  // tail: the rank's other streams still running, then idle until the slowest rank is done
  while (cursor < b.step) {
    TaskId last = static_cast<TaskId>(-1);
    double latest = cursor;
    for (int s = 1; s < kStreamCount; ++s)
      for (TaskId id : w.program(rank, static_cast<Stream>(s)))
        if (r.end[id] > latest) {
          latest = r.end[id];
          last = id;
        }
    if (last == static_cast<TaskId>(-1)) {
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
  std::uint32_t best = 0;
  double best_busy = -1;
  for (std::uint32_t rank = 0; rank < w.ranks(); ++rank) {
    double busy = 0;
    for (TaskId id : w.program(rank, Stream::compute))
      busy += r.end[id] - r.start[id];
    if (busy > best_busy + 1e-12) {
      best_busy = busy;
      best = rank;
    }
  }
  return best;
}

} // namespace clustersim
