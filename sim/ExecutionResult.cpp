#include "sim/ExecutionResult.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace clustersim {

double issue_time(const Workload& w, TaskId id, double host_clock, const std::vector<double>& end)
{
  const Task& t = w.task(id);
  for (const TaskId* d = w.deps_begin(id); d != w.deps_end(id); ++d)
    if (w.task(*d).host_sync)
      host_clock = std::max(host_clock, end[*d]);
  return host_clock + t.host_seconds();
}

double ready_time(const Workload& w, const ExecutionResult& r, TaskId id)
{
  const TaskId prev = w.previous(id);
  double ready = prev == kNoTask ? 0.0 : r.end[prev];
  for (const TaskId* d = w.deps_begin(id); d != w.deps_end(id); ++d)
    ready = std::max(ready, r.end[*d]);
  return ready;
}

WorkloadShape shape_of(const Workload& w)
{
  // the workload counts both as it is built: a pass over tens of millions of tasks here cost a
  // sixth of the event engine's set-up at 16k GPUs
  WorkloadShape shape;
  shape.present.reserve(w.collectives().size());
  for (const CollectiveCall& c : w.collectives())
    shape.present.push_back(c.present);
  shape.one_compute_stream = w.one_compute_stream();
  return shape;
}

void close_result(const std::vector<std::uint8_t>& done, ExecutionResult& result)
{
  std::size_t missing = 0;
  for (auto d : done)
    missing += d ? 0 : 1;
  if (missing)
    throw std::logic_error("workload deadlocked: " + std::to_string(missing) + " of " + std::to_string(done.size()) +
                           " tasks never ran");
  for (double e : result.end)
    result.makespan = std::max(result.makespan, e);
}

} // namespace clustersim
