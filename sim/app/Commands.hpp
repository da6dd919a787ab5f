#pragma once
/// The `clustersim` subcommands. Each registers itself on the CLI11 app and returns the
/// action to run once parsing succeeded.

#include "topology/config/ConfigError.hpp"

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace clustersim {

using Action = std::function<int()>;

/// Exit statuses: 0 done, 1 internal error, 2 bad input (nothing written), 3 `run` of a step
/// that does not fit in GPU memory (its report is written and printed; --allow-oom gives 0).
constexpr int kExitOutOfMemory = 3;

/// Every subcommand (one is required); `action` is set to the selected one's once parsing
/// succeeded.
void add_commands(CLI::App& app, Action& action);

/// Adds a subcommand; sets `action` to run it when selected.
void add_run_command(CLI::App& app, Action& action);
void add_platform_command(CLI::App& app, Action& action);
void add_bench_command(CLI::App& app, Action& action);
void add_collective_command(CLI::App& app, Action& action);
void add_model_commands(CLI::App& app, Action& action);
void add_merge_command(CLI::App& app, Action& action);
void add_plot_command(CLI::App& app, Action& action);
void add_validate_command(CLI::App& app, Action& action);
void add_plan_command(CLI::App& app, Action& action);
void add_schema_command(CLI::App& app, Action& action);
void add_goodput_command(CLI::App& app, Action& action);
void add_export_command(CLI::App& app, Action& action);
/// A usage error CLI11 found (an unknown command, an unexpected, missing or malformed
/// argument) as the one line every bad input gets: `command line: what; valid: ...` naming the
/// commands or the options of the command the parse reached. `args`: argv without argv[0].
ConfigError usage_error(const CLI::App& app, const CLI::ParseError& e, const std::vector<std::string>& args);

/// "1MiB:16GiB" (doubling), "1GiB" or "1MiB,4MiB" → sizes in bytes; ConfigError on bad input.
std::vector<double> parse_sizes(const std::string& spec);

} // namespace clustersim
