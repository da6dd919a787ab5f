#include "sim/app/Commands.hpp"

#include "topology/config/Suggest.hpp"

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
  add_export_command(app, action);
}

namespace {

/// The subcommand the parse reached (`platform show` inside `platform`), or the app itself.
const CLI::App& deepest(const CLI::App& app)
{
  for (const CLI::App* sub : app.get_subcommands())
    return deepest(*sub);
  return app;
}

std::string path_of(const CLI::App& app)
{
  std::string path = app.get_name();
  for (const CLI::App* p = app.get_parent(); p && p->get_parent(); p = p->get_parent())
    path = p->get_name() + " " + path;
  return path;
}

std::vector<std::string> command_names(const CLI::App& app)
{
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({}))
    names.push_back(sub->get_name());
  return names;
}

} // namespace

ConfigError usage_error(const CLI::App& app, const CLI::ParseError& e, const std::vector<std::string>& args)
{
  const CLI::App& at = deepest(app);
  const std::vector<std::string> commands = command_names(at);
  const bool top = at.get_parent() == nullptr;
  std::string where = top ? "clustersim" : "clustersim " + path_of(at);
  // a word where a command was expected: name it, with the nearest command
  if (!commands.empty() && at.get_subcommands().empty()) {
    std::string word;
    bool after = top;
    for (const std::string& a : args) {
      if (!after) {
        after = a == at.get_name();
        continue;
      }
      if (!a.empty() && a[0] != '-') {
        word = a;
        break;
      }
    }
    const std::string what =
        word.empty() ? where + ": " + e.what() : unknown_name("command", word, commands, "'" + where + "'");
    return ConfigError(SourceLocation{"command line", 0, 0}, what, join(commands));
  }
  std::vector<std::string> options;
  for (const CLI::Option* o : at.get_options())
    if (o->get_name() != "--help") // CLI11 names the help flag by its long name
      options.push_back(o->get_name());
  const std::string valid =
      options.empty() ? "see '" + where + " --help'" : "the options of '" + where + "': " + join(options);
  return ConfigError(SourceLocation{"command line", 0, 0}, where + ": " + e.what(), valid);
}

} // namespace clustersim
