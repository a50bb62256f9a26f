#!/usr/bin/env bash
# Nsight Compute summary of one packet-kernel launch (2e6 packets of cube_5med).
# Usage: bench/gpu_profile.sh DATA OUT BUILD_DIR
set -uo pipefail
data=$1; out=$2; build=$3
b="$data/timos/cube_5med/cube_5med"
ncu --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats \
    --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --launch-count 1 -k regex:tallyKernel \
    "$build/bin/fullmonte-run" --mesh $b.mesh --opt $b.opt --source $b.source --packets 2000000 --kernel cuda \
    --quiet --output /tmp/prof > "$out/ncu.txt" 2>&1
grep -E 'Duration|Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Issue Slots Busy|Stall|Warp Cycles Per Issued|Eligible Warps|No Eligible|L1/TEX Hit|L2 Hit|Executed Ipc|Branch' "$out/ncu.txt" | head -40
