// Chakra execution traces: the wire format, a step written as traces and read back, the
// experiment that runs them, and traces that are malformed or do not fit together.
#include "sim/CollectiveEngine.hpp"
#include "sim/EventEngine.hpp"
#include "sim/study/ChakraWorkload.hpp"
#include "sim/study/Experiment.hpp"
#include "strategies/CostModel.hpp"
#include "strategies/StepBuilder.hpp"
#include "strategies/workload/chakra/ChakraTrace.hpp"
#include "strategies/workload/chakra/ProtoWire.hpp"
#include "tests/TestUtil.hpp"
#include "topology/ClusterGraph.hpp"
#include "topology/config/Yaml.hpp"

#include <nlohmann/json.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <tuple>

using namespace clustersim;
using namespace clustersim::test;

namespace {

ExperimentSpec experiment(const std::string& yaml)
{
  return parse_experiment(YamlNode::load_string(yaml, "test.yaml"), catalog());
}

/// Tensor, context (sendrecv rings), pipeline (transfers), expert (all-to-all) and ZeRO-1 data
/// parallelism on two nodes, with the host's issue costs and synchronisations of MoE layers.
const char* const kMoe = R"(
name: moe
model: mixtral-8x7b
cluster: {platform: dgx-h100, gpus: 32}
training: {tp: 2, pp: 2, cp: 2, ep: 4, dp: 4, zero: 1, micro_batch: 1, global_batch: 16, precision: bf16}
)";

struct Built {
  ExperimentSpec e;
  ClusterGraph cluster;
  Workload w;
};

Built build(const std::string& yaml)
{
  ExperimentSpec e = experiment(yaml);
  ClusterGraph cluster = ClusterGraph::build(e.platform, std::max(e.gpus, e.platform.node.gpus));
  CostModel cost(e.model, e.training, e.platform.node.gpu);
  Workload w = build_step(cost, 0, cluster.gpus_per_domain()).workload;
  return {std::move(e), std::move(cluster), std::move(w)};
}

std::vector<chakra::Trace> decoded(const chakra::Export& x)
{
  std::vector<chakra::Trace> traces;
  for (std::size_t i = 0; i < x.files.size(); ++i)
    traces.push_back(chakra::decode(x.files[i], "t." + std::to_string(i) + ".et"));
  return traces;
}

Workload read_back(const chakra::Export& x)
{
  std::vector<std::string> files;
  for (std::size_t i = 0; i < x.files.size(); ++i)
    files.push_back("t." + std::to_string(i) + ".et");
  return chakra::from_chakra(decoded(x), chakra::decode_groups(chakra::encode_groups(x.groups), "t.json"), files,
                             "t.json");
}

/// Each rank's streams in order: every task's kind, amount, dependencies, host cost and
/// synchronisation, and a collective's operation and group.
std::string streams_of(const Workload& w, std::uint32_t r)
{
  std::string out;
  for (int s = 0; s < kStreamCount; ++s) {
    out += std::string(to_string(static_cast<Stream>(s))) + ":";
    for (TaskId id : w.program(r, static_cast<Stream>(s))) {
      const Task& t = w.task(id);
      out += " " + std::to_string(static_cast<int>(t.kind)) + "/" + std::to_string(t.amount) + "/" +
             std::to_string(w.deps_end(id) - w.deps_begin(id)) + "/" + std::to_string(t.host_seconds()) + "/" +
             std::to_string(t.host_sync) + "/" + to_string(t.category) + "/" + std::to_string(t.layer) + "/" +
             std::to_string(t.micro_batch) + "/" + w.names()[t.name];
      if (t.kind == TaskKind::collective) {
        const CollectiveCall& c = w.collectives()[t.target];
        out += "/" + std::string(to_string(c.op)) + "/" + std::to_string(t.member);
        for (auto m : w.groups()[c.group].ranks)
          out += "," + std::to_string(m);
      }
      if (t.kind == TaskKind::send || t.kind == TaskKind::recv)
        out += "/peer" + std::to_string(w.task(t.target).rank);
    }
    out += "\n";
  }
  return out;
}

/// Each rank's task ends, stream by stream, in order.
std::vector<double> ends_of(const Workload& w, const ExecutionResult& r)
{
  std::vector<double> out;
  for (std::uint32_t rank = 0; rank < w.ranks(); ++rank)
    for (int s = 0; s < kStreamCount; ++s)
      for (TaskId id : w.program(rank, static_cast<Stream>(s)))
        out.push_back(r.end[id]);
  return out;
}

/// `clustersim run` on traces: the expected one-line error.
void expect_trace_error(const std::string& dir, int gpus, const std::string& where, const std::string& what)
{
  const std::string exp = write_temp("traced.yaml", "model: gpt3-125m\ncluster: {platform: dgx-h100, gpus: " +
                                                        std::to_string(gpus) +
                                                        "}\ntraining: {dp: " + std::to_string(gpus) +
                                                        ", micro_batch: 1, global_batch: " + std::to_string(gpus) +
                                                        "}\nworkload: {chakra: " + dir + "}\n");
  auto r = run_cli("run " + exp);
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find(where) != std::string::npos);
  CHECK(r.err.find(what) != std::string::npos);
  CHECK(r.err.find("; valid: ") != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

chakra::Node comp(std::uint64_t id, std::vector<std::uint64_t> deps, double seconds)
{
  chakra::Node n;
  n.id = id;
  n.name = "k" + std::to_string(id);
  n.type = chakra::NodeType::comp;
  n.data_deps = std::move(deps);
  n.duration_micros = static_cast<std::uint64_t>(seconds * 1e6);
  return n;
}

chakra::Node coll(std::uint64_t id, std::vector<std::uint64_t> deps, chakra::CommType type, std::int64_t bytes,
                  const std::string& group)
{
  chakra::Node n;
  n.id = id;
  n.type = chakra::NodeType::coll;
  n.data_deps = std::move(deps);
  n.attrs = {chakra::Attr::int64("comm_type", static_cast<std::int64_t>(type)), chakra::Attr::int64("comm_size", bytes),
             chakra::Attr::text("pg_name", group)};
  return n;
}

std::string write_foreign(const std::vector<chakra::Trace>& traces, const std::string& groups)
{
  const std::string dir = temp_dir();
  for (std::size_t i = 0; i < traces.size(); ++i)
    std::ofstream(dir + "/trace." + std::to_string(i) + ".et", std::ios::binary) << chakra::encode(traces[i]);
  if (!groups.empty())
    std::ofstream(dir + "/trace.json") << groups;
  return dir;
}

} // namespace

TEST_CASE("the protobuf wire format: varints, negative int32, doubles, packed and unpacked repeated fields")
{
  chakra::Node n;
  n.id = 300;
  n.name = "x";
  n.type = chakra::NodeType::send;
  n.ctrl_deps = {1, 127, 128, 1ULL << 40};
  n.data_deps = {0};
  n.duration_micros = 42;
  n.attrs = {chakra::Attr::int32("comm_src", -3), chakra::Attr::int64("comm_size", 1LL << 33),
             chakra::Attr::real("cs_seconds", 1.25e-7), chakra::Attr::boolean("is_cpu_op", false),
             chakra::Attr::text("pg_name", "7")};
  chakra::Trace t;
  t.version = "0.0.4";
  t.nodes = {n};
  const chakra::Trace back = chakra::decode(chakra::encode(t), "x.et");
  REQUIRE(back.nodes.size() == 1);
  const chakra::Node& m = back.nodes[0];
  CHECK(back.version == "0.0.4");
  CHECK(m.id == 300);
  CHECK(m.name == "x");
  CHECK(m.type == chakra::NodeType::send);
  CHECK(m.ctrl_deps == n.ctrl_deps);
  CHECK(m.data_deps == n.data_deps);
  CHECK(m.duration_micros == 42);
  CHECK(m.integer("comm_src", 0) == -3);
  CHECK(m.attr("comm_src")->is_int32);
  CHECK(m.integer("comm_size", 0) == (1LL << 33));
  CHECK(m.attr("cs_seconds")->d == 1.25e-7);
  CHECK(m.attr("is_cpu_op")->kind == chakra::Attr::Kind::boolean);
  CHECK(m.attr("pg_name")->s == "7");

  // a negative int32 is ten bytes on the wire (sign-extended), as protoc writes it
  proto::Writer w;
  w.int64_field(7, -3);
  CHECK(w.bytes().size() == 11);

  // repeated fields written one value at a time (proto2 style) read the same as packed ones
  proto::Writer node;
  node.uint64_field(1, 5);
  node.uint64_field(5, 3);
  node.uint64_field(5, 4);
  std::string file;
  proto::append_delimited(file, "");
  proto::append_delimited(file, node.bytes());
  const chakra::Trace unpacked = chakra::decode(file, "u.et");
  REQUIRE(unpacked.nodes.size() == 1);
  CHECK(unpacked.nodes[0].data_deps == std::vector<std::uint64_t>{3, 4});
}

TEST_CASE("protoc reads the messages clustersim writes with the schema in chakra_et.proto")
{
  if (std::system("command -v protoc >/dev/null 2>&1") != 0) {
    MESSAGE("protoc is not installed (Debian: protobuf-compiler): the independent decoding is skipped");
    return;
  }
  chakra::Node n;
  n.id = 7;
  n.name = "all_gather";
  n.type = chakra::NodeType::coll;
  n.ctrl_deps = {5};
  n.data_deps = {3, 300};
  n.duration_micros = 12;
  n.attrs = {chakra::Attr::int64("comm_type", 2), chakra::Attr::int32("comm_src", -1),
             chakra::Attr::real("cs_bytes", 0.5), chakra::Attr::boolean("is_cpu_op", true),
             chakra::Attr::text("pg_name", "12")};
  chakra::Trace t;
  t.nodes = {n};
  const std::string file = chakra::encode(t);
  const auto messages = proto::split_delimited(file);
  REQUIRE(messages.size() == 2);
  const std::string dir = temp_dir();
  std::ofstream(dir + "/node.bin", std::ios::binary) << messages[1].bytes;
  auto r = run_shell("protoc --decode=ChakraProtoMsg.Node --proto_path=" + source_path("strategies/workload/chakra") +
                     " chakra_et.proto < " + dir + "/node.bin");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  for (const char* line : {"id: 7", "name: \"all_gather\"", "type: COMM_COLL_NODE", "ctrl_deps: 5", "data_deps: 3",
                           "data_deps: 300", "duration_micros: 12", "int64_val: 2", "int32_val: -1",
                           "double_val: 0.5", "bool_val: true", "string_val: \"12\""})
    CHECK(r.out.find(line) != std::string::npos);
}

TEST_CASE("a malformed trace is one error naming the file and the byte where it goes wrong")
{
  chakra::Trace t;
  t.nodes = {comp(0, {}, 1e-3), comp(1, {0}, 2e-3)};
  const std::string good = chakra::encode(t);
  auto message = [](const std::string& bytes) {
    try {
      chakra::decode(bytes, "bad.et");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string truncated = message(good.substr(0, good.size() - 3));
  CHECK(truncated.rfind("bad.et: byte ", 0) == 0);
  CHECK(truncated.find("runs past the end of the file") != std::string::npos);
  CHECK(truncated.find("; valid: a Chakra execution trace") != std::string::npos);
  CHECK(message("").find("the file is empty") != std::string::npos);
  CHECK(message(std::string("\x02\x0f\xff", 3)).find("wire type 7") != std::string::npos);
  CHECK(message(std::string("\x0b\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 12)).find("varint") !=
        std::string::npos);
}

TEST_CASE("a step written as traces has a node per task, two per sendrecv member, with its bytes, dependencies "
          "and groups")
{
  Built b = build(kMoe);
  const Workload& w = b.w;
  const chakra::Export x = chakra::to_chakra(w, {}, "moe");
  REQUIRE(x.ranks.size() == 32);
  const auto traces = decoded(x);
  std::vector<std::size_t> tasks(w.ranks(), 0), sendrecv(w.ranks(), 0), deps(w.ranks(), 0);
  std::vector<double> coll_bytes(w.ranks(), 0), p2p_bytes(w.ranks(), 0);
  for (TaskId id = 0; id < w.tasks().size(); ++id) {
    const Task& t = w.task(id);
    ++tasks[t.rank];
    deps[t.rank] += static_cast<std::size_t>(w.deps_end(id) - w.deps_begin(id));
    if (t.kind == TaskKind::collective && w.collectives()[t.target].op == CollOp::sendrecv)
      ++sendrecv[t.rank];
    else if (t.kind == TaskKind::collective)
      coll_bytes[t.rank] += w.collectives()[t.target].bytes;
    else if (t.kind != TaskKind::compute)
      p2p_bytes[t.rank] += t.amount;
  }
  CHECK(std::count_if(sendrecv.begin(), sendrecv.end(), [](std::size_t n) { return n > 0; }) == 32);
  std::size_t all = 0;
  for (std::uint32_t r = 0; r < w.ranks(); ++r) {
    CAPTURE(r);
    const auto& nodes = traces[r].nodes;
    all += nodes.size();
    CHECK(nodes.size() == tasks[r] + sendrecv[r]);
    double coll = 0, p2p = 0;
    std::size_t data = 0;
    for (const auto& n : nodes) {
      data += n.data_deps.size();
      if (n.type == chakra::NodeType::coll)
        coll += static_cast<double>(n.integer("comm_size", 0));
      if ((n.type == chakra::NodeType::send || n.type == chakra::NodeType::recv) && !n.attr("cs_op"))
        p2p += static_cast<double>(n.integer("comm_size", 0));
      for (auto d : n.data_deps)
        CHECK(d < n.id); // a trace lists dependencies before dependents
    }
    CHECK(coll == doctest::Approx(coll_bytes[r]).epsilon(1e-9));
    CHECK(p2p == p2p_bytes[r]);
    CHECK(data >= deps[r]); // a dependency on a sendrecv member is one on both its nodes
  }
  CHECK(all == x.nodes);
  for (const auto& [name, ranks] : x.groups)
    CHECK(ranks == w.groups()[static_cast<std::size_t>(std::stoi(name) - 1)].ranks);
  const chakra::Export some = chakra::to_chakra(w, {3, 17}, "moe");
  CHECK(some.files.size() == 2);
  CHECK(some.files[1] == x.files[17]);
}

TEST_CASE("a step read back from its traces is the same step: every stream in order, every task's end")
{
  for (const char* yaml : {kMoe, R"(
name: zero3
model: llama3-8b
cluster: {platform: dgx-h100-fattree-2to1, gpus: 64}
training: {tp: 4, zero: 3, micro_batch: 1, global_batch: 32, precision: bf16,
           overlap: {grad_reduce: true, param_gather: true}}
)"}) {
    Built b = build(yaml);
    CAPTURE(b.e.name);
    const Workload back = read_back(chakra::to_chakra(b.w, {}, b.e.name));
    REQUIRE(back.tasks().size() == b.w.tasks().size());
    for (std::uint32_t r = 0; r < b.w.ranks(); ++r)
      CHECK(streams_of(back, r) == streams_of(b.w, r));
    const double speed = b.e.platform.node.gpu.peak(b.e.training.precision);
    CollectiveEngine c1(b.cluster, catalog().protocols());
    CollectiveEngine c2(b.cluster, catalog().protocols());
    const ExecutionResult one = execute_events(b.w, c1, speed);
    const ExecutionResult two = execute_events(back, c2, speed);
    CHECK(two.makespan == doctest::Approx(one.makespan).epsilon(1e-9));
    const auto e1 = ends_of(b.w, one), e2 = ends_of(back, two);
    REQUIRE(e1.size() == e2.size());
    double worst = 0;
    for (std::size_t i = 0; i < e1.size(); ++i)
      worst = std::max(worst, std::fabs(e1[i] - e2[i]));
    CHECK(worst <= 1e-12);
  }
}

/// The FLOPs of every compute task of a step built to keep them, all ranks together, beside the
/// model's own counts for the same experiment.
struct StepFlops {
  double sum = 0;       ///< over the step's compute tasks
  double model = 0;     ///< CostModel::model_flops_per_step()
  double hardware = 0;  ///< CostModel::hardware_flops_per_step()
  double core = 0;      ///< attention-core forward FLOPs of the global batch
};

StepFlops step_flops(const std::string& yaml)
{
  ExperimentSpec e = experiment(yaml);
  ClusterGraph cluster = ClusterGraph::build(e.platform, std::max(e.gpus, e.platform.node.gpus));
  CostModel cost(e.model, e.training, e.platform.node.gpu);
  const Workload w = build_step(cost, 0, cluster.gpus_per_domain(), true).workload;
  StepFlops f;
  for (TaskId id = 0; id < w.tasks().size(); ++id)
    f.sum += w.flops(id);
  f.model = cost.model_flops_per_step();
  f.hardware = cost.hardware_flops_per_step();
  f.core = cost.attention_core_flops_all(e.training.global_batch, false);
  return f;
}

TEST_CASE("compute nodes carry the FLOPs their GPU executes: the step's sum is the model's count, the "
          "causal half of flash attention and its recomputed scores accounted")
{
  const std::string dense = R"(
name: dense
model: llama3-8b
cluster: {platform: dgx-h100, gpus: 16}
training: {tp: 2, pp: 2, dp: 4, micro_batch: 1, global_batch: 16, precision: bf16, sequence_parallel: true,
           overlap: {tp_comm: true})";
  // unfused attention executes the whole score matrix, and every backward is twice its forward:
  // the model's 3 x forward FLOPs (Narayanan et al. 2021), over every GPU of the step
  const StepFlops unfused = step_flops(dense + ", flash_attention: false}\n");
  CHECK(unfused.sum == doctest::Approx(unfused.model).epsilon(1e-9));
  // flash attention skips the masked half, and its backward recomputes the scores (2.5x the
  // forward's FLOPs): 3 x core - 0.5 x core x 3.5 fewer
  const StepFlops flash = step_flops(dense + "}\n");
  CHECK(flash.sum == doctest::Approx(flash.model - 1.25 * flash.core).epsilon(1e-9));
  // full recompute runs every layer's forward again
  const StepFlops recomputed = step_flops(dense + ", flash_attention: false, recompute: full}\n");
  CHECK(recomputed.sum == doctest::Approx(recomputed.hardware).epsilon(1e-9));
  // ring attention (context parallelism) and the MoE layer's pieces share their pass's FLOPs out
  const StepFlops moe = step_flops(kMoe);
  CHECK(moe.sum == doctest::Approx(moe.model - 1.25 * moe.core).epsilon(1e-6));
}

TEST_CASE("clustersim export writes a trace per GPU, and an experiment on them runs the same step")
{
  const std::string dir = temp_dir();
  const std::string exp = write_temp("moe.yaml", std::string(kMoe) + "simulation: {mode: full}\n");
  auto ex = run_cli("export " + exp + " --chakra " + dir + "/et");
  INFO(ex.err);
  REQUIRE(ex.exit_code == 0);
  CHECK(ex.out.find("32 Chakra traces") != std::string::npos);
  CHECK(entries_in(dir + "/et") == 33);
  const std::string traced =
      write_temp("traced.yaml", std::string(kMoe) + "simulation: {mode: full}\nworkload: {chakra: " + dir + "/et}\n");
  const auto a = nlohmann::json::parse(run_cli("run " + exp + " --json").out);
  const auto b = nlohmann::json::parse(run_cli("run " + traced + " --json").out);
  CHECK(b.at("step_time_s").get<double>() == doctest::Approx(a.at("step_time_s").get<double>()).epsilon(1e-9));
  CHECK(b.at("mfu").get<double>() == doctest::Approx(a.at("mfu").get<double>()).epsilon(1e-9));
  CHECK(b.at("simulation").at("reason").get<std::string>().find("Chakra traces") != std::string::npos);
  // the traced step exported again holds the same operations (its tasks were made in another
  // order across streams, so the nodes, calls and groups are numbered otherwise)
  auto again = run_cli("export " + traced + " --chakra " + dir + "/et2 --ranks 5");
  REQUIRE(again.exit_code == 0);
  CHECK(entries_in(dir + "/et2") == 2);
  auto operations = [](const std::string& file) {
    std::vector<std::tuple<int, std::uint64_t, std::int64_t, std::string>> ops;
    for (const auto& n : chakra::decode(read_file(file), file).nodes)
      ops.emplace_back(static_cast<int>(n.type), n.duration_micros,
                       n.integer(n.type == chakra::NodeType::comp ? "num_ops" : "comm_size", -1), n.name);
    std::sort(ops.begin(), ops.end());
    return ops;
  };
  CHECK(operations(dir + "/et2/workload.5.et") == operations(dir + "/et/workload.5.et"));
}

TEST_CASE("traces written elsewhere: compute at its recorded microseconds, collectives by group order, CPU and "
          "metadata nodes passed through")
{
  // two ranks: a kernel, a CPU operator, an all-reduce of 1 MB over the group of both ranks,
  // and a kernel after it; the second rank's first kernel is slower, so the all-reduce waits
  chakra::Trace r0, r1;
  chakra::Node cpu = comp(9, {}, 0.5);
  cpu.attrs = {chakra::Attr::boolean("is_cpu_op", true)};
  r0.nodes = {comp(1, {}, 1e-3), cpu, coll(2, {1, 9}, chakra::CommType::all_reduce, 1 << 20, "4"), comp(3, {2}, 2e-3)};
  r1.nodes = {comp(1, {}, 3e-3), coll(2, {1}, chakra::CommType::all_reduce, 1 << 20, "4"), comp(3, {2}, 2e-3)};
  const Workload w = chakra::from_chakra({r0, r1}, {{"4", {0, 1}}}, {"a.0.et", "a.1.et"}, "a.json");
  REQUIRE(w.tasks().size() == 6); // the CPU operator is not a GPU task
  ExperimentSpec e = experiment("model: gpt3-125m\ncluster: {platform: dgx-h100, gpus: 2}\n"
                                "training: {dp: 2, micro_batch: 1, global_batch: 2}\n");
  ClusterGraph cluster = ClusterGraph::build(e.platform, 8);
  CollectiveEngine c(cluster, catalog().protocols());
  const ExecutionResult r = execute_events(w, c, e.platform.node.gpu.peak(e.training.precision));
  const double ar = r.end[w.program(0, Stream::dp)[0]];
  CHECK(ar > 3e-3);                                   // after the slower rank's kernel
  CHECK(ar < 3e-3 + 1e-4);                            // 1 MB over NVLink
  CHECK(r.makespan == doctest::Approx(ar + 2e-3)); // then the last kernel
}

TEST_CASE("control dependencies on the node itself, on a later node or on a missing one are ignored and "
          "counted, as PyTorch's converter writes them")
{
  // a CPU operator (3) launches a kernel (4); the converter made each a control parent of the
  // other, gave a node itself as a control parent and named parents it had dropped
  chakra::Trace t;
  chakra::Node cpu = comp(3, {}, 0.5);
  cpu.attrs = {chakra::Attr::boolean("is_cpu_op", true)};
  cpu.ctrl_deps = {4};
  chakra::Node kernel = comp(4, {1}, 2e-3);
  kernel.ctrl_deps = {3, 4, 99};
  t.nodes = {comp(1, {}, 1e-3), cpu, kernel};
  const std::string dir = write_foreign({t}, "");
  const std::string exp = write_temp("pt.yaml", "model: gpt3-125m\ncluster: {platform: dgx-h100, gpus: 1}\n"
                                                "training: {dp: 1, micro_batch: 1, global_batch: 1}\n"
                                                "workload: {chakra: " + dir + "}\n");
  auto r = run_cli("run " + exp + " --json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("step_time_s").get<double>() == doctest::Approx(3e-3));
  const std::string why = j.at("simulation").at("reason");
  CHECK(why.find("1 nodes that are not GPU work passed through") != std::string::npos);
  CHECK(why.find("3 control dependencies not on an earlier node") != std::string::npos);
}

TEST_CASE("traces that do not fit together are refused with the file and node at fault")
{
  chakra::Trace a, b;
  a.nodes = {comp(0, {}, 1e-3), coll(1, {0}, chakra::CommType::all_reduce, 1024, "1")};
  b.nodes = {comp(0, {}, 1e-3), coll(1, {0}, chakra::CommType::all_reduce, 2048, "1")};
  const std::string groups = R"({"1": [0, 1]})";
  expect_trace_error(write_foreign({a, b}, groups), 2, "trace.1.et: node 1 (COMM_COLL_NODE) meets",
                     "another type or size");
  expect_trace_error(write_foreign({a, a}, ""), 2, "trace.0.et: node 1 (COMM_COLL_NODE) names communicator group '1'",
                     "trace.json lacks");
  expect_trace_error(write_foreign({a, a}, R"({"1": [0, 2]})"), 2, "trace.json: group '1' lists rank 2", "of 2 traces");
  // two collectives that the ranks reach in opposite orders would deadlock
  chakra::Trace c = a, d = a;
  c.nodes.push_back(coll(2, {1}, chakra::CommType::all_gather, 64, "2"));
  c.nodes[1].data_deps = {0};
  d.nodes = {comp(0, {}, 1e-3), coll(2, {0}, chakra::CommType::all_gather, 64, "2"),
             coll(1, {2}, chakra::CommType::all_reduce, 1024, "1")};
  for (auto* t : {&c, &d})
    for (auto& n : t->nodes)
      if (n.type == chakra::NodeType::coll)
        n.attrs.push_back(chakra::Attr::text("cs_stream", "dp"));
  expect_trace_error(write_foreign({c, d}, R"({"1": [0, 1], "2": [0, 1]})"), 2, "trace.", "never runs");
  chakra::Trace cyc;
  cyc.nodes = {comp(0, {1}, 1e-3), comp(1, {0}, 1e-3)};
  expect_trace_error(write_foreign({cyc}, ""), 1, "trace.0.et: node 0 (COMP_NODE 'k0') is on a cycle", "acyclic");
  chakra::Trace dangling;
  dangling.nodes = {comp(0, {7}, 1e-3)};
  expect_trace_error(write_foreign({dangling}, ""), 1, "depends on node 7, which the trace lacks", "same trace");
  chakra::Trace gather = a;
  gather.nodes[1] = coll(1, {0}, chakra::CommType::gather, 8, "");
  expect_trace_error(write_foreign({gather, gather}, ""), 2, "has comm_type 3", "ALL_REDUCE (0)");
  // the directory: as many traces as GPUs, every rank present, readable bytes
  const std::string two = write_foreign({a, a}, groups);
  expect_trace_error(two, 4, "holds 2 traces (trace.0.et to .1.et) and cluster.gpus is 4", "cluster.gpus: 2");
  std::remove((two + "/trace.0.et").c_str());
  expect_trace_error(two, 1, "lacks trace.0.et (it has trace.1.et)", "ranks 0 to N-1");
  const std::string cut = write_foreign({a, a}, groups);
  std::ofstream(cut + "/trace.1.et", std::ios::binary) << chakra::encode(a).substr(0, 9);
  expect_trace_error(cut, 2, "trace.1.et: byte ", "runs past the end");
  expect_trace_error(temp_dir(), 1, "holds no trace named PREFIX.RANK.et", "PREFIX.0.et");
  // a host cost past a float's range made the host never issue the kernel (a fuzzer's find)
  chakra::Trace slow;
  slow.nodes = {comp(0, {}, 1e-3)};
  slow.nodes[0].attrs = {chakra::Attr::real("cs_host_s", 1e300)};
  expect_trace_error(write_foreign({slow}, ""), 1, "trace.0.et: node 0 (COMP_NODE 'k0') has cs_host_s 1e+300",
                     "a number from 0 to 1e9 seconds");
  chakra::Trace negative = a;
  negative.nodes[1].attrs[1] = chakra::Attr::int64("comm_size", -5);
  expect_trace_error(write_foreign({negative, negative}, groups), 2, "has comm_size -5", "0 to 1e18 bytes");
  chakra::Trace no_flops;
  no_flops.nodes = {comp(0, {}, 1e-3)};
  no_flops.nodes[0].attrs.push_back(chakra::Attr::int64("num_ops", -1));
  expect_trace_error(write_foreign({no_flops}, ""), 1, "trace.0.et: node 0 (COMP_NODE 'k0') has num_ops -1",
                     "a count of FLOPs of at least 0");
  // a host trace not linked with its device trace: only CPU operators, a step of nothing
  chakra::Trace host;
  host.nodes = {comp(0, {}, 1e-3)};
  host.nodes[0].attrs = {chakra::Attr::boolean("is_cpu_op", true)};
  expect_trace_error(write_foreign({host}, ""), 1, "trace.0.et: the traces hold no GPU work: 1 nodes",
                     "chakra_trace_link");
  chakra::Trace far;
  far.nodes = {comp(0, {}, 1e-3)};
  far.nodes[0].type = chakra::NodeType::send;
  far.nodes[0].attrs = {chakra::Attr::int32("comm_src", 0), chakra::Attr::int32("comm_dst", 8),
                        chakra::Attr::int64("comm_size", 64)};
  expect_trace_error(write_foreign({far, far}, ""), 2, "goes from rank 0 to rank 8 among 2 traces", "ranks 0-1");
}
