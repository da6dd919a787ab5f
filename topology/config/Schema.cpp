#include "topology/config/Schema.hpp"

#include "topology/config/Registry.hpp"
#include "topology/config/Suggest.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace clustersim {

const char* to_string(KeyType t)
{
  switch (t) {
  case KeyType::integer:
    return "integer";
  case KeyType::number:
    return "number";
  case KeyType::boolean:
    return "boolean";
  case KeyType::string:
    return "string";
  case KeyType::choice:
    return "choice";
  case KeyType::quantity:
    return "quantity";
  case KeyType::section:
    return "section";
  case KeyType::list:
    return "list";
  case KeyType::value:
    return "value";
  }
  return "?";
}

namespace {

std::string plain(double v)
{
  char buf[64];
  if (std::fabs(v) >= 1e15 || (std::floor(v) != v && std::fabs(v) < 1e-3))
    std::snprintf(buf, sizeof buf, "%g", v);
  else
    std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

KeySpec make(std::string key, KeyType type, std::string doc)
{
  KeySpec k;
  k.key = std::move(key);
  k.type = type;
  k.doc = std::move(doc);
  return k;
}

bool parse_long(const std::string& s, long long& out)
{
  if (s.empty())
    return false;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (*end == '\0' && errno == 0) {
    out = v;
    return true;
  }
  double d = std::strtod(s.c_str(), &end); // integral values in scientific notation (1e3)
  if (end == s.c_str() || *end != '\0' || !std::isfinite(d) || std::floor(d) != d || std::fabs(d) > 9e18)
    return false;
  out = static_cast<long long>(d);
  return true;
}

} // namespace

KeySpec KeySpec::integer(std::string key, long long fallback, long long min, long long max, std::string doc)
{
  KeySpec k = make(std::move(key), KeyType::integer, std::move(doc));
  k.fallback = std::to_string(fallback);
  k.min = static_cast<double>(min);
  k.max = static_cast<double>(max);
  return k;
}

KeySpec KeySpec::number(std::string key, double fallback, double min, double max, std::string doc)
{
  KeySpec k = make(std::move(key), KeyType::number, std::move(doc));
  k.fallback = plain(fallback);
  k.min = min;
  k.max = max;
  return k;
}

KeySpec KeySpec::boolean(std::string key, bool fallback, std::string doc)
{
  KeySpec k = make(std::move(key), KeyType::boolean, std::move(doc));
  k.fallback = fallback ? "true" : "false";
  return k;
}

KeySpec KeySpec::string(std::string key, std::string fallback, std::string doc)
{
  KeySpec k = make(std::move(key), KeyType::string, std::move(doc));
  k.fallback = std::move(fallback);
  return k;
}

KeySpec KeySpec::choice(std::string key, std::string fallback, std::vector<std::string> choices, std::string doc)
{
  KeySpec k = make(std::move(key), KeyType::choice, std::move(doc));
  k.fallback = std::move(fallback);
  k.choices = std::move(choices);
  return k;
}

KeySpec KeySpec::from_registry(std::string key, std::string fallback, std::string registry, std::string doc)
{
  KeySpec k = make(std::move(key), KeyType::choice, std::move(doc));
  k.fallback = std::move(fallback);
  k.registry = std::move(registry);
  return k;
}

KeySpec KeySpec::quantity_of(std::string key, Quantity kind, std::string fallback, double min, double max,
                             std::string doc)
{
  KeySpec k = make(std::move(key), KeyType::quantity, std::move(doc));
  k.quantity = kind;
  k.fallback = std::move(fallback);
  k.min = min;
  k.max = max;
  k.unit = quantity_name(kind);
  return k;
}

KeySpec KeySpec::section(std::string key, std::string nested, std::string doc)
{
  KeySpec k = make(std::move(key), KeyType::section, std::move(doc));
  k.nested = std::move(nested);
  k.axis = false;
  return k;
}

KeySpec KeySpec::list(std::string key, std::string doc)
{
  KeySpec k = make(std::move(key), KeyType::list, std::move(doc));
  k.axis = false;
  return k;
}

KeySpec& KeySpec::of(std::string section)
{
  nested = std::move(section);
  return *this;
}

KeySpec KeySpec::value(std::string key, std::string doc)
{
  return make(std::move(key), KeyType::value, std::move(doc));
}

KeySpec& KeySpec::computed(std::string how)
{
  fallback.clear();
  fallback_doc = std::move(how);
  return *this;
}

KeySpec& KeySpec::must()
{
  fallback.clear();
  required = true;
  return *this;
}

KeySpec& KeySpec::fixed_by_planner()
{
  fixable = true;
  return *this;
}

KeySpec& KeySpec::not_an_axis()
{
  axis = false;
  return *this;
}

KeySpec& KeySpec::counts(std::string what)
{
  unit = std::move(what);
  return *this;
}

KeySpec& KeySpec::called(std::string what)
{
  noun_ = std::move(what);
  return *this;
}

std::string KeySpec::noun() const
{
  if (!noun_.empty())
    return noun_;
  std::string n = key;
  for (char& c : n)
    if (c == '_')
      c = ' ';
  return n;
}

std::vector<std::string> KeySpec::names() const
{
  if (!registry.empty())
    return RegistryDirectory::instance().names(registry);
  return choices;
}

std::string KeySpec::valid() const
{
  switch (type) {
  case KeyType::integer:
    return "an integer from " + plain(min) + " to " + plain(max);
  case KeyType::number:
    return "a number from " + plain(min) + " to " + plain(max);
  case KeyType::boolean:
    return "true, false";
  case KeyType::string:
    return "text";
  case KeyType::choice:
    return registry.empty() ? join(choices) : RegistryDirectory::instance().describe(registry);
  case KeyType::quantity:
    return std::string(quantity_name(quantity)) + " from " + format_quantity(min, quantity) + " to " +
           format_quantity(max, quantity) + " with a unit suffix (e.g. " + quantity_example(quantity) + ")";
  case KeyType::section:
    return "a mapping (section " + nested + ")";
  case KeyType::list:
    return "a list";
  case KeyType::value:
    return doc;
  }
  return "";
}

std::string KeySpec::default_text() const
{
  if (!fallback.empty())
    return fallback;
  if (!fallback_doc.empty())
    return fallback_doc;
  return required ? "required" : "-";
}

const KeySpec* Section::find(const std::string& key) const
{
  for (const auto& k : keys)
    if (k.key == key)
      return &k;
  return nullptr;
}

const KeySpec& Section::at(const std::string& key) const
{
  if (const KeySpec* k = find(key))
    return *k;
  throw std::logic_error("configuration table '" + name + "' has no key '" + key + "'");
}

std::vector<std::string> Section::key_names() const
{
  std::vector<std::string> out;
  for (const auto& k : keys)
    out.push_back(k.key);
  return out;
}

std::optional<std::pair<std::string, std::string>> check_scalar(const KeySpec& spec, const std::string& text)
{
  auto bad = [&](const std::string& what) { return std::make_pair(what, spec.valid()); };
  switch (spec.type) {
  case KeyType::integer: {
    long long v = 0;
    if (!parse_long(text, v))
      return bad("'" + text + "' is not an integer");
    if (static_cast<double>(v) < spec.min || static_cast<double>(v) > spec.max)
      return bad(std::to_string(v) + " is out of range");
    return std::nullopt;
  }
  case KeyType::number: {
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !std::isfinite(v))
      return bad("'" + text + "' is not a number");
    if (v < spec.min || v > spec.max)
      return bad(text + " is out of range");
    return std::nullopt;
  }
  case KeyType::boolean:
    if (text == "true" || text == "false" || text == "yes" || text == "no" || text == "on" || text == "off")
      return std::nullopt;
    return bad("'" + text + "' is not a boolean");
  case KeyType::choice: {
    auto names = spec.names();
    for (const auto& n : names)
      if (n == text)
        return std::nullopt;
    return bad(unknown_name(spec.key, text, names));
  }
  case KeyType::quantity:
    try {
      double v = parse_quantity(text, spec.quantity);
      if (v < spec.min || v > spec.max)
        return bad("'" + text + "' is out of range");
    } catch (const UnitError& e) {
      return std::make_pair(std::string(e.what()), e.valid());
    }
    return std::nullopt;
  default:
    return std::nullopt;
  }
}

SectionReader::SectionReader(const YamlNode& node, const Section& section) : SectionReader(node, section, section.name)
{
}

namespace {

std::vector<std::string> key_names(const Section& s)
{
  std::vector<std::string> out;
  for (const auto& k : s.keys)
    out.push_back(k.key);
  return out;
}

} // namespace

SectionReader::SectionReader(const YamlNode& node, const Section& section, std::string context)
    : section_(section), map_(node, std::move(context))
{
  map_.know(key_names(section));
}

namespace {

const YamlNode& layer_node(const Layers& l)
{
  if (l.base)
    return *l.base;
  if (!l.over)
    throw std::logic_error("a section read from no document");
  return *l.over;
}

} // namespace

SectionReader::SectionReader(const Layers& layers, const Section& section, std::string context)
    : section_(section), map_(layer_node(layers), context)
{
  map_.know(key_names(section));
  if (layers.base && layers.over) {
    over_.emplace(*layers.over, std::move(context));
    over_->know(key_names(section));
  }
}

const KeySpec& SectionReader::spec(const std::string& key) const
{
  return section_.at(key);
}

bool SectionReader::has(const std::string& key)
{
  return find(key).has_value();
}

std::optional<YamlNode> SectionReader::find(const std::string& key)
{
  spec(key);
  std::optional<YamlNode> base = map_.find(key);
  if (over_)
    if (auto n = over_->find(key))
      return n;
  return base;
}

YamlNode SectionReader::require(const std::string& key)
{
  spec(key);
  if (over_)
    if (auto n = over_->find(key))
      return *n;
  return map_.require(key);
}

Layers SectionReader::layers(const std::string& key)
{
  spec(key);
  Layers l;
  l.base = map_.find(key);
  if (over_)
    l.over = over_->find(key);
  if (!l.base && !l.over)
    map_.require(key); // throws: missing
  return l;
}

SourceLocation SectionReader::where(const std::string& key)
{
  auto n = find(key);
  return n ? n->where() : yaml().where();
}

YamlNode SectionReader::value_or_default(const std::string& key)
{
  const KeySpec& k = spec(key);
  if (auto n = find(key))
    return *n;
  if (k.fallback.empty())
    return require(key); // throws: missing key
  return YamlNode::load_string(k.fallback, "default of " + section_.name + "." + key);
}

long long SectionReader::integer(const std::string& key)
{
  const KeySpec& k = spec(key);
  return value_or_default(key).as_int(static_cast<long long>(k.min), static_cast<long long>(k.max));
}

std::optional<long long> SectionReader::integer_if(const std::string& key)
{
  const KeySpec& k = spec(key);
  if (auto n = find(key))
    return n->as_int(static_cast<long long>(k.min), static_cast<long long>(k.max));
  return std::nullopt;
}

double SectionReader::number(const std::string& key)
{
  const KeySpec& k = spec(key);
  YamlNode n = value_or_default(key);
  if ((k.unit == "tokens" || k.unit == "parameters") && n.is_scalar()) { // "15T" tokens, "7B" parameters
    if (auto v = parse_count(n.as_string())) {
      std::ostringstream range;
      range << "a number of " << k.unit << " from " << k.min << " to " << k.max << " (K, M, B, T, P multiply)";
      if (*v < k.min || *v > k.max)
        n.fail(n.as_string() + " is out of range", range.str());
      return *v;
    }
    n.fail("'" + n.as_string() + "' is not a number of " + k.unit, valid_count());
  }
  if (k.unit == "ratio" && n.is_scalar() && n.as_string().find(':') != std::string::npos) { // "2:1", "1:7"
    const std::string t = n.as_string();
    const std::size_t colon = t.find(':');
    const std::optional<double> a = parse_count(t.substr(0, colon)), b = parse_count(t.substr(colon + 1));
    std::ostringstream range;
    range << "a ratio A:B or a number, from " << k.min << " to " << k.max;
    if (!a || !b || !(*b > 0))
      n.fail("'" + t + "' is not a ratio", range.str());
    const double v = *a / *b;
    if (v < k.min || v > k.max)
      n.fail(t + " is out of range", range.str());
    return v;
  }
  return n.as_number(k.min, k.max);
}

bool SectionReader::boolean(const std::string& key)
{
  return value_or_default(key).as_bool();
}

std::string SectionReader::string(const std::string& key)
{
  const KeySpec& k = spec(key);
  if (auto n = find(key))
    return n->as_string();
  if (k.required)
    return require(key).as_string();
  return k.fallback;
}

std::string SectionReader::choice(const std::string& key)
{
  const KeySpec& k = spec(key);
  if (auto n = find(key)) {
    std::string s = n->as_string();
    auto names = k.names();
    if (std::find(names.begin(), names.end(), s) == names.end())
      n->fail(unknown_name(k.noun(), s, names), k.valid());
    return s;
  }
  if (k.fallback.empty())
    return require(key).as_string();
  return k.fallback;
}

std::optional<std::string> SectionReader::choice_if(const std::string& key)
{
  if (!has(key))
    return std::nullopt;
  return choice(key);
}

double SectionReader::quantity(const std::string& key)
{
  const KeySpec& k = spec(key);
  YamlNode n = value_or_default(key);
  double v = n.as_quantity(k.quantity);
  if (v < k.min || v > k.max)
    n.fail("'" + n.as_string() + "' is out of range", k.valid());
  return v;
}

void SectionReader::finish() const
{
  if (!over_) {
    map_.finish_against(section_.key_names(), section_.hints);
    return;
  }
  over_->finish_against(section_.key_names(), section_.hints);
  // the base is a platform of its own: a key of it that the override makes meaningless is not
  // the base's mistake
  YamlMap base = map_;
  base.allow(section_.key_names());
  base.finish_against(section_.key_names());
}

} // namespace clustersim
