#pragma once
/// Name → factory registries, failing like SimGrid's ModuleGroup: a name registered twice is an
/// error, an unknown name lists every valid one with its description (nearest suggested), and
/// the registries can be listed (`clustersim schema`).
///
/// Strategies, schedules and collective algorithms register themselves from their own file
/// (static registrars in an OBJECT library, so the linker keeps them). Every registry also
/// enters the RegistryDirectory under its kind ("pipeline schedule"), which is how a table of
/// configuration keys (Schema.hpp) names the registry whose names a key accepts without
/// depending on the library that fills it.

#include "topology/config/Suggest.hpp"

#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace clustersim {

struct RegistryEntry {
  std::string name;
  std::string description;
};

/// Every registry of the program, by kind.
class RegistryDirectory {
public:
  using Lister = std::function<std::vector<RegistryEntry>()>;

  static RegistryDirectory& instance()
  {
    static RegistryDirectory d;
    return d;
  }
  void add(const std::string& kind, Lister lister) { listers_[kind] = std::move(lister); }
  std::vector<std::string> kinds() const
  {
    std::vector<std::string> out;
    for (const auto& [k, v] : listers_)
      out.push_back(k);
    return out;
  }
  bool has(const std::string& kind) const { return listers_.count(kind) != 0; }
  /// Entries of a kind, in name order (empty for a kind no registry has).
  std::vector<RegistryEntry> entries(const std::string& kind) const
  {
    auto it = listers_.find(kind);
    return it == listers_.end() ? std::vector<RegistryEntry>{} : it->second();
  }
  std::vector<std::string> names(const std::string& kind) const
  {
    std::vector<std::string> out;
    for (const auto& e : entries(kind))
      out.push_back(e.name);
    return out;
  }
  /// "a (what a does), b (what b does)": the `valid:` part of a message.
  std::string describe(const std::string& kind) const
  {
    std::vector<std::string> parts;
    for (const auto& e : entries(kind))
      parts.push_back(e.description.empty() ? e.name : e.name + " (" + e.description + ")");
    return join(parts);
  }

private:
  std::map<std::string, Lister> listers_;
};

/// `Base` names its kind with `static constexpr const char* kRegistryKind`.
template <class Base> class Registry {
public:
  using Factory = std::function<std::unique_ptr<Base>()>;

  static Registry& instance()
  {
    static Registry r;
    return r;
  }
  /// Throws std::logic_error when `name` is taken (two files claiming one YAML name).
  void add(const std::string& name, const std::string& description, Factory f)
  {
    if (factories_.count(name))
      throw std::logic_error(std::string(Base::kRegistryKind) + " '" + name + "' registered twice");
    factories_[name] = Item{description, std::move(f)};
  }
  bool has(const std::string& name) const { return factories_.count(name) != 0; }
  std::vector<std::string> names() const
  {
    std::vector<std::string> out;
    for (const auto& [k, v] : factories_)
      out.push_back(k);
    return out;
  }
  std::vector<RegistryEntry> entries() const
  {
    std::vector<RegistryEntry> out;
    for (const auto& [k, v] : factories_)
      out.push_back({k, v.description});
    return out;
  }
  /// Throws std::invalid_argument: "unknown KIND 'x'; did you mean 'y'?" (callers that know a
  /// position rethrow it as a ConfigError with RegistryDirectory::describe as valid).
  std::unique_ptr<Base> make(const std::string& name) const
  {
    auto it = factories_.find(name);
    if (it == factories_.end())
      throw std::invalid_argument(unknown_name(Base::kRegistryKind, name, names()));
    return it->second.factory();
  }

  /// A shared instance of `name`, made once (for stateless entries asked often: a schedule's
  /// in-flight rule in the memory model); throws like make().
  const Base& shared(const std::string& name) const
  {
    auto it = shared_.find(name);
    if (it == shared_.end())
      it = shared_.emplace(name, make(name)).first;
    return *it->second;
  }

  struct Registrar {
    Registrar(const std::string& name, const std::string& description, Factory f)
    {
      Registry::instance().add(name, description, std::move(f));
    }
  };

private:
  Registry()
  {
    RegistryDirectory::instance().add(Base::kRegistryKind, [] { return Registry::instance().entries(); });
  }
  struct Item {
    std::string description;
    Factory factory;
  };
  std::map<std::string, Item> factories_;
  mutable std::map<std::string, std::unique_ptr<Base>> shared_;
};

} // namespace clustersim
