#pragma once
/// NCCL-like protocol constants per transport (`platforms/collectives.yaml`), shared by every
/// platform and experiment. For each transport (nvlink3, ib-ndr, pcie4, ...) and each protocol
/// it supports (ll, ll128, simple, and nvls for NVLink SHARP): the latency an algorithm step
/// costs, the achievable fraction of the link bandwidth, and a per-call base latency.

#include "topology/config/Yaml.hpp"

#include <map>
#include <string>
#include <vector>

namespace clustersim {

struct ProtocolConstants {
  double step_latency = 0; ///< s per algorithm step
  double efficiency = 1;   ///< achievable / nominal link bandwidth
  double base_latency = 0; ///< s per collective call
};

/// Protocol names, in the order NCCL lists them, plus NVLink SHARP.
const std::vector<std::string>& protocol_names();

class ProtocolTable {
public:
  static ProtocolTable load(const std::string& path);
  /// nullptr when the transport is unknown or lacks the protocol.
  const ProtocolConstants* find(const std::string& transport, const std::string& protocol) const;
  bool has_transport(const std::string& transport) const { return table_.count(transport) != 0; }
  /// Bandwidth factor of an algorithm (`algorithms:` section; 1 when not listed).
  double bandwidth_factor(const std::string& algorithm) const;
  std::vector<std::string> transports() const;

private:
  std::map<std::string, std::map<std::string, ProtocolConstants>> table_;
  std::map<std::string, double> algorithm_factor_;
};

} // namespace clustersim
