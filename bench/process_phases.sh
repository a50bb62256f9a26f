#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Issue 29 item 1, the whole process: where a GPU run's wall time goes outside the simulation.
# For the 2.46M-tetra (dm3) and 996k-tetra (dm_morton) Digimouse meshes, `fullmonte-run --kernel
# cuda` with FM_TIMING=1 prints each phase (read and check the model, pack, wait for the GPU's
# start-up, open the output folder, run = upload + kernel + download, summary values, write
# outputs) and the time from main's start to its end; the wall time of the whole process is
# measured outside, so "exit" = wall - that (freeing memory, tearing down CUDA) and "start" the
# rest. The base tree (.device-data/base-main.tgz or FM_BASE_TGZ, when present) is timed on the same
# runs, interleaved, and its fluence.txt must equal this tree's byte for byte. Correctness: the
# GPU's absorbed fraction against a CPU run of the same mesh (z from both standard errors).
# Core-only build (CUDA, Boost headers; no VTK/Tcl/SWIG). About 150 s on one H100 with the base.
# Usage (GPU machine, repo root): bench/process_phases.sh [packets=1e8]
# Env: FM_DEVICE_DATA (default .device-data), ROUNDS (2), CPU_PACKETS (1e6), OUT (results).
set -uo pipefail
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
n=${1:-100000000}
data=${FM_DEVICE_DATA:-.device-data}
out=${OUT:-$(mktemp -d)}
w=/tmp/pp-work  # meshes and outputs stay on the machine; logs go to $out
mkdir -p "$out" "$w"
for f in dm3.mesh.gz dm_morton.mesh.gz digimouse.opt digimouse.source; do
  [ -f "$data/$f" ] || { echo "process_phases: $data/$f not found (set FM_DEVICE_DATA)"; exit 1; }
done
nvidia-smi -L
echo "host: $(nproc) cores"
cfg=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DFM_USE_CUDA=ON -DFM_USE_TCL=OFF -DFM_USE_VTK=OFF
  -DFM_USE_MPI=OFF -DFM_USE_PYTHON=OFF -DFM_USE_PLANNING=OFF -DFM_USE_CGAL=OFF -DFM_USE_HDF5=OFF -DFM_BUILD_TESTS=OFF)
tgz=${FM_BASE_TGZ:-$data/base-main.tgz}
basebin=
if [ -f "$tgz" ]; then  # the base tree, built beside this one
  mkdir -p /tmp/pp-base && tar xzf "$tgz" -C /tmp/pp-base
  (cmake -S /tmp/pp-base -B /tmp/pp-bb "${cfg[@]}" >/tmp/pp-bb.log 2>&1 &&
    cmake --build /tmp/pp-bb -j 8 --target fullmonte-run >>/tmp/pp-bb.log 2>&1) &
  basebin=/tmp/pp-bb/bin/fullmonte-run
fi
(zcat "$data/dm3.mesh.gz" >"$w/dm3.mesh" && zcat "$data/dm_morton.mesh.gz" >"$w/dm.mesh") &
B=build-phases
cmake -S . -B $B "${cfg[@]}" >"$out/cmake.log" 2>&1 || { tail -20 "$out/cmake.log"; exit 1; }
cmake --build $B -j 8 --target fullmonte-run >"$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -20; exit 1; }
wait
[ -n "$basebin" ] && [ ! -x "$basebin" ] && { echo "base build failed: $(grep -m3 error /tmp/pp-bb.log)"; basebin=; }
echo "built $(date +%T)"
model=(--opt "$data/digimouse.opt" --source "$data/digimouse.source" --seed 1 --quiet)

# One timed process: label binary mesh kernel packets; prints the phases and the wall.
timed() {
  local label=$1 bin=$2 mesh=$3 kernel=$4 packets=$5 dir=$w/$1 t0 t1
  t0=$(date +%s.%N)
  FM_TIMING=1 "$bin" --mesh "$w/$mesh.mesh" "${model[@]}" --kernel "$kernel" --packets "$packets" \
    --output "$dir" >"$out/$label.log" 2>&1 || { echo "$label FAILED: $(tail -2 "$out/$label.log")"; return 1; }
  t1=$(date +%s.%N)
  python3 - "$dir/summary.json" "$out/$label.log" "$t0" "$t1" "$label" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); wall = float(sys.argv[4]) - float(sys.argv[3])
lines = [l[len("fm-timing "):].rstrip() for l in open(sys.argv[2]) if l.startswith("fm-timing ")]
phases = [l.rsplit(None, 3) if " cpu " in l else l.rsplit(None, 1) for l in lines]
print(f"== {sys.argv[5]}: process {wall:.3f} s, run {s['seconds']:.3f} s, kernel {s.get('kernel_seconds', 0):.3f} s, "
      f"absorbed {s['ledger']['absorbed']:.6f}")
main = None
for p in phases:
    name, sec = p[0].rstrip(), float(p[1])
    if name == "since process start": main = sec; continue
    print(f"   {name:32s} {sec:8.3f}")
if main is not None:
    print(f"   {'exit (wall - main)':32s} {wall - main:8.3f}")
PY
}

status=0
for r in $(seq "${ROUNDS:-2}"); do
  for m in dm3 dm; do
    timed "${m}_new_r$r" $B/bin/fullmonte-run $m cuda "$n" || status=1
    if [ -n "$basebin" ]; then
      t0=$(date +%s.%N)
      "$basebin" --mesh "$w/$m.mesh" "${model[@]}" --kernel cuda --packets "$n" --output "$w/${m}_base_r$r" \
        >"$out/${m}_base_r$r.log" 2>&1 || { echo "${m} base FAILED"; status=1; }
      t1=$(date +%s.%N)
      echo "== ${m}_base_r$r: process $(awk "BEGIN { printf \"%.3f\", $t1 - $t0 }") s"
    fi
  done
done
if [ -n "$basebin" ]; then
  for m in dm3 dm; do
    for f in fluence.txt volume_energy.txt fluence_stderr.txt surface_exit.txt; do
      cmp -s "$w/${m}_new_r1/$f" "$w/${m}_base_r1/$f" && echo "$m $f: identical to the base's" ||
        { echo "FAIL: $m $f differs from the base's"; status=1; }
    done
  done
fi

# Correctness: the GPU run against the CPU kernel on the 996k mesh (absorbed fraction).
timed dm_cpu $B/bin/fullmonte-run dm cpu "${CPU_PACKETS:-1000000}" || status=1
python3 - "$w/dm_new_r1/summary.json" "$w/dm_cpu/summary.json" <<'PY' || status=1
import json, math, sys
g, c = (json.load(open(p)) for p in sys.argv[1:3])
a, b = g["ledger"]["absorbed"], c["ledger"]["absorbed"]
se = math.hypot(g["standard_error"]["absorbed_stderr"], c["standard_error"]["absorbed_stderr"])
z = (a - b) / se
print(f"absorbed GPU {a:.6f} vs CPU {b:.6f}: z = {z:.2f} ({'ok' if abs(z) < 4 else 'FAIL'})")
sys.exit(0 if abs(z) < 4 else 1)
PY
echo "process_phases: $([ $status = 0 ] && echo ok || echo FAILED)"
exit $status
