#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The GPU cost of the standard errors (batch means, docs/USER_GUIDE.md) and their test:
#  - test_cuda_batch_means (GPU standard errors against the CPU's; batches leave the totals);
#  - batch_means_bench: packet-kernel time of the same run with batches 1 (off) and B (10, 20),
#    alternated 5 times (medians and every time, so the noise shows), and the L1 distance of the
#    volume tallies between them (same seed: far below a change of seed);
#  - one fullmonte-run with the default batches, showing summary.json "standard_error";
#  - MCML on the GPU (a one-layer slab, 1e6 photons): wall time with --batches 1 and 10.
# Usage (on the GPU machine, repo root): bench/gpu_batch_means.sh DATA_DIR [packets=1e7]
#   DATA_DIR holds timos/cube_5med/cube_5med.{mesh,opt,source} (shared/data).
set -euo pipefail
command -v nvcc >/dev/null || [ -n "${CUDACXX:-}" ] || export PATH=/usr/local/cuda/bin:$PATH
data=${1:?data dir with timos/}; n=${2:-10000000}
build=${FM_BUILD_DIR:-build-gpu}
out=$(mktemp -d)
nvidia-smi -L
cmake -S . -B "$build" -DFM_USE_CUDA=ON -DFM_USE_TCL=OFF -DFM_USE_VTK=OFF -DFM_USE_MPI=OFF \
  -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/cmake.log" 2>&1 || { tail -30 "$out/cmake.log"; exit 1; }
cmake --build "$build" -j 16 --target fullmonte-run fullmonte-mcml batch_means_bench test_cuda_batch_means >"$out/build.log" 2>&1 ||
  { grep -E 'error' "$out/build.log" | head -30; exit 1; }
"$build/bin/test_cuda_batch_means" --log_level=message 2>&1 | tail -8
base="$data/timos/cube_5med/cube_5med"
for b in 10 20; do
  "$build/bin/batch_means_bench" "$base.mesh" "$base.opt" "$base.source" "$n" cuda "$b" 5
done
"$build/bin/fullmonte-run" --mesh "$base.mesh" --opt "$base.opt" --source "$base.source" --packets "$n" \
  --kernel cuda --quiet --output "$out/run" >/dev/null
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print("kernel_seconds", s["kernel_seconds"], "standard_error", json.dumps(s["standard_error"]))' "$out/run/summary.json"
mkdir -p "$out/mcml"
printf '1.0\n1\nslab.mco A\n1000000\n0.01 0.01\n40 50 10\n1\n1.0\n1.37 1 100 0.9 0.1\n1.0\n' >"$out/mcml/slab.mci"
TIMEFORMAT="  MCML wall %R s"
for b in 1 10 1 10; do
  echo "MCML --batches $b:"
  time "$build/bin/fullmonte-mcml" "$out/mcml/slab.mci" --kernel cuda --batches "$b" --quiet | grep -E "photons in|standard errors"
done
