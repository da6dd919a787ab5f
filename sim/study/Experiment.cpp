#include "sim/study/Experiment.hpp"
#include "sim/study/ChakraWorkload.hpp"
#include "strategies/Framework.hpp"
#include "strategies/LayoutRules.hpp"
#include "strategies/PipelineSchedule.hpp"
#include "strategies/StepBuilder.hpp"
#include "topology/Prices.hpp"

#include "sim/Protocols.hpp"
#include "sim/collectives/CollectiveAlgorithm.hpp"
#include "sim/study/PlotSpec.hpp"
#include "sim/study/Sweep.hpp"
#include "sim/study/Validation.hpp"
#include "topology/config/Suggest.hpp"

#include <algorithm>
#include <numeric>

namespace clustersim {

const Section& experiment_section()
{
  using K = KeySpec;
  static const Section s{"experiment",
                         "an experiment document: a model on a cluster with training settings",
                         {
                             K::string("name", "", "what reports call it").computed("the file's path"),
                             K::string("description", "", "one line for reports and sweeps"),
                             K::value("model", "a preset name, a mapping of dimensions, or {hf_config: FILE}").must(),
                             K::section("cluster", "cluster", "the platform and the number of GPUs").must(),
                             K::section("training", "training", "parallel layout, batch, precision, framework").must(),
                             K::section("baseline", "baseline", "the scaling-efficiency baseline"),
                             K::section("simulation", "simulation", "how the step is simulated"),
                             K::section("budget", "budget", "the token budget of time-to-train, GPU-hours and cost"),
                             K::section("workload", "workload",
                                        "the step's tasks from execution traces instead of model and training"),
                             K::section("faults", "faults", "stragglers, jitter and link faults in the step"),
                             K::section("reliability", "reliability",
                                        "failures, checkpoints and restarts (clustersim goodput)"),
                             K::section("sweep", "sweep", "run once per point of these axes"),
                             K::list("plot", "figures drawn from a sweep's results (section plot, one per item)"),
                         }};
  return s;
}

const Section& cluster_section()
{
  using K = KeySpec;
  static const Section s{
      "cluster",
      "the cluster the step runs on",
      {
          K::string("platform", "",
                    "a platform of platforms/ by name, a path to a platform file, or a platform written in "
                    "place: {base: dgx-h100, node: {nics: {bandwidth: 800Gbps}}} (its keys are sweep axes: "
                    "cluster.platform.node.nics.bandwidth)")
              .must(),
          K::integer("gpus", 0, 1, 1 << 22, "GPUs (whole nodes beyond one node)").must().counts("GPUs"),
          K::choice("routing", "", fabric_routing_names(), "how switches spread flows over parallel up-links")
              .computed("the platform's fabric.routing"),
          K::integer("seed", 0, 0, 2147483647, "ECMP hash seed").computed("the platform's fabric.seed"),
          K::integer("qps_per_connection", 0, 1, 128,
                     "queue pairs per connection between two GPUs (NCCL_IB_QPS_PER_CONNECTION): ecmp-qp hashes "
                     "each apart")
              .computed("the platform's fabric.qps_per_connection")
              .counts("QPs"),
          K::section("background", "platform.fabric.background",
                     "another tenant's steady traffic on the switch-to-switch cables (over the platform's "
                     "fabric.background)"),
          K::list("jobs", "other jobs on the same cluster, simulated with this one (section cluster.jobs, one per "
                          "item)")
              .of("cluster.jobs"),
          K::choice("placement", "packed", {"packed", "interleaved"},
                    "with jobs: packed gives each job its nodes in one run, this experiment's first; interleaved "
                    "deals the nodes one at a time to each job in turn, so the jobs share leaves"),
      }};
  return s;
}

const Section& job_section()
{
  using K = KeySpec;
  static const Section s{
      "cluster.jobs",
      "another job on the same cluster: it runs on whole nodes of it (cluster.placement), on the same platform and "
      "fabric, and every rank of both is simulated together; its steps repeat back to back for as long as the "
      "experiment's step runs",
      {
          K::string("name", "", "what the report calls it").computed("job N, its place in the list from 1"),
          K::value("model", "a preset name, a mapping of dimensions, or {hf_config: FILE}").must(),
          K::integer("gpus", 0, 1, 1 << 22, "GPUs (whole nodes)").must().counts("GPUs"),
          K::section("training", "training", "its parallel layout, batch, precision, framework").must(),
          K::number("phase", 0, 0, 0.999,
                    "how far its steps trail the experiment's, as a share of its step alone: 0 starts both "
                    "together, so two like jobs reduce their gradients at the same moments (the worst case)")
              .counts("fraction"),
      }};
  return s;
}

const Section& baseline_section()
{
  using K = KeySpec;
  static const Section s{
      "baseline",
      "what scaling efficiency is measured against",
      {K::integer("gpus", 0, 1, 1 << 22, "GPUs of the baseline run (same per-replica work)")
           .computed("one node, or the smallest count holding a tp*pp*cp replica on whole nodes")
           .counts("GPUs")}};
  return s;
}

const std::vector<std::string>& engine_names()
{
  static const std::vector<std::string> names{"event", "simgrid"};
  return names;
}

const Section& simulation_section()
{
  using K = KeySpec;
  static const Section s{
      "simulation",
      "how the step is simulated",
      {K::choice("mode", "auto", {"auto", "folded", "full", "analytic"},
                 "auto: fold replicas where exact; folded: fold anyway (approximate where replicas contend); "
                 "full: every rank; analytic: contention-free task graph"),
       K::choice("engine", "event", engine_names(),
                 "event: the event engine, exact max-min sharing solved incrementally (fast); simgrid: SimGrid's "
                 "actors on the same links and routes, the reference it is tested against"),
       K::integer("seeds", 1, 1, 1000,
                  "ECMP hash seeds to run (the fabric's seed, seed + 1, ...): the report is the median seed's "
                  "step, with min, p10, p50, p90 and max of the step and its breakdown over the seeds")
           .not_an_axis(),
       K::integer("max_tasks", kMaxStepTasks, 1000, kMaxStepTasksLimit,
                  "the most tasks the simulated step may have, checked before it is built: a task costs about "
                  "70 bytes and 0.5 us, so the default is about 1.2 GB and 8 s; raise it for a bigger full-mode "
                  "step")
           .not_an_axis()}};
  return s;
}

const Section& budget_section()
{
  using K = KeySpec;
  static const Section s{"budget",
                         "what a training run costs at the simulated throughput",
                         {K::number("tokens", 1e12, 1, 1e18, "tokens to train").counts("tokens")}};
  return s;
}

const Section& workload_section()
{
  using K = KeySpec;
  static const Section s{
      "workload",
      "a step given as execution traces rather than built from the model and training",
      {K::string("chakra", "",
                 "a directory of Chakra execution traces, PREFIX.0.et to PREFIX.N-1.et for N = cluster.gpus, with "
                 "their communicator groups in PREFIX.json (as `clustersim export --chakra` writes them), relative to "
                 "this file: compute nodes run for their recorded durations, collectives and transfers on the "
                 "simulated network; model and training still give the FLOPs, tokens and memory of the report")
           .not_an_axis()}};
  return s;
}

std::vector<const Section*> all_sections()
{
  // clang-format off
  return {&experiment_section(), &model_section(),         &mla_section(),        &cluster_section(),    &job_section(), &training_section(),
          &overlap_section(),    &state_bytes_section(),   &lora_section(),   &baseline_section(),   &simulation_section(),
          &budget_section(),     &workload_section(),      &reliability_section(),   &reliability_fit_section(),
          &reliability_checkpoint_section(), &faults_section(), &straggler_section(), &link_fault_section(),
          &jitter_section(), &sweep_section(),         &sweep_range_section(), &plot_section(),
          &validation_section(), &case_section(),          &measured_section(),   &platform_section(),
          &node_section(),       &scale_up_section(),      &pcie_section(),       &nics_section(),
          &fabric_section(),     &background_section(), &cost_section(),
          &prices_file_section(), &years_price_section(), &energy_price_section(), &facility_price_section(),
          &node_price_section(), &switch_price_section(), &part_price_section(), &gpu_catalog_section(), &kernels_section(), &gpu_kernels_section(),
          &gpu_section(),        &gpu_peak_section(),   &gpu_memory_section(),    &gpu_nvlink_section(), &gpu_efficiency_section(),
          &gpu_gemm_section(),   &attention_curve_section(), &attention_point_section(), &frameworks_file_section(),
          &framework_section(),  &framework_bucket_section(), &framework_sharded_section(), &tp_overlap_section(), &kernel_set_section(),
          &kernel_op_section(),  &kernel_pass_section(),  &fp8_recipe_section(),  &fp8_cast_section()};
  // clang-format on
}

SourceLocation ExperimentSpec::at(const std::string& key) const
{
  auto it = where.find(key);
  if (it != where.end())
    return it->second;
  return SourceLocation{file, 0, 0};
}

void check_collective_algo(const std::string& algo, const SourceLocation& where)
{
  const auto slash = algo.find('/');
  const std::string name = algo.substr(0, slash);
  const std::string protocol = slash == std::string::npos ? "" : algo.substr(slash + 1);
  const auto& registry = AlgorithmRegistry::instance();
  std::vector<std::string> names{"auto"};
  for (const auto& n : registry.names())
    names.push_back(n);
  const std::string valid = "auto, or NAME[/PROTOCOL] with NAME one of " +
                            RegistryDirectory::instance().describe(CollectiveAlgorithm::kRegistryKind);
  if (std::find(names.begin(), names.end(), name) == names.end())
    throw ConfigError(where, unknown_name("collective algorithm", name, names), valid);
  if (slash == std::string::npos)
    return;
  std::vector<std::string> protocols =
      name == "auto" ? protocol_names() : registry.make(name)->protocols();
  if (std::find(protocols.begin(), protocols.end(), protocol) == protocols.end())
    throw ConfigError(where, unknown_name("protocol of " + name, protocol, protocols), join(protocols));
}

namespace {

void read_cluster(SectionReader& map, const Catalog& catalog, ExperimentSpec& e)
{
  SectionReader cluster(map.require("cluster"), cluster_section());
  YamlNode platform = cluster.require("platform");
  e.platform = platform.is_scalar() ? catalog.platform(platform.as_string(), platform.where(), e.file)
                                    : catalog.platform(platform);
  YamlNode gpus = cluster.require("gpus");
  e.gpus = static_cast<int>(cluster.integer("gpus"));
  if (e.gpus > e.platform.node.gpus && e.gpus % e.platform.node.gpus != 0)
    gpus.fail(std::to_string(e.gpus) + " GPUs is not a multiple of the " + std::to_string(e.platform.node.gpus) +
                  " GPUs per node of '" + e.platform.name + "'",
              "up to one node, or a multiple of " + std::to_string(e.platform.node.gpus));
  e.where["cluster.platform"] = platform.where();
  e.where["cluster.gpus"] = gpus.where();
  for (const char* key : {"routing", "seed", "qps_per_connection"}) {
    auto v = cluster.find(key);
    if (!v)
      continue;
    if (e.platform.node.nics == 0)
      v->fail(std::string("cluster.") + key + " needs a scale-out fabric, and '" + e.platform.name + "' has no NICs",
              "a platform with a fabric, or no " + std::string(key));
    e.where[std::string("cluster.") + key] = v->where();
  }
  if (cluster.has("routing"))
    e.platform.fabric.routing = fabric_routing(cluster.choice("routing"));
  if (cluster.has("seed"))
    e.platform.fabric.seed = static_cast<std::uint32_t>(cluster.integer("seed"));
  if (cluster.has("qps_per_connection"))
    e.platform.fabric.qps_per_connection = static_cast<int>(cluster.integer("qps_per_connection"));
  if (auto b = cluster.find("background")) {
    if (e.platform.node.nics == 0)
      b->fail("cluster.background needs a scale-out fabric, and '" + e.platform.name + "' has no NICs",
              "a platform with a fabric, or no background");
    read_background(Layers{*b, std::nullopt}, "cluster.background", e.platform.fabric);
    e.where["cluster.background"] = b->where();
  }
  if (cluster.find("jobs")) { // the jobs themselves are read once the experiment's layout is known
    e.placement = cluster.choice("placement");
    e.where["cluster.placement"] = cluster.where("placement");
  } else if (auto p = cluster.find("placement")) {
    p->fail("cluster.placement places the jobs of cluster.jobs, and there are none", "cluster.jobs, or no placement");
  }
  cluster.finish();
}

void check_precision(const YamlNode& training, const ExperimentSpec& e)
{
  if (e.platform.node.gpu.supports(e.training.precision))
    return;
  std::vector<std::string> ok;
  for (const auto& n : precision_names())
    if (e.platform.node.gpu.supports(parse_precision(n)))
      ok.push_back(n);
  throw ConfigError(e.at("training.precision").line > 0 ? e.at("training.precision") : training.where(),
                    std::string("GPU '") + e.platform.node.gpu.id + "' has no " + to_string(e.training.precision) +
                        " support",
                    join(ok));
}

void read_baseline(SectionReader& top, ExperimentSpec& e)
{
  auto b = top.find("baseline");
  if (!b)
    return;
  SectionReader bm(*b, baseline_section());
  YamlNode g = bm.require("gpus");
  e.baseline_gpus = static_cast<int>(g.as_int(1, e.gpus));
  if (e.baseline_gpus % e.training.model_parallel() != 0)
    g.fail("baseline of " + std::to_string(e.baseline_gpus) +
               " GPUs cannot hold one tp*pp*cp = " + std::to_string(e.training.model_parallel()) + " replica",
           "a multiple of tp*pp*cp");
  const int node = e.platform.node.gpus;
  if (e.baseline_gpus > node && e.baseline_gpus % node != 0)
    g.fail("baseline of " + std::to_string(e.baseline_gpus) + " GPUs is not whole " + e.platform.name + " nodes",
           "up to one node, or a multiple of " + std::to_string(node));
  bm.finish();
}

/// The defaults of the training section that can move the answer, resolved where they depend on
/// the GPU and the framework (flash attention: default_flash_attention), each with its origin.
/// The framework's TP overlap runs its communication kernels on SMs it takes from the GEMM
/// beside them: a GPU must have more SMs than that (16 SMs under Megatron's 24 left the GEMMs
/// a negative share, and the step deadlocked).
void check_tp_overlap_sms(const ExperimentSpec& e)
{
  const TrainingSpec& t = e.training;
  if (!t.overlap.tp_comm || t.tp < 2 || !t.sequence_parallel || !t.frameworks)
    return;
  const int sms = e.platform.node.gpu.sms;
  for (const auto& [pass, ov] : t.traits().tp_overlap)
    if (ov.sms >= sms)
      throw ConfigError(e.at("training.overlap.tp_comm"),
                        "the TP overlap of " + std::string(to_string(t.framework)) + " runs " + pass + "'s communication on " +
                            std::to_string(static_cast<int>(ov.sms)) + " SMs, and the GPU '" + e.platform.node.gpu.id +
                            "' has " + std::to_string(sms),
                        "a GPU of more than " + std::to_string(static_cast<int>(ov.sms)) +
                            " SMs, or overlap: {tp_comm: false}");
}

void resolve_defaults(ExperimentSpec& e)
{
  TrainingSpec& t = e.training;
  auto stated = [&](const std::string& key) { return e.at("training." + key).line > 0; };
  auto assume = [&](const std::string& key, const std::string& value, const std::string& origin) {
    e.assumptions.push_back({"training." + key, value, origin});
  };
  const std::string fw = to_string(t.framework);
  if (!stated("framework"))
    assume("framework", fw, "default: Megatron-LM's stack");
  if (!stated("precision"))
    assume("precision", to_string(t.precision), "default");
  if (!stated("flash_attention")) {
    std::string origin;
    t.flash_attention = default_flash_attention(t, e.platform.node.gpu, &origin);
    assume("flash_attention", t.flash_attention ? "true" : "false", origin);
  }
  if (!stated("recompute"))
    assume("recompute", to_string(t.recompute), "default");
  if (!stated("zero") && !stated("data_parallel"))
    assume("zero", std::to_string(t.zero), "default");
  if (!stated("micro_batch"))
    assume("micro_batch", std::to_string(t.micro_batch), "default");
  if (!stated("global_batch"))
    assume("global_batch", std::to_string(t.global_batch), "default: micro_batch x dp, one micro-batch per step");
  if (!stated("sequence_parallel") && t.tp > 1)
    assume("sequence_parallel", t.sequence_parallel ? "true" : "false", "default");
}

/// Model, layout and defaults of a job (the experiment itself, or one of its cluster.jobs).
void read_job_training(const YamlNode& training, const Catalog& catalog, ExperimentSpec& e)
{
  SourceMap where;
  e.training = parse_training(training, e.gpus, e.model, catalog.frameworks(), &where);
  for (const auto& [k, loc] : where)
    e.where["training." + k] = loc;
  check_precision(training, e);
  resolve_defaults(e);
  check_tp_overlap_sms(e);
  check_collective_algo(e.training.collective_algo, e.at("training.collective_algo"));
}

/// cluster.jobs: each a job of its own on the experiment's platform, on whole nodes.
void read_jobs(const YamlNode& jobs, const Catalog& catalog, ExperimentSpec& e)
{
  if (!jobs.is_sequence())
    jobs.fail("expected a list of jobs", "- {model: llama3-8b, gpus: 64, training: {tp: 1, dp: 64}}");
  const int node = e.platform.node.gpus;
  if (e.platform.node.nics == 0)
    jobs.fail("cluster.jobs needs a scale-out fabric to share, and '" + e.platform.name + "' has no NICs",
              "a platform with a fabric, or no jobs");
  if (e.gpus % node != 0)
    throw ConfigError(e.at("cluster.gpus"),
                      "beside cluster.jobs the experiment runs on whole nodes, and " + std::to_string(e.gpus) +
                          " GPUs are part of a " + std::to_string(node) + "-GPU node",
                      "a multiple of " + std::to_string(node));
  for (const YamlNode& item : jobs.items()) {
    SectionReader map(item, job_section());
    ExperimentSpec j;
    j.file = e.file;
    j.platform = e.platform;
    j.name = map.has("name") ? map.string("name") : "job " + std::to_string(e.jobs.size() + 1);
    j.model = parse_model(map.require("model"), catalog.models_dir());
    YamlNode gpus = map.require("gpus");
    j.gpus = static_cast<int>(map.integer("gpus"));
    if (j.gpus % node != 0)
      gpus.fail("a job beside the experiment runs on whole nodes, and " + std::to_string(j.gpus) +
                    " GPUs are not whole " + std::to_string(node) + "-GPU nodes of '" + e.platform.name + "'",
                "a multiple of " + std::to_string(node));
    j.where["cluster.gpus"] = gpus.where();
    j.where["cluster.jobs"] = item.where();
    YamlNode training = map.require("training");
    read_job_training(training, catalog, j);
    j.phase = map.number("phase");
    map.finish();
    e.jobs.push_back(std::move(j));
  }
  e.where["cluster.jobs"] = jobs.where();
}

} // namespace

void read_case_sections(SectionReader& map, const Catalog& catalog, ExperimentSpec& e)
{
  YamlNode model = map.require("model");
  e.model = parse_model(model, catalog.models_dir());
  read_cluster(map, catalog, e);
  YamlNode training = map.require("training");
  read_job_training(training, catalog, e);
  SectionReader cluster(map.require("cluster"), cluster_section());
  if (auto jobs = cluster.find("jobs"))
    read_jobs(*jobs, catalog, e);
}

std::vector<ConfigWarning> experiment_warnings(const ExperimentSpec& e)
{
  const TrainingSpec& t = e.training;
  std::vector<ConfigWarning> out = e.platform.warnings;
  auto warn = [&](const std::string& key, const std::string& what) {
    out.push_back({e.at("training." + key), "training." + key + " " + what, ""});
  };
  auto written = [&](const std::string& key) { return e.where.count("training." + key) > 0; };
  // only what the user wrote: the section's defaults are the framework's usual settings
  if (written("overlap.tp_comm") && t.overlap.tp_comm && (t.tp < 2 || !t.sequence_parallel))
    warn("overlap.tp_comm", "has no effect without sequence_parallel at tp >= 2; what it overlaps are sequence "
                            "parallelism's all-gathers and reduce-scatters with the GEMMs next to them");
  if (written("overlap.param_gather") && t.overlap.param_gather && t.zero == 0)
    warn("overlap.param_gather", "has no effect with zero 0; data parallelism without sharding gathers no parameters");
  if (written("overlap.grad_reduce") && t.zero == 3 && t.frameworks && !t.traits().sharded.per_tensor)
    warn("overlap.grad_reduce", std::string("has no effect with zero 3 under ") + to_string(t.framework) +
                                    "; it reduce-scatters each unit's gradients when the unit's backward ends "
                                    "(FSDP), whatever overlap says");
  // a choice the named framework does not make: simulated as written, said
  const bool megatron = t.framework == Framework::megatron || t.framework == Framework::megatron_deepspeed;
  if (written("pipeline_schedule") && t.pp > 1 && megatron &&
      !ScheduleRegistry::instance().shared(t.schedule).in_megatron())
    warn("pipeline_schedule", t.schedule + " is not a schedule " + to_string(t.framework) +
                                  " runs; the step is simulated with it as written");
  if (written("data_parallel") && data_parallel_strategy(t).hybrid() && !shards_hybrid(t.framework))
    warn("data_parallel", t.data_parallel + ": " + to_string(t.framework) +
                              " has no hybrid sharding here (torchtitan, automodel and fsdp do); the step is "
                              "simulated with it as written");
  return out;
}

/// workload: {chakra: DIR}: the traces' directory, checked to hold a trace per GPU.
void read_workload(const YamlNode& node, ExperimentSpec& e)
{
  SectionReader wm(node, workload_section());
  if (auto c = wm.find("chakra")) {
    std::string dir = c->as_string();
    if (!dir.empty() && dir[0] != '/')
      dir = beside(node.file(), dir);
    e.where["workload.chakra"] = c->where();
    const ChakraFiles files = find_chakra(dir, c->where());
    if (static_cast<int>(files.traces.size()) != e.gpus)
      c->fail("'" + c->as_string() + "' holds " + std::to_string(files.traces.size()) + " traces (" + files.prefix +
                  ".0.et to ." + std::to_string(files.traces.size() - 1) + ".et) and cluster.gpus is " +
                  std::to_string(e.gpus),
              "cluster.gpus: " + std::to_string(files.traces.size()) + ", a trace per GPU");
    if (!e.jobs.empty())
      c->fail("cluster.jobs are built from their models, and a traced step cannot be placed among them",
              "a traced step alone on its cluster");
    if (e.faults.any())
      c->fail("faults change the step built from the model; a traced step runs as it was recorded",
              "no faults: section beside workload.chakra");
    e.chakra = dir;
  }
  wm.finish();
}

ExperimentSpec load_experiment(const std::string& path, const Catalog& catalog)
{
  return parse_experiment(YamlNode::load_file(path), catalog);
}

ExperimentSpec parse_experiment(const YamlNode& root, const Catalog& catalog)
{
  ExperimentSpec e;
  e.file = root.file();
  SectionReader top(root, experiment_section());
  e.name = top.has("name") ? top.string("name") : e.file;
  e.description = top.string("description");
  read_case_sections(top, catalog, e);
  read_baseline(top, e);
  if (auto s = top.find("simulation")) {
    SectionReader sm(*s, simulation_section());
    e.mode = sm.choice("mode");
    e.engine = sm.choice("engine");
    e.seeds = static_cast<int>(sm.integer("seeds"));
    e.max_tasks = sm.integer("max_tasks");
    e.where["simulation.max_tasks"] = sm.where("max_tasks");
    if (e.seeds > 1 && !hashed(e.platform.fabric.routing))
      sm.require("seeds").fail("seeds: " + std::to_string(e.seeds) + " runs ECMP hash seeds, and the fabric of '" +
                                   e.platform.name + "' routes " + to_string(e.platform.fabric.routing),
                               "cluster.routing: ecmp or ecmp-qp (or fabric.routing in the platform), or seeds: 1");
    if (e.engine == "simgrid" && e.platform.fabric.routing == FabricRouting::ecmp_qp &&
        e.platform.fabric.qps_per_connection > 1)
      sm.require("engine").fail("SimGrid routes one path per GPU pair, and ecmp-qp splits each connection over " +
                                    std::to_string(e.platform.fabric.qps_per_connection) + " queue pairs hashed apart",
                                "engine: event, or qps_per_connection: 1");
    e.where["simulation.seeds"] = sm.where("seeds");
    if (!e.jobs.empty() && (e.mode == "folded" || e.mode == "analytic"))
      sm.require("mode").fail("mode: " + e.mode + " cannot share the cluster with cluster.jobs: the other jobs' flows "
                              "reach every rank, so each is simulated with its own",
                              "mode: auto or full, or no jobs");
    sm.finish();
  }
  if (auto b = top.find("budget")) {
    SectionReader bm(*b, budget_section());
    e.budget_tokens = bm.number("tokens");
    bm.finish();
  }
  if (auto f = top.find("faults"))
    e.faults = parse_faults(*f);
  if (auto w = top.find("workload"))
    read_workload(*w, e);
  if (auto r = top.find("reliability"))
    e.reliability = parse_reliability(*r);
  top.find("sweep"); // read by parse_sweep
  top.find("plot");  // read by parse_plots
  top.finish();
  return e;
}

} // namespace clustersim
