#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# mpirun -np 2 fullmonte-run == fullmonte-run (same seed, same packets): tallies equal to
# rounding, ledger equal, packets all done, only rank 0 writes; also a run too short for a
# chunk per rank (one rank runs nothing).
set -euo pipefail
mpirun=$1; run=$2; compare=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# A 10 mm cube of 6 tetras (Kuhn split), two regions, point source inside.
cat > "$dir/cube.mesh" <<MESH
8
6
0 0 0
10 0 0
0 10 0
10 10 0
0 0 10
10 0 10
0 10 10
10 10 10
1 2 4 8 1
1 2 6 8 1
1 3 4 8 2
1 3 7 8 2
1 5 6 8 1
1 5 7 8 2
MESH
printf '1\n2\n0.05 5 0.8 1.4\n0.2 10 0.9 1.37\n1\n1.0\n' > "$dir/cube.opt"
printf '1\n1 4 5 6 1\n' > "$dir/cube.source"
args=(--mesh "$dir/cube.mesh" --opt "$dir/cube.opt" --source "$dir/cube.source" --packets 40000 --seed 7 --threads 1 --quiet)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$run" "${args[@]}" --output "$dir/one" > /dev/null
"$mpirun" --oversubscribe -np 2 "$run" "${args[@]}" --output "$dir/two" > "$dir/mpi.log" 2>&1 || { cat "$dir/mpi.log"; exit 1; }
grep -q '"ranks": 2' "$dir/two/summary.json" || { echo "FAIL: summary.json does not say 2 ranks"; cat "$dir/two/summary.json"; exit 1; }
grep -q '"packets": 40000,' "$dir/two/summary.json" || { echo "FAIL: not all packets done"; exit 1; }
for f in volume_energy.txt fluence.txt; do
  l1=$("$compare" "$dir/one/$f" "$dir/two/$f" | awk '{print $2}')
  echo "$f: L1(one process, 2 ranks) = $l1"
  awk -v x="$l1" 'BEGIN { exit !(x < 1e-12) }' || { echo "FAIL: $f differs by $l1"; exit 1; }
done
for k in absorbed exited roulette_lost; do
  a=$(grep "\"$k\"" "$dir/one/summary.json" | tr -dc '0-9.e-'); b=$(grep "\"$k\"" "$dir/two/summary.json" | tr -dc '0-9.e-')
  awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d < 1e-12) }' || { echo "FAIL: $k $a vs $b"; exit 1; }
done
# A run of one chunk (1000 packets): one rank takes no work, its empty tallies still reduce.
tiny=(--mesh "$dir/cube.mesh" --opt "$dir/cube.opt" --source "$dir/cube.source" --packets 1000 --seed 7 --threads 1 --quiet)
"$run" "${tiny[@]}" --output "$dir/tiny1" > /dev/null
timeout 120 "$mpirun" --oversubscribe -np 2 "$run" "${tiny[@]}" --output "$dir/tiny2" > "$dir/tiny.log" 2>&1 \
  || { cat "$dir/tiny.log"; echo "FAIL: a 1000-packet run over 2 ranks failed"; exit 1; }
grep -q '"packets": 1000,' "$dir/tiny2/summary.json" || { echo "FAIL: the tiny run did not do its packets"; exit 1; }
l1=$("$compare" "$dir/tiny1/fluence.txt" "$dir/tiny2/fluence.txt" | awk '{print $2}')
awk -v x="$l1" 'BEGIN { exit !(x < 1e-12) }' || { echo "FAIL: tiny run differs by $l1"; exit 1; }
echo "PASS: 2 MPI ranks reproduce the one-process run (also a run of one chunk)"
