// Chakra messages to and from bytes: et_def.proto's field numbers, read in
// mlcommons/chakra@21585d8 schema/protobuf/et_def.proto (GlobalMetadata: version 1, attr 2;
// Node: id 1, name 2, type 3, ctrl_deps 4, data_deps 5, start_time_micros 6, duration_micros 7,
// inputs 8, outputs 9, attr 10, storage 11; AttributeProto: name 1, doc_string 2, double_val 3,
// int32_val 7, int64_val 9, uint32_val 11, uint64_val 13, bool_val 27, string_val 29).

#include "strategies/workload/chakra/ChakraTrace.hpp"
#include "strategies/workload/chakra/ProtoWire.hpp"
#include "topology/config/ConfigError.hpp"

#include <nlohmann/json.hpp>

namespace clustersim::chakra {

namespace {

using proto::Reader;
using proto::WireType;
using proto::Writer;

const char* const kValid = "a Chakra execution trace: length-prefixed GlobalMetadata and Node messages "
                           "(mlcommons/chakra schema/protobuf/et_def.proto)";

std::string encode_attr(const Attr& a)
{
  Writer w;
  w.bytes_field(1, a.name);
  switch (a.kind) {
  case Attr::Kind::none:
    break;
  case Attr::Kind::i64:
    w.int64_field(a.is_int32 ? 7 : 9, a.i);
    break;
  case Attr::Kind::u64:
    w.uint64_field(13, static_cast<std::uint64_t>(a.i));
    break;
  case Attr::Kind::dbl:
    w.double_field(3, a.d);
    break;
  case Attr::Kind::boolean:
    w.bool_field(27, a.i != 0);
    break;
  case Attr::Kind::str:
    w.bytes_field(29, a.s);
    break;
  }
  return w.bytes();
}

Attr decode_attr(Reader r)
{
  Attr a;
  std::uint32_t field = 0;
  WireType type{};
  while (r.next(field, type)) {
    const bool scalar = type == WireType::varint;
    if (field == 1 && type == WireType::length)
      a.name = std::string(r.bytes());
    else if (field == 3 && type == WireType::fixed64) {
      a.kind = Attr::Kind::dbl;
      a.d = r.fixed64();
    } else if ((field == 7 || field == 9) && scalar) {
      a.kind = Attr::Kind::i64;
      a.i = static_cast<std::int64_t>(r.varint());
      if (field == 7) // int32: the low 32 bits, sign-extended
        a.i = static_cast<std::int32_t>(static_cast<std::uint32_t>(a.i & 0xffffffff));
      a.is_int32 = field == 7;
    } else if ((field == 11 || field == 13) && scalar) {
      a.kind = Attr::Kind::u64;
      a.i = static_cast<std::int64_t>(r.varint());
    } else if (field == 27 && scalar) {
      a.kind = Attr::Kind::boolean;
      a.i = r.varint() != 0;
    } else if (field == 29 && type == WireType::length) {
      a.kind = Attr::Kind::str;
      a.s = std::string(r.bytes());
    } else
      r.skip(type); // doc_string, lists, the other scalar kinds
  }
  return a;
}

std::string encode_node(const Node& n)
{
  Writer w;
  if (n.id)
    w.uint64_field(1, n.id);
  if (!n.name.empty())
    w.bytes_field(2, n.name);
  if (n.type != NodeType::invalid)
    w.uint64_field(3, static_cast<std::uint64_t>(n.type));
  w.packed_field(4, n.ctrl_deps);
  w.packed_field(5, n.data_deps);
  if (n.start_micros)
    w.uint64_field(6, n.start_micros);
  if (n.duration_micros)
    w.uint64_field(7, n.duration_micros);
  for (const auto& a : n.attrs)
    w.bytes_field(10, encode_attr(a));
  return w.bytes();
}

Node decode_node(Reader r)
{
  Node n;
  std::uint32_t field = 0;
  WireType type{};
  while (r.next(field, type)) {
    const bool scalar = type == WireType::varint;
    if (field == 1 && scalar)
      n.id = r.varint();
    else if (field == 2 && type == WireType::length)
      n.name = std::string(r.bytes());
    else if (field == 3 && scalar) {
      const std::size_t at = r.offset();
      const std::uint64_t t = r.varint();
      if (t > static_cast<std::uint64_t>(NodeType::checkpoint))
        throw proto::WireError(at, "node type " + std::to_string(t) + " is not one of the schema's NodeType (0-10)");
      n.type = static_cast<NodeType>(t);
    } else if (field == 4)
      r.repeated(type, n.ctrl_deps);
    else if (field == 5)
      r.repeated(type, n.data_deps);
    else if (field == 6 && scalar)
      n.start_micros = r.varint();
    else if (field == 7 && scalar)
      n.duration_micros = r.varint();
    else if (field == 10 && type == WireType::length) {
      const std::string_view body = r.bytes();
      n.attrs.push_back(decode_attr(Reader(body, r.offset() - body.size())));
    } else
      r.skip(type); // inputs, outputs, storage, fields of later schemas
  }
  return n;
}

} // namespace

const char* to_string(NodeType t)
{
  static const char* names[] = {"INVALID_NODE",   "METADATA_NODE",  "MEM_LOAD_NODE", "MEM_STORE_NODE",
                                "COMP_NODE",      "COMM_SEND_NODE", "COMM_RECV_NODE", "COMM_COLL_NODE",
                                "STORAGE_NODE",   "BATCH_NODE",     "CHECKPOINT_NODE"};
  return names[static_cast<std::size_t>(t)];
}

Attr Attr::int64(std::string name, std::int64_t v)
{
  Attr a;
  a.name = std::move(name);
  a.kind = Kind::i64;
  a.i = v;
  return a;
}

Attr Attr::int32(std::string name, std::int32_t v)
{
  Attr a = int64(std::move(name), v);
  a.is_int32 = true;
  return a;
}

Attr Attr::boolean(std::string name, bool v)
{
  Attr a;
  a.name = std::move(name);
  a.kind = Kind::boolean;
  a.i = v ? 1 : 0;
  return a;
}

Attr Attr::real(std::string name, double v)
{
  Attr a;
  a.name = std::move(name);
  a.kind = Kind::dbl;
  a.d = v;
  return a;
}

Attr Attr::text(std::string name, std::string v)
{
  Attr a;
  a.name = std::move(name);
  a.kind = Kind::str;
  a.s = std::move(v);
  return a;
}

const Attr* Node::attr(std::string_view key) const
{
  for (const auto& a : attrs)
    if (a.name == key)
      return &a;
  return nullptr;
}

std::int64_t Node::integer(std::string_view key, std::int64_t fallback) const
{
  const Attr* a = attr(key);
  return a && (a->kind == Attr::Kind::i64 || a->kind == Attr::Kind::u64) ? a->i : fallback;
}

void append_metadata(std::string& out, const std::string& version, const std::vector<Attr>& metadata)
{
  Writer meta;
  if (!version.empty())
    meta.bytes_field(1, version);
  for (const auto& a : metadata)
    meta.bytes_field(2, encode_attr(a));
  proto::append_delimited(out, meta.bytes());
}

void append_node(std::string& out, const Node& n)
{
  proto::append_delimited(out, encode_node(n));
}

std::string encode(const Trace& t)
{
  std::string out;
  append_metadata(out, t.version, t.metadata);
  for (const auto& n : t.nodes)
    append_node(out, n);
  return out;
}

Trace decode(std::string_view bytes, const std::string& file)
{
  Trace t;
  try {
    const auto messages = proto::split_delimited(bytes);
    if (messages.empty())
      throw proto::WireError(0, "the file is empty: a trace begins with its GlobalMetadata message");
    Reader meta(messages[0].bytes, messages[0].offset);
    std::uint32_t field = 0;
    WireType type{};
    while (meta.next(field, type)) {
      if (field == 1 && type == WireType::length)
        t.version = std::string(meta.bytes());
      else if (field == 2 && type == WireType::length) {
        const std::string_view body = meta.bytes();
        t.metadata.push_back(decode_attr(Reader(body, meta.offset() - body.size())));
      } else
        meta.skip(type);
    }
    t.nodes.reserve(messages.size() - 1);
    for (std::size_t i = 1; i < messages.size(); ++i)
      t.nodes.push_back(decode_node(Reader(messages[i].bytes, messages[i].offset)));
  } catch (const proto::WireError& e) {
    throw ConfigError(SourceLocation{file, 0, 0}, "byte " + std::to_string(e.offset()) + ": " + e.what(), kValid);
  }
  return t;
}

std::string encode_groups(const Groups& g)
{
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [name, ranks] : g)
    j[name] = ranks;
  return j.dump() + "\n";
}

Groups decode_groups(std::string_view text, const std::string& file)
{
  const std::string valid = "a JSON object of communicator groups, {\"1\": [0, 1, ...], ...} "
                            "(ASTRA-sim's --comm-group-configuration)";
  nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw ConfigError(SourceLocation{file, 0, 0}, "not a JSON object", valid);
  Groups g;
  for (const auto& [name, ranks] : j.items()) {
    if (!ranks.is_array() || ranks.empty())
      throw ConfigError(SourceLocation{file, 0, 0}, "group '" + name + "' is not a list of ranks", valid);
    std::vector<std::uint32_t> list;
    for (const auto& r : ranks) {
      if (!r.is_number_unsigned() || r.get<std::uint64_t>() > 0xffffffffULL)
        throw ConfigError(SourceLocation{file, 0, 0}, "group '" + name + "' lists " + r.dump() + ", not a rank",
                          valid);
      list.push_back(r.get<std::uint32_t>());
    }
    g[name] = std::move(list);
  }
  return g;
}

} // namespace clustersim::chakra
