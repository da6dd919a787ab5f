#include "sim/ExclusiveLinks.hpp"

#include <unordered_map>

namespace clustersim {

ExclusiveUse find_exclusive_use(const Workload& w, const ClusterGraph& cg, const std::vector<const ExecPlan*>& plans)
{
  constexpr int kShared = -2;
  std::unordered_map<int, int> owner; // resource -> user id, or kShared
  std::map<std::tuple<std::uint32_t, int>, int> coll_user;
  std::map<std::tuple<std::uint32_t, std::uint32_t, int>, int> p2p_user;
  std::map<int, std::vector<int>> user_resources;
  std::vector<int> route;
  auto use = [&](int user, int a, int b) {
    route.clear();
    for (int p = 0; p < cg.paths(); ++p) // every route the pair's traffic is split over
      cg.route(a, b, route, p);
    for (int r : route) {
      auto [it, inserted] = owner.try_emplace(r, user);
      if (!inserted && it->second != user)
        it->second = kShared;
      user_resources[user].push_back(r);
    }
  };
  std::map<std::tuple<const ExecPlan*, std::uint32_t, int>, bool> seen;
  std::vector<int> call_user(w.collectives().size(), -1);
  // calls, then transfers: which resources each user loads does not depend on the order they
  // are met in (a pass over the calls and the sends, not over every task of the step)
  for (std::uint32_t c = 0; c < w.collectives().size(); ++c) {
    const CollectiveCall& call = w.collectives()[c];
    if (call.present == 0)
      continue;
    auto key = std::make_tuple(call.group, static_cast<int>(call.stream));
    auto [it, inserted] = coll_user.try_emplace(key, static_cast<int>(coll_user.size() + p2p_user.size()));
    call_user[c] = it->second;
    const ExecPlan* plan = plans[c];
    if (plan->latency_bound)
      continue; // runs as a delay; its bytes do not load the links (CollectiveEngine)
    if (!seen.try_emplace(std::make_tuple(plan, call.group, static_cast<int>(call.stream)), true).second)
      continue;
    const auto& group = w.groups()[call.group].ranks;
    for (const auto& ph : plan->phases)
      for (const auto& f : ph.flows)
        if (w.simulated(group[f.src]) || w.simulated(group[f.dst]))
          use(it->second, static_cast<int>(group[f.src]), static_cast<int>(group[f.dst]));
  }
  for (TaskId t : w.sends()) {
    const Task& task = w.task(t);
    auto key = std::make_tuple(task.rank, w.task(task.target).rank, static_cast<int>(task.stream));
    auto [it, inserted] = p2p_user.try_emplace(key, static_cast<int>(coll_user.size() + p2p_user.size()));
    if (inserted)
      use(it->second, static_cast<int>(task.rank), static_cast<int>(w.task(task.target).rank));
  }
  auto exclusive = [&](int user) {
    for (int r : user_resources[user])
      if (owner[r] != user)
        return false;
    return true;
  };
  ExclusiveUse out;
  out.calls.reserve(plans.size());
  for (std::uint32_t call = 0; call < plans.size(); ++call)
    out.calls.push_back(call_user[call] >= 0 && (plans[call]->latency_bound || exclusive(call_user[call])));
  for (const auto& [key, user] : p2p_user)
    out.transfers[key] = exclusive(user);
  return out;
}

} // namespace clustersim
