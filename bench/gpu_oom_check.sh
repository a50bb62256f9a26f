#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A GPU run that does not fit in device memory is refused with the sizes, exit 1, and leaves no
# outputs: cuda_memory_hog leaves LEAVE_MIB free on device 0, then fullmonte-run runs MESH on it.
# Usage (GPU machine): bench/gpu_oom_check.sh BUILD_DIR MESH OPT SOURCE [LEAVE_MIB]
set -uo pipefail
build=${1:?build dir} mesh=${2:?mesh} opt=${3:?opt} src=${4:?source} leave=${5:-64}
out=$(mktemp -d)
"$build/bin/cuda_memory_hog" "$leave" 60 >"$out/hog.log" 2>&1 &
hog=$!
for _ in $(seq 100); do grep -q holding "$out/hog.log" 2>/dev/null && break; sleep 0.1; done
cat "$out/hog.log"
"$build/bin/fullmonte-run" --mesh "$mesh" --opt "$opt" --source "$src" --packets 1000000 --kernel cuda \
  --quiet --output "$out/run" >"$out/stdout" 2>"$out/stderr"
rc=$?
kill $hog 2>/dev/null; wait $hog 2>/dev/null
echo "fullmonte-run exit $rc: $(cat "$out/stderr")"
left=$(find "$out/run" -type f 2>/dev/null | grep -v '/\.' | tr '\n' ' ')
echo "files left in the output folder: ${left:-none}"
ok=1
[ "$rc" = 1 ] || ok=0
grep -qE "out of (device )?memory" "$out/stderr" || ok=0
[ -z "$(find "$out/run" -name '*.txt' 2>/dev/null)" ] || ok=0
rm -rf "$out"
[ "$ok" = 1 ] && echo "gpu_oom_check: OK" || { echo "gpu_oom_check: FAILED"; exit 1; }
