// The price table and the capex of a bill of materials (see Prices.hpp).

#include "topology/Prices.hpp"

#include "topology/ClusterGraph.hpp"
#include "topology/PlatformSpec.hpp"
#include "topology/config/Units.hpp"

#include <algorithm>
#include <cstdio>

namespace clustersim {

namespace {

constexpr double kHoursPerYear = 365.0 * 24;

KeySpec source_key()
{
  return KeySpec::string("source", "",
                         "where the price comes from: a list price, a quote in the press, or an "
                         "analyst's estimate named as such")
      .must();
}

KeySpec date_key()
{
  return KeySpec::string("date", "", "when the source gave it (YYYY-MM or YYYY-MM-DD)").must();
}

KeySpec watts_key()
{
  return KeySpec::number("watts", 0, 0, 1e5,
                         "power of one part in use, counted in the IT load the facility and energy are "
                         "priced for; 0 (the default) when not stated")
      .counts("W");
}

KeySpec watts_source_key()
{
  return KeySpec::string("watts_source", "", "where the power comes from (a datasheet, or an estimate named as such)");
}

Price read_price(SectionReader& r, const std::string& key)
{
  Price p;
  p.usd = r.number(key);
  p.source = r.string("source");
  p.date = r.string("date");
  return p;
}

/// `rate: {usd, ...}` entries, slowest first; two entries at one rate are an error.
std::vector<RatedPrice> read_rated(const YamlNode& map, const Section& section, const std::string& what)
{
  std::vector<RatedPrice> out;
  for (const auto& [key, value] : map.entries(what)) {
    RatedPrice r;
    r.rate = key.as_quantity(Quantity::bandwidth);
    r.part = what;
    for (const RatedPrice& seen : out)
      if (seen.rate == r.rate)
        key.fail("two " + what + " prices at " + format_bandwidth(r.rate), "one entry per port rate");
    SectionReader s(value, section, what + " at " + key.as_string());
    r.price = read_price(s, "usd");
    if (&section == &switch_price_section())
      r.radix = static_cast<int>(s.integer("radix"));
    r.watts = s.number("watts");
    r.watts_source = s.string("watts_source");
    if (r.watts > 0 && r.watts_source.empty())
      throw ConfigError(s.where("watts"), what + " power at " + key.as_string() + " has no watts_source",
                        "watts_source: the datasheet or estimate the power comes from");
    s.finish();
    out.push_back(r);
  }
  std::sort(out.begin(), out.end(), [](const RatedPrice& a, const RatedPrice& b) { return a.rate < b.rate; });
  return out;
}

std::string cited(const Price& p)
{
  return p.source + " (" + p.date + ")";
}

} // namespace

const Section& node_price_section()
{
  using K = KeySpec;
  static const Section s{"node_price",
                         "one server of a GPU model, as sold (GPUs, CPUs, memory, NICs and NVSwitch chips)",
                         {K::number("usd", 0, 1, 1e9, "the server's price").must().counts("$"),
                          K::integer("gpus", 8, 1, 1024,
                                     "GPUs in the priced server (the price is scaled to a "
                                     "platform's node by its GPUs)"),
                          source_key(), date_key()}};
  return s;
}

const Section& part_price_section()
{
  using K = KeySpec;
  static const Section s{"part_price",
                         "one transceiver or one cable at a port rate",
                         {K::number("usd", 0, 0, 1e7, "the part's price").must().counts("$"), source_key(), date_key(),
                          watts_key(), watts_source_key()}};
  return s;
}

const Section& switch_price_section()
{
  using K = KeySpec;
  static const Section s{"switch_price",
                         "one fabric switch whose ports run at the rate",
                         {K::number("usd", 0, 1, 1e8, "the switch's price").must().counts("$"),
                          K::integer("radix", 64, 1, 4096, "ports of the priced model"), source_key(), date_key(),
                          watts_key(), watts_source_key()}};
  return s;
}

const Section& energy_price_section()
{
  using K = KeySpec;
  static const Section s{
      "energy_price",
      "electricity",
      {K::number("usd_per_kwh", 0, 0, 10, "price of a kWh").must().counts("$"), source_key(), date_key()}};
  return s;
}

const Section& facility_price_section()
{
  using K = KeySpec;
  static const Section s{
      "facility_price",
      "data-centre build-out (shell, power and cooling) per kW of IT load",
      {K::number("usd_per_kw", 0, 0, 1e6, "price per kW of IT load").must().counts("$"), source_key(), date_key()}};
  return s;
}

const Section& years_price_section()
{
  using K = KeySpec;
  static const Section s{"amortisation",
                         "the years over which the hardware and the facility are written off",
                         {K::number("years", 0, 0.5, 50, "useful life").must(), source_key(), date_key()}};
  return s;
}

const Section& prices_file_section()
{
  using K = KeySpec;
  static const Section s{
      "prices.yaml",
      "the price table (platforms/prices.yaml): every price with its source and date",
      {
          K::section("amortisation", "amortisation", "the years capex is written off over").must(),
          K::section("energy", "energy_price", "the price of electricity").must(),
          K::section("facility", "facility_price", "data-centre build-out per kW").must(),
          K::value("nodes", "GPU id to the price of one server (section node_price)").must(),
          K::value("switches", "port rate (e.g. 400Gbps) to one switch's price (section switch_price)").must(),
          K::value("transceivers", "port rate to one transceiver's price (section part_price)").must(),
          K::value("cables", "port rate to one cable's price (section part_price)").must(),
      }};
  return s;
}

PriceTable PriceTable::load(const std::string& path)
{
  PriceTable t = parse(YamlNode::load_file(path));
  t.file = path;
  return t;
}

PriceTable PriceTable::parse(const YamlNode& root)
{
  PriceTable t;
  t.file = root.file();
  SectionReader top(root, prices_file_section(), "price table");
  {
    SectionReader r(top.require("amortisation"), years_price_section(), "amortisation");
    t.years = read_price(r, "years");
    r.finish();
  }
  {
    SectionReader r(top.require("energy"), energy_price_section(), "energy");
    t.usd_per_kwh = read_price(r, "usd_per_kwh");
    r.finish();
  }
  {
    SectionReader r(top.require("facility"), facility_price_section(), "facility");
    t.facility_usd_per_kw = read_price(r, "usd_per_kw");
    r.finish();
  }
  for (const auto& [key, value] : top.require("nodes").entries("node prices")) {
    SectionReader r(value, node_price_section(), "node price of " + key.as_string());
    NodePrice n;
    n.price = read_price(r, "usd");
    n.gpus = static_cast<int>(r.integer("gpus"));
    r.finish();
    t.nodes[key.as_string()] = n;
  }
  t.switches = read_rated(top.require("switches"), switch_price_section(), "switch");
  t.transceivers = read_rated(top.require("transceivers"), part_price_section(), "transceiver");
  t.cables = read_rated(top.require("cables"), part_price_section(), "cable");
  top.finish();
  return t;
}

const RatedPrice* PriceTable::at_rate(const std::vector<RatedPrice>& parts, double rate)
{
  for (const RatedPrice& p : parts)
    if (p.rate >= rate * (1 - 1e-9))
      return &p;
  return nullptr;
}

double Capex::total() const
{
  double s = 0;
  for (const CapexLine& l : lines)
    s += l.usd();
  return s;
}

double Capex::network() const
{
  double s = 0;
  for (const CapexLine& l : lines)
    if (l.network)
      s += l.usd();
  return s;
}

double Capex::energy_usd_per_gpu_hour() const
{
  return gpus > 0 ? it_kw * pue * usd_per_kwh / gpus : 0;
}

double Capex::usd_per_gpu_hour() const
{
  if (gpus <= 0 || years <= 0)
    return 0;
  return total() / (years * kHoursPerYear) / gpus + energy_usd_per_gpu_hour();
}

Capex price_cluster(const BillOfMaterials& bom, const PlatformSpec& p)
{
  Capex c;
  c.gpus = bom.gpus;
  c.node_kw = bom.node_watts / 1000;
  c.pue = p.cost.pue;
  const PriceTable* t = p.cost.prices.get();
  auto missing = [&](const std::string& what) {
    if (c.unpriced.empty())
      c.unpriced = what;
  };
  if (!t && (p.cost.node_usd <= 0 || p.cost.years <= 0 || p.cost.usd_per_kwh <= 0 || bom.switches() > 0))
    missing("no price table (platforms/prices.yaml) for " + p.name);
  const std::string table = "platforms/prices.yaml"; // the catalog's, wherever it is installed

  // nodes
  if (p.cost.node_usd > 0) {
    c.lines.push_back({"node (" + p.node.gpu.id + ")", static_cast<double>(bom.nodes), p.cost.node_usd,
                       "platform " + p.name + " cost.node_usd", false, 0, "", "node"});
  } else if (t) {
    auto it = t->nodes.find(p.node.gpu.id);
    if (it == t->nodes.end()) {
      std::string valid;
      for (const auto& [id, n] : t->nodes)
        valid += (valid.empty() ? "" : ", ") + id;
      missing("no node price for GPU '" + p.node.gpu.id + "' in " + table + " (priced: " + valid +
              "), nor cost.node_usd in the platform");
    } else {
      const double unit = it->second.price.usd / it->second.gpus * p.node.gpus;
      c.lines.push_back({"node (" + std::to_string(p.node.gpus) + " x " + p.node.gpu.id + ")",
                         static_cast<double>(bom.nodes), unit, cited(it->second.price), false, 0, "", "node"});
    }
  }

  // fabric, by port rate
  auto rated = [&](const std::vector<RatedPrice>* parts, const char* what, double count, double rate) {
    if (count <= 0)
      return;
    const RatedPrice* r = parts ? PriceTable::at_rate(*parts, rate) : nullptr;
    if (!r) {
      missing(std::string("no ") + what + " price at " + format_bandwidth(rate) + " or faster in " + table);
      return;
    }
    std::string label = std::string(what) + " " + format_bandwidth(r->rate);
    if (r->rate > rate * (1 + 1e-9))
      label += " (for " + format_bandwidth(rate) + ")";
    c.lines.push_back({label, count, r->price.usd, cited(r->price), true, r->watts, r->watts_source, r->part});
    c.network_kw += count * r->watts / 1000;
  };
  for (const SwitchTier& s : bom.switch_tiers)
    rated(t ? &t->switches : nullptr, (s.tier + " switch").c_str(), s.switches, p.fabric.link.bandwidth);
  for (const CableClass& k : bom.cables) {
    rated(t ? &t->transceivers : nullptr, (k.tiers + " transceiver").c_str(), static_cast<double>(k.transceivers),
          k.bandwidth);
    rated(t ? &t->cables : nullptr, (k.tiers + " cable").c_str(), static_cast<double>(k.cables), k.bandwidth);
  }

  // facility, amortisation, energy: for the nodes and the fabric's stated power
  c.it_kw = c.node_kw + c.network_kw;
  const double per_kw =
      p.cost.facility_usd_per_kw > 0 ? p.cost.facility_usd_per_kw : (t ? t->facility_usd_per_kw.usd : 0);
  const std::string facility_source = p.cost.facility_usd_per_kw > 0
                                          ? "platform " + p.name + " cost.facility_usd_per_kw"
                                      : t ? cited(t->facility_usd_per_kw)
                                          : "";
  if (per_kw > 0)
    c.lines.push_back({"facility (kW of IT load)", c.it_kw, per_kw, facility_source, false, 0, "", "facility"});
  else
    missing("no facility price per kW");
  c.years = p.cost.years > 0 ? p.cost.years : (t ? t->years.usd : 0);
  c.usd_per_kwh = p.cost.usd_per_kwh > 0 ? p.cost.usd_per_kwh : (t ? t->usd_per_kwh.usd : 0);
  if (c.years <= 0)
    missing("no amortisation years");
  if (c.usd_per_kwh <= 0)
    missing("no energy price");
  return c;
}

std::string unpriced_parts(const PlatformSpec& p)
{
  BillOfMaterials probe;
  probe.nodes = 1;
  probe.gpus = p.node.gpus;
  if (p.node.nics > 0) {
    probe.switch_tiers.push_back({"leaf", 1, p.fabric.radix, 0, 0});
    probe.cables.push_back({"nic-leaf", 1, p.node.nic.bandwidth, 2});
    probe.cables.push_back({"leaf-spine", 1, p.fabric.link.bandwidth, 2});
  }
  return price_cluster(probe, p).unpriced;
}

void require_priced_if_owned(const PlatformSpec& p, const std::string& missing)
{
  if (p.cost.basis == CostBasis::owned && !missing.empty())
    throw ConfigError(p.cost.basis_where, "cost.basis owned, but " + missing,
                      "a price for each part in platforms/prices.yaml, the platform's cost overrides (node_usd, "
                      "years, usd_per_kwh, facility_usd_per_kw), or basis: rental");
}

double usd_per_gpu_hour(const PlatformSpec& p, int gpus)
{
  return p.cost.basis == CostBasis::rental ? p.cost.usd_per_gpu_hour : owned_usd_per_gpu_hour(p, gpus);
}

double owned_usd_per_gpu_hour(const PlatformSpec& p, int gpus)
{
  const ClusterGraph cg = ClusterGraph::build(p, std::max(gpus, p.node.gpus));
  const Capex c = price_cluster(bill_of_materials(cg), p);
  if (!c.priced())
    throw ConfigError(p.cost.basis_where, p.name + " cannot be priced as owned: " + c.unpriced,
                      "a price for every part in platforms/prices.yaml, the platform's cost overrides, or basis: "
                      "rental");
  return c.usd_per_gpu_hour();
}

} // namespace clustersim
