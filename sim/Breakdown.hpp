#pragma once
/// Where the step time of one rank went. The rank's compute stream is busy (compute,
/// recompute, optimizer) or idle; every idle gap is attributed to what the next compute task
/// waited for: the part of a communication task's run that overlaps the gap is exposed
/// communication of its kind, the part before it started (waiting for other ranks to arrive)
/// is bubble. The tail after the last compute goes to whatever the rank still ran, the rest
/// to bubble. A gap after the next compute task was ready is host-bound: the GPU waited for the
/// host to issue it. By construction the terms sum to the step time.

#include "sim/ExecutionResult.hpp"
#include "strategies/workload/Workload.hpp"

namespace clustersim {

struct Breakdown {
  std::uint32_t rank = 0;
  double step = 0;
  double compute = 0;   ///< forward + backward (recompute apart: the terms add up to the step)
  double recompute = 0; ///< recomputed forward passes
  double optimizer = 0;
  double exposed_tp = 0;
  double exposed_cp = 0;
  double exposed_pp = 0;
  double exposed_dp = 0;
  double exposed_ep = 0;
  double bubble = 0;
  double host = 0; ///< the compute stream idle, its next task ready but not yet issued by the host
  double other = 0;

  double exposed_comm() const { return exposed_tp + exposed_cp + exposed_pp + exposed_dp + exposed_ep; }
};

Breakdown analyze_rank(const Workload& w, const ExecutionResult& r, std::uint32_t rank);

/// What task `id` waited for: its dependency that finished last (kNoTask if it has none).
TaskId latest_dependency(const Workload& w, const ExecutionResult& r, TaskId id);

/// The rank whose compute stream is busiest (the critical path's owner); lowest id on ties.
std::uint32_t busiest_rank(const Workload& w, const ExecutionResult& r);

} // namespace clustersim
