#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The binary mesh through fullmonte-run (issue 29): --save-mesh converts without a run; a run
# from the .fmb gives the same fluence.txt, byte for byte, as from the .mesh; a truncated or
# corrupt .fmb ends in exit 1 naming the file and the problem; a mesh the checks refuse is
# refused from .fmb as from text.
# Usage: binary_mesh.sh path/to/fullmonte-run
set -u
exe=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0
fail() { echo "FAIL $1"; failures=$((failures + 1)); }
check() {  # check NAME CONDITION-STATUS
  if [ "$2" = 0 ]; then echo "ok   $1"; else fail "$1"; fi
}

# Two unit cubes side by side (x 0..2), 6 tetras each, regions 1 and 2.
{ echo 12; echo 12
  for z in 0 1; do for y in 0 1; do for x in 0 1 2; do echo "$x $y $z"; done; done; done
  for c in 0 1; do
    p() { echo $((1 + c + $1)); }  # corner offsets: x +1, y +3, z +6
    a=$(p 0); b=$(p 1); d=$(p 3); e=$(p 4); f=$(p 6); g=$(p 7); h=$(p 9); i=$(p 10)
    r=$((c + 1))
    echo "$a $b $e $i $r"; echo "$a $b $g $i $r"; echo "$a $d $e $i $r"
    echo "$a $d $h $i $r"; echo "$a $f $g $i $r"; echo "$a $f $h $i $r"
  done
} > "$dir/m.mesh"
printf '1\n2\n0.1 10 0.9 1.4\n0.2 20 0.8 1.4\n1\n1.0\n' > "$dir/m.opt"

"$exe" --mesh "$dir/m.mesh" --save-mesh "$dir/m.fmb" > "$dir/stdout" 2> "$dir/stderr"
check "convert: exit 0, file written" $([ $? = 0 ] && [ -s "$dir/m.fmb" ] && grep -q "12 tetras" "$dir/stdout"; echo $?)
check "convert: no run" $([ ! -d "$dir/out" ]; echo $?)

for f in mesh fmb; do
  "$exe" --mesh "$dir/m.$f" --opt "$dir/m.opt" --point 0.5,0.5,0.5 --packets 5000 --threads 2 --quiet \
    --output "$dir/out_$f" > /dev/null 2> "$dir/stderr_$f"
  check "run from .$f" $?
done
check "same fluence.txt from .mesh and .fmb" $(cmp -s "$dir/out_mesh/fluence.txt" "$dir/out_fmb/fluence.txt"; echo $?)

head -c 300 "$dir/m.fmb" > "$dir/short.fmb"
"$exe" --mesh "$dir/short.fmb" --opt "$dir/m.opt" --point 0.5,0.5,0.5 --output "$dir/o2" > /dev/null 2> "$dir/stderr"
check "truncated .fmb: exit 1 naming the file" $([ $? = 1 ] && grep -q "short.fmb: truncated" "$dir/stderr"; echo $?)
cp "$dir/m.fmb" "$dir/bad.fmb"
printf '\x07' | dd of="$dir/bad.fmb" bs=1 seek=100 conv=notrunc 2> /dev/null
"$exe" --mesh "$dir/bad.fmb" --opt "$dir/m.opt" --point 0.5,0.5,0.5 --output "$dir/o3" > /dev/null 2> "$dir/stderr"
check "corrupt .fmb: exit 1, checksum named" $([ $? = 1 ] && grep -q "bad.fmb: points checksum mismatch" "$dir/stderr"; echo $?)
check "no output folder after a refused mesh" $([ ! -e "$dir/o2/fluence.txt" ] && [ ! -e "$dir/o3/fluence.txt" ]; echo $?)

if [ "$failures" != 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "all passed"
