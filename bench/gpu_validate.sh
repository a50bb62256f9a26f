#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# One device-machine call: build the core + CUDA kernel (CUDA + Boost headers only), run the
# GPU tests, compare GPU with CPU on cube_5med and FourLayer, time 1e6..1e8 packets, sanitize.
# Usage (on the GPU machine, repo root): bench/gpu_validate.sh DATA_DIR OUT_DIR [max_packets]
set -uo pipefail
# nvcc from PATH or CUDACXX; CUDA's default prefix where neither names one (the GPU hosts).
command -v nvcc >/dev/null || [ -n "${CUDACXX:-}" ] || export PATH=/usr/local/cuda/bin:$PATH
data=${1:?data dir with timos/}; final=${2:?output dir}; maxp=${3:-100000000}
out=$(mktemp -d)
build=${FM_BUILD_DIR:-build-gpu}
mkdir -p "$out"
log() { echo "$@" | tee -a "$out/summary.txt"; }
nvidia-smi -L | tee "$out/summary.txt"
git rev-parse --short HEAD 2>/dev/null | sed 's/^/commit /' | tee -a "$out/summary.txt"
cmake -S . -B "$build" -DFM_USE_CUDA=ON -DFM_USE_TCL=OFF -DFM_USE_VTK=OFF -DFM_USE_MPI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DFM_CUDA_PTXAS_VERBOSE=ON \
  -DFM_SHARED_DATA_DIR="$PWD/$data" >"$out/cmake.log" 2>&1 || { tail -30 "$out/cmake.log"; exit 1; }
cmake --build "$build" -j 16 --target fullmonte-run fullmonte-compare test_cuda >"$out/build.log" 2>&1 || { grep -E 'error' "$out/build.log" | head -30; exit 1; }
grep -E 'registers|stack frame' "$out/build.log" | sort | uniq -c | head -4 | tee -a "$out/summary.txt"
"$build/bin/test_cuda" --log_level=message 2>&1 | tail -8 | tee -a "$out/summary.txt"

run() {  # name kernel packets seed [threads]
  local name=$1 kern=$2 n=$3 seed=$4 case=$5 dir="$out/$1"
  local base="$data/timos/$case"
  "$build/bin/fullmonte-run" --mesh "$base.mesh" --opt "$base.opt" --source "$base.source" --packets "$n" \
    --seed "$seed" --kernel "$kern" $([ "$kern" = cpu ] && echo --threads 16) --quiet --output "$dir" >/dev/null 2>"$dir.err" || { log "$name FAILED: $(cat $dir.err)"; return; }
  python3 - "$dir/summary.json" "$name" <<'PY' | tee -a "$out/summary.txt"
import json, sys
s = json.load(open(sys.argv[1])); L = s["ledger"]
print(f'{sys.argv[2]:28s} {s["packets"]:>10d} {s["seconds"]:8.3f}s {s["packets_per_second"]:12.0f}/s {s["steps_per_second"]:.3e} steps/s absorbed {L["absorbed"]:.5f} exited {L["exited"]:.5f} abnormal {L["abnormal"]:.2e} imbalance {L["imbalance"]:.1e}')
PY
}
l1() { log "L1 $1 vs $2: $("$build/bin/fullmonte-compare" "$out/$1/fluence.txt" "$out/$2/fluence.txt")"; }

for case in cube_5med/cube_5med fourlayer/FourLayer; do
  c=$(basename $case)
  for n in ${CPU_SIZES:-1000000}; do  # CPU references (16 threads of the device host)
    run ${c}_cpu_${n}_s1 cpu $n 1 $case
    run ${c}_cpu_${n}_s2 cpu $n 2 $case
  done
  for n in ${GPU_SIZES:-1000000 10000000 100000000}; do
    [ "$n" -le "$maxp" ] || continue
    run ${c}_gpu_${n}_s1 cuda $n 1 $case
    run ${c}_gpu_${n}_s2 cuda $n 2 $case
    l1 ${c}_gpu_${n}_s1 ${c}_gpu_${n}_s2
  done
  for n in ${CPU_SIZES:-1000000}; do
    l1 ${c}_cpu_${n}_s1 ${c}_cpu_${n}_s2
    l1 ${c}_cpu_${n}_s1 ${c}_gpu_${n}_s1
    l1 ${c}_cpu_${n}_s1 ${c}_gpu_${n}_s2
  done
  rm -f "$out"/${c}_*/volume_energy.txt "$out"/${c}_*/surface_exit.txt
done
if [ "${SANITIZE:-1}" = 1 ] && command -v compute-sanitizer >/dev/null; then
  base="$data/timos/cube_5med/cube_5med"
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool --error-exitcode 3 "$build/bin/fullmonte-run" --mesh $base.mesh --opt $base.opt \
      --source $base.source --packets 20000 --kernel cuda --quiet --output "$out/san_$tool" >"$out/san_$tool.log" 2>&1
    log "compute-sanitizer $tool: exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/san_$tool.log" | head -1)"
  done
fi
# what comes back: the summary, and everything else as one archive
find "$out" -name fluence.txt -delete
mkdir -p "$final"
cp "$out/summary.txt" "$final/"
tar czf "$final/details.tgz" -C "$out" .
