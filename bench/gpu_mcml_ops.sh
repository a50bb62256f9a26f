#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The MCML slab kernel (Kernels/CUDA/McmlCuda.cu and what it inlines) on the seven-layer skin,
# built once per variant, side by side: one build (CUDA + Boost headers only), then McmlCuda.cu
# compiled once per variant with the variant's defines and linked into its own fullmonte-mcml
# (the rest of the library is shared); per variant three interleaved rounds of 1e8 photons (GPU
# kernel seconds, Rd, A, Tt, interactions per photon: variants that keep every history print the
# same numbers), then ncu's warp instructions (smsp__inst_executed.sum) of the slab kernel at 1e7
# photons, and each variant's register and spill line from ptxas.
# Usage (on the GPU machine, repo root): bench/gpu_mcml_ops.sh [DATA_DIR] ["name:defines" ...]
#   DATA_DIR (default $FM_DEVICE_DATA or .device-data; "" for the default) holds
#   mcml/skin7/7layerskin_600nm.mci.
#   Each variant is "name:defines": a name (letters, digits, _ and -) and the compiler options
#   its McmlCuda.cu gets, e.g. "nocut:-DFM_MY_CUT=0" "cut:-DFM_MY_CUT=1" for a change under test
#   behind a macro FM_MY_CUT. Without variants: "tree:" (the tree as it is, no defines).
#   Build in ${FM_BUILD_DIR:-build-ops}, logs under $OUT, outputs in
#   ${FM_WORK_DIR:-/tmp/fm_mcml_ops}. ROUNDS (3), PHOTONS (1e8), NCU_PHOTONS (1e7; 0: no ncu),
#   NCU_VARIANTS (the names ncu counts, space-separated; all of them unless set).
set -uo pipefail
command -v nvcc >/dev/null || [ -n "${CUDACXX:-}" ] || export PATH=/usr/local/cuda/bin:$PATH
data=${1:-${FM_DEVICE_DATA:-.device-data}}
shift || true
root=$(pwd)
build=${FM_BUILD_DIR:-build-ops}
case $build in /*) ;; *) build=$root/$build ;; esac  # absolute: the link runs in another folder
out=${OUT:-$(mktemp -d)}
dir=${FM_WORK_DIR:-/tmp/fm_mcml_ops}
rounds=${ROUNDS:-3}
photons=${PHOTONS:-100000000}
ncuPhotons=${NCU_PHOTONS:-10000000}
if [ $# -gt 0 ]; then variants=("$@"); else variants=("tree:"); fi
names=""
for v in "${variants[@]}"; do
  name=${v%%:*}
  [[ $v == *:* && $name =~ ^[A-Za-z0-9_-]+$ ]] || { echo "bad variant '$v': want name:defines"; exit 2; }
  [[ " $names " != *" $name "* ]] || { echo "variant name '$name' given twice"; exit 2; }
  names="$names $name"
done
ncuVariants=${NCU_VARIANTS:-$names}
mkdir -p "$dir" "$out"
nvidia-smi -L
t0=$(date +%s)
cmake -S . -B "$build" -DFM_USE_CUDA=ON -DFM_USE_TCL=OFF -DFM_USE_VTK=OFF -DFM_USE_MPI=OFF -DFM_USE_PYTHON=OFF \
  -DFM_BUILD_TESTS=OFF -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$out/cmake.log" 2>&1 ||
  { tail -30 "$out/cmake.log"; exit 1; }
# McmlCuda.cu's compile command (compile_commands.json), without its depfile options, with
# the variant's defines, ptxas's register report and its own object.
compileCmd() {  # $1 = object, $2 = defines
  python3 - "$build/compile_commands.json" "$1" "$2" <<'PY'
import json, shlex, sys
db, obj, defs = sys.argv[1], sys.argv[2], sys.argv[3]
e = next(e for e in json.load(open(db)) if e["file"].endswith("Kernels/CUDA/McmlCuda.cu"))
a = shlex.split(e["command"]) if "command" in e else e["arguments"]
r, skip = [], 0
for x in a:
    if skip: skip -= 1; continue
    if x in ("-MT", "-MF", "-o"): skip = 1; continue
    if x in ("-MD", "-MMD"): continue
    r.append(x)
r[1:1] = shlex.split(defs) + ["-Xptxas=-v"]
print("cd " + shlex.quote(e["directory"]) + " && " + shlex.join(r + ["-o", obj]))
PY
}
# The variants' objects compile while the library builds (they need only the configure).
for v in "${variants[@]}"; do
  name=${v%%:*}; defs=${v#*:}
  vd="$build/ops-$name"; mkdir -p "$vd"; rm -f "$vd/fullmonte-mcml" "$vd/McmlCuda.cu.o"
  ( eval "$(compileCmd "$vd/McmlCuda.cu.o" "$defs")" > "$vd/compile.log" 2>&1 ) &
done
cmake --build "$build" -j 16 --target fullmonte-mcml >"$out/build.log" 2>&1 || { grep -E 'error' "$out/build.log" | head -30; exit 1; }
wait
echo "built in $(( $(date +%s) - t0 )) s"
lib=$(find "$build" -name libfullmonte.a | head -1)
linkdir="$build/Apps"
linktxt="$linkdir/CMakeFiles/fullmonte-mcml.dir/link.txt"  # absolute: read after the cd below
[ -f "$lib" ] && [ -f "$linktxt" ] || { echo "no libfullmonte.a or link.txt under $build"; exit 1; }
for v in "${variants[@]}"; do
  name=${v%%:*}; vd="$build/ops-$name"
  [ -f "$vd/McmlCuda.cu.o" ] && cp "$lib" "$vd/libfullmonte.a" && ar r "$vd/libfullmonte.a" "$vd/McmlCuda.cu.o" &&
    ( cd "$linkdir" && eval "$(sed -e "s#[^ ]*libfullmonte\.a#$vd/libfullmonte.a#" -e "s#-o [^ ]*fullmonte-mcml#-o $vd/fullmonte-mcml#" "$linktxt")" ) \
    >> "$vd/compile.log" 2>&1
  [ -x "$vd/fullmonte-mcml" ] || { echo "variant $name did not build:"; tail -20 "$vd/compile.log"; exit 1; }
  cp "$vd/compile.log" "$out/compile-$name.log"
  # ptxas's lines for the plain run's grouped kernel (mcmlSlabKernel<4, plain tallies>)
  echo "variant $name (${v#*:}): $(python3 - "$vd/compile.log" <<'PY'
import re, sys
name, out = None, []
for l in open(sys.argv[1]):
    m = re.search(r"Compiling entry function '(\w+)'", l)
    if m: name = m.group(1); continue
    if name and "mcmlSlabKernelILj4E" in name and "McmlTimeTally" not in name and "Segment" not in name:
        out += re.findall(r"Used \d+ registers|\d+ bytes spill stores", l)
print(", ".join(out))
PY
)"
done
skin="$data/mcml/skin7/7layerskin_600nm.mci"
[ -f "$skin" ] || { echo "no $skin: no timings"; exit 0; }
bench/skin_mci.sh "$skin" "$photons" skin_run > "$dir/skin_run.mci"
bench/skin_mci.sh "$skin" "$ncuPhotons" skin_ncu > "$dir/skin_ncu.mci"
for r in $(seq 1 "$rounds"); do
  for v in "${variants[@]}"; do
    name=${v%%:*}
    "$build/ops-$name/fullmonte-mcml" "$dir/skin_run.mci" --kernel cuda --quiet --output-dir "$dir/out_$name" \
      > "$out/run-$name-$r.log" 2>&1
    echo "round $r $name (exit $?): $(grep -E 'GPU kernel' "$out/run-$name-$r.log" | sed 's/^ *//')"
    echo "    $(grep -E 'Rd .* Tt' "$out/run-$name-$r.log" | sed 's/^ *//'); $(grep -E 'interactions per photon' "$out/run-$name-$r.log" | sed 's/^ *//')"
  done
done
if [ "$ncuPhotons" != 0 ] && command -v ncu >/dev/null; then
  for v in "${variants[@]}"; do
    name=${v%%:*}
    [[ " $ncuVariants " == *" $name "* ]] || continue
    ncu --metrics smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active -k regex:mcmlSlabKernel --csv \
      "$build/ops-$name/fullmonte-mcml" "$dir/skin_ncu.mci" --kernel cuda --quiet --output-dir "$dir/ncu_$name" \
      > "$out/ncu-$name.csv" 2>&1
    python3 - "$out/ncu-$name.csv" "$name" <<'PY'
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
h = rows[0]; m = h.index("Metric Name"); v = h.index("Metric Value")
inst = sum(float(r[v].replace(",", "")) for r in rows[1:] if r[m] == "smsp__inst_executed.sum")
issue = [float(r[v].replace(",", "")) for r in rows[1:] if r[m].startswith("smsp__issue_active")]
print(f"ncu {sys.argv[2]}: {inst:.4e} warp instructions, issue active {sum(issue) / max(1, len(issue)):.1f}% ({len(issue)} launches)")
PY
  done
fi
rm -rf "$dir"/out_* "$dir"/ncu_*
echo "done in $(( $(date +%s) - t0 )) s"
