#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Issue 8 benchmark: every target case with fixed seeds, one table.
#   cube_5med (TIM-OS, point), FourLayer (TIM-OS, pencil), seven-layer skin (MCML mode, A(r,z)),
#   cube60 (60 mm cube as 6 tetras, mu_a 0.005, mu_s 1 /mm, g 0.01, n 1.37 in air, pencil at the
#   centre of the z = 0 face: the MCX comparison case).
# Each case runs on KERNEL (cuda or cpu) at PACKETS (default 1e8 cuda, 1e6 cpu) and is checked:
# its absorbed fraction against CHECK_RUNS CPU runs of CHECK_PACKETS packets with other seeds
# (z = (x - mean) / sigma, sigma from the spread of those runs scaled to the packet counts; it
# passes within Student's t at the 3-sigma level for CHECK_RUNS - 1 degrees of freedom: |z| <=
# 4.53 for 8 runs), so a fast wrong kernel cannot pass. Prints a markdown table (also to
# OUT/perf_table.md) and, with APPEND=FILE, appends it to FILE under a dated heading.
# Usage: bench/perf_all.sh DATA OUT BUILD_DIR   (DATA holds timos/ and mcml/ as ../shared/data)
# Env: KERNEL, PACKETS, THREADS (cpu threads; default all), CASES ("cube_5med fourlayer skin7 cube60"),
#      CHECK_RUNS (8), CHECK_PACKETS (per case default), APPEND, COMMIT (the heading's commit; default
#      git's HEAD, which a copied tree may not match).
set -uo pipefail
data=$1; out=$2; build=$3
kernel=${KERNEL:-cuda}
if [ "$kernel" = cuda ]; then packets=${PACKETS:-100000000}; else packets=${PACKETS:-1000000}; fi
threads=${THREADS:-}
cases=${CASES:-"cube_5med fourlayer skin7 cube60"}
checkRuns=${CHECK_RUNS:-8}
py=$(command -v /usr/bin/python3 || command -v python3)
mkdir -p "$out/perf"
run=$build/bin/fullmonte-run; mcml=$build/bin/fullmonte-mcml

# The MCX comparison cube: 8 corners, 6 tetras around the 0-7 diagonal, TIM-OS files.
mkcube60() {
  local d=$out/perf/cube60; mkdir -p "$d"
  { echo 8; echo 6
    for i in 0 1 2 3 4 5 6 7; do echo "$(( (i & 1) * 60 )) $(( (i >> 1 & 1) * 60 )) $(( (i >> 2 & 1) * 60 ))"; done
    for t in "1 2 4 8" "1 2 6 8" "1 3 4 8" "1 3 7 8" "1 5 6 8" "1 5 7 8"; do echo "$t 1"; done
  } > "$d/cube60.mesh"
  printf '1\n1\n0.005 1.0 0.01 1.37\n1\n1.0\n' > "$d/cube60.opt"
  printf '1\n11 0 30 30 0 0 0 1 1\n' > "$d/cube60.source"
  echo "$d/cube60"
}
# A one-run .mci of the skin file's third run with n photons.
mkskin() {
  "$(dirname "$0")/skin_mci.sh" "$data/mcml/skin7/7layerskin_600nm.mci" "$1" "$2" > "$out/perf/$2.mci"
  echo "$out/perf/$2.mci"
}
base() {
  case $1 in
    cube_5med) echo "$data/timos/cube_5med/cube_5med";;
    fourlayer) echo "$data/timos/fourlayer/FourLayer";;
    cube60) mkcube60;;
  esac
}
# One mesh run -> "wall kernel upload download steps absorbed" ("FAIL" on error).
meshRun() {  # case kernel packets seed dir
  local b; b=$(base "$1")
  local t0 t1
  t0=$(date +%s.%N)
  if ! "$run" --mesh "$b.mesh" --opt "$b.opt" --source "$b.source" --packets "$3" --seed "$4" \
      --kernel "$2" $([ "$2" = cpu ] && echo ${threads:+--threads $threads}) --quiet --output "$5" > "$5.log" 2>&1; then echo FAIL; return; fi
  t1=$(date +%s.%N)
  "$py" - "$5/summary.json" "$t0" "$t1" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1])); L = s["ledger"]
print(float(sys.argv[3]) - float(sys.argv[2]), s.get("kernel_seconds", s["seconds"]), s.get("upload_seconds", 0),
      s.get("download_seconds", 0), s["events"]["absorb"], L["absorbed"])
EOF
}
mcmlRun() {  # kernel photons seed dir
  local f; f=$(mkskin "$2" "skin_$3_$2")
  local t0 t1 log=$4.log
  mkdir -p "$4"
  t0=$(date +%s.%N)
  if ! "$mcml" "$f" --kernel "$1" --seed "$3" $([ "$1" = cpu ] && echo ${threads:+--threads $threads}) --output-dir "$4" > "$log" 2>&1; then echo FAIL; return; fi
  t1=$(date +%s.%N)
  # "run 1/1: N photons in S s (...)", "Rsp .. Rd .. A .. Tt ..", "X interactions per photon"
  awk -v w="$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" '
    /photons in/ {for (i = 1; i <= NF; i++) if ($i == "in") s = $(i + 1); n = $3}
    /Rsp/ {for (i = 1; i <= NF; i++) if ($i == "A") a = $(i + 1)}
    /interactions per photon/ {ipp = $1}
    END {printf "%s %s 0 0 %.0f %s\n", w, s, ipp * n, a}' "$log"
}
caseRun() {  # case kernel packets seed dir
  if [ "$1" = skin7 ]; then mcmlRun "$2" "$3" "$4" "$5"; else meshRun "$@"; fi
}

default_check() { case $1 in cube_5med) echo 100000;; fourlayer) echo 200000;; skin7) echo 100000;; cube60) echo 20000;; esac; }

table=$out/perf/perf_table.md
{
  echo "| case | kernel | packets | wall s | kernel s | upload+download s | packets/s (wall) | steps/s (kernel) | steps/packet | absorbed | CPU check (mean +- sigma) | z |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
} > "$table"
for c in $cases; do
  res=$(caseRun "$c" "$kernel" "$packets" 1 "$out/perf/$c-main")
  if [ "$res" = FAIL ]; then echo "| $c | $kernel | $packets | FAILED: $(head -c 300 "$out/perf/$c-main.log" | tr '\n' ' ') |" >> "$table"; continue; fi
  # CPU check runs with seeds 101.. (all threads).
  cn=${CHECK_PACKETS:-$(default_check "$c")}
  checks=""
  for k in $(seq 1 "$checkRuns"); do
    r=$(threads= caseRun "$c" cpu "$cn" $((100 + k)) "$out/perf/$c-check$k")
    [ "$r" = FAIL ] && { checks=FAIL; break; }
    checks="$checks $(echo "$r" | awk '{print $6}')"
    rm -rf "$out/perf/$c-check$k"
  done
  "$py" - "$c" "$kernel" "$packets" "$cn" "$res" "$checks" >> "$table" <<'EOF'
import math, sys
c, kernel, n, cn = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
wall, ks, up, down, steps, absorbed = map(float, sys.argv[5].split())
if sys.argv[6].strip() == "FAIL":
    check, z, limit = "CPU check failed", float("nan"), 3.0
elif len(sys.argv[6].split()) < 2:
    check, z, limit = "not checked", 0.0, 3.0
else:
    xs = [float(x) for x in sys.argv[6].split()]
    m = sum(xs) / len(xs)
    sd1 = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))   # one run of cn packets
    sigma = math.sqrt(sd1 ** 2 / len(xs) + sd1 ** 2 * cn / n)       # mean of the checks, and this run
    z = (absorbed - m) / sigma if sigma > 0 else float("inf")
    check = f"{m:.5f} +- {sigma:.1e}"
    # sigma is estimated from the checks' spread, so z follows Student's t with len(xs) - 1
    # degrees of freedom: pass at its two-sided 3-sigma level (p = 0.27%; 4.53 for 8 checks),
    # not at 3, which 8 checks exceed by chance 2% of the time.
    dof = len(xs) - 1
    pdf = lambda t: math.exp(math.lgamma((dof + 1) / 2) - math.lgamma(dof / 2) - 0.5 * math.log(dof * math.pi)
                             - (dof + 1) / 2 * math.log1p(t * t / dof))
    def upper(t, steps=4000):  # P(T > t) = 1/2 - integral of the density over [0, t] (Simpson)
        h = t / steps
        return 0.5 - h / 3 * sum((1 if i in (0, steps) else 4 if i % 2 else 2) * pdf(i * h) for i in range(steps + 1))
    lo, hi = 0.0, 300.0
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if upper(mid) > math.erfc(3 / math.sqrt(2)) / 2 else (lo, mid)
    limit = hi
print(f"| {c} | {kernel} | {n:.0e} | {wall:.3f} | {ks:.3f} | {up + down:.3f} | {n / wall:.3e} | "
      f"{steps / ks:.3e} | {steps / n:.0f} | {absorbed:.5f} | {check} | {z:+.2f} {'ok' if abs(z) <= limit else 'FAIL'} (limit {limit:.2f}) |" if check != "not checked" else
      f"| {c} | {kernel} | {n:.0e} | {wall:.3f} | {ks:.3f} | {up + down:.3f} | {n / wall:.3e} | "
      f"{steps / ks:.3e} | {steps / n:.0f} | {absorbed:.5f} | not checked | |")
EOF
done
cat "$table"
if [ -n "${APPEND:-}" ]; then
  { echo; echo "### perf_all $(date -u +%F) — $kernel, $(command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name --format=csv,noheader | head -1 || uname -n), commit ${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
    echo; echo "\`KERNEL=$kernel PACKETS=$packets bench/perf_all.sh DATA OUT BUILD\`"; echo; cat "$table"; } >> "$APPEND"
fi
grep -q FAIL "$table" && exit 1 || exit 0
