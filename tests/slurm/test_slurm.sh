#!/bin/sh
# A sweep run through `clustersim run --slurm` on a real single-node Slurm (slurmctld, slurmd
# and munged from Debian's packages, started here and stopped at the end): the merged results
# are byte-identical to the unsharded run; a failing shard stops the merge and is named; a
# second submission reruns only that shard; the dry-run scripts pass `sbatch --test-only`; bad
# flags exit 2 with one line. Exit 77 (ctest: skipped), with the reason, where Slurm cannot
# start (not root, packages missing).
#
# Usage: test_slurm.sh CLUSTERSIM
set -eu
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/clustersim-slurm.XXXXXX)
cleanup() { "$here/slurm-cluster.sh" stop "$work/slurm" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
mkdir -p "$work/slurm"
set +e
conf=$("$here/slurm-cluster.sh" start "$work/slurm")
rc=$?
set -e
if [ $rc -ne 0 ]; then
  exit $rc
fi
export SLURM_CONF="$conf"
PATH=$PATH:/usr/sbin
cd "$work"
fail() { echo "FAIL: $*" >&2; for f in slurm/slurmctld.log out/slurm/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -5 "$f"; }; done >&2; exit 1; }
expect_exit() { want=$1; shift; set +e; "$@" >cmd.out 2>cmd.err; got=$?; set -e; [ "$got" -eq "$want" ] || { cat cmd.out cmd.err >&2; fail "exit $got, not $want: $*"; }; }

cat >sweep.yaml <<'YAML'
name: slurm-sweep
model: gpt3-125m
cluster: {platform: dgx-a100-80gb, gpus: 8}
training: {micro_batch: 2, precision: bf16, flash_attention: true}
sweep:
  axes:
    cluster.gpus: [8, 16, 32, 64]
    training.tp: [1, 2]
YAML

echo "== the same sweep without Slurm"
"$bin" run sweep.yaml --out ref --jobs 2 2>/dev/null

echo "== bad input"
expect_exit 2 "$bin" run sweep.yaml --out out --slurm --array-size 0
grep -q '^command line: --array-size: 0 tasks; valid: 1 to 1000000$' cmd.err || fail "array size 0: $(cat cmd.err)"
expect_exit 2 "$bin" run sweep.yaml --out out --slurm --partition nosuch
grep -q "^command line: --partition: Slurm knows no partition 'nosuch'; valid: debug$" cmd.err || fail "partition: $(cat cmd.err)"
expect_exit 2 "$bin" run sweep.yaml --slurm
grep -q '^command line: --slurm: .*; valid: --slurm with --out DIR$' cmd.err || fail "no --out: $(cat cmd.err)"
expect_exit 2 "$bin" run sweep.yaml --out out --slurm --time 1:99
grep -q '^command line: --time: ' cmd.err || fail "time: $(cat cmd.err)"
[ ! -e out ] || fail "a refused submission wrote $work/out"
cat cmd.err

echo "== dry run: the scripts pass sbatch --test-only"
"$bin" run sweep.yaml --out out --slurm --array-size 4 --partition debug --time 10 --dry-run >dry.txt
[ ! -e out ] || fail "--dry-run wrote $work/out"
awk '/^# ---- submit/{exit} /^# ---- /{f="dry-" ++n ".sh"; next} f{print > f}' dry.txt
for s in dry-1.sh dry-2.sh dry-3.sh; do
  sbatch --test-only "$s" 2>&1 | tee -a test-only.txt | grep -q 'to start at' || fail "sbatch --test-only $s: $(cat test-only.txt)"
done
grep -q '^#SBATCH --array=0-3$' dry-1.sh || fail "array line: $(grep array dry-1.sh)"
cat test-only.txt

echo "== a failing shard: shard 2 cannot write its output"
mkdir -p out/shards
echo "not a directory" >out/shards/2
expect_exit 1 "$bin" run sweep.yaml --out out --slurm --array-size 4 --wait
cat cmd.out
grep -q '^slurm: shard 2 of 4 failed: ' cmd.out || fail "the failed shard is not named"
[ "$(grep -c 'failed: ' cmd.out)" -eq 1 ] || fail "more than shard 2 failed"
[ ! -e out/results.csv ] || fail "the merge ran after a failed shard"
grep -q '^shard 2 of 4 failed: ' out/slurm/failed.txt || fail "failed.txt: $(cat out/slurm/failed.txt 2>&1)"
merge=$(sed -n 's/.*"merge_job": "\([0-9]*\)".*/\1/p' out/slurm/manifest.json)
scontrol show job "$merge" | grep -q 'JobState=CANCELLED Reason=DependencyNeverSatisfied' \
  || fail "merge job $merge: $(scontrol show job "$merge" | grep JobState)"
echo "merge job $merge: $(scontrol show job "$merge" | grep -o 'JobState=[A-Z]* Reason=[A-Za-z]*')"

echo "== resubmitted: only shard 2 runs, then the merge"
rm out/shards/2
expect_exit 0 "$bin" run sweep.yaml --out out --slurm --wait
cat cmd.out
grep -q '^slurm: array job [0-9]*: shards 2 of 4 ' cmd.out || fail "resubmission ran more than shard 2"
cmp ref/results.csv out/results.csv && echo "cmp results.csv: identical"
cmp ref/results.json out/results.json && echo "cmp results.json: identical"
[ "$(wc -l <out/results.csv)" -eq 9 ] || fail "expected 8 rows"
echo "PASS"
