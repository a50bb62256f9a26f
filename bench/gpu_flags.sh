#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Build whole-program CUDA flag/define variants ("name:flags") and time 1e8 packets of each case
# of bench/perf_all.sh (no CPU checks here: the absorbed fraction is printed; run perf_all.sh on
# the variant kept). Usage: bench/gpu_flags.sh DATA OUT "name:flags" ...
# The kernels' FM_CUDA_* A/B defines exist up to the tag ab-switches (docs/PERFORMANCE.md); at
# later commits the flags are compiler options only (-Xptxas, --use_fast_math...).
set -uo pipefail
# nvcc from PATH or CUDACXX; CUDA's default prefix where neither names one (the GPU hosts).
command -v nvcc >/dev/null || [ -n "${CUDACXX:-}" ] || export PATH=/usr/local/cuda/bin:$PATH
data=$1; out=$2; shift 2
mkdir -p "$out"
for spec in "$@"; do
  name=${spec%%:*}; flags=${spec#*:}
  # The -D defines go to the host compiler too: a define that changes a struct both sides share
  # (a record's layout) must be the same in the .cpp and .cu objects.
  defines=$(for f in $flags; do case $f in -D*) printf '%s ' "$f";; esac; done)
  ( cmake -S . -B build-f-$name -DFM_USE_CUDA=ON -DFM_USE_TCL=OFF -DFM_USE_VTK=OFF -DFM_USE_MPI=OFF -DFM_BUILD_TESTS=OFF \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_CUDA_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$defines" >/dev/null 2>&1 &&
    cmake --build build-f-$name -j 8 --target fullmonte-run fullmonte-mcml > "$out/build-$name.log" 2>&1 ) &
done
wait
for spec in "$@"; do
  name=${spec%%:*}
  CASES=${CASES:-"cube_5med fourlayer skin7 cube60"} CHECK_RUNS=0 bench/perf_all.sh "$data" "$out/$name" build-f-$name 2>/dev/null |
    grep -E '^\| (cube|four|skin)' | sed "s/^/$name /"
done
