#pragma once
/// One GPU model of the catalog (`platforms/gpus.yaml`): peak rates, memory, links, power,
/// and the achievable-efficiency constants the cost model prices operations with.
///
/// All figures are SI: FLOP/s, bytes, bytes/s, watts. Peaks are dense (no 2:4 sparsity).

#include "Schema.hpp"
#include "Yaml.hpp"

#include <map>
#include <string>
#include <vector>

namespace clustersim {

/// Numeric formats a GPU can compute in; `peak_flops` is 0 where unsupported.
enum class Precision { fp32, tf32, fp16, bf16, fp8 };

const std::vector<std::string>& precision_names();
Precision parse_precision(const std::string& name); ///< throws std::invalid_argument
const char* to_string(Precision p);

struct GpuSpec {
  std::string id;                         ///< catalog key, e.g. "a100-sxm4-80gb"
  std::string name;                       ///< vendor name
  int sms = 0;                            ///< streaming multiprocessors (wave quantization of GEMM tiles)
  std::map<Precision, double> peak_flops; ///< dense peak per precision, FLOP/s
  double hbm_bytes = 0;                   ///< memory capacity
  double hbm_bandwidth = 0;               ///< bytes/s, peak
  double nvlink_bandwidth = 0;            ///< bytes/s per direction (0 when the GPU has none)
  double tdp_watts = 0;
  double power_cap_watts = 0; ///< board power limit the GPUs run at; 0: none (they may draw tdp)

  // Achievable fractions, measured or published; see platforms/gpus.yaml for sources.
  double gemm_efficiency = 0;      ///< best-shape GEMM throughput / peak (MAMF)
  double hbm_efficiency = 0;       ///< achievable / peak HBM bandwidth for streaming kernels
  double attention_efficiency = 0; ///< flash-attention kernel throughput / peak

  // Kernel-level constants shared by every GPU of the catalog (`kernels:` in gpus.yaml).
  double gemm_k_overhead = 0; ///< GEMM efficiency falls as K/(K + this): mainloop prologue and epilogue
  double launch_gap = 0;      ///< s of idle GPU between two kernels of a stream (launch, no CUDA graphs)
  double sustained = 1;       ///< sustained in-training / isolated-benchmark throughput of compute-bound kernels

  double peak(Precision p) const; ///< 0 when unsupported
  bool supports(Precision p) const { return peak(p) > 0; }
  /// Board power drawn under training load: the cap where one is set, else the TDP.
  double board_watts() const { return power_cap_watts > 0 ? power_cap_watts : tdp_watts; }
};

/// The keys of the GPU catalog file and of one GPU.
const Section& gpu_catalog_section();
const Section& kernels_section();
const Section& gpu_section();
const Section& gpu_peak_section();
const Section& gpu_memory_section();
const Section& gpu_nvlink_section();
const Section& gpu_efficiency_section();

/// Reads one GPU description. With `base`, every key is optional and overrides the base's
/// figure (a catalog GPU with, say, more memory or a power cap); without, the keys the table
/// marks required must be there. The kernel-level constants are taken from `base` or, for a
/// GPU of the catalog file, set by the catalog.
GpuSpec read_gpu(const YamlNode& node, const std::string& id, const GpuSpec* base);

/// All GPUs of the catalog, keyed by id.
class GpuCatalog {
public:
  static GpuCatalog load(const std::string& path);
  const GpuSpec& get(const std::string& id, const SourceLocation& where) const;
  const GpuSpec* find(const std::string& id) const;
  std::vector<std::string> ids() const;
  /// A GPU described outside the catalog (a platform file's inline GPU), given the catalog's
  /// kernel-level constants.
  GpuSpec with_kernel_constants(GpuSpec g) const;

private:
  std::map<std::string, GpuSpec> gpus_;
  double k_overhead_ = 0;
  double launch_gap_ = 0;
  double sustained_ = 1;
};

} // namespace clustersim
