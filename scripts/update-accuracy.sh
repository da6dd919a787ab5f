#!/bin/sh
# Rewrites experiments/validation/accuracy.yaml: the median |error| of clustersim's predictions on
# the published runs of the validation sets, dense and MoE apart. `clustersim plan` shows it as
# the error band beside its top layouts. Run after a change that moves the validation numbers:
#   scripts/update-accuracy.sh build/ci
set -eu
build=${1:-build/ci}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for set in public frontier moe generalization; do
  "$build/clustersim" validate "$root/experiments/validation/$set.yaml" --json > "$tmp/$set.json"
done
python3 - "$root" "$tmp" "$(git -C "$root" rev-parse --short HEAD)" <<'PY'
import json, statistics, sys, yaml
root, tmp, commit = sys.argv[1:4]
sets = ["public", "frontier", "moe", "generalization"]
groups = {"dense": [], "moe": []}
lines = []
for s in sets:
    doc = yaml.safe_load(open(f"{root}/experiments/validation/{s}.yaml"))
    moe = {c["id"]: isinstance(c["model"], dict) and c["model"].get("experts", 1) > 1 for c in doc["cases"]}
    rep = json.load(open(f"{tmp}/{s}.json"))
    errs = []
    for row in rep["cases"]:
        e = row["error"]
        if e is None:
            continue
        errs.append(abs(e))
        groups["moe" if moe[row["id"]] else "dense"].append((s, abs(e)))
    summ = rep["summary"]
    lines.append(f"#   {s}: {summ['count']} cases, median {100*summ['median_abs_error']:.1f} %, "
                 f"max {100*summ['max_abs_error']:.1f} %, {summ['misses']} misses")
out = ["# Median |error| of clustersim's predictions of published training runs, by model kind:",
       "# what `clustersim plan` shows as the error band beside its top layouts (layouts whose",
       "# simulated objectives lie within it of the best are ties the model cannot order).",
       f"# Written by scripts/update-accuracy.sh at {commit} from `clustersim validate SET --json`:"]
out += lines
for kind in ("dense", "moe"):
    g = groups[kind]
    names = sorted({s for s, _ in g}, key=sets.index)
    out.append(f"{kind}:")
    out.append(f"  cases: {len(g)}")
    out.append(f"  median_abs_error: {statistics.median(e for _, e in g):.4f}")
    out.append(f"  sets: [{', '.join(names)}]")
open(f"{root}/experiments/validation/accuracy.yaml", "w").write("\n".join(out) + "\n")
PY
echo "wrote $root/experiments/validation/accuracy.yaml"
