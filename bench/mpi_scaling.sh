#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# CPU scaling over MPI ranks: cube_5med on the CPU kernel with 1, 2 and 4 ranks (mpirun), all
# cores used in each case (threads per rank = cores / ranks), same seed. Two measurements:
#   split: one run of PACKETS packets, its packets shared out over the ranks (chunks from an
#          RMA counter), tallies reduced to rank 0; L1 distance to the 1-rank run (rounding only);
#   batch: a batch of RUNS runs of PACKETS/RUNS packets each, whole runs shared out over the
#          ranks and gathered on rank 0; "batch matrix = 1 rank" compares the fluence matrix
#          byte for byte with the first row's (ranks differ in threads per run, so a "NO" means
#          the CPU kernel's sums depend on the thread split; L1 then shows it is rounding).
# Prints a Markdown table (nothing is written into docs/: paste it into docs/PERFORMANCE.md).
# Usage: bench/mpi_scaling.sh [packets] [build dir] [ranks...]   (default 1e7, build/, 1 2 4)
# Data: $FM_SHARED_DATA_DIR, else .device/data, else ../shared/data (timos/cube_5med).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
packets=${1:-10000000}; build=${2:-$root/build}; shift $(( $# > 2 ? 2 : $# )) || true
ranks_list=("$@"); [ ${#ranks_list[@]} -gt 0 ] || ranks_list=(1 2 4)
runs=${RUNS:-8}
data=${FM_SHARED_DATA_DIR:-}
for d in "$data" "$root/.device/data" "$root/../shared/data"; do
  if [ -n "$d" ] && [ -f "$d/timos/cube_5med/cube_5med.mesh" ]; then data=$d; break; fi
done
[ -f "$data/timos/cube_5med/cube_5med.mesh" ] || { echo "mpi_scaling: no timos/cube_5med data found"; exit 1; }
exe=$build/bin/fullmonte-run; cmp_exe=$build/bin/fullmonte-compare
[ -x "$exe" ] || { echo "mpi_scaling: $exe not built"; exit 1; }
mpirun=$(command -v mpirun || command -v mpiexec) || { echo "mpi_scaling: no mpirun"; exit 1; }
grep -q "FM_HAVE_MPI 1" "$build/fm_config.h" || { echo "mpi_scaling: $build was configured without MPI"; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cores=$(nproc)
b=$data/timos/cube_5med/cube_5med
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
for i in $(seq 1 "$runs"); do echo "$b.source"; done > "$out/batch.txt"
json() { python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print($2)" "$1"; }

echo "mpi_scaling: cube_5med, $packets packets, $cores cores, $(basename "$mpirun") $($mpirun --version 2>&1 | head -1)"
echo
echo "| ranks | threads/rank | split: seconds | split: packets/s | split: speedup | split: L1 to 1 rank | batch ($runs runs): seconds | batch: packets/s | batch: speedup | batch matrix = 1 rank |"
echo "|---|---|---|---|---|---|---|---|---|---|"
base_split=""; base_batch=""
for n in "${ranks_list[@]}"; do
  t=$(( cores / n )); [ "$t" -ge 1 ] || t=1
  common=(--mesh "$b.mesh" --opt "$b.opt" --seed 1 --threads "$t" --quiet)
  launch=("$mpirun" --oversubscribe --bind-to none -np "$n")
  "${launch[@]}" "$exe" "${common[@]}" --source "$b.source" --packets "$packets" --output "$out/split$n" > /dev/null
  "${launch[@]}" "$exe" "${common[@]}" --batch-sources "$out/batch.txt" --packets $(( packets / runs )) \
    --output "$out/batch$n" > /dev/null
  ss=$(json "$out/split$n/summary.json" 's["seconds"]'); sp=$(json "$out/split$n/summary.json" 's["packets_per_second"]')
  bs=$(json "$out/batch$n/summary.json" 's["seconds"]'); bp=$(json "$out/batch$n/summary.json" 's["packets_per_second"]')
  [ -n "$base_split" ] || { base_split=$ss; base_batch=$bs; }
  l1=$("$cmp_exe" "$out/split${ranks_list[0]}/fluence.txt" "$out/split$n/fluence.txt" | awk '{print $2}')
  same=$(cmp -s "$out/batch${ranks_list[0]}/fluence_matrix.fmm" "$out/batch$n/fluence_matrix.fmm" && echo yes || echo NO)
  printf '| %s | %s | %.2f | %.0f | %.2fx | %s | %.2f | %.0f | %.2fx | %s |\n' "$n" "$t" "$ss" "$sp" \
    "$(python3 -c "print($base_split/$ss)")" "$l1" "$bs" "$bp" "$(python3 -c "print($base_batch/$bs)")" "$same"
done
