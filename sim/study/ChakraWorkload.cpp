#include "sim/study/ChakraWorkload.hpp"

#include "sim/study/Simulation.hpp"
#include "strategies/CostModel.hpp"
#include "strategies/StepBuilder.hpp"
#include "topology/ClusterGraph.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace clustersim {

namespace fs = std::filesystem;

namespace {

const char* const kLayout = "a directory of PREFIX.0.et ... PREFIX.N-1.et (one Chakra trace per GPU) and PREFIX.json";

/// "NAME.RANK.et" → NAME and RANK; false for any other name.
bool trace_name(const std::string& file, std::string& prefix, long long& rank)
{
  const std::string ext = ".et";
  if (file.size() <= ext.size() || file.compare(file.size() - ext.size(), ext.size(), ext) != 0)
    return false;
  const std::string stem = file.substr(0, file.size() - ext.size());
  const auto dot = stem.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == stem.size() || stem.size() - dot > 10 ||
      stem.find_first_not_of("0123456789", dot + 1) != std::string::npos)
    return false;
  prefix = stem.substr(0, dot);
  rank = std::stoll(stem.substr(dot + 1));
  return true;
}

std::string read_all(const std::string& path, const SourceLocation& where)
{
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw ConfigError(where, "cannot read '" + path + "'", kLayout);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

} // namespace

std::string beside(const std::string& file, const std::string& path)
{
  if (path.empty() || path[0] == '/')
    return path;
  const std::string dir = fs::path(file).parent_path().string();
  return dir.empty() ? path : dir + "/" + path;
}

ChakraFiles find_chakra(const std::string& dir, const SourceLocation& where)
{
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw ConfigError(where, "'" + dir + "' is not a directory", kLayout);
  std::map<std::string, std::map<long long, std::string>> found;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string prefix;
    long long rank = 0;
    if (trace_name(entry.path().filename().string(), prefix, rank))
      found[prefix][rank] = entry.path().string();
  }
  if (ec)
    throw ConfigError(where, "cannot list '" + dir + "': " + ec.message(), kLayout);
  if (found.empty())
    throw ConfigError(where, "'" + dir + "' holds no trace named PREFIX.RANK.et", kLayout);
  if (found.size() > 1)
    throw ConfigError(where, "'" + dir + "' holds traces of two prefixes, '" + found.begin()->first + "' and '" +
                                 std::next(found.begin())->first + "'",
                      "one prefix per directory");
  ChakraFiles f;
  f.prefix = found.begin()->first;
  long long expect = 0;
  for (const auto& [rank, path] : found.begin()->second) {
    if (rank != expect)
      throw ConfigError(where, "'" + dir + "' lacks " + f.prefix + "." + std::to_string(expect) + ".et (it has " +
                                   f.prefix + "." + std::to_string(rank) + ".et)",
                        "ranks 0 to N-1, one trace each");
    f.traces.push_back(path);
    ++expect;
  }
  const std::string groups = dir + "/" + f.prefix + ".json";
  if (fs::is_regular_file(groups, ec))
    f.groups = groups;
  return f;
}

std::string chakra_reason(const std::string& dir, const chakra::ImportSummary& s)
{
  std::string why = "the step's tasks are the Chakra traces of " + dir + ", every rank simulated";
  if (s.passed_through > 0)
    why += "; " + std::to_string(s.passed_through) + " nodes that are not GPU work passed through";
  if (s.ignored_ctrl_deps > 0)
    why += "; " + std::to_string(s.ignored_ctrl_deps) +
           " control dependencies not on an earlier node (on itself, a later node or one the trace lacks) ignored";
  return why;
}

Workload load_chakra(const std::string& dir, const SourceLocation& where, chakra::ImportSummary* summary)
{
  const ChakraFiles f = find_chakra(dir, where);
  std::vector<chakra::Trace> traces;
  traces.reserve(f.traces.size());
  for (const auto& path : f.traces)
    traces.push_back(chakra::decode(read_all(path, where), path));
  chakra::Groups groups;
  if (!f.groups.empty())
    groups = chakra::decode_groups(read_all(f.groups, where), f.groups);
  return chakra::from_chakra(traces, groups, f.traces, f.groups.empty() ? dir + "/" + f.prefix + ".json" : f.groups,
                            summary);
}

chakra::Export export_chakra(const ExperimentSpec& e, const std::vector<std::uint32_t>& ranks)
{
  if (!e.chakra.empty())
    return chakra::to_chakra(load_chakra(e.chakra, e.at("workload.chakra")), ranks, e.name);
  ClusterGraph cluster = ClusterGraph::build(e.platform, std::max(e.gpus, e.platform.node.gpus));
  CostModel cost(e.model, e.training, e.platform.node.gpu);
  check_step_size(e, cost, 0, cluster.gpus_per_domain());
  StepPlan plan = build_step(cost, 0, cluster.gpus_per_domain(), true);
  return chakra::to_chakra(plan.workload, ranks, e.name);
}

} // namespace clustersim
