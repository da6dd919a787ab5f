// clustersim export: an experiment's step as Chakra execution traces, one per rank, for
// ASTRA-sim and the other tools that read Chakra (ChakraTrace.hpp has the mapping).
#include "sim/app/Arguments.hpp"
#include "sim/app/Commands.hpp"
#include "sim/app/Output.hpp"
#include "sim/study/Catalog.hpp"
#include "sim/study/ChakraWorkload.hpp"
#include "topology/config/Units.hpp"

#include <cstdio>

namespace clustersim {

namespace {

/// The file name every trace and the groups share: ASTRA-sim's --workload-configuration is
/// DIR/workload and its --comm-group-configuration DIR/workload.json.
constexpr const char* kPrefix = "workload";

struct ExportOptions {
  std::string experiment;
  std::string chakra;
  std::string ranks;
  std::vector<std::string> settings;
};

int run_export(const ExportOptions& o)
{
  Catalog catalog = Catalog::open();
  ExperimentSpec e = parse_experiment(experiment_document(o.experiment, o.settings), catalog);
  check_directory(o.chakra, "--chakra");
  std::vector<std::uint32_t> ranks;
  if (!o.ranks.empty()) {
    const auto in = number_set(o.ranks, e.gpus, "--ranks", "GPU", "GPUs");
    for (std::uint32_t r = 0; r < in.size(); ++r)
      if (in[r])
        ranks.push_back(r);
  }
  chakra::Export x = export_chakra(e, ranks);
  OutputSet out;
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < x.ranks.size(); ++i) {
    bytes += x.files[i].size();
    out.add(o.chakra + "/" + kPrefix + "." + std::to_string(x.ranks[i]) + ".et", std::move(x.files[i]), "--chakra");
  }
  const std::size_t nodes = x.nodes;
  out.add(o.chakra + "/" + kPrefix + ".json", chakra::encode_groups(x.groups), "--chakra");
  out.commit();
  std::printf("%s: %zu Chakra traces (%zu nodes, %s) and communicator groups (%zu) in %s/%s.json\n", e.name.c_str(),
              x.ranks.size(), nodes, format_bytes(static_cast<double>(bytes)).c_str(), x.groups.size(),
              o.chakra.c_str(), kPrefix);
  std::printf("ASTRA-sim: --workload-configuration=%s/%s --comm-group-configuration=%s/%s.json\n", o.chakra.c_str(),
              kPrefix, o.chakra.c_str(), kPrefix);
  return 0;
}

} // namespace

void add_export_command(CLI::App& app, Action& action)
{
  auto opt = std::make_shared<ExportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "export", "Write an experiment's step as Chakra execution traces (one per GPU, with the communicator groups), "
                "every rank as a full-mode run simulates it");
  cmd->add_option("experiment", opt->experiment, "experiment YAML file (-: standard input)")->required();
  add_settings_option(*cmd, opt->settings);
  cmd->add_option("--chakra", opt->chakra, "write DIR/workload.RANK.et and DIR/workload.json")->required();
  cmd->add_option("--ranks", opt->ranks, "only these GPUs' traces, e.g. 0-7,64 (default: every GPU)");
  cmd->callback([opt, &action] { action = [opt] { return run_export(*opt); }; });
}

} // namespace clustersim
