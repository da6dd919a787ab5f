#include "topology/GpuSpec.hpp"

#include "topology/config/Suggest.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace clustersim {

const std::vector<std::string>& precision_names()
{
  static const std::vector<std::string> names{"fp32", "tf32", "fp16", "bf16", "fp8", "fp4"};
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

Precision activation_precision(Precision p)
{
  return p == Precision::fp8 || p == Precision::fp4 ? Precision::bf16 : p;
}

double GpuSpec::peak(Precision p) const
{
  auto it = peak_flops.find(p);
  return it == peak_flops.end() ? 0.0 : it->second;
}

double GpuSpec::power_factor() const
{
  if (power_cap_watts <= 0 || tdp_watts <= 0 || power_cap_watts >= tdp_watts)
    return 1.0;
  return std::pow(power_cap_watts / tdp_watts, power_exponent);
}

const GemmMeasurement& GpuSpec::gemm_of(Precision p) const
{
  auto it = gemm.find(p);
  if (it != gemm.end())
    return it->second;
  for (Precision q : {Precision::bf16, Precision::fp16})
    if ((it = gemm.find(q)) != gemm.end())
      return it->second;
  if (gemm.empty())
    throw std::logic_error("gpu '" + id + "' has no GEMM measurement");
  return gemm.begin()->second;
}

double GpuSpec::gemm_shape_factor(double m, double n, double k, double batch, double sms_taken) const
{
  // cuBLAS-like choice among CTA tiles: the one that wastes least of the last wave, with a
  // small discount for the less data-reusing 128x128 tile. With fewer tiles than SMs the K
  // dimension is split (split-K / stream-K) so that every SM gets a slice; each slice is then a
  // shorter main loop. Only the SMs other kernels leave are used.
  struct Tile {
    double tm, tn, quality;
  };
  static const Tile tiles[] = {{256, 128, 1.0}, {128, 256, 1.0}, {128, 128, 0.95}};
  const double free = std::max(1.0, std::floor(sms - sms_taken));
  double best = 0;
  for (const auto& t : tiles) {
    const double count = std::ceil(m / t.tm) * std::ceil(n / t.tn) * batch;
    const double split = count < free ? std::max(1.0, std::min(std::floor(free / count), std::floor(k / 512))) : 1.0;
    const double waves = std::ceil(count * split / free);
    const double util = (m * n * batch * split) / (waves * sms * t.tm * t.tn);
    // a short K leaves the mainloop's prologue and epilogue unamortized
    const double slice = k / split;
    best = std::max(best, t.quality * util * slice / (slice + gemm_k_overhead));
  }
  return best;
}

void GpuSpec::derive()
{
  for (auto& [p, g] : gemm)
    g.ceiling = g.m > 0 ? g.fraction / gemm_shape_factor(g.m, g.n, g.k) : g.fraction;
}

const std::vector<std::string>& host_cpu_names()
{
  static const std::vector<std::string> names{"x86", "grace"};
  return names;
}

const std::vector<std::string>& attention_backends()
{
  static const std::vector<std::string> names{"cudnn", "fa1", "fa2", "fa3"};
  return names;
}

const AttentionCurve* GpuSpec::attention_curve(const std::vector<std::string>& preferred, std::string* backend) const
{
  for (const auto& b : preferred) {
    auto it = attention.find(b);
    if (it != attention.end()) {
      if (backend)
        *backend = b;
      return it->second.get();
    }
  }
  return nullptr;
}

namespace {

/// Linear interpolation of y over x (sorted), clamped at the ends.
double interpolate(const std::vector<std::pair<double, double>>& xy, double x)
{
  if (xy.empty())
    return 0;
  if (x <= xy.front().first)
    return xy.front().second;
  for (std::size_t i = 1; i < xy.size(); ++i)
    if (x <= xy[i].first) {
      const auto& [x0, y0] = xy[i - 1];
      const auto& [x1, y1] = xy[i];
      return x1 == x0 ? y1 : y0 + (y1 - y0) * (x - x0) / (x1 - x0);
    }
  return xy.back().second;
}

} // namespace

AttentionCurve::Rate AttentionCurve::at(double head_dim, bool causal, double seq) const
{
  // the head dims measured for this masking, each with its curve over log2(seq)
  std::map<double, std::vector<const Point*>> by_dim;
  for (const auto& p : points)
    if (p.causal == causal)
      by_dim[p.head_dim].push_back(&p);
  auto along_seq = [&](const std::vector<const Point*>& pts) {
    std::vector<std::pair<double, double>> f, b;
    for (const Point* p : pts) {
      f.emplace_back(std::log2(p->seq), p->forward);
      b.emplace_back(std::log2(p->seq), p->backward);
    }
    std::sort(f.begin(), f.end());
    std::sort(b.begin(), b.end());
    const double x = std::log2(std::max(seq, 1.0));
    return Rate{interpolate(f, x), interpolate(b, x)};
  };
  std::vector<std::pair<double, double>> fwd, bwd;
  for (const auto& [d, pts] : by_dim) {
    Rate r = along_seq(pts);
    fwd.emplace_back(d, r.forward);
    bwd.emplace_back(d, r.backward);
  }
  return Rate{interpolate(fwd, head_dim), interpolate(bwd, head_dim)};
}

const Section& gpu_catalog_section()
{
  using K = KeySpec;
  static const Section s{"gpus.yaml",
                         "the GPU catalog (platforms/gpus.yaml)",
                         {
                             K::section("kernels", "kernels", "kernel-level constants shared by every GPU"),
                             K::value("attention_kernels",
                                      "published flash-attention curves: name to section attention_curve"),
                             K::value("host_cpus", "the CPU classes that issue kernels (x86, grace): name to "
                                                   "section host_cpu")
                                 .computed("none: issuing kernels costs the host nothing"),
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
          K::number("power_exponent", 0, 0, 3,
                    "compute-bound throughput under a power cap scales as (power_cap / tdp)^this"),
      }};
  return s;
}

const Section& gpu_kernels_section()
{
  static const Section s = [] {
    Section k = kernels_section();
    k.name = "gpu.kernels";
    k.doc = "this GPU's own kernel constants, each overriding the catalog's kernels: (state its source beside it)";
    for (KeySpec& key : k.keys)
      key.required = false;
    return k;
  }();
  return s;
}

namespace {

/// Sets one kernel constant of `g` by its key in kernels_section().
void set_kernel_constant(GpuSpec& g, const std::string& key, double v)
{
  if (key == "gemm_k_overhead")
    g.gemm_k_overhead = v;
  else if (key == "launch_gap")
    g.launch_gap = v;
  else if (key == "sustained")
    g.sustained = v;
  else if (key == "power_exponent")
    g.power_exponent = v;
  else
    throw std::logic_error("no kernel constant '" + key + "'");
}

/// The kernel constants a `kernels:` section writes (the catalog's or a GPU's), by key.
std::map<std::string, double> read_kernel_constants(const YamlNode& node, const Section& section,
                                                    const std::string& what)
{
  SectionReader km(node, section, what);
  std::map<std::string, double> out;
  for (const KeySpec& key : section.keys)
    if (km.has(key.key) || key.required)
      out[key.key] = key.type == KeyType::quantity ? km.quantity(key.key) : km.number(key.key);
  km.finish();
  return out;
}

} // namespace

const Section& gpu_section()
{
  using K = KeySpec;
  static const Section s{
      "gpu",
      "one GPU: peaks, memory, links, power and achievable efficiencies",
      {
          K::string("base", "", "a catalog GPU to start from; the other keys override its figures"),
          K::string("name", "", "vendor name").computed("the id"),
          K::integer("sms", 0, 1, 100000, "streaming multiprocessors (wave quantization of GEMM tiles); over a base without peak:, "
                     "the base's peak scales with them")
              .must(),
          K::section("peak", "gpu.peak", "dense peak FLOP/s per precision").must(),
          K::section("memory", "gpu.memory", "HBM capacity and bandwidth").must(),
          K::section("nvlink", "gpu.nvlink", "NVLink bandwidth of the GPU (none: no NVLink)"),
          K::quantity_of("tdp", Quantity::power, "", 1, 1e5, "thermal design power of the board").must(),
          K::quantity_of("power_cap", Quantity::power, "", 1, 1e5, "board power limit it runs at")
              .computed("none: the GPU may draw its tdp"),
          K::section("efficiency", "gpu.efficiency", "achievable fractions of the peaks").must(),
          K::value("attention", "flash-attention backends (cudnn, fa1, fa2, fa3) to the name of a published curve "
                                "(attention_kernels of platforms/gpus.yaml)"),
          K::choice("host_cpu", "x86", host_cpu_names(),
                    "the CPU class hosting it (x86 servers; grace for the Grace superchips); a platform's node.cpu "
                    "overrides it"),
          K::section("kernels", "gpu.kernels",
                     "its own kernel constants (sustained clock under load, launch gap, ...) in place of the catalog's"),
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
          K::value("gemm", "the GEMM ceiling: a fraction of the peak for every precision, or per precision a "
                           "fraction or section gpu.gemm (a MAMF measurement)")
              .must(),
          K::number("hbm", 0, 0.01, 1.0, "achievable / peak HBM bandwidth of streaming kernels").must(),
          K::number("attention", 0, 0.01, 1.0, "flash-attention throughput / 16-bit peak, flat")
              .computed("none: the curves of gpu.attention"),
      }};
  return s;
}

const Section& gpu_gemm_section()
{
  using K = KeySpec;
  static const Section s{
      "gpu.gemm",
      "a maximum achievable matmul FLOPS measurement (experiments/validation/gemm_mamf.yaml)",
      {
          K::quantity_of("mamf", Quantity::flop_rate, "", 1e9, 1e17, "the measured maximum").must(),
          K::string("shape", "", "its best shape, MxNxK").must(),
          K::quantity_of("shapes_median", Quantity::flop_rate, "", 1e9, 1e17,
                         "the median of a training stack's own GEMMs measured shape by shape; caps every shape")
              .computed("none: the MAMF alone"),
      }};
  return s;
}

const Section& attention_curve_section()
{
  using K = KeySpec;
  static const Section s{
      "attention_curve",
      "a published flash-attention throughput curve",
      {
          K::string("doc", "", "kernel, GPU, source and how the numbers were read"),
          K::quantity_of("peak", Quantity::flop_rate, "", 1e9, 1e17,
                         "dense 16-bit peak of the GPU measured (the curve applies to others as fractions of it)")
              .must(),
          K::list("points", "measurements: section attention_point each")
              .computed("those of `of`, scaled"),
          K::string("of", "", "a curve defined above this one whose points this one scales (a kernel published "
                              "only as a ratio to another)"),
          K::number("scale", 1, 0.01, 1, "with `of`: this kernel's throughput over that one's")
              .counts("ratio"),
      }};
  return s;
}

const Section& host_cpu_section()
{
  using K = KeySpec;
  static const Section s{
      "host_cpu",
      "what a CPU class spends issuing kernels (one framework thread per GPU)",
      {
          K::string("doc", "", "the CPUs of the class and the sources"),
          K::quantity_of("op", Quantity::time, "", 1e-7, 1e-2,
                         "host time of one kernel launched from an eager framework op (PyTorch dispatch, autograd)")
              .must(),
          K::quantity_of("launch", Quantity::time, "", 1e-7, 1e-2, "one raw CUDA launch (a CUDA graph's replay)").must(),
      }};
  return s;
}

const Section& attention_point_section()
{
  using K = KeySpec;
  static const Section s{
      "attention_point",
      "one measurement: executed TFLOP/s (causal counts half the s x s work)",
      {
          K::integer("head_dim", 0, 8, 1024, "head dimension").must(),
          K::boolean("causal", false, "causal mask").must(),
          K::integer("seq", 0, 16, 1 << 24, "sequence length").counts("tokens").must(),
          K::number("forward", 0, 1, 1e5, "forward TFLOP/s").must(),
          K::number("backward", 0, 1, 1e5, "backward TFLOP/s").must(),
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


/// "2048x2048x13312" → m, n, k.
void read_shape(const YamlNode& n, GemmMeasurement& g)
{
  const std::string text = n.as_string();
  double v[3] = {0, 0, 0};
  std::size_t pos = 0;
  for (int i = 0; i < 3; ++i) {
    std::size_t used = 0;
    try {
      v[i] = std::stod(text.substr(pos), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    pos += used;
    bool sep_ok = i < 2 ? pos < text.size() && text[pos] == 'x' : pos == text.size();
    if (used == 0 || !sep_ok || v[i] < 1 || v[i] > 1e7)
      n.fail("'" + text + "' is not a GEMM shape", "MxNxK, three sizes from 1 to 1e7, e.g. 2048x2048x13312");
    ++pos;
  }
  g.m = v[0];
  g.n = v[1];
  g.k = v[2];
}

void read_gemm(const YamlNode& n, GpuSpec& g)
{
  if (g.peak_flops.empty())
    n.fail("efficiency.gemm before any peak", "peak: {bf16: ...} first");
  if (n.is_scalar()) {
    double f = n.as_number(0.01, 1.0);
    for (const auto& [p, peak] : g.peak_flops)
      g.gemm[p] = GemmMeasurement{f, 0, 0, 0, f, 0};
    return;
  }
  if (!n.is_map())
    n.fail("efficiency.gemm must be a fraction or a mapping of precisions",
           "0.85, or {bf16: {mamf: 794.5TFLOPS, shape: 2048x2048x13312}, fp8: 0.7}");
  for (auto& [key, value] : n.entries()) {
    Precision p = parse_precision(key.as_choice(precision_names(), "precision"));
    if (!g.supports(p))
      key.fail("gpu '" + g.id + "' has no " + key.as_string() + " peak", "a precision of its peak section");
    GemmMeasurement m;
    if (value.is_scalar()) {
      m.fraction = value.as_number(0.01, 1.0);
    } else {
      SectionReader r(value, gpu_gemm_section());
      YamlNode mamf = r.require("mamf");
      m.fraction = r.quantity("mamf") / g.peak(p);
      if (m.fraction > 1.0)
        mamf.fail("a MAMF above the " + key.as_string() + " peak of " + format_quantity(g.peak(p), Quantity::flop_rate),
                  "a measurement at or below the peak");
      read_shape(r.require("shape"), m);
      if (auto median = r.find("shapes_median")) {
        m.shapes_median = r.quantity("shapes_median") / g.peak(p);
        if (m.shapes_median > m.fraction)
          median->fail("shapes_median " + format_quantity(m.shapes_median * g.peak(p), Quantity::flop_rate) +
                           " above the MAMF of " + format_quantity(m.fraction * g.peak(p), Quantity::flop_rate),
                       "a median at or below the best shape's rate");
      }
      r.finish();
    }
    m.ceiling = m.fraction;
    g.gemm[p] = m;
  }
}

void read_attention(const YamlNode& n, GpuSpec& g, const std::map<std::string, std::shared_ptr<const AttentionCurve>>& curves)
{
  if (!n.is_map())
    n.fail("attention must map backends to curves", "{cudnn: cudnn-hopper, fa2: fa2-hopper}");
  std::vector<std::string> names;
  for (const auto& [k, v] : curves)
    names.push_back(k);
  for (auto& [key, value] : n.entries()) {
    std::string backend = key.as_choice(attention_backends(), "attention backend");
    std::string curve = value.as_choice(names, "attention curve");
    g.attention[backend] = curves.at(curve);
  }
}

std::shared_ptr<const AttentionCurve> read_curve(const std::string& name, const YamlNode& n,
                                                const std::map<std::string, std::shared_ptr<const AttentionCurve>>& above)
{
  auto c = std::make_shared<AttentionCurve>();
  c->name = name;
  SectionReader r(n, attention_curve_section(), "attention curve '" + name + "'");
  c->doc = r.string("doc");
  const double peak = r.quantity("peak") / 1e12;
  if (auto of = r.find("of")) {
    // a derived curve: another's points (as fractions of its peak) at `scale` of its throughput
    if (r.has("points"))
      r.require("points").fail("a curve with `of` takes its points from that curve", "either points or of + scale");
    std::vector<std::string> names;
    for (const auto& [k, v] : above)
      names.push_back(k);
    const std::string base = of->as_choice(names, "attention curve defined above");
    const double scale = r.number("scale");
    for (AttentionCurve::Point p : above.at(base)->points) {
      p.forward *= scale;
      p.backward *= scale;
      c->points.push_back(p);
    }
    r.finish();
    return c;
  }
  if (r.has("scale"))
    r.require("scale").fail("scale without of", "scale only with of: CURVE");
  YamlNode list = r.require("points");
  for (const auto& item : list.items()) {
    SectionReader pr(item, attention_point_section());
    AttentionCurve::Point p;
    p.head_dim = static_cast<double>(pr.integer("head_dim"));
    p.causal = pr.boolean("causal");
    p.seq = static_cast<double>(pr.integer("seq"));
    YamlNode fw = pr.require("forward");
    p.forward = pr.number("forward") / peak;
    p.backward = pr.number("backward") / peak;
    if (p.forward > 1.0 || p.backward > 1.0)
      fw.fail("a throughput above the curve's peak", "TFLOP/s at or below peak");
    pr.finish();
    c->points.push_back(p);
  }
  for (bool causal : {false, true})
    if (std::none_of(c->points.begin(), c->points.end(), [&](const auto& p) { return p.causal == causal; }))
      list.fail("attention curve '" + name + "' has no " + (causal ? "causal" : "non-causal") + " point",
                "points with causal: true and causal: false");
  r.finish();
  return c;
}

} // namespace

GpuSpec read_gpu(const YamlNode& node, const std::string& id, const GpuSpec* base,
                 const std::map<std::string, std::shared_ptr<const AttentionCurve>>& curves)
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
    bool any = false;
    for (const auto& p : precision_names())
      if (peak.has(p)) {
        g.peak_flops[parse_precision(p)] = peak.quantity(p);
        any = true;
      }
    peak.finish();
    if (!any) // said where it is written, not as a later check on the precisions' order
      peak_node.fail("peak of gpu '" + id + "' names no precision", "peak: {bf16: 989TFLOPS, fp8: 1979TFLOPS, ...}");
  } else if (over && g.sms != base->sms) {
    // the tensor cores are in the SMs: fewer SMs of the same design at the same clock are that
    // much less peak (16 of an A100's 108 SMs ran faster than 108 when the peak stayed)
    for (auto& [p, flops] : g.peak_flops)
      flops *= static_cast<double>(g.sms) / base->sms;
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
    if (auto gm = eff.find("gemm"))
      read_gemm(*gm, g);
    else if (!over)
      eff.require("gemm");
    if (!over || eff.has("hbm"))
      g.hbm_efficiency = eff.number("hbm");
    if (eff.has("attention"))
      g.attention_efficiency = eff.number("attention");
    eff.finish();
  }
  if (auto a = m.find("attention"))
    read_attention(*a, g, curves);
  if (auto k = m.find("kernels")) {
    g.own_kernels = read_kernel_constants(*k, gpu_kernels_section(), "kernels of gpu '" + id + "'");
    for (const auto& [key, v] : g.own_kernels)
      set_kernel_constant(g, key, v);
  }
  if (!over || m.has("host_cpu"))
    g.host.name = m.choice("host_cpu");
  if (g.attention.empty() && g.attention_efficiency <= 0)
    (m.has("attention") ? m.require("attention") : node)
        .fail("gpu '" + id + "' has neither attention curves nor efficiency.attention",
              "attention: {fa2: CURVE, ...} with a curve of attention_kernels, or efficiency.attention: FRACTION");
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
  if (auto k = top.find("kernels"))
    catalog.kernels_ = read_kernel_constants(*k, kernels_section(), "kernels");
  if (auto a = top.find("attention_kernels")) {
    if (!a->is_map())
      a->fail("attention_kernels must map curve names to curves", "NAME: {doc: ..., peak: ..., points: [...]}");
    for (auto& [key, value] : a->entries())
      catalog.curves_[key.as_string()] = read_curve(key.as_string(), value, catalog.curves_);
  }
  for (const auto& name : host_cpu_names())
    catalog.host_cpus_[name].name = name; // free unless described
  if (auto found = top.find("host_cpus")) {
    const YamlNode& cpus = *found;
    if (!cpus.is_map())
      cpus.fail("host_cpus must map CPU classes to their costs", "x86: {op: ..., launch: ...}, grace: {...}");
    std::vector<std::string> described;
    for (auto& [key, value] : cpus.entries()) {
      HostCpu h;
      h.name = key.as_choice(host_cpu_names(), "host CPU class");
      SectionReader r(value, host_cpu_section(), "host cpu '" + h.name + "'");
      r.string("doc");
      h.op = r.quantity("op");
      h.launch = r.quantity("launch");
      r.finish();
      catalog.host_cpus_[h.name] = h;
      described.push_back(h.name);
    }
    for (const auto& name : host_cpu_names())
      if (std::find(described.begin(), described.end(), name) == described.end())
        cpus.fail("host CPU class '" + name + "' is not described", "an entry for every class: x86, grace");
  }
  top.finish();
  for (auto& [key, value] : gpus.entries("the GPU catalog")) {
    GpuSpec g = catalog.with_kernel_constants(read_gpu(value, key.as_string(), nullptr, catalog.curves_));
    catalog.gpus_[g.id] = g;
  }
  return catalog;
}

GpuSpec GpuCatalog::with_kernel_constants(GpuSpec g) const
{
  for (const auto& [key, v] : kernels_)
    set_kernel_constant(g, key, v);
  for (const auto& [key, v] : g.own_kernels) // the GPU's own, in place of the catalog's
    set_kernel_constant(g, key, v);
  g.host = host_cpus_.at(g.host.name);
  g.derive();
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
  // a family name as users type it: the one id that starts with it (h100 -> h100-sxm5-80gb)
  std::vector<std::string> family;
  for (const auto& [k, v] : gpus_)
    if (k.size() > id.size() && k.compare(0, id.size(), id) == 0 && k[id.size()] == '-')
      family.push_back(k);
  if (family.size() == 1)
    return gpus_.at(family.front());
  if (family.size() > 1)
    throw ConfigError(where, "gpu '" + id + "' names " + std::to_string(family.size()) + " GPUs of the catalog",
                      join(family));
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
