// Strategies emit the tasks their closed forms predict; executed, the compute stream runs
// exactly what the cost model priced.
#include "Isolated.hpp"
#include "Simulation.hpp"
#include "StepBuilder.hpp"
#include "TestUtil.hpp"

#include <doctest/doctest.h>

using namespace clustersim;
using clustersim::test::catalog;

namespace {

ExperimentSpec dp_experiment(int gpus)
{
  ExperimentSpec e;
  e.name = "dp";
  e.model = load_model_preset("gpt3-1.3b", catalog().models_dir(), {});
  e.platform = catalog().platform("dgx-a100-80gb", {});
  e.gpus = gpus;
  e.training.dp = gpus;
  e.training.micro_batch = 2;
  e.training.global_batch = 4 * gpus;
  e.training.flash_attention = true;
  return e;
}

double collective_bytes(const Workload& w, Category c, CollOp op)
{
  double sum = 0;
  for (const auto& call : w.collectives())
    if (call.category == c && call.op == op)
      sum += call.bytes;
  return sum;
}

} // namespace

TEST_CASE("a data-parallel step computes exactly what the cost model prices")
{
  ExperimentSpec e = dp_experiment(16);
  RunMetrics m = metrics_from_json(Json::parse(run_isolated([&] { return to_json(simulate(e, catalog())).dump(); })));
  CostModel cost(e.model, e.training, e.platform.node.gpu);
  const int mbs = e.training.micro_batches();
  double per_mb = cost.embedding().forward + cost.embedding().backward + cost.logits().forward +
                  cost.logits().backward +
                  e.model.layers * (cost.attention_block().forward + cost.attention_block().backward +
                                    cost.mlp_block().forward + cost.mlp_block().backward);
  CHECK(m.compute_s == doctest::Approx(mbs * per_mb).epsilon(1e-9));
  CHECK(m.breakdown.optimizer == doctest::Approx(cost.optimizer_seconds(e.model.total_params())).epsilon(1e-9));
  // GEMM-dominated: compute time is within a few percent of FLOPs / (peak x GEMM efficiency)
  double flops_per_gpu = cost.model_flops_per_step() / e.gpus;
  double ideal = flops_per_gpu / (312e12 * e.platform.node.gpu.gemm_efficiency);
  CHECK(m.compute_s > ideal);
  CHECK(m.compute_s < 1.25 * ideal);
}

TEST_CASE("DDP reduces 2(N-1)/N x params x gradient bytes per step, in buckets")
{
  ExperimentSpec e = dp_experiment(32);
  CostModel cost(e.model, e.training, e.platform.node.gpu);
  StepPlan plan = build_step(cost);
  const Workload& w = plan.workload;
  // one bucket set per DP group (one group here)
  double grad_bytes = 4.0; // bf16 training reduces fp32 main gradients
  CHECK(collective_bytes(w, Category::dp_comm, CollOp::all_reduce) ==
        doctest::Approx(e.model.total_params() * grad_bytes).epsilon(1e-9));
  // a bucket closes once it reaches bucket_size, so it holds at most one unit more
  const double largest_unit = std::max(e.model.layer_params(), e.model.embedding_params()) * grad_bytes;
  std::size_t buckets = 0;
  for (const auto& call : w.collectives())
    if (call.category == Category::dp_comm) {
      ++buckets;
      CHECK(call.bytes < e.training.bucket_bytes + largest_unit);
    }
  CHECK(buckets > 1);
  CHECK(buckets <= static_cast<std::size_t>(e.model.total_params() * grad_bytes / e.training.bucket_bytes) + 1);
}
