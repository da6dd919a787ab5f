#pragma once
/// Experiments and Chakra execution traces: a step written as traces (`clustersim export
/// --chakra`), and a directory of traces found, read and mapped onto a Workload
/// (`workload: {chakra: DIR}`). The format and the mapping are strategies/workload/chakra's.

#include "sim/study/Catalog.hpp"
#include "sim/study/Experiment.hpp"
#include "strategies/workload/chakra/ChakraTrace.hpp"
#include "topology/config/ConfigError.hpp"

#include <string>
#include <vector>

namespace clustersim {

/// The traces of a directory: PREFIX.0.et to PREFIX.N-1.et, and PREFIX.json when present.
struct ChakraFiles {
  std::string prefix;              ///< the traces' common name, e.g. "workload"
  std::vector<std::string> traces; ///< paths, by rank
  std::string groups;              ///< PREFIX.json's path, or empty
};

/// Finds the traces in `dir`; errors at `where` (a missing rank, two prefixes, no trace).
ChakraFiles find_chakra(const std::string& dir, const SourceLocation& where);

/// Reads every trace of `dir` and maps them onto a Workload; errors name the file at fault.
Workload load_chakra(const std::string& dir, const SourceLocation& where, chakra::ImportSummary* summary = nullptr);
/// What a traced step's report says of its origin: the directory, and what the mapping left out.
std::string chakra_reason(const std::string& dir, const chakra::ImportSummary& s);

/// The step of an experiment as it would be simulated with every rank (its traced workload when
/// it has one), as one trace per rank of `ranks` (every GPU when empty).
chakra::Export export_chakra(const ExperimentSpec& e, const std::vector<std::uint32_t>& ranks);

/// `path` relative to the directory of `file` (unless it is absolute).
std::string beside(const std::string& file, const std::string& path);

} // namespace clustersim
