#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# MCML per-photon records on the GPU (fullmonte-mcml --kernel cuda --records; docs/DETECTORS.md
# "MCML"):
#  - test_cuda_mcml_records (record weights = Rd/Tt of the same run, no history changed, GPU vs
#    CPU records within statistics, truncation = the first N, reweighting vs a fresh run, the
#    command line), test_cuda_detectors (the mesh detectors share the record code) and
#    test_mcml_records (CPU side);
#  - the seven-layer skin, 1e8 photons on the GPU: without records, with --records (10^6 kept,
#    the rest refilled), and with --records --max-detected 10^7, alternated twice (the run's
#    lines: seconds of the run, records read back and refilled included, and of its GPU kernel;
#    its records lines);
#  - compute-sanitizer memcheck and racecheck of a small recording run that truncates (refill).
# Usage (on the GPU machine, repo root): bench/gpu_mcml_records.sh [DATA_DIR]
#   DATA_DIR (default $FM_DEVICE_DATA or .device-data) holds mcml/skin7/7layerskin_600nm.mci.
#   Builds with CUDA (no VTK/Tcl/MPI/Python) in ${FM_BUILD_DIR:-build-gpu}; logs also under $OUT,
#   the runs' outputs (.mco, .fmd: up to 1 GB) in ${FM_WORK_DIR:-/tmp/fm_mcml_records}.
#   About 4-6 minutes with a cold build directory on 16 cores.
set -uo pipefail
command -v nvcc >/dev/null || [ -n "${CUDACXX:-}" ] || export PATH=/usr/local/cuda/bin:$PATH
data=${1:-${FM_DEVICE_DATA:-.device-data}}
build=${FM_BUILD_DIR:-build-gpu}
out=${OUT:-$(mktemp -d)}
dir=${FM_WORK_DIR:-/tmp/fm_mcml_records}
mkdir -p "$dir" "$out/mcml_records"
nvidia-smi -L
cmake -S . -B "$build" -DFM_USE_CUDA=ON -DFM_USE_TCL=OFF -DFM_USE_VTK=OFF -DFM_USE_MPI=OFF -DFM_USE_PYTHON=OFF \
  -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/cmake.log" 2>&1 || { tail -30 "$out/cmake.log"; exit 1; }
cmake --build "$build" -j 16 --target fullmonte-mcml test_cuda_mcml_records test_cuda_detectors test_mcml_records \
  >"$out/build.log" 2>&1 || { grep -E 'error' "$out/build.log" | head -30; exit 1; }
for t in test_cuda_mcml_records test_cuda_detectors test_mcml_records; do
  "$build/bin/$t" --log_level=message > "$out/$t.txt" 2>&1
  echo "$t: exit $?"
  grep -vE '^(Running|Entering|Leaving|Test case|Test suite)' "$out/$t.txt" | tail -40
done
skin="$data/mcml/skin7/7layerskin_600nm.mci"
[ -f "$skin" ] || { echo "no $skin: skipping the skin timings"; exit 0; }
"$(dirname "$0")/skin_mci.sh" "$skin" 100000000 skin_1e8 > "$dir/skin_1e8.mci"
"$(dirname "$0")/skin_mci.sh" "$skin" 20000 skin_2e4 > "$dir/skin_2e4.mci"
for i in 1 2; do
  for mode in off kept1e6 kept1e7; do
    extra=()
    [ $mode = kept1e6 ] && extra=(--records)
    [ $mode = kept1e7 ] && extra=(--records --max-detected 10000000)
    /usr/bin/time -f "  wall %e s, max RSS %M kB" "$build/bin/fullmonte-mcml" "$dir/skin_1e8.mci" --kernel cuda --quiet \
      --output-dir "$dir/cuda_$mode$i" "${extra[@]}" > "$out/mcml_records/cuda_$mode$i.log" 2>&1
    echo "records $mode, round $i (exit $?):"
    grep -E '^run |GPU kernel|records:|wall' "$out/mcml_records/cuda_$mode$i.log"
  done
  rm -rf "$dir"/cuda_*"$i"
done
if command -v compute-sanitizer >/dev/null; then
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool --error-exitcode 3 "$build/bin/fullmonte-mcml" "$dir/skin_2e4.mci" --kernel cuda \
      --quiet --records --max-detected 100 --output-dir "$dir/san_$tool" > "$out/mcml_records/san_$tool.log" 2>&1
    echo "compute-sanitizer $tool (MCML records, 2e4 photons, 100 kept): exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/mcml_records/san_$tool.log" | head -1)"
  done
fi
