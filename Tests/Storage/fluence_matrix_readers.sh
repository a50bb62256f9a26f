#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The C++ and Python fluence-matrix readers accept exactly the same files and read the same
# numbers (issue 26): Tests/Storage/fmm_corpus.py writes one file per rule of
# docs/FLUENCE_MATRIX.md (ok_* to accept, bad_* to reject); fmm_dump (C++) and
# scripts/read_fluence_matrix.py print the same text for each accepted file. The Python half
# needs numpy for /usr/bin/python3 (python3-numpy); without it the test says so and is skipped.
# Usage: fluence_matrix_readers.sh path/to/fmm_dump SOURCE_DIR
set -u
dump=$1
src=$2
py=/usr/bin/python3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0
"$py" "$src/Tests/Storage/fmm_corpus.py" "$dir" || { echo "FAIL: corpus generator"; exit 1; }
have_numpy=1
if ! "$py" -c 'import numpy' 2>/dev/null; then
  have_numpy=0
  echo "note: numpy is not installed for $py (apt-get install python3-numpy): only the C++ reader is checked"
fi
# The Python reader's script mode on every file, in one process (numpy loads once): FILE.py.out
# holds what `read_fluence_matrix.py FILE` prints (stdout and stderr), FILE.py.rc its exit status.
if [ "$have_numpy" = 1 ]; then
  PYTHONPATH="$src/scripts" "$py" - "$dir"/*.fmm <<'PY' || { echo "FAIL: running the Python reader"; exit 1; }
import contextlib, io, sys
import read_fluence_matrix as r
for f in sys.argv[1:]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            rc = r.main(["read_fluence_matrix.py", f])
        except Exception as e:  # a crash of the reader is a failure, reported as such
            print(f"python exception: {e!r}")
            rc = 2
    open(f + ".py.out", "w").write(out.getvalue())
    open(f + ".py.rc", "w").write(str(rc))
PY
fi
for f in "$dir"/*.fmm; do
  name=$(basename "$f" .fmm)
  want=0
  [[ $name == bad_* ]] && want=1
  cpp=$("$dump" "$f")
  crc=$?
  if [ "$crc" != "$want" ]; then
    echo "FAIL $name: C++ reader exit $crc (want $want): $cpp"
    failures=$((failures + 1))
    continue
  fi
  [ "$have_numpy" = 1 ] || { echo "ok   $name (C++): $(head -1 <<<"$cpp")"; continue; }
  pyout=$(cat "$f.py.out")
  prc=$(cat "$f.py.rc")
  if [ "$prc" != "$want" ]; then
    echo "FAIL $name: Python reader exit $prc (want $want): $pyout"
    failures=$((failures + 1))
  elif [ "$want" = 0 ] && [ "$cpp" != "$pyout" ]; then
    echo "FAIL $name: the readers disagree"
    diff <(echo "$cpp") <(echo "$pyout")
    failures=$((failures + 1))
  else
    echo "ok   $name: $(head -1 <<<"$cpp") | $(head -1 <<<"$pyout")"
  fi
done
# The script itself, as a user runs it (its #! line names /usr/bin/python3).
if [ "$have_numpy" = 1 ]; then
  direct=$("$src/scripts/read_fluence_matrix.py" "$dir/ok_big.fmm" 2>&1)
  if [ "$direct" != "$("$dump" "$dir/ok_big.fmm")" ]; then
    echo "FAIL scripts/read_fluence_matrix.py run directly: $direct"
    failures=$((failures + 1))
  else
    echo "ok   scripts/read_fluence_matrix.py run directly"
  fi
fi
echo "fluence_matrix_readers: $failures failure(s)"
[ "$failures" = 0 ] || exit 1
[ "$have_numpy" = 1 ] || exit 77
