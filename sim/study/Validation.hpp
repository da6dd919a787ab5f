#pragma once
/// Published training runs (the schema of experiments/validation/README.md) and how well the
/// simulator predicts them from their configuration alone.

#include "sim/study/Experiment.hpp"
#include "sim/study/Simulation.hpp"

#include <string>
#include <vector>

namespace clustersim {

struct ValidationCase {
  std::string id;
  std::string source;
  std::string file;
  ExperimentSpec experiment;
  /// Why the case's experiment could not be built (FILE:LINE:COL: ...), empty when it was: a
  /// layout the rules reject or an unknown platform is that case's miss, not the file's.
  std::string build_error;
  std::string metric;          ///< tflops_per_gpu | mfu | step_time_s | tokens_per_s_per_gpu
  double measured = 0;         ///< as published (mfu in percent)
  std::string flops = "model"; ///< for tflops_per_gpu and mfu: model | hardware
};

/// The keys of a validation file, of one case and of its measurement.
const Section& validation_section();
const Section& case_section();
const Section& measured_section();

/// Reads every case of a validation file. A malformed file (syntax, a case without an id, a
/// measurement outside the schema) is a ConfigError; a case whose model, cluster or training
/// cannot be built is returned with its build_error.
std::vector<ValidationCase> load_validation_cases(const std::string& path, const Catalog& catalog);
/// The same from a parsed document.
std::vector<ValidationCase> parse_validation_cases(const YamlNode& root, const Catalog& catalog);

/// How far the simulator's predictions of published runs lie from them, for one kind of model
/// (experiments/validation/accuracy.yaml, written by scripts/update-accuracy.sh).
struct ValidatedError {
  std::string kind;            ///< dense | moe
  long long cases = 0;         ///< published runs it pools
  double median_abs_error = 0; ///< median |predicted - measured| / measured
  std::vector<std::string> sets;
};
const Section& accuracy_section();
const Section& accuracy_kind_section();
/// The validated error of dense or MoE models, read from `path`; a ConfigError names a bad file.
ValidatedError validated_error(const std::string& path, bool moe);

/// The metric a case names, from a simulation's metrics (mfu in percent, like the schema).
double predicted_metric(const ValidationCase& c, const RunMetrics& m);

/// The part of an id before its first '_'.
std::string case_source(const std::string& id);

/// Every case simulated (a forked process each, `jobs` at a time): per case its prediction,
/// error and status (ok, oom, or the reason it could not be built or run), and a summary
/// (median and max |error| over the cases that ran, per source and overall, misses counted).
struct ValidationReport {
  Json rows = Json::array();
  Json summary;
};
ValidationReport run_validation(const std::vector<ValidationCase>& cases, const Catalog& catalog, int jobs);

} // namespace clustersim
