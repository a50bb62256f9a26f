#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# fullmonte-run's standard errors (issue 28): by default volume_energy_stderr.txt and
# fluence_stderr.txt beside the values (same length; errors below the values where there is
# energy), two more surface_exit.txt columns and summary.json "standard_error" (10 batches,
# ledger and per-region relative errors); --batches 1 writes none of them ("standard_error":
# null); a bad --batches (0, 2.5, more than the packets) is an error naming it, exit 1, no outputs.
# Usage: standard_errors.sh path/to/fullmonte-run
set -u
exe=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/model.sh"
write_model "$dir"
m=(--mesh "$dir/m.mesh" --opt "$dir/m.opt" --source "$dir/m.source" --packets 4000 --threads 2 --quiet)
py=/usr/bin/python3
failures=0
ok() { echo "ok   $1"; }
fail() { echo "FAIL $1"; failures=$((failures + 1)); }

"$exe" "${m[@]}" --output "$dir/on" >/dev/null 2>"$dir/err" || fail "default run: $(cat "$dir/err")"
if "$py" - "$dir/on" <<'PY'
import json, sys
d = sys.argv[1]
def values(name): return [float(x) for x in open(f"{d}/{name}").read().split()]
e, se = values("volume_energy.txt"), values("volume_energy_stderr.txt")
f, fse = values("fluence.txt"), values("fluence_stderr.txt")
assert len(e) == len(se) == len(f) == len(fse) == 2, (e, se)
assert all(0 < s < v for v, s in zip(e, se)), (e, se)
assert all(abs(fs / s - fv / v) < 1e-7 * fv / v for v, s, fv, fs in zip(e, se, f, fse))  # 9 digits written
rows = [l.split() for l in open(f"{d}/surface_exit.txt") if not l.startswith("#")]
assert rows and all(len(r) == 8 for r in rows), rows[:2]
assert "energy_stderr exit_fluence_stderr" in open(f"{d}/surface_exit.txt").readline()
j = json.load(open(f"{d}/summary.json"))["standard_error"]
assert j["batches"] == 10, j
assert 0 < j["absorbed_stderr"] < 0.05 and 0 < j["absorbed_relative"] < 0.1, j
assert 0 < j["exited_stderr"] < 0.05 and 0 < j["exited_relative"] < 0.1, j
assert abs(j["absorbed_relative"] * json.load(open(f"{d}/summary.json"))["ledger"]["absorbed"] - j["absorbed_stderr"]) < 1e-9
assert set(j["region_relative"]) == {"1", "2"} and all(0 < v < 1 for v in j["region_relative"].values()), j
PY
then ok "default: errors beside the values and in summary.json"; else fail "default outputs"; fi

"$exe" "${m[@]}" --batches 1 --output "$dir/off" >/dev/null 2>"$dir/err" || fail "--batches 1: $(cat "$dir/err")"
if [ ! -e "$dir/off/volume_energy_stderr.txt" ] && [ ! -e "$dir/off/fluence_stderr.txt" ] &&
   "$py" -c "import json,sys; j=json.load(open(sys.argv[1])); sys.exit(0 if j['standard_error'] is None else 1)" "$dir/off/summary.json" &&
   ! grep -q stderr "$dir/off/surface_exit.txt"; then
  ok "--batches 1: no error outputs"
else
  fail "--batches 1 wrote error outputs"
fi

for b in 0 2.5 -1 4001; do
  "$exe" "${m[@]}" --batches "$b" --output "$dir/bad$b" >/dev/null 2>"$dir/err"
  rc=$?
  if [ "$rc" = 1 ] && grep -q "batches" "$dir/err" && [ ! -e "$dir/bad$b/summary.json" ]; then
    ok "--batches $b refused: $(cat "$dir/err")"
  else
    fail "--batches $b: exit $rc, $(cat "$dir/err")"
  fi
done
exit $failures
