#pragma once
/// Turns collective calls into what the executor runs: the algorithm's flows with their
/// on-wire size (payload / protocol efficiency of the transport each flow crosses), who sends
/// and who receives what in each phase, and the latency added analytically after each phase:
///   steps × (step latency of the slowest transport) + (steps − 1) × (largest route latency)
/// (SimGrid already charges each flow its route latency once), plus a base latency per call.
/// Plans are cached per (operation, group, bytes, algorithm).

#include "ClusterGraph.hpp"
#include "Protocols.hpp"
#include "Workload.hpp"
#include "collectives/CollectiveAlgorithm.hpp"

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace clustersim {

struct ExecPhase {
  std::vector<PlannedFlow> flows;                ///< bytes are on-wire bytes
  std::vector<std::vector<std::uint32_t>> sends; ///< per member: indices of flows it sends
  std::vector<std::uint32_t> receives;           ///< per member: number of flows it receives
  double extra_latency = 0;
};

struct ExecPlan {
  std::string algorithm;
  std::vector<ExecPhase> phases;
  double base_latency = 0;
};

class CollectiveEngine {
public:
  /// Throws ConfigError (in the platform file) if a platform transport has no constants.
  CollectiveEngine(const ClusterGraph& cluster, const ProtocolTable& protocols);

  const ExecPlan& plan(const Workload& w, std::uint32_t call);
  ExecPlan make_plan(CollOp op, const std::vector<std::uint32_t>& ranks, double bytes, const std::string& algo) const;
  /// The algorithm "auto" resolves to for this call.
  std::string choose(CollOp op, const std::vector<std::uint32_t>& ranks, double bytes) const;

  /// Protocol constants of the transport a flow between two GPUs crosses.
  const TransportConstants& transport(int gpu_a, int gpu_b) const;
  /// Latency of a point-to-point transfer beyond SimGrid's route latency.
  double p2p_extra_latency(int from, int to) const;
  /// On-wire bytes of a point-to-point payload.
  double p2p_wire_bytes(int from, int to, double bytes) const;

private:
  const ClusterGraph& cluster_;
  TransportConstants scale_up_{};
  TransportConstants scale_out_{};
  std::map<std::tuple<int, std::uint32_t, std::uint16_t, double>, ExecPlan> cache_;
};

} // namespace clustersim
