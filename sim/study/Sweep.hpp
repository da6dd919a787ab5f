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
/// An axis is a dotted path to a scalar key of the experiment's tables (`model`,
/// `model.<key>`, `cluster.<key>`, `training.<key>`, `training.overlap.<key>`, ...; see
/// `clustersim schema`); its values are checked against the key's type and bounds where they
/// are written. Values are a list or a range (`from`, `to`, and `step` or `factor`). The sizes
/// are bounded before anything is expanded: at most kMaxAxisValues values per axis and
/// kMaxSweepPoints points. Points are numbered in expansion order (the last axis varies
/// fastest); a point that breaks a layout rule or does not fit in memory stays in the results
/// with its reason, and so does one whose run fails.

#include "sim/study/Catalog.hpp"
#include "sim/study/Simulation.hpp"
#include "topology/config/Schema.hpp"
#include "topology/config/Yaml.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace clustersim {

constexpr std::size_t kMaxAxisValues = 100000;
constexpr std::size_t kMaxSweepPoints = 1000000;

struct SweepValue {
  std::string text;         ///< the scalar as written (or generated, for ranges)
  int item = -1;            ///< index in the axis's list in the document; -1 for a range value
  SourceLocation where;     ///< the list item, or the range
};

struct SweepAxis {
  std::string path;
  std::vector<SweepValue> values;
};

struct SweepSpec {
  bool zip = false;
  std::vector<SweepAxis> axes;
  std::size_t points = 0; ///< product (or zip length) of the axes
  bool seeded = false;    ///< simulation.seeds > 1: rows carry the step's p10 / p50 / p90 over the seeds
};

struct SweepPoint {
  std::size_t index = 0;
  std::vector<std::size_t> choice; ///< per axis: the index of its value
};

/// The keys of `sweep:` and of a range.
const Section& sweep_section();
const Section& sweep_range_section();

/// The `sweep:` section of an experiment document, validated; nullopt when there is none.
std::optional<SweepSpec> parse_sweep(const YamlNode& doc);
/// Point `index` (0 <= index < sweep.points) without expanding the others.
SweepPoint point_at(const SweepSpec& sweep, std::size_t index);
/// The value of axis `k` at a point, as written.
const SweepValue& value_of(const SweepSpec& sweep, const SweepPoint& point, std::size_t k);
/// The experiment document with command-line settings applied ("training.tp=4": any scalar key
/// of the experiment's tables, its value checked as the file's would be), applied again on every
/// later parse of it (each sweep point's); an error in a setting names `--set KEY=VALUE`. With
/// `each` ("cases" of a validation file), every item of that list is an experiment and gets them.
YamlNode apply_settings(const YamlNode& doc, const std::vector<std::string>& settings,
                        const std::string& each = "");
/// One setting of a document's key: its dotted path, its value as text, and where it was
/// written (`command line: --tp` for a command's own flag).
struct Setting {
  std::string path, text;
  SourceLocation origin;
};
/// The same, for settings that come from other flags than `--set` (the `memory` command's):
/// each is checked and placed as one `--set` is, and an error in it names its origin.
YamlNode apply_settings(const YamlNode& doc, const std::vector<Setting>& settings, const std::string& each = "");
/// The experiment document of one point: the base, freshly parsed so that every position is
/// intact, with the point's values set (list values keep the position of their list item).
YamlNode apply_point(const YamlNode& doc, const SweepSpec& sweep, const SweepPoint& point);

/// One row of results: the point, its status and its metrics (as JSON, for both outputs).
Json sweep_row(const SweepSpec& sweep, const SweepPoint& point, const std::string& status, const std::string& reason,
               const RunMetrics* metrics);
/// What became of one point: its status ("ok", "oom", "invalid", "error"), the reason, the
/// experiment where it parsed and the metrics where there are some (an "oom" point has its
/// memory and no step).
struct PointOutcome {
  std::string status;
  std::string reason;
  std::optional<ExperimentSpec> experiment;
  std::optional<RunMetrics> metrics;
};
/// Evaluates one point: parse, `adjust` (a command's flags), memory check, simulate with its
/// baseline. Every front end that runs sweep points goes through here.
PointOutcome evaluate_point(const YamlNode& doc, const SweepSpec& sweep, const SweepPoint& point, const Catalog& catalog,
                            const std::string& mode = "", const std::function<void(ExperimentSpec&)>& adjust = {});
/// Evaluates one point (parse, memory check, simulate with its baseline): the row. A point
/// that breaks a rule is "invalid", one that does not fit "oom"; `mode` overrides the
/// document's simulation mode when not empty.
Json run_point(const YamlNode& doc, const SweepSpec& sweep, const SweepPoint& point, const Catalog& catalog,
               const std::string& mode = "");

struct SweepOptions {
  int shard = 0;      ///< run the points with index % shards == shard
  int shards = 1;
  int jobs = 0;       ///< processes (0: all cores)
  std::string mode;   ///< overrides simulation.mode ("full" for --full)
  std::function<void(std::size_t done, std::size_t total)> progress;
};

struct SweepResult {
  std::string name; ///< the experiment's name
  std::vector<Json> rows;
  std::size_t errors = 0; ///< rows whose run failed (status "error")
  std::size_t points = 0; ///< of the whole sweep (every shard); 0: not recorded
};

/// Parses each point's experiment: a mistake of the document itself (one no point's value
/// names) is thrown as the ConfigError it is; a point's own bad value is left to its row.
void check_sweep_document(const YamlNode& doc, const SweepSpec& sweep, const Catalog& catalog,
                          const std::vector<SweepPoint>& points);

/// Checks every point of the shard (a mistake of the document itself is a ConfigError, thrown
/// before anything runs), then runs them, one forked process each, `jobs` at a time.
SweepResult run_sweep(const YamlNode& doc, const SweepSpec& sweep, const Catalog& catalog, const SweepOptions& o);

/// results.csv: one header, one line per row, columns in a fixed order.
std::string rows_to_csv(const std::vector<Json>& rows);
/// JSON Lines: one row object per line, the columns of rows_to_csv with their JSON types
/// (pandas: read_json(path, lines=True)).
std::string rows_to_jsonl(const std::vector<Json>& rows);
/// The columns of a sweep's results.csv, known before any point runs.
std::vector<std::string> sweep_columns(const SweepSpec& sweep);
/// results.json: the experiment's name, the points of the whole sweep (so that merge can tell
/// a missing shard) and the rows.
std::string rows_to_json(const std::string& name, const std::vector<Json>& rows, std::size_t points);
/// Reads a results.json back (`merge`); every malformed part is a ConfigError in `file`.
SweepResult rows_from_json(const std::string& text, const std::string& file);

/// One shard's results.json as read back, and the file it came from (for its errors).
struct ShardResult {
  std::string file;
  SweepResult result;
};
/// The rows of every shard of one sweep, in point order, as one unsharded run writes them.
/// Shards of another experiment or sweep, rows with other columns than the first shard's and a
/// point in two shards are ConfigErrors at the shard's file; points that no shard has (half a
/// sweep is not a merged one) are one at `missing_at`.
SweepResult merge_shards(const std::vector<ShardResult>& shards, const SourceLocation& missing_at);

/// "I/N" → (I, N); throws ConfigError.
std::pair<int, int> parse_shard(const std::string& text);

} // namespace clustersim
