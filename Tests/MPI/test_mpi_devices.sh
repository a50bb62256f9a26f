#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Under mpirun the ranks of a host share its GPUs (Kernels/DeviceVisibility.hpp,
# devicesOfLocalRank): with no --devices, rank r of the host runs on its r-th visible device
# (round robin where ranks outnumber devices), and a rank whose kernel fails ends the whole job
# with that rank's error instead of leaving the others waiting in a collective.
#   Without a usable GPU (CI): 3 ranks with CUDA_VISIBLE_DEVICES=4,5,6 must end (no hang) with a
#   non-zero status and the "no usable CUDA device" error, whose note names the rank's own device
#   ("devices r were made CUDA_VISIBLE_DEVICES=<r-th entry>"); where another rank reports the
#   failing rank ("MPI rank K failed"), the note is rank K's device.
#   With a GPU: 2 ranks on the GPU(s) give the one-process GPU run's tallies (same seed).
# Usage: test_mpi_devices.sh MPIRUN FULLMONTE_RUN FULLMONTE_COMPARE
set -u
mpirun=$1; run=$2; compare=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
printf '8\n6\n0 0 0\n10 0 0\n0 10 0\n10 10 0\n0 0 10\n10 0 10\n0 10 10\n10 10 10\n1 2 4 8 1\n1 2 6 8 1\n1 3 4 8 2\n1 3 7 8 2\n1 5 6 8 1\n1 5 7 8 2\n' > "$dir/m.mesh"
printf '1\n2\n0.05 5 0.8 1.4\n0.2 10 0.9 1.37\n1\n1.0\n' > "$dir/m.opt"
args=(--mesh "$dir/m.mesh" --opt "$dir/m.opt" --point 5,5,5 --packets 40000 --seed 7 --kernel cuda --quiet)

probe=$("$run" "${args[@]}" --packets 1000 --output "$dir/probe" 2>&1 | tail -1)
case $probe in
  *"no usable CUDA device"*|*"no CUDA device"*) gpu=0 ;;
  *"has no CUDA kernel"*) echo "SKIP: this build has no CUDA kernel ($probe)"; exit 77 ;;
  *error:*) fail "the probe run failed for another reason: $probe" ;;
  *) gpu=1 ;;
esac

if [ "$gpu" = 1 ]; then
  "$run" "${args[@]}" --output "$dir/one" > /dev/null 2>&1 || fail "the one-process GPU run failed"
  timeout 300 "$mpirun" --oversubscribe -np 2 "$run" "${args[@]}" --output "$dir/two" > "$dir/mpi.log" 2>&1 \
    || { cat "$dir/mpi.log"; fail "2 ranks on the GPU failed"; }
  grep -q '"ranks": 2' "$dir/two/summary.json" || fail "summary.json does not say 2 ranks"
  l1=$("$compare" "$dir/one/fluence.txt" "$dir/two/fluence.txt" | awk '{print $2}')
  awk -v x="$l1" 'BEGIN { exit !(x < 1e-12) }' || fail "fluence differs between 1 process and 2 ranks: L1 $l1"
  echo "PASS: 2 ranks on the GPU reproduce the one-process GPU run (L1 $l1)"
  exit 0
fi

entries=(4 5 6)
start=$(date +%s)
CUDA_VISIBLE_DEVICES=4,5,6 timeout 120 "$mpirun" --oversubscribe -np 3 "$run" "${args[@]}" --output "$dir/o" > "$dir/mpi.log" 2>&1
rc=$?
cat "$dir/mpi.log" | grep -E "error|failed" | head -6
[ "$rc" = 124 ] && fail "the job hung after its ranks failed (killed after 120 s)"
[ "$rc" != 0 ] || fail "3 ranks without a GPU exited 0"
grep -q "no usable CUDA device\|no CUDA device" "$dir/mpi.log" || fail "no 'no usable CUDA device' error in the log"
[ ! -f "$dir/o/summary.json" ] || fail "a failed job left a summary.json"
notes=0
while IFS= read -r line; do
  d=$(echo "$line" | sed -n 's/.*devices \([0-9]*\) were made CUDA_VISIBLE_DEVICES=\([0-9,]*\) .*/\1 \2/p')
  [ -n "$d" ] || continue
  read -r dev vis <<< "$d"
  notes=$((notes + 1))
  [ "$dev" -lt 3 ] && [ "$vis" = "${entries[$dev]}" ] || fail "note names device $dev as CUDA_VISIBLE_DEVICES=$vis: $line"
  k=$(echo "$line" | sed -n 's/.*MPI rank \([0-9]*\) failed.*/\1/p')
  [ -z "$k" ] || [ "$k" = "$dev" ] || fail "rank $k's error names device $dev (each rank its own device): $line"
done < "$dir/mpi.log"
[ "$notes" -ge 1 ] || fail "no device note in the errors"
echo "PASS: 3 ranks without a GPU stopped together in $(( $(date +%s) - start )) s (exit $rc), $notes notes name each rank's own device"
