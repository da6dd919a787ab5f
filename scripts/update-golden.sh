#!/bin/sh
# Rewrites the golden outputs (tests/golden/) from the current build, for a deliberate change:
# review `git diff tests/golden`, then commit them with the reason in the message.
# Usage: scripts/update-golden.sh [BUILD_DIR]   (default: build/ci)
set -eu
cd "$(dirname "$0")/.."
build=${1:-build/ci}
CLUSTERSIM_UPDATE_GOLDEN=1 ctest --test-dir "$build" -R '^golden:' -j2 --output-on-failure
git status --short tests/golden
