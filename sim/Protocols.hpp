#pragma once
/// NCCL-like protocol constants per transport (`platforms/collectives.yaml`): the latency an
/// algorithm step costs, the achievable fraction of link bandwidth, and a per-call base
/// latency. Shared by every platform and experiment.

#include "Yaml.hpp"

#include <map>
#include <string>
#include <vector>

namespace clustersim {

struct TransportConstants {
  double step_latency = 0; ///< s per algorithm step
  double efficiency = 1;   ///< achievable / nominal link bandwidth
  double base_latency = 0; ///< s per collective call
};

class ProtocolTable {
public:
  static ProtocolTable load(const std::string& path);
  const TransportConstants* find(const std::string& transport) const;
  std::vector<std::string> names() const;

private:
  std::map<std::string, TransportConstants> transports_;
};

} // namespace clustersim
