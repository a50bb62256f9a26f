#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Benchmark (not a test): meshes the Digimouse atlas at fullmonte-mesh's default settings, times
# it, and checks each region of more than 1,000 voxels against its voxel volume (within 5%).
# Usage: bench/mesh_digimouse.sh [DATA] [OUT] [BUILD_DIR] [extra fullmonte-mesh options...]
#   DATA defaults to ../shared/data, OUT to /tmp/mesh_digimouse, BUILD_DIR to build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
data=${1:-$root/../shared/data}
out=${2:-/tmp/mesh_digimouse}
build=${3:-$root/build}
shift $(($# < 3 ? $# : 3))
atlas=$data/anatomy/digimouse/digimouse_labels.nii.gz
if [ ! -f "$atlas" ]; then echo "mesh_digimouse: skipped: $atlas not found"; exit 0; fi
mkdir -p "$out"
echo "mesh_digimouse: $(date -u +%F) $(uname -n), $(nproc) cores, commit $(git -C "$root" rev-parse --short HEAD)"
echo "command: fullmonte-mesh $atlas -o $out/digimouse.mesh $*"
# The mesher is single-threaded: its CPU time is its wall time on an idle machine. Both are
# printed; the 2-minute limit is checked on CPU time, since a shared machine stretches wall time.
TIMEFORMAT='%R %U %S'
{ time "$build/bin/fullmonte-mesh" "$atlas" -o "$out/digimouse.mesh" "$@" >"$out/report.txt" 2>"$out/progress.txt"; } 2>"$out/time.txt"
cat "$out/progress.txt" "$out/report.txt"
read -r wall user sys <"$out/time.txt"
cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.1f", u + s }')
echo "time: wall $wall s, CPU $cpu s (limit 120 s), load average $(cut -d' ' -f1-3 /proc/loadavg)"
# Report rows: region tetras meshVolume voxels voxelVolume difference%.
awk -v cpu="$cpu" '
  $1 ~ /^[0-9]+$/ && NF == 6 && $4 > 1000 {
    d = $6; sub("%", "", d); d += 0; n++
    if (d < -5 || d > 5) { bad++; printf "FAIL region %s: %s voxels, mesh volume off by %s%%\n", $1, $4, d }
    if (d < 0) d = -d; if (d > worst) { worst = d; wr = $1 }
  }
  END {
    printf "regions > 1000 voxels: %d, worst |difference| %.2f%% (region %s), %d outside 5%%\n", n, worst, wr, bad
    if (cpu > 120) { print "FAIL: slower than 2 minutes"; bad++ }
    exit bad > 0
  }' "$out/report.txt"
