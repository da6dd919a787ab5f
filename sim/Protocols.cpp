#include "Protocols.hpp"

namespace clustersim {

ProtocolTable ProtocolTable::load(const std::string& path)
{
  ProtocolTable t;
  YamlNode root = YamlNode::load_file(path);
  YamlMap top(root, "collective constants");
  YamlNode transports = top.require("transports");
  top.finish();
  for (auto& [k, v] : transports.entries()) {
    YamlMap m(v, "transport '" + k.as_string() + "'");
    TransportConstants c;
    c.step_latency = m.require_quantity("step_latency", Quantity::time);
    c.efficiency = m.require("efficiency").as_number(0.01, 1.0);
    c.base_latency = m.require_quantity("base_latency", Quantity::time);
    m.finish();
    t.transports_[k.as_string()] = c;
  }
  return t;
}

const TransportConstants* ProtocolTable::find(const std::string& transport) const
{
  auto it = transports_.find(transport);
  return it == transports_.end() ? nullptr : &it->second;
}

std::vector<std::string> ProtocolTable::names() const
{
  std::vector<std::string> out;
  for (const auto& [k, v] : transports_)
    out.push_back(k);
  return out;
}

} // namespace clustersim
