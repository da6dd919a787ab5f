// Golden outputs: the exact text or JSON of the reports users read and scripts parse. A change
// to any of them is either a regression or deliberate; a deliberate one rewrites the file with
// scripts/update-golden.sh and says why in the commit.
#include "tests/TestUtil.hpp"

#include <doctest/doctest.h>

using namespace clustersim::test;

namespace {

/// Runs `args` from the source tree and compares stdout with tests/golden/NAME; the command must
/// succeed and print nothing on stderr but progress.
void golden(const std::string& name, const std::string& args)
{
  auto r = run_cli_in_source(args);
  INFO("clustersim " << args);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  check_golden(name, r.out);
}

} // namespace

TEST_CASE("golden: run quickstart, report text")
{
  golden("quickstart.txt", "run experiments/quickstart.yaml");
}

TEST_CASE("golden: run quickstart, report JSON")
{
  golden("quickstart.json", "run experiments/quickstart.yaml --json");
}

TEST_CASE("golden: validate the public set, JSON")
{
  golden("validate-public.json", "validate experiments/validation/public.yaml --json");
}

TEST_CASE("golden: validate the public set on SimGrid's actors, the same JSON byte for byte")
{
  // the reference engine and the event engine agree to the last digit on every published case
  golden("validate-public.json", "validate experiments/validation/public.yaml --json --engine simgrid");
}

TEST_CASE("golden: an all-reduce sweep of nccl-tests style output on DGX A100")
{
  golden("collective-allreduce-a100.txt",
         "collective --op all_reduce --platform dgx-a100-80gb --gpus 8,16,64,1024 --sizes 1MiB:16GiB");
}

TEST_CASE("golden: all-gather and reduce-scatter on DGX H100, JSON")
{
  golden("collective-ag-rs-h100.json", "collective --op all_gather --platform dgx-h100 --gpus 8,64 --sizes "
                                       "16MiB,1GiB --json");
}

TEST_CASE("golden: the README's plan example, JSON")
{
  golden("plan-gpt3-175b-1024-a100.json",
         "plan --model gpt3-175b --platform dgx-a100-80gb --gpus 1024 --global-batch 1536 --top 8 --json");
}

TEST_CASE("golden: memory of the quickstart layout")
{
  golden("memory-quickstart.txt", "memory --model gpt3-175b --platform dgx-a100-80gb --gpus 1024 --tp 8 --pp 8 "
                                  "--recompute selective --sequence-parallel --global-batch 1536 --no-flash-attention");
}

TEST_CASE("golden: memory of the README's Llama 2 70B example, JSON")
{
  golden("memory-llama2-70b.json", "memory --model llama2-70b --gpu h100-sxm5-80gb --tp 8 --pp 4 --zero 1 --json");
}

TEST_CASE("golden: memory of a 7B model under ZeRO-3 with flash attention")
{
  golden("memory-llama2-7b-zero3.txt",
         "memory --model llama2-7b --gpu a100-sxm4-80gb --gpus 64 --zero 3 --flash-attention --micro-batch 2");
}

TEST_CASE("golden: memory of model states from a parameter count")
{
  golden("memory-params-7e9-zero2.txt", "memory --params 7e9 --gpu a100-sxm4-80gb --gpus 64 --zero 2");
}

TEST_CASE("golden: estimate of the README's GPT-3 example")
{
  golden("estimate-gpt3-175b.txt",
         "estimate --model gpt3-175b --tokens 1e12 --platform dgx-h100 --gpus 1024 --mfu 0.45");
}

TEST_CASE("golden: estimate of Llama 3 405B on 16k H100, JSON")
{
  golden("estimate-llama3-405b.json",
         "estimate --model llama3-405b --tokens 15.6e12 --platform dgx-h100 --gpus 16384 --mfu 0.40 --json");
}
