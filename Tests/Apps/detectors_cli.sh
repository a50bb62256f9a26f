#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# fullmonte-run --detectors (docs/DETECTORS.md): detected.fmd and detector_tpsf.txt, read back by
# fullmonte-detected (signal, reweighting, TPSF); --replay writes jacobian.txt and refuses a
# replay whose packets do not reproduce, or GPU records forced into another cell layout;
# --max-detected truncation is reported; bad detectors are errors naming the detector, exit 1,
# no outputs.
# Usage: detectors_cli.sh path/to/fullmonte-run path/to/fullmonte-detected
set -u
exe=$1
det=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/model.sh"
write_model "$dir"
m=(--mesh "$dir/m.mesh" --opt "$dir/m.opt" --source "$dir/m.source" --packets 4000 --threads 2 --quiet)
disks='0,0.3,0.3,0.3;0.3,0.3,0,0.3'
failures=0
ok() { echo "ok   $1"; }
fail() { echo "FAIL $1"; failures=$((failures + 1)); }

"$exe" "${m[@]}" --detectors "$disks" --tpsf 0,0.1,0.001 --output "$dir/run" >/dev/null 2>"$dir/err" ||
  fail "detecting run: $(cat "$dir/err")"
if [ -s "$dir/run/detected.fmd" ] && [ "$(grep -vc '^#' "$dir/run/detector_tpsf.txt")" = 100 ] &&
   head -1 "$dir/run/detected.fmd" | grep -q "fullmonte-detected 2"; then
  ok "detected.fmd and detector_tpsf.txt written"
else
  fail "detecting run outputs: $(ls "$dir/run")"
fi

if grep -q '"detectors": {"records": [0-9]*, "detected": [0-9]*, "signal": \[[-0-9.e]*, [-0-9.e]*\], "signal_stderr": \[[-0-9.e]*, [-0-9.e]*\]}' "$dir/run/summary.json" &&
   grep -q '"standard_error": {"batches": 10' "$dir/run/summary.json"; then
  ok "summary.json: detected signal per detector with standard errors, tally standard errors"
else
  fail "summary.json of a detecting run: $(grep -e detectors -e standard_error "$dir/run/summary.json")"
fi

"$exe" "${m[@]}" --detectors "$disks" --mch --output "$dir/mch" >/dev/null 2>"$dir/err" || fail "--mch run: $(cat "$dir/err")"
records=$(grep -a '^records ' "$dir/mch/detected.fmd" | cut -d' ' -f2)
if [ -s "$dir/mch/detected.mch" ] && [ "$(head -c 4 "$dir/mch/detected.mch")" = MCXH ] &&
   [ "$(stat -c %s "$dir/mch/detected.mch")" = $((64 + records * 4 * (1 + 2 + 2 + 3 + 3 + 1))) ]; then
  ok "--mch: detected.mch, 64-byte header and one row of 12 floats per record (d, s, p, x, v, w)"
else
  fail "--mch output: $(ls -l "$dir/mch")"
fi
"$exe" "${m[@]}" --mch --output "$dir/nomch" >/dev/null 2>"$dir/err"
rc=$?
if [ "$rc" = 1 ] && grep -q -- "--mch needs --detectors" "$dir/err"; then ok "--mch without --detectors refused"; else fail "--mch alone: exit $rc"; fi

"$exe" "${m[@]}" --detectors "$disks" --adjoint --output "$dir/adj" >/dev/null 2>"$dir/err" || fail "--adjoint run: $(cat "$dir/err")"
tetras=2  # model.sh
if [ "$(head -c 8 "$dir/adj/adjoint_fluence.fmm" 2>/dev/null)" = FMFLUMAT ] &&
   [ "$(stat -c %s "$dir/adj/adjoint_fluence.fmm")" = $((128 + tetras * 2 * 8)) ]; then
  ok "--adjoint: adjoint_fluence.fmm, a column of $tetras tetras per detector"
else
  fail "--adjoint output: $(ls -l "$dir/adj")"
fi

"$det" "$dir/run/detected.fmd" --mua 0.2,0.2 --tpsf 0,0.1,0.01 >"$dir/out" 2>"$dir/err" || fail "fullmonte-detected: $(cat "$dir/err")"
if grep -q "^signal detector 0: " "$dir/out" && grep -q "^reweighted detector 1: " "$dir/out" &&
   grep -q "^jacobian detector 0 region 2: " "$dir/out" && [ "$(grep -c '^tpsf detector 0' "$dir/out")" = 10 ]; then
  ok "fullmonte-detected: signal, reweighted signal, Jacobian per region, TPSF"
else
  fail "fullmonte-detected output: $(head -5 "$dir/out")"
fi

"$exe" "${m[@]}" --detectors "$disks" --replay "$dir/run/detected.fmd" --output "$dir/jac" >/dev/null 2>"$dir/err" ||
  fail "replay: $(cat "$dir/err")"
if [ "$(grep -vc '^#' "$dir/jac/jacobian.txt")" = 2 ] && ! grep -v '^#' "$dir/jac/jacobian.txt" | awk 'NF != 4' | grep -q .; then
  ok "--replay: jacobian.txt, one row per tetra, a column per detector"
else
  fail "--replay output: $(cat "$dir/jac/jacobian.txt" 2>&1 | head -3)"
fi

"$exe" "${m[@]}" --wmin 0.5 --detectors "$disks" --replay "$dir/run/detected.fmd" --output "$dir/jac2" >/dev/null 2>"$dir/err"
rc=$?
if [ "$rc" = 1 ] && grep -q "did not reproduce" "$dir/err" && [ ! -e "$dir/jac2/jacobian.txt" ]; then
  ok "a replay that does not reproduce is refused"
else
  fail "replay with other --wmin: exit $rc, $(cat "$dir/err")"
fi

"$exe" "${m[@]}" --detectors "$disks" --max-detected 3 --output "$dir/cut" >/dev/null 2>"$dir/err"
if grep -q "only the first 3" "$dir/err" && grep -q "^records 3$" "$dir/cut/detected.fmd"; then
  ok "--max-detected truncation reported"
else
  fail "--max-detected: $(cat "$dir/err")"
fi

bad() {  # bad WHAT PATTERN ARGS...
  local what=$1 pattern=$2
  shift 2
  "$exe" "${m[@]}" "$@" --output "$dir/bad" >/dev/null 2>"$dir/err"
  local rc=$?
  if [ "$rc" = 1 ] && grep -q -- "$pattern" "$dir/err" && [ ! -e "$dir/bad/summary.json" ]; then
    ok "$what refused: $(cat "$dir/err")"
  else
    fail "$what: exit $rc, $(cat "$dir/err")"
  fi
}
bad "a disk off the mesh" "detector 0 centre/radius" --detectors "5,5,5,0.1"
bad "a zero radius" "detector 1 radius" --detectors "0,0.3,0.3,0.3;0,0,0,0"
bad "a malformed detector" "--detectors item 1" --detectors "1,2,3"
bad "--max-detected alone" "needs --detectors" --max-detected 5
bad "bad gates" "--tpsf" --detectors "$disks" --tpsf 0,1,0
m=(--mesh "$dir/m.mesh" --opt "$dir/m.opt" --source "$dir/m.source" --packets 4000 --quiet)
bad "the hybrid kernel" "hybrid kernel does not record" --kernel hybrid --detectors "$disks"
# Records of the GPU kernel (the header's kernel line) are not replayed on the CPU.
LC_ALL=C sed 's/^kernel cpu$/kernel cuda/' "$dir/run/detected.fmd" >"$dir/gpu.fmd"
bad "a replay of GPU records on the CPU" "detected by the cuda kernel, not cpu" --detectors "$disks" --replay "$dir/gpu.fmd"
# GPU records of the compact cell layout (the header's cells line) with FM_CUDA_CELL_LAYOUT forcing
# another: refused before any device is needed, naming the file and both layouts.
LC_ALL=C sed 's/^kernel cpu$/kernel cuda\ncells compact/' "$dir/run/detected.fmd" >"$dir/compact.fmd"
export FM_CUDA_CELL_LAYOUT=record
bad "a replay of compact records in the records' layout" \
  "compact.fmd: the records were made in the GPU.s compact cell layout.*FM_CUDA_CELL_LAYOUT=record asks for the record layout" \
  --kernel cuda --detectors "$disks" --replay "$dir/compact.fmd"
unset FM_CUDA_CELL_LAYOUT

[ "$failures" = 0 ] || { echo "$failures failure(s)"; exit 1; }
