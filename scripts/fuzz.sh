#!/bin/sh
# Builds the libFuzzer targets (preset `fuzz`: clang, AddressSanitizer, UndefinedBehaviorSanitizer)
# and runs each for a fixed number of executions from its corpus (tests/fuzz/corpus/TARGET) and
# its regressions (tests/fuzz/regressions/TARGET). Prints, per target, the executions, the time
# and the coverage reached; exits 1 if any target crashed, hung or leaked, and leaves the input
# in build/fuzz/artifacts/TARGET/ (copy it to tests/fuzz/regressions/TARGET/ with the fix).
#
# Usage: scripts/fuzz.sh [--runs N] [--time S] [--target NAME] [--smoke] [--merge]
#   --runs N     executions per target (default 1000000)
#   --time S     stop a target after S seconds, whatever its executions (libFuzzer -max_total_time)
#   --smoke      a short run for CI: 3000 executions per target, or 60 s where that takes longer
#   --target T   one target: experiment platform hf_config validation units cli results catalog
#                faults engines goodput slurm chakra settings
#   --merge      minimise what the run found into tests/fuzz/corpus/TARGET (new coverage only)
set -eu
cd "$(dirname "$0")/.."
runs=1000000
time_limit=0
only=""
merge=0
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --time) time_limit=$2; shift 2 ;;
    --smoke) runs=3000; time_limit=60; shift ;;
    --target) only=$2; shift 2 ;;
    --merge) merge=1; shift ;;
    *) echo "fuzz.sh: unknown argument '$1'; valid: --runs N, --time S, --smoke, --target NAME, --merge" >&2; exit 2 ;;
  esac
done
if ! command -v clang++ >/dev/null 2>&1; then
  echo "fuzz.sh: clang++ is missing (scripts/setup.sh installs it)" >&2
  exit 2
fi
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz >/dev/null
targets=${only:-"experiment platform hf_config validation units cli results catalog faults engines goodput slurm chakra settings"}
failed=0
for t in $targets; do
  bin=build/fuzz/tests/fuzz/fuzz_$t
  found=build/fuzz/corpus/$t
  art=build/fuzz/artifacts/$t
  mkdir -p "$found" "$art" "tests/fuzz/regressions/$t"
  log=build/fuzz/$t.log
  start=$(date +%s)
  # one input may allocate at most 2 GB (-malloc_limit_mb: a runaway allocation is a finding);
  # the process as a whole may grow to 4 GB, as libFuzzer's in-memory corpus and ASan's
  # quarantine do over a million executions (a leak is caught by LeakSanitizer at exit)
  # an input may run 10 s; the engines target 30 s: it simulates its step twice, SimGrid's in a
  # forked child, and a 32-GPU step with faults took 9 s under the sanitizers on two busy cores
  timeout=10
  [ "$t" = engines ] && timeout=30
  if CLUSTERSIM_DATA="$PWD" "$bin" -runs="$runs" -max_total_time="$time_limit" -max_len=65536 -timeout="$timeout" -malloc_limit_mb=2048 -rss_limit_mb=4096 \
      -print_final_stats=1 -artifact_prefix="$art/" "$found" "tests/fuzz/corpus/$t" \
      "tests/fuzz/regressions/$t" >"$log" 2>&1; then
    status=ok
  else
    status=FAILED
    failed=1
  fi
  secs=$(($(date +%s) - start))
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -oE 'DONE +cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 | grep -oE 'cov: [0-9]+ ft: [0-9]+' || echo "cov: ?")
  printf 'fuzz %-11s %s  %s executions in %s s, %s\n' "$t" "$status" "$execs" "$secs" "$cov"
  if [ "$status" != ok ]; then
    grep -E 'ERROR|SUMMARY|Test unit written' "$log" | head -5 | sed 's/^/    /'
  fi
  if [ "$merge" -eq 1 ] && [ "$status" = ok ]; then
    "$bin" -merge=1 -max_len=65536 "tests/fuzz/corpus/$t" "$found" >/dev/null 2>&1
  fi
done
exit $failed
