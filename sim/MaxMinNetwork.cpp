#include "sim/MaxMinNetwork.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>

namespace clustersim {
namespace {

/// Relative slack of the saturation and room tests: paced flows fill their busiest resource to
/// its capacity up to rounding (their bounds are bytes / (load / capacity)).
constexpr double kSlack = 1e-9;
/// SimGrid's maxmin precision x timing precision (1e-5 x 1e-9): a flow with less left is done.
constexpr double kRemainingPrecision = 1e-14;

} // namespace

MaxMinNetwork::MaxMinNetwork(std::vector<double> capacities, bool incremental) : incremental_(incremental)
{
  res_.resize(capacities.size());
  for (std::size_t i = 0; i < capacities.size(); ++i)
    res_[i].capacity = capacities[i];
  avail_.assign(res_.size(), 0);
  unfixed_.assign(res_.size(), 0);
  share_.assign(res_.size(), -1);
}

bool MaxMinNetwork::saturated(const Resource& r) const
{
  return r.load >= r.capacity * (1 - kSlack);
}

MaxMinNetwork::FlowId MaxMinNetwork::start(double now, const std::vector<int>& route, double amount, double bound)
{
  FlowId f;
  if (!free_.empty()) {
    f = free_.back();
    free_.pop_back();
  } else {
    f = static_cast<FlowId>(flows_.size());
    flows_.emplace_back();
    new_rate_.push_back(0);
    limiter_.push_back(-1);
  }
  Flow& fl = flows_[f];
  fl.remaining = std::max(0.0, amount);
  fl.updated = now;
  fl.rate = 0;
  fl.bound = bound > 0 ? bound : kUnbounded;
  fl.pending = 1;
  fl.alive = true;
  fl.mark = 0;
  fl.route.clear();
  for (int r : route) {
    Resource& res = res_[static_cast<std::size_t>(r)];
    fl.bound = std::min(fl.bound, res.capacity); // no flow outruns its narrowest resource
    fl.route.push_back({r, static_cast<std::uint32_t>(res.flows.size())});
    res.flows.push_back(f);
  }
  pending_.push_back(f);
  changed_ = true;
  ++active_;
  ++stats_.flows;
  stats_.peak_active = std::max(stats_.peak_active, active_);
  return f;
}

void MaxMinNetwork::push_end(FlowId f)
{
  Flow& fl = flows_[f];
  ++fl.version;
  double t;
  if (fl.remaining <= 0)
    t = fl.updated;
  else if (fl.rate <= 0)
    return; // never ends (a failed resource): the workload reports the deadlock
  else
    t = fl.updated + fl.remaining / fl.rate; // as SimGrid's lazy update dates an action
  heap_.push_back({t, f, fl.version});
  std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
}

void MaxMinNetwork::set_rate(FlowId f, double rate, double now)
{
  Flow& fl = flows_[f];
  const bool was_below = !fl.pending && fl.rate < fl.bound * (1 - kSlack);
  const double old = fl.pending ? 0.0 : fl.rate;
  if (!fl.pending) {
    fl.remaining -= fl.rate * (now - fl.updated);
    if (fl.remaining < kRemainingPrecision) // SimGrid's double_update: what is left below it is done
      fl.remaining = 0;
  }
  fl.updated = now;
  fl.rate = rate;
  fl.pending = 0;
  const bool below = rate < fl.bound * (1 - kSlack);
  for (const Hop& h : fl.route) {
    Resource& r = res_[static_cast<std::size_t>(h.resource)];
    r.load += rate - old;
    r.below += below ? 1 : 0;
    r.below -= was_below ? 1 : 0;
  }
  push_end(f);
}

void MaxMinNetwork::mark_dirty(int r)
{
  Resource& res = res_[static_cast<std::size_t>(r)];
  if (res.dirty == epoch_)
    return;
  res.dirty = epoch_;
  dirty_.push_back(r);
}

void MaxMinNetwork::solve(double now)
{
  for (FlowId f : pending_) {
    Flow& fl = flows_[f];
    bool room = true;
    for (const Hop& h : fl.route) {
      const Resource& r = res_[static_cast<std::size_t>(h.resource)];
      room = room && r.capacity - r.load >= fl.bound - kSlack * r.capacity;
    }
    if (room && incremental_) {
      ++stats_.fast_starts;
      set_rate(f, fl.bound, now);
    } else {
      for (const Hop& h : fl.route)
        mark_dirty(h.resource);
    }
  }
  pending_.clear();
  if (!incremental_ && changed_)
    for (std::size_t r = 0; r < res_.size(); ++r)
      if (!res_[r].flows.empty())
        mark_dirty(static_cast<int>(r));
  changed_ = false;
  if (!dirty_.empty())
    fill_component(now);
}

double MaxMinNetwork::next_end()
{
  while (!heap_.empty()) {
    const End& top = heap_.front();
    const Flow& fl = flows_[top.flow];
    if (fl.alive && fl.version == top.version)
      return top.time;
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
    heap_.pop_back();
  }
  return kUnbounded;
}

MaxMinNetwork::FlowId MaxMinNetwork::pop_end(double now)
{
  next_end();
  const FlowId f = heap_.front().flow;
  std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
  heap_.pop_back();
  Flow& fl = flows_[f];
  fl.remaining = 0;
  fl.updated = now;
  detach(f);
  return f;
}

void MaxMinNetwork::detach(FlowId f)
{
  Flow& fl = flows_[f];
  const bool was_below = !fl.pending && fl.rate < fl.bound * (1 - kSlack);
  const double old = fl.pending ? 0.0 : fl.rate;
  bool freed = false;
  for (const Hop& h : fl.route) {
    Resource& r = res_[static_cast<std::size_t>(h.resource)];
    const bool was_saturated = saturated(r);
    // swap-remove from the resource's list, fixing the moved flow's slot
    const FlowId moved = r.flows.back();
    r.flows[h.slot] = moved;
    r.flows.pop_back();
    if (moved != f)
      for (Hop& mh : flows_[moved].route)
        if (mh.resource == h.resource) {
          mh.slot = h.slot;
          break;
        }
    r.below -= was_below ? 1 : 0;
    if (r.flows.empty()) {
      r.load = 0; // no drift survives an idle resource
      r.below = 0;
    } else {
      r.load -= old;
    }
    if (was_saturated && r.below > 0) { // someone held back here may speed up
      mark_dirty(h.resource);
      freed = true;
    }
  }
  changed_ = true;
  if (!freed)
    ++stats_.fast_ends;
  fl.alive = false;
  fl.route.clear();
  free_.push_back(f);
  --active_;
}

/// Every flow of an interior resource (queued) joins the component; the resources they cross
/// are interior when they bind, else border.
void MaxMinNetwork::grow_component(std::uint32_t ep)
{
  std::vector<int>& queue = queue_;
  while (!queue.empty()) {
    const int r = queue.back();
    queue.pop_back();
    for (FlowId f : res_[static_cast<std::size_t>(r)].flows) {
      Flow& fl = flows_[f];
      if (fl.mark == ep)
        continue;
      fl.mark = ep;
      comp_flows_.push_back(f);
      for (const Hop& h : fl.route) {
        Resource& r2 = res_[static_cast<std::size_t>(h.resource)];
        if (r2.mark == ep)
          continue;
        r2.mark = ep;
        comp_res_.push_back(h.resource);
        r2.role = binding(r2) ? 1 : 2;
        if (r2.role == 1)
          queue.push_back(h.resource);
      }
    }
  }
}

/// What each resource offers the component (all of it inside, the residual at the border), its
/// unfixed flows, and the component's flows by their bound.
void MaxMinNetwork::prepare_fill()
{
  std::vector<std::pair<double, FlowId>>& by_bound = by_bound_;
  for (int r : comp_res_) {
    const Resource& res = res_[static_cast<std::size_t>(r)];
    avail_[static_cast<std::size_t>(r)] = res.role == 1 ? res.capacity : res.capacity - res.load;
    unfixed_[static_cast<std::size_t>(r)] = 0;
  }
  by_bound.clear();
  for (FlowId f : comp_flows_) {
    const Flow& fl = flows_[f];
    for (const Hop& h : fl.route) {
      auto r = static_cast<std::size_t>(h.resource);
      if (res_[r].role == 2 && !fl.pending)
        avail_[r] += fl.rate;
      ++unfixed_[r];
    }
    new_rate_[f] = -1;
    limiter_[f] = -1;
    // an unbounded flow is never fixed at its bound: only a resource's share, or the last
    // loop of progressive_fill (a flow crossing nothing), fixes it, so it is left out
    if (fl.bound < kUnbounded)
      by_bound.emplace_back(fl.bound, f);
  }
  std::sort(by_bound.begin(), by_bound.end());
}

/// Progressive filling of the component: flows fixed at their bound or at the share of the
/// resource that binds them, smallest first.
void MaxMinNetwork::progressive_fill(std::uint32_t ep)
{
  const std::vector<std::pair<double, FlowId>>& by_bound = by_bound_;
  std::vector<double>& share = share_;
  using Key = std::pair<double, int>;
  std::vector<Key>& heap = heap_scratch_; // a binary heap (std::push_heap), smallest share first
  auto key = [this](int r) {
    auto i = static_cast<std::size_t>(r);
    return std::max(0.0, avail_[i]) / unfixed_[i];
  };
  heap.clear();
  auto push = [&heap](double k, int r) {
    heap.emplace_back(k, r);
    std::push_heap(heap.begin(), heap.end(), std::greater<>());
  };
  auto pop = [&heap] {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    heap.pop_back();
  };
  for (int r : comp_res_)
    if (unfixed_[static_cast<std::size_t>(r)] > 0)
      push(key(r), r);
  // Fixing a flow at v <= the smallest share leaves every other share at least as large, so
  // a resource's entry stays a lower bound of its share and is refreshed only when it comes
  // to the top (a push per fix cost most of the filling). Rounding may lower a share by an
  // ulp: then the lower value is pushed at once, and the top is always the exact minimum.
  auto fix = [&](FlowId f, double v, int by) {
    new_rate_[f] = v;
    limiter_[f] = by;
    for (const Hop& h : flows_[f].route) {
      auto i = static_cast<std::size_t>(h.resource);
      const double before = unfixed_[i] > 0 ? key(h.resource) : 0;
      avail_[i] -= v;
      if (--unfixed_[i] == 0)
        continue;
      const double after = key(h.resource);
      if (after < before)
        push(after, h.resource);
    }
  };
  std::size_t next = 0;
  std::size_t left = comp_flows_.size();
  while (left > 0) {
    while (!heap.empty()) {
      const auto [k, r] = heap.front();
      if (unfixed_[static_cast<std::size_t>(r)] == 0) {
        pop();
        continue;
      }
      const double now_key = key(r);
      if (k == now_key)
        break;
      pop();
      if (k < now_key) // its share grew since: it goes back at its share
        push(now_key, r);
    }
    const double s = heap.empty() ? kUnbounded : heap.front().first;
    while (next < by_bound.size() && new_rate_[by_bound[next].second] >= 0)
      ++next;
    if (next < by_bound.size() && by_bound[next].first <= s) {
      // fixing a flow at a bound below every share leaves every share at least as large
      for (; next < by_bound.size() && by_bound[next].first <= s; ++next)
        if (new_rate_[by_bound[next].second] < 0) {
          fix(by_bound[next].second, by_bound[next].first, -1);
          --left;
        }
      continue;
    }
    if (heap.empty()) { // flows crossing nothing and bounded by nothing
      for (FlowId f : comp_flows_)
        if (new_rate_[f] < 0) {
          fix(f, kUnbounded, -1);
          --left;
        }
      break;
    }
    const int r = heap.front().second;
    pop();
    share[static_cast<std::size_t>(r)] = s;
    for (FlowId f : res_[static_cast<std::size_t>(r)].flows)
      if (flows_[f].mark == ep && new_rate_[f] < 0) {
        fix(f, s, r);
        --left;
      }
  }
}

/// A border resource that holds a flow of the component back while a flow outside gets more
/// there is no bottleneck of that flow: it joins (queued), and the component is filled again.
/// Returns whether one did.
bool MaxMinNetwork::absorb_border(std::uint32_t ep)
{
  std::vector<double>& share = share_;
  bool grew = false;
  for (std::size_t i = 0; i < comp_res_.size(); ++i) {
    const int r = comp_res_[i];
    Resource& res = res_[static_cast<std::size_t>(r)];
    if (res.role != 2 || share[static_cast<std::size_t>(r)] < 0)
      continue;
    const double s = share[static_cast<std::size_t>(r)];
    for (FlowId f : res.flows) {
      const Flow& fl = flows_[f];
      if (fl.mark != ep && fl.rate > s * (1 + kSlack)) {
        res.role = 1;
        queue_.push_back(r);
        grew = true;
        break;
      }
    }
  }
  for (int r : comp_res_)
    share[static_cast<std::size_t>(r)] = -1;
  return grew;
}

void MaxMinNetwork::fill_component(double now)
{
  ++epoch_;
  const std::uint32_t ep = epoch_;
  comp_flows_.clear();
  comp_res_.clear();
  queue_.clear();
  for (int r : dirty_) {
    Resource& res = res_[static_cast<std::size_t>(r)];
    res.mark = ep;
    res.role = 1;
    comp_res_.push_back(r);
    queue_.push_back(r);
  }
  dirty_.clear();
  do {
    grow_component(ep);
    prepare_fill();
    progressive_fill(ep);
  } while (absorb_border(ep));

  ++stats_.solves;
  stats_.solved_flows += comp_flows_.size();
  stats_.largest_component = std::max(stats_.largest_component, comp_flows_.size());
  for (FlowId f : comp_flows_) {
    Flow& fl = flows_[f];
    if (fl.pending || new_rate_[f] != fl.rate)
      set_rate(f, new_rate_[f], now);
  }
  // loads of the resources inside the component are exactly their flows' sum
  for (int r : comp_res_) {
    Resource& res = res_[static_cast<std::size_t>(r)];
    if (res.role != 1)
      continue;
    double sum = 0;
    for (FlowId f : res.flows)
      sum += flows_[f].rate;
    res.load = sum;
  }
}

} // namespace clustersim
