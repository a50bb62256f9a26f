#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A long run (1e12 packets: accepted, and no memory is sized by the packet count) interrupted
# with SIGINT after ~1 s must stop within 1 s of the signal, exit 130, say so, and leave no
# tallies, no *.partial files and a summary.json marked "interrupted" with its ledger.
# Usage: interrupt.sh path/to/fullmonte-run
set -u
exe=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/model.sh"
write_model "$dir"
fail() { echo "FAIL: $*"; cat "$dir/stderr" 2>/dev/null; exit 1; }

"$exe" --mesh "$dir/m.mesh" --opt "$dir/m.opt" --source "$dir/m.source" --output "$dir/out" \
  --packets 1e12 --threads 2 --quiet >"$dir/stdout" 2>"$dir/stderr" &
pid=$!
sleep 1
kill -0 "$pid" 2>/dev/null || fail "the 1e12-packet run ended before the signal (exit $(wait $pid; echo $?))"
rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
t0=$(date +%s%N)
kill -INT "$pid"
wait "$pid"
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
echo "exit $rc after ${ms} ms; resident memory while running ${rss} kB"
cat "$dir/stderr"
[ "$rc" = 130 ] || fail "exit status $rc, want 130"
[ "$ms" -le 1000 ] || fail "took $ms ms to stop, want <= 1000"
[ "${rss:-0}" -lt 1000000 ] || fail "a 1e12-packet run holds $rss kB"
grep -q "interrupted after" "$dir/stderr" || fail "no message saying the run was interrupted"
for f in volume_energy.txt fluence.txt surface_exit.txt; do
  [ ! -e "$dir/out/$f" ] || fail "$f written by an interrupted run"
done
partial=$(find "$dir/out" -name '*.partial')
[ -z "$partial" ] || fail "partial files left: $partial"
s="$dir/out/summary.json"
[ -s "$s" ] || fail "no summary.json"
grep -q '"status": "interrupted"' "$s" || fail "summary.json not marked interrupted"
grep -q '"packets_requested": 1000000000000' "$s" || fail "summary.json lacks the requested count"
for k in launched absorbed exited abnormal imbalance; do
  grep -q "\"$k\":" "$s" || fail "summary.json ledger lacks $k"
done
echo "interrupt: ok"
