#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# fullmonte-run --devices all brings up only the devices its work is worth (issue 29: a batch
# never slower on N GPUs than on one): before its first CUDA call it narrows CUDA_VISIBLE_DEVICES
# to the first device for short work (a single run, a short batch from a .source file, a list or
# a folder of them, with or without --batch-opt; the mesh as .mesh or .fmb), and
# leaves every device for long work, for an explicit list and with FM_DEVICES_BY_WORK=0. Checked
# through the note the error carries on a machine without a usable GPU; skipped where one is.
# Usage: devices_by_work.sh path/to/fullmonte-run
set -u
exe=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
printf '8\n6\n0 0 0\n10 0 0\n0 10 0\n10 10 0\n0 0 10\n10 0 10\n0 10 10\n10 10 10\n1 2 4 8 1\n1 2 6 8 1\n1 3 4 8 2\n1 3 7 8 2\n1 5 6 8 1\n1 5 7 8 2\n' > "$dir/m.mesh"
printf '1\n2\n0.05 5 0.8 1.4\n0.2 10 0.9 1.37\n1\n1.0\n' > "$dir/m.opt"
printf '10\n' > "$dir/ten.source"
for i in 1 2 3 4 5 6 7 8 9 10; do printf '1 %d 5 5 1000000\n' "$i" >> "$dir/ten.source"; done
run() {  # the error line of a CUDA run on "devices 0,1"
  CUDA_VISIBLE_DEVICES=0,1 "$exe" --mesh "$dir/m.mesh" ${OPT---opt "$dir/m.opt"} --kernel cuda --quiet --output "$dir/o" "$@" 2>&1 | tail -1
}
probe=$(FM_DEVICES_BY_WORK=0 run --point 5,5,5 --packets 1000 --devices all)
case $probe in
  *"no usable CUDA device"*|*"no CUDA device"*) ;;
  *error:*) fail "the probe run failed for another reason: $probe" ;;
  *) echo "SKIP: a CUDA device answers here ($probe); the device choice is checked by bench/multi_gpu.sh"; exit 77 ;;
esac
echo "$probe" | grep -q "worth using" && fail "FM_DEVICES_BY_WORK=0 narrowed the devices: $probe"
short=$(run --point 5,5,5 --packets 1000 --devices all)
echo "$short" | grep -q "1 device worth using.*CUDA_VISIBLE_DEVICES=0;" || fail "a 1000-packet run on --devices all: $short"
batch=$(run --batch-sources "$dir/ten.source" --devices all)
echo "$batch" | grep -q "1 device worth using" || fail "a 10 x 1e6 batch on --devices all: $batch"
printf '1\n1 3 5 5 1000000\n' > "$dir/one.source"
for i in 1 2 3 4 5 6 7 8 9 10; do echo one.source; done > "$dir/list.txt"
listed=$(run --batch-sources "$dir/list.txt" --devices all)
echo "$listed" | grep -q "1 device worth using" || fail "a list file of 10 x 1e6 sources on --devices all: $listed"
mkdir "$dir/folder" && cp "$dir/one.source" "$dir/folder/a.source" && cp "$dir/one.source" "$dir/folder/b.source"
folder=$(run --batch-sources "$dir/folder" --devices all)
echo "$folder" | grep -q "1 device worth using" || fail "a folder of sources on --devices all: $folder"
printf 'm.opt\nm.opt\n' > "$dir/opts.txt"
opts=$(OPT= run --batch-sources "$dir/ten.source" --batch-opt "$dir/opts.txt" --devices all)
echo "$opts" | grep -q "1 device worth using" || fail "a batch with --batch-opt on --devices all: $opts"
longopts=$(OPT= run --batch-sources "$dir/ten.source" --batch-opt "$dir/opts.txt" --packets 10000000000 --devices all)
echo "$longopts" | grep -q "worth using" && fail "a 2 x 10 x 1e10 batch was narrowed: $longopts"
"$exe" --mesh "$dir/m.mesh" --save-mesh "$dir/m.fmb" >/dev/null || fail "--save-mesh"
fmb=$(CUDA_VISIBLE_DEVICES=0,1 "$exe" --mesh "$dir/m.fmb" --opt "$dir/m.opt" --kernel cuda --quiet --output "$dir/o" \
  --point 5,5,5 --packets 1000 --devices all 2>&1 | tail -1)
echo "$fmb" | grep -q "1 device worth using" || fail "a 1000-packet run on a .fmb mesh on --devices all: $fmb"
long=$(run --point 5,5,5 --packets 100000000000 --devices all)
echo "$long" | grep -q "worth using" && fail "a 1e11-packet run was narrowed: $long"
list=$(run --point 5,5,5 --packets 1000 --devices 0,1)
echo "$list" | grep -q "worth using" && fail "an explicit list was narrowed: $list"
echo "devices by work: ok"
