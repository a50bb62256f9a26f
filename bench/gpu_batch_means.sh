#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The GPU cost of the standard errors (batch means, docs/USER_GUIDE.md): kernel time of the same
# run with --batches 1 (off), the default (10) and 20, each twice (the B = 1 pair gives the
# timing noise), and the normalised L1 distance of the fluence between them (same seed: the
# batches change only where launches end, so it is ~1e-15, far below a change of seed). Also
# runs the GPU standard-error test.
# Usage (on the GPU machine, repo root): bench/gpu_batch_means.sh DATA_DIR [packets]
#   DATA_DIR holds timos/cube_5med/cube_5med.{mesh,opt,source} (shared/data).
set -euo pipefail
command -v nvcc >/dev/null || [ -n "${CUDACXX:-}" ] || export PATH=/usr/local/cuda/bin:$PATH
data=${1:?data dir with timos/}; n=${2:-10000000}
build=${FM_BUILD_DIR:-build-gpu}
out=$(mktemp -d)
cmake -S . -B "$build" -DFM_USE_CUDA=ON -DFM_USE_TCL=OFF -DFM_USE_VTK=OFF -DFM_USE_MPI=OFF \
  -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/cmake.log" 2>&1 || { tail -30 "$out/cmake.log"; exit 1; }
cmake --build "$build" -j 16 --target fullmonte-run fullmonte-compare test_cuda_batch_means >"$out/build.log" 2>&1 ||
  { grep -E 'error' "$out/build.log" | head -30; exit 1; }
"$build/bin/test_cuda_batch_means" --log_level=message 2>&1 | tail -8
base="$data/timos/cube_5med/cube_5med"
kernel_seconds() { python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["kernel_seconds"], s["seconds"], json.dumps(s.get("standard_error") and s["standard_error"]["ledger"]["absorbed"]))' "$1"; }
for b in 1 10 20 1 10 20; do
  dir="$out/b$b.$RANDOM"
  "$build/bin/fullmonte-run" --mesh "$base.mesh" --opt "$base.opt" --source "$base.source" --packets "$n" \
    --seed 1 --kernel cuda --batches "$b" --quiet --output "$dir" >/dev/null
  echo "batches $b: kernel_seconds seconds absorbed_stderr = $(kernel_seconds "$dir/summary.json")"
  last[$b]=$dir
done
echo "L1 fluence B=1 vs B=10: $("$build/bin/fullmonte-compare" "${last[1]}/fluence.txt" "${last[10]}/fluence.txt")"
echo "L1 fluence B=1 vs B=20: $("$build/bin/fullmonte-compare" "${last[1]}/fluence.txt" "${last[20]}/fluence.txt")"
"$build/bin/fullmonte-run" --mesh "$base.mesh" --opt "$base.opt" --source "$base.source" --packets "$n" \
  --seed 2 --kernel cuda --batches 1 --quiet --output "$out/seed2" >/dev/null
echo "L1 fluence seed 1 vs seed 2 (B=1, the noise scale): $("$build/bin/fullmonte-compare" "${last[1]}/fluence.txt" "$out/seed2/fluence.txt")"
