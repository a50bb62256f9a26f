#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# MCML's time-resolved tallies on the GPU (docs/TIME_DOMAIN.md "MCML"):
#  - test_cuda_mcml_time (GPU time bins sum to the GPU CW tallies; gating changes no history;
#    Rd, Tt, A per time bin equal the CPU kernel's within statistics) and test_cuda_time_gates
#    (mesh kernel: per-gate totals and their standard errors against the CPU's);
#  - the seven-layer skin, 1e8 photons on the GPU, gates off and with 100 gates of 2 ps
#    (--time-gates 0,0.2,0.002), alternated twice (every kernel time printed), and 1e6 photons
#    gated on the CPU beside the GPU's RAT per gate (head of NAME_time.txt).
# Usage (on the GPU machine, repo root): bench/gpu_mcml_time.sh [DATA_DIR]
#   DATA_DIR (default $FM_DEVICE_DATA or .device-data) holds mcml/skin7/7layerskin_600nm.mci.
#   Builds with CUDA (no VTK/Tcl/MPI/Python) in ${FM_BUILD_DIR:-build-gpu}; results also under $OUT.
#   About 3-4 minutes with a warm build directory (the build itself: a few minutes on 16 cores).
set -euo pipefail
command -v nvcc >/dev/null || [ -n "${CUDACXX:-}" ] || export PATH=/usr/local/cuda/bin:$PATH
data=${1:-${FM_DEVICE_DATA:-.device-data}}
build=${FM_BUILD_DIR:-build-gpu}
out=${OUT:-$(mktemp -d)}
mkdir -p "$out/mcml_time"
nvidia-smi -L
cmake -S . -B "$build" -DFM_USE_CUDA=ON -DFM_USE_TCL=OFF -DFM_USE_VTK=OFF -DFM_USE_MPI=OFF -DFM_USE_PYTHON=OFF \
  -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/cmake.log" 2>&1 || { tail -30 "$out/cmake.log"; exit 1; }
cmake --build "$build" -j 16 --target fullmonte-mcml test_cuda_mcml_time test_cuda_time_gates >"$out/build.log" 2>&1 ||
  { grep -E 'error' "$out/build.log" | head -30; exit 1; }
"$build/bin/test_cuda_mcml_time" --log_level=message 2>&1 | tail -40 | tee "$out/test_cuda_mcml_time.txt"
"$build/bin/test_cuda_time_gates" --log_level=message 2>&1 | tail -12 | tee "$out/test_cuda_time_gates.txt"
skin="$data/mcml/skin7/7layerskin_600nm.mci"
[ -f "$skin" ] || { echo "no $skin: skipping the skin timings"; exit 0; }
dir="$out/mcml_time"
"$(dirname "$0")/skin_mci.sh" "$skin" 100000000 skin_1e8 > "$dir/skin_1e8.mci"
"$(dirname "$0")/skin_mci.sh" "$skin" 1000000 skin_1e6 > "$dir/skin_1e6.mci"
gates=0,0.2,0.002
for i in 1 2; do
  for mode in off on; do
    extra=(); [ $mode = on ] && extra=(--time-gates $gates)
    "$build/bin/fullmonte-mcml" "$dir/skin_1e8.mci" --kernel cuda --quiet --output-dir "$dir/cuda_$mode$i" "${extra[@]}" |
      sed -n "1p" | sed "s/^/gates $mode, round $i: /"
  done
done
"$build/bin/fullmonte-mcml" "$dir/skin_1e6.mci" --kernel cpu --quiet --output-dir "$dir/cpu_on" --time-gates $gates | sed -n 1p
for side in cuda_on1 cpu_on; do
  echo "$side: RAT per time bin (first gates; fractions of the launched photons):"
  awk '/^RAT_t/{f=1; next} f && NF==0{exit} f' "$dir/$side"/*_time.txt | head -12
done
