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

double GpuSpec::peak(Precision p) const
{
  auto it = peak_flops.find(p);
  return it == peak_flops.end() ? 0.0 : it->second;
}

const Section& gpu_catalog_section()
{
  using K = KeySpec;
  static const Section s{"gpus.yaml",
                         "the GPU catalog (platforms/gpus.yaml)",
                         {
                             K::section("kernels", "kernels", "kernel-level constants shared by every GPU"),
                             K::value("gpus", "a mapping of GPU id to its description (section gpu)").must(),
                         }};
  return s;
}

const Section& kernels_section()
{
  using K = KeySpec;
  static const Section s{
      "kernels",
      "kernel-level constants shared by every GPU (docs/calibration.md)",
      {
          K::number("gemm_k_overhead", 0, 0, 1e6, "GEMM efficiency falls as K/(K + this)").must(),
          K::quantity_of("launch_gap", Quantity::time, "", 0, 1e-3, "idle GPU time between two kernels of a stream")
              .must(),
          K::number("sustained", 1, 0.1, 1.0, "in-training / isolated-benchmark throughput of compute-bound kernels")
              .must(),
      }};
  return s;
}

const Section& gpu_section()
{
  using K = KeySpec;
  static const Section s{
      "gpu",
      "one GPU: peaks, memory, links, power and achievable efficiencies",
      {
          K::string("base", "", "a catalog GPU to start from; the other keys override its figures"),
          K::string("name", "", "vendor name").computed("the id"),
          K::integer("sms", 0, 1, 100000, "streaming multiprocessors (wave quantization of GEMM tiles)").must(),
          K::section("peak", "gpu.peak", "dense peak FLOP/s per precision").must(),
          K::section("memory", "gpu.memory", "HBM capacity and bandwidth").must(),
          K::section("nvlink", "gpu.nvlink", "NVLink bandwidth of the GPU (none: no NVLink)"),
          K::quantity_of("tdp", Quantity::power, "", 1, 1e5, "thermal design power of the board").must(),
          K::quantity_of("power_cap", Quantity::power, "", 1, 1e5, "board power limit it runs at")
              .computed("none: the GPU may draw its tdp"),
          K::section("efficiency", "gpu.efficiency", "achievable fractions of the peaks").must(),
      }};
  return s;
}

const Section& gpu_peak_section()
{
  static const Section s = [] {
    std::vector<KeySpec> keys;
    for (const auto& p : precision_names())
      keys.push_back(KeySpec::quantity_of(p, Quantity::flop_rate, "", 1e9, 1e17, "dense peak in " + p)
                         .computed("none: not supported"));
    return Section{"gpu.peak", "dense peak FLOP/s per precision (no 2:4 sparsity)", keys};
  }();
  return s;
}

const Section& gpu_memory_section()
{
  using K = KeySpec;
  static const Section s{"gpu.memory",
                         "HBM",
                         {
                             K::quantity_of("capacity", Quantity::bytes, "", 1e8, 1e14, "memory per GPU").must(),
                             K::quantity_of("bandwidth", Quantity::bandwidth, "", 1e9, 1e14, "peak bandwidth").must(),
                         }};
  return s;
}

const Section& gpu_nvlink_section()
{
  using K = KeySpec;
  static const Section s{"gpu.nvlink",
                         "the GPU's NVLink",
                         {
                             K::quantity_of("bandwidth", Quantity::bandwidth, "", 1e8, 1e14, "NVLink bandwidth").must(),
                             K::boolean("bidirectional", false, "the figure counts both directions (halved)").must(),
                         }};
  return s;
}

const Section& gpu_efficiency_section()
{
  using K = KeySpec;
  static const Section s{
      "gpu.efficiency",
      "achievable fractions, measured or published (sources in platforms/gpus.yaml)",
      {
          K::number("gemm", 0, 0.01, 1.0, "best-shape GEMM throughput / peak (MAMF)").must(),
          K::number("hbm", 0, 0.01, 1.0, "achievable / peak HBM bandwidth of streaming kernels").must(),
          K::number("attention", 0, 0.01, 1.0, "flash-attention throughput / peak").must(),
      }};
  return s;
}

namespace {

/// Required unless the GPU starts from a base (then every key overrides).
YamlNode need(SectionReader& r, const std::string& key, bool overriding, bool& present)
{
  present = overriding ? r.has(key) : true;
  return present ? r.require(key) : r.yaml();
}

} // namespace

GpuSpec read_gpu(const YamlNode& node, const std::string& id, const GpuSpec* base)
{
  const bool over = base != nullptr;
  GpuSpec g = over ? *base : GpuSpec{};
  g.id = id;
  SectionReader m(node, gpu_section(), "gpu '" + id + "'");
  m.find("base"); // resolved by the caller
  g.name = m.has("name") ? m.string("name") : over ? base->name + " (as overridden)" : id;
  if (!over || m.has("sms"))
    g.sms = static_cast<int>(m.integer("sms"));
  bool present = false;
  YamlNode peak_node = need(m, "peak", over, present);
  if (present) {
    SectionReader peak(peak_node, gpu_peak_section(), "peak of gpu '" + id + "'");
    for (const auto& p : precision_names())
      if (peak.has(p))
        g.peak_flops[parse_precision(p)] = peak.quantity(p);
    peak.finish();
  }
  YamlNode mem_node = need(m, "memory", over, present);
  if (present) {
    SectionReader hbm(mem_node, gpu_memory_section(), "memory of gpu '" + id + "'");
    if (!over || hbm.has("capacity"))
      g.hbm_bytes = hbm.quantity("capacity");
    if (!over || hbm.has("bandwidth"))
      g.hbm_bandwidth = hbm.quantity("bandwidth");
    hbm.finish();
  }
  if (auto nv = m.find("nvlink")) {
    SectionReader n(*nv, gpu_nvlink_section(), "nvlink of gpu '" + id + "'");
    double bw = n.quantity("bandwidth");
    bool bidir = n.require("bidirectional").as_bool();
    g.nvlink_bandwidth = bidir ? bw / 2 : bw;
    n.finish();
  }
  if (!over || m.has("tdp"))
    g.tdp_watts = m.quantity("tdp");
  if (m.has("power_cap"))
    g.power_cap_watts = m.quantity("power_cap");
  if (g.power_cap_watts > g.tdp_watts)
    m.require("power_cap").fail("power_cap " + format_quantity(g.power_cap_watts, Quantity::power) +
                                    " exceeds the tdp of " + format_quantity(g.tdp_watts, Quantity::power),
                                "a cap at or below the tdp");
  YamlNode eff_node = need(m, "efficiency", over, present);
  if (present) {
    SectionReader eff(eff_node, gpu_efficiency_section(), "efficiency of gpu '" + id + "'");
    if (!over || eff.has("gemm"))
      g.gemm_efficiency = eff.number("gemm");
    if (!over || eff.has("hbm"))
      g.hbm_efficiency = eff.number("hbm");
    if (!over || eff.has("attention"))
      g.attention_efficiency = eff.number("attention");
    eff.finish();
  }
  m.finish();
  if (g.peak_flops.empty())
    node.fail("gpu '" + id + "' has no peak FLOP/s", "peak: {bf16: 989TFLOPS, ...}");
  return g;
}

GpuCatalog GpuCatalog::load(const std::string& path)
{
  GpuCatalog catalog;
  YamlNode root = YamlNode::load_file(path);
  SectionReader top(root, gpu_catalog_section(), "gpu catalog");
  YamlNode gpus = top.require("gpus");
  double k_overhead = 0;
  double launch_gap = 0;
  double sustained = 1;
  if (auto k = top.find("kernels")) {
    SectionReader km(*k, kernels_section());
    k_overhead = km.number("gemm_k_overhead");
    launch_gap = km.quantity("launch_gap");
    sustained = km.number("sustained");
    km.finish();
  }
  top.finish();
  catalog.k_overhead_ = k_overhead;
  catalog.launch_gap_ = launch_gap;
  catalog.sustained_ = sustained;
  for (auto& [key, value] : gpus.entries()) {
    GpuSpec g = catalog.with_kernel_constants(read_gpu(value, key.as_string(), nullptr));
    catalog.gpus_[g.id] = g;
  }
  return catalog;
}

GpuSpec GpuCatalog::with_kernel_constants(GpuSpec g) const
{
  g.gemm_k_overhead = k_overhead_;
  g.launch_gap = launch_gap_;
  g.sustained = sustained_;
  return g;
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
