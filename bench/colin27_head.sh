#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Benchmark input (not a test): the Colin27 adult head (MCX's mcxlab/examples/colin27_v3.mat:
# 181 x 217 x 181 voxels of 1 mm, labels 1-6 = scalp, skull, CSF, grey matter, white matter, air
# cavities) meshed by fullmonte-mesh at its default settings (2.09M tetras), written as
# OUT/colin27.mesh.gz for bench/big_mesh.sh mmc and bench/gpu_*.sh. The optical properties
# (bench/colin27/colin27.opt, 1/mm) are those of MCX's Colin27 example; two point sources:
# bench/colin27/grey.source (in grey matter, 35 mm deep) and scalp.source (2.3 mm under the
# scalp at the top of the head).
# Usage: bench/colin27_head.sh COLIN27.mat|COLIN27.nii[.gz] OUT [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
in=${1:?COLIN27.mat or .nii[.gz]}; out=${2:?OUT}; build=${3:-$root/build}
[ -f "$in" ] || { echo "colin27_head: $in not found"; exit 1; }
mkdir -p "$out"
nii=$in
case $in in
  *.mat) nii=$out/colin27.nii.gz; /usr/bin/python3 "$root/bench/mat_labels_to_nii.py" "$in" "$nii" ;;
esac
echo "colin27_head: $(date -u +%F) $(uname -n), $(nproc) cores, commit $(git -C "$root" rev-parse --short HEAD)"
TIMEFORMAT='mesher wall %R s, CPU %U s'
time "$build/bin/fullmonte-mesh" "$nii" -o "$out/colin27.mesh" --quiet | tee "$out/report.txt"
# Both sources must lie in the mesh (fullmonte-run refuses a source outside it).
for s in grey scalp; do
  "$build/bin/fullmonte-run" --mesh "$out/colin27.mesh" --opt "$root/bench/colin27/colin27.opt" \
    --source "$root/bench/colin27/$s.source" --packets 2000 --kernel cpu --output "$out/check_$s" | tail -2
done
gzip -f "$out/colin27.mesh"
echo "wrote $out/colin27.mesh.gz"
