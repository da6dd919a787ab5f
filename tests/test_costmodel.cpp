// The transformer cost model against closed forms.
#include "CostModel.hpp"
#include "TestUtil.hpp"

#include <doctest/doctest.h>

using namespace clustersim;
using clustersim::test::catalog;

namespace {

ModelSpec gpt(int layers, int hidden, int heads, int vocab, int seq)
{
  ModelSpec m;
  m.name = "gpt";
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.ffn_hidden = 4 * hidden;
  m.vocab = vocab;
  m.seq_len = seq;
  return m;
}

} // namespace

TEST_CASE("model and hardware FLOPs equal Narayanan et al.'s closed forms exactly")
{
  const GpuSpec& gpu = *catalog().gpus().find("a100-sxm4-80gb");
  for (auto m : {gpt(96, 12288, 96, 51200, 2048), gpt(24, 2304, 24, 51200, 2048), gpt(128, 25600, 160, 51200, 2048)}) {
    TrainingSpec t;
    t.global_batch = 1536;
    t.micro_batch = 1;
    t.dp = 1536;
    const double B = t.global_batch, s = m.seq_len, l = m.layers, h = m.hidden, V = m.vocab;
    t.recompute = Recompute::none;
    CostModel none(m, t, gpu);
    double model = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
    CHECK(none.model_flops_per_step() == doctest::Approx(model).epsilon(1e-12));
    CHECK(none.hardware_flops_per_step() == doctest::Approx(model).epsilon(1e-12));
    t.recompute = Recompute::full;
    CostModel full(m, t, gpu);
    double hw = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
    CHECK(full.hardware_flops_per_step() == doctest::Approx(hw).epsilon(1e-12));
  }
}

TEST_CASE("a large aligned GEMM runs at peak x the GPU's GEMM efficiency")
{
  const GpuSpec& gpu = *catalog().gpus().find("a100-sxm4-80gb");
  TrainingSpec t;
  CostModel c(gpt(1, 1024, 8, 1000, 128), t, gpu);
  // 108 SMs x 256x128 tiles: 27 x 40 = 1080 tiles = exactly 10 waves, no padding
  double m = 27 * 256, n = 40 * 128, k = 8192;
  CHECK(c.gemm_efficiency(m, n, k) == doctest::Approx(gpu.gemm_efficiency));
  CHECK(c.gemm_seconds(m, n, k) == doctest::Approx(2 * m * n * k / (312e12 * gpu.gemm_efficiency)));
}
