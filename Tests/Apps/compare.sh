#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# fullmonte-compare never trusts garbage (issue 26): data for which the relative L1 distance is
# undefined (empty, all nan, inf, nan in one file only, a reference summing to zero) exits 1 with
# a message saying why; good data still gives the distance.
# Usage: compare.sh path/to/fullmonte-compare
set -u
exe=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0

# values NAME V...: a per-element value file as fullmonte-run writes (one value a line).
values() {
  local name=$1
  shift
  : >"$dir/$name"
  for v in "$@"; do echo "$v" >>"$dir/$name"; done
}
# matrix NAME ROWS COLS V...: a little-endian .fmm (docs/FLUENCE_MATRIX.md), written by python.
matrix() {
  /usr/bin/python3 - "$dir/$1" "${@:2}" <<'PY'
import struct, sys
path, rows, cols, vals = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), [float(v) for v in sys.argv[4:]]
h = b"FMFLUMAT" + struct.pack("<IIII", 1, 0x01020304, 1, 1) + struct.pack("<QQQQ", rows, cols, cols, 1)
h += struct.pack("<II", 1, 0) + b"mm^-2 per J emitted".ljust(32, b"\0") + struct.pack("<Q", 128) + bytes(24)
open(path, "wb").write(h + struct.pack("<%dd" % len(vals), *vals))
PY
}

expect_fail() {  # NAME NEEDLE A B
  local out rc
  out=$("$exe" "$dir/$3" "$dir/$4" 2>&1)
  rc=$?
  if [ "$rc" != 1 ] || ! grep -qF -- "$2" <<<"$out"; then
    echo "FAIL $1: exit $rc, output: $out (want exit 1 and '$2')"
    failures=$((failures + 1))
  else
    echo "ok   $1: $out"
  fi
}
expect_ok() {  # NAME WANT A B
  local out rc
  out=$("$exe" "$dir/$3" "$dir/$4" 2>&1)
  rc=$?
  if [ "$rc" != 0 ] || [ "$out" != "$2" ]; then
    echo "FAIL $1: exit $rc, output: $out (want '$2')"
    failures=$((failures + 1))
  else
    echo "ok   $1: $out"
  fi
}

values good 1 2 3 nan
values near 1 2 4 nan
values allnan nan nan nan nan
values zeros 0 0 0 nan
values inf 1 inf 3 nan
values neginf 1 2 -inf nan
values onenan 1 nan 3 nan
values empty
values empty2

expect_ok "distance of good data" "L1 0.166667" good near
expect_fail "all nan" "no value defined in both files" allnan allnan
expect_fail "empty" "no value defined in both files" empty empty2
expect_fail "zero reference" "zeros sums to zero" zeros good
expect_fail "both zero" "both are all zero" zeros zeros
expect_fail "inf in B" "inf: value 2 is infinite" good inf
expect_fail "-inf in A" "neginf: value 3 is infinite" neginf good
expect_fail "nan in one file only" "onenan: value 2 is undefined (nan) but defined in" onenan good

matrix ma.fmm 2 2 1 2 3 4
matrix mb.fmm 2 2 1 2 3 5
matrix mnan.fmm 2 2 nan nan nan nan
matrix mzero.fmm 2 2 0 0 0 0
matrix minf.fmm 2 2 1 2 inf 4
matrix mcol0.fmm 2 2 0 0 3 4
matrix mcol0b.fmm 2 2 1 0 3 4
expect_ok "matrix distance" "L1 0.1 (worst column 1: 0.142857)" ma.fmm mb.fmm
expect_fail "matrix all nan" "no value defined in both files" mnan.fmm mnan.fmm
expect_fail "matrix zero reference" "mzero.fmm sums to zero" mzero.fmm ma.fmm
expect_fail "matrix inf" "minf.fmm: row 0, column 1 is infinite" ma.fmm minf.fmm
expect_fail "matrix column zero in A only" "column 0: $dir/mcol0.fmm sums to zero" mcol0.fmm mcol0b.fmm
echo "compare: $failures failure(s)"
[ "$failures" = 0 ]
