#pragma once
/// Chakra execution traces (mlcommons/chakra, schema/protobuf/et_def.proto) in and out of a
/// Workload.
///
/// A trace is one file per rank, `PREFIX.RANK.et`: a GlobalMetadata message, then one Node
/// message per operation, each preceded by its length as a varint. Communicator groups are a
/// JSON object beside the traces, `PREFIX.json`, mapping a group name to its ranks (ASTRA-sim's
/// --comm-group-configuration); a collective node names its group in the attribute `pg_name`.
///
/// What a Workload task becomes (the attribute names are those Chakra's feeder and ASTRA-sim
/// read, src/feeder/et_feeder_node.cpp):
/// - compute: COMP_NODE, `duration_micros` rounded to the microsecond, `num_ops` the FLOPs the
///   GPU executes (Workload::flops, where the workload keeps them);
/// - collective: COMM_COLL_NODE with `comm_type`, `comm_size` (bytes, nccl-tests convention) and
///   `pg_name`; a `sendrecv` call, which Chakra lacks, becomes a COMM_SEND_NODE to the next
///   member and a COMM_RECV_NODE from the previous one;
/// - send, recv: COMM_SEND_NODE / COMM_RECV_NODE with `comm_src`, `comm_dst`, `comm_tag`, `comm_size`.
///
/// `data_deps` are the task's dependencies; `ctrl_deps` its stream predecessor (a stream runs
/// in order). Attributes prefixed `cs_` keep what Chakra has no field for — the exact seconds,
/// the stream, the category, layer and micro-batch, the host's cost, the call a member belongs
/// to — so a trace written here reads back into the same Workload.

#include "strategies/workload/Workload.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim::chakra {

enum class NodeType : std::uint8_t {
  invalid = 0,
  metadata = 1,
  mem_load = 2,
  mem_store = 3,
  comp = 4,
  send = 5,
  recv = 6,
  coll = 7,
  storage = 8,
  batch = 9,
  checkpoint = 10
};
const char* to_string(NodeType t);

/// CollectiveCommType of the schema.
enum class CommType : std::uint8_t {
  all_reduce = 0,
  reduce = 1,
  all_gather = 2,
  gather = 3,
  scatter = 4,
  broadcast = 5,
  all_to_all = 6,
  reduce_scatter = 7,
  reduce_scatter_block = 8,
  barrier = 9
};

/// One AttributeProto: the scalar kinds a trace uses (lists are kept as absent).
struct Attr {
  enum class Kind : std::uint8_t { none, i64, u64, dbl, boolean, str };
  std::string name;
  Kind kind = Kind::none;
  std::int64_t i = 0; ///< i64, u64 (as bits), boolean
  double d = 0;
  std::string s;

  static Attr int64(std::string name, std::int64_t v);
  static Attr int32(std::string name, std::int32_t v);
  static Attr boolean(std::string name, bool v);
  static Attr real(std::string name, double v);
  static Attr text(std::string name, std::string v);
  bool is_int32 = false; ///< written as int32_val (comm_src, comm_dst, comm_tag)
};

struct Node {
  std::uint64_t id = 0;
  std::string name;
  NodeType type = NodeType::invalid;
  std::vector<std::uint64_t> ctrl_deps;
  std::vector<std::uint64_t> data_deps;
  std::uint64_t start_micros = 0;
  std::uint64_t duration_micros = 0;
  std::vector<Attr> attrs;

  const Attr* attr(std::string_view key) const;
  std::int64_t integer(std::string_view key, std::int64_t fallback) const;
};

struct Trace {
  std::string version;
  std::vector<Attr> metadata;
  std::vector<Node> nodes;
};

/// The file's bytes.
std::string encode(const Trace& t);
/// A trace's parts, for writers that stream: the GlobalMetadata message, then each node's
/// message, each appended to `out` with its length before it.
void append_metadata(std::string& out, const std::string& version, const std::vector<Attr>& metadata);
void append_node(std::string& out, const Node& n);
/// Reads a trace; a malformed one throws ConfigError naming `file` and the byte.
Trace decode(std::string_view bytes, const std::string& file);

/// Communicator groups: name → ranks, in member order.
using Groups = std::map<std::string, std::vector<std::uint32_t>>;
std::string encode_groups(const Groups& g);
/// Reads PREFIX.json; errors name `file`.
Groups decode_groups(std::string_view text, const std::string& file);

/// The traces of `ranks` (every simulated rank when empty), encoded as they are made (a step
/// of ten million tasks would take gigabytes as Node objects), and the groups they use.
struct Export {
  std::vector<std::uint32_t> ranks;
  std::vector<std::string> files; ///< per entry of `ranks`: the trace's bytes
  std::size_t nodes = 0;          ///< in all the traces
  Groups groups;
};
Export to_chakra(const Workload& w, const std::vector<std::uint32_t>& ranks, const std::string& description);

/// What a mapping left out, for the report to say.
struct ImportSummary {
  std::size_t passed_through = 0;    ///< nodes that are not GPU work (metadata, CPU operators, ...)
  std::size_t ignored_ctrl_deps = 0; ///< control dependencies not on an earlier node of the trace
};

/// Maps one trace per rank (rank = index) onto a Workload of that many ranks: compute nodes
/// at their recorded durations, collectives matched across their group's members (by call in
/// a trace written here, else by their order within the group), sends matched to receives by
/// (source, destination, tag). Nodes that neither compute nor communicate on the GPU (metadata,
/// CPU operators, memory and storage) are passed through: what depends on them depends on what
/// they depended on. A control dependency is kept where it names a node listed before its child
/// (as clustersim writes them: the stream predecessor); one on itself, on a later node or on a
/// node the trace lacks is ignored and counted in `summary` (PyTorch's converter writes all three,
/// and cycles through them; Chakra's first feeder read no control dependencies at all). A data
/// dependency must name a node of the trace, before or after it, and the data dependencies must
/// not form a cycle.
/// `files` name the traces in errors.
Workload from_chakra(const std::vector<Trace>& traces, const Groups& groups, const std::vector<std::string>& files,
                     const std::string& groups_file, ImportSummary* summary = nullptr);

} // namespace clustersim::chakra
