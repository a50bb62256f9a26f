#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# fullmonte-run --serve: one process serving runs read from a file or stdin, one per line. Each
# line's outputs are byte for byte those of the same command run alone (single runs and a
# batch); a bad line is reported with FILE:LINE and the next lines still run (exit 1 at the end);
# options that belong to the whole session are refused on a line.
# Usage: serve_cli.sh path/to/fullmonte-run
set -u
exe=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
printf '8\n6\n0 0 0\n10 0 0\n0 10 0\n10 10 0\n0 0 10\n10 0 10\n0 10 10\n10 10 10\n1 2 4 8 1\n1 2 6 8 1\n1 3 4 8 2\n1 3 7 8 2\n1 5 6 8 1\n1 5 7 8 2\n' > "$dir/m.mesh"
printf '1\n2\n0.05 5 0.8 1.4\n0.2 10 0.9 1.37\n1\n1.0\n' > "$dir/m.opt"
printf '1\n2\n0.1 8 0.7 1.33\n0.3 10 0.9 1.5\n1\n1.0\n' > "$dir/m2.opt"
printf '1\n1 4 5 6 1\n' > "$dir/a.source"
printf '2\n1 2 2 2 1\n1 8 8 1 1\n' > "$dir/two.source"
base=(--mesh "$dir/m.mesh" --threads 2 --quiet)
# The lines: two single runs (other materials on the second), a batch, a bad one, one more run.
cat > "$dir/runs.txt" <<RUNS
# comment lines and blank lines are skipped

--opt $dir/m.opt --source $dir/a.source --packets 3000 --seed 5 --output "$dir/s1"
--opt $dir/m2.opt --point 3,3,3 --packets 2000 --seed 6 --output $dir/s2
--opt $dir/m.opt --batch-sources $dir/two.source --packets 1500 --seed 7 --output $dir/b1
--opt $dir/m.opt --source $dir/missing.source --output $dir/bad
--opt $dir/m.opt --point 5,5,5 --packets 1000 --seed 8 --output $dir/s3
RUNS
"$exe" "${base[@]}" --serve - < "$dir/runs.txt" > "$dir/served.log" 2> "$dir/served.err"
rc=$?
cat "$dir/served.log"
[ "$rc" = 1 ] || fail "exit status $rc with one bad line (expected 1)"
grep -q "^served 6 $dir/bad error" "$dir/served.log" || fail "the bad line is not reported as served with error"
grep -q "stdin:6: error: .*missing.source" "$dir/served.err" || { cat "$dir/served.err"; fail "the bad line's error does not name stdin:6 and the file"; }
for n in 3 4 5 7; do grep -q "^served $n .* ok$" "$dir/served.log" || fail "line $n not served ok"; done
# Alone, each line gives the same bytes.
"$exe" "${base[@]}" --opt "$dir/m.opt" --source "$dir/a.source" --packets 3000 --seed 5 --output "$dir/o1" > /dev/null 2>&1 || fail "alone 1"
"$exe" "${base[@]}" --opt "$dir/m2.opt" --point 3,3,3 --packets 2000 --seed 6 --output "$dir/o2" > /dev/null 2>&1 || fail "alone 2"
"$exe" "${base[@]}" --opt "$dir/m.opt" --batch-sources "$dir/two.source" --packets 1500 --seed 7 --output "$dir/ob" > /dev/null 2>&1 || fail "alone batch"
"$exe" "${base[@]}" --opt "$dir/m.opt" --point 5,5,5 --packets 1000 --seed 8 --output "$dir/o3" > /dev/null 2>&1 || fail "alone 3"
for pair in "s1 o1" "s2 o2" "s3 o3"; do
  set -- $pair
  [ -s "$dir/$1/fluence.txt" ] || fail "$1/fluence.txt missing"
  for f in "$dir/$2"/*; do  # every output but the summary (which has timings)
    b=$(basename "$f"); [ "$b" = summary.json ] && continue
    cmp -s "$dir/$1/$b" "$f" || fail "$1/$b differs from the same run alone"
  done
done
cmp -s "$dir/b1/fluence_matrix.fmm" "$dir/ob/fluence_matrix.fmm" || fail "served batch matrix differs from the batch alone"
# From a file, with a session option on a line: refused, named.
printf -- '--opt %s --point 1,1,1 --devices 0 --output %s\n' "$dir/m.opt" "$dir/x" > "$dir/bad.txt"
"$exe" "${base[@]}" --serve "$dir/bad.txt" > /dev/null 2> "$dir/bad.err" && fail "a line with --devices was accepted"
grep -q "bad.txt:1: error: --devices belongs on the --serve command line" "$dir/bad.err" || { cat "$dir/bad.err"; fail "message"; }
"$exe" "${base[@]}" --serve "$dir/nonexistent.txt" > /dev/null 2> "$dir/nf.err" && fail "a missing --serve file was accepted"
grep -q "nonexistent.txt: cannot open" "$dir/nf.err" || fail "missing --serve file not named"
echo "serve: 5 lines in one process equal the runs alone, bad lines named"
