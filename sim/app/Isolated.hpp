#pragma once
/// Runs a function in a forked child and returns the string it produced. SimGrid allows one
/// engine per process, so every simulation after the first (baselines, validation cases,
/// sweep points) runs in its own child.

#include <functional>
#include <string>

namespace clustersim {

/// The child's exceptions come back as std::runtime_error with the child's what(); a
/// ConfigError comes back as ConfigError (same text) so exit codes stay right.
std::string run_isolated(const std::function<std::string()>& fn);

} // namespace clustersim
