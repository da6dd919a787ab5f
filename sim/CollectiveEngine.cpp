#include "CollectiveEngine.hpp"

#include "Suggest.hpp"

#include <algorithm>
#include <stdexcept>

namespace clustersim {

CollectiveEngine::CollectiveEngine(const ClusterGraph& cluster, const ProtocolTable& protocols) : cluster_(cluster)
{
  const PlatformSpec& p = cluster.platform();
  auto get = [&](const std::string& name) {
    const TransportConstants* t = protocols.find(name);
    if (!t)
      throw ConfigError(SourceLocation{p.file, 1, 1},
                        "platform '" + p.name + "' names " + unknown_name("transport", name, protocols.names()) +
                            " (not in platforms/collectives.yaml)",
                        join(protocols.names()));
    return *t;
  };
  scale_up_ = get(p.node.scale_up == ScaleUpKind::pcie ? p.node.pcie_transport : p.node.nvlink_transport);
  if (p.node.nics > 0)
    scale_out_ = get(p.node.nic_transport);
  else
    scale_out_ = scale_up_;
}

const TransportConstants& CollectiveEngine::transport(int a, int b) const
{
  return cluster_.path_class(a, b) == PathClass::scale_out ? scale_out_ : scale_up_;
}

double CollectiveEngine::p2p_extra_latency(int from, int to) const
{
  const TransportConstants& t = transport(from, to);
  return t.step_latency + t.base_latency;
}

double CollectiveEngine::p2p_wire_bytes(int from, int to, double bytes) const
{
  return bytes / transport(from, to).efficiency;
}

std::string CollectiveEngine::choose(CollOp op, const std::vector<std::uint32_t>&, double) const
{
  return op == CollOp::all_to_all ? "direct" : "ring";
}

ExecPlan CollectiveEngine::make_plan(CollOp op, const std::vector<std::uint32_t>& ranks, double bytes,
                                     const std::string& algo) const
{
  std::string name = algo == "auto" ? choose(op, ranks, bytes) : algo;
  auto alg = AlgorithmRegistry::instance().make(name, "collective algorithm");
  if (!alg->supports(op))
    throw std::invalid_argument("collective algorithm '" + name + "' does not implement " + to_string(op));
  GroupView view{cluster_, ranks};
  FlowPlan fp = alg->plan(op, view, bytes);
  ExecPlan out;
  out.algorithm = name;
  std::vector<int> route_scratch;
  for (auto& ph : fp.phases) {
    ExecPhase e;
    e.sends.resize(ranks.size());
    e.receives.assign(ranks.size(), 0);
    double step = 0;
    double route_latency = 0;
    for (const auto& f : ph.flows) {
      int a = static_cast<int>(ranks[f.src]);
      int b = static_cast<int>(ranks[f.dst]);
      const TransportConstants& t = transport(a, b);
      step = std::max(step, t.step_latency);
      out.base_latency = std::max(out.base_latency, t.base_latency);
      route_scratch.clear();
      route_latency = std::max(route_latency, cluster_.route(a, b, route_scratch));
      e.sends[f.src].push_back(static_cast<std::uint32_t>(e.flows.size()));
      ++e.receives[f.dst];
      e.flows.push_back({f.src, f.dst, f.bytes / t.efficiency});
    }
    e.extra_latency = ph.steps * step + std::max(0, ph.steps - 1) * route_latency;
    out.phases.push_back(std::move(e));
  }
  return out;
}

const ExecPlan& CollectiveEngine::plan(const Workload& w, std::uint32_t call)
{
  const CollectiveCall& c = w.collectives()[call];
  auto key = std::make_tuple(static_cast<int>(c.op), c.group, c.algo, c.bytes);
  auto it = cache_.find(key);
  if (it != cache_.end())
    return it->second;
  ExecPlan p = make_plan(c.op, w.groups()[c.group].ranks, c.bytes, w.algo_names()[c.algo]);
  return cache_.emplace(key, std::move(p)).first->second;
}

} // namespace clustersim
