#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Cost of surface detectors on the CPU kernel (docs/DETECTORS.md): cube_5med (../shared/data)
# without detectors, with two disk detectors, and the Jacobian replay of the detected packets,
# at all cores; checks that the detecting run's ledger equals the plain run's (same histories).
# Builds fullmonte-run with CUDA + Boost only when no build dir is given.
# Usage: bench/detectors_cpu.sh [packets] [build dir]; results printed and written under $OUT.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
packets=${1:-1000000}
build=${2:-}
out=${OUT:-$(mktemp -d)}
data=${FM_SHARED_DATA_DIR:-$root/../shared/data}
[ -d "$data/timos/cube_5med" ] || data=$root/shared/data
[ -d "$data/timos/cube_5med" ] || { echo "detectors_cpu: cube_5med not found under $data; nothing to measure"; exit 0; }
if [ -z "$build" ]; then
  build=$out/build
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DFM_USE_VTK=OFF -DFM_USE_TCL=OFF -DFM_USE_MPI=OFF \
    -DFM_USE_PYTHON=OFF -DFM_BUILD_TESTS=OFF >"$out/configure.log" 2>&1
  cmake --build "$build" --target fullmonte-run fullmonte-detected -j "$(nproc)" >"$out/build.log" 2>&1
fi
b=$data/timos/cube_5med/cube_5med
m=(--mesh $b.mesh --opt $b.opt --source $b.source --packets "$packets" --seed 1 --quiet)
disks='5,0,0,2;0,5,0,4'
secs() { /usr/bin/env python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['seconds'])" "$1/summary.json"; }
"$build/bin/fullmonte-run" "${m[@]}" --batches 1 --output "$out/plain" >/dev/null
"$build/bin/fullmonte-run" "${m[@]}" --detectors "$disks" --output "$out/det" >/dev/null
t0=$(date +%s.%N)
"$build/bin/fullmonte-run" "${m[@]}" --detectors "$disks" --replay "$out/det/detected.fmd" --output "$out/jac" >/dev/null
t1=$(date +%s.%N)
"$build/bin/fullmonte-detected" "$out/det/detected.fmd" | tee "$out/detected.txt" | head -4
same=$(/usr/bin/env python3 -c "
import json,sys
a,b=(json.load(open(f'$out/{d}/summary.json'))['ledger'] for d in ('plain','det'))
print('yes' if all(abs(a[k]-b[k]) <= 1e-12*max(1,abs(a[k])) for k in a) else 'NO: '+str(a)+' vs '+str(b))")
{
  echo "| run | seconds |"
  echo "|---|---|"
  echo "| cube_5med, $packets packets, no detectors | $(secs "$out/plain") |"
  echo "| with two disk detectors | $(secs "$out/det") |"
  echo "| Jacobian replay of the detected packets (whole command) | $(echo "$t1 - $t0" | bc) |"
  echo
  echo "ledger of the detecting run equals the plain run's: $same"
} | tee "$out/detectors_cpu.md"
