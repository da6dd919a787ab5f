#pragma once
/// Rank placement in Megatron's manner: ranks are numbered with the dimensions of `order`
/// nested innermost first (default tp, cp, dp, pp: TP inside a node, PP outermost), so
/// rank = tp_i + tp·(cp_i + cp·(dp_i + dp·pp_i)) by default. Ranks are GPU ids.

#include "strategies/TrainingSpec.hpp"

#include <array>
#include <cstdint>
#include <vector>

namespace clustersim {

enum class Dim { tp = 0, cp = 1, dp = 2, pp = 3 };

class Layout {
public:
  explicit Layout(const TrainingSpec& t);

  int size(Dim d) const { return size_[static_cast<std::size_t>(d)]; }
  int ranks() const { return ranks_; }
  /// Coordinate of `rank` along `d`.
  int coord(int rank, Dim d) const;
  /// The rank with coordinates (tp, cp, dp, pp).
  int rank(int tp, int cp, int dp, int pp) const;
  /// Ranks that differ from `rank` only along the given dimensions, ordered by those
  /// coordinates (the first dimension varies fastest).
  std::vector<std::uint32_t> group(int rank, std::initializer_list<Dim> dims) const;

  /// Megatron's MoE parallel folding: a stage's tp·cp·dp ranks, numbered in `order` (pp left
  /// out), are split again as etp (innermost) × ep × edp for the expert layers. The expert-
  /// parallel group of `rank` (same etp and edp coordinates) or its expert-tensor-parallel
  /// group (same ep and edp), ordered by that coordinate.
  enum class ExpertDim { etp, ep, edp };
  std::vector<std::uint32_t> expert_group(int rank, int etp, int ep, ExpertDim d) const;
  /// The coordinate of `rank` along an expert dimension.
  int expert_coord(int rank, int etp, int ep, ExpertDim d) const;

private:
  int local_index(int rank) const; ///< position among the stage's tp·cp·dp ranks, in `order`
  int local_rank(int index, int pp) const;
  std::array<int, 3> local_order_{}; ///< tp/cp/dp in `order`, innermost first
  std::array<int, 4> size_{};
  std::array<int, 4> stride_{};
  int ranks_ = 1;
};

} // namespace clustersim
