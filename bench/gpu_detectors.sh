#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Detectors on the GPU (docs/DETECTORS.md), in one device call (< 300 s):
#  1. test_cuda_detectors (GPU records vs the CPU's within statistics, truncation, replay and
#     Jacobian) and test_detector_kernels (which kernel made a record set);
#  2. cube_5med with two disk detectors, GPU vs CPU (independent seeds): detected weight per
#     detector and mean path per region with standard errors and z, and the GPU replay;
#  3. kernel time of cube_5med 1e8 packets: GPU without detectors, with detectors, and the base
#     tree's kernel without detectors (when .device-data/base-main.tgz or FM_BASE_TGZ holds it),
#     two alternated rounds; 3b. the cost of filling a truncated run's records (packets run
#     again, process time) for room for all, half and 1% of the detections of 1e7 packets;
#     3c. the host side of a detecting run (1e7 packets, room for all): records ordered on the
#     device (default) and on the host (FM_CUDA_DEVICE_RECORD_ORDER=0), two rounds, kernel s,
#     run s, download s (tallies and records), us per record; and detected_order_bench (the host
#     ordering alone on synthetic buffers of as many records, this machine's threads);
#  4. compute-sanitizer memcheck of a small detecting run and its replay.
# Usage (GPU machine, repo root): bench/gpu_detectors.sh [packets=1e8]. FM_BUILD_DIR (build-detect)
# with FM_REUSE_BUILD=1 uses a tree already built with tests; FM_BASE_TGZ another commit's tree
# to time beside this one (default DATA/base-main.tgz). Data: FM_DEVICE_DATA or
# .device-data (timos/cube_5med/cube_5med.{mesh,opt,source}). Results printed and under $OUT.
set -uo pipefail
command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
n=${1:-100000000}
data=${FM_DEVICE_DATA:-.device-data}
out=${OUT:-$(mktemp -d)}
w=/tmp/gd-work  # large outputs (records, tallies) stay on the machine; text goes to $out
mkdir -p "$out" "$w"
base="$data/timos/cube_5med/cube_5med"
[ -f "$base.mesh" ] || { echo "gpu_detectors: $base.mesh not found (set FM_DEVICE_DATA)"; exit 1; }
nvidia-smi -L
cfg=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DFM_USE_CUDA=ON -DFM_USE_TCL=OFF -DFM_USE_VTK=OFF
  -DFM_USE_MPI=OFF -DFM_USE_PYTHON=OFF -DFM_USE_PLANNING=OFF -DFM_USE_CGAL=OFF -DFM_USE_HDF5=OFF)
tgz=${FM_BASE_TGZ:-$data/base-main.tgz}
if [ -f "$tgz" ]; then  # the base tree, built beside this one
  mkdir -p /tmp/gd-base && tar xzf "$tgz" -C /tmp/gd-base
  (cmake -S /tmp/gd-base -B /tmp/gd-bb "${cfg[@]}" -DFM_BUILD_TESTS=OFF >/tmp/gd-bb.log 2>&1 &&
    cmake --build /tmp/gd-bb -j 6 --target fullmonte-run >>/tmp/gd-bb.log 2>&1) &
fi
B=${FM_BUILD_DIR:-build-detect}
if ! { [ "${FM_REUSE_BUILD:-0}" = 1 ] && [ -x "$B/bin/fullmonte-run" ] && [ -x "$B/bin/test_cuda_detectors" ] &&
  [ -x "$B/bin/detected_order_bench" ]; }; then
  cmake -S . -B $B "${cfg[@]}" -DFM_BUILD_TESTS=ON -DFM_SHARED_DATA_DIR="$(cd "$data" && pwd)" >"$out/cmake.log" 2>&1 ||
    { tail -20 "$out/cmake.log"; exit 1; }
  cmake --build $B -j 10 --target fullmonte-run fullmonte-detected test_cuda_detectors test_detector_kernels detected_order_bench \
    >"$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -20; exit 1; }
fi
wait
echo "built $(date +%T)"

echo "== 1. tests"
for t in test_cuda_detectors test_detector_kernels; do
  timeout 120 $B/bin/$t --log_level=message >"$out/$t.log" 2>&1
  echo "$t: exit $? $(grep -E 'No errors|failure' "$out/$t.log" | tail -1)"
  grep -E "SKIP|error|z = |chi2|kept|replay|again" "$out/$t.log" | head -20
done

echo "== 2. cube_5med, two disks, GPU vs CPU"
m=(--mesh "$base.mesh" --opt "$base.opt" --source "$base.source" --quiet)
disks='5,0,0,2;0,5,0,4'
cmp=4000000
$B/bin/fullmonte-run "${m[@]}" --packets $cmp --seed 1 --kernel cuda --detectors "$disks" --output "$w/gpu" >/dev/null
$B/bin/fullmonte-run "${m[@]}" --packets $cmp --seed 2 --kernel cpu --detectors "$disks" --output "$w/cpu" >/dev/null
python3 - "$w/gpu/detected.fmd" "$w/cpu/detected.fmd" <<'EOF' | tee "$out/compare.txt"
import math, struct, sys
def read(path):
    f = open(path, 'rb'); head = {}; mats = 0
    while True:
        line = f.readline().decode().split()
        if line[0] == 'data': break
        head.setdefault(line[0], line[1:])
        if line[0] == 'regions': mats = int(line[1])
    n, R, K = int(head['packets'][0]), mats, int(head['records'][0])
    counts = 'I' * R if int(head['record_bytes'][0]) == 48 + 8 * R else ''  # version 2: scatter counts per region
    rec = struct.Struct('<QII' + 'f' * (8 + R) + counts)
    sums = {}
    for k in range(K):
        v = rec.unpack(f.read(rec.size))
        d, w, L = v[1], v[3], v[11:11 + R]
        s = sums.setdefault(d, [0.0, 0.0, [0.0] * R, [0.0] * R, 0])
        s[0] += w; s[1] += w * w; s[4] += 1
        for r in range(R): s[2][r] += L[r]; s[3][r] += L[r] * L[r]
    return head['kernel'][0] if 'kernel' in head else 'cpu', n, R, sums
(ka, na, R, a), (kb, nb, _, b) = read(sys.argv[1]), read(sys.argv[2])
for d in sorted(a):
    sa, sb = a[d], b.get(d, [0, 0, [0] * R, [0] * R, 0])
    ma, mb = sa[0] / na, sb[0] / nb
    ea = math.sqrt(max(sa[1] / na - ma * ma, 0) / na); eb = math.sqrt(max(sb[1] / nb - mb * mb, 0) / nb)
    print(f"detector {d}: signal {ka} {ma:.6g} +- {ea:.2g}, {kb} {mb:.6g} +- {eb:.2g}, z = {(ma - mb) / math.hypot(ea, eb):.2f}")
    for r in range(R):
        if sa[4] < 2 or sb[4] < 2: continue
        pa, pb = sa[2][r] / sa[4], sb[2][r] / sb[4]
        va = (sa[3][r] / sa[4] - pa * pa) / sa[4]; vb = (sb[3][r] / sb[4] - pb * pb) / sb[4]
        if va + vb > 0:
            print(f"   region {r + 1}: mean path {ka} {pa:.5g}, {kb} {pb:.5g} mm, z = {(pa - pb) / math.sqrt(va + vb):.2f}")
EOF
t0=$(date +%s.%N)
$B/bin/fullmonte-run "${m[@]}" --packets $cmp --kernel cuda --detectors "$disks" --replay "$w/gpu/detected.fmd" \
  --output "$w/gpu-jac" | tail -2
echo "GPU replay (whole command): $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s"
$B/bin/fullmonte-run "${m[@]}" --packets $cmp --kernel cpu --detectors "$disks" --replay "$w/gpu/detected.fmd" \
  --output "$w/mixed" 2>&1 | tail -1

echo "== 3. kernel time, cube_5med $n packets"
row() {  # label exe [options]
  local label=$1 exe=$2
  shift 2
  [ -x "$exe" ] || { echo "$label: not built"; return; }
  "$exe" "${m[@]}" --packets "$n" --seed 1 --batches 1 --kernel cuda --output "$w/t-$label" "$@" >/dev/null
  python3 - "$w/t-$label/summary.json" "$label" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]:>12}: kernel_seconds {s['kernel_seconds']:.4f} seconds {s['seconds']:.3f} "
      f"absorbed {s['ledger']['absorbed']:.6f}")
PY
}
for i in 1 2; do
  row base /tmp/gd-bb/bin/fullmonte-run
  row plain $B/bin/fullmonte-run
  row detectors $B/bin/fullmonte-run --detectors "$disks" --max-detected 20000000
done | tee "$out/timings.txt"

echo "== 3b. truncation refill: 1e7 packets with room for all, half and 1% of the detections"
rn=10000000
refill() {  # label, --max-detected value
  local t0=$(date +%s.%N)
  $B/bin/fullmonte-run "${m[@]}" --packets $rn --seed 4 --batches 1 --kernel cuda \
    --detectors "$disks" --max-detected "$2" --output "$w/rf-$1" >/dev/null 2>"$w/rf-$1.err"
  python3 - "$w/rf-$1/summary.json" "$1" "$t0 $(date +%s.%N)" "$w/rf-$1.err" <<'PY'
import json, re, sys
s = json.load(open(sys.argv[1]))
m = re.search(r"ran (\d+) packets again", open(sys.argv[4]).read())
d = s["detectors"]
print(f"{sys.argv[2]:>5}: records {d['records']} of {d['detected']}, packets run again {m.group(1) if m else 0}, "
      f"kernel_seconds {s['kernel_seconds']:.4f} seconds {s['seconds']:.3f} process {(lambda a, b: b - a)(*map(float, sys.argv[3].split())):.3f} s")
PY
}
refill all 20000000 | tee "$out/refill.txt"
found=$(python3 -c "import json;print(json.load(open('$w/rf-all/summary.json'))['detectors']['detected'])")
refill half $((found / 2)) | tee -a "$out/refill.txt"
refill 1pc $((found / 100)) | tee -a "$out/refill.txt"

echo "== 3c. host side of a detecting run: 1e7 packets, room for all, records ordered on the device / on the host"
hostside() {  # label, FM_CUDA_DEVICE_RECORD_ORDER value
  FM_CUDA_DEVICE_RECORD_ORDER=$2 $B/bin/fullmonte-run "${m[@]}" --packets $rn --seed 4 --batches 1 --kernel cuda \
    --detectors "$disks" --max-detected 20000000 --output "$w/hs-$1" >/dev/null 2>"$w/hs-$1.err" || { cat "$w/hs-$1.err"; return; }
  python3 - "$w/hs-$1/summary.json" "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
n = s["detectors"]["records"]
after = s["seconds"] - s["kernel_seconds"] - s.get("upload_seconds", 0)
print(f"{sys.argv[2]:>7}: records {n}, kernel s {s['kernel_seconds']:.4f}, run s {s['seconds']:.4f}, "
      f"download s {s['download_seconds']:.4f}, after the kernel {after:.4f} s = {1e6 * after / max(n, 1):.4f} us/record")
PY
}
for i in 1 2; do
  hostside device 1
  hostside host 0
done | tee "$out/hostside.txt"
cmp -s "$w/hs-device/detected.fmd" "$w/hs-host/detected.fmd" && echo "device and host order: same detected.fmd" ||
  echo "device and host order: detected.fmd DIFFER"
recs=$(python3 -c "import json;print(json.load(open('$w/hs-device/summary.json'))['detectors']['records'])")
$B/bin/detected_order_bench "$recs" 5 65536 3 | tee -a "$out/hostside.txt"

echo "== 4. compute-sanitizer memcheck (detecting run, 1e5 packets, and its replay)"
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 150 $cs --tool memcheck --leak-check full --error-exitcode 9 $B/bin/fullmonte-run "${m[@]}" --packets 100000 \
  --kernel cuda --detectors "$disks" --max-detected 50 --output "$w/san" >"$out/sanitizer.txt" 2>&1
echo "memcheck detecting run: exit $? $(grep -E 'ERROR SUMMARY' "$out/sanitizer.txt" | tail -1)"
timeout 100 $cs --tool memcheck --error-exitcode 9 $B/bin/fullmonte-run "${m[@]}" --packets 100000 --kernel cuda \
  --detectors "$disks" --replay "$w/san/detected.fmd" --output "$w/san-jac" >"$out/sanitizer-replay.txt" 2>&1
echo "memcheck replay: exit $? $(grep -E 'ERROR SUMMARY' "$out/sanitizer-replay.txt" | tail -1)"
echo "done $(date +%T)"
