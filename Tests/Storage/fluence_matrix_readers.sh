#!/usr/bin/env bash
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
  pyout=$("$py" "$src/scripts/read_fluence_matrix.py" "$f" 2>&1)
  prc=$?
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
echo "fluence_matrix_readers: $failures failure(s)"
[ "$failures" = 0 ] || exit 1
[ "$have_numpy" = 1 ] || exit 77
