#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Detecting GPU runs in the cells' layouts (Kernels/Core/CellLayout.hpp): a detecting run and its
# replay take the layout a run without detectors takes (Auto: compact planes on meshes beyond the
# L2), one device call, one GPU.
#  1. tests: test_cuda_detectors (compact vs records within statistics, a compact detecting run's
#     tallies equal to the compact plain run's, replays) and test_cuda_time_gates (region maps
#     kept on the device between runs);
#  2. dm_morton (996k tetras, the Digimouse source in the liver, two spheres of 12 mm around
#     points of the body as detectors), ROUNDS rounds of PACKETS packets: a detecting run with
#     FM_CUDA_CELL_LAYOUT=record, =compact and unset (Auto), and a plain compact run of the same
#     seed: kernel s, process s, absorbed fraction, detections; checks that the compact detecting
#     run's absorbed weight equals the plain compact run's (same histories, relative 1e-9), that
#     Auto's equals compact's, and that record's is within |z| < 4 of compact's (bound 0.25/n);
#  3. the replay (Auto) of the Auto run's records: every packet reproduces (fullmonte-run fails
#     otherwise), whole-command time;
#  4. the .fmd names the layout (cells): the record run's records (no cells line, as files of
#     earlier builds) replay under Auto, compact on this mesh, in the records' layout and every
#     packet reproduces; the compact run's with FM_CUDA_CELL_LAYOUT=record are refused with an
#     error naming the file and both layouts.
# Usage (GPU machine, repo root): bench/gpu_detect_layout.sh [DATA] [OUT]; DATA holds
# dm_morton.mesh.gz, digimouse.opt, digimouse.source (default $FM_DEVICE_DATA, else .device-data).
# Env: PACKETS (5e7), ROUNDS (2), FM_BUILD_DIR (build-detect-layout), FM_REUSE_BUILD=1, JOBS (16),
# CUDA_ARCH (90). One device call (its duration: docs/PERFORMANCE.md, "Benchmark: detecting GPU
# runs in the cells' layouts"). Prints a table; exit 1 when a check fails.
set -uo pipefail
command -v nvcc >/dev/null || [ -n "${CUDACXX:-}" ] || export PATH=/usr/local/cuda/bin:$PATH
data=$(cd "${1:-${FM_DEVICE_DATA:-.device-data}}" && pwd) || exit 1
out=${2:-${OUT:-$(mktemp -d)}}; mkdir -p "$out"; out=$(cd "$out" && pwd)
packets=${PACKETS:-50000000}; rounds=${ROUNDS:-2}
build=${FM_BUILD_DIR:-build-detect-layout}
res=$out/gpu_detect_layout.txt; : > "$res"
say() { echo "$@" | tee -a "$res"; }
py=$(command -v python3 || command -v /usr/bin/python3)
json() { "$py" -c "import json,sys; s=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
fail=0
nvidia-smi -L | tee -a "$res"
say "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
t_start=$(date +%s)

if ! { [ "${FM_REUSE_BUILD:-0}" = 1 ] && [ -x "$build/bin/fullmonte-run" ] && [ -x "$build/bin/test_cuda_detectors" ] &&
  [ -x "$build/bin/test_cuda_time_gates" ]; }; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DFM_USE_CUDA=ON -DFM_USE_TCL=OFF -DFM_USE_VTK=OFF \
    -DFM_USE_MPI=OFF -DFM_USE_PYTHON=OFF -DFM_USE_PLANNING=OFF -DFM_USE_CGAL=OFF -DFM_USE_HDF5=OFF \
    -DFM_BUILD_TESTS=ON -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" >"$out/cmake.log" 2>&1 ||
    { tail -30 "$out/cmake.log"; exit 1; }
  cmake --build "$build" -j "${JOBS:-16}" --target fullmonte-run test_cuda_detectors test_cuda_time_gates \
    >"$out/build.log" 2>&1 || { grep -E 'error' "$out/build.log" | head -30; exit 1; }
fi
bin=$build/bin
say "build done at $(( $(date +%s) - t_start )) s"

say "== 1. tests"
for t in test_cuda_detectors test_cuda_time_gates; do
  if timeout 200 "$bin/$t" --log_level=message >"$out/$t.log" 2>&1; then say "$t: passed"; else
    say "$t: FAILED"; tail -20 "$out/$t.log"; fail=1; fi
  grep -hE "record / compact|records' layout|region [0-9]+:|batch run" "$out/$t.log" | tee -a "$res"
done

say "== 2. dm_morton, detecting runs by layout, $packets packets"
work=$(mktemp -d /tmp/gpu_detect_layout.XXXX)
f=$data/dm_morton.mesh.gz; [ -f "$f" ] || f=$data/dm_morton.mesh
[ -f "$f" ] || { say "dm_morton: not in $data"; exit 1; }
case $f in *.gz) zcat "$f" > "$work/dm.mesh" ;; *) cp "$f" "$work/dm.mesh" ;; esac
"$bin/fullmonte-run" --mesh "$work/dm.mesh" --save-mesh "$work/dm.fmb" >/dev/null 2>&1 || { say "dm_morton: conversion FAILED"; exit 1; }
rm -f "$work/dm.mesh"
m=(--mesh "$work/dm.fmb" --opt "$data/digimouse.opt" --source "$data/digimouse.source" --quiet --batches 1 --seed 1)
disks='16.9,51.6,10,12;16.9,30,10,12'
det=(--detectors "$disks" --max-detected 100000)
# One process: prints "kernel_s process_s absorbed_fraction detected" (FAIL on error).
run() {  # LAYOUT DIR ARGS...
  local layout=$1 dir=$2; shift 2
  local t0; t0=$(date +%s.%N)
  if [ "$layout" = auto ]; then env -u FM_CUDA_CELL_LAYOUT "$bin/fullmonte-run" "${m[@]}" --output "$dir" "$@" >"$dir.log" 2>&1
  else FM_CUDA_CELL_LAYOUT=$layout "$bin/fullmonte-run" "${m[@]}" --output "$dir" "$@" >"$dir.log" 2>&1; fi ||
    { echo FAIL; tail -5 "$dir.log" >&2; return 1; }
  local t1; t1=$(date +%s.%N)
  json "$dir/summary.json" "'%.4f %.3f %.12f %s' % (s['kernel_seconds'], $t1 - $t0, s['ledger']['absorbed'] / s['ledger']['launched'], (s.get('detectors') or {}).get('detected', '-'))"
}
printf '%-6s %-18s %10s %10s %16s %12s\n' round variant kernel_s process_s absorbed detected | tee -a "$res"
for r in $(seq 1 "$rounds"); do
  declare -A v=()
  for variant in record:det compact:det auto:det compact:plain; do
    layout=${variant%:*}
    if [ "${variant#*:}" = det ]; then v[$variant]=$(run "$layout" "$work/r$r-$layout-det" --packets "$packets" --kernel cuda "${det[@]}")
    else v[$variant]=$(run "$layout" "$work/r$r-$layout-plain" --packets "$packets" --kernel cuda); fi
    read -r k p a d <<<"${v[$variant]}"
    printf '%-6s %-18s %10s %10s %16s %12s\n' "$r" "$variant" "$k" "${p:--}" "${a:--}" "${d:--}" | tee -a "$res"
    [ "$k" = FAIL ] && fail=1
  done
  a_cd=$(echo "${v[compact:det]}" | cut -d' ' -f3); a_cp=$(echo "${v[compact:plain]}" | cut -d' ' -f3)
  a_ad=$(echo "${v[auto:det]}" | cut -d' ' -f3); a_rd=$(echo "${v[record:det]}" | cut -d' ' -f3)
  if [ -n "$a_cd" ] && [ -n "$a_cp" ] && [ -n "$a_ad" ] && [ -n "$a_rd" ]; then
    same=$(awk -v a="$a_cd" -v b="$a_cp" 'BEGIN { d = (a - b) / b; print (d < 1e-9 && d > -1e-9) ? "yes" : "NO" }')
    auto=$(awk -v a="$a_cd" -v b="$a_ad" 'BEGIN { d = (a - b) / b; print (d < 1e-9 && d > -1e-9) ? "yes" : "NO" }')
    z=$(awk -v p="$a_rd" -v q="$a_cd" -v n="$packets" 'BEGIN { printf "%.2f", (p - q) / sqrt(0.5 / n) }')
    say "round $r: compact detecting = compact plain: $same; Auto = compact: $auto; record vs compact z $z"
    [ "$same" = yes ] && [ "$auto" = yes ] && awk -v z="$z" 'BEGIN { exit !(z < 4 && z > -4) }' || fail=1
  else fail=1; fi
done

say "== 3. replay (Auto) of the Auto run's records"
t0=$(date +%s.%N)
if env -u FM_CUDA_CELL_LAYOUT "$bin/fullmonte-run" "${m[@]}" --packets "$packets" --kernel cuda "${det[@]}" \
     --replay "$work/r1-auto-det/detected.fmd" --output "$work/replay" >"$work/replay.log" 2>&1; then
  say "replay: every packet reproduced, $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s (whole command)"
else say "replay: FAILED"; tail -5 "$work/replay.log" | tee -a "$res"; fail=1; fi
say "== 4. replays follow the file's cells: records-layout records under Auto (compact here), and compact"
say "   records with FM_CUDA_CELL_LAYOUT=record (refused, naming the file and both layouts)"
header() { head -c 8192 "$1" | tr -d '\000' | sed '/^data$/q'; }  # the .fmd's text header
header "$work/r1-compact-det/detected.fmd" | grep -q '^cells compact$' &&
  ! header "$work/r1-record-det/detected.fmd" | grep -q '^cells' &&
  say "headers: compact records say 'cells compact', records-layout records have no cells line" ||
  { say "headers: FAILED (cells lines)"; fail=1; }
t0=$(date +%s.%N)
if env -u FM_CUDA_CELL_LAYOUT "$bin/fullmonte-run" "${m[@]}" --packets "$packets" --kernel cuda "${det[@]}" \
     --replay "$work/r1-record-det/detected.fmd" --output "$work/replay-record" >"$work/replay-record.log" 2>&1; then
  say "replay (Auto) of records-layout records: every packet reproduced, $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s"
else say "replay (Auto) of records-layout records: FAILED"; tail -5 "$work/replay-record.log" | tee -a "$res"; fail=1; fi
if FM_CUDA_CELL_LAYOUT=record "$bin/fullmonte-run" "${m[@]}" --packets "$packets" --kernel cuda "${det[@]}" \
     --replay "$work/r1-compact-det/detected.fmd" --output "$work/replay-forced" >"$work/replay-forced.log" 2>&1; then
  say "replay of compact records with FM_CUDA_CELL_LAYOUT=record: ran (FAILED: it must be refused)"; fail=1
elif grep -q "r1-compact-det/detected.fmd.*compact cell layout.*FM_CUDA_CELL_LAYOUT=record" "$work/replay-forced.log"; then
  say "replay of compact records with FM_CUDA_CELL_LAYOUT=record: refused: $(grep -o 'the records were made.*' "$work/replay-forced.log" | head -c 160)"
else say "replay of compact records with FM_CUDA_CELL_LAYOUT=record: FAILED (another error)"; tail -3 "$work/replay-forced.log" | tee -a "$res"; fail=1; fi
rm -rf "$work"
say "done at $(( $(date +%s) - t_start )) s; $([ $fail = 0 ] && echo 'all checks passed' || echo 'a check FAILED')"
exit $fail
