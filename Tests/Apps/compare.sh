#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# fullmonte-compare never trusts garbage (issue 26): data for which the relative L1 distance is
# undefined (empty, all nan, inf, nan in one file only, a reference summing to zero), or files of
# different kinds, meshes or gates, exit 1 with a message saying why; good data (value files,
# fluence matrices, surface_exit.txt, .fmtg) still gives the distance.
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
# surface_exit.txt files (fullmonte-run's header line names them): the exit fluence face by
# face, the same faces with the same points required.
exits() {  # NAME then rows "id p1 p2 p3 energy fluence"
  local name=$1
  shift
  echo "# face p1 p2 p3 energy(packet weight) exit_fluence(per mm^2, scaled to --power)" >"$dir/$name"
  for r in "$@"; do echo "$r" >>"$dir/$name"; done
}
exits ea.txt "1 1 2 3 0.5 1" "2 2 3 4 0.5 2"
exits eb.txt "1 1 2 3 0.5 1" "2 2 3 4 0.7 3"
exits epts.txt "1 1 2 3 0.5 1" "2 2 3 5 0.5 2"
exits eshort.txt "1 1 2 3 0.5 1"
exits ebad.txt "1 1 2 3 0.5 x"
expect_ok "surface_exit.txt distance" "L1 0.333333 (exit fluence, 2 faces)" ea.txt eb.txt
expect_fail "surface_exit.txt of another mesh" "row 2: face '2 2 3 4' in $dir/ea.txt, '2 2 3 5'" ea.txt epts.txt
expect_fail "surface_exit.txt with fewer faces" "has 2 faces, $dir/eshort.txt has 1" ea.txt eshort.txt
expect_fail "surface_exit.txt with a bad value" "ebad.txt:2: exit fluence 'x' is not a number" ea.txt ebad.txt
expect_fail "surface_exit.txt against a value file" "is a surface_exit.txt, $dir/good is a value file" ea.txt good

# .fmtg files (docs/TIME_DOMAIN.md): the same gates, quantity, elements and element lists.
fmtg() {  # PATH QUANTITY STEP ELEMENTS V... (gates from 0 to 1 ns)
  /usr/bin/python3 - "$@" <<'PY'
import struct, sys
path, qty, step, n, vals = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), [float(v) for v in sys.argv[5:]]
gates = round(1 / step)
h = b"FMTGATED" + struct.pack("<6IQ3d", 1, 0x01020304, qty, gates, gates + 2, 0, n, 0.0, 1.0, step)
h += b"J/mm^2".ljust(32, b"\0") + struct.pack("<Q", 128) + bytes(24)
assert len(vals) == (gates + 2) * n
open(path, "wb").write(h + struct.pack("<%dd" % len(vals), *vals))
PY
}
mkdir -p "$dir/fa" "$dir/fb" "$dir/fc"
fmtg "$dir/fa/surface_exit_gated.fmtg" 3 0.5 2 1 2 3 4 0 0 0 0
fmtg "$dir/fb/surface_exit_gated.fmtg" 3 0.5 2 1 2 3 5 0 0 0 0
fmtg "$dir/fc/surface_exit_gated.fmtg" 3 0.5 2 1 2 3 4 0 0 0 0
printf '# face p1 p2 p3\n1 1 2 3\n2 2 3 4\n' >"$dir/fa/surface_exit_gated_faces.txt"
printf '# face p1 p2 p3\n1 1 2 3\n2 2 3 4\n' >"$dir/fb/surface_exit_gated_faces.txt"
printf '# face p1 p2 p3\n1 1 2 3\n3 2 3 5\n' >"$dir/fc/surface_exit_gated_faces.txt"
fmtg "$dir/g4.fmtg" 1 0.25 2 1 2 3 4 1 1 1 1 0 0 0 0
fmtg "$dir/q1.fmtg" 1 0.5 2 1 2 3 4 0 0 0 0
fmtg "$dir/n3.fmtg" 1 0.5 3 1 2 3 4 5 6 0 0 0 0 0 0
fmtg "$dir/q1b.fmtg" 1 0.5 2 1 2 3 4 0 0 0 0
expect_ok ".fmtg distance" "L1 0.1 (worst bin 1 [0.5-1 ns]: 0.142857)" fa/surface_exit_gated.fmtg fb/surface_exit_gated.fmtg
expect_fail ".fmtg of other faces" "do not list the same elements (they differ)" fa/surface_exit_gated.fmtg fc/surface_exit_gated.fmtg
expect_fail ".fmtg of other gates" "has gates 0:1:0.5 ns (2 gates)" q1.fmtg g4.fmtg
expect_fail ".fmtg of another quantity" "holds quantity 1" q1.fmtg fa/surface_exit_gated.fmtg
expect_fail ".fmtg of other elements" "has 2 elements per bin" q1.fmtg n3.fmtg
expect_ok ".fmtg equal" "L1 0 (worst bin 0 [0-0.5 ns]: 0)" q1.fmtg q1b.fmtg
expect_fail ".fmtg against a matrix" "is a time-gated file (.fmtg), $dir/ma.fmm is a fluence matrix" q1.fmtg ma.fmm
echo "compare: $failures failure(s)"
[ "$failures" = 0 ]
