#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# fullmonte-plan under mpirun -np 2: the sources' runs are shared out over the ranks and gathered
# on rank 0, which writes the same fluence matrix (byte for byte, CPU, one thread per run) and the
# same plan as one process.
set -euo pipefail
mpirun=$1; plan=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/plan.json" <<'JSON'
{"mesh": {"box": {"lower": [-6, -6, -6], "upper": [6, 6, 6], "divisions": [6, 6, 6],
          "shapes": [{"region": 2, "type": "sphere", "centre": [0, 0, 0], "radius": 3.5}]}},
 "regions": [{"id": 1, "name": "tissue", "mu_a": 0.05, "mu_s": 5, "g": 0.8, "n": 1.37},
             {"id": 2, "name": "tumour", "mu_a": 0.08, "mu_s": 8, "g": 0.9, "n": 1.37}],
 "sources": [{"type": "cylinder", "from": [-1, 0, -2], "to": [-1, 0, 2]},
             {"type": "cylinder", "from": [1, 0, -2], "to": [1, 0, 2]},
             {"type": "point", "position": [0, 1, 0]}],
 "simulation": {"packets_per_source": 3000, "batches": 2, "seed": 5, "threads": 1},
 "prescription": {"targets": [{"region": "tumour", "threshold_J_cm2": 30}],
                  "organs_at_risk": [{"region": "tissue", "threshold_J_cm2": 10, "max_doses": [{"D_percent": 10, "max_J_cm2": 25}]}]}}
JSON
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$plan" "$dir/plan.json" -o "$dir/one" --quiet > /dev/null
"$mpirun" --oversubscribe -np 2 "$plan" "$dir/plan.json" -o "$dir/two" --quiet > "$dir/mpi.log" 2>&1 || { cat "$dir/mpi.log"; exit 1; }
grep -q '"ranks": 2' "$dir/two/plan.json" || { echo "FAIL: plan.json does not say 2 ranks"; exit 1; }
cmp "$dir/one/fluence_matrix.fmm" "$dir/two/fluence_matrix.fmm" || { echo "FAIL: the 2-rank matrix differs"; exit 1; }
cmp "$dir/one/sources.csv" "$dir/two/sources.csv" || { echo "FAIL: the 2-rank plan differs"; exit 1; }
[ "$(ls "$dir" | grep -c partial)" = 0 ] || { echo "FAIL: a partial folder was left"; exit 1; }
echo "mpi plan: 2 ranks = 1 process"
