#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# One run on the GPUs and the CPU's threads together (issue 29 item 4, kernel hybrid), in one
# device call: builds the core + CUDA kernel (CUDA, CMake and Boost headers only), runs the
# hybrid tests, then for each model given (TIM-OS mesh, .opt, .source with one point source):
#   1. per mode (MODES: "default" = the standard errors' 10 batches, each GPU chunk one batch;
#      "1" = --batches 1, the GPU's queued launches taking blocks from the counter), ROUNDS
#      interleaved rounds of PACKETS packets, same seed: --kernel cuda (the GPUs alone) against
#      --kernel hybrid: each run's seconds (summary.json: the run, upload to download), absorbed
#      fraction, the CPU's share, and the process's wall time;
#   2. checks: hybrid against cuda, same seed: fluence L1 (the same packet streams whoever runs
#      them: float rounding only, < 1e-3) and the same launch count; hybrid's absorbed fraction
#      against a CPU-kernel run of another seed (|z| < 4 with both standard errors); the median
#      hybrid run no slower than the median GPU run (2% allowed for noise).
# Prints "key value" lines (also OUT/hybrid.txt); exit 1 when a test or a check fails.
# Usage (on the GPU machine, repo root):
#   bench/hybrid.sh OUT MESH OPT SOURCE [MESH OPT SOURCE ...]
#   e.g. bench/hybrid.sh $OUT $D/timos/cube_5med/cube_5med.{mesh,opt,source} $M/digimouse.{mesh,opt,source}
# Env: PACKETS (1e8), ROUNDS (3), MODES ("default 1"), CPU_PACKETS (1e6, the CPU check run), DEVICES (0; 'all' for
# every GPU), FM_BUILD_DIR (build-hybrid), FM_REUSE_BUILD=1 (skip configure/build when built),
# JOBS (16), KERNEL=cpu (a smoke test of this script on a machine without a GPU: tiny runs,
# hybrid is expected to fail there and only the CPU check runs).
set -uo pipefail
command -v nvcc >/dev/null || [ -n "${CUDACXX:-}" ] || export PATH=/usr/local/cuda/bin:$PATH
out=${1:?OUT dir}; shift
[ $(( $# % 3 )) = 0 ] && [ $# -gt 0 ] || { echo "usage: bench/hybrid.sh OUT MESH OPT SOURCE [MESH OPT SOURCE ...]"; exit 2; }
build=${FM_BUILD_DIR:-build-hybrid}
packets=${PACKETS:-100000000}; rounds=${ROUNDS:-3}; cpuN=${CPU_PACKETS:-1000000}; jobs=${JOBS:-16}
devices=${DEVICES:-0}
modes=${MODES:-default 1}
kernel=${KERNEL:-cuda}
mkdir -p "$out"
res="$out/hybrid.txt"
: > "$res"
fail=0
say() { echo "$@" | tee -a "$res"; }
py=$(command -v python3 || command -v /usr/bin/python3)
[ "$kernel" = cuda ] && nvidia-smi -L | tee -a "$res"
say "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown) host_threads $(nproc)"

if ! { [ "${FM_REUSE_BUILD:-0}" = 1 ] && [ -x "$build/bin/fullmonte-run" ]; }; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DFM_USE_CUDA=$([ "$kernel" = cuda ] && echo ON || echo OFF) \
    -DFM_USE_TCL=OFF -DFM_USE_VTK=OFF -DFM_USE_MPI=OFF -DFM_USE_PYTHON=OFF -DFM_USE_PLANNING=OFF -DFM_USE_CGAL=OFF \
    -DFM_BUILD_TESTS=ON -DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCH:-90} >"$out/cmake.log" 2>&1 || { tail -30 "$out/cmake.log"; exit 1; }
  targets="fullmonte-run fullmonte-compare test_hybrid"
  [ "$kernel" = cuda ] && targets="$targets test_cuda_hybrid"
  # shellcheck disable=SC2086
  cmake --build "$build" -j "$jobs" --target $targets >"$out/build.log" 2>&1 || { grep -E 'error' "$out/build.log" | head -30; exit 1; }
fi
bin=$build/bin

tests="test_hybrid"; [ "$kernel" = cuda ] && tests="$tests test_cuda_hybrid"
for t in $tests; do
  if "$bin/$t" --log_level=message >"$out/$t.log" 2>&1; then say "test $t pass"; else say "test $t FAIL"; fail=1; fi
  grep -E 'SKIP|CPU ran|CPU side ran|SE ' "$out/$t.log" | sed "s/^/  $t: /" | tee -a "$res"
done
[ "$kernel" = cuda ] || { packets=20000; rounds=1; cpuN=20000; }

json() { "$py" -c "import json,sys; s=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
wall() {  # wall seconds of a command (its output to OUT/last.log)
  local t0 t1; t0=$(date +%s.%N); "$@" >"$out/last.log" 2>&1 || { echo FAIL; cat "$out/last.log" >&2; return 1; }
  t1=$(date +%s.%N); awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

while [ $# -ge 3 ]; do
  mesh=$1 opt=$2 src=$3; shift 3
  name=$(basename "${mesh%.*}")
  for f in "$mesh" "$opt" "$src"; do [ -f "$f" ] || { say "$name: no file $f"; fail=1; continue 2; }; done
  say "== $name, $packets packets, devices $devices"
  run=("$bin/fullmonte-run" --mesh "$mesh" --opt "$opt" --source "$src" --quiet)
  wall "${run[@]}" --kernel "$kernel" --packets 1000 --output "$out/${name}_warm" >/dev/null || true  # GPU out of idle
  for mode in $modes; do
  bat=(); [ "$mode" = default ] || bat=(--batches "$mode")
  tag="${name}_b$mode"
  gpuS="" hybS=""
  for r in $(seq 1 "$rounds"); do
    for k in cuda hybrid; do
      [ "$kernel" = cuda ] || [ "$k" = cuda ] || continue
      kk=$k; [ "$kernel" = cuda ] || kk=cpu
      dir="$out/${tag}_${k}_$r"
      devs=(); [ "$kk" != cpu ] && devs=(--devices "$devices")
      w=$(wall "${run[@]}" --kernel "$kk" "${devs[@]}" "${bat[@]}" --packets "$packets" --seed 1 --output "$dir") || { fail=1; continue; }
      s=$(json "$dir/summary.json" "round(s['seconds'], 4)")
      extra=""; [ "$k" = hybrid ] && extra=" cpu_packets $(json "$dir/summary.json" "s['cpu_packets']") cpu_share $(json "$dir/summary.json" "round(s['cpu_packets'] / s['packets'], 5)")"
      say "${tag}_${k}_round$r run_s $s process_wall_s $w absorbed $(json "$dir/summary.json" "round(s['ledger']['absorbed'] / s['ledger']['launched'], 6)") kernel $(json "$dir/summary.json" "repr(s['kernel'])")$extra"
      [ "$k" = cuda ] && gpuS="$gpuS $s" || hybS="$hybS $s"
    done
  done
  [ "$kernel" = cuda ] || continue
  last="$out/${tag}_hybrid_$rounds" gpu="$out/${tag}_cuda_$rounds"
  l1=$("$bin/fullmonte-compare" "$gpu/fluence.txt" "$last/fluence.txt" | head -1)
  say "check_${tag}_fluence_l1_hybrid_vs_cuda_same_seed $l1"
  awk -v x="${l1##* }" 'BEGIN { exit !(x < 1e-3) }' || { say "check_${tag}_l1 FAIL"; fail=1; }
  [ "$(json "$last/summary.json" "s['packets']")" = "$(json "$gpu/summary.json" "s['packets']")" ] || { say "check_${tag}_packets FAIL"; fail=1; }
  mg=$(echo "$gpuS" | median) mh=$(echo "$hybS" | median)
  say "${tag}_median_run_s cuda $mg hybrid $mh speedup $(awk -v a="$mg" -v b="$mh" 'BEGIN { printf "%.4f", a / b }')"
  awk -v a="$mg" -v b="$mh" 'BEGIN { exit !(b <= 1.02 * a) }' || { say "check_${tag}_hybrid_not_slower FAIL"; fail=1; }
  done
  # Correctness: the CPU kernel with another seed; hybrid against cuda with the same seed.
  "$bin/fullmonte-run" --mesh "$mesh" --opt "$opt" --source "$src" --packets "$cpuN" --seed 77 --batches 10 \
    --kernel cpu --no-surface --quiet --output "$out/${name}_cpu" >/dev/null 2>&1 || { say "${name}: CPU run failed"; fail=1; }
  [ "$kernel" = cuda ] || continue
  last="$out/${name}_b${modes%% *}_hybrid_$rounds"
  z=$("$py" -c "
import json, math
h = json.load(open('$last/summary.json')); c = json.load(open('$out/${name}_cpu/summary.json'))
a, b = h['ledger']['absorbed'], c['ledger']['absorbed']
# each run's own standard error of the fraction, else the bound for a weight in [0, 1]
def se(s, n):
    e = (s.get('standard_error') or {}).get('absorbed_stderr')
    return e if isinstance(e, (int, float)) else math.sqrt(0.25 / n)
print(f'{a:.6f} {b:.6f} {(a - b) / math.hypot(se(h, $packets), se(c, $cpuN)):.2f}')")
  say "check_${name}_absorbed_hybrid_cpu_z $z"
  awk -v z="${z##* }" 'BEGIN { exit !(z < 4 && z > -4) }' || { say "check_${name}_absorbed FAIL"; fail=1; }
done
[ "$fail" = 0 ] && say "hybrid: all checks pass" || say "hybrid: SOME CHECKS FAILED"
exit $fail
