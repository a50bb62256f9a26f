#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# CPU kernel benchmark: cube_5med and FourLayer (../shared/data) at 1 and 2 threads, fixed seed,
# wmin 1e-5, prwin 0.1, VolumeEnergy + SurfaceExitEnergy on. Prints a table and appends it to
# docs/PERFORMANCE.md. Usage: bench/cpu_bench.sh [packets] [build dir]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
packets=${1:-1000000}; build=${2:-$root/build}
data=${FM_SHARED_DATA_DIR:-$root/../shared/data}
[ -d "$data/timos" ] || { echo "cpu_bench: $data/timos not present, nothing to measure"; exit 0; }
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
rows=""
for case in cube_5med/cube_5med fourlayer/FourLayer; do
  for t in 1 2; do
    b="$data/timos/$case"
    "$build/bin/fullmonte-run" --mesh $b.mesh --opt $b.opt --source $b.source --packets "$packets" --seed 1 \
      --threads $t --quiet --output "$out/r" > /dev/null
    row=$(python3 -c "
import json; s=json.load(open('$out/r/summary.json'))
print(f'| $(basename $case) | $t | {s[\"packets\"]} | {s[\"seconds\"]:.1f} | {s[\"packets_per_second\"]:.0f} | {s[\"packets_per_second\"]/$t:.0f} | {s[\"steps_per_second\"]:.3e} | {s[\"ledger\"][\"absorbed\"]:.5f} |')")
    echo "$row"; rows+="$row"$'\n'
  done
done
{
  echo
  echo "## $(date -u +%F) — CPU benchmark, $(nproc)-core $(uname -m) ($(git -C "$root" rev-parse --short HEAD))"
  echo
  echo "\`bench/cpu_bench.sh $packets\` (wmin 1e-5, prwin 0.1, seed 1, volume + surface tallies):"
  echo
  echo "| case | threads | packets | seconds | packets/s | packets/s per thread | steps/s | absorbed |"
  echo "|---|---|---|---|---|---|---|---|"
  printf '%s' "$rows"
} >> "$root/docs/PERFORMANCE.md"
