#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A batch of 3 sources under mpirun -np 2 (runs shared out over the ranks, results gathered on
# rank 0) writes the same fluence matrix, byte for byte, as the one-process batch, whose columns
# are the single runs (Tests/Apps/batch_cli.sh, Tests/Kernels/test_batch.cpp). Also with a sweep
# of 2 material sets (6 runs over 2 ranks).
set -euo pipefail
mpirun=$1; run=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf '8\n6\n0 0 0\n10 0 0\n0 10 0\n10 10 0\n0 0 10\n10 0 10\n0 10 10\n10 10 10\n1 2 4 8 1\n1 2 6 8 1\n1 3 4 8 2\n1 3 7 8 2\n1 5 6 8 1\n1 5 7 8 2\n' > "$dir/cube.mesh"
printf '1\n2\n0.05 5 0.8 1.4\n0.2 10 0.9 1.37\n1\n1.0\n' > "$dir/cube.opt"
printf '1\n2\n0.1 8 0.7 1.33\n0.3 6 0.9 1.5\n1\n1.0\n' > "$dir/cube2.opt"
mkdir -p "$dir/src"
printf '1\n1 4 5 6 1\n' > "$dir/src/a.source"
printf '1\n1 2 2 2 1\n' > "$dir/src/b.source"
printf '1\n1 8 8 1 1\n' > "$dir/src/c.source"
printf 'cube.opt\ncube2.opt\n' > "$dir/opts.txt"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for sweep in "--opt $dir/cube.opt" "--batch-opt $dir/opts.txt"; do
  args=(--mesh "$dir/cube.mesh" $sweep --batch-sources "$dir/src" --packets 20000 --seed 7 --threads 1 --quiet)
  rm -rf "$dir/one" "$dir/two"
  "$run" "${args[@]}" --output "$dir/one" > /dev/null
  "$mpirun" --oversubscribe -np 2 "$run" "${args[@]}" --output "$dir/two" > "$dir/mpi.log" 2>&1 || { cat "$dir/mpi.log"; exit 1; }
  grep -q '"ranks": 2' "$dir/two/summary.json" || { echo "FAIL: summary.json does not say 2 ranks"; exit 1; }
  grep -q '"status": "complete"' "$dir/two/summary.json" || { echo "FAIL: batch not complete"; exit 1; }
  runs=$(grep -o '"runs": [0-9]*' "$dir/one/summary.json" | awk '{print $2}')
  [ "$(grep -c '"status": "complete", "packets": 20000' "$dir/two/summary.json")" = "$runs" ] || { echo "FAIL: not all $runs runs complete with 20000 packets"; cat "$dir/two/summary.json"; exit 1; }
  # Both ranks ran whole runs (dynamic hand-out; each rank claims one at the start).
  per=$(grep -o '"runs_per_rank": \[[0-9, ]*\]' "$dir/two/summary.json")
  echo "$per" | awk -F'[][, ]+' '{ exit !(NF >= 3 && $2 > 0 && $3 > 0) }' || { echo "FAIL: a rank did no run: $per"; exit 1; }
  cmp "$dir/one/fluence_matrix.fmm" "$dir/two/fluence_matrix.fmm" || { echo "FAIL: 2-rank matrix differs from the one-process matrix"; exit 1; }
  # Per-run ledgers identical too.
  diff <(grep -o '"ledger": {[^}]*}' "$dir/one/summary.json") <(grep -o '"ledger": {[^}]*}' "$dir/two/summary.json") \
    || { echo "FAIL: per-run ledgers differ"; exit 1; }
  echo "ok: $runs runs over 2 ranks, matrix $(stat -c %s "$dir/two/fluence_matrix.fmm") bytes identical, $per ($sweep)"
done
echo "PASS: a batch over 2 MPI ranks reproduces the one-process batch"
