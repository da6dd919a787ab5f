#include "Commands.hpp"

namespace clustersim {

void add_commands(CLI::App& app, Action& action)
{
  app.require_subcommand(1);
  add_run_command(app, action);
  add_platform_command(app, action);
  add_bench_command(app, action);
  add_collective_command(app, action);
  add_model_commands(app, action);
  add_merge_command(app, action);
  add_plot_command(app, action);
  add_validate_command(app, action);
  add_plan_command(app, action);
  add_schema_command(app, action);
  add_goodput_command(app, action);
}

} // namespace clustersim
