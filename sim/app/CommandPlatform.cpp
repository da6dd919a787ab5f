#include "sim/app/Arguments.hpp"
#include "sim/app/Commands.hpp"
#include "sim/app/Output.hpp"
#include "sim/study/Catalog.hpp"
#include "topology/BillOfMaterials.hpp"
#include "topology/ClusterGraph.hpp"
#include "topology/Exporters.hpp"
#include "topology/Prices.hpp"
#include "topology/TopologyFacts.hpp"
#include "topology/config/Units.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>

namespace clustersim {

namespace {

/// A share as a whole percentage: 0.95 -> "95".
std::string whole_percent(double share)
{
  return std::to_string(static_cast<int>(share * 100 + 0.5));
}

std::string routing_text(const FabricSpec& f)
{
  switch (f.routing) {
  case FabricRouting::ecmp:
    return "ecmp, seed " + std::to_string(f.seed) + ": each GPU pair hashed onto one cable per switch";
  case FabricRouting::ecmp_qp:
    return "ecmp-qp, seed " + std::to_string(f.seed) + ": each of a connection's " +
           std::to_string(f.qps_per_connection) + " queue pairs hashed onto one cable per switch";
  case FabricRouting::adaptive:
    return "adaptive: parallel up-links shared as one capacity at " +
           whole_percent(f.adaptive_efficiency) + " % of their rate";
  case FabricRouting::by_destination:
    return "static: each destination NIC reached over the cable its leaf port selects (D-mod-k)";
  case FabricRouting::ideal:
    break;
  }
  return "ideal: parallel up-links shared as one capacity";
}

nlohmann::ordered_json facts_json(const ClusterGraph& cg, const TopologyFacts& f)
{
  const PlatformSpec& p = cg.platform();
  nlohmann::ordered_json j;
  j["platform"] = p.name;
  j["description"] = p.description;
  j["gpu"] = p.node.gpu.id;
  j["gpu_name"] = p.node.gpu.name;
  j["gpu_memory_bytes"] = p.node.gpu.hbm_bytes;
  j["gpu_memory_bandwidth_Bps"] = p.node.gpu.hbm_bandwidth;
  j["gpu_peak_bf16_flops"] = p.node.gpu.peak(Precision::bf16);
  j["gpu_tdp_watts"] = p.node.gpu.tdp_watts;
  j["gpu_power_cap_watts"] = p.node.gpu.power_cap_watts;
  j["gpu_own_kernels"] = nlohmann::ordered_json::object();
  for (const auto& [key, v] : p.node.gpu.own_kernels)
    j["gpu_own_kernels"][key] = v;
  j["gpus"] = f.gpus;
  j["nodes"] = f.nodes;
  j["gpus_per_node"] = p.node.gpus;
  j["nvlink_domains"] = f.domains;
  j["gpus_per_nvlink_domain"] = f.gpus_per_domain;
  j["gpus_per_platform_domain"] = p.gpus_per_domain();
  j["scale_up"] = to_string(p.node.scale_up);
  j["fabric"] = to_string(p.fabric.kind);
  j["fabric_levels"] = f.fabric_levels;
  j["oversubscription"] = p.fabric.oversubscription;
  j["routing"] = to_string(p.fabric.routing);
  if (hashed(p.fabric.routing))
    j["seed"] = p.fabric.seed;
  if (p.fabric.routing == FabricRouting::ecmp_qp)
    j["qps_per_connection"] = p.fabric.qps_per_connection;
  if (p.fabric.routing == FabricRouting::adaptive)
    j["adaptive_efficiency"] = p.fabric.adaptive_efficiency;
  if (p.fabric.background_load > 0) {
    j["background_load"] = p.fabric.background_load;
    j["background_tier"] = to_string(p.fabric.background_tier);
  }
  j["switches"] = f.switches;
  j["nics"] = cg.count(VertexKind::nic);
  j["vertices"] = f.vertices;
  j["links"] = f.links;
  j["connected"] = f.connected;
  j["all_gpus_reachable"] = f.all_gpus_reachable;
  j["diameter_hops"] = f.diameter_hops;
  j["bisection_bandwidth_Bps"] = f.bisection_bandwidth;
  j["injection_scale_up_Bps"] = f.injection_scale_up;
  j["injection_scale_out_Bps"] = f.injection_scale_out;
  j["injection_scale_out_single_Bps"] = f.injection_scale_out_single;
  j["usd_per_gpu_hour"] = p.cost.usd_per_gpu_hour;
  return j;
}

std::string facts_text(const ClusterGraph& cg, const TopologyFacts& f)
{
  const PlatformSpec& p = cg.platform();
  std::ostringstream o;
  char buf[256];
  auto line = [&](const char* label, const std::string& v) {
    std::snprintf(buf, sizeof buf, "  %-34s ", label);
    o << buf << v << "\n"; // the value whole: a buffer would cut a long one and its newline
  };
  o << p.name << ": " << p.description << "\n";
  line("GPUs", std::to_string(f.gpus) + " x " + p.node.gpu.id + " (" + p.node.gpu.name + ")");
  char gpu[256];
  std::snprintf(gpu, sizeof gpu, "%s at %s, %s bf16, TDP %s%s", format_bytes(p.node.gpu.hbm_bytes).c_str(),
                format_bandwidth(p.node.gpu.hbm_bandwidth).c_str(),
                format_flop_rate(p.node.gpu.peak(Precision::bf16)).c_str(),
                format_quantity(p.node.gpu.tdp_watts, Quantity::power).c_str(),
                p.node.gpu.power_cap_watts > 0
                    ? (", capped at " + format_quantity(p.node.gpu.power_cap_watts, Quantity::power)).c_str()
                    : "");
  line("GPU memory, peak, power", gpu);
  if (!p.node.gpu.own_kernels.empty()) {
    std::string own;
    for (const auto& [key, v] : p.node.gpu.own_kernels) {
      char value[32];
      std::snprintf(value, sizeof value, "%g", v);
      own += (own.empty() ? "" : ", ") + key + " " +
             (gpu_kernels_section().at(key).type == KeyType::quantity ? format_quantity(v, Quantity::time) : value);
    }
    line("GPU kernel constants", own + " (its own, in place of the catalog's)");
  }
  line("host CPU", p.node.gpu.host.name + " (" + format_quantity(p.node.gpu.host.op, Quantity::time) +
                       " per kernel launched eager, " + format_quantity(p.node.gpu.host.launch, Quantity::time) +
                       " per CUDA graph replay)");
  line("nodes", std::to_string(f.nodes) + " (" + std::to_string(p.node.gpus) + " GPUs each)");
  // a job over several domains takes the same number of nodes from each (Slurm's --segment)
  const std::string partial = f.gpus_per_domain < p.gpus_per_domain() && f.domains > 1
                                  ? ": " + std::to_string(f.gpus_per_domain / p.node.gpus) + " of each domain's " +
                                        std::to_string(p.node.domain_nodes) + " nodes"
                                  : "";
  line("NVLink domains", std::to_string(f.domains) + " (" + std::to_string(f.gpus_per_domain) + " GPUs each" + partial +
                             ", " + to_string(p.node.scale_up) + ")");
  std::snprintf(buf, sizeof buf, "%s, %d level(s), %d switches, oversubscription %g:1", to_string(p.fabric.kind),
                f.fabric_levels, f.switches, p.fabric.oversubscription);
  line("scale-out fabric", buf);
  line("routing", routing_text(p.fabric));
  if (p.fabric.background_load > 0)
    line("background", whole_percent(p.fabric.background_load) + " % of every " +
                           to_string(p.fabric.background_tier) + " switch-to-switch cable held by another tenant");
  line("graph", std::to_string(f.vertices) + " vertices, " + std::to_string(f.links) + " links");
  line("connected", f.connected && f.all_gpus_reachable ? "yes, every GPU reaches every GPU" : "NO");
  line("diameter", std::to_string(f.diameter_hops) + " hops (GPU to GPU)");
  line("bisection bandwidth", format_bandwidth(f.bisection_bandwidth) + " (one direction)");
  line("injection per GPU, scale-up", format_bandwidth(f.injection_scale_up) + " per direction");
  line("injection per GPU, scale-out", format_bandwidth(f.injection_scale_out) + " per direction (all GPUs sending)");
  return o.str();
}

nlohmann::ordered_json bom_json(const ClusterGraph& cg, const BillOfMaterials& b)
{
  nlohmann::ordered_json j;
  j["platform"] = cg.platform().name;
  j["nodes"] = b.nodes;
  j["gpus"] = b.gpus;
  j["nics"] = b.nics;
  j["nvlink_domains"] = b.nvlink_domains;
  j["nvswitch_chips"] = b.nvswitch_chips;
  j["switches"] = b.switches();
  nlohmann::ordered_json tiers = nlohmann::ordered_json::array();
  for (const SwitchTier& t : b.switch_tiers)
    tiers.push_back({{"tier", t.tier},
                     {"switches", t.switches},
                     {"radix", t.radix},
                     {"ports", static_cast<long long>(t.switches) * t.radix},
                     {"ports_used", t.ports_used},
                     {"most_ports_used", t.most_ports_used}});
  j["switch_tiers"] = tiers;
  nlohmann::ordered_json cables = nlohmann::ordered_json::array();
  for (const CableClass& c : b.cables)
    cables.push_back({{"tiers", c.tiers},
                      {"cables", c.cables},
                      {"bandwidth_Bps", c.bandwidth},
                      {"transceivers", c.transceivers}});
  j["cables"] = cables;
  j["fabric_cables"] = b.fabric_cables();
  j["transceivers"] = b.transceivers();
  j["node_watts"] = b.node_watts;
  const Capex c = price_cluster(b, cg.platform());
  nlohmann::ordered_json priced = nlohmann::ordered_json::array();
  for (const CapexLine& l : c.lines)
    priced.push_back({{"item", l.what},
                      {"count", l.count},
                      {"unit_usd", l.unit_usd},
                      {"usd", l.usd()},
                      {"network", l.network},
                      {"source", l.source},
                      {"unit_watts", l.unit_watts}});
  j["priced"] = priced;
  if (c.priced()) {
    j["capex_usd"] = c.total();
    j["network_usd"] = c.network();
    j["network_capex_share"] = c.network_share();
    j["node_kw"] = c.node_kw;
    j["network_kw"] = c.network_kw;
    j["years"] = c.years;
    j["usd_per_kwh"] = c.usd_per_kwh;
    j["owned_usd_per_gpu_hour"] = c.usd_per_gpu_hour();
    j["energy_usd_per_gpu_hour"] = c.energy_usd_per_gpu_hour();
  } else {
    j["capex_usd"] = nullptr;
    j["unpriced"] = c.unpriced;
  }
  return j;
}

std::string bom_text(const ClusterGraph& cg, const BillOfMaterials& b)
{
  std::ostringstream o;
  char buf[256];
  auto line = [&](const char* label, const std::string& v) {
    std::snprintf(buf, sizeof buf, "  %-34s ", label);
    o << buf << v << "\n";
  };
  const PlatformSpec& p = cg.platform();
  o << p.name << " at " << b.gpus << " GPUs: bill of materials\n";
  line("nodes", std::to_string(b.nodes) + " (" + std::to_string(p.node.gpus) + " x " + p.node.gpu.id + " each)");
  line("GPUs", std::to_string(b.gpus));
  line("NICs", std::to_string(b.nics) + " at " + format_bandwidth(p.node.nic.bandwidth));
  if (b.nvlink_domains > 0)
    line("NVSwitch chips", std::to_string(b.nvswitch_chips) + " (" + std::to_string(p.node.nvswitches) +
                               " per NVLink domain, " + std::to_string(b.nvlink_domains) + " domains)");
  for (const SwitchTier& t : b.switch_tiers) {
    std::snprintf(buf, sizeof buf, "%d x radix %d: %lld of %lld ports used (at most %d on one)", t.switches, t.radix,
                  t.ports_used, static_cast<long long>(t.switches) * t.radix, t.most_ports_used);
    line((t.tier + " switches").c_str(), buf);
  }
  for (const CableClass& c : b.cables) {
    std::snprintf(buf, sizeof buf, "%lld at %s, %lld transceivers", c.cables, format_bandwidth(c.bandwidth).c_str(),
                  c.transceivers);
    line((c.tiers + " cables").c_str(), buf);
  }
  line("fabric in all", std::to_string(b.switches()) + " switches, " + std::to_string(b.fabric_cables()) +
                            " cables, " + std::to_string(b.transceivers()) + " transceivers");
  line("node power", format_quantity(b.node_watts, Quantity::power) + " (GPUs at TDP and node overhead)");
  const Capex c = price_cluster(b, p);
  o << "priced (platforms/prices.yaml, the platform's cost overrides)\n";
  std::vector<std::string> sources; // each once, numbered as the lines cite them
  for (const CapexLine& l : c.lines) {
    auto at = std::find(sources.begin(), sources.end(), l.source);
    if (at == sources.end())
      at = sources.insert(sources.end(), l.source);
    std::snprintf(buf, sizeof buf, "%9.0f x $%-9.0f = $%-12.0f [%d]", l.count, l.unit_usd, l.usd(),
                  static_cast<int>(at - sources.begin()) + 1);
    line(l.what.c_str(), buf);
  }
  // the fabric's power, each stated power once with its count and source
  std::vector<std::pair<const CapexLine*, double>> powered;
  for (const CapexLine& l : c.lines) {
    if (l.unit_watts <= 0)
      continue;
    auto same = std::find_if(powered.begin(), powered.end(), [&](const auto& e) {
      return e.first->part == l.part && e.first->unit_watts == l.unit_watts && e.first->watts_source == l.watts_source;
    });
    if (same == powered.end())
      powered.emplace_back(&l, l.count);
    else
      same->second += l.count;
  }
  std::string fabric_power;
  for (const auto& [l, count] : powered) {
    auto at = std::find(sources.begin(), sources.end(), l->watts_source);
    if (at == sources.end())
      at = sources.insert(sources.end(), l->watts_source);
    std::snprintf(buf, sizeof buf, "%s%s %.0f x %.3g W [%d]", fabric_power.empty() ? "" : ", ", l->part.c_str(), count,
                  l->unit_watts, static_cast<int>(at - sources.begin()) + 1);
    fabric_power += buf;
  }
  if (!fabric_power.empty()) {
    std::snprintf(buf, sizeof buf, "%.1f kW: ", c.network_kw);
    line("fabric power", buf + fabric_power);
  }
  auto cite = [&] {
    o << "  sources\n";
    for (std::size_t i = 0; i < sources.size(); ++i)
      o << "    [" << i + 1 << "] " << sources[i] << "\n";
  };
  if (!c.priced()) {
    line("capex", "not priced: " + c.unpriced);
    cite();
    return o.str();
  }
  std::snprintf(buf, sizeof buf, "$%.0f, network $%.0f (%.1f %%)", c.total(), c.network(), 100 * c.network_share());
  line("capex", buf);
  std::snprintf(buf, sizeof buf, "%.1f kW: nodes %.1f kW, fabric %.1f kW (%.1f %%)", c.it_kw, c.node_kw, c.network_kw,
                c.it_kw > 0 ? 100 * c.network_kw / c.it_kw : 0.0);
  line("IT load", buf);
  std::snprintf(buf, sizeof buf,
                "$%.3f per GPU-hour: capex over %.3g years $%.3f, energy at PUE %.2f and $%.4f/kWh $%.3f",
                c.usd_per_gpu_hour(), c.years, c.usd_per_gpu_hour() - c.energy_usd_per_gpu_hour(), c.pue, c.usd_per_kwh,
                c.energy_usd_per_gpu_hour());
  line("owned", buf);
  cite();
  return o.str();
}

} // namespace

void add_platform_command(CLI::App& app, Action& action)
{
  CLI::App* cmd = app.add_subcommand("platform", "Inspect the platform catalog");
  cmd->require_subcommand(1);
  CLI::App* list = cmd->add_subcommand("list", "List the platforms of the catalog");
  list->callback([&action] {
    action = [] {
      Catalog c = Catalog::open();
      for (const auto& n : c.platform_names()) {
        PlatformSpec p = c.platform(n, command_line("platform list"));
        std::printf("%-20s %s\n", n.c_str(), p.description.c_str());
      }
      return 0;
    };
  });
  struct Options {
    std::string name;
    int gpus = 0;
    bool json = false;
    bool bom = false;
    std::string dot;
    std::string xml;
    std::string svg;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* show =
      cmd->add_subcommand("show", "Instantiate a platform and print its facts; export DOT and SimGrid XML");
  show->add_option("name", opt->name, "catalog name or platform YAML file")->required();
  show->add_option("--gpus", opt->gpus, "number of GPUs to instantiate (default: one node)");
  show->add_flag("--json", opt->json, "print the facts as JSON");
  show->add_flag("--bom", opt->bom,
                 "print the bill of materials instead: switches per tier, cables and transceivers per tier, node power");
  show->add_option("--dot", opt->dot, "write the graph as Graphviz DOT to FILE");
  show->add_option("--xml", opt->xml, "write a SimGrid platform XML to FILE");
  show->add_option("--svg", opt->svg, "draw the fabric by tier to FILE.svg, nodes and switches folded");
  show->callback([opt, show, &action] {
    const bool gpus_given = show->count("--gpus") > 0;
    action = [opt, gpus_given] {
      if (gpus_given)
        int_argument(opt->gpus, "--gpus", 1, kMaxGpus);
      if (!opt->dot.empty())
        check_file(opt->dot, "--dot");
      if (!opt->xml.empty())
        check_file(opt->xml, "--xml");
      if (!opt->svg.empty())
        check_file(opt->svg, "--svg");
      Catalog c = Catalog::open();
      PlatformSpec p = c.platform(opt->name, command_line("platform show"));
      for (const ConfigWarning& w : p.warnings)
        std::fprintf(stderr, "%s\n", w.line().c_str());
      int gpus = gpus_given ? opt->gpus : p.node.gpus;
      if (gpus % p.node.gpus != 0)
        throw ConfigError(command_line("--gpus"),
                          std::to_string(gpus) + " is not a multiple of the " + std::to_string(p.node.gpus) +
                              " GPUs per node of '" + p.name + "'",
                          "a positive multiple of " + std::to_string(p.node.gpus));
      ClusterGraph cg = ClusterGraph::build(p, gpus);
      OutputSet out;
      if (!opt->dot.empty()) {
        std::ostringstream s;
        write_dot(s, cg);
        out.add(opt->dot, s.str(), "--dot");
      }
      if (!opt->xml.empty()) {
        std::ostringstream s;
        Precision prec = p.node.gpu.supports(Precision::bf16) ? Precision::bf16 : Precision::fp16;
        write_simgrid_xml(s, cg, prec);
        out.add(opt->xml, s.str(), "--xml");
      }
      if (!opt->svg.empty()) {
        std::ostringstream s;
        write_fabric_svg(s, cg);
        out.add(opt->svg, s.str(), "--svg");
      }
      out.check();
      out.commit();
      if (opt->bom) {
        const BillOfMaterials b = bill_of_materials(cg);
        std::cout << (opt->json ? bom_json(cg, b).dump(2) + "\n" : bom_text(cg, b));
      } else {
        const TopologyFacts f = compute_facts(cg);
        std::cout << (opt->json ? facts_json(cg, f).dump(2) + "\n" : facts_text(cg, f));
      }
      return 0;
    };
  });
}

} // namespace clustersim
