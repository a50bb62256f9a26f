#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A batch over a folder of .source files on --devices all reads each file once: the device
# choice (which reads the sources to size the work before CUDA starts) hands what it read to the
# batch. Counted with strace (the files opened); reported skipped (77) where strace is missing or
# cannot trace here. Without a GPU the run then stops at the device; with one it runs: the
# count is the same.
# Usage: sources_read_once.sh path/to/fullmonte-run
set -u
exe=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
command -v strace >/dev/null || { echo "SKIP: strace is not installed (scripts/install-deps.sh installs it)"; exit 77; }
strace -f -o /dev/null true 2>/dev/null || { echo "SKIP: strace cannot trace here (ptrace not permitted)"; exit 77; }
printf '8\n6\n0 0 0\n10 0 0\n0 10 0\n10 10 0\n0 0 10\n10 0 10\n0 10 10\n10 10 10\n1 2 4 8 1\n1 2 6 8 1\n1 3 4 8 2\n1 3 7 8 2\n1 5 6 8 1\n1 5 7 8 2\n' > "$dir/m.mesh"
printf '1\n2\n0.05 5 0.8 1.4\n0.2 10 0.9 1.37\n1\n1.0\n' > "$dir/m.opt"
mkdir "$dir/folder"
for n in a b; do printf '1\n1 3 5 5 1000\n' > "$dir/folder/$n.source"; done
CUDA_VISIBLE_DEVICES=0,1 strace -f -e trace=openat -o "$dir/trace" "$exe" --mesh "$dir/m.mesh" --opt "$dir/m.opt" \
  --kernel cuda --quiet --output "$dir/o" --batch-sources "$dir/folder" --devices all >/dev/null 2>&1
[ -s "$dir/trace" ] || fail "strace wrote no trace"
for n in a b; do
  opens=$(grep -c "/$n\.source\"" "$dir/trace")
  [ "$opens" = 1 ] || fail "the batch's $n.source was opened $opens times (once expected)"
done
echo "sources read once: ok"
