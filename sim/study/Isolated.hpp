#pragma once
/// Runs a function in a forked child and returns the string it produced. SimGrid allows one
/// engine per process, so every simulation after the first (baselines, validation cases,
/// sweep points) runs in its own child.

#include <functional>
#include <string>
#include <vector>

namespace clustersim {

/// The child's exceptions come back as std::runtime_error with the child's what(); a
/// ConfigError comes back as ConfigError (same text) so exit codes stay right.
std::string run_isolated(const std::function<std::string()>& fn);

/// Runs every function in its own child, at most `jobs` at a time, and returns their outputs
/// in order. A child's error becomes the output "ERROR: <what>" (so one bad point does not
/// lose the others); `on_done(i)` is called as each finishes (progress reporting).
std::vector<std::string> run_isolated_all(const std::vector<std::function<std::string()>>& fns, int jobs,
                                          const std::function<void(std::size_t)>& on_done = {});

/// Number of processors available (at least 1).
int available_cores();

} // namespace clustersim
