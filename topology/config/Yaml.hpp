#pragma once
/// The config layer's view of YAML: nodes that know their file and position, strict maps that
/// reject unknown keys with a suggestion, and typed getters whose errors point at the value.
///
/// Only parsing code uses these; what leaves the parser are typed structs.

#include "topology/config/ConfigError.hpp"
#include "topology/config/Units.hpp"

#include <yaml-cpp/yaml.h>

#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <string>
#include <utility>
#include <vector>

namespace clustersim {

/// The most bytes a configuration (experiment, platform, model, catalog, Hugging Face config,
/// validation set) may have: yaml-cpp holds about 120 bytes per byte of a mapping, 480 MB here
/// (2 s to parse). The largest shipped is 270 kB.
inline constexpr std::size_t kMaxConfigBytes = std::size_t{4} << 20;
/// The most bytes of a results file (results.json, results.csv) read back: a sweep of the most
/// points it may have, at about 1 kB a row.
inline constexpr std::size_t kMaxResultsBytes = std::size_t{2} << 30;

/// The text of a file read with a bound: a directory, a file that cannot be opened, and one
/// longer than `limit` bytes (/dev/zero, a runaway generator) are ConfigErrors at FILE:0:0 that
/// name the limit, before more than `limit` + 1 bytes are held.
std::string read_input_file(const std::string& path, std::size_t limit, const std::string& valid);

/// Edits of a document made outside its file (command-line settings): the function that makes
/// them on a parse, and what it placed, each with the origin its errors name.
struct YamlEdits {
  using Placed = std::vector<std::pair<YAML::Node, std::string>>;
  std::function<Placed(YAML::Node root)> apply;
  Placed placed; ///< the nodes of this parse that the edits put there
};

class YamlNode {
public:
  YamlNode(YAML::Node node, std::shared_ptr<const std::string> file, std::shared_ptr<const std::string> text = nullptr,
           std::shared_ptr<const YamlEdits> edits = nullptr)
      : node_(std::move(node)), file_(std::move(file)), text_(std::move(text)), edits_(std::move(edits))
  {
  }

  /// Loads a file ("-": standard input, named "stdin"); a missing file, a directory, or a
  /// syntax error is a ConfigError at the right position.
  static YamlNode load_file(const std::string& path);
  /// Parses text as if it came from a file called `name`.
  static YamlNode load_string(const std::string& text, const std::string& name);

  SourceLocation where() const;
  const std::string& file() const { return *file_; }
  [[noreturn]] void fail(const std::string& what_wrong, const std::string& valid = "") const;

  bool is_map() const { return node_.IsMap(); }
  bool is_sequence() const { return node_.IsSequence(); }
  bool is_scalar() const { return node_.IsScalar(); }
  bool is_null() const { return node_.IsNull(); }

  /// A scalar; text that is not valid UTF-8 is an error (it would reach reports and JSON).
  std::string as_string() const;
  long long as_int(long long min, long long max) const;
  double as_number(double min, double max) const;
  bool as_bool() const;
  double as_quantity(Quantity kind) const;
  /// One of `valid`; otherwise "unknown WHAT 'x'; did you mean 'y'?; valid: ...".
  std::string as_choice(const std::vector<std::string>& valid, const std::string& what) const;
  std::vector<YamlNode> items() const;
  /// A mapping's key-value pairs in document order. A key written twice is an error at its
  /// second place (YAML forbids it; yaml-cpp keeps both, and a lookup would take either).
  std::vector<std::pair<YamlNode, YamlNode>> entries(const std::string& context = "this mapping") const;

  /// The underlying yaml-cpp node (for the config layer's own edits, e.g. sweep points).
  const YAML::Node& raw() const { return node_; }
  /// A fresh parse of the document this node was loaded from, every position intact (a
  /// YAML::Clone loses them); std::logic_error for a node built in code.
  YamlNode reparse() const;
  /// A fresh parse with `apply`'s edits made, and made again by every later reparse() (a sweep
  /// parses its document once per point). A node an edit placed reports the origin it was
  /// placed with as its position.
  YamlNode edited(std::function<YamlEdits::Placed(YAML::Node root)> apply) const;

private:
  YAML::Node node_;
  std::shared_ptr<const std::string> file_;
  std::shared_ptr<const std::string> text_; ///< the document's text (for reparse)
  std::shared_ptr<const YamlEdits> edits_;  ///< edits made on the text's parse, or none
};

/// A YAML mapping read strictly: every key the parser asks for becomes valid, and `finish()`
/// rejects any other key (with the nearest valid one suggested), so a misspelled key is never
/// silently ignored.
class YamlMap {
public:
  /// @param context names the section in messages, e.g. "training"
  YamlMap(const YamlNode& node, std::string context);

  std::optional<YamlNode> find(const std::string& key);
  YamlNode require(const std::string& key);
  bool has(const std::string& key);

  long long get_int(const std::string& key, long long fallback, long long min, long long max);
  double get_number(const std::string& key, double fallback, double min, double max);
  bool get_bool(const std::string& key, bool fallback);
  std::string get_string(const std::string& key, const std::string& fallback);
  std::string get_choice(const std::string& key, const std::string& fallback, const std::vector<std::string>& valid);
  double get_quantity(const std::string& key, double fallback, Quantity kind);
  double require_quantity(const std::string& key, Quantity kind);

  /// Marks keys as valid without reading them (keys handled elsewhere or documentation-only).
  void allow(const std::vector<std::string>& keys);
  /// Keys valid in this mapping: a missing required key is not blamed on one of them as its
  /// misspelling (a platform without name: said "unknown key 'node'; did you mean 'name'?").
  void know(const std::vector<std::string>& keys) { known_.insert(keys.begin(), keys.end()); }
  /// Throws on the first key (in file order) that no getter asked for.
  void finish() const;
  /// Throws on the first key not in `valid` (a table's keys), and on a key of `valid` that no
  /// getter asked for: the document's other values make it meaningless (a bandwidth for a PCIe
  /// scale-up), and it would otherwise be silently ignored.
  /// `hints` maps another tool's name for a key, normalized (lower case, '-' as '_', no leading
  /// dashes), to what this schema calls it: an unknown key found there is suggested as that.
  void finish_against(const std::vector<std::string>& valid,
                      const std::vector<std::pair<std::string, std::string>>& hints = {}) const;

  const YamlNode& node() const { return node_; }
  const std::string& context() const { return context_; }

private:
  YamlNode node_;
  std::string context_;
  std::vector<std::pair<std::string, YamlNode>> entries_;
  std::unordered_map<std::string, std::size_t> index_; ///< key -> position in entries_
  std::vector<std::string> asked_;
  std::unordered_set<std::string> asked_set_;
  std::unordered_set<std::string> known_;
};

/// "unknown KIND 'KEY' in CONTEXT" with the nearest key of `table` suggested, or, where `hints`
/// knows the key as another tool's name (normalized: lower case, '_' for '-', no leading
/// dashes), what this schema calls it.
std::string unknown_key_message(const std::string& kind, const std::string& key, const std::vector<std::string>& table,
                                const std::string& context,
                                const std::vector<std::pair<std::string, std::string>>& hints = {});

} // namespace clustersim
