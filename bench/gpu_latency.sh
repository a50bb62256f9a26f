#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# GPU kernel variants against memory latency (issue 29 items 1 and 5), one device call, one GPU:
# the mesh kernel's cell layouts (FM_CUDA_CELL_LAYOUT=record, the default, split and compact:
# Kernels/Core/CellLayout.hpp) on the clinical-scale Digimouse meshes (and cube_5med, L2-resident,
# where MESHES names it), and the MCML seven-layer skin, each variant interleaved with the
# default, ROUNDS rounds of PACKETS packets; a round after the first starts only while the script
# has run less than BUDGET seconds, so one device call (600 s) always ends with the table.
# Checks beside the timings: test_cuda_cell_layout and test_compact_cells (on the Digimouse
# meshes too), both built here; the compact layout's runs under compute-sanitizer (memcheck,
# COMPACT_SANITIZE packets on each of SANITIZE_MESHES); split's absorbed fraction against the default's on the
# same seed (the same histories: relative difference < 1e-9), compact's (other planes, other
# histories) within |z| < 4 of it; the default against the CPU kernel once per mesh (other seed,
# CPU_PACKETS, |z| < 4).
# Prints a table; exit 1 when a check fails. Builds a core tree with CUDA (CMake, CUDA and Boost headers only).
# Usage (GPU machine, repo root): bench/gpu_latency.sh DATA OUT
#   DATA holds dm3.mesh.gz (2.46M tetras), dm_morton.mesh.gz (996k), digimouse.opt,
#   digimouse.source, timos/cube_5med/ and mcml/skin7/ (default: $FM_DEVICE_DATA, else .device-data).
# Env: PACKETS (1e8), ROUNDS (2), BUDGET (420), CPU_PACKETS (1e6), MESHES ("dm3 dm_morton"), VARIANTS
#      ("split compact"), COMPACT_SANITIZE (1e5; 0: none), SANITIZE_MESHES ("dm_morton cube_5med"),
#      FM_BUILD_DIR (build-latency),
#      FM_REUSE_BUILD=1, JOBS (16), CUDA_ARCH (90).
# Expected on one H100: build ~3 min, meshes to .fmb ~30 s, CPU checks and test_compact_cells
# ~1 min, sanitizer ~30 s, timed runs ~40 s a round (dm3 ~7 s a process, dm ~5 s, cube ~3 s,
# skin7 ~1 s): about 7 minutes; FM_REUSE_BUILD=1 on a warm machine saves the build.
set -uo pipefail
command -v nvcc >/dev/null || [ -n "${CUDACXX:-}" ] || export PATH=/usr/local/cuda/bin:$PATH
data=$(cd "${1:-${FM_DEVICE_DATA:-.device-data}}" && pwd) || exit 1
out=${2:?OUT}; mkdir -p "$out"; out=$(cd "$out" && pwd)
packets=${PACKETS:-100000000}; rounds=${ROUNDS:-2}; cpuN=${CPU_PACKETS:-1000000}
meshes=${MESHES:-dm3 dm_morton}; variants=${VARIANTS:-split compact}
sanitizeN=${COMPACT_SANITIZE:-100000}; sanitizeMeshes=${SANITIZE_MESHES:-dm_morton cube_5med}
build=${FM_BUILD_DIR:-build-latency}
res=$out/gpu_latency.txt; : > "$res"
say() { echo "$@" | tee -a "$res"; }
py=$(command -v python3 || command -v /usr/bin/python3)
json() { "$py" -c "import json,sys; s=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
fail=0
nvidia-smi -L | tee -a "$res"
say "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown); host threads $(nproc)"
t_start=$(date +%s)

if ! { [ "${FM_REUSE_BUILD:-0}" = 1 ] && [ -x "$build/bin/fullmonte-run" ]; }; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DFM_USE_CUDA=ON -DFM_USE_TCL=OFF -DFM_USE_VTK=OFF \
    -DFM_USE_MPI=OFF -DFM_USE_PYTHON=OFF -DFM_USE_PLANNING=OFF -DFM_USE_CGAL=OFF -DFM_USE_HDF5=OFF \
    -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" >"$out/cmake.log" 2>&1 || { tail -30 "$out/cmake.log"; exit 1; }
  cmake --build "$build" -j "${JOBS:-16}" --target fullmonte-run fullmonte-mcml test_cuda_cell_layout test_compact_cells >"$out/build.log" 2>&1 \
    || { grep -E 'error' "$out/build.log" | head -30; exit 1; }
fi
bin=$build/bin
say "build done at $(( $(date +%s) - t_start )) s"
# The layouts' own test: same histories in both on a small mesh with Fresnel and scored faces.
"$bin/test_cuda_cell_layout" --log_level=message > "$out/test_cuda_cell_layout.log" 2>&1 && say "test_cuda_cell_layout: passed" ||
  { say "test_cuda_cell_layout: FAILED"; tail -20 "$out/test_cuda_cell_layout.log"; fail=1; }
grep -hE "kernel s, record|record / compact" "$out/test_cuda_cell_layout.log" | tee -a "$res"
work=$(mktemp -d /tmp/gpu_latency.XXXX)
declare -A opt src  # per mesh: the Digimouse meshes share the atlas's optics and source
# One fullmonte-run process: prints "kernel_s absorbed" (FAIL on error). LAYOUT names the variant.
fm() {  # LAYOUT MESH DIR ARGS...
  local layout=$1 m=$2 dir=$3; shift 3
  FM_CUDA_CELL_LAYOUT=$layout "$bin/fullmonte-run" --opt "${opt[$m]}" --source "${src[$m]}" --seed 1 --quiet --output "$dir" "$@" \
    >"$dir.log" 2>&1 || { echo FAIL; return 1; }
  json "$dir/summary.json" "'%.4f %.12f' % (s.get('kernel_seconds') or s['seconds'], s['ledger']['absorbed'] / s['ledger']['launched'])"
}
# |z| of two absorbed fractions p (n packets) and q (m packets): binomial-like bound 0.25/n each.
zof() { awk -v p="$1" -v q="$2" -v n="$3" -v m="$4" 'BEGIN { printf "%.2f", (p - q) / sqrt(0.25 / n + 0.25 / m) }'; }

declare -A fmb
for m in $meshes; do
  f=$data/$m.mesh.gz; [ -f "$f" ] || f=$data/$m.mesh; [ -f "$f" ] || f=$data/timos/$m/$m.mesh
  opt[$m]=$data/digimouse.opt; src[$m]=$data/digimouse.source
  [ -f "$data/timos/$m/$m.opt" ] && { opt[$m]=$data/timos/$m/$m.opt; src[$m]=$data/timos/$m/$m.source; }
  [ -f "$f" ] || { say "mesh $m: not in $data"; fail=1; continue; }
  case $f in *.gz) zcat "$f" > "$work/$m.mesh" ;; *) cp "$f" "$work/$m.mesh" ;; esac
  "$bin/fullmonte-run" --mesh "$work/$m.mesh" --save-mesh "$work/$m.fmb" >/dev/null 2>&1 || { say "mesh $m: conversion FAILED"; fail=1; continue; }
  rm -f "$work/$m.mesh"
  fmb[$m]=$work/$m.fmb
  # CPU check of the default, once per mesh (other seed).
  c=$(FM_CUDA_CELL_LAYOUT=record "$bin/fullmonte-run" --mesh "${fmb[$m]}" --opt "${opt[$m]}" --source "${src[$m]}" --seed 77 \
        --packets "$cpuN" --kernel cpu --quiet --output "$work/${m}_cpu" >/dev/null 2>&1 &&
      json "$work/${m}_cpu/summary.json" "'%.7f' % (s['ledger']['absorbed'] / s['ledger']['launched'])") || c=FAIL
  g=$(fm record "$m" "$work/${m}_gpu_check" --mesh "${fmb[$m]}" --packets "$cpuN" --kernel cuda)
  if [ "$c" = FAIL ] || [ "${g% *}" = FAIL ]; then say "$m: CPU check FAILED"; fail=1; else
    z=$(zof "${g#* }" "$c" "$cpuN" "$cpuN")
    say "$m: absorbed GPU default ${g#* } (seed 1), CPU $c (seed 77), z $z"
    awk -v z="$z" 'BEGIN { exit !(z < 4 && z > -4) }' || { say "$m: CPU check FAILED"; fail=1; }
  fi
done
# The compact planes of these meshes (every cell's corners, shared faces exactly opposite).
FM_COMPACT_TEST_MESHES="${fmb[*]}" "$bin/test_compact_cells" --log_level=message > "$out/test_compact_cells.log" 2>&1 &&
  say "test_compact_cells (${!fmb[*]}): passed" || { say "test_compact_cells: FAILED"; tail -20 "$out/test_compact_cells.log"; fail=1; }
grep -hE "worst|z " "$out/test_compact_cells.log" | tee -a "$res"
# The compact layout under compute-sanitizer (memcheck): no error reported, the run completes.
san=$(command -v compute-sanitizer || ls "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")"/compute-sanitizer \
        /usr/local/cuda/compute-sanitizer/compute-sanitizer 2>/dev/null | head -1)
if [ "$sanitizeN" != 0 ] && [ -n "$san" ]; then
  for m in $sanitizeMeshes; do
    [ -n "${fmb[$m]:-}" ] || continue
    FM_CUDA_CELL_LAYOUT=compact "$san" --tool memcheck --error-exitcode 9 "$bin/fullmonte-run" --mesh "${fmb[$m]}" \
      --opt "${opt[$m]}" --source "${src[$m]}" --seed 3 --packets "$sanitizeN" --kernel cuda --quiet --output "$work/${m}_sanitize" \
      > "$out/sanitize_$m.log" 2>&1 && say "compute-sanitizer compact $m: clean" ||
      { say "compute-sanitizer compact $m: FAILED"; tail -20 "$out/sanitize_$m.log"; fail=1; }
  done
elif [ "$sanitizeN" != 0 ]; then say "compute-sanitizer: not found"; fail=1; fi
say "set-up done at $(( $(date +%s) - t_start )) s"

# Timed: per round, per mesh, the default then each variant.
declare -A kern absb upl
done_rounds=0
for r in $(seq 1 "$rounds"); do
  if [ "$r" -gt 1 ] && [ $(( $(date +%s) - t_start )) -gt "${BUDGET:-420}" ]; then
    say "rounds $r-$rounds skipped: over BUDGET (${BUDGET:-420} s)"; break
  fi
  done_rounds=$r
  for m in "${!fmb[@]}"; do
    for v in record $variants; do
      x=$(fm "$v" "$m" "$work/${m}_${v}_$r" --mesh "${fmb[$m]}" --packets "$packets" --kernel cuda) || fail=1
      say "round $r $m $v: kernel s, absorbed: $x"
      kern[$m,$v]="${kern[$m,$v]:-} ${x% *}"; absb[$m,$v,$r]=${x#* }
      # Upload (the layout's arrays built on the host and copied): what a layout costs per process.
      upl[$m,$v]="${upl[$m,$v]:-} $(json "$work/${m}_${v}_$r/summary.json" "'%.3f' % s.get('upload_seconds', float('nan'))" 2>/dev/null || echo nan)"
    done
  done
  # The seven-layer skin, MCML mode (the default kernel: its variants come here when there are some).
  skin=$data/mcml/skin7/7layerskin_600nm.mci
  if [ -f "$skin" ]; then
    [ -f "$work/skin.mci" ] || "$(dirname "$0")/skin_mci.sh" "$skin" "$packets" skin > "$work/skin.mci"
    x=$("$bin/fullmonte-mcml" "$work/skin.mci" --kernel cuda --seed 1 --quiet --output-dir "$work/skin_$r" 2>&1 |
        grep -E 'photons in|Rsp' | tr -s ' \n' ' ')
    say "round $r skin7 default: $x"
  fi
done

say "== kernel s per round (absorbed: the variant against the default, same seed and round:"
say "   max rel. diff; compact, whose histories differ: max |z|, binomial-like bound 0.25/n each)"
say "$(printf '%-10s %-8s %-24s %-16s %s' mesh variant 'kernel s' 'upload s' 'absorbed check')"
for m in "${!fmb[@]}"; do
  for v in record $variants; do
    d=0
    for r in $(seq 1 "$done_rounds"); do
      a=${absb[$m,$v,$r]:-nan}; b=${absb[$m,record,$r]:-nan}
      if [ "$v" = compact ]; then
        d=$(awk -v a="$a" -v b="$b" -v n="$packets" -v d="$d" 'BEGIN { x = (a - b) / sqrt(0.5 / n); x = x < 0 ? -x : x; print (x > d || x != x) ? x : d }')
      else
        d=$(awk -v a="$a" -v b="$b" -v d="$d" 'BEGIN { x = (a - b) / b; x = x < 0 ? -x : x; print (x > d || x != x) ? x : d }')
      fi
    done
    if [ "$v" = compact ]; then
      say "$(printf '%-10s %-8s %-24s %-16s |z| %s' "$m" "$v" "${kern[$m,$v]}" "${upl[$m,$v]:-}" "$d")"
      awk -v d="$d" 'BEGIN { exit !(d < 4) }' || { say "$m $v: absorbed differs from the default: FAILED"; fail=1; }
    else
      say "$(printf '%-10s %-8s %-24s %-16s %s' "$m" "$v" "${kern[$m,$v]}" "${upl[$m,$v]:-}" "$d")"
      awk -v d="$d" 'BEGIN { exit !(d < 1e-9) }' || { say "$m $v: absorbed differs from the default: FAILED"; fail=1; }
    fi
  done
done
say "total $(( $(date +%s) - t_start )) s"
rm -rf "$work"
exit $fail
