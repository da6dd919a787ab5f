#include "sim/Protocols.hpp"

#include "topology/config/Registry.hpp"
#include "topology/config/Suggest.hpp"

#include <algorithm>

namespace clustersim {

const std::vector<std::string>& protocol_names()
{
  static const std::vector<std::string> names{"ll", "ll128", "simple", "nvls"};
  return names;
}

ProtocolTable ProtocolTable::load(const std::string& path)
{
  ProtocolTable t;
  YamlNode root = YamlNode::load_file(path);
  YamlMap top(root, "collective constants");
  YamlNode transports = top.require("transports");
  if (auto algos = top.find("algorithms")) {
    // a key is a registered collective algorithm: a misspelt one would leave the real one at 1.0
    const std::string kind = "collective algorithm";
    const std::vector<std::string> known = RegistryDirectory::instance().names(kind);
    for (auto& [k, v] : algos->entries()) {
      if (std::find(known.begin(), known.end(), k.as_string()) == known.end())
        k.fail(unknown_name(kind, k.as_string(), known), join(known));
      YamlMap m(v, "algorithm '" + k.as_string() + "'");
      t.algorithm_factor_[k.as_string()] = m.require("bandwidth_factor").as_number(0.01, 1.0);
      m.finish();
    }
  }
  top.finish();
  for (auto& [k, v] : transports.entries()) {
    const std::string transport = k.as_string();
    YamlMap protocols(v, "transport '" + transport + "'");
    auto& entry = t.table_[transport];
    for (const auto& name : protocol_names()) {
      auto n = protocols.find(name);
      if (!n)
        continue;
      YamlMap m(*n, transport + "." + name);
      ProtocolConstants c;
      c.step_latency = m.require_quantity("step_latency", Quantity::time);
      c.efficiency = m.require("efficiency").as_number(0.01, 1.0);
      c.base_latency = m.require_quantity("base_latency", Quantity::time);
      m.finish();
      entry[name] = c;
    }
    protocols.finish();
    if (entry.empty())
      v.fail("transport '" + transport + "' defines no protocol", "one or more of ll, ll128, simple, nvls");
  }
  return t;
}

const ProtocolConstants* ProtocolTable::find(const std::string& transport, const std::string& protocol) const
{
  auto it = table_.find(transport);
  if (it == table_.end())
    return nullptr;
  auto p = it->second.find(protocol);
  return p == it->second.end() ? nullptr : &p->second;
}

double ProtocolTable::bandwidth_factor(const std::string& algorithm) const
{
  auto it = algorithm_factor_.find(algorithm);
  return it == algorithm_factor_.end() ? 1.0 : it->second;
}

std::vector<std::string> ProtocolTable::transports() const
{
  std::vector<std::string> out;
  for (const auto& [k, v] : table_)
    out.push_back(k);
  return out;
}

} // namespace clustersim
