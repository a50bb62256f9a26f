#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# One run over several GPUs of a host: cube_5med at 1e8 packets on 1 GPU and on all GPUs, same
# seed; throughput ratio and the L1 distance between the two (same packets -> rounding only).
# Usage: bench/gpu_scaling.sh DATA OUT
set -uo pipefail
# nvcc from PATH or CUDACXX; CUDA's default prefix where neither names one (the GPU hosts).
command -v nvcc >/dev/null || [ -n "${CUDACXX:-}" ] || export PATH=/usr/local/cuda/bin:$PATH
data=$1; out=$2
build=${FM_BUILD_DIR:-build-scale}
mkdir -p "$out"
nvidia-smi -L
[ "${FM_REUSE_BUILD:-0}" = 1 ] && [ -x $build/bin/fullmonte-run ] || cmake -S . -B $build -DFM_USE_CUDA=ON -DFM_USE_TCL=OFF -DFM_USE_VTK=OFF -DFM_USE_MPI=OFF -DFM_BUILD_TESTS=OFF \
  -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null 2>&1 && cmake --build $build -j 32 --target fullmonte-run fullmonte-compare >/dev/null 2>&1 || { echo build failed; exit 1; }
b="$data/timos/cube_5med/cube_5med"
for dev in 0 all; do
  /usr/bin/time -f "devices=$dev process wall %e s" $build/bin/fullmonte-run --mesh $b.mesh --opt $b.opt --source $b.source \
    --packets ${PACKETS:-100000000} --kernel cuda --devices $dev --quiet --output /tmp/scale_$dev 2>&1 | tail -1
  python3 -c "
import json; s=json.load(open('/tmp/scale_$dev/summary.json')); L=s['ledger']
print(f'devices=$dev {s[\"kernel\"]}: {s[\"seconds\"]:.3f} s (upload {s.get(\"upload_seconds\",0):.3f}, kernel {s.get(\"kernel_seconds\",0):.3f}, download {s.get(\"download_seconds\",0):.3f}), {s[\"packets_per_second\"]/1e6:.2f}M packets/s, absorbed {L[\"absorbed\"]:.6f}, imbalance {L[\"imbalance\"]:.1e}')"
done
echo "L1 one GPU vs all GPUs (same seed): $($build/bin/fullmonte-compare /tmp/scale_0/fluence.txt /tmp/scale_all/fluence.txt)"
