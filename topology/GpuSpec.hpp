#pragma once
/// One GPU model of the catalog (`platforms/gpus.yaml`): peak rates, memory, links, power,
/// and the achievable-efficiency constants the cost model prices operations with.
///
/// All figures are SI: FLOP/s, bytes, bytes/s, watts. Peaks are dense (no 2:4 sparsity).

#include "topology/config/Schema.hpp"
#include "topology/config/Yaml.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace clustersim {

/// Numeric formats a GPU can compute in; `peak_flops` is 0 where unsupported.
enum class Precision { fp32, tf32, fp16, bf16, fp8, fp4 };

const std::vector<std::string>& precision_names();
Precision parse_precision(const std::string& name); ///< throws std::invalid_argument
const char* to_string(Precision p);
/// The format a step computes in outside its linear layers: BF16 under an FP8 or FP4 recipe
/// (which casts only the linears' operands), else the precision itself.
Precision activation_precision(Precision p);

/// The measured maximum achievable matmul throughput of one precision (MAMF,
/// `experiments/validation/gemm_mamf.yaml`) and the ceiling the GEMM roofline derives from it.
/// Where the GEMMs of a training stack were also measured shape by shape through its own GEMM
/// call, their median caps every shape: a best-shape search can find a rate the stack's
/// kernels do not reach on the shapes training runs.
struct GemmMeasurement {
  double fraction = 0;          ///< MAMF / peak: no GEMM shape runs faster (in isolation)
  double m = 0, n = 0, k = 0;   ///< the best shape of the search; 0: an assumed fraction, no shape
  double ceiling = 0;           ///< fraction / the model's shape factor at the best shape (GpuSpec::derive)
  double shapes_median = 0;     ///< median over a stack's training shapes / peak; 0: not measured

  /// The most any shape reaches in isolation: the MAMF, or the training shapes' median below it.
  double limit() const { return shapes_median > 0 ? std::min(fraction, shapes_median) : fraction; }
};

/// Published flash-attention throughput by shape: forward and backward, as fractions of the
/// dense 16-bit peak of the GPU it was measured on, at (head dim, causal, sequence length).
/// The flash-attention backends a framework may call and a GPU may have a curve for: cuDNN's
/// fused attention, FlashAttention-1 (and its Triton port), -2 and -3.
const std::vector<std::string>& attention_backends();

struct AttentionCurve {
  struct Point {
    double head_dim = 0;
    bool causal = false;
    double seq = 0;
    double forward = 0;
    double backward = 0;
  };
  struct Rate {
    double forward = 0;
    double backward = 0;
  };
  std::string name;
  std::string doc;
  std::vector<Point> points;
  /// Interpolated: linearly in head dim between the dims measured, linearly in log2(seq)
  /// between the lengths measured, clamped at the ends.
  Rate at(double head_dim, bool causal, double seq) const;
};

/// The CPU class that issues a GPU's kernels (x86 servers, NVIDIA Grace): what issuing one
/// kernel costs the framework's host thread (`host_cpus:` of platforms/gpus.yaml).
struct HostCpu {
  std::string name = "x86";
  double op = 0;     ///< s of host time per kernel launched from a framework op, eager
  double launch = 0; ///< s per raw launch (one CUDA graph replay)
};
const std::vector<std::string>& host_cpu_names();

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

  // Achievable throughputs, measured or published; see platforms/gpus.yaml for sources.
  std::map<Precision, GemmMeasurement> gemm; ///< MAMF per precision (16-bit and fp8 measured)
  double hbm_efficiency = 0;                 ///< achievable / peak HBM bandwidth for streaming kernels
  /// Flash-attention backends (cudnn, fa2, fa3) and their published curves.
  std::map<std::string, std::shared_ptr<const AttentionCurve>> attention;
  double attention_efficiency = 0; ///< flat fraction of the 16-bit peak where no curve is given; 0: none
  /// The CPU that issues its kernels: the GPU's usual host (`host_cpu`), or the platform's node.cpu.
  HostCpu host;

  // Kernel-level constants shared by every GPU of the catalog (`kernels:` in gpus.yaml).
  double gemm_k_overhead = 0; ///< GEMM efficiency falls as K/(K + this): mainloop prologue and epilogue
  double launch_gap = 0;      ///< s of idle GPU between two kernels of a stream (launch, no CUDA graphs)
  double sustained = 1;       ///< sustained in-training / isolated-benchmark throughput of compute-bound kernels
  double power_exponent = 0;  ///< compute-bound throughput scales as (power_cap / tdp)^this
  /// The kernel constants this GPU states itself (`kernels:` of its description), by key: they
  /// override the catalog's (a GPU that runs below its peak clock under load says so).
  std::map<std::string, double> own_kernels;

  double peak(Precision p) const; ///< 0 when unsupported
  bool supports(Precision p) const { return peak(p) > 0; }
  /// Board power drawn under training load: the cap where one is set, else the TDP.
  double board_watts() const { return power_cap_watts > 0 ? power_cap_watts : tdp_watts; }
  /// Throughput of compute-bound kernels under the power cap relative to the TDP (1 uncapped).
  double power_factor() const;
  /// The GEMM measurement of a precision: its own, else fp16/bf16's (same tensor-core path), else
  /// the 16-bit one (an assumption the catalog states).
  const GemmMeasurement& gemm_of(Precision p) const;
  /// Tile/wave quantization over the SMs times the K/(K + gemm_k_overhead) main-loop factor:
  /// what the shape of a GEMM costs relative to the ceiling.
  /// `sms_taken`: SMs other kernels hold while it runs (overlapped communication).
  double gemm_shape_factor(double m, double n, double k, double batch = 1, double sms_taken = 0) const;
  /// Sets each measurement's ceiling from its best shape (after the kernel constants are known).
  void derive();
  /// The curve of the first backend in `preferred` this GPU has, else null.
  const AttentionCurve* attention_curve(const std::vector<std::string>& preferred, std::string* backend = nullptr) const;
};

/// The keys of the GPU catalog file and of one GPU.
const Section& gpu_catalog_section();
const Section& kernels_section();
/// The same keys for one GPU (`gpu.kernels`), each optional.
const Section& gpu_kernels_section();
const Section& gpu_section();
const Section& gpu_peak_section();
const Section& gpu_memory_section();
const Section& gpu_nvlink_section();
const Section& gpu_efficiency_section();
const Section& gpu_gemm_section();
const Section& attention_curve_section();
const Section& host_cpu_section();
const Section& attention_point_section();

/// Reads one GPU description. With `base`, every key is optional and overrides the base's
/// figure (a catalog GPU with, say, more memory or a power cap); without, the keys the table
/// marks required must be there. The kernel-level constants are taken from `base` or, for a
/// GPU of the catalog file, set by the catalog.
/// `curves` resolves the names of `attention:` (the catalog's attention_kernels).
GpuSpec read_gpu(const YamlNode& node, const std::string& id, const GpuSpec* base,
                 const std::map<std::string, std::shared_ptr<const AttentionCurve>>& curves);

/// All GPUs of the catalog, keyed by id.
class GpuCatalog {
public:
  static GpuCatalog load(const std::string& path);
  /// A GPU by id, or by the family name that begins exactly one id (h100 -> h100-sxm5-80gb);
  /// ConfigError at `where` otherwise (an ambiguous family lists its GPUs).
  const GpuSpec& get(const std::string& id, const SourceLocation& where) const;
  const GpuSpec* find(const std::string& id) const;
  std::vector<std::string> ids() const;
  /// A GPU described outside the catalog (a platform file's inline GPU), given the catalog's
  /// kernel-level constants where it states none of its own.
  GpuSpec with_kernel_constants(GpuSpec g) const;
  /// A host CPU class of `host_cpus:` by name (x86, grace).
  const HostCpu& host_cpu(const std::string& name) const { return host_cpus_.at(name); }
  /// The published attention curves (`attention_kernels:`), by name.
  const std::map<std::string, std::shared_ptr<const AttentionCurve>>& curves() const { return curves_; }

private:
  std::map<std::string, GpuSpec> gpus_;
  std::map<std::string, double> kernels_; ///< `kernels:` by key (set_kernel_constant), every GPU's
  std::map<std::string, std::shared_ptr<const AttentionCurve>> curves_;
  std::map<std::string, HostCpu> host_cpus_;
};

} // namespace clustersim
