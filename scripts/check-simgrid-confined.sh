#!/bin/sh
# SimGrid stays in its folder: no header outside sim/simgrid/ includes a SimGrid header or a
# header of sim/simgrid/ (which would bring SimGrid along), and no source outside it and the
# tests includes SimGrid's headers directly. Sources elsewhere may call the SimGrid engine
# through sim/simgrid/'s headers (the study layer); the tests may read SimGrid itself. Exit 1 listing each offending include;
# exit 1 also when the check cannot work (no sources found, or the pattern finds no SimGrid
# include even inside sim/simgrid/). Run by the test suite (label unit).
# Usage: scripts/check-simgrid-confined.sh [SOURCE_DIR]
set -eu
cd "${1:-$(dirname "$0")/..}"
fail() {
  echo "check-simgrid-confined: $*" >&2
  exit 1
}
[ -d sim/simgrid ] || fail "sim/simgrid/ is missing"
sources=$(find sim topology strategies tests -name '*.hpp' -o -name '*.cpp' | sort)
[ -n "$sources" ] || fail "no sources found"
inside=$(grep -l '#include <simgrid/' sim/simgrid/*.hpp sim/simgrid/*.cpp || true)
[ -n "$inside" ] || fail "no SimGrid include found even in sim/simgrid/: the pattern is broken"
# includes name their path from the repository root, so the engine's headers are "sim/simgrid/..."
users=$(grep -l '#include "sim/simgrid/' sim/study/*.cpp || true)
[ -n "$users" ] || fail "no include of sim/simgrid/ found even in the study layer: the pattern is broken"
bad=0
for f in $sources; do
  case "$f" in sim/simgrid/*) continue ;; esac
  case "$f" in
  tests/*.cpp) ;;
  *)
    if grep -n '#include <simgrid/' "$f"; then
      echo "  ^ $f includes SimGrid; only sim/simgrid/ may" >&2
      bad=1
    fi
    ;;
  esac
  case "$f" in
  *.hpp)
    if grep -n '#include "sim/simgrid/' "$f"; then
      echo "  ^ $f is a header outside sim/simgrid/ that includes the SimGrid engine's headers" >&2
      bad=1
    fi
    ;;
  esac
done
[ "$bad" = 0 ] || fail "SimGrid leaks out of sim/simgrid/ (above)"
echo "check-simgrid-confined: $(echo "$sources" | wc -l) files, SimGrid only in sim/simgrid/"
