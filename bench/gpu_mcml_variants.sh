#!/usr/bin/env bash
# MCML seven-layer skin on the GPU: build variants side by side ("name:CUDA flags"), time 1e8
# photons of each (process wall, includes CUDA start-up), print RAT so a fast wrong kernel shows.
# PROFILE=1 adds an Nsight Compute summary of one launch of the first variant.
# Usage: bench/gpu_mcml_variants.sh DATA OUT "name:flags" ...
set -uo pipefail
data=$1; out=$2; shift 2
mkdir -p "$out/mcml"
skin="$data/mcml/skin7/7layerskin_600nm.mci"
mk() {  # photons name -> a one-run .mci from the skin file's third run
  awk -v n="$1" -v name="$2" '
    /# number of runs/ && !hdr {print "1\t\t\t\t\t\t# number of runs"; hdr=1; next}
    /^### Specify data for run/ {r++}
    !hdr {print; next}
    r == 3 {
      if ($1 ~ /\.mco$/) {print name ".mco\tA"; next}
      if ($1 == "10000000") {print n; next}
      print
    }' "$skin" > "$out/mcml/$2.mci"
}
mk ${PHOTONS:-100000000} skin; mk 10000000 skin_1e7
for spec in "$@"; do
  name=${spec%%:*}; flags=${spec#*:}
  ( cmake -S . -B build-m-$name -DFM_USE_TCL=OFF -DFM_USE_VTK=OFF -DFM_USE_MPI=OFF -DFM_BUILD_TESTS=OFF \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_CUDA_FLAGS="$flags" >/dev/null 2>&1 &&
    cmake --build build-m-$name -j 8 --target fullmonte-mcml fullmonte-run > "$out/build-$name.log" 2>&1 ) &
done
wait
for spec in "$@"; do
  name=${spec%%:*}
  regs=$(grep -A1 'McmlScorer' "$out/build-$name.log" | grep -oE 'Used [0-9]+ registers' | head -1)
  for rep in 1 2; do
    /usr/bin/time -f "$name wall %e s ($regs)" build-m-$name/bin/fullmonte-mcml "$out/mcml/skin.mci" --kernel cuda \
      --seed 1 --output-dir "$out/mcml/$name" 2>&1 | grep -E 'photons in|Rd|interactions|wall|rror'
  done
done
if [ "${PROFILE:-0}" = 1 ]; then
  name=${1%%:*}
  ncu --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats \
      --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section InstructionStats \
      --launch-count 1 -k regex:packetKernel \
      build-m-$name/bin/fullmonte-mcml "$out/mcml/skin_1e7.mci" --kernel cuda --quiet --output-dir /tmp/prof > "$out/ncu_mcml.txt" 2>&1
  grep -E 'Duration|Throughput|Achieved Occupancy|Registers Per|Issue Slots Busy|Stall|Warp Cycles Per Issued|No Eligible|L1/TEX Hit|L2 Hit|Executed Ipc|Branch|Avg. Active Threads|Executed Instructions  ' "$out/ncu_mcml.txt" | head -40
fi
