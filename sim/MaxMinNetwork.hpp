#pragma once
/// Flows sharing capacities, max-min fair with per-flow bounds, solved incrementally: the
/// sharing SimGrid's CM02 model computes for the same links and routes (equal weights, no
/// latency, TCP-gamma off; see SimPlatform), without SimGrid.
///
/// A flow moves `amount` units over a route of resources at a rate no higher than its bound
/// (its pacing rate, and always its route's narrowest capacity). Rates are the unique max-min
/// fair allocation: a flow is either at its bound or crosses a saturated resource on which no
/// other flow gets more (Bertsekas & Gallager, Data Networks, §6.5.2, with bounds).
///
/// Changes are collected during a simulated instant and settled by solve(), incrementally:
///  * a new flow whose every resource has room for its bound starts at its bound;
///  * an ending flow frees capacity on resources where nobody is held back (not saturated, or
///    every flow there at its bound): nobody's rate changes;
///  * otherwise only the component reached from the changed resources through binding ones
///    (saturated, with a flow below its bound) is filled again, progressively, with the resources
///    at its border offering their residual capacity. A border resource that binds a flow of
///    the component while a flow outside gets more there joins the component, which is filled
///    again.
/// Either way the result is the max-min allocation of all flows (tests/test_engines.cpp holds
/// it to closed forms and to SimGrid).

#include "strategies/workload/InlineVector.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace clustersim {

struct MaxMinStats {
  std::size_t flows = 0;       ///< flows started
  std::size_t fast_starts = 0; ///< started at their bound without a solve
  std::size_t fast_ends = 0;   ///< ended without a solve
  std::size_t solves = 0;      ///< component fillings
  std::size_t solved_flows = 0; ///< flows in those components, summed
  std::size_t largest_component = 0;
  std::size_t peak_active = 0; ///< most flows alive at once
};

class MaxMinNetwork {
public:
  using FlowId = std::uint32_t;
  static constexpr double kUnbounded = std::numeric_limits<double>::infinity();

  /// One resource per capacity (units per second, > 0; 0 is a failed resource: flows crossing it
  /// never end).
  /// `incremental` false: every solve fills every flow again from scratch (slow; to test that
  /// the incremental solve gives the same rates).
  explicit MaxMinNetwork(std::vector<double> capacities, bool incremental = true);

  /// Starts a flow at `now`: `amount` units over `route` (resource indices, each at most once),
  /// at most `bound` units/s. Its rate is set by the next solve().
  FlowId start(double now, const std::vector<int>& route, double amount, double bound = kUnbounded);

  /// Settles the rates after this instant's starts and ends.
  void solve(double now);

  /// When the earliest active flow ends at its current rate (infinity when none).
  double next_end();
  /// Removes the flow that ends at next_end() (call with now == next_end()) and returns it. Its
  /// capacity is released for the next solve().
  FlowId pop_end(double now);

  double rate(FlowId f) const { return flows_[f].rate; }
  std::size_t active() const { return active_; }
  const MaxMinStats& stats() const { return stats_; }
  double capacity(int r) const { return res_[static_cast<std::size_t>(r)].capacity; }
  /// Sum of the rates of the flows crossing resource `r`.
  double load(int r) const { return res_[static_cast<std::size_t>(r)].load; }

private:
  struct Hop {
    int resource = 0;
    std::uint32_t slot = 0; ///< position in the resource's flow list
  };
  struct Flow {
    double remaining = 0;
    double updated = 0; ///< when `remaining` was last brought up to date
    double rate = 0;
    double bound = 0;
    std::uint32_t version = 0; ///< invalidates older entries of the end heap
    std::uint32_t mark = 0;    ///< component epoch
    std::uint32_t pending = 0; ///< 1 while its rate awaits a solve
    bool alive = false;
    InlineVector<Hop, 8> route; ///< inline: a fat-tree route crosses at most 8 resources
  };
  struct Resource {
    double capacity = 0;
    double load = 0;
    std::uint32_t below = 0; ///< alive flows with a rate below their bound
    std::uint32_t mark = 0;  ///< component epoch
    std::uint8_t role = 0;   ///< in the current component: 1 interior, 2 border
    std::uint32_t dirty = 0; ///< epoch at which it was marked changed
    std::vector<FlowId> flows;
  };
  struct End {
    double time;
    FlowId flow;
    std::uint32_t version;
    bool operator>(const End& o) const { return time != o.time ? time > o.time : flow > o.flow; }
  };

  bool saturated(const Resource& r) const;
  bool binding(const Resource& r) const { return r.below > 0 && saturated(r); }
  void set_rate(FlowId f, double rate, double now);
  void push_end(FlowId f);
  void detach(FlowId f);
  void mark_dirty(int r);
  void fill_component(double now);
  void grow_component(std::uint32_t ep);
  void prepare_fill();
  void progressive_fill(std::uint32_t ep);
  bool absorb_border(std::uint32_t ep);

  std::vector<Resource> res_;
  std::vector<Flow> flows_;
  std::vector<FlowId> free_;
  std::vector<FlowId> pending_;
  std::vector<int> dirty_;
  std::vector<End> heap_;
  std::uint32_t epoch_ = 1;
  bool incremental_ = true;
  bool changed_ = false; ///< a flow started or ended since the last solve
  std::size_t active_ = 0;
  MaxMinStats stats_;
  // component scratch
  std::vector<FlowId> comp_flows_;
  std::vector<int> comp_res_;
  std::vector<double> avail_;    ///< per resource, valid for the component's
  std::vector<std::uint32_t> unfixed_;
  std::vector<double> new_rate_; ///< per flow slot
  std::vector<int> limiter_;     ///< per flow slot: resource whose share fixed it, -1: its bound
  std::vector<double> share_;    ///< per resource: the share at which it fixed flows, -1: none
  std::vector<int> queue_;
  std::vector<std::pair<double, FlowId>> by_bound_;
  std::vector<std::pair<double, int>> heap_scratch_;
};

} // namespace clustersim
