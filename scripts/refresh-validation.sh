#!/bin/sh
# Refreshes experiments/validation/ from the team's shared folder when that folder is newer.
# Usage: scripts/refresh-validation.sh SHARED_VALIDATION_DIR
# Prints what differs and copies it; the tests and the build only ever read the project's copy.
set -eu
cd "$(dirname "$0")/.."
if [ $# -ne 1 ]; then
  echo "usage: scripts/refresh-validation.sh SHARED_VALIDATION_DIR" >&2
  exit 2
fi
src=$1
dst=experiments/validation
if [ ! -d "$src" ]; then
  echo "refresh-validation: no $src here; nothing to refresh" >&2
  exit 0
fi
changed=0
# the case files, the schema, and the platforms the cases name by relative path (platforms/)
for f in "$src"/*.yaml "$src"/README.md "$src"/platforms/*.yaml; do
  [ -e "$f" ] || continue
  name=${f#"$src"/}
  if ! cmp -s "$f" "$dst/$name"; then
    echo "refresh-validation: $name differs; copying (update PROVENANCE.md's sha256 table)"
    mkdir -p "$(dirname "$dst/$name")"
    cp "$f" "$dst/$name"
    changed=1
  fi
done
[ "$changed" -eq 1 ] || echo "refresh-validation: experiments/validation is up to date with $src"
