#!/bin/sh
# Regenerates the documents generated from the tables of keys: the README's key and metric lists and
# docs/configuration.md (a test fails when they drift). Usage: scripts/update-docs.sh [BUILD_DIR]
set -eu
cd "$(dirname "$0")/.."
bin=${1:-build/ci}/clustersim
replace() { # FILE MARKER CONTENT_FILE
  python3 - "$1" "$2" "$3" <<'PY'
import sys
path, marker, content = sys.argv[1], sys.argv[2], open(sys.argv[3]).read()
text = open(path).read()
begin, end = f"<!-- {marker}:begin -->\n", f"<!-- {marker}:end -->"
a, b = text.index(begin) + len(begin), text.index(end)
open(path, "w").write(text[:a] + content + text[b:])
PY
}
tmp=$(mktemp)
"$bin" schema --summary > "$tmp" && replace README.md schema:summary "$tmp"
"$bin" schema --markdown > "$tmp" && replace docs/configuration.md schema:markdown "$tmp"
"$bin" schema --metrics > "$tmp" && replace README.md metrics:list "$tmp"
rm -f "$tmp"
git status --short README.md docs/configuration.md
