#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The time-resolved tallies on the GPU (docs/TIME_DOMAIN.md):
#  - test_cuda_time_gates (GPU bins sum to the GPU CW tallies; gating changes no history; per-gate
#    totals equal the CPU's within their standard errors) and test_time_resolved (CPU physics);
#  - kernel time of one model with gates off, with 50 gates on the exit tally only
#    (--no-gated-volume) and with 50 gates on both, alternated 3 times (every time printed, so
#    the noise shows), 50 gates on both with 20 batches (the standard errors per element and of
#    the per-gate totals: one fold per batch), and the per-gate totals with their standard errors
#    (tpsf.txt).
# Usage (on the GPU machine, repo root): bench/gpu_time_gates.sh DATA_DIR [packets=1e7]
#   DATA_DIR holds timos/cube_5med/cube_5med.{mesh,opt,source} (shared/data). Results also go
#   under $OUT (when set).
set -euo pipefail
command -v nvcc >/dev/null || [ -n "${CUDACXX:-}" ] || export PATH=/usr/local/cuda/bin:$PATH
data=${1:?data dir with timos/}; n=${2:-10000000}
build=${FM_BUILD_DIR:-build-gpu}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
nvidia-smi -L
cmake -S . -B "$build" -DFM_USE_CUDA=ON -DFM_USE_TCL=OFF -DFM_USE_VTK=OFF -DFM_USE_MPI=OFF -DFM_USE_PYTHON=OFF \
  -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/cmake.log" 2>&1 || { tail -30 "$out/cmake.log"; exit 1; }
cmake --build "$build" -j 16 --target fullmonte-run test_cuda_time_gates test_time_resolved >"$out/build.log" 2>&1 ||
  { grep -E 'error' "$out/build.log" | head -30; exit 1; }
"$build/bin/test_cuda_time_gates" --log_level=message 2>&1 | tail -60 | tee "$out/test_cuda_time_gates.txt"
"$build/bin/test_time_resolved" --log_level=message 2>&1 | tail -30 | tee "$out/test_time_resolved.txt"
base="$data/timos/cube_5med/cube_5med"
run() {  # name, extra options
  local name=$1
  shift
  "$build/bin/fullmonte-run" --mesh "$base.mesh" --opt "$base.opt" --source "$base.source" --packets "$n" \
    --kernel cuda --quiet --output "$out/$name" "$@" >/dev/null
  python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(f"{sys.argv[2]:>10}: kernel_seconds {s[\"kernel_seconds\"]:.4f} download_seconds {s[\"download_seconds\"]:.4f} seconds {s[\"seconds\"]:.3f}")' \
    "$out/$name/summary.json" "$name"
}
for i in 1 2 3; do
  run cw
  run exitgates --time-gates 0,1,0.02 --no-gated-volume
  run allgates --time-gates 0,1,0.02
  run allgates_b20 --time-gates 0,1,0.02 --batches 20
done | tee "$out/timings.txt"
echo "per-gate totals of the gated GPU run with 20 batches (fractions of the launched weight, standard errors):"
head -8 "$out/allgates_b20/tpsf.txt"
tail -2 "$out/allgates_b20/tpsf.txt"
