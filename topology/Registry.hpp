#pragma once
/// A name → factory registry. Strategies and schedules register themselves from their own
/// file (static registrars in an OBJECT library, so the linker keeps them); an unknown name
/// lists the valid ones, with the nearest suggested.

#include "Suggest.hpp"

#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace clustersim {

template <class Base> class Registry {
public:
  using Factory = std::function<std::unique_ptr<Base>()>;

  static Registry& instance()
  {
    static Registry r;
    return r;
  }
  void add(const std::string& name, Factory f) { factories_[name] = std::move(f); }
  bool has(const std::string& name) const { return factories_.count(name) != 0; }
  std::vector<std::string> names() const
  {
    std::vector<std::string> out;
    for (const auto& [k, v] : factories_)
      out.push_back(k);
    return out;
  }
  /// Throws std::invalid_argument with "unknown KIND 'x'; did you mean 'y'?" and, through
  /// valid(), the list; callers add the position.
  std::unique_ptr<Base> make(const std::string& name, const std::string& kind) const
  {
    auto it = factories_.find(name);
    if (it == factories_.end())
      throw std::invalid_argument(unknown_name(kind, name, names()));
    return it->second();
  }

  struct Registrar {
    Registrar(const std::string& name, Factory f) { Registry::instance().add(name, std::move(f)); }
  };

private:
  std::map<std::string, Factory> factories_;
};

} // namespace clustersim
