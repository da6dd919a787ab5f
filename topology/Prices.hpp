#pragma once
/// What a cluster costs to own: the price table (`platforms/prices.yaml`, each price with its
/// source and date) and the capital cost of a bill of materials priced from it, amortised with
/// the energy into a $/GPU-hour. The table prices whole nodes by GPU model (a DGX's list price
/// holds its GPUs, CPUs, NICs and NVSwitch chips), fabric switches, transceivers and cables by
/// port rate, facility build-out per kW of IT load and energy per kWh; a platform's `cost:`
/// section overrides any of them.

#include "topology/BillOfMaterials.hpp"
#include "topology/config/Schema.hpp"

#include <map>
#include <string>
#include <vector>

namespace clustersim {

struct PlatformSpec;

/// One price and where it comes from.
struct Price {
  double usd = 0;
  std::string source;
  std::string date;
};

/// A part priced at a port rate (bytes/s per direction): a switch, a transceiver, a cable.
struct RatedPrice {
  double rate = 0;
  int radix = 0; ///< switches: the ports the priced model has
  Price price;
  std::string part;         ///< switch, transceiver or cable
  double watts = 0;         ///< power of one part in use; 0 when the table does not state it
  std::string watts_source; ///< where the power comes from
};

struct NodePrice {
  int gpus = 0; ///< GPUs in the priced server
  Price price;
};

struct PriceTable {
  std::string file;
  std::map<std::string, NodePrice> nodes; ///< by GPU id
  std::vector<RatedPrice> switches;       ///< by rate, slowest first
  std::vector<RatedPrice> transceivers;
  std::vector<RatedPrice> cables;
  Price usd_per_kwh;
  Price facility_usd_per_kw;
  Price years; ///< usd holds the years

  static PriceTable load(const std::string& path);
  static PriceTable parse(const YamlNode& root);
  /// The part at `rate`, else the slowest faster one (priced as that); null when none is as fast.
  static const RatedPrice* at_rate(const std::vector<RatedPrice>& parts, double rate);
};

/// One line of a priced bill: `count` x `what` at `unit_usd`.
struct CapexLine {
  std::string what;
  double count = 0;
  double unit_usd = 0;
  std::string source; ///< the price's source and date, or "platform file"
  bool network = false;
  double unit_watts = 0;    ///< power of one, where the table states it
  std::string watts_source; ///< where that power comes from
  std::string part;         ///< node, switch, transceiver, cable or facility
  double usd() const { return count * unit_usd; }
};

/// The capital cost of a cluster and its owned $/GPU-hour. `unpriced` names what the table lacks
/// (empty when every part is priced); the figures are then partial and not reported.
struct Capex {
  std::vector<CapexLine> lines;
  std::string unpriced;
  int gpus = 0;
  double node_kw = 0;    ///< nodes at TDP plus overhead
  double network_kw = 0; ///< fabric switches and transceivers at the table's stated power
  double it_kw = 0;      ///< node_kw + network_kw: what the facility is built for and the energy bills
  double pue = 1;
  double years = 0; ///< amortisation
  double usd_per_kwh = 0;

  bool priced() const { return unpriced.empty(); }
  double total() const;
  double network() const;
  double network_share() const { return total() > 0 ? network() / total() : 0; }
  /// Capex over `years` plus energy at the PUE, per GPU-hour.
  double usd_per_gpu_hour() const;
  double energy_usd_per_gpu_hour() const;
};

/// The bill priced with the platform's price table, its `cost:` overrides first.
Capex price_cluster(const BillOfMaterials& bom, const PlatformSpec& p);

/// What the platform cannot be priced for (empty when every part it can need is priced): its
/// node, its switches, transceivers and cables at its NIC and switch-cable rates, the facility,
/// the years and energy.
std::string unpriced_parts(const PlatformSpec& p);

/// Refuses, at its `cost.basis`, a platform owned but not priced (`missing`: what is not); does
/// nothing for a rental platform or an empty `missing`.
void require_priced_if_owned(const PlatformSpec& p, const std::string& missing);

/// The $/GPU-hour the platform's `cost.basis` names: its rental price, or its owned price at
/// `gpus` GPUs (the capex of the cluster that size, amortised, plus energy).
double usd_per_gpu_hour(const PlatformSpec& p, int gpus);
/// The owned $/GPU-hour of the cluster of `gpus` GPUs, whatever the basis; ConfigError (at the
/// platform's cost.basis) when a part is not priced.
double owned_usd_per_gpu_hour(const PlatformSpec& p, int gpus);

const Section& prices_file_section();
const Section& node_price_section();
const Section& part_price_section();
const Section& switch_price_section();
const Section& energy_price_section();
const Section& facility_price_section();
const Section& years_price_section();

} // namespace clustersim
