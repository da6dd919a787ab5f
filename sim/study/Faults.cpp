#include "sim/study/Faults.hpp"
#include "sim/study/Random.hpp"

#include "sim/study/Experiment.hpp"
#include "strategies/CostModel.hpp"
#include "strategies/workload/Workload.hpp"
#include "topology/ClusterGraph.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <set>

namespace clustersim {
namespace {

/// k distinct indices of 0..n-1 (partial Fisher-Yates), sorted.
std::vector<std::uint32_t> sample(std::uint32_t n, std::uint32_t k, std::mt19937_64& g)
{
  std::vector<std::uint32_t> v(n);
  for (std::uint32_t i = 0; i < n; ++i)
    v[i] = i;
  for (std::uint32_t i = 0; i < k && i < n; ++i) {
    auto j = i + static_cast<std::uint32_t>(uniform(g) * (n - i));
    std::swap(v[i], v[j]);
  }
  v.resize(std::min(k, n));
  std::sort(v.begin(), v.end());
  return v;
}

std::uint32_t count_of(double fraction, double n) { return static_cast<std::uint32_t>(std::llround(fraction * n)); }

bool switch_to_switch(const ClusterGraph& c, const ArcInfo& a, VertexId s, VertexId t)
{
  auto sw = [&](VertexId v) {
    auto k = c.graph()[v].kind;
    return k == VertexKind::leaf || k == VertexKind::spine || k == VertexKind::core;
  };
  return a.kind == LinkKind::network && sw(s) && sw(t);
}

} // namespace

const Section& straggler_section()
{
  using K = KeySpec;
  static const Section s{
      "faults.stragglers",
      "ranks that run slower: one of ranks, nodes or fraction, with a factor",
      {
          K::list("ranks", "global ranks (GPU indices) to slow"),
          K::list("nodes", "nodes whose every GPU is slowed"),
          K::number("fraction", 0, 0, 1, "a seeded random fraction of all GPUs").counts("of the GPUs"),
          K::number("factor", 1, 1, 1e3,
                    "kernel time multiplier, at least 1 (2: twice as slow); a faster GPU is another gpu:")
              .must(),
          K::choice("on", "both", {"compute", "hbm", "both"},
                    "compute: compute-bound kernels (GEMMs, attention); hbm: memory-bound ones; both"),
      }};
  return s;
}

const Section& link_fault_section()
{
  using K = KeySpec;
  static const Section s{
      "faults.links",
      "links at a fraction of their bandwidth, or down: one of switch, link or fraction",
      {
          K::string("switch", "", "a switch by name (leaf3, spine0, core1): every link touching it"),
          K::string("link", "", "the cables between two vertices, 'leaf0-spine1'"),
          K::number("fraction", 0, 0, 1, "a seeded random fraction of the switch-to-switch cables")
              .counts("of the cables"),
          K::number("factor", 1, 1e-6, 1, "the fraction of the bandwidth that remains"),
          K::boolean("down", false, "the link carries nothing (factor 0)"),
      }};
  return s;
}

const Section& jitter_section()
{
  using K = KeySpec;
  static const Section s{"faults.jitter",
                         "variability: kernel times times lognormal(mean 1, sigma), per rank or per kernel",
                         {K::number("sigma", 0, 0, 1, "standard deviation of the log of the factor").must(),
                          K::choice("per", "rank", {"rank", "kernel"},
                                    "rank: one factor per rank for the step; kernel: one per kernel")}};
  return s;
}

const Section& faults_section()
{
  using K = KeySpec;
  static const Section s{
      "faults",
      "what-ifs simulated in the step: stragglers, jitter, degraded or failed links",
      {
          K::list("stragglers", "slower ranks (section faults.stragglers, one per item)").of("faults.stragglers"),
          K::list("links", "degraded or failed links (section faults.links, one per item)").of("faults.links"),
          K::section("jitter", "faults.jitter", "per-kernel variability"),
          K::integer("seed", 1, 0, (1LL << 62), "seed of the random choices and of the jitter"),
      }};
  return s;
}

namespace {

std::vector<long long> integers(const YamlNode& list, long long max, const char* what)
{
  if (!list.is_sequence())
    list.fail(std::string("expected a list of ") + what, std::string("[0, 1, ...]"));
  std::vector<long long> out;
  for (const auto& i : list.items())
    out.push_back(i.as_int(0, max));
  if (out.empty())
    list.fail(std::string("an empty list of ") + what, std::string("at least one"));
  return out;
}

/// An entry names its targets by exactly one of three keys.
void require_one(const YamlNode& item, int given, const std::string& what, const std::string& keys,
                 const std::string& example)
{
  if (given == 0)
    item.fail(what + " needs " + keys, example);
  if (given > 1)
    item.fail(what + " takes one of " + keys, example);
}

StragglerSpec parse_straggler(const YamlNode& item)
{
  SectionReader m(item, straggler_section());
  StragglerSpec s;
  s.where = item.where();
  int given = 0;
  if (auto r = m.find("ranks")) {
    s.ranks = integers(*r, (1LL << 22) - 1, "ranks");
    ++given;
  }
  if (auto n = m.find("nodes")) {
    s.nodes = integers(*n, (1LL << 22) - 1, "nodes");
    ++given;
  }
  if (m.has("fraction")) {
    s.fraction = m.number("fraction");
    ++given;
  }
  require_one(item, given, "a straggler", "ranks, nodes or fraction",
              "ranks: [3], nodes: [1] or fraction: 0.01, with factor");
  s.factor = m.number("factor");
  s.on = m.choice("on");
  m.finish();
  return s;
}

LinkFaultSpec parse_link_fault(const YamlNode& item)
{
  SectionReader m(item, link_fault_section());
  LinkFaultSpec l;
  l.where = item.where();
  int given = 0;
  if (m.has("switch")) {
    l.target_switch = m.string("switch");
    ++given;
  }
  if (m.has("link")) {
    l.link = m.string("link");
    ++given;
  }
  if (m.has("fraction")) {
    l.fraction = m.number("fraction");
    ++given;
  }
  require_one(item, given, "a link fault", "switch, link or fraction",
              "switch: spine0, link: leaf0-spine1 or fraction: 0.01, with factor or down");
  const bool down = m.boolean("down");
  if (m.has("down") && m.has("factor"))
    item.fail("a link is down or at a factor, not both", "down: true, or factor: 0.5");
  if (!m.has("down") && !m.has("factor"))
    item.fail("a link fault needs factor or down", "factor: 0.5 (half the bandwidth), or down: true");
  // down: false is the link as it is (a sweep's healthy point)
  l.factor = m.has("down") ? (down ? 0 : 1) : m.number("factor");
  m.finish();
  return l;
}

} // namespace

FaultSpec parse_faults(const YamlNode& node)
{
  FaultSpec f;
  SectionReader top(node, faults_section());
  if (auto s = top.find("stragglers")) {
    if (!s->is_sequence())
      s->fail("expected a list of stragglers", "- {ranks: [3], factor: 2}");
    for (const auto& item : s->items())
      f.stragglers.push_back(parse_straggler(item));
  }
  if (auto l = top.find("links")) {
    if (!l->is_sequence())
      l->fail("expected a list of link faults", "- {switch: spine0, down: true}");
    for (const auto& item : l->items())
      f.links.push_back(parse_link_fault(item));
  }
  if (auto j = top.find("jitter")) {
    SectionReader jr(*j, jitter_section());
    f.jitter_sigma = jr.number("sigma");
    f.jitter_per_kernel = jr.choice("per") == "kernel";
    jr.finish();
  }
  f.seed = top.integer("seed");
  top.finish();
  return f;
}

namespace {

/// Names the cluster has for a kind of vertex, for messages.
std::string names_like(const ClusterGraph& c, const std::string& wanted)
{
  std::vector<std::string> kinds{"leaf", "spine", "core", "nic", "gpu", "nvswitch"};
  std::string out;
  for (const auto& k : kinds) {
    VertexKind kind = k == "leaf" ? VertexKind::leaf : k == "spine" ? VertexKind::spine : k == "core" ? VertexKind::core
                                                   : k == "nic"    ? VertexKind::nic
                                                   : k == "gpu"    ? VertexKind::gpu
                                                                   : VertexKind::nvswitch;
    const int n = c.count(kind);
    if (n > 0)
      out += (out.empty() ? "" : ", ") + k + "0.." + k + std::to_string(n - 1);
  }
  (void)wanted;
  return out;
}

std::vector<int> arcs_of_fault(const LinkFaultSpec& l, ClusterGraph& c, std::mt19937_64& g)
{
  if (!l.target_switch.empty()) {
    const long long v = c.find_vertex(l.target_switch);
    if (v < 0)
      throw ConfigError(l.where, "no vertex '" + l.target_switch + "' in this cluster", names_like(c, l.target_switch));
    return c.arcs_of(v);
  }
  if (!l.link.empty()) {
    const auto dash = l.link.find('-');
    const std::string a = l.link.substr(0, dash), b = dash == std::string::npos ? "" : l.link.substr(dash + 1);
    const long long va = c.find_vertex(a), vb = c.find_vertex(b);
    if (va < 0 || vb < 0)
      throw ConfigError(l.where, "no vertex '" + (va < 0 ? a : b) + "' in this cluster",
                        "'A-B' with A, B among " + names_like(c, a));
    auto arcs = c.arcs_of(va, vb);
    if (arcs.empty())
      throw ConfigError(l.where, "no cable between " + a + " and " + b, "two adjacent vertices");
    return arcs;
  }
  // a fraction of the switch-to-switch cables (both directions of each)
  std::vector<int> forward;
  std::map<int, int> reverse;
  const Graph& gr = c.graph();
  for (auto [e, end] = boost::edges(gr); e != end; ++e) {
    const ArcInfo& a = gr[*e];
    if (a.id < a.reverse && switch_to_switch(c, a, boost::source(*e, gr), boost::target(*e, gr))) {
      forward.push_back(a.id);
      reverse[a.id] = a.reverse;
    }
  }
  std::sort(forward.begin(), forward.end());
  std::vector<int> out;
  const auto k = count_of(l.fraction, static_cast<double>(forward.size()));
  for (auto i : sample(static_cast<std::uint32_t>(forward.size()), k, g)) {
    out.push_back(forward[i]);
    out.push_back(reverse[forward[i]]);
  }
  return out;
}

} // namespace

void apply_link_faults(const FaultSpec& faults, ClusterGraph& cluster)
{
  std::mt19937_64 g(static_cast<std::uint64_t>(faults.seed) ^ 0x6c696e6bULL);
  for (const auto& l : faults.links) {
    std::set<int> touched;
    for (int arc : arcs_of_fault(l, cluster, g)) {
      cluster.scale_arc(arc, l.factor);
      for (auto [e, end] = boost::edges(cluster.graph()); e != end; ++e)
        if (cluster.graph()[*e].id == arc)
          touched.insert(cluster.graph()[*e].resource);
    }
    // under ECMP switches hash their flows over the cables that still lead on; otherwise a
    // resource (a bundle, or a link of its own) must keep some capacity
    std::string cut = cluster.ecmp() ? cluster.ecmp_cut() : "";
    for (int r : touched)
      if (cut.empty() && !cluster.ecmp() && cluster.resources()[static_cast<std::size_t>(r)].bandwidth <= 1)
        cut = cluster.resources()[static_cast<std::size_t>(r)].name + " has no capacity";
    if (!cut.empty())
      throw ConfigError(l.where, "no path left: " + cut + " once this fault applies",
                        "faults that leave another path (a spine of several, a cable of a bundle), or a "
                        "factor above 0");
  }
}

std::vector<std::vector<std::uint32_t>> straggler_ranks(const FaultSpec& faults, long long gpus, int gpus_per_node)
{
  std::mt19937_64 g(static_cast<std::uint64_t>(faults.seed));
  std::vector<std::vector<std::uint32_t>> out;
  for (const auto& s : faults.stragglers) {
    std::vector<std::uint32_t> ranks;
    for (long long r : s.ranks) {
      if (r >= gpus)
        throw ConfigError(s.where, "rank " + std::to_string(r) + " is not in the job",
                          "ranks 0 to " + std::to_string(gpus - 1));
      ranks.push_back(static_cast<std::uint32_t>(r));
    }
    for (long long n : s.nodes) {
      // a job smaller than a node holds only the node's first GPUs
      const long long nodes_in_job = (gpus + gpus_per_node - 1) / gpus_per_node;
      if (n >= nodes_in_job)
        throw ConfigError(s.where, "node " + std::to_string(n) + " is not in the job",
                          "nodes 0 to " + std::to_string(nodes_in_job - 1));
      for (long long r = n * gpus_per_node; r < std::min(gpus, (n + 1) * gpus_per_node); ++r)
        ranks.push_back(static_cast<std::uint32_t>(r));
    }
    if (s.fraction > 0)
      ranks = sample(static_cast<std::uint32_t>(gpus), std::max(1U, count_of(s.fraction, static_cast<double>(gpus))), g);
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    out.push_back(ranks);
  }
  return out;
}

void apply_compute_faults(const FaultSpec& faults, const ExperimentSpec& e, Workload& workload,
                          const std::function<Workload(const CostModel&)>& rebuild)
{
  auto chosen = straggler_ranks(faults, e.gpus, e.platform.node.gpus);
  for (std::size_t i = 0; i < faults.stragglers.size(); ++i) {
    const StragglerSpec& s = faults.stragglers[i];
    GpuSpec slow = e.platform.node.gpu;
    if (s.on != "hbm")
      slow.sustained /= s.factor;
    if (s.on != "compute")
      slow.hbm_efficiency /= s.factor;
    CostModel cost(e.model, e.training, slow);
    Workload w = rebuild(cost);
    if (w.tasks().size() != workload.tasks().size())
      throw std::logic_error("a straggler's step has another shape than the step");
    std::vector<std::uint8_t> is(workload.ranks(), 0);
    for (auto r : chosen[i])
      is[r] = 1;
    for (TaskId t = 0; t < workload.tasks().size(); ++t) {
      const Task& task = workload.task(t);
      if (task.kind == TaskKind::compute && is[task.rank])
        workload.set_compute_seconds(t, w.task(t).amount);
    }
  }
  if (faults.jitter_sigma > 0) {
    std::mt19937_64 g(static_cast<std::uint64_t>(faults.seed) ^ 0x6a6974746572ULL);
    const double s = faults.jitter_sigma;
    auto draw = [&] { return std::exp(s * normal(g) - s * s / 2); };
    std::vector<double> per_rank(workload.ranks(), 1);
    if (!faults.jitter_per_kernel)
      for (auto& f : per_rank)
        f = draw();
    for (TaskId t = 0; t < workload.tasks().size(); ++t) {
      const Task& task = workload.task(t);
      if (task.kind == TaskKind::compute && task.amount > 0)
        workload.set_compute_seconds(t, task.amount * (faults.jitter_per_kernel ? draw() : per_rank[task.rank]));
    }
  }
}

} // namespace clustersim
