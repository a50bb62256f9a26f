#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# summary.json is always valid JSON and says when a run's result is doubtful (issue 26): a run
# with more than 0.1% of its launched weight booked abnormal warns on stderr and lists the warning
# in "warnings" (with "abnormal_warning_threshold"); a normal run has none; a batch whose source
# file name is not UTF-8 (and holds a quote) still writes valid UTF-8 JSON. FM_TIMING=1 prints
# each phase's seconds on stderr.
# Usage: summary_json.sh path/to/fullmonte-run
set -u
exe=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/model.sh"
write_model "$dir"
m=(--mesh "$dir/m.mesh" --opt "$dir/m.opt" --packets 2000 --threads 1 --quiet)
failures=0
py=/usr/bin/python3
check() {  # NAME SUMMARY PYTHON-CONDITION (on j, the parsed summary)
  if "$py" -c "import json,sys; j=json.load(open(sys.argv[1], encoding='utf-8')); sys.exit(0 if ($3) else 1)" "$2"; then
    echo "ok   $1"
  else
    echo "FAIL $1: $(cat "$2" 2>/dev/null | head -c 2000)"
    failures=$((failures + 1))
  fi
}

# --max-steps 1 stops almost every packet at its second interaction: ~95% abnormal.
"$exe" "${m[@]}" --source "$dir/m.source" --max-steps 1 --output "$dir/abn" >/dev/null 2>"$dir/err"
rc=$?
if [ "$rc" = 0 ] && grep -q "warning: .*% of the launched weight was booked abnormal" "$dir/err"; then
  echo "ok   abnormal run warns on stderr"
else
  echo "FAIL abnormal run: exit $rc, stderr: $(cat "$dir/err")"
  failures=$((failures + 1))
fi
check "abnormal run: warning in summary.json" "$dir/abn/summary.json" \
  "j['abnormal_warning_threshold'] == 0.001 and len(j['warnings']) == 1 and 'abnormal' in j['warnings'][0] and j['ledger']['abnormal'] > 0.5"

"$exe" "${m[@]}" --source "$dir/m.source" --output "$dir/ok" >/dev/null 2>"$dir/err"
if grep -q warning "$dir/err"; then echo "FAIL normal run warns: $(cat "$dir/err")"; failures=$((failures + 1)); fi
check "normal run: no warnings" "$dir/ok/summary.json" "j['warnings'] == [] and j['ledger']['abnormal'] < 0.001"

# A batch whose source file name is not UTF-8 and holds a quote and a backslash.
mkdir -p "$dir/cands"
bad=$(printf 'bad\xff"q\\.source')
cp "$dir/m.source" "$dir/cands/$bad"
cp "$dir/m.source" "$dir/cands/good.source"
"$exe" --mesh "$dir/m.mesh" --opt "$dir/m.opt" --packets 500 --threads 1 --quiet --batch-sources "$dir/cands" \
  --output "$dir/batch" >/dev/null 2>"$dir/err" || { echo "FAIL batch: $(cat "$dir/err")"; failures=$((failures + 1)); }
check "batch summary: valid UTF-8 JSON, name escaped" "$dir/batch/summary.json" \
  "any(s.endswith('bad\ufffd\"q\\\\.source') for s in j['source_files']) and j['warnings'] == []"
# FM_TIMING=1: each phase's seconds on stderr (wall, then CPU), none without it.
FM_TIMING=1 "$exe" "${m[@]}" --source "$dir/m.source" --output "$dir/timed" >/dev/null 2>"$dir/err"
phases=$(grep -cE '^fm-timing (read and check the model|pack the model|run|write outputs) +[0-9.]+ +cpu +[0-9.]+$' "$dir/err")
if [ "$phases" = 4 ] && grep -qE '^fm-timing since process start +[0-9.]+$' "$dir/err"; then
  echo "ok   FM_TIMING=1 prints the phases"
else
  echo "FAIL FM_TIMING=1: $phases of 4 phases; stderr: $(cat "$dir/err")"
  failures=$((failures + 1))
fi
"$exe" "${m[@]}" --source "$dir/m.source" --output "$dir/untimed" >/dev/null 2>"$dir/err"
if grep -q fm-timing "$dir/err"; then echo "FAIL phases printed without FM_TIMING"; failures=$((failures + 1)); fi
echo "summary_json: $failures failure(s)"
[ "$failures" = 0 ]
