#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Compatibility options on the command line (issue 25): fullmonte-run --no-entry-specular (no
# Fresnel reflection where a pencil beam enters, as FullMonte 2018), a matched boundary (TIM-OS
# boundary type 2) reflecting nothing at entry, MMC's .inp and JSON inputs (--mmc), and
# fullmonte-vtk --vtk-version 4.2.
# Usage: compat_cli.sh FULLMONTE_RUN [FULLMONTE_VTK]
set -u
RUN=$1
VTK=${2:-}
. "$(dirname "$0")/model.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
write_model "$T"
fail=0
check() { if [ "$2" != "$3" ]; then echo "FAILED: $1: got '$2', expected '$3'"; fail=1; else echo "ok: $1"; fi; }
specular() { sed -n 's/.*"specular": *\([^,]*\),*/\1/p' "$1/summary.json"; }

# Region 1 has n = 1.4 in air: R = (0.4/2.4)^2 = 0.02778 at normal incidence.
"$RUN" --mesh "$T/m.mesh" --opt "$T/m.opt" --pencil 0.2,0.2,-1,0,0,1 --packets 500 --output "$T/mcml" --quiet >/dev/null
check "default books MCML's specular" "$(specular "$T/mcml" | cut -c1-6)" "0.0277"
"$RUN" --mesh "$T/m.mesh" --opt "$T/m.opt" --pencil 0.2,0.2,-1,0,0,1 --packets 500 --output "$T/fm2018" --quiet \
    --no-entry-specular >/dev/null
check "--no-entry-specular books none" "$(specular "$T/fm2018")" "0"
printf '1\n2\n0.1 10 0.9 1.4\n0.2 20 0.8 1.3\n2\n' >"$T/matched.opt"
"$RUN" --mesh "$T/m.mesh" --opt "$T/matched.opt" --pencil 0.2,0.2,-1,0,0,1 --packets 500 --output "$T/matched" \
    --quiet >/dev/null
check "matched boundary books none" "$(specular "$T/matched")" "0"
printf '1\n11 1 0.2 0.2 -1 0 0 1 1\n' >"$T/pencil.source"
printf '%s\n' "$T/pencil.source" >"$T/list.txt"
"$RUN" --mesh "$T/m.mesh" --opt "$T/m.opt" --batch-sources "$T/list.txt" --packets 500 --output "$T/batch" \
    --quiet --no-entry-specular >/dev/null
check "batch --no-entry-specular books none" "$(grep -c '"specular": 0,' "$T/batch/summary.json")" "1"

# MMC's own inputs: a 2-tetra mesh as MMC files, the .inp and the JSON naming them.
printf '1 5\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n5 1 1 1\n' >"$T/node_two.dat"
printf '1 2\n1 1 2 3 4 1\n2 2 3 4 5 1\n' >"$T/elem_two.dat"
printf '1 1\n1 0.1 0 1 1.4\n' >"$T/prop_two.dat"   # g = 1: MMC's non-scattering medium
printf '700\n17\n0.2 0.2 0\n0 0 1\n0 5e-9 5e-10\ntwo\n1\n0 1\n' >"$T/two.inp"
"$RUN" --mmc "$T/two.inp" --output "$T/mmcinp" --quiet >/dev/null
check "--mmc .inp runs its photon count" "$(grep -c '"packets": 700,' "$T/mmcinp/summary.json")" "1"
check "--mmc .inp takes its seed" "$(grep -c '"seed": 17' "$T/mmcinp/summary.json")" "1"
check "--mmc .inp: no specular at launch (MMC)" "$(specular "$T/mmcinp")" "0"
check "a file's seed is not drawn" "$(grep -c '"seed_drawn": false' "$T/mmcinp/summary.json")" "1"
# A negative seed is MMC's "seed from the clock": one is drawn, named on stderr and in summary.json.
printf '700\n-1\n0.2 0.2 0\n0 0 1\n0 5e-9 5e-10\ntwo\n1\n0 1\n' >"$T/clock.inp"
"$RUN" --mmc "$T/clock.inp" --output "$T/clock" --quiet >/dev/null 2>"$T/err"
drawn=$(sed -n 's/.*seed \([0-9]*\) was drawn.*/\1/p' "$T/err")
check "seed -1: the drawn seed is named on stderr" "$(grep -c 'clock.inp:2: the random seed -1 asks for a seed from the clock' "$T/err")" "1"
check "seed -1: summary.json records it" "$(grep -c "\"seed\": ${drawn:-none}," "$T/clock/summary.json")" "1"
check "seed -1: summary.json says it was drawn" "$(grep -c '"seed_drawn": true' "$T/clock/summary.json")" "1"
"$RUN" --mmc "$T/clock.inp" --seed 5 --output "$T/clock5" --quiet >/dev/null 2>"$T/err"
check "seed -1 with --seed: no seed drawn" "$(grep -c 'was drawn' "$T/err")/$(grep -c '"seed": 5,' "$T/clock5/summary.json")" "0/1"
printf '700\n1.5\n0.2 0.2 0\n0 0 1\n0 5e-9 5e-10\ntwo\n1\n0 1\n' >"$T/frac.inp"
"$RUN" --mmc "$T/frac.inp" --output "$T/frac" --quiet >/dev/null 2>"$T/err"
check "seed 1.5 exits 1" "$?" "1"
check "seed 1.5 named with file and line" "$(grep -c "frac.inp:2: the random seed must be a whole number" "$T/err")" "1"
printf '{"Mesh": {"MeshID": "two", "InitElem": 1}, "Session": {"Photons": 600, "RNGSeed": 17},\n "Optode": {"Source": {"Pos": [0.2, 0.2, 0], "Dir": [0, 0, 1]}}}\n' >"$T/two.json"
if "$RUN" --mmc "$T/two.json" --output "$T/mmcjson" --quiet >/dev/null 2>"$T/err"; then
    check "--mmc .json runs its photon count" "$(grep -c '"packets": 600,' "$T/mmcjson/summary.json")" "1"
else
    check "--mmc .json without nlohmann-json says so" "$(grep -c 'nlohmann-json' "$T/err")" "1"
fi
printf '1 2\n1 1 2 3 4 1\n2 2 3 4 5 0\n' >"$T/elem_two.dat"
"$RUN" --mmc "$T/two.inp" --output "$T/label0" --quiet >/dev/null 2>"$T/err"
check "label 0 (MMC's background) runs" "$?" "0"
check "label 0 left out, with a warning" "$(grep -c "1 of the 2 MMC elements are background" "$T/label0/summary.json")" "1"
"$RUN" --mmc-node "$T/node_two.dat" --mmc-elem "$T/elem_two.dat" --mmc-prop "$T/prop_two.dat" --point 0.2,0.2,0.1 \
  --packets 100 --output "$T/label0n" --quiet >/dev/null 2>&1
check "--mmc-node: label 0 left out, with a warning" "$(grep -c "1 of the 2 MMC elements are background" "$T/label0n/summary.json")" "1"
printf '1 2\n1 1 2 3 4 1\n2 2 3 4 5 -2\n' >"$T/elem_two.dat"
"$RUN" --mmc "$T/two.inp" --output "$T/label2" --quiet >/dev/null 2>"$T/err"
check "label -2 exits 1" "$?" "1"
check "label -2 named with file and line" "$(grep -c "elem_two.dat:3: element 2: label -2 marks MMC's external detector" "$T/err")" "1"

if [ -n "$VTK" ]; then
    "$VTK" --mesh "$T/m.mesh" --output "$T/m42.vtk" --vtk-version 4.2 >/dev/null
    check "fullmonte-vtk --vtk-version 4.2 header" "$(head -1 "$T/m42.vtk")" "# vtk DataFile Version 4.2"
    "$VTK" --mesh "$T/m42.vtk" --output "$T/back.vtu" >/dev/null
    check "the 4.2 file reads back" "$?" "0"
    "$VTK" --mesh "$T/m.mesh" --output "$T/bad.vtk" --vtk-version 3.0 2>"$T/err" >/dev/null
    check "--vtk-version 3.0 exits 1" "$?" "1"
    check "and says why" "$(grep -c "legacy VTK file version '3.0' is not 4.2 or 5.1" "$T/err")" "1"
    check "and writes nothing" "$(ls "$T" | grep -c bad.vtk)" "0"
fi
exit $fail
