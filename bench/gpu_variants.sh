#!/usr/bin/env bash
# Build CUDA kernel variants side by side and time each at 1e8 packets on cube_5med and
# FourLayer, checking the absorbed fraction. Usage: bench/gpu_variants.sh DATA OUT "name:flags" ...
set -uo pipefail
data=$1; out=$2; shift 2
mkdir -p "$out"
for spec in "$@"; do
  name=${spec%%:*}; flags=${spec#*:}
  ( cmake -S . -B build-v-$name -DFM_USE_TCL=OFF -DFM_USE_VTK=OFF -DFM_USE_MPI=OFF -DFM_BUILD_TESTS=OFF \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_CUDA_FLAGS="$flags" >/dev/null 2>&1 &&
    cmake --build build-v-$name -j 4 --target fullmonte-run > "$out/build-$name.log" 2>&1 ) &
done
wait
for spec in "$@"; do
  name=${spec%%:*}
  regs=$(grep -E 'Used [0-9]+ registers' "$out/build-$name.log" | head -1 | sed -E 's/.*Used ([0-9]+) registers.*/\1/')
  for case in cube_5med/cube_5med fourlayer/FourLayer; do
    b="$data/timos/$case"
    d="$out/$name-$(basename $case)"
    if build-v-$name/bin/fullmonte-run --mesh $b.mesh --opt $b.opt --source $b.source --packets ${PACKETS:-100000000} \
        --kernel cuda --quiet --output "$d" > /dev/null 2> "$d.err"; then
      python3 -c "
import json,sys; s=json.load(open('$d/summary.json')); L=s['ledger']
print(f'$name regs=$regs {\"$(basename $case)\":10s} {s[\"seconds\"]:7.3f}s {s[\"packets_per_second\"]/1e6:7.2f}M/s {s[\"steps_per_second\"]:.3e} steps/s absorbed {L[\"absorbed\"]:.5f}')"
    else echo "$name $(basename $case) FAILED: $(head -3 $d.err)"; fi
    rm -rf "$d"
  done
done
