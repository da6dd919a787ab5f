#pragma once
/// The human-readable report of one simulated step (what `clustersim run` prints).

#include "Simulation.hpp"

#include <string>

namespace clustersim {

std::string format_report(const RunMetrics& m);

} // namespace clustersim
