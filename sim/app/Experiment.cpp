#include "Experiment.hpp"

#include "Suggest.hpp"

namespace clustersim {

void read_case_sections(YamlMap& map, const Catalog& catalog, ExperimentSpec& e)
{
  YamlNode model = map.require("model");
  e.model = parse_model(model, catalog.models_dir());
  YamlMap cluster(map.require("cluster"), "cluster");
  YamlNode platform = cluster.require("platform");
  e.platform = catalog.platform(platform.as_string(), platform.where(), e.file);
  YamlNode gpus = cluster.require("gpus");
  e.gpus = static_cast<int>(gpus.as_int(1, 1 << 22));
  if (e.gpus > e.platform.node.gpus && e.gpus % e.platform.node.gpus != 0)
    gpus.fail(std::to_string(e.gpus) + " GPUs is not a multiple of the " + std::to_string(e.platform.node.gpus) +
                  " GPUs per node of '" + e.platform.name + "'",
              "up to one node, or a multiple of " + std::to_string(e.platform.node.gpus));
  cluster.finish();
  YamlNode training = map.require("training");
  e.training = parse_training(training, e.gpus, e.model);
  if (!e.platform.node.gpu.supports(e.training.precision)) {
    YamlMap t(training, "training");
    auto p = t.find("precision");
    std::vector<std::string> ok;
    for (const auto& n : precision_names())
      if (e.platform.node.gpu.supports(parse_precision(n)))
        ok.push_back(n);
    (p ? *p : training)
        .fail(std::string("GPU '") + e.platform.node.gpu.id + "' has no " + to_string(e.training.precision) +
                  " support",
              join(ok));
  }
}

ExperimentSpec load_experiment(const std::string& path, const Catalog& catalog)
{
  return parse_experiment(YamlNode::load_file(path), catalog);
}

ExperimentSpec parse_experiment(const YamlNode& root, const Catalog& catalog)
{
  ExperimentSpec e;
  e.file = root.file();
  YamlMap top(root, "experiment");
  e.name = top.get_string("name", e.file);
  e.description = top.get_string("description", "");
  read_case_sections(top, catalog, e);
  if (auto b = top.find("baseline")) {
    YamlMap bm(*b, "baseline");
    YamlNode g = bm.require("gpus");
    e.baseline_gpus = static_cast<int>(g.as_int(1, e.gpus));
    if (e.baseline_gpus % e.training.model_parallel() != 0)
      g.fail("baseline of " + std::to_string(e.baseline_gpus) +
                 " GPUs cannot hold one tp*pp*cp = " + std::to_string(e.training.model_parallel()) + " replica",
             "a multiple of tp*pp*cp");
    bm.finish();
  }
  if (auto s = top.find("simulation")) {
    YamlMap sm(*s, "simulation");
    e.mode = sm.get_choice("mode", "auto", {"auto", "full", "analytic"});
    sm.finish();
  }
  if (auto b = top.find("budget")) {
    YamlMap bm(*b, "budget");
    e.budget_tokens = bm.require("tokens").as_number(1, 1e18);
    bm.finish();
  }
  top.allow({"sweep", "plot"});
  top.finish();
  return e;
}

} // namespace clustersim
