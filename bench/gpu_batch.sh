#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A batch on the GPUs of one host: RUNS point sources inside cube_5med, PACKETS each, on GPU 0
# alone and on every GPU (runs handed to whichever GPU is free, mesh uploaded once per GPU);
# runs per second, the speedup, and the L1 distance between the two fluence matrices (same seed:
# rounding of double atomics only). Usage: bench/gpu_batch.sh DATA OUT   (env RUNS=32 PACKETS=1e7)
set -uo pipefail
# nvcc from PATH or CUDACXX; CUDA's default prefix where neither names one (the GPU hosts).
command -v nvcc >/dev/null || [ -n "${CUDACXX:-}" ] || export PATH=/usr/local/cuda/bin:$PATH
data=$1; out=$2
build=${FM_BUILD_DIR:-build-scale}
runs=${RUNS:-32}; packets=${PACKETS:-10000000}
mkdir -p "$out"
nvidia-smi -L
[ "${FM_REUSE_BUILD:-0}" = 1 ] && [ -x $build/bin/fullmonte-run ] || cmake -S . -B $build -DFM_USE_CUDA=ON -DFM_USE_TCL=OFF -DFM_USE_VTK=OFF -DFM_USE_MPI=OFF -DFM_BUILD_TESTS=OFF \
  -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null 2>&1 && cmake --build $build -j 32 --target fullmonte-run fullmonte-compare >/dev/null 2>&1 || { echo build failed; exit 1; }
b="$data/timos/cube_5med/cube_5med"
# Sources on a grid inside the [-5, 5]^3 cube, one per row of one .source file.
python3 -c "
n=$runs; print(n)
for i in range(n):
    print(1, -3 + 6 * (i % 4) / 3, -3 + 6 * ((i // 4) % 4) / 3, -2 + 4 * (i // 16) / max(1, (n - 1) // 16), $packets)
" > "$out/cands.source"
for dev in 0 all; do
  $build/bin/fullmonte-run --mesh $b.mesh --opt $b.opt --batch-sources "$out/cands.source" --seed 1 \
    --kernel cuda --devices $dev --quiet --output "$out/batch_$dev" | head -1
  python3 -c "
import json; s=json.load(open('$out/batch_$dev/summary.json'))
print(f'devices=$dev {s[\"kernel\"]}: {s[\"runs\"]} runs in {s[\"seconds\"]:.2f} s = {s[\"runs\"]/s[\"seconds\"]:.2f} runs/s, {s[\"packets_per_second\"]/1e6:.1f}M packets/s')"
done
python3 -c "
import json; a=json.load(open('$out/batch_0/summary.json')); b=json.load(open('$out/batch_all/summary.json'))
print(f'speedup all GPUs / GPU 0: {a[\"seconds\"]/b[\"seconds\"]:.2f}x')"
echo "matrices GPU 0 vs all GPUs: $($build/bin/fullmonte-compare "$out/batch_0/fluence_matrix.fmm" "$out/batch_all/fluence_matrix.fmm")"
