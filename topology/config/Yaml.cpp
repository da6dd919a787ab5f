#include "topology/config/Yaml.hpp"

#include "topology/config/Suggest.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <sys/stat.h>

namespace clustersim {

YamlNode YamlNode::load_string(const std::string& text, const std::string& name)
{
  auto file = std::make_shared<const std::string>(name);
  try {
    return YamlNode(YAML::Load(text), file, std::make_shared<const std::string>(text));
  } catch (const YAML::ParserException& e) {
    // yaml-cpp marks are 0-based
    throw ConfigError(SourceLocation{name, e.mark.line + 1, e.mark.column + 1}, "YAML syntax error: " + e.msg,
                      "a YAML mapping");
  }
}

namespace {

std::string read_bounded(std::istream& in, const std::string& name, std::size_t limit, const std::string& valid)
{
  auto mib = [](std::size_t b) { return std::to_string(b >> 20) + " MiB"; };
  std::string text;
  std::vector<char> chunk(std::size_t{1} << 16);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > limit)
      throw ConfigError(SourceLocation{name, 0, 0}, "longer than the limit of " + mib(limit) + " for this file",
                        valid + " of at most " + mib(limit));
  }
  return text;
}

} // namespace

std::string read_input_file(const std::string& path, std::size_t limit, const std::string& valid)
{
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw ConfigError(SourceLocation{path, 0, 0}, "is a directory, not a file", valid);
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw ConfigError(SourceLocation{path, 0, 0}, "cannot open file", valid);
  return read_bounded(in, path, limit, valid);
}

YamlNode YamlNode::load_file(const std::string& path)
{
  if (path == "-") // the document from standard input, named "stdin" in errors
    return load_string(read_bounded(std::cin, "stdin", kMaxConfigBytes, "a YAML document"), "stdin");
  return load_string(read_input_file(path, kMaxConfigBytes, "a readable YAML file"), path);
}

YamlNode YamlNode::reparse() const
{
  if (!text_)
    throw std::logic_error("YamlNode::reparse on a node that was not loaded from text");
  YamlNode fresh = load_string(*text_, *file_);
  return edits_ ? fresh.edited(edits_->apply) : fresh;
}

YamlNode YamlNode::edited(std::function<YamlEdits::Placed(YAML::Node root)> apply) const
{
  if (!text_)
    throw std::logic_error("YamlNode::edited on a node that was not loaded from text");
  YamlNode fresh = load_string(*text_, *file_);
  auto edits = std::make_shared<YamlEdits>();
  edits->apply = std::move(apply);
  edits->placed = edits->apply(fresh.node_);
  fresh.edits_ = std::move(edits);
  return fresh;
}

SourceLocation YamlNode::where() const
{
  if (edits_)
    for (const auto& [node, origin] : edits_->placed)
      if (node_.is(node))
        return SourceLocation{origin, 0, 0};
  YAML::Mark m = node_.Mark();
  if (m.line < 0)
    return SourceLocation{*file_, 1, 1};
  return SourceLocation{*file_, m.line + 1, m.column + 1};
}

void YamlNode::fail(const std::string& what_wrong, const std::string& valid) const
{
  throw ConfigError(where(), what_wrong, valid);
}

std::string YamlNode::as_string() const
{
  if (!node_.IsScalar())
    fail("expected a string", "a plain scalar");
  const std::string& s = node_.Scalar();
  if (std::size_t bad = invalid_utf8_at(s); bad != std::string::npos)
    fail("text is not valid UTF-8 (byte " + std::to_string(bad + 1) + ")", "UTF-8 text");
  return s;
}

long long YamlNode::as_int(long long min, long long max) const
{
  std::string range = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  if (!node_.IsScalar())
    fail("expected an integer", range);
  const std::string& s = node_.Scalar();
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(s, &used, 10);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != s.size() || s.empty()) {
    // accept integral values written in scientific notation, e.g. 1e3
    char* end = nullptr;
    double d = std::strtod(s.c_str(), &end);
    if (end == s.c_str() || *end != '\0' || std::floor(d) != d || std::fabs(d) > 9e18)
      fail("'" + s + "' is not an integer", range);
    v = static_cast<long long>(d);
  }
  if (v < min || v > max)
    fail(std::to_string(v) + " is out of range", range);
  return v;
}

double YamlNode::as_number(double min, double max) const
{
  std::ostringstream range;
  range << "a number from " << min << " to " << max;
  if (!node_.IsScalar())
    fail("expected a number", range.str());
  const std::string& s = node_.Scalar();
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end == s.c_str() || *end != '\0' || !std::isfinite(v))
    fail("'" + s + "' is not a number", range.str());
  if (v < min || v > max)
    fail(s + " is out of range", range.str());
  return v;
}

bool YamlNode::as_bool() const
{
  if (node_.IsScalar()) {
    const std::string& s = node_.Scalar();
    if (s == "true" || s == "yes" || s == "on")
      return true;
    if (s == "false" || s == "no" || s == "off")
      return false;
  }
  fail("expected a boolean", "true, false");
}

double YamlNode::as_quantity(Quantity kind) const
{
  if (!node_.IsScalar())
    fail("expected a quantity with a unit", valid_suffixes(kind));
  try {
    return parse_quantity(node_.Scalar(), kind);
  } catch (const UnitError& e) {
    fail(e.what(), e.valid());
  }
}

std::string YamlNode::as_choice(const std::vector<std::string>& valid, const std::string& what) const
{
  std::string s = as_string();
  if (std::find(valid.begin(), valid.end(), s) == valid.end())
    fail(unknown_name(what, s, valid), valid.empty() ? "none: no " + what + " is defined" : join(valid));
  return s;
}

std::vector<YamlNode> YamlNode::items() const
{
  if (!node_.IsSequence())
    fail("expected a list", "a YAML sequence");
  std::vector<YamlNode> out;
  for (const auto& n : node_)
    out.emplace_back(n, file_, text_, edits_);
  return out;
}

std::vector<std::pair<YamlNode, YamlNode>> YamlNode::entries(const std::string& context) const
{
  if (!node_.IsMap())
    fail("expected a mapping", "a YAML mapping of key: value");
  std::vector<std::pair<YamlNode, YamlNode>> out;
  std::unordered_set<std::string> seen;
  for (const auto& kv : node_) {
    YamlNode key(kv.first, file_, text_, edits_);
    if (kv.first.IsScalar() && !seen.insert(kv.first.Scalar()).second)
      key.fail("duplicate key '" + kv.first.Scalar() + "' in " + context, "each key once");
    out.emplace_back(std::move(key), YamlNode(kv.second, file_, text_, edits_));
  }
  return out;
}

YamlMap::YamlMap(const YamlNode& node, std::string context) : node_(node), context_(std::move(context))
{
  if (!node.is_map())
    node.fail("'" + context_ + "' must be a mapping", "a YAML mapping of key: value");
  for (auto& [k, v] : node.entries(context_)) {
    std::string key = k.as_string();
    index_.emplace(key, entries_.size());
    entries_.emplace_back(key, v);
  }
}

std::optional<YamlNode> YamlMap::find(const std::string& key)
{
  if (asked_set_.insert(key).second)
    asked_.push_back(key);
  auto at = index_.find(key);
  if (at == index_.end())
    return std::nullopt;
  return entries_[at->second].second;
}

bool YamlMap::has(const std::string& key)
{
  return find(key).has_value();
}

YamlNode YamlMap::require(const std::string& key)
{
  auto n = find(key);
  if (n)
    return *n;
  // A misspelling of the required key is the likelier mistake: point at it.
  for (auto& [k, v] : node_.entries()) {
    std::string name = k.as_string();
    if (name != key && without_invisible(name) == key)
      k.fail("key '" + name + "' has a zero-width character in it (a byte order mark pasted mid-file?)",
             "'" + key + "' typed plainly");
    if (asked_set_.count(name) == 0 && known_.count(name) == 0 && nearest(name, {key}) == key)
      k.fail(unknown_name("key", name, {key}, context_), "'" + key + "' (required)");
  }
  node_.fail("missing key '" + key + "' in " + context_, "a mapping with '" + key + "'");
}

long long YamlMap::get_int(const std::string& key, long long fallback, long long min, long long max)
{
  auto n = find(key);
  return n ? n->as_int(min, max) : fallback;
}

double YamlMap::get_number(const std::string& key, double fallback, double min, double max)
{
  auto n = find(key);
  return n ? n->as_number(min, max) : fallback;
}

bool YamlMap::get_bool(const std::string& key, bool fallback)
{
  auto n = find(key);
  return n ? n->as_bool() : fallback;
}

std::string YamlMap::get_string(const std::string& key, const std::string& fallback)
{
  auto n = find(key);
  return n ? n->as_string() : fallback;
}

std::string YamlMap::get_choice(const std::string& key, const std::string& fallback,
                                const std::vector<std::string>& valid)
{
  auto n = find(key);
  return n ? n->as_choice(valid, key) : fallback;
}

double YamlMap::get_quantity(const std::string& key, double fallback, Quantity kind)
{
  auto n = find(key);
  return n ? n->as_quantity(kind) : fallback;
}

double YamlMap::require_quantity(const std::string& key, Quantity kind)
{
  return require(key).as_quantity(kind);
}

void YamlMap::allow(const std::vector<std::string>& keys)
{
  for (const auto& k : keys)
    if (asked_set_.insert(k).second)
      asked_.push_back(k);
}

std::string unknown_key_message(const std::string& kind, const std::string& key, const std::vector<std::string>& table,
                                const std::string& context, const std::vector<std::pair<std::string, std::string>>& hints)
{
  // another tool's spelling: "--tensor-model-parallel-size", "Tensor_Model_Parallel_Size"
  std::string name = key.substr(std::min(key.find_first_not_of('-'), key.size()));
  for (char& c : name)
    c = c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& [foreign, ours] : hints)
    if (foreign == name)
      return "unknown " + kind + " '" + key + "'" + (context.empty() ? "" : " in " + context) + "; did you mean " +
             ours + "?";
  return unknown_name(kind, key, table, context);
}

void YamlMap::finish_against(const std::vector<std::string>& table,
                             const std::vector<std::pair<std::string, std::string>>& hints) const
{
  for (const auto& [key, value] : entries_) {
    if (std::find(table.begin(), table.end(), key) == table.end()) {
      YamlNode at = value;
      for (auto& [k, v] : node_.entries())
        if (k.as_string() == key)
          at = k;
      at.fail(unknown_key_message("key", key, table, context_, hints), join(table));
    }
    if (asked_set_.count(key) == 0) {
      // a key of the table that this document's other values make meaningless
      // (bandwidth for a pcie scale-up, say): say so rather than ignore it
      std::vector<std::string> used = asked_;
      std::sort(used.begin(), used.end());
      for (auto& [k, v] : node_.entries())
        if (k.as_string() == key)
          k.fail("key '" + key + "' does not apply to this " + context_ + " as written", join(used));
    }
  }
}

void YamlMap::finish() const
{
  for (const auto& [key, value] : entries_) {
    if (asked_set_.count(key) != 0)
      continue;
    // point at the key itself, which is where the value's mapping entry starts
    std::vector<std::string> valid = asked_;
    std::sort(valid.begin(), valid.end());
    YamlNode at = value;
    for (auto& [k, v] : node_.entries())
      if (k.as_string() == key)
        at = k;
    at.fail(unknown_name("key", key, valid, context_), join(valid));
  }
}

} // namespace clustersim
