#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# FullMonte and MMC side by side on one model and one machine (issue 29 targets 1 and 6): MMC is
# built here from its own source (never part of this repository), given the same mesh, media and
# point source through bench/mmc_convert (FullMonte's MMC writers), and both run in interleaved
# rounds: GPU (fullmonte-run --kernel cuda against MMC's CUDA backend) and CPU (all threads of
# the host: fullmonte-run --kernel cpu against MMC's SSE/OpenMP backend). MMC runs twice each
# time. On the GPU: in its default dual-grid mode (-M g: MMC's GPU builds default to it and then
# ignore -C, writing fluence on a voxel grid) and in mesh mode with fluence per element
# (-M s -C 0: branch-less Badouel ray tracing, FullMonte's tally). On the CPU: with its default
# nodal fluence (-C 1) and per element (-C 0). Printed per run: the time each program reports for
# its simulation, the whole process, the absorbed fraction.
#
# Usage: bench/peer_mmc.sh FM_BUILD MMC_SRC MESH OPT SOURCE [GPU_PACKETS] [CPU_PACKETS] [ROUNDS]
#   FM_BUILD  a FullMonte build with bin/fullmonte-run and bin/mmc_convert (CUDA on)
#   MMC_SRC   a checkout of fangq/mmc (src/ and commons/ are used)
#   MESH OPT SOURCE  a TIM-OS model with one point source
#   defaults: 1e8 GPU packets, 4e6 CPU packets, 2 rounds
# Environment: OCL_ROOT, a folder holding include/CL/cl.h and lib/libOpenCL.so where the system
# has no OpenCL development files (MMC links its OpenCL backend always); CUDA_ARCH (default 90);
# MMC_TIMEOUT (300 s: an MMC run still going then is stopped and reported as failed).
set -uo pipefail
fm=$1 mmcsrc=$2 mesh=$3 opt=$4 src=$5
gpuN=${6:-100000000} cpuN=${7:-4000000} rounds=${8:-2}
work=$(mktemp -d /tmp/peer_mmc.XXXX)
threads=$(nproc)
cuda=$(dirname "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")

# MMC, built from a copy of its source: its CUDA + SSE binary.
cp -r "$mmcsrc/src" "$mmcsrc/commons" "$work/"
# CUDA 13 dropped cudaDeviceProp::clockRate, which MMC only reports.
sed -i 's/= dp\.clockRate;/= 0;/' "$work/src/mmc_cu_host.cu" "$work/src/mmc_cuda_query_gpu.cu"
# MMC embeds its OpenCL kernel as a C array made by xxd; where xxd is missing, the same array.
if ! command -v xxd >/dev/null; then
  python3 - "$work/src/mmc_core.cl" "$work/src/mmc_core.clh" <<'PY'
import sys
data = open(sys.argv[1], 'rb').read()
rows = [", ".join(f"0x{b:02x}" for b in data[i:i + 12]) for i in range(0, len(data), 12)]
open(sys.argv[2], 'w').write("unsigned char mmc_core_cl[] = {\n  " + ",\n  ".join(rows) +
                             ", 0x00\n};\nunsigned int mmc_core_cl_len = %d;\n" % len(data))
PY
fi
ocl_inc=${OCL_ROOT:+$OCL_ROOT/include} ocl_lib=${OCL_ROOT:+$OCL_ROOT/lib}
(cd "$work/src" && CPATH=${ocl_inc:-} LIBRARY_PATH=$cuda/lib64${ocl_lib:+:$ocl_lib} \
  make cuda CUGENCODE=-arch=sm_${CUDA_ARCH:-90} LIBOPENCLDIR=${ocl_lib:-$cuda/lib64} -j "$threads" >"$work/mmc-build.log" 2>&1) \
  || { echo "MMC build failed:"; grep -E "error" "$work/mmc-build.log" | head; exit 1; }
mmc=$work/bin/mmc
export LD_LIBRARY_PATH=$cuda/lib64${ocl_lib:+:$ocl_lib}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

"$fm/bin/mmc_convert" "$mesh" "$opt" "$src" "$gpuN" 1 "$work" model || exit 1

now() { date +%s.%N; }
fullmonte() { # label kernel packets
  local t0 t1 dir=$work/fm_$1
  t0=$(now)
  "$fm/bin/fullmonte-run" --mesh "$mesh" --opt "$opt" --source "$src" --packets "$3" --seed 1 --kernel "$2" \
    $([ "$2" = cpu ] && echo --threads "$threads") --quiet --output "$dir" >/dev/null 2>"$dir.err" || { echo "$1 FAILED: $(tail -2 "$dir.err")"; return; }
  t1=$(now)
  python3 - "$dir/summary.json" "$1" "$t0" "$t1" "$3" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); n = float(sys.argv[5])
sim = s.get("kernel_seconds") or s["seconds"]
print(f'{sys.argv[2]:14s} FullMonte {n:9.0e} packets  simulation {sim:8.3f} s ({n / sim / 1e6:7.3f} M/s)  '
      f'process {float(sys.argv[4]) - float(sys.argv[3]):7.2f} s  absorbed {s["ledger"]["absorbed"]:.5f}')
PY
}
mmcrun() { # label backend packets [MMC options...]
  local t0 t1 log=$work/mmc_$1.log label=$1 backend=$2 n=$3
  shift 3
  t0=$(now)
  (cd "$work" && timeout "${MMC_TIMEOUT:-300}" "$mmc" -f model.json -c "$backend" -n "$n" -S 0 -D T "$@" >"$log" 2>&1) \
    || { echo "$label MMC FAILED (exit $?; 124: over MMC_TIMEOUT): $(tail -3 "$log")"; return; }
  t1=$(now)
  python3 - "$log" "$label" "$t0" "$t1" "$n" <<'PY'
import re, sys
text = re.sub(r'\x1b\[[0-9;]*m', '', open(sys.argv[1], errors='replace').read()); n = float(sys.argv[5])
absorbed = re.findall(r'absorbed:\s*([0-9.]+)%', text)
kernel = re.findall(r'kernel[^\n]*?([0-9.]+)\s*ms', text, re.I) or re.findall(r'\tdone\s+([0-9]+)', text)
sim = float(kernel[-1]) / 1e3 if kernel else float('nan')
a = float(absorbed[-1]) / 100 if absorbed else float('nan')
print(f'{sys.argv[2]:14s} MMC       {n:9.0e} packets  simulation {sim:8.3f} s ({n / sim / 1e6:7.3f} M/s)  '
      f'process {float(sys.argv[4]) - float(sys.argv[3]):7.2f} s  absorbed {a:.5f}')
PY
}

echo "model: $(head -2 "$mesh" | tr '\n' ' ')points/tetras; host threads: $threads; $(nvidia-smi -L 2>/dev/null | head -1)"
for r in $(seq 1 "$rounds"); do
  fullmonte gpu_r$r cuda "$gpuN"
  mmcrun gpu_grid_r$r cuda "$gpuN" -M g       # MMC's GPU default: dual grid, voxel output
  mmcrun gpu_mesh_r$r cuda "$gpuN" -M s -C 0  # mesh mode, per element, as FullMonte tallies
done
fullmonte cpu cpu "$cpuN"
mmcrun cpu sse "$cpuN"
mmcrun cpu_C0 sse "$cpuN" -C 0
echo "MMC logs and FullMonte outputs in $work"
