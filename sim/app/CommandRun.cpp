#include "Commands.hpp"
#include "Output.hpp"
#include "Simulation.hpp"

#include <iostream>

namespace clustersim {

void add_run_command(CLI::App& app, Action& action)
{
  struct Options {
    std::string experiment;
    bool json = false;
    std::string out;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("run", "Simulate one training step of an experiment and report step time, MFU, "
                                            "scaling efficiency, the step breakdown and memory per GPU");
  cmd->add_option("experiment", opt->experiment, "experiment YAML file")->required();
  cmd->add_flag("--json", opt->json, "print the report as JSON");
  cmd->add_option("--out", opt->out, "also write DIR/report.json and DIR/report.txt");
  cmd->callback([opt, &action] {
    action = [opt] {
      Catalog catalog = Catalog::open();
      ExperimentSpec e = load_experiment(opt->experiment, catalog);
      RunMetrics m = run_experiment(e, catalog);
      std::string json = to_json(m).dump(2) + "\n";
      std::string text = format_report(m);
      if (!opt->out.empty()) {
        OutputSet out;
        out.add(opt->out + "/report.json", json);
        out.add(opt->out + "/report.txt", text);
        out.commit();
      }
      std::cout << (opt->json ? json : text);
      return 0;
    };
  });
}

} // namespace clustersim
