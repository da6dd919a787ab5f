#pragma once
/// The `clustersim` subcommands. Each registers itself on the CLI11 app and returns the
/// action to run once parsing succeeded.

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>

namespace clustersim {

using Action = std::function<int()>;

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
/// "1MiB:16GiB" (doubling), "1GiB" or "1MiB,4MiB" → sizes in bytes; ConfigError on bad input.
std::vector<double> parse_sizes(const std::string& spec);

} // namespace clustersim
