#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The planner end to end at clinical size: Examples/pdt_plan.json with its box mesh refined
# (DIV, default 60,60,45: 972k tetras) and its tumour enlarged (RADIUS mm, default 12: ~1.5e5
# target tetras, ~2e5 LP rows), simulated on the CPU kernel with few packets (PACKETS per source,
# default 2000), optimised, written. Prints "key value" lines: tetras, LP rows and columns (full
# and solved), LP solves, and seconds per stage (from fullmonte-plan's stage lines).
# Usage: bench/plan_scale.sh OUT   (env: FM_BUILD_DIR (build), DIV, RADIUS, PACKETS; FM_PLAN_COLD=1
# solves every LP from scratch, for comparison)
set -euo pipefail
out=${1:?OUT dir}
build=${FM_BUILD_DIR:-build}
div=${DIV:-60,60,45}; radius=${RADIUS:-12}; packets=${PACKETS:-2000}
mkdir -p "$out"
/usr/bin/python3 - "$out/plan.json" "$div" "$radius" "$packets" <<'PY'
import json, sys
p = json.load(open("Examples/pdt_plan.json"))
out, div, radius, packets = sys.argv[1], [int(v) for v in sys.argv[2].split(",")], float(sys.argv[3]), int(sys.argv[4])
p["mesh"]["box"]["divisions"] = div
p["mesh"]["box"]["shapes"][0]["radius"] = radius
p["simulation"]["packets_per_source"] = packets
json.dump(p, open(out, "w"), indent=1)
PY
start=$(date +%s.%N)
"$build/bin/fullmonte-plan" "$out/plan.json" -o "$out/plan" --overwrite 2> >(tee "$out/stderr.txt" >&2) | tee "$out/stdout.txt"
end=$(date +%s.%N)
/usr/bin/python3 - "$out" "$start" "$end" <<'PY'
import json, re, sys
out, start, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
r = json.load(open(out + "/plan/plan.json"))
opt = r.get("optimiser", r)
for k in ("lp_rows", "lp_columns", "lp_rows_solved", "lp_rounds", "lp_warm_rounds", "solves", "seconds", "cpu_seconds"):
    v = opt.get(k)
    if v is not None: print(("optimise_" if k in ("seconds", "cpu_seconds") else "") + k, v)
at = {}
for line in open(out + "/stderr.txt"):
    m = re.search(r"(\d+) tetras", line)
    if m: print("tetras", m.group(1))
    m = re.search(r"\[(\d+\.\d+) s", line)
    for stage in ("simulating", "optimising", "writing", "done"):
        if m and "fullmonte-plan: " in line and stage in line: at[stage] = float(m.group(1))
if len(at) == 4:
    print("mesh_and_setup_seconds %.1f" % at["simulating"])
    print("simulate_seconds %.1f" % (at["optimising"] - at["simulating"]))
    print("optimise_and_evaluate_seconds %.1f" % (at["writing"] - at["optimising"]))
    print("write_outputs_seconds %.1f" % (at["done"] - at["writing"]))
print("total_seconds %.1f" % (end - start))
PY
