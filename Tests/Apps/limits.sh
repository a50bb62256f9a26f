#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Limits checked before work (issue 26): an MCML grid whose .mco or tallies would not fit is
# refused at once with the numbers and leaves no file; dr = 1e-300 is an input error naming
# file:line; worker threads that cannot start (here: an address-space limit) leave the run to
# those that did, with a warning, or fail it clearly when none can start; running out of
# memory is one clear line.
# Usage: limits.sh fullmonte-run fullmonte-mcml
set -u
run=$1; mcml=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; cat "$dir/err" 2> /dev/null; exit 1; }
. "$(dirname "$0")/model.sh"
write_model "$dir"
mci() {  # mci FILE DZ_DR NZ_NR_NA
  printf '1.0\n1\nout.mco A\n1\n%s\n%s\n1\n1.0\n1.37 1 100 0.9 0.1\n1.0\n' "$2" "$3" > "$1"
}
# expect_error NAME TEXT COMMAND...: exit 1 within 2 s, TEXT in the message, no output written.
expect_error() {
  local name=$1 text=$2; shift 2
  local t0; t0=$(date +%s%N)
  "$@" > /dev/null 2> "$dir/err"
  local rc=$? ms=$((($(date +%s%N) - t0) / 1000000))
  echo "$name: exit $rc in $ms ms: $(cat "$dir/err")"
  [ $rc = 1 ] || fail "$name: exit $rc, want 1"
  [ $ms -le 2000 ] || fail "$name: took $ms ms"
  grep -qF -- "$text" "$dir/err" || fail "$name: message lacks '$text'"
  [ -z "$(find "$dir" -name '*.mco' -o -name '.fullmonte-staging-*')" ] || fail "$name: output left"
}

# A 1e4^3 grid with one photon: a 4.2 GB .mco, 2.4 GB of tallies a copy.
mci "$dir/huge.mci" "0.001 0.001" "10000 10000 10000"
expect_error mco_size "the .mco files of its 1 run(s) would take 4.2 GB, above the limit of 1 GB" \
  "$mcml" "$dir/huge.mci" --threads 2 --output-dir "$dir/o"
expect_error mcml_memory "(nz=10000 nr=10000 na=10000, 2 thread(s)) needs 4.8 GB of memory" \
  bash -c 'ulimit -v 1500000; exec "$0" "$@"' "$mcml" "$dir/huge.mci" --threads 2 --max-output-gb 10 --output-dir "$dir/o"
mci "$dir/tiny_dr.mci" "0.001 1e-300" "10 10 10"
expect_error dr_1e-300 "tiny_dr.mci:5: dr must be in [1e-30, 1e30] cm, found '1e-300'" \
  "$mcml" "$dir/tiny_dr.mci" --output-dir "$dir/o"

# 4096 threads under a 400 MB address space: a few start (8 MB stacks), the run completes.
common=(--mesh "$dir/m.mesh" --opt "$dir/m.opt" --source "$dir/m.source" --packets 20000 --quiet)
(ulimit -v 400000; exec "$run" "${common[@]}" --threads 4096 --output "$dir/few") > /dev/null 2> "$dir/err" ||
  fail "a run with threads that cannot start failed"
grep -q "warning: started [0-9]* of 4096 worker threads" "$dir/err" || fail "no warning about the threads that did not start"
grep -q '"status": "complete"' "$dir/few/summary.json" || fail "the run did not complete"
grep -q '"packets": 20000' "$dir/few/summary.json" || fail "not every packet ran"
# With no room for a worker thread's 8 MB stack: a clear error, not std::terminate. The address
# space the program needs to load (its binary, larger with more CUDA architectures, and its
# libraries) is found first (`--help` under growing limits); the run gets 4 MB more.
load=50000
for kb in $(seq 20000 2000 600000); do
  if (ulimit -v "$kb"; exec "$run" --help) > /dev/null 2>&1; then load=$kb; break; fi
done
echo "no_thread: the program loads under $load kB of address space"
(ulimit -v $((load + 4000)); exec "$run" "${common[@]}" --threads 2 --output "$dir/none") > /dev/null 2> "$dir/err"
rc=$?
echo "no_thread: exit $rc: $(cat "$dir/err")"
if grep -q "error while loading shared libraries" "$dir/err"; then
  echo "no_thread: SKIP (this build cannot even load under 50 MB)"
else
  [ $rc = 1 ] || fail "no_thread: exit $rc, want 1"
  grep -q "error: cannot start a worker thread" "$dir/err" || fail "no_thread: no clear error"
fi
# A mesh of 3e6 points (72 MB of coordinates) under a 120 MB address space: std::bad_alloc in
# the reader becomes one clear line, not "std::bad_alloc" or an abort.
awk 'BEGIN { n = 3000000; print n; print 1; print "0 0 0"; print "1 0 0"; print "0 1 0"; print "0 0 1"
             for (i = 4; i < n; i++) print "0.5 0.5 0.5"; print "1 2 3 4 1" }' > "$dir/big.mesh"
(ulimit -v 120000; exec "$run" --mesh "$dir/big.mesh" --opt "$dir/m.opt" --source "$dir/m.source" --packets 10 \
  --threads 1 --quiet --output "$dir/big") > /dev/null 2> "$dir/err"
rc=$?
echo "out_of_memory: exit $rc: $(cat "$dir/err")"
if grep -q "error while loading shared libraries" "$dir/err"; then
  echo "out_of_memory: SKIP (this build cannot even load under 120 MB)"
else
  [ $rc = 1 ] || fail "out_of_memory: exit $rc, want 1"
  grep -q "fullmonte-run: error: out of memory (a memory allocation failed)" "$dir/err" || fail "out_of_memory: not translated"
fi
echo "limits: ok"
