#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# fullmonte-run --time-gates (issue 28 item 3, docs/TIME_DOMAIN.md): the gated outputs
# (fluence_gated.fmtg, surface_exit_gated.fmtg, tpsf.txt, summary.json "time_gates") are written
# with the documented layout; each tetra's and face's bins sum to its CW value; the per-gate totals
# sum to the ledger; bad gates exit 1 with an error naming --time-gates and write no outputs.
# With fullmonte-vtk given, its --results adds one cell array per bin of fluence_gated.fmtg to the
# .vtu and of surface_exit_gated.fmtg to --surface (whose surface_exit.txt has standard errors).
# Usage: time_gates.sh path/to/fullmonte-run [path/to/fullmonte-vtk]
set -u
exe=$1
vtk=${2:-}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/model.sh"
write_model "$dir"
m=(--mesh "$dir/m.mesh" --opt "$dir/m.opt" --source "$dir/m.source" --packets 4000 --threads 2 --quiet)
py=/usr/bin/python3
failures=0
ok() { echo "ok   $1"; }
fail() { echo "FAIL $1"; failures=$((failures + 1)); }

"$exe" "${m[@]}" --time-gates 0,0.02,0.001 --output "$dir/on" >/dev/null 2>"$dir/err" || fail "gated run: $(cat "$dir/err")"
if "$py" - "$dir/on" <<'PY'
import json, struct, sys, math
d = sys.argv[1]
def values(name): return [float(x) for x in open(f"{d}/{name}").read().split()]
def fmtg(name):
    raw = open(f"{d}/{name}", "rb").read()
    magic, ver, bom, qty, gates, bins, has_se, n, t0, t1, dt = struct.unpack_from("<8s6IQ3d", raw, 0)
    assert magic == b"FMTGATED" and ver == 1 and bom == 0x01020304 and bins == gates + 2, (magic, ver, bins)
    assert (gates, t0, t1, dt) == (20, 0.0, 0.02, 0.001), (gates, t0, t1, dt)
    assert struct.unpack_from("<Q", raw, 96)[0] == 128
    assert len(raw) == 128 + 8 * bins * n * (1 + has_se), len(raw)
    v = struct.unpack_from(f"<{bins * n}d", raw, 128)
    return qty, has_se, n, [v[b * n:(b + 1) * n] for b in range(bins)]
qty, se, n, g = fmtg("fluence_gated.fmtg")
cw = values("fluence.txt")
assert qty == 1 and se == 1 and n == len(cw) == 2
for i in range(n):  # the bins sum to the CW fluence (fluence.txt: 9 significant digits)
    s = sum(g[b][i] for b in range(len(g)))
    assert abs(s - cw[i]) <= 1e-8 * cw[i], (i, s, cw[i])
assert sum(g[b][i] for b in range(20) for i in range(n)) > 0.5 * sum(cw)  # most within 20 ps
qty, se, nf, gs = fmtg("surface_exit_gated.fmtg")
rows = [l.split() for l in open(f"{d}/surface_exit.txt") if not l.startswith("#")]
# Its elements: the boundary faces, listed (id and points as surface_exit.txt's rows) in order.
listed = [l.split() for l in open(f"{d}/surface_exit_gated_faces.txt") if not l.startswith("#")]
assert qty == 3 and nf == len(listed) == len(rows), (qty, nf, len(listed), len(rows))
ids = [int(l[0]) for l in listed]
assert ids == sorted(ids) and sorted(listed) == sorted(r[:4] for r in rows)
cwf = {int(r[0]): float(r[5]) for r in rows}
for k, f in enumerate(ids):  # the bins sum to the CW exit fluence
    s = sum(gs[b][k] for b in range(len(gs)))
    assert abs(s - cwf[f]) <= 1e-8 * max(cwf[f], 1e-300), (f, s, cwf[f])
j = json.load(open(f"{d}/summary.json"))
t = j["time_gates"]
assert (t["gates"], t["start_ns"], t["stop_ns"], t["step_ns"]) == (20, 0, 0.02, 0.001), t
led = j["ledger"]
tot_a = sum(t["absorbed"]) + t["absorbed_early"] + t["absorbed_late"]
tot_e = sum(t["exited"]) + t["exited_early"] + t["exited_late"]
assert abs(tot_a - led["absorbed"]) < 1e-9 and abs(tot_e - led["exited"]) < 1e-9, (tot_a, tot_e, led)
assert t["absorbed_early"] == 0 and len(t["absorbed_stderr"]) == 20
rows = [l.split() for l in open(f"{d}/tpsf.txt") if not l.startswith("#")]
assert len(rows) == 22 and rows[20][0] == "early" and rows[21][0] == "late" and rows[21][2] == "inf", rows[-2:]
assert abs(float(rows[3][3]) - t["absorbed"][3]) < 1e-9 and float(rows[3][1]) == 0.003
PY
then ok "gated outputs: layout, bins sum to CW, totals to the ledger"; else fail "gated outputs"; fi

if [ -n "$vtk" ]; then
  if "$vtk" --mesh "$dir/m.mesh" --results "$dir/on" --output "$dir/on.vtu" --surface "$dir/on.vtp" >/dev/null 2>"$dir/err" &&
     grep -q 'Name="Fluence gate 0 \[0-0.001 ns\] (W/mm^2)"' "$dir/on.vtu" &&
     grep -q 'Name="Fluence gate 19 ' "$dir/on.vtu" && grep -q 'Name="Fluence after the gates' "$dir/on.vtu" &&
     grep -q 'Name="Exit fluence gate 0 \[0-0.001 ns\] (W/mm^2)"' "$dir/on.vtp" &&
     grep -q 'Name="Exit fluence after the gates' "$dir/on.vtp" &&
     grep -q 'Name="Exit fluence standard error (W/mm^2)"' "$dir/on.vtp"; then
    ok "fullmonte-vtk: a cell array per bin, volume and surface (surface_exit.txt with its standard errors read)"
  else
    fail "fullmonte-vtk gated arrays: $(cat "$dir/err")"
  fi
  # A face list that is not the mesh's (a face with another point) is refused, naming its line.
  cp -r "$dir/on" "$dir/badlist"
  "$py" - "$dir/badlist/surface_exit_gated_faces.txt" <<'PY'
import sys
p = sys.argv[1]
lines = open(p).read().splitlines()
f = lines[2].split()
f[1] = str(int(f[1]) % 5 + 1)  # another of the model's five points
lines[2] = " ".join(f)
open(p, "w").write("\n".join(lines) + "\n")
PY
  if "$vtk" --mesh "$dir/m.mesh" --results "$dir/badlist" --output "$dir/b.vtu" --surface "$dir/b.vtp" >/dev/null 2>"$dir/err"; then
    fail "fullmonte-vtk accepted a gated face list with a face not the mesh's"
  elif grep -q 'surface_exit_gated_faces.txt:3: face .* other points' "$dir/err" && [ ! -e "$dir/b.vtu" ]; then
    ok "fullmonte-vtk: a gated face list not the mesh's is refused with its line, before any file is written"
  else
    fail "fullmonte-vtk bad face list error: $(cat "$dir/err")"
  fi
fi

"$exe" "${m[@]}" --time-gates 0,0.02,0.001 --no-gated-volume --output "$dir/exitonly" >/dev/null 2>"$dir/err" ||
  fail "--no-gated-volume: $(cat "$dir/err")"
if [ -e "$dir/exitonly/surface_exit_gated.fmtg" ] && [ ! -e "$dir/exitonly/fluence_gated.fmtg" ] &&
   grep -q ' - ' "$dir/exitonly/tpsf.txt"; then
  ok "--no-gated-volume: exit gated only"
else
  fail "--no-gated-volume outputs"
fi

# A run without gates leaves no gated output of an earlier run behind.
"$exe" "${m[@]}" --output "$dir/on" >/dev/null 2>"$dir/err" || fail "CW rerun: $(cat "$dir/err")"
if [ ! -e "$dir/on/fluence_gated.fmtg" ] && [ ! -e "$dir/on/tpsf.txt" ] && [ ! -e "$dir/on/surface_exit_gated_faces.txt" ] &&
   ! grep -q time_gates "$dir/on/summary.json"; then
  ok "a CW run into the folder removes the gated outputs"
else
  fail "gated outputs left by an earlier run"
fi

# A batch with --time-gates: each run's gated outputs in DIR/run_NNNN/, equal to the single run
# of that source with the same seed (one batch: the batch's runs carry no standard errors).
printf '1\n1 0.6 0.2 0.15 1000\n' >"$dir/m2.source"
printf 'm.source\nm2.source\n' >"$dir/list.txt"
b=(--mesh "$dir/m.mesh" --opt "$dir/m.opt" --packets 4000 --threads 2 --quiet --seed 3 --time-gates 0,0.02,0.001)
"$exe" "${b[@]}" --batch-sources "$dir/list.txt" --output "$dir/batch" >/dev/null 2>"$dir/err" || fail "gated batch: $(cat "$dir/err")"
for k in 0 1; do
  src=$([ $k = 0 ] && echo m.source || echo m2.source)
  "$exe" "${b[@]}" --source "$dir/$src" --batches 1 --output "$dir/single$k" >/dev/null 2>"$dir/err" || fail "single $k: $(cat "$dir/err")"
done
if cmp -s "$dir/batch/run_0000/fluence_gated.fmtg" "$dir/single0/fluence_gated.fmtg" &&
   cmp -s "$dir/batch/run_0001/fluence_gated.fmtg" "$dir/single1/fluence_gated.fmtg" &&
   cmp -s "$dir/batch/run_0001/surface_exit_gated.fmtg" "$dir/single1/surface_exit_gated.fmtg" &&
   cmp -s "$dir/batch/run_0001/surface_exit_gated_faces.txt" "$dir/single1/surface_exit_gated_faces.txt" &&
   cmp -s "$dir/batch/run_0001/tpsf.txt" "$dir/single1/tpsf.txt" &&
   ! cmp -s "$dir/batch/run_0000/fluence_gated.fmtg" "$dir/batch/run_0001/fluence_gated.fmtg" &&
   "$py" -c '
import json, sys
j = json.load(open(sys.argv[1]))
r = j["per_run"]
assert [x["gated_outputs"] for x in r] == ["run_0000/", "run_0001/"], r
assert r[1]["time_gates"]["gates"] == 20 and len(r[1]["time_gates"]["absorbed"]) == 20, r[1]
' "$dir/batch/summary.json"; then
  ok "gated batch: run k's gated outputs equal the single run's"
else
  fail "gated batch outputs differ from the single runs"
fi

# A batch into a folder that held an earlier batch of more runs removes the extra run folders
# (the folder holds this batch's runs only), an ungated batch removes them all, and a run folder
# holding a file no batch writes is refused before anything is removed.
printf 'm.source\nm2.source\nm.source\n' >"$dir/list3.txt"
"$exe" "${b[@]}" --batch-sources "$dir/list3.txt" --output "$dir/stale" >/dev/null 2>"$dir/err" || fail "3-run batch: $(cat "$dir/err")"
[ -d "$dir/stale/run_0002" ] || fail "3-run batch wrote no run_0002/"
"$exe" "${b[@]}" --batch-sources "$dir/list.txt" --output "$dir/stale" >/dev/null 2>"$dir/err" || fail "2-run batch: $(cat "$dir/err")"
if [ -f "$dir/stale/run_0001/tpsf.txt" ] && [ ! -e "$dir/stale/run_0002" ]; then
  ok "a 2-run gated batch after a 3-run one leaves run_0000/ and run_0001/ only"
else
  fail "stale run folders after a shorter batch: $(ls "$dir/stale")"
fi
"$exe" "${b[@]:0:11}" --batch-sources "$dir/list.txt" --output "$dir/stale" >/dev/null 2>"$dir/err" || fail "CW batch: $(cat "$dir/err")"
if ! ls -d "$dir"/stale/run_* >/dev/null 2>&1 && [ -f "$dir/stale/summary.json" ]; then
  ok "an ungated batch removes the gated batch's run folders"
else
  fail "run folders left by an ungated batch: $(ls "$dir/stale")"
fi
mkdir -p "$dir/stale/run_0007" && echo mine >"$dir/stale/run_0007/notes.txt"
if ! "$exe" "${b[@]}" --batch-sources "$dir/list.txt" --output "$dir/stale" >/dev/null 2>"$dir/err" &&
   grep -q "run_0007/.*'notes.txt', which no batch writes" "$dir/err" && [ -f "$dir/stale/summary.json" ] &&
   [ -f "$dir/stale/run_0007/notes.txt" ]; then
  ok "a run folder holding a file no batch writes is refused, nothing removed"
else
  fail "foreign file in a stale run folder: $(cat "$dir/err")"
fi

# --time-gate-regions 2: fluence_gated.fmtg over region 2's tetra only, listed in
# fluence_gated_tetras.txt, equal to the all-tetras run's values there (same seed and batches).
"$exe" "${m[@]}" --time-gates 0,0.02,0.001 --output "$dir/full" >/dev/null 2>"$dir/err" || fail "full: $(cat "$dir/err")"
"$exe" "${m[@]}" --time-gates 0,0.02,0.001 --time-gate-regions 2 --output "$dir/reg" >/dev/null 2>"$dir/err" ||
  fail "--time-gate-regions run: $(cat "$dir/err")"
if "$py" - "$dir/on" "$dir/reg" <<'PY'
import json, struct, sys
def fmtg(path):
    raw = open(path, "rb").read()
    bins, has_se, n = struct.unpack_from("<IIQ", raw, 24)
    v = struct.unpack_from(f"<{bins * n * (1 + has_se)}d", raw, 128)
    return n, bins, v
# (the CW rerun above replaced "on": rerun the full gated outputs next to it)
n, bins, full = fmtg(sys.argv[1] + "/../full/fluence_gated.fmtg")
k, kb, part = fmtg(sys.argv[2] + "/fluence_gated.fmtg")
ids = [int(l) for l in open(sys.argv[2] + "/fluence_gated_tetras.txt") if not l.startswith("#")]
assert (n, k, kb, ids) == (2, 1, bins, [2]), (n, k, kb, ids)
assert all(part[b] == full[b * n + 1] for b in range(bins)), "values differ"
assert open(sys.argv[2] + "/surface_exit_gated.fmtg", "rb").read() == open(sys.argv[1] + "/../full/surface_exit_gated.fmtg", "rb").read()
t = json.load(open(sys.argv[2] + "/summary.json"))["time_gates"]
assert t["regions"] == [2] and t["gated_tetras"] == 1, t
PY
then ok "--time-gate-regions: region 2's tetras only, equal to the full run there"; else fail "--time-gate-regions outputs"; fi

bad() {  # expected-message then arguments
  local want=$1
  shift
  rm -rf "$dir/bad"
  "$exe" "${m[@]}" "$@" --output "$dir/bad" >/dev/null 2>"$dir/err"
  local rc=$?
  if [ "$rc" = 1 ] && grep -q -- "$want" "$dir/err" && [ ! -e "$dir/bad/summary.json" ]; then
    ok "$* refused: $(cat "$dir/err")"
  else
    fail "$*: exit $rc, $(cat "$dir/err")"
  fi
}
bad "--time-gates: step must be > 0" --time-gates 0,1,0
bad "--time-gates: start must be >= 0" --time-gates -1,1,0.1
bad "--time-gates: stop (1 ns) must be after start" --time-gates 2,1,0.1
bad "--time-gates: (stop - start) / step = 3.33" --time-gates 0,1,0.3
bad "--time-gates: needs three numbers" --time-gates 0,1
bad "--time-gates: 'x' is not a number" --time-gates 0,x,0.1
bad "more than the 100000 allowed" --time-gates 0,1000,0.001
bad "--no-gated-volume needs --time-gates" --no-gated-volume
bad "leaves no tally to gate" --time-gates 0,1,0.1 --no-gated-volume --no-surface
bad "--time-gate-regions: region 5 has no tetras (the model's regions: 1 2)" --time-gates 0,1,0.1 --time-gate-regions 1,5
bad "--time-gate-regions: needs at least one region id" --time-gates 0,1,0.1 --time-gate-regions ,
bad "--time-gate-regions: 'a' is not a region id" --time-gates 0,1,0.1 --time-gate-regions a
bad "--time-gate-regions needs --time-gates" --time-gate-regions 1
bad "not with --no-gated-volume" --time-gates 0,1,0.1 --no-gated-volume --time-gate-regions 1

echo "$failures failure(s)"
[ "$failures" = 0 ]
