#include "sim/NetworkLoad.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace clustersim {

std::vector<TierLoad> network_load(const Workload& w, CollectiveEngine& collectives, double step_s)
{
  const ClusterGraph& cg = collectives.cluster();
  // a plan repeats over a step's micro-batches and layers: route each (plan, group) once
  std::map<std::pair<const ExecPlan*, std::uint32_t>, double> calls;
  std::map<std::tuple<std::uint32_t, std::uint32_t, double>, double> transfers;
  std::vector<std::uint8_t> seen(w.collectives().size(), 0);
  for (const Task& t : w.tasks()) {
    if (t.kind == TaskKind::collective && !seen[t.target]) {
      seen[t.target] = 1;
      const ExecPlan& plan = collectives.plan(w, t.target);
      if (!plan.latency_bound)
        calls[{&plan, w.collectives()[t.target].group}] += 1;
    } else if (t.kind == TaskKind::send) {
      transfers[{t.rank, w.task(t.target).rank, t.amount}] += 1;
    }
  }
  std::vector<double> bytes(cg.resources().size(), 0);
  std::vector<int> route;
  auto carry = [&](std::uint32_t a, std::uint32_t b, double amount) {
    for (int p = 0; p < cg.paths(); ++p) { // an equal share on each route of the pair
      route.clear();
      cg.route(static_cast<int>(a), static_cast<int>(b), route, p);
      for (int r : route)
        bytes[static_cast<std::size_t>(r)] += amount / cg.paths();
    }
  };
  for (const auto& [key, count] : calls) {
    const auto& group = w.groups()[key.second].ranks;
    for (const ExecPhase& ph : key.first->phases)
      for (const PlannedFlow& f : ph.flows)
        if (w.simulated(group[f.src]) || w.simulated(group[f.dst])) // mirror to mirror: not simulated
          carry(group[f.src], group[f.dst], f.bytes * count);
  }
  for (const auto& [key, count] : transfers) {
    const auto [from, to, amount] = key;
    carry(from, to, collectives.p2p_wire_bytes(static_cast<int>(from), static_cast<int>(to), amount) * count);
  }
  std::vector<TierLoad> out;
  for (LinkTier tier : {LinkTier::scale_up, LinkTier::host, LinkTier::nic, LinkTier::leaf_up, LinkTier::spine_up}) {
    TierLoad l;
    l.tier = tier;
    l.background = cg.background_share(tier);
    l.busiest_load = l.background; // every link of the tier carries the background, if the job's bytes or not
    double sum = 0;
    for (std::size_t r = 0; r < bytes.size(); ++r) {
      const Resource& res = cg.resources()[r];
      if (res.tier != tier || res.bandwidth <= 0)
        continue;
      ++l.links;
      if (bytes[r] <= 0)
        continue;
      ++l.used;
      l.bytes += bytes[r];
      // against the cable's whole rate (the background took its share of it), the background added
      const double load = step_s > 0 ? bytes[r] * (1 - l.background) / (res.bandwidth * step_s) + l.background : 0;
      sum += load;
      if (load > l.busiest_load) {
        l.busiest_load = load;
        l.busiest_link = res.name;
      }
    }
    l.mean_load = l.used > 0 ? sum / static_cast<double>(l.used) : l.background;
    if (l.links > 0)
      out.push_back(l);
  }
  return out;
}

CommTime comm_time(const Workload& w, const ExecutionResult& r, CollectiveEngine& collectives, std::uint32_t rank)
{
  CommTime out;
  for (int s = 0; s < kStreamCount; ++s)
    for (TaskId id : w.stream(rank, static_cast<Stream>(s))) {
      const Task& t = w.task(id);
      double idle = 0;
      if (t.kind == TaskKind::collective)
        idle = collectives.plan(w, t.target).predicted_s;
      else if (t.kind == TaskKind::send)
        idle = collectives.p2p_predicted(static_cast<int>(t.rank), static_cast<int>(w.task(t.target).rank), t.amount);
      else if (t.kind == TaskKind::recv)
        idle = collectives.p2p_predicted(static_cast<int>(w.task(t.target).rank), static_cast<int>(t.rank), t.amount);
      else
        continue;
      const double ran = r.end[id] - r.start[id];
      out.ran += ran;
      out.idle += idle;
      // a call run as a delay of its idle time differs from it only by rounding: not slowed
      if (ran - idle > 1e-9 * idle)
        out.slowed += ran - idle;
    }
  return out;
}

} // namespace clustersim
