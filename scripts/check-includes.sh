#!/bin/sh
# Every include of a project header names its path from the repository root
# (#include "topology/config/Schema.hpp"), so the point of use says which layer a header is of;
# a bare name would still compile from the including file's own folder. Exit 1 listing each
# include that names no file from the root; exit 1 also when no source or no include is found.
# Run by the test suite (label unit).
# Usage: scripts/check-includes.sh [SOURCE_DIR]
set -eu
cd "${1:-$(dirname "$0")/..}"
fail() {
  echo "check-includes: $*" >&2
  exit 1
}
sources=$(find sim topology strategies tests -name '*.hpp' -o -name '*.cpp' | sort)
[ -n "$sources" ] || fail "no sources found"
count=0
bad=0
for f in $sources; do
  for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
    count=$((count + 1))
    if [ ! -f "$inc" ]; then
      echo "$f: #include \"$inc\" names no file from the repository root" >&2
      bad=1
    fi
  done
done
[ "$count" -gt 0 ] || fail "no include found: the pattern is broken"
[ "$bad" = 0 ] || fail "includes without their path (above)"
echo "check-includes: $count includes in $(echo "$sources" | wc -l) files, each from the repository root"
