#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The Digimouse inputs of the clinical-scale GPU benchmarks (issue 29), made from the atlas in
# ../shared/data/anatomy/digimouse on this machine and carried to the GPU machine:
#   OUT/dm_morton.mesh.gz   the atlas meshed by fullmonte-mesh at its defaults (996,468 tetras,
#                           21 regions = the atlas labels, tetras already in Morton order);
#   OUT/digimouse.opt       the optical properties of digimouse_tissues.json per label (1/mm);
#   OUT/digimouse.source    a point source at bench/digimouse/liver.source (in the liver);
#   OUT/liver_grid.source   bench/digimouse/liver_grid.source (125 points around it, the
#                           planning-loop candidates).
# Every source point is checked to lie inside the mesh (fullmonte-run refuses one outside).
# Usage: bench/digimouse_inputs.sh [OUT] [DATA] [BUILD_DIR]   (defaults .device-data,
#        ../shared/data, build); an existing OUT/dm_morton.mesh.gz is kept.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/.device-data}; data=${2:-$root/../shared/data}; build=${3:-$root/build}
atlas=$data/anatomy/digimouse
py=/usr/bin/python3; [ -x "$py" ] || py=python3
mkdir -p "$out"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
if [ ! -f "$out/dm_morton.mesh.gz" ]; then
  "$build/bin/fullmonte-mesh" "$atlas/digimouse_labels.nii.gz" -o "$tmp/dm.mesh" >"$tmp/report.txt"
  gzip -c "$tmp/dm.mesh" >"$out/dm_morton.mesh.gz"
else
  zcat "$out/dm_morton.mesh.gz" >"$tmp/dm.mesh"
fi
"$py" - "$atlas/digimouse_tissues.json" "$out/digimouse.opt" <<'PY'
import json, sys
t = {e["label"]: e for e in json.load(open(sys.argv[1]))["tissues"]}
n = max(t)
with open(sys.argv[2], "w") as f:
    f.write(f"1\n{n}\n")
    for k in range(1, n + 1):
        e = t[k]
        f.write(f'{e["mua_per_mm"]} {e["mus_per_mm"]} {e["g"]} {e["n"]}\n')
    f.write("1\n1.0\n")  # boundary type 1: the exterior (air) index follows
PY
cp "$root/bench/digimouse/liver.source" "$out/digimouse.source"
cp "$root/bench/digimouse/liver_grid.source" "$out/liver_grid.source"
# Inside the mesh: a 1000-packet CPU run from every candidate (fullmonte-run names any outside).
"$build/bin/fullmonte-run" --mesh "$tmp/dm.mesh" --opt "$out/digimouse.opt" --batch-sources \
  "$out/liver_grid.source" --packets 1000 --kernel cpu --quiet --output "$tmp/check" >/dev/null
echo "digimouse_inputs: $out ready"
