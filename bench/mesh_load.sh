#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Issue 29: loading a clinical-size mesh, text (TIM-OS .mesh) against binary (.fmb), step by
# step (bench/mesh_load_bench: read, parse, index checks, duplicates, orientation, faces,
# structure checks, locator, packing), and the whole fullmonte-run process on both with a short
# run. Checks that both formats give the same packed model (checksum) and the same fluence.txt
# byte for byte. Builds a core-only tree (no Tcl, VTK, MPI, Python, CGAL): CUDA when nvcc is there.
# Usage: bench/mesh_load.sh MESH OPT OUT      MESH: .mesh or .mesh.gz (e.g. .device-data/digimouse.mesh.gz)
# Env: ROUNDS (3), PACKETS (1e6), KERNEL (cuda when nvidia-smi sees a GPU, else cpu),
#      POINT "x,y,z" (default: the centroid of the middle tetra), FM_BUILD_DIR (build-meshload),
#      FM_REUSE_BUILD=1 (skip configure/build when the binaries exist), BASE_BUILD (a build folder
#      of another commit: its fullmonte-run is timed on the text mesh too).
set -uo pipefail
command -v nvcc >/dev/null || [ -n "${CUDACXX:-}" ] || export PATH=/usr/local/cuda/bin:$PATH
mesh=$1; opt=$2; out=$3
rounds=${ROUNDS:-3}; packets=${PACKETS:-1000000}
build=${FM_BUILD_DIR:-build-meshload}
if [ -z "${KERNEL:-}" ]; then
  if nvidia-smi -L >/dev/null 2>&1; then KERNEL=cuda; else KERNEL=cpu; fi
fi
mkdir -p "$out"
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
nvidia-smi -L 2>/dev/null
cuda=OFF; [ "$KERNEL" = cuda ] && cuda=ON
if [ "${FM_REUSE_BUILD:-0}" != 1 ] || [ ! -x "$build/bin/fullmonte-run" ] || [ ! -x "$build/bin/mesh_load_bench" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DFM_USE_CUDA=$cuda \
    $( [ $cuda = ON ] && echo -DCMAKE_CUDA_ARCHITECTURES=${FM_CUDA_ARCH:-90} ) \
    -DFM_USE_TCL=OFF -DFM_USE_VTK=OFF -DFM_USE_MPI=OFF -DFM_USE_PYTHON=OFF -DFM_USE_HDF5=OFF \
    -DFM_USE_CGAL=OFF -DFM_USE_PLANNING=OFF -DFM_BUILD_TESTS=OFF >"$out/configure.log" 2>&1 \
    || { tail -30 "$out/configure.log"; exit 1; }
  cmake --build "$build" -j "$(nproc)" --target fullmonte-run mesh_load_bench >"$out/build.log" 2>&1 \
    || { grep -E 'error|Error' "$out/build.log" | head -20; exit 1; }
fi
run=$build/bin/fullmonte-run; bench=$build/bin/mesh_load_bench

text=$out/mesh.mesh; bin=$out/mesh.fmb
case $mesh in
  *.gz) zcat "$mesh" > "$text" ;;
  *) cp "$mesh" "$text" ;;
esac
echo "text mesh: $(stat -c %s "$text") bytes"
t0=$(date +%s.%N)
"$run" --mesh "$text" --save-mesh "$bin" || { echo "conversion failed"; exit 1; }
t1=$(date +%s.%N)
echo "binary mesh: $(stat -c %s "$bin") bytes; conversion (fullmonte-run --save-mesh) $(awk "BEGIN { printf \"%.3f\", $t1 - $t0 }") s"

# Steps, text and binary interleaved; the model checksums must agree.
status=0
for r in $(seq "$rounds"); do
  for f in "$text" "$bin"; do
    echo "== round $r: $(basename "$f")"
    "$bench" "$f" --opt "$opt" | tee "$out/steps_$(basename "$f")_$r.txt" || status=1
  done
done
sums=$(grep -h '^model checksum' "$out"/steps_*.txt | sort -u | wc -l)
if [ "$sums" = 1 ]; then echo "packed model: same checksum for text and binary"; else echo "FAIL: packed models differ"; status=1; fi
point=${POINT:-$(grep -h '^source point' "$out"/steps_*.txt | head -1 | awk '{print $3","$4","$5}')}

# Whole process: fullmonte-run with a short run, text and binary interleaved.
whole() {  # label binary mesh dir
  local t0 t1
  t0=$(date +%s.%N)
  "$2" --mesh "$3" --opt "$opt" --point "$point" --packets "$packets" --seed 1 --kernel "$KERNEL" \
    --quiet --output "$4" > "$4.log" 2>&1 || { echo "$1: FAIL ($(tail -2 "$4.log"))"; return 1; }
  t1=$(date +%s.%N)
  /usr/bin/python3 - "$4/summary.json" "$t0" "$t1" "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
wall = float(sys.argv[3]) - float(sys.argv[2])
print(f"{sys.argv[4]}: process {wall:.3f} s, model read {float(s.get('model_read_seconds', 'nan')):.3f} s, "
      f"run {s['seconds']:.3f} s, absorbed {s['ledger']['absorbed'] if 'ledger' in s else s.get('absorbed')}")
PY
}
for r in $(seq "$rounds"); do
  whole "text   r$r" "$run" "$text" "$out/run_text_$r" || status=1
  whole "binary r$r" "$run" "$bin" "$out/run_bin_$r" || status=1
  [ -n "${BASE_BUILD:-}" ] && { whole "base   r$r" "$BASE_BUILD/bin/fullmonte-run" "$text" "$out/run_base_$r" || status=1; }
done
if cmp -s "$out/run_text_1/fluence.txt" "$out/run_bin_1/fluence.txt"; then
  echo "fluence.txt: identical for text and binary"
else
  echo "FAIL: fluence.txt differs between text and binary"; status=1
fi
if [ -n "${BASE_BUILD:-}" ]; then
  if cmp -s "$out/run_text_1/fluence.txt" "$out/run_base_1/fluence.txt"; then
    echo "fluence.txt: identical to BASE_BUILD's"
  else
    echo "FAIL: fluence.txt differs from BASE_BUILD's"; status=1
  fi
fi
echo "memory per tetra (host):$(grep -h 'host bytes per tetra' "$out"/steps_*.txt | head -1 | cut -d: -f2-)"
exit $status
