#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Mesh checks and source warnings through fullmonte-run (issue 23): a crack (two regions meshed
# apart) and a repeated tetra end in exit 1 with the defect named; --allow-defects runs the
# cracked mesh with the finding on stderr and in summary.json; a source partly outside the mesh
# or on its surface is warned about on stderr and in summary.json.
# With fullmonte-vtk (VTK builds): the same check and --allow-defects there.
# With FM_MESH_EXE (fullmonte-mesh, CGAL builds): --repair joins the crack, and the repaired mesh
# runs without the defect, with the same tetras; bad repair calls exit 1.
# Usage: mesh_checks.sh path/to/fullmonte-run [path/to/fullmonte-vtk]
set -u
exe=$1
vtk=${2:-}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0
fail() { echo "FAIL $1"; failures=$((failures + 1)); }

# Tetra 1 (region 1) above z = 0, tetra 2 (region 2) below, their shared triangle written twice
# (points 1-3 and their copies 6-8): a crack.
printf '8\n2\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n0 0 -1\n0 0 0\n1 0 0\n0 1 0\n1 2 3 4 1\n6 7 8 5 2\n' >"$dir/crack.mesh"
printf '5\n3\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n0 0 -1\n1 2 3 4 1\n1 2 3 5 2\n4 3 2 1 1\n' >"$dir/twice.mesh"
printf '5\n2\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n0 0 -1\n1 2 3 4 1\n1 2 3 5 2\n' >"$dir/joined.mesh"
printf '1\n2\n0.1 10 0.9 1.4\n0.2 20 0.8 1.4\n1\n1.0\n' >"$dir/m.opt"
printf '1\n1 0.2 0.2 0.2 1000\n' >"$dir/m.source"
printf '1\n11 0 0.2 0.2 3 0 0 -1 1000\n' >"$dir/pencil.source"
printf '1\n1 0 0 0 1000\n' >"$dir/vertex.source"

run() {  # run NAME ARGS...: exit status in $rc, stderr in $dir/stderr
  rm -rf "$dir/out"
  timeout 60 "$exe" --opt "$dir/m.opt" --output "$dir/out" --packets 2000 --threads 2 --quiet "${@:2}" \
    >"$dir/stdout" 2>"$dir/stderr"
  rc=$?
}
expect() {  # expect NAME RC NEEDLE: the last run exited RC with NEEDLE on stderr
  if [ "$rc" != "$2" ] || { [ -n "$3" ] && ! grep -qF -- "$3" "$dir/stderr"; }; then
    fail "$1: exit $rc (want $2), stderr: $(cat "$dir/stderr") (want '$3')"
  else
    echo "ok   $1"
  fi
}

run crack --mesh "$dir/crack.mesh" --source "$dir/m.source"
expect "crack is an error" 1 "cracks: 2 boundary faces lying on another boundary face"
[ -e "$dir/out/summary.json" ] && fail "crack: outputs written despite the error"
run crack-allowed --mesh "$dir/crack.mesh" --source "$dir/m.source" --allow-defects
expect "crack allowed" 0 "fullmonte-run: warning: mesh (allowed defect): cracks: 2"
grep -qF '"warnings": ["mesh (allowed defect): cracks: 2' "$dir/out/summary.json" 2>/dev/null ||
  fail "crack allowed: summary.json lacks the warning: $(cat "$dir/out/summary.json" 2>/dev/null)"
run twice --mesh "$dir/twice.mesh" --source "$dir/m.source" --allow-defects
expect "repeated tetra is an error even when allowed" 1 "tetra 3 repeats tetra 1"
run joined --mesh "$dir/joined.mesh" --source "$dir/m.source"
expect "joined mesh runs" 0 ""
grep -qF '"warnings": []' "$dir/out/summary.json" || fail "joined: summary.json should list no warnings"
run pencil --mesh "$dir/joined.mesh" --source "$dir/pencil.source"
expect "pencil from outside" 0 "warning: PencilBeam source at (0.2 0.2 3) is outside the mesh"
grep -qF 'PencilBeam source at (0.2 0.2 3) is outside the mesh' "$dir/out/summary.json" || fail "pencil: not in summary.json"
run batch --mesh "$dir/joined.mesh" --batch-sources "$dir/pencil.source"
expect "batch: source warning" 0 "warning: source 0"
grep -qF 'PencilBeam source at (0.2 0.2 3) is outside the mesh' "$dir/out/summary.json" || fail "batch: not in summary.json"
run vertex --mesh "$dir/joined.mesh" --source "$dir/vertex.source"
expect "point on the surface" 0 "warning: Point source at (0 0 0) lies on the mesh surface"

if [ -n "$vtk" ]; then
  timeout 60 "$vtk" --mesh "$dir/crack.mesh" --output "$dir/crack.vtu" >"$dir/stdout" 2>"$dir/stderr"
  rc=$?
  expect "fullmonte-vtk: crack is an error" 1 "cracks: 2 boundary faces"
  timeout 60 "$vtk" --mesh "$dir/crack.mesh" --output "$dir/crack.vtu" --allow-defects >"$dir/stdout" 2>"$dir/stderr"
  rc=$?
  expect "fullmonte-vtk: crack allowed" 0 "fullmonte-vtk: warning: mesh (allowed defect): cracks: 2"
  timeout 60 "$vtk" --mesh "$dir/crack.vtu" --output "$dir/again.vtu" >"$dir/stdout" 2>"$dir/stderr"
  rc=$?
  expect "fullmonte-vtk: the written .vtu is checked on reading" 1 "crack.vtu: mesh check failed"
fi

mesher=${FM_MESH_EXE:-}
if [ -n "$mesher" ]; then
  timeout 60 "$mesher" --repair "$dir/crack.mesh" -o "$dir/fixed.mesh" >"$dir/stderr" 2>&1
  rc=$?
  expect "fullmonte-mesh --repair joins the crack" 0 "merged 3"
  [ "$(sed -n 1p "$dir/fixed.mesh" 2>/dev/null)" = 5 ] || fail "repair: want 5 points, got $(sed -n 1p "$dir/fixed.mesh")"
  [ "$(sed -n 2p "$dir/fixed.mesh" 2>/dev/null)" = 2 ] || fail "repair: want 2 tetras, got $(sed -n 2p "$dir/fixed.mesh")"
  run repaired --mesh "$dir/fixed.mesh" --source "$dir/m.source"
  expect "the repaired mesh runs without defects" 0 ""
  grep -qF '"warnings": []' "$dir/out/summary.json" 2>/dev/null || fail "repaired: summary.json should list no warnings"
  timeout 60 "$mesher" --repair "$dir/nothere.mesh" -o "$dir/x.mesh" >"$dir/stderr" 2>&1
  rc=$?
  expect "repair: missing file" 1 "nothere.mesh"
  timeout 60 "$mesher" --repair "$dir/crack.mesh" -o "$dir/x.mesh" --tolerance 0 >"$dir/stderr" 2>&1
  rc=$?
  expect "repair: bad tolerance" 1 "--tolerance must be > 0"
  timeout 60 "$mesher" --repair "$dir/crack.mesh" -o "$dir/x.mesh" --tolerance 5 >"$dir/stderr" 2>&1
  rc=$?
  expect "repair: a tolerance that collapses tetras is refused" 1 ""
  [ -e "$dir/x.mesh" ] && fail "repair: refused repair wrote its output"
else
  echo "SKIP fullmonte-mesh --repair: not built (no CGAL)"
fi

echo "mesh_checks: $failures failure(s)"
[ "$failures" = 0 ]
