#pragma once
/// The configuration keys, one table per section (in the spirit of SST's documented parameters
/// and ns-3's attributes): every key with its type, default, unit, valid values and a one-line
/// doc. The parsers read their sections through the table (SectionReader), so a key's range,
/// default and wording live in one place; sweeps check their axes against it, `plan --fixed`
/// validates its values with it, and `clustersim schema` prints it (the README's key lists are
/// generated from that output and a test keeps them in step).
///
/// Each section's table is defined next to its parser (training keys in TrainingSpec.cpp,
/// platform keys in PlatformSpec.cpp, ...).

#include "topology/config/Units.hpp"
#include "topology/config/Yaml.hpp"

#include <optional>
#include <string>
#include <vector>

namespace clustersim {

enum class KeyType {
  integer,
  number,
  boolean,
  string,
  choice,   ///< one of `choices`, or of the names of a registry
  quantity, ///< a number with a unit suffix (Units.hpp)
  section,  ///< a nested mapping with a table of its own (`nested`)
  list,     ///< a YAML sequence, read by the parser
  value     ///< a value whose form the parser decides (a model: preset name, mapping, hf_config)
};

const char* to_string(KeyType t);

struct KeySpec {
  std::string key;
  KeyType type = KeyType::integer;
  std::string fallback;     ///< default as written in YAML; empty: no default
  std::string fallback_doc; ///< the default in words when it is computed from other keys
  Quantity quantity = Quantity::bytes;
  double min = 0; ///< integer, number, quantity (SI units): inclusive bounds
  double max = 0;
  std::vector<std::string> choices;
  std::string registry; ///< choice: the registry (RegistryDirectory) whose names are valid
  std::string nested;   ///< section: the name of its table
  std::string unit;     ///< what the number counts ("GPUs", "sequences"); quantities: their kind
  std::string doc;
  bool required = false;
  bool axis = true;     ///< a sweep may vary it (scalars only)
  bool fixable = false; ///< `plan --fixed KEY=VALUE` may set it
  std::string noun_;

  // Builders, so that tables read as lists of keys.
  static KeySpec integer(std::string key, long long fallback, long long min, long long max, std::string doc);
  static KeySpec number(std::string key, double fallback, double min, double max, std::string doc);
  static KeySpec boolean(std::string key, bool fallback, std::string doc);
  static KeySpec string(std::string key, std::string fallback, std::string doc);
  static KeySpec choice(std::string key, std::string fallback, std::vector<std::string> choices, std::string doc);
  static KeySpec from_registry(std::string key, std::string fallback, std::string registry, std::string doc);
  static KeySpec quantity_of(std::string key, Quantity kind, std::string fallback, double min, double max,
                             std::string doc);
  static KeySpec section(std::string key, std::string nested, std::string doc);
  static KeySpec list(std::string key, std::string doc);
  static KeySpec value(std::string key, std::string doc);

  KeySpec& computed(std::string how); ///< no literal default: computed as described
  KeySpec& must();                    ///< required
  KeySpec& fixed_by_planner();        ///< `plan --fixed` accepts it
  KeySpec& not_an_axis();
  KeySpec& counts(std::string what); ///< the unit of an integer or number
  KeySpec& of(std::string section);  ///< a list whose items are mappings of this section (sweep paths list.N.key)
  KeySpec& called(std::string what); ///< the noun in messages ("unknown fabric kind 'x'"); default: the key

  std::string noun() const;

  /// "an integer from 1 to 65536", "one of none, selective, full", "a size from 1 kB to 1 TB".
  std::string valid() const;
  /// The default as shown to users: the literal, the computed rule, or "required" / "-".
  std::string default_text() const;
  /// The valid names of a choice (its list, or its registry's names).
  std::vector<std::string> names() const;
};

struct Section {
  std::string name; ///< "training", "training.overlap", "platform.node.nics"
  std::string doc;
  std::vector<KeySpec> keys;
  /// Other tools' names for these keys (normalized: lower case, '_' for '-'), each with what to
  /// write here instead: an unknown key among them is suggested as that.
  std::vector<std::pair<std::string, std::string>> hints = {};

  const KeySpec* find(const std::string& key) const;
  /// The key; a key the table lacks is a programming error (std::logic_error).
  const KeySpec& at(const std::string& key) const;
  std::vector<std::string> key_names() const;
};

/// Checks a scalar written for `spec` (a sweep value, a `plan --fixed` value) without a YAML
/// position: the error message and the valid text, or nullopt when it is valid.
std::optional<std::pair<std::string, std::string>> check_scalar(const KeySpec& spec, const std::string& text);

/// A section as one document writes it, or as a base document writes it with another
/// document's values over it (a platform's `base:` with overrides).
struct Layers {
  std::optional<YamlNode> base;
  std::optional<YamlNode> over;
};

/// Reads one section of a YAML document through its table: defaults and bounds come from the
/// table, every error names the key's position and what is valid, and `finish()` rejects keys
/// the table does not have (with the nearest suggested).
///
/// Over layers, a key is read from the override where it is written there, else from the base,
/// else from the table's default; a list or scalar of the override replaces the base's whole,
/// and an error points at the document the value came from.
class SectionReader {
public:
  SectionReader(const YamlNode& node, const Section& section);
  SectionReader(const YamlNode& node, const Section& section, std::string context);
  /// `layers` has a base, an override, or both.
  SectionReader(const Layers& layers, const Section& section, std::string context);

  const Section& section() const { return section_; }
  /// The mapping errors about the section as a whole point at: the override's where it has one.
  const YamlNode& yaml() const { return over_ ? over_->node() : map_.node(); }

  bool has(const std::string& key);
  std::optional<YamlNode> find(const std::string& key);
  YamlNode require(const std::string& key);
  /// Sub-section `key` of the base and of the override (either may be absent).
  Layers layers(const std::string& key);

  /// The value, else the table's default (a key with neither is missing: an error).
  long long integer(const std::string& key);
  double number(const std::string& key);
  bool boolean(const std::string& key);
  std::string string(const std::string& key);
  std::string choice(const std::string& key);
  double quantity(const std::string& key);
  /// The value if the key is given (for defaults computed from other keys).
  std::optional<long long> integer_if(const std::string& key);
  std::optional<std::string> choice_if(const std::string& key);

  /// Where a key's value is, or the mapping when the key is absent.
  SourceLocation where(const std::string& key);
  void finish() const;

private:
  const KeySpec& spec(const std::string& key) const;
  YamlNode value_or_default(const std::string& key);

  const Section& section_;
  YamlMap map_;
  std::optional<YamlMap> over_; ///< the override, over map_ (the base)
};

} // namespace clustersim
