#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The fullmonte-mesh contract: a labelled image in, a mesh file and a report out (exit 0); every
# bad input exits 1 with a message naming the file or option and writes no output.
# Usage: mesh_cli.sh path/to/fullmonte-mesh VTK(ON|OFF)
set -u
exe=$1
vtk=${2:-OFF}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

# A 16^3 MetaImage of 0.5 mm voxels: label 1 in voxels 3..12, label 2 in 6..9 (uchar).
write_image() {
  local path=$1 inner=$2 outer=$3 data="" i j k v
  for ((k = 0; k < 16; k++)); do for ((j = 0; j < 16; j++)); do for ((i = 0; i < 16; i++)); do
    v=0
    if ((i >= 3 && i <= 12 && j >= 3 && j <= 12 && k >= 3 && k <= 12)); then v=$outer; fi
    if ((i >= 6 && i <= 9 && j >= 6 && j <= 9 && k >= 6 && k <= 9)); then v=$inner; fi
    data+="\\x0$v"
  done; done; done
  printf 'ObjectType = Image\nNDims = 3\nDimSize = 16 16 16\nElementSpacing = 0.5 0.5 0.5\nOffset = -4 -4 -4\nElementType = MET_UCHAR\nElementDataFile = LOCAL\n' >"$path"
  printf "$data" >>"$path"
}
write_image "$dir/in.mha" 2 1
write_image "$dir/zeros.mha" 0 0
printf 'this is not a header\n' >"$dir/garbage.mha"
printf 'v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n' >"$dir/open.obj"

# expect_ok NAME OUT ARGS...: exit 0, OUT written, report printed.
expect_ok() {
  local name=$1 out=$2
  shift 2
  rm -f "$out"
  timeout 120 "$exe" "$@" -o "$out" --quiet >"$dir/stdout" 2>"$dir/stderr"
  local rc=$?
  if [ "$rc" != 0 ]; then fail "$name: exit $rc: $(cat "$dir/stderr")"; return; fi
  [ -s "$out" ] || fail "$name: $out not written"
  grep -q "tetras, .* points" "$dir/stdout" || fail "$name: no tetra count in the report"
  grep -q "quality: dihedral angle min" "$dir/stdout" || fail "$name: no quality line"
  echo "ok   $name"
}
# expect_fail NAME NEEDLE ARGS...: exit 1, stderr holds NEEDLE, no output file.
expect_fail() {
  local name=$1 needle=$2
  shift 2
  rm -f "$dir/out.mesh"
  timeout 120 "$exe" "$@" >"$dir/stdout" 2>"$dir/stderr"
  local rc=$?
  if [ "$rc" != 1 ] || ! grep -qF -- "$needle" "$dir/stderr"; then
    fail "$name: exit $rc (want 1), message: $(cat "$dir/stderr") (want '$needle')"
  elif [ -e "$dir/out.mesh" ]; then
    fail "$name: output written despite the error"
  else
    echo "ok   $name: $(head -1 "$dir/stderr")"
  fi
}

expect_ok "image to TIM-OS mesh" "$dir/a.mesh" "$dir/in.mha" --cell-size 1 --seed 4
# Both labels reported next to their voxel volumes: label 1 is 10^3 - 4^3 voxels of 0.125 mm^3.
grep -Eq '^ +1 +[0-9]+ +[0-9.]+ +936 +117.0000' "$dir/stdout" || fail "report: no row for label 1 with its 936 voxels"
grep -Eq '^ +2 +[0-9]+ +[0-9.]+ +64 +8.0000' "$dir/stdout" || fail "report: no row for label 2 with its 64 voxels"
expect_ok "same seed, same mesh" "$dir/b.mesh" "$dir/in.mha" --cell-size 1 --seed 4
cmp -s "$dir/a.mesh" "$dir/b.mesh" || fail "the same seed gave different meshes"
expect_ok "label map merges labels" "$dir/c.mesh" "$dir/in.mha" --label-map 2=1 --no-perturb --no-exude
grep -Eq '^ +2 ' "$dir/stdout" && fail "label map 2=1 left a region 2"
expect_ok "background meshed as a region" "$dir/e.mesh" "$dir/in.mha" --label-map 0=3 --no-perturb
grep -Eq '^ +3 +[0-9]+ +[0-9.]+ +3096 +387.0000' "$dir/stdout" || fail "label map 0=3: no region 3 with the 3096 background voxels"
printf '# merge\n2 1\n' >"$dir/map.txt"
expect_ok "label map file" "$dir/d.mesh" "$dir/in.mha" --label-map "$dir/map.txt" --time-limit 5
grep -Eq '^ +2 ' "$dir/stdout" && fail "label map file 2 1 left a region 2"
if [ "$vtk" = ON ]; then
  expect_ok "image to .vtu" "$dir/a.vtu" "$dir/in.mha" --facet-size 0.8 --facet-distance 0.2
  grep -q 'Name="Region"' "$dir/a.vtu" || fail ".vtu has no Region array"
fi
# Other label conventions: sparse codes renumbered 1..N (the table printed), a background coded
# other than 0 named before meshing, an image downsampled 2x (8^3 voxels of 1 mm).
write_image "$dir/codes.mha" 9 7
expect_ok "compact labels" "$dir/f.mesh" "$dir/codes.mha" --compact-labels --no-perturb
grep -q "compact labels (image label -> region): 7->1 9->2" "$dir/stdout" || fail "--compact-labels: no table: $(cat "$dir/stdout")"
grep -Eq '^ +2 +[0-9]+ +[0-9.]+ +64 +8.0000' "$dir/stdout" || fail "--compact-labels: label 9 is not region 2"
expect_ok "background coded 1" "$dir/g.mesh" "$dir/in.mha" --label-map 0=1,1=0 --no-perturb
grep -q "warning: label 1 covers every voxel of the image's border: .* --label-map 1=0" "$dir/stdout" ||
  fail "a background coded 1 is not named: $(cat "$dir/stdout")"
expect_ok "downsample" "$dir/h.mesh" "$dir/in.mha" --downsample 2 --no-perturb
grep -q "downsampled 2x: 8 x 8 x 8 voxels of 1 x 1 x 1 mm, origin (-3.75, -3.75, -3.75) mm" "$dir/stdout" ||
  fail "--downsample 2: $(cat "$dir/stdout")"
timeout 60 "$exe" "$dir/in.mha" -o "$dir/p.mesh" --cell-size 1 >"$dir/stdout" 2>"$dir/stderr"
grep -q "at least .* tetras" "$dir/stderr" || fail "no tetra estimate on stderr: $(cat "$dir/stderr")"
grep -q "refinement: .* s (.* tetras)" "$dir/stderr" || fail "no progress on stderr: $(cat "$dir/stderr")"
"$exe" --help | grep -q "usage: fullmonte-mesh" || fail "--help prints no usage"
"$exe" >/dev/null 2>&1 && fail "no arguments exits 0"

# --reorder: the mesher's output is already numbered for locality (reordering it changes nothing);
# the same mesh with its tetras listed backwards reorders to that same file.
timeout 60 "$exe" --reorder "$dir/a.mesh" -o "$dir/r.mesh" >"$dir/stdout" 2>"$dir/stderr" || fail "--reorder: $(cat "$dir/stderr")"
cmp -s "$dir/a.mesh" "$dir/r.mesh" && echo "ok   mesher output is in locality order" || fail "--reorder changed the mesher's output"
np=$(sed -n 1p "$dir/a.mesh"); nt=$(sed -n 2p "$dir/a.mesh")
{ sed -n "1,$((np + 2))p" "$dir/a.mesh"; sed -n "$((np + 3)),$((np + 2 + nt))p" "$dir/a.mesh" | tac; } >"$dir/rev.mesh"
cmp -s "$dir/a.mesh" "$dir/rev.mesh" && fail "the reversed mesh equals the original"
timeout 60 "$exe" --reorder "$dir/rev.mesh" -o "$dir/r2.mesh" >"$dir/stdout" 2>"$dir/stderr" || fail "--reorder reversed: $(cat "$dir/stderr")"
cmp -s "$dir/a.mesh" "$dir/r2.mesh" && echo "ok   --reorder restores locality order" || fail "--reorder of the reversed mesh differs from the ordered one"

o="$dir/out.mesh"
expect_fail "reorder with an image" "--reorder takes one mesh" --reorder "$dir/a.mesh" "$dir/in.mha" -o "$o"
expect_fail "reorder a missing mesh" "nope.mesh" --reorder "$dir/nope.mesh" -o "$o"
expect_fail "reorder and repair" "give --repair or --reorder, not both" --reorder "$dir/a.mesh" --repair "$dir/a.mesh" -o "$o"
expect_fail "missing image" "$dir/nope.mha: cannot open" "$dir/nope.mha" -o "$o"
expect_fail "unknown image format" "unknown label image format" "$dir/in.png" -o "$o"
expect_fail "garbage header" "$dir/garbage.mha:1: expected 'Key = Value'" "$dir/garbage.mha" -o "$o"
expect_fail "only label 0" "only label 0" "$dir/zeros.mha" -o "$o"
expect_fail "unknown output format" "-o $dir/out.txt: unknown output format" "$dir/in.mha" -o "$dir/out.txt"
expect_fail "no output" "no output" "$dir/in.mha"
expect_fail "not a number" "--cell-size: 'abc' is not a number" "$dir/in.mha" -o "$o" --cell-size abc
expect_fail "negative size" "cell size must be a finite size" "$dir/in.mha" -o "$o" --cell-size -2
expect_fail "facet angle" "facet angle must be in [0, 30]" "$dir/in.mha" -o "$o" --facet-angle 45
expect_fail "bad label map" "label map item 1: 'x' is not a label" "$dir/in.mha" -o "$o" --label-map x=1
expect_fail "bad per-label size" "--cell-size-label: '2' is not LABEL=MM" "$dir/in.mha" -o "$o" --cell-size-label 2
expect_fail "unknown option" "unknown option --frobnicate" "$dir/in.mha" -o "$o" --frobnicate
expect_fail "option without value" "--seed needs a value" "$dir/in.mha" -o "$o" --seed
expect_fail "bad seed" "--seed must be an integer" "$dir/in.mha" -o "$o" --seed 1.5
expect_fail "bad downsample" "--downsample must be an integer in [1, 64]" "$dir/in.mha" -o "$o" --downsample 0
expect_fail "downsample a surface" "--compact-labels and --downsample apply to images only" --surface "$dir/open.obj:1" -o "$o" --downsample 2
expect_fail "mesh beyond the memory" "of memory" "$dir/in.mha" -o "$o" --cell-size 0.0005
printf 'ObjectType = Image\nNDims = 3\nDimSize = 5000 5000 5000\nElementType = MET_USHORT\nElementDataFile = LOCAL\n' >"$dir/huge.mha"
expect_fail "image beyond the memory" "$dir/huge.mha: reading its voxels needs" "$dir/huge.mha" -o "$o"
expect_fail "two images" "more than one input image" "$dir/in.mha" "$dir/zeros.mha" -o "$o"
expect_fail "repair of an image" "in.mha: unknown mesh format" --repair "$dir/in.mha" -o "$o"
expect_fail "open surface" "$dir/open.obj: the surface is not closed" --surface "$dir/open.obj:1" -o "$o"
expect_fail "surface label 0" "the label must be an integer >= 1" --surface "$dir/open.obj:0" -o "$o"
expect_fail "surface without a label" "should be FILE:LABEL (FILE alone: a labelled .vtp surface)" --surface "$dir/open.obj" -o "$o"
expect_fail "missing surface" "$dir/none.stl: no such file" --surface "$dir/none.stl:1" -o "$o"
# Surfaces that cross are refused before refinement (which crashes on them), naming both files.
# write_box PATH X0 Y0 Z0 X1 Y1 Z1: a closed box of 12 triangles (OBJ).
write_box() {
  local p=$1 x0=$2 y0=$3 z0=$4 x1=$5 y1=$6 z1=$7
  printf 'v %s %s %s\n' $x0 $y0 $z0 $x1 $y0 $z0 $x0 $y1 $z0 $x1 $y1 $z0 $x0 $y0 $z1 $x1 $y0 $z1 $x0 $y1 $z1 $x1 $y1 $z1 >"$p"
  printf 'f 1 5 7\nf 1 7 3\nf 2 4 8\nf 2 8 6\nf 1 2 6\nf 1 6 5\nf 3 7 8\nf 3 8 4\nf 1 3 4\nf 1 4 2\nf 5 6 8\nf 5 8 7\n' >>"$p"
}
write_box "$dir/boxA.obj" 0 0 0 10 10 10
write_box "$dir/boxB.obj" 5 5 5 15 15 15
write_box "$dir/boxC.obj" 30 0 0 40 10 10
expect_fail "overlapping surfaces" "$dir/boxA.obj and $dir/boxB.obj intersect near (" --surface "$dir/boxA.obj:1" --surface "$dir/boxB.obj:2" -o "$o"
expect_fail "tiny facet size" "facet size 1e-09 mm" --surface "$dir/boxA.obj:1" --surface "$dir/boxC.obj:2" -o "$o" --facet-size 1e-9
expect_fail "tiny facet size (image)" "facet size 1e-09 mm" "$dir/in.mha" -o "$o" --facet-size 1e-9
expect_fail "size of an absent label" "cell size of label 7: the image has no label 7 (labels present: 1, 2)" "$dir/in.mha" -o "$o" --cell-size-label 7=1
expect_fail "size of an absent surface label" "facet size of label 3: the surfaces have no label 3" --surface "$dir/boxA.obj:1" -o "$o" --facet-size-label 3=1
expect_ok "disjoint surfaces" "$dir/s.mesh" --surface "$dir/boxA.obj:1" --surface "$dir/boxC.obj:2" --cell-size 3 --facet-size 3

if [ "$failures" != 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "all fullmonte-mesh contract checks passed"
