#include "sim/CollectiveEngine.hpp"

#include "topology/config/Suggest.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <unordered_map>

namespace clustersim {

CollectiveEngine::CollectiveEngine(const ClusterGraph& cluster, const ProtocolTable& protocols)
    : cluster_(cluster), protocols_(protocols)
{
  const PlatformSpec& p = cluster.platform();
  auto check = [&](const std::string& name) {
    if (!protocols.has_transport(name))
      throw ConfigError(SourceLocation{p.file, 1, 1},
                        "platform '" + p.name + "' names " + unknown_name("transport", name, protocols.transports()) +
                            " (not in platforms/collectives.yaml)",
                        join(protocols.transports()));
    return name;
  };
  scale_up_ = check(p.node.scale_up == ScaleUpKind::pcie ? p.node.pcie_transport : p.node.nvlink_transport);
  scale_out_ = p.node.nics > 0 ? check(p.node.nic_transport) : scale_up_;
}

const std::string& CollectiveEngine::transport(int a, int b) const
{
  return cluster_.path_class(a, b) == PathClass::scale_out ? scale_out_ : scale_up_;
}

ExecPlan CollectiveEngine::make_plan(CollOp op, const std::vector<std::uint32_t>& ranks, double bytes,
                                     const std::string& algo, const std::string& protocol) const
{
  ExecPlan out;
  out.algorithm = algo;
  out.protocol = protocol;
  auto alg = AlgorithmRegistry::instance().make(algo);
  GroupView view{cluster_, ranks};
  const auto protos = alg->protocols();
  if (std::find(protos.begin(), protos.end(), protocol) == protos.end() || !alg->applicable(op, view))
    return out;
  FlowPlan fp = alg->plan(op, view, bytes);
  const double factor = protocols_.bandwidth_factor(algo);
  std::vector<int> scratch;
  for (auto& ph : fp.phases) {
    ExecPhase e;
    e.sends.resize(ranks.size());
    e.receives.resize(ranks.size());
    double step = 0;
    double route_latency = 0;
    for (const auto& f : ph.flows) {
      int a = static_cast<int>(ranks[f.src]);
      int b = static_cast<int>(ranks[f.dst]);
      const ProtocolConstants* c = protocols_.find(transport(a, b), protocol);
      if (!c)
        return out; // this protocol cannot cross this transport
      step = std::max(step, c->step_latency);
      out.base_latency = std::max(out.base_latency, c->base_latency);
      scratch.clear();
      route_latency = std::max(route_latency, cluster_.route(a, b, scratch));
      e.sends[f.src].push_back(static_cast<std::uint32_t>(e.flows.size()));
      e.receives[f.dst].push_back(static_cast<std::uint32_t>(e.flows.size()));
      e.flows.push_back({f.src, f.dst, f.bytes / (c->efficiency * factor)});
    }
    e.extra_latency = ph.steps * (step + route_latency);
    out.phases.push_back(std::move(e));
  }
  out.valid = true;
  out.predicted_s = predict(out, ranks);
  double wire = 0;
  for (const auto& ph : out.phases)
    wire += ph.wire_time;
  out.latency_bound = wire <= kLatencyBoundShare * out.predicted_s;
  return out;
}

double CollectiveEngine::predict(ExecPlan& plan, const std::vector<std::uint32_t>& ranks) const
{
  const auto& res = cluster_.resources();
  double total = plan.base_latency;
  std::unordered_map<int, double> load;
  std::vector<int> route;
  for (auto& ph : plan.phases) {
    load.clear();
    const int paths = cluster_.paths(); // a flow's share on each of its routes
    for (const auto& f : ph.flows)
      for (int p = 0; p < paths; ++p) {
        route.clear();
        cluster_.route(static_cast<int>(ranks[f.src]), static_cast<int>(ranks[f.dst]), route, p);
        for (int r : route)
          load[r] += f.bytes / paths;
      }
    double wire = 0;
    for (const auto& [r, bytes] : load)
      wire = std::max(wire, bytes / res[static_cast<std::size_t>(r)].bandwidth);
    ph.wire_time = wire;
    total += wire + ph.extra_latency;
  }
  return total;
}

ExecPlan CollectiveEngine::best_plan(CollOp op, const std::vector<std::uint32_t>& ranks, double bytes,
                                     const std::string& algo) const
{
  // "ring" tries every protocol of the ring; "ring/simple" pins the protocol too
  std::string name = algo;
  std::string pinned;
  if (auto slash = algo.find('/'); slash != std::string::npos) {
    name = algo.substr(0, slash);
    pinned = algo.substr(slash + 1);
  }
  std::vector<std::string> algos;
  if (name == "auto")
    algos = AlgorithmRegistry::instance().names();
  else
    algos.push_back(name);
  ExecPlan best;
  best.predicted_s = std::numeric_limits<double>::infinity();
  for (const auto& a : algos) {
    auto alg = AlgorithmRegistry::instance().make(a);
    if (name == "auto" && !alg->nccl())
      continue;
    for (const auto& proto : alg->protocols()) {
      if (!pinned.empty() && proto != pinned)
        continue;
      ExecPlan p = make_plan(op, ranks, bytes, a, proto);
      if (p.valid && p.predicted_s < best.predicted_s)
        best = std::move(p);
    }
  }
  if (!best.valid)
    throw std::invalid_argument("collective algorithm '" + algo + "' cannot run " + to_string(op) + " on a group of " +
                                std::to_string(ranks.size()) + " ranks");
  return best;
}

const ExecPlan& CollectiveEngine::plan(const Workload& w, std::uint32_t call)
{
  const CollectiveCall& c = w.collectives()[call];
  // keyed by content, not by the workload's group and algorithm indices: one engine serves
  // many workloads (the planner evaluates thousands of layouts with one)
  const auto& ranks = w.groups()[c.group].ranks;
  const std::string& algo = w.algo_names()[c.algo];
  const int op = static_cast<int>(c.op);
  std::size_t h = std::hash<int>()(op);
  auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  for (std::uint32_t r : ranks)
    mix(r);
  mix(std::hash<std::string>()(algo));
  mix(std::hash<double>()(c.bytes));
  std::vector<std::size_t>& same = by_hash_[h];
  for (std::size_t i : same) {
    const CachedPlan& p = plans_[i];
    if (p.op == op && p.bytes == c.bytes && p.algo == algo && p.ranks == ranks)
      return p.plan;
  }
  ExecPlan p = best_plan(c.op, ranks, c.bytes, algo);
  same.push_back(plans_.size());
  plans_.push_back({op, ranks, algo, c.bytes, std::move(p)});
  return plans_.back().plan;
}

const ProtocolConstants* CollectiveEngine::p2p_protocol(int from, int to, double bytes) const
{
  const double bw = cluster_.pair_bandwidth(from, to);
  const ProtocolConstants* best = nullptr;
  double best_t = std::numeric_limits<double>::infinity();
  for (const char* name : {"ll", "ll128", "simple"}) {
    const ProtocolConstants* c = protocols_.find(transport(from, to), name);
    if (!c)
      continue;
    double t = c->step_latency + c->base_latency + bytes / (c->efficiency * bw);
    if (t < best_t) {
      best_t = t;
      best = c;
    }
  }
  if (!best)
    throw std::invalid_argument("no point-to-point protocol for transport '" + transport(from, to) + "'");
  return best;
}

double CollectiveEngine::p2p_extra_latency(int from, int to, double bytes) const
{
  const ProtocolConstants* c = p2p_protocol(from, to, bytes);
  std::vector<int> route;
  return c->step_latency + c->base_latency + cluster_.route(from, to, route);
}

double CollectiveEngine::p2p_predicted(int from, int to, double bytes) const
{
  return p2p_extra_latency(from, to, bytes) + p2p_wire_bytes(from, to, bytes) / cluster_.pair_bandwidth(from, to);
}

double CollectiveEngine::p2p_wire_bytes(int from, int to, double bytes) const
{
  return bytes / p2p_protocol(from, to, bytes)->efficiency;
}

} // namespace clustersim
