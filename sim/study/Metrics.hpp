#pragma once
/// The report's figures and the layout they describe, each declared once: its key, unit and
/// meaning are the same in the report JSON (`run --json`), a sweep's results.csv and
/// results.json, the planner's JSON and the goodput rows, and a report that crossed a fork
/// reads back to the same figures (`metrics_from_json`). README's list of keys is printed from
/// these tables (`clustersim schema --metrics`).

#include "sim/study/Simulation.hpp"

#include <vector>

namespace clustersim {

/// Where the report JSON holds a figure: at the top, in "breakdown" or in "memory".
enum class MetricPart { step, breakdown, memory };

struct Metric {
  const char* key;  ///< the name everywhere (JSON key, CSV column)
  const char* unit; ///< "s", "bytes", "1" (a ratio), ...
  const char* doc;
  MetricPart part;
  /// Its name in a figure's legend (the breakdown and memory parts); empty for the others.
  const char* label = "";
  /// Where it is kept: one of the three, by `part`; a figure derived from others has none.
  double RunMetrics::* field = nullptr;
  double Breakdown::* share = nullptr;
  double MemoryBreakdown::* memory = nullptr;
  double (*derived)(const RunMetrics&) = nullptr;
  /// Known before the step runs (memory, the budget): a point that does not fit still shows it.
  bool before_run = false;
  /// The text report tells it in its own words (a step figure); the step figures it does not
  /// tell, a metric added to this table among them, it lists under "other figures".
  bool narrated = false;

  double get(const RunMetrics& m) const;
  /// Stores `v` (a derived figure is not stored: it follows from the others).
  void set(RunMetrics& m, double v) const;
};

/// A figure as JSON: null where it is not known (NaN: a part not priced), else the number.
Json metric_json(double v);
/// Its inverse: NaN for null.
double metric_value(const Json& v);

/// Every figure of a report, in report order: step, then breakdown, then memory.
const std::vector<Metric>& report_metrics();
/// The figure named `key`; nullptr when there is none.
const Metric* find_metric(const std::string& key);

/// One key of the layout a run used (tp, pipeline_schedule, precision, ...), as a report, a
/// results row and a plan candidate show it; `set` reads it back (std::invalid_argument on a
/// name the layout does not know).
struct LayoutField {
  const char* key;
  const char* doc;
  Json (*get)(const TrainingSpec&);
  void (*set)(TrainingSpec&, const Json&);
};
const std::vector<LayoutField>& layout_fields();

/// The layout keys of `t` as a flat object (or null values for a row without a layout).
void put_layout(Json& row, const TrainingSpec* t);
/// Every figure of `m` as flat columns: null without a run (`ran` false), except those known
/// before it, which a row with metrics shows.
void put_metric_columns(Json& row, const RunMetrics* m, bool ran);

/// README's list: one line per figure, `key` (unit): doc.
std::string metrics_markdown();

} // namespace clustersim
