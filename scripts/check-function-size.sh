#!/bin/sh
# Lists every function outside tests longer than 100 lines (clang-tidy's
# readability-function-size on a build's compile database); exit 1 if there is one, and exit 1
# with the reason when the check cannot run (no clang-tidy, no compile database, a file that
# does not parse): a gate that checked nothing does not pass. Run by the test suite (label lint).
# Usage: scripts/check-function-size.sh [BUILD_DIR] [JOBS]   (default: build/ci, 2)
set -eu
cd "$(dirname "$0")/.."
build=${1:-build/ci}
jobs=${2:-2}
fail() {
  echo "check-function-size: $*" >&2
  exit 1
}
command -v clang-tidy >/dev/null 2>&1 || fail "clang-tidy is not installed (scripts/setup.sh installs it)"
[ -f "$build/compile_commands.json" ] || fail "$build/compile_commands.json is missing: configure the build first"
files=$(git ls-files '*.cpp' | grep -v '^tests/') || fail "no sources listed (not a git checkout?)"
[ -n "$files" ] || fail "no sources listed"
log=$(mktemp)
status=$(mktemp)
trap 'rm -f "$log" "$status"' EXIT
# one clang-tidy per file, $jobs at a time; any file clang-tidy cannot check is a failure
echo "$files" | xargs -P "$jobs" -n 1 sh -c '
  out=$(clang-tidy -p "$0" --quiet --checks="-*,readability-function-size" \
    --config="{CheckOptions: [{key: readability-function-size.LineThreshold, value: 100}]}" "$1" 2>&1) ||
    { printf "%s\n" "$out" | head -5; echo "FAILED: $1"; }
  printf "%s\n" "$out" | grep "exceeds recommended size" || true
' "$build" >"$log" 2>&1 || echo "xargs" >"$status"
if grep -q '^FAILED: ' "$log" || [ -s "$status" ]; then
  cat "$log" >&2
  fail "clang-tidy could not check every file"
fi
checked=$(echo "$files" | wc -l)
if grep -q 'exceeds recommended size' "$log"; then
  grep 'exceeds recommended size' "$log" | sort
  exit 1
fi
echo "check-function-size: no function over 100 lines in $checked files"
