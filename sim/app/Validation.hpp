#pragma once
/// Published training runs (the schema of experiments/validation/README.md) and how well the
/// simulator predicts them from their configuration alone.

#include "Experiment.hpp"
#include "Simulation.hpp"

#include <string>
#include <vector>

namespace clustersim {

struct ValidationCase {
  std::string id;
  std::string source;
  std::string file;
  ExperimentSpec experiment;
  std::string metric;          ///< tflops_per_gpu | mfu | step_time_s | tokens_per_s_per_gpu
  double measured = 0;         ///< as published (mfu in percent)
  std::string flops = "model"; ///< for tflops_per_gpu and mfu: model | hardware
};

/// Reads every case of a validation file; schema errors are ConfigErrors with positions.
std::vector<ValidationCase> load_validation_cases(const std::string& path, const Catalog& catalog);

/// The metric a case names, from a simulation's metrics (mfu in percent, like the schema).
double predicted_metric(const ValidationCase& c, const RunMetrics& m);

/// The part of an id before its first '_'.
std::string case_source(const std::string& id);

} // namespace clustersim
