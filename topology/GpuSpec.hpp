#pragma once
/// One GPU model of the catalog (`platforms/gpus.yaml`): peak rates, memory, links, power,
/// and the achievable-efficiency constants the cost model prices operations with.
///
/// All figures are SI: FLOP/s, bytes, bytes/s, watts. Peaks are dense (no 2:4 sparsity).

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
/// Bytes of one element of activations/weights in that precision (fp8 training keeps
/// bf16 master copies; see the cost model for which tensors use which size).
double element_bytes(Precision p);

struct GpuSpec {
  std::string id;                         ///< catalog key, e.g. "a100-sxm4-80gb"
  std::string name;                       ///< vendor name
  int sms = 0;                            ///< streaming multiprocessors (wave quantization of GEMM tiles)
  std::map<Precision, double> peak_flops; ///< dense peak per precision, FLOP/s
  double hbm_bytes = 0;                   ///< memory capacity
  double hbm_bandwidth = 0;               ///< bytes/s, peak
  double nvlink_bandwidth = 0;            ///< bytes/s per direction (0 when the GPU has none)
  double tdp_watts = 0;

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
};

/// All GPUs of the catalog, keyed by id.
class GpuCatalog {
public:
  static GpuCatalog load(const std::string& path);
  const GpuSpec& get(const std::string& id, const SourceLocation& where) const;
  const GpuSpec* find(const std::string& id) const;
  std::vector<std::string> ids() const;

private:
  std::map<std::string, GpuSpec> gpus_;
};

} // namespace clustersim
