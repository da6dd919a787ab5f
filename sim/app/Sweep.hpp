#pragma once
/// Sweeps: an experiment with a `sweep:` section runs once per point of its axes.
///
/// ```yaml
/// sweep:
///   mode: product                     # product (default) | zip (lists in lockstep)
///   axes:
///     cluster.gpus: {from: 8, to: 1024, factor: 2}
///     training.zero: [0, 1, 2, 3]
///     cluster.platform: [dgx-h100, dgx-h100-2to1]
/// ```
/// An axis is a dotted path to any scalar of the experiment (`model`, `model.<dim>`,
/// `cluster.<key>`, `training.<key>`, `training.overlap.<key>`, `baseline.gpus`,
/// `budget.tokens`, `simulation.mode`); values are a list or a range (`from`, `to`, and
/// `step` or `factor`). Points are numbered in expansion order; a point that is not a valid
/// experiment (divisibility) or does not fit in memory stays in the results with its reason.

#include "Catalog.hpp"
#include "Simulation.hpp"
#include "Yaml.hpp"

#include <optional>
#include <string>
#include <vector>

namespace clustersim {

struct SweepAxis {
  std::string path;
  std::vector<std::string> values; ///< scalars, as written
};

struct SweepSpec {
  bool zip = false;
  std::vector<SweepAxis> axes;
};

struct SweepPoint {
  std::size_t index = 0;
  std::vector<std::string> values; ///< one per axis
};

/// The `sweep:` section of an experiment document, validated; nullopt when there is none.
std::optional<SweepSpec> parse_sweep(const YamlNode& doc);
std::vector<SweepPoint> expand(const SweepSpec& sweep);
/// The experiment document of one point (the base with the point's values set).
YamlNode apply_point(const YamlNode& doc, const SweepSpec& sweep, const SweepPoint& point);

/// One row of results: the point, its status and its metrics (as JSON, for both outputs).
Json sweep_row(const SweepSpec& sweep, const SweepPoint& point, const std::string& status, const std::string& reason,
               const RunMetrics* metrics);
/// Evaluates one point (parse, memory check, simulate with its baseline): the row.
Json run_point(const YamlNode& doc, const SweepSpec& sweep, const SweepPoint& point, const Catalog& catalog);

/// results.csv: one header, one line per row, columns in a fixed order.
std::string rows_to_csv(const std::vector<Json>& rows);
/// results.json: {"experiment": NAME, "rows": [...]} — what `merge` reads back.
std::string rows_to_json(const std::string& name, const std::vector<Json>& rows);

/// "I/N" → (I, N); throws ConfigError.
std::pair<int, int> parse_shard(const std::string& text);

} // namespace clustersim
