#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Clinical-scale meshes on one GPU (issue 29 target 1), each mode in one device call:
#   capacity  the largest mesh device 0 holds and the bytes a tetra costs on the host and the
#             GPU, measured (bench/mesh_capacity.cpp: synthetic heads of growing size, a short
#             run on each, a run over the GPU's limit refused cleanly, the refusal on a full
#             device and the same run passing after); ~1 min of build, then at most BUDGET s.
#   mmc       FullMonte and MMC side by side (bench/peer_mmc.sh) on a 2-5M-tetra model: MESH
#             OPT SOURCE when given (e.g. the Digimouse at --cell-size 0.35, 2.46M tetras), else
#             the synthetic head of HEAD_TETRAS (3e6) tetras made here without a mesher.
# Builds a core tree with CUDA (CMake, CUDA and Boost headers only). Prints the tables; exit 1
# when a check fails.
# Usage (GPU machine, repo root):
#   bench/big_mesh.sh capacity OUT [mesh_capacity arguments: default "auto --oom-check"]
#   bench/big_mesh.sh mmc OUT MMC_SRC [MESH OPT SOURCE]
# Env: BUDGET (420 s, capacity), GPU_PACKETS (1e8), CPU_PACKETS (1e6), ROUNDS (2), HEAD_TETRAS,
#      FM_BUILD_DIR (build-big), FM_REUSE_BUILD=1, JOBS (16); OCL_ROOT, CUDA_ARCH as peer_mmc.sh.
# Expected: mmc on 2.5-3M tetras ~6 min (MMC's build ~1 min, its set-up ~5 s a run).
set -uo pipefail
command -v nvcc >/dev/null || [ -n "${CUDACXX:-}" ] || export PATH=/usr/local/cuda/bin:$PATH
mode=${1:?capacity or mmc}; out=${2:?OUT}; shift 2
build=${FM_BUILD_DIR:-build-big}
mkdir -p "$out"
nvidia-smi -L
echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown); host: $(nproc) threads, $(free -g | awk '/Mem:/ {print $2}') GiB"
if ! { [ "${FM_REUSE_BUILD:-0}" = 1 ] && [ -x "$build/bin/mesh_capacity" ]; }; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DFM_USE_CUDA=ON -DFM_USE_TCL=OFF -DFM_USE_VTK=OFF \
    -DFM_USE_MPI=OFF -DFM_USE_PYTHON=OFF -DFM_USE_PLANNING=OFF -DFM_USE_CGAL=OFF -DFM_USE_HDF5=OFF -DFM_BUILD_TESTS=OFF \
    -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" >"$out/cmake.log" 2>&1 || { tail -30 "$out/cmake.log"; exit 1; }
  cmake --build "$build" -j "${JOBS:-16}" --target fullmonte-run mmc_convert mesh_capacity >"$out/build.log" 2>&1 \
    || { grep -E 'error' "$out/build.log" | head -30; exit 1; }
fi
case $mode in
  capacity)
    [ $# -gt 0 ] || set -- auto --oom-check
    "$build/bin/mesh_capacity" "$@" --budget "${BUDGET:-420}" 2>&1 | tee "$out/mesh_capacity.txt"
    exit "${PIPESTATUS[0]}" ;;
  mmc)
    mmcsrc=${1:?MMC_SRC}
    if [ $# -ge 4 ]; then
      mesh=$2; opt=$3; src=$4
      case $mesh in *.gz) zcat "$mesh" > "$out/model.mesh"; mesh=$out/model.mesh ;; esac
    else
      "$build/bin/mesh_capacity" "${HEAD_TETRAS:-3e6}" --write "$out/head" || exit 1
      mesh=$out/head.mesh; opt=$out/head.opt; src=$out/head.source
    fi
    "$(dirname "$0")/peer_mmc.sh" "$build" "$mmcsrc" "$mesh" "$opt" "$src" "${GPU_PACKETS:-100000000}" \
      "${CPU_PACKETS:-1000000}" "${ROUNDS:-2}" 2>&1 | tee "$out/peer_mmc.txt"
    ! grep -q FAILED "$out/peer_mmc.txt" ;;
  *) echo "big_mesh.sh: mode capacity or mmc, not $mode"; exit 2 ;;
esac
