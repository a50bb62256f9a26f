#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Nsight Compute profile of one packet-kernel launch of a bench case, with the per-instruction
# (SASS) stall samples exported for reading where the kernel waits.
# Usage: bench/gpu_profile.sh DATA OUT BUILD_DIR [CASE] [PACKETS]
#   CASE: cube_5med (default), fourlayer or skin7 (MCML mode); PACKETS default 2e6 (1e6 skin7).
# Writes OUT/ncu-CASE.txt (sections), OUT/sass-CASE.csv (source page: SASS with stall samples)
# and prints the headline metrics.
set -uo pipefail
data=$1; out=$2; build=$3; case=${4:-cube_5med}
mkdir -p "$out"
rep=/tmp/fm-ncu-$case
case $case in
  skin7)
    n=${5:-1000000}
    "$(dirname "$0")/skin_mci.sh" "$data/mcml/skin7/7layerskin_600nm.mci" "$n" /tmp/fm-prof-skin > /tmp/fm-prof-skin.mci
    cmd=("$build/bin/fullmonte-mcml" /tmp/fm-prof-skin.mci --kernel cuda --output-dir /tmp/fm-prof) ;;
  *)
    n=${5:-2000000}
    if [ "$case" = fourlayer ]; then b="$data/timos/fourlayer/FourLayer"; else b="$data/timos/cube_5med/cube_5med"; fi
    cmd=("$build/bin/fullmonte-run" --mesh $b.mesh --opt $b.opt --source $b.source --packets "$n" --kernel cuda
         --quiet --output /tmp/fm-prof) ;;
esac
mkdir -p /tmp/fm-prof
ncu --set full --import-source yes --launch-count 1 -k regex:'packetKernel|mcmlSlabKernel' -f -o "$rep" "${cmd[@]}" > "$out/ncu-run-$case.log" 2>&1
ncu -i "$rep.ncu-rep" --page details > "$out/ncu-$case.txt" 2>&1
ncu -i "$rep.ncu-rep" --page source --csv --print-source sass > "$out/sass-$case.csv" 2>&1
grep -E 'Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|Warp Cycles Per Issued|No Eligible|Executed Ipc A|Avg. Active Threads Per Warp|Branch Efficiency|L1/TEX Hit|L2 Hit|Executed Instructions  ' "$out/ncu-$case.txt" | head -30
