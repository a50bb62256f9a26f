#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# bench/mmc_convert (a TIM-OS model as MMC's input): the JSON it writes is read back by
# fullmonte-run --mmc with its photon count and seed; bad PHOTONS, SEED or ID are refused with a
# message naming the argument, before anything is written.
# Usage: mmc_convert.sh MMC_CONVERT FULLMONTE_RUN
set -u
CONV=$1
RUN=$2
. "$(dirname "$0")/model.sh"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
write_model "$T"
fail=0
check() { if [ "$2" != "$3" ]; then echo "FAILED: $1: got '$2', expected '$3'"; fail=1; else echo "ok: $1"; fi; }

mkdir "$T/out"
"$CONV" "$T/m.mesh" "$T/m.opt" "$T/m.source" 1e3 17 "$T/out" cube >/dev/null
check "a good conversion exits 0" "$?" "0"
check "photons and seed written as numbers" "$(grep -c '"Photons": 1000, "RNGSeed": 17,' "$T/out/cube.json")" "1"
"$RUN" --mmc "$T/out/cube.json" --output "$T/run" --quiet >/dev/null 2>"$T/err"
check "fullmonte-run reads the JSON" "$?" "0"
check "with its photons" "$(grep -c '"packets": 1000,' "$T/run/summary.json")" "1"
check "and its seed" "$(grep -c '"seed": 17,' "$T/run/summary.json")" "1"
"$CONV" "$T/m.mesh" "$T/m.opt" "$T/m.source" 100 -1 "$T/out" clock >/dev/null
check "seed -1 (MMC: from the clock) is kept" "$(grep -c '"RNGSeed": -1,' "$T/out/clock.json")" "1"

bad() {  # bad NAME FRAGMENT PHOTONS SEED ID
    rm -f "$T/out/$5.json"
    "$CONV" "$T/m.mesh" "$T/m.opt" "$T/m.source" "$3" "$4" "$T/out" "$5" >/dev/null 2>"$T/err"
    check "$1 exits 1" "$?" "1"
    check "$1 says why" "$(grep -c -- "$2" "$T/err")" "1"
    check "$1 writes nothing" "$(ls "$T/out" | grep -c "^node_$5\|^$5.json")" "0"
}
bad "photons 0" "PHOTONS = 0 is smaller than 1" 0 1 p0
bad "photons -5" "PHOTONS: '-5' is not a whole number" -5 1 pneg
bad "photons abc" "PHOTONS: 'abc' is not a whole number" abc 1 pabc
bad "photons 1.5" "PHOTONS: '1.5' is not a whole number" 1.5 1 pfrac
bad "seed abc" "SEED 'abc' is not a whole number in \[-2147483648, 2147483647\]" 100 abc sabc
bad "seed 1.5" "SEED '1.5' is not a whole number" 100 1.5 sfrac
bad "seed 2^31" "SEED '2147483648' is not a whole number" 100 2147483648 sbig
bad "id with a quote" "ID 'a\"b' must be a non-empty word" 100 1 'a"b'
bad "id with a slash" "ID 'a/b' must be a non-empty word" 100 1 'a/b'
"$CONV" "$T/m.mesh" "$T/m.opt" "$T/m.source" 100 1 "$T/nosuch" cube >/dev/null 2>"$T/err"
check "a missing OUTDIR exits 1" "$?" "1"
check "and says so" "$(grep -c "OUTDIR $T/nosuch is not a folder" "$T/err")" "1"
exit $fail
