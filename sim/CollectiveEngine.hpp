#pragma once
/// Turns collective calls into what the executor runs: the chosen algorithm's flows with
/// their on-wire size (payload / the protocol's efficiency on the transport each flow
/// crosses), who sends and receives what in each phase, and the latency added analytically
/// after each phase, steps × (step latency of the slowest transport + largest route latency),
/// plus a base latency per call. (SimGrid links carry no latency: see SimPlatform.)
///
/// Every flow of a phase is paced at bytes / wire_time (see ExecPhase), so on idle links a
/// collective takes exactly its predicted time and the closed forms hold; under contention
/// SimGrid's max-min sharing slows the flows on shared links and the phase waits for them.
///
/// "auto" picks, like NCCL's tuner, the (algorithm, protocol) pair with the lowest predicted
/// time; the prediction sums over phases the busiest resource's load / capacity plus the
/// latencies (exact on uncontended links, which is what a tuner assumes). Plans are cached per
/// (operation, group, bytes, algorithm).

#include "sim/Protocols.hpp"
#include "sim/collectives/CollectiveAlgorithm.hpp"
#include "strategies/workload/Workload.hpp"
#include "topology/ClusterGraph.hpp"

#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace clustersim {

struct ExecPhase {
  std::vector<PlannedFlow> flows; ///< bytes are on-wire bytes
  /// Time the busiest resource needs for this phase's bytes on idle links. Flows are paced
  /// to finish together at that time (NCCL's pipelined chunks move in lock-step with the
  /// slowest hop); contention from other traffic still slows the flows it touches.
  double wire_time = 0;
  std::vector<std::vector<std::uint32_t>> sends;    ///< per member: indices of flows it sends
  std::vector<std::vector<std::uint32_t>> receives; ///< per member: indices of flows it receives
  double extra_latency = 0;
};

struct ExecPlan {
  std::string algorithm;
  std::string protocol;
  std::vector<ExecPhase> phases;
  double base_latency = 0;
  double predicted_s = 0; ///< analytic time on idle links
  bool valid = false;
  /// Latency-bound: its bytes take under kLatencyBoundShare of its time even on idle links
  /// (small-message calls such as FP8 amax reductions). Contention could stretch only that
  /// share, so the executor runs it as a delay of its predicted time, and its flows do not
  /// count as link users for the other calls (ExclusiveLinks). Set with predicted_s.
  bool latency_bound = false;
};
/// 0.1 %: a call is latency-bound when its wire time is below this share of its predicted time.
constexpr double kLatencyBoundShare = 1e-3;

class CollectiveEngine {
public:
  /// Throws ConfigError (in the platform file) if a platform transport has no constants.
  CollectiveEngine(const ClusterGraph& cluster, const ProtocolTable& protocols);

  const ExecPlan& plan(const Workload& w, std::uint32_t call);
  /// One algorithm with one protocol; `valid` is false when they cannot run this call.
  ExecPlan make_plan(CollOp op, const std::vector<std::uint32_t>& ranks, double bytes, const std::string& algo,
                     const std::string& protocol) const;
  /// The fastest predicted plan among `algo`'s protocols ("auto": among every applicable
  /// algorithm too). Throws std::invalid_argument for an unknown or inapplicable algorithm.
  ExecPlan best_plan(CollOp op, const std::vector<std::uint32_t>& ranks, double bytes, const std::string& algo) const;

  /// Point-to-point: the protocol with the lowest predicted time on the path.
  double p2p_extra_latency(int from, int to, double bytes) const;
  double p2p_wire_bytes(int from, int to, double bytes) const;
  /// Time of a point-to-point transfer on idle links.
  double p2p_predicted(int from, int to, double bytes) const;

  const ClusterGraph& cluster() const { return cluster_; }

  /// Transport name of the path between two GPUs.
  const std::string& transport(int gpu_a, int gpu_b) const;

private:
  const ProtocolConstants* p2p_protocol(int from, int to, double bytes) const;
  /// Fills each phase's wire_time and returns the plan's time on idle links.
  double predict(ExecPlan& plan, const std::vector<std::uint32_t>& ranks) const;

  const ClusterGraph& cluster_;
  const ProtocolTable& protocols_;
  std::string scale_up_;
  std::string scale_out_;
  /// Plans by content (operation, ranks, algorithm, bytes), found by a hash of the call's
  /// content without copying its group: a step looks a plan up for each of its calls.
  struct CachedPlan {
    int op;
    std::vector<std::uint32_t> ranks;
    std::string algo;
    double bytes;
    ExecPlan plan;
  };
  std::deque<CachedPlan> plans_; ///< stable addresses: plan() hands out references
  std::unordered_map<std::size_t, std::vector<std::size_t>> by_hash_;
};

} // namespace clustersim
