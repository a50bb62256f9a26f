#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A/B of the GPU packet kernels, this tree (A) against a base tree (B, e.g. main): the tally
# hooks and packs (Kernels/Core/Tally.hpp) must leave the mesh and MCML slab kernels as fast as
# they were. Builds both (CUDA + Boost headers only, ptxas -v), prints the packet kernels'
# registers and spills side by side, runs this tree's GPU tests (GPU against CPU on the same
# streams), then times cube_5med, FourLayer (TIM-OS meshes) and the seven-layer skin (MCML)
# alternately A B A B, ROUNDS times, and prints each run's rate and the medians.
# Usage (GPU machine, repo root): bench/gpu_events_ab.sh DATA OUT BASE_DIR
#   DATA holds timos/ and mcml/ as ../shared/data; BASE_DIR is a copy of the base tree
#   (git archive main | tar -x -C BASE_DIR).
# Env: PACKETS (mesh cases, default 1e8), PHOTONS (MCML, default 1e8), ROUNDS (default 3).
set -uo pipefail
command -v nvcc >/dev/null || [ -n "${CUDACXX:-}" ] || export PATH=/usr/local/cuda/bin:$PATH
data=$(cd "${1:?data dir}" && pwd); final=${2:?output dir}; base=$(cd "${3:?base tree}" && pwd)
packets=${PACKETS:-100000000}; photons=${PHOTONS:-100000000}; rounds=${ROUNDS:-3}
root=$PWD
out=$(mktemp -d)
mkdir -p "$final"
log() { echo "$@" | tee -a "$out/summary.txt"; }
nvidia-smi -L | tee "$out/summary.txt"

build() {  # tree build-dir
  cmake -S "$1" -B "$2" -DFM_USE_CUDA=ON -DFM_USE_TCL=OFF -DFM_USE_VTK=OFF -DFM_USE_MPI=OFF -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DFM_CUDA_PTXAS_VERBOSE=ON -DFM_SHARED_DATA_DIR="$data" >"$2.cmake.log" 2>&1 || { tail -30 "$2.cmake.log"; exit 1; }
  cmake --build "$2" -j 16 --target fullmonte-run fullmonte-mcml test_cuda >"$2.build.log" 2>&1 ||
    { grep -E 'error' "$2.build.log" | head -30; exit 1; }
}
build "$root" "$out/A" &
build "$base" "$out/B" &
wait
# Registers and spills of every packet kernel instantiation (ptxas -v), A then B.
for t in A B; do
  log "== $t: registers / spills of the packet kernels"
  awk '/Compiling entry function/ {k = $0; sub(/.*function .*(packetKernel|mcmlSlabKernel)/, "", k); sub(/EE.*/, "", k);
       n = ($0 ~ /mcmlSlabKernel/) ? "mcmlSlabKernel" : (($0 ~ /packetKernel/) ? "packetKernel" : "")}
       /spill stores/ && n != "" {s = $0; sub(/.*info *: */, "", s)}
       /Used [0-9]+ registers/ && n != "" {r = $0; sub(/.*Used /, "", r); sub(/,.*/, "", r); print n k ": " r ", " s; n = ""}' \
    "$out/$t.build.log" | sort -u | tee -a "$out/summary.txt"
done
log "== A: GPU tests"
"$out/A/bin/test_cuda" --log_level=message 2>&1 | tail -8 | tee -a "$out/summary.txt"

skin="$data/mcml/skin7/7layerskin_600nm.mci"
"$root/bench/skin_mci.sh" "$skin" "$photons" skin > "$out/skin.mci"
rate() {  # tree case -> packets (photons) per second of one run
  local b="$out/$1" d="$out/run_$1_$2"
  rm -rf "$d"
  if [ "$2" = skin7 ]; then
    "$b/bin/fullmonte-mcml" "$out/skin.mci" --kernel cuda --seed 1 --quiet --output-dir "$d" 2>&1 |
      awk '/photons in/ {sub(/.*\(/, ""); print $1}'
  else
    local m="$data/timos/$2/$([ "$2" = fourlayer ] && echo FourLayer || echo "$2")"
    "$b/bin/fullmonte-run" --mesh "$m.mesh" --opt "$m.opt" --source "$m.source" --packets "$packets" --seed 1 \
      --kernel cuda --quiet --output "$d" >/dev/null 2>"$d.err" || { echo "FAILED"; return; }
    python3 -c "import json; print('%.0f' % json.load(open('$d/summary.json'))['packets_per_second'])"
  fi
}
for c in cube_5med fourlayer skin7; do
  a=(); b=()
  for ((i = 0; i < rounds; ++i)); do
    a+=("$(rate A $c)"); b+=("$(rate B $c)")
  done
  med() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
  ma=$(med "${a[@]}"); mb=$(med "${b[@]}")
  log "$c: A ${a[*]}  B ${b[*]}  per s; median A/B = $(python3 -c "print('%.3f' % ($ma / $mb))")"
done
cp "$out/summary.txt" "$final/"
cp "$out"/A.build.log "$out"/B.build.log "$final/" 2>/dev/null
rm -rf "$out"
