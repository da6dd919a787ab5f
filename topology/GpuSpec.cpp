#include "GpuSpec.hpp"

#include "Suggest.hpp"

#include <stdexcept>

namespace clustersim {

const std::vector<std::string>& precision_names()
{
  static const std::vector<std::string> names{"fp32", "tf32", "fp16", "bf16", "fp8"};
  return names;
}

Precision parse_precision(const std::string& name)
{
  const auto& names = precision_names();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name)
      return static_cast<Precision>(i);
  throw std::invalid_argument(name);
}

const char* to_string(Precision p)
{
  return precision_names()[static_cast<std::size_t>(p)].c_str();
}

double element_bytes(Precision p)
{
  switch (p) {
  case Precision::fp32:
  case Precision::tf32:
    return 4;
  case Precision::fp16:
  case Precision::bf16:
    return 2;
  case Precision::fp8:
    return 1;
  }
  return 2;
}

double GpuSpec::peak(Precision p) const
{
  auto it = peak_flops.find(p);
  return it == peak_flops.end() ? 0.0 : it->second;
}

GpuCatalog GpuCatalog::load(const std::string& path)
{
  GpuCatalog catalog;
  YamlNode root = YamlNode::load_file(path);
  YamlMap top(root, "gpu catalog");
  YamlNode gpus = top.require("gpus");
  double k_overhead = 0;
  double launch_gap = 0;
  double sustained = 1;
  if (auto k = top.find("kernels")) {
    YamlMap km(*k, "kernels");
    k_overhead = km.require("gemm_k_overhead").as_number(0, 1e6);
    launch_gap = km.require_quantity("launch_gap", Quantity::time);
    sustained = km.require("sustained").as_number(0.1, 1.0);
    km.finish();
  }
  top.finish();
  for (auto& [key, value] : gpus.entries()) {
    GpuSpec g;
    g.id = key.as_string();
    YamlMap m(value, "gpu '" + g.id + "'");
    g.name = m.get_string("name", g.id);
    g.sms = static_cast<int>(m.require("sms").as_int(1, 100000));
    YamlMap peak(m.require("peak"), "peak of gpu '" + g.id + "'");
    for (const auto& p : precision_names()) {
      double v = peak.get_quantity(p, 0, Quantity::flop_rate);
      if (v > 0)
        g.peak_flops[parse_precision(p)] = v;
    }
    peak.finish();
    YamlMap hbm(m.require("memory"), "memory of gpu '" + g.id + "'");
    g.hbm_bytes = hbm.require_quantity("capacity", Quantity::bytes);
    g.hbm_bandwidth = hbm.require_quantity("bandwidth", Quantity::bandwidth);
    hbm.finish();
    if (auto nv = m.find("nvlink")) {
      YamlMap n(*nv, "nvlink of gpu '" + g.id + "'");
      double bw = n.require_quantity("bandwidth", Quantity::bandwidth);
      bool bidir = n.require("bidirectional").as_bool();
      g.nvlink_bandwidth = bidir ? bw / 2 : bw;
      n.finish();
    }
    g.tdp_watts = m.require_quantity("tdp", Quantity::power);
    YamlMap eff(m.require("efficiency"), "efficiency of gpu '" + g.id + "'");
    g.gemm_efficiency = eff.require("gemm").as_number(0.01, 1.0);
    g.hbm_efficiency = eff.require("hbm").as_number(0.01, 1.0);
    g.attention_efficiency = eff.require("attention").as_number(0.01, 1.0);
    eff.finish();
    m.finish();
    g.gemm_k_overhead = k_overhead;
    g.launch_gap = launch_gap;
    g.sustained = sustained;
    catalog.gpus_[g.id] = g;
  }
  return catalog;
}

const GpuSpec* GpuCatalog::find(const std::string& id) const
{
  auto it = gpus_.find(id);
  return it == gpus_.end() ? nullptr : &it->second;
}

const GpuSpec& GpuCatalog::get(const std::string& id, const SourceLocation& where) const
{
  if (const GpuSpec* g = find(id))
    return *g;
  throw ConfigError(where, unknown_name("gpu", id, ids()), join(ids()));
}

std::vector<std::string> GpuCatalog::ids() const
{
  std::vector<std::string> out;
  for (const auto& [k, v] : gpus_)
    out.push_back(k);
  return out;
}

} // namespace clustersim
