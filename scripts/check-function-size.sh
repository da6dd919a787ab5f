#!/bin/sh
# Lists every function outside tests longer than 100 lines (clang-tidy's
# readability-function-size on the ci build's compile database); exit 1 if there is one.
# Usage: scripts/check-function-size.sh [BUILD_DIR]   (default: build/ci)
set -eu
cd "$(dirname "$0")/.."
build=${1:-build/ci}
files=$(git ls-files '*.cpp' | grep -v '^tests/')
out=$(clang-tidy -p "$build" --quiet --checks='-*,readability-function-size' \
  --config='{CheckOptions: [{key: readability-function-size.LineThreshold, value: 100}]}' $files 2>/dev/null |
  grep 'exceeds recommended size' || true)
if [ -n "$out" ]; then
  echo "$out"
  exit 1
fi
echo "check-function-size: no function over 100 lines"
