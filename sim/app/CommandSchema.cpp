// clustersim schema: the tables of configuration keys and the registries of named strategies,
// as text, as Markdown (docs/configuration.md) or as the README's key lists.
#include "sim/app/Commands.hpp"
#include "sim/study/Experiment.hpp"
#include "sim/study/Metrics.hpp"
#include "topology/config/Registry.hpp"
#include "topology/config/Suggest.hpp"

#include <cstdio>
#include <iostream>
#include <sstream>

namespace clustersim {
namespace {

/// "collective-algorithm" → "collective algorithm" (registry kinds have spaces).
std::string registry_kind(const std::string& arg)
{
  std::string k = arg;
  for (char& c : k)
    if (c == '-')
      c = ' ';
  return k;
}

std::vector<std::string> section_names()
{
  std::vector<std::string> out;
  for (const Section* s : all_sections())
    out.push_back(s->name);
  return out;
}

std::vector<std::string> registry_names()
{
  std::vector<std::string> out;
  for (auto k : RegistryDirectory::instance().kinds()) {
    for (char& c : k)
      if (c == ' ')
        c = '-';
    out.push_back(k);
  }
  return out;
}

std::string type_text(const KeySpec& k)
{
  if (k.type == KeyType::quantity)
    return k.unit;
  if (!k.unit.empty())
    return std::string(to_string(k.type)) + " (" + k.unit + ")";
  return to_string(k.type);
}

std::string markdown_cell(std::string s)
{
  std::string out;
  for (char c : s)
    out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

void print_section(std::ostream& o, const Section& s)
{
  o << s.name << ": " << s.doc << "\n";
  for (const auto& k : s.keys) {
    o << "  " << k.key << "  (" << type_text(k) << "; default: " << k.default_text() << ")\n";
    o << "      " << k.doc << "\n";
    if (k.type != KeyType::section && k.type != KeyType::list && k.type != KeyType::value)
      o << "      valid: " << k.valid() << "\n";
  }
}

void markdown_section(std::ostream& o, const Section& s)
{
  o << "### `" << s.name << "`\n\n" << s.doc << "\n\n";
  o << "| key | type | default | valid | doc |\n|---|---|---|---|---|\n";
  for (const auto& k : s.keys) {
    std::string valid = k.type == KeyType::section ? "section `" + k.nested + "`"
                        : k.type == KeyType::list || k.type == KeyType::value ? ""
                                                                               : k.valid();
    o << "| `" << k.key << "` | " << type_text(k) << " | " << markdown_cell(k.default_text()) << " | "
      << markdown_cell(valid) << " | " << markdown_cell(k.doc) << " |\n";
  }
  o << "\n";
}

void print_registry(std::ostream& o, const std::string& kind)
{
  o << kind << ":\n";
  for (const auto& e : RegistryDirectory::instance().entries(kind))
    o << "  " << e.name << "  " << e.description << "\n";
}

/// The README's lists: one line of key names per section of an experiment document.
void summary(std::ostream& o)
{
  for (const Section* s : all_sections()) {
    if (s->name == "validation")
      break; // the experiment document's sections come first
    o << "- `" << s->name << "`: ";
    bool first = true;
    for (const auto& k : s->keys) {
      o << (first ? "" : ", ") << "`" << k.key << "`";
      first = false;
    }
    o << "\n";
  }
}

int schema(const std::vector<std::string>& what, bool markdown, bool as_summary, bool metrics)
{
  std::ostringstream o;
  if (metrics) {
    std::cout << metrics_markdown();
    return 0;
  }
  if (as_summary) {
    summary(o);
    std::cout << o.str();
    return 0;
  }
  std::vector<const Section*> sections;
  std::vector<std::string> registries;
  for (const auto& w : what) {
    const Section* found = nullptr;
    for (const Section* s : all_sections())
      if (s->name == w || s->name == w + ".yaml") // a catalog file by its name: `schema prices`
        found = s;
    if (found) {
      sections.push_back(found);
    } else if (RegistryDirectory::instance().has(registry_kind(w))) {
      registries.push_back(registry_kind(w));
    } else {
      std::vector<std::string> valid = section_names();
      for (const auto& r : registry_names())
        valid.push_back(r);
      throw ConfigError(command_line("schema"), unknown_name("section", w, valid), join(valid));
    }
  }
  if (what.empty()) {
    if (markdown) {
      sections = all_sections();
      for (const auto& k : RegistryDirectory::instance().kinds())
        registries.push_back(k);
    } else {
      o << "sections (clustersim schema SECTION):\n";
      for (const Section* s : all_sections())
        o << "  " << s->name << "  " << s->doc << "\n";
      o << "registries (clustersim schema NAME):\n";
      for (const auto& r : registry_names())
        o << "  " << r << "\n";
      std::cout << o.str();
      return 0;
    }
  }
  for (const Section* s : sections)
    markdown ? markdown_section(o, *s) : print_section(o, *s);
  for (const auto& r : registries) {
    if (markdown) {
      o << "### registry: " << r << "\n\n| name | what |\n|---|---|\n";
      for (const auto& e : RegistryDirectory::instance().entries(r))
        o << "| `" << e.name << "` | " << markdown_cell(e.description) << " |\n";
      o << "\n";
    } else {
      print_registry(o, r);
    }
  }
  std::cout << o.str();
  return 0;
}

} // namespace

void add_schema_command(CLI::App& app, Action& action)
{
  struct Options {
    std::vector<std::string> what;
    bool markdown = false;
    bool summary = false;
    bool metrics = false;
  };
  auto opt = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("schema", "The configuration keys of every section (type, default, valid values, "
                                               "doc) and the registered strategies and algorithms");
  cmd->add_option("what", opt->what, "sections (training, model, platform.node, ...) or registries "
                                     "(collective-algorithm, pipeline-schedule, data-parallel-strategy)");
  cmd->add_flag("--markdown", opt->markdown, "print Markdown tables (docs/configuration.md)");
  cmd->add_flag("--summary", opt->summary, "print the key names of each experiment section (the README's lists)");
  cmd->add_flag("--metrics", opt->metrics,
                "print the report's figures: key, unit, meaning (the same in --json, results.csv and plan --json)");
  cmd->callback(
      [opt, &action] { action = [opt] { return schema(opt->what, opt->markdown, opt->summary, opt->metrics); }; });
}

} // namespace clustersim
