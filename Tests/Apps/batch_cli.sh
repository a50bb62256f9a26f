#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# fullmonte-run --batch-sources: a batch of 3 sources gives the fluence matrix whose columns are
# the three single runs' fluence.txt (same seed and packets), summary.json has per-run ledgers,
# the Python reader reads the matrix, and bad batch inputs exit 1 naming the file:line.
# Usage: batch_cli.sh path/to/fullmonte-run SOURCE_DIR
set -u
exe=$1; src=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# A 10 mm cube of 6 tetras (Kuhn split), two regions (as Tests/MPI/test_mpi_split.sh).
printf '8\n6\n0 0 0\n10 0 0\n0 10 0\n10 10 0\n0 0 10\n10 0 10\n0 10 10\n10 10 10\n1 2 4 8 1\n1 2 6 8 1\n1 3 4 8 2\n1 3 7 8 2\n1 5 6 8 1\n1 5 7 8 2\n' > "$dir/m.mesh"
printf '1\n2\n0.05 5 0.8 1.4\n0.2 10 0.9 1.37\n1\n1.0\n' > "$dir/m.opt"
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$dir/cands"
# Three point sources inside the cube.
printf '1\n1 4 5 6 1\n' > "$dir/cands/a.source"
printf '1\n1 2 2 2 1\n' > "$dir/cands/b.source"
printf '1\n1 8 8 1 1\n' > "$dir/cands/c.source"
common=(--mesh "$dir/m.mesh" --opt "$dir/m.opt" --packets 3000 --seed 11 --threads 2 --quiet)
"$exe" "${common[@]}" --batch-sources "$dir/cands" --output "$dir/batch" > "$dir/log" 2>&1 || { cat "$dir/log"; fail "batch run"; }
for f in fluence_matrix.fmm summary.json; do [ -s "$dir/batch/$f" ] || fail "$f missing"; done
grep -q '"status": "complete"' "$dir/batch/summary.json" || fail "summary not complete"
grep -q '"runs_done": 3' "$dir/batch/summary.json" || fail "summary: runs_done != 3"
[ "$(grep -c '"ledger"' "$dir/batch/summary.json")" = 3 ] || fail "summary: not 3 per-run ledgers"
for s in a b c; do
  "$exe" "${common[@]}" --source "$dir/cands/$s.source" --output "$dir/one_$s" > /dev/null 2>&1 || fail "single run $s"
done
# Columns vs the single runs' fluence.txt (written with 9 significant digits).
py=""
for p in python3 /usr/bin/python3; do
  if command -v "$p" > /dev/null && "$p" -c 'import numpy' 2> /dev/null; then py=$p; break; fi
done
if [ -n "$py" ]; then
  PYTHONPATH="$src/scripts" "$py" - "$dir" <<'PY' || fail "matrix columns differ from the single runs"
import sys, numpy as np
from read_fluence_matrix import read_fluence_matrix, FormatError
d = sys.argv[1]
h, phi = read_fluence_matrix(d + "/batch/fluence_matrix.fmm")
assert (h["rows"], h["cols"], h["sources"], h["material_sets"]) == (phi.shape[0], 3, 3, 1), h
for j, s in enumerate("abc"):
    one = np.loadtxt(f"{d}/one_{s}/fluence.txt")   # tetras 1..N
    col = phi[:, j]
    ok = np.isnan(one) == np.isnan(col)
    fin = ~np.isnan(one)
    rel = np.max(np.abs(col[fin] - one[fin]) / np.maximum(np.abs(one[fin]), 1e-300))
    print(f"column {j} ({s}.source) vs single run: max relative difference {rel:.2e}, sum {np.nansum(col):.6g}")
    assert ok.all() and rel < 1e-8, (s, rel)
assert not np.allclose(phi[:, 0], phi[:, 1], equal_nan=True)  # different sources, different columns
open(d + "/bad.fmm", "wb").write(b"NOTAFMAT" + bytes(120))
try:
    read_fluence_matrix(d + "/bad.fmm"); sys.exit("python reader accepted a bad file")
except FormatError as e:
    print("python reader: bad file ->", e)
PY
else
  echo "note: no python3 with numpy; matrix columns checked by the C++ tests only"
fi
# Bad batch inputs: exit 1, message names the list file and line or the folder.
expect_fail() {
  local needle=$1; shift
  rm -rf "$dir/bad"
  timeout 60 "$exe" "$@" --output "$dir/bad" > /dev/null 2> "$dir/err"; local rc=$?
  if [ $rc != 1 ] || ! grep -qF -- "$needle" "$dir/err"; then fail "exit $rc, message '$(cat "$dir/err")' (want '$needle')"; fi
  [ -e "$dir/bad/fluence_matrix.fmm" ] && fail "matrix written despite the error"
  echo "ok   $(cat "$dir/err")"
}
printf '# candidates\na.source\n\nmissing.source\n' > "$dir/cands/list.txt"
expect_fail "list.txt:4: 'missing.source' is not a readable file" "${common[@]}" --batch-sources "$dir/cands/list.txt"
printf '1\n1 0 0 zero 1\n' > "$dir/broken.source"; printf 'cands/a.source\nbroken.source\n' > "$dir/list2.txt"
expect_fail "list2.txt:2: $dir/broken.source:2:" "${common[@]}" --batch-sources "$dir/list2.txt"
printf '1\n1 500 0 0 1\n' > "$dir/far.source"; printf 'far.source\n' > "$dir/list3.txt"
expect_fail "list3.txt:1: far.source): Point source: position (500 0 0) is outside the mesh" "${common[@]}" --batch-sources "$dir/list3.txt"
mkdir -p "$dir/empty"
expect_fail "no .source files in this folder" "${common[@]}" --batch-sources "$dir/empty"
expect_fail "--batch-sources replaces --source" "${common[@]}" --batch-sources "$dir/cands" --source "$dir/cands/a.source"
expect_fail "--power does not apply to a batch" "${common[@]}" --batch-sources "$dir/cands" --power 2
expect_fail "--batch-opt needs --batch-sources" "${common[@]}" --source "$dir/cands/a.source" --batch-opt "$dir/m.opt"
# Ctrl-C: exit 130 within seconds, no matrix, summary.json marked interrupted.
"$exe" "${common[@]}" --batch-sources "$dir/cands" --packets 1e12 --output "$dir/intr" > /dev/null 2>&1 &
pid=$!
sleep 1
kill -INT $pid
for i in $(seq 1 100); do kill -0 $pid 2> /dev/null || break; sleep 0.1; done
kill -0 $pid 2> /dev/null && { kill -9 $pid; fail "batch did not stop within 10 s of SIGINT"; }
wait $pid; rc=$?
[ $rc = 130 ] || fail "interrupted batch exit $rc (want 130)"
[ -e "$dir/intr/fluence_matrix.fmm" ] || [ -e "$dir/intr/fluence_matrix.fmm.partial" ] && fail "matrix left by an interrupted batch"
grep -q '"status": "interrupted"' "$dir/intr/summary.json" || fail "summary.json not marked interrupted"
echo "ok   SIGINT: exit 130, no matrix, summary interrupted"
echo "PASS: batch CLI"
