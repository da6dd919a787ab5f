// clustersim: simulate distributed LLM training on GPU clusters.
#include "sim/app/Commands.hpp"
#include "sim/study/Catalog.hpp"
#include "topology/config/ConfigError.hpp"

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#ifndef CLUSTERSIM_VERSION
#define CLUSTERSIM_VERSION "0.0.0"
#endif

int main(int argc, char** argv)
{
  CLI::App app{"clustersim: discrete-event simulator of GPU clusters training large language models"};
  // the data root is printed with the version: where an installed binary reads its catalog
  app.set_version_flag("--version", std::string("clustersim ") + CLUSTERSIM_VERSION + "\ndata: " +
                                        clustersim::data_root());
  clustersim::Action action;
  clustersim::add_commands(app, action);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << clustersim::usage_error(app, e, std::vector<std::string>(argv + 1, argv + argc)).what() << "\n";
    return 2;
  }
  try {
    return action ? action() : 0;
  } catch (const clustersim::ConfigError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "clustersim: internal error: " << e.what() << "\n";
    return 1;
  }
}
