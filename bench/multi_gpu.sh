#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# shellcheck disable=SC2046  # $(on N) expands to several words, on purpose
# Many GPUs of one host (issue 29 target 3), in one device call on a 4-GPU machine, on a
# clinical-scale mesh (the Digimouse atlas), with the absorbed fraction beside every timing:
#   1. fixed cost per extra GPU: a tiny run's whole process (1000 packets) on 1, 2 and 4 devices,
#      ROUNDS rounds interleaved; per extra GPU = (wall(N) - wall(1)) / (N - 1);
#   2. a batch of 10 short runs (SHORT packets each) on 1 vs 4 GPUs: never slower on 4;
#   3. one long run (LONG packets, default 1e9) on 1 vs 4 GPUs: efficiency = T1 / (4 T4) on the
#      run (upload + kernels + download) and on the whole process (target >= 0.95), and the L1
#      distance between the two fluence files (same seed and packets: rounding only);
#   4. checks: the 1-GPU long run's absorbed fraction against the CPU kernel's (other seed,
#      |z| < 4) and every other absorbed fraction against the 1-GPU long run's (|z| < 4).
#   With MPI=1 (an FM_USE_MPI build), also one rank per GPU (mpirun -np N, no --devices: the
#   ranks of the host share its GPUs): 5. the driver's start-up of N devices in one process
#   against N processes of one device each (bench/cuda_startup.cu) and an empty mpirun; the tiny
#   run, the 10-run batch and the long run on N ranks, with their absorbed fractions checked
#   and the long run's L1 against the 1-GPU run.
# Prints "key value" lines and a summary table (also OUT/multi_gpu.txt); exit 1 when a check
# fails (a run that fails, an absorbed fraction off by |z| >= 4); the issue's performance targets
# that a measurement misses are listed at the end ("targets missed"), not counted as failures.
# Usage (GPU machine, repo root): bench/multi_gpu.sh MESH OPT SOURCE OUT
#   MESH: TIM-OS (.mesh or .mesh.gz) or .fmb; converted once to .fmb, as users are told to.
#   Env: LONG (1e9), SHORT (1e6), ROUNDS (2), CPU_PACKETS (1e6), GPUS (4), FM_BUILD_DIR
#   (build-multi), FM_REUSE_BUILD=1, JOBS (32), MPI=1 (also ranks); KERNEL=cpu runs every step on the CPU instead
#   (a smoke test of this script without a GPU: the "devices" are thread counts).
# Expected time on 4 H100s with the 996k-tetra Digimouse: build ~2 min; (1) ~15 s; (2) ~10 s;
# (3) ~35 s a round (1e9 on one GPU ~26 s); (4) ~5 s: about 4 minutes with two rounds.
set -uo pipefail
command -v nvcc >/dev/null || [ -n "${CUDACXX:-}" ] || export PATH=/usr/local/cuda/bin:$PATH
mesh=${1:?MESH}; opt=${2:?OPT}; src=${3:?SOURCE}; out=${4:?OUT}
long=${LONG:-1000000000}; short=${SHORT:-1000000}; rounds=${ROUNDS:-2}; cpuN=${CPU_PACKETS:-1000000}
gpus=${GPUS:-4}; build=${FM_BUILD_DIR:-build-multi}
mkdir -p "$out"
res=$out/multi_gpu.txt
: > "$res"
fail=0
missed=""  # performance targets not met (reported, not failures)
miss() { missed="$missed $1"; }
say() { echo "$@" | tee -a "$res"; }
py=$(command -v python3 || command -v /usr/bin/python3)
kernel=${KERNEL:-cuda}
if [ "$kernel" = cuda ]; then
  ngpu=$(nvidia-smi -L | grep -c '^GPU')
  nvidia-smi -L | tee -a "$res"
  [ "$ngpu" -ge "$gpus" ] || { say "multi_gpu: $gpus GPUs wanted, $ngpu present"; exit 1; }
fi
say "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown); host threads $(nproc)"

if ! { [ "${FM_REUSE_BUILD:-0}" = 1 ] && [ -x "$build/bin/fullmonte-run" ]; }; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DFM_USE_CUDA="$([ "$kernel" = cuda ] && echo ON || echo OFF)" -DFM_USE_TCL=OFF -DFM_USE_VTK=OFF \
    -DFM_USE_MPI="$([ "${MPI:-0}" = 1 ] && echo ON || echo OFF)" -DFM_USE_PYTHON=OFF -DFM_USE_PLANNING=OFF -DFM_USE_CGAL=OFF -DFM_USE_HDF5=OFF -DFM_BUILD_TESTS=OFF \
    -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" >"$out/cmake.log" 2>&1 || { tail -30 "$out/cmake.log"; exit 1; }
  cmake --build "$build" -j "${JOBS:-32}" --target fullmonte-run fullmonte-compare $([ "$kernel" = cuda ] && echo cuda_startup) >"$out/build.log" 2>&1 \
    || { grep -E 'error' "$out/build.log" | head -30; exit 1; }
fi
bin=$build/bin

# The mesh as .fmb (read once per process, as a planning user would keep it).
work=$(mktemp -d /tmp/multi_gpu.XXXX)
case $mesh in
  *.fmb) fmb=$mesh ;;
  *.gz) zcat "$mesh" > "$work/model.mesh"; "$bin/fullmonte-run" --mesh "$work/model.mesh" --save-mesh "$work/model.fmb" >/dev/null || exit 1; fmb=$work/model.fmb ;;
  *) "$bin/fullmonte-run" --mesh "$mesh" --save-mesh "$work/model.fmb" >/dev/null || exit 1; fmb=$work/model.fmb ;;
esac
# The options that run on N devices: GPUs 0..N-1 (or N CPU threads with KERNEL=cpu).
on() { if [ "$kernel" = cuda ]; then echo "--kernel cuda --devices $(seq -s, 0 $(($1 - 1)))"; else echo "--kernel cpu --threads $1"; fi; }
json() { "$py" -c "import json,sys; s=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
# One fullmonte-run process (or mpirun's ranks of it, with launch=(mpirun ...)): prints
# "wall run_seconds absorbed" (FAIL on error).
launch=()
fm() {  # DIR ARGS...
  local dir=$1 t0 t1; shift
  t0=$(date +%s.%N)
  "${launch[@]}" "$bin/fullmonte-run" --mesh "$fmb" --opt "$opt" --quiet --output "$dir" "$@" >"$dir.log" 2>&1 \
    || { cp "$dir.log" "$out/" 2>/dev/null; echo FAIL; return 1; }  # the log kept for the reader
  t1=$(date +%s.%N)
  json "$dir/summary.json" "'%.3f %.4f %.6f' % ($t1 - $t0, s['seconds'], s['ledger']['absorbed'] if 'ledger' in s else s['per_run'][0]['ledger']['absorbed'])"
}
"$bin/fullmonte-run" --mesh "$fmb" --opt "$opt" --source "$src" --packets 1000 $(on "$gpus") \
  --quiet --output "$work/warm" >/dev/null 2>&1  # GPUs out of idle

say "== 1. fixed cost per extra GPU (tiny run, 1000 packets: process wall s, run s, absorbed)"
declare -A tiny
for r in $(seq 1 "$rounds"); do
  for n in $(printf '%s\n' 1 2 "$gpus" | sort -nu); do
    v=$(fm "$work/tiny_$n" --source "$src" --packets 1000 $(on "$n")) || fail=1
    say "tiny_run devices $n round $r: $v"
    tiny[$n]="${tiny[$n]:-} ${v%% *}"
  done
done
best() { echo "$1" | tr ' ' '\n' | grep -v '^$' | sort -g | head -1; }  # the least of the rounds
w1=$(best "${tiny[1]}"); w2=$(best "${tiny[2]}"); wn=$(best "${tiny[$gpus]}")
perextra=$(awk -v a="$w1" -v b="$wn" -v n="$gpus" 'BEGIN { printf "%.3f", (b - a) / (n - 1) }')
say "fixed_cost_per_extra_gpu_s 2_devices $(awk -v a="$w1" -v b="$w2" 'BEGIN { printf "%.3f", b - a }') $gpus""_devices $perextra (target <= 0.1)"
awk -v c="$perextra" 'BEGIN { exit !(c <= 0.1) }' || miss fixed_cost_per_extra_gpu

say "== 2. batch of 10 runs of $short packets (process wall s, batch s, run 0 absorbed)"
# The list names its .source files relative to itself: give the absolute path.
for _ in $(seq 1 10); do readlink -f "$src"; done > "$work/ten.txt"
declare -A ten
for r in $(seq 1 "$rounds"); do
  for n in 1 "$gpus"; do
    v=$(fm "$work/ten_$n" --batch-sources "$work/ten.txt" --packets "$short" $(on "$n")) || fail=1
    say "batch10 devices $n round $r: $v"
    ten[$n]="${ten[$n]:-} ${v%% *}"
  done
done
t1=$(best "${ten[1]}"); tn=$(best "${ten[$gpus]}")
verdict=$(awk -v a="$t1" -v b="$tn" 'BEGIN { print (b <= a * 1.02) ? "ok" : "SLOWER" }')
say "batch10_wall_s 1_device $t1 ${gpus}_devices $tn ratio $(awk -v a="$t1" -v b="$tn" 'BEGIN { printf "%.2f", b / a }') $verdict"
[ "$verdict" = ok ] || miss "batch10_on_${gpus}_devices"

if [ "$kernel" = cuda ]; then
  say "== 2b. --devices all (devices chosen by the work: Kernels/DeviceVisibility): tiny run and 10-run batch"
  declare -A alltiny allten
  for r in $(seq 1 "$rounds"); do
    v=$(fm "$work/alltiny" --source "$src" --packets 1000 --kernel cuda --devices all) || fail=1
    say "tiny_run devices all round $r: $v ($(grep -o 'worth using[^)]*' "$work/alltiny.log" | head -1))"
    alltiny[x]="${alltiny[x]:-} ${v%% *}"
    v=$(fm "$work/allten" --batch-sources "$work/ten.txt" --packets "$short" --kernel cuda --devices all) || fail=1
    say "batch10 devices all round $r: $v devices_per_rank $(json "$work/allten/summary.json" "s.get('devices_per_rank')")"
    allten[x]="${allten[x]:-} ${v%% *}"
  done
  ta=$(best "${allten[x]}"); wa=$(best "${alltiny[x]}")
  verdict=$(awk -v a="$t1" -v b="$ta" 'BEGIN { print (b <= a * 1.02) ? "ok" : "SLOWER" }')
  say "all_devices tiny_wall_s $wa (1 device $w1) batch10_wall_s $ta (1 device $t1) ratio $(awk -v a="$t1" -v b="$ta" 'BEGIN { printf "%.2f", b / a }') $verdict"
  [ "$verdict" = ok ] || miss batch10_devices_all
fi

say "== 3. one run of $long packets (process wall s, run s, absorbed; kernel s in the json)"
declare -A lw lr
for r in $(seq 1 "$rounds"); do
  for n in "$gpus" 1; do
    v=$(fm "$work/long_$n" --source "$src" --packets "$long" --seed 1 $(on "$n")) || fail=1
    say "long devices $n round $r: $v kernel $(json "$work/long_$n/summary.json" "s.get('kernel_seconds', 0)")"
    read -r vw vr _ <<< "$v"
    lw[$n]="${lw[$n]:-} $vw"; lr[$n]="${lr[$n]:-} $vr"
  done
done
eff() { awk -v a="$1" -v b="$2" -v n="$gpus" 'BEGIN { printf "%.3f", a / (n * b) }'; }
effrun=$(eff "$(best "${lr[1]}")" "$(best "${lr[$gpus]}")")
say "long_efficiency_run $effrun process $(eff "$(best "${lw[1]}")" "$(best "${lw[$gpus]}")") (target >= 0.95)"
awk -v e="$effrun" 'BEGIN { exit !(e >= 0.95) }' || miss long_efficiency_run
say "long_l1_1_vs_${gpus}_gpus $("$bin/fullmonte-compare" "$work/long_1/fluence.txt" "$work/long_$gpus/fluence.txt" | head -1)"

mpi_checks=""
mpirun=$(command -v mpirun || command -v mpiexec || true)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [ "$kernel" = cuda ]; then
  say "== 5a. the driver alone: N devices in one process vs N processes of one device (cuda_startup, wall s)"
  for r in $(seq 1 "$rounds"); do
    for n in $(printf '%s\n' 1 2 "$gpus" | sort -nu); do
      s0=$(date +%s.%N); CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((n - 1))) "$bin/cuda_startup" 64 > "$work/cs.log" 2>&1; s1=$(date +%s.%N)
      one=$(awk -v a="$s0" -v b="$s1" 'BEGIN { printf "%.3f", b - a }')
      s0=$(date +%s.%N)
      for k in $(seq 0 $((n - 1))); do CUDA_VISIBLE_DEVICES=$k "$bin/cuda_startup" 64 > "$work/cs$k.log" 2>&1 & done; wait
      s1=$(date +%s.%N)
      par=$(awk -v a="$s0" -v b="$s1" 'BEGIN { printf "%.3f", b - a }')
      mt=none
      if [ -n "$mpirun" ]; then s0=$(date +%s.%N); "$mpirun" --oversubscribe --bind-to none -np "$n" true; s1=$(date +%s.%N); mt=$(awk -v a="$s0" -v b="$s1" 'BEGIN { printf "%.3f", b - a }'); fi
      say "startup devices $n round $r: one_process_all_visible $one (cuInit etc: $(head -c 160 "$work/cs.log" | tr '\n' ' ')) n_processes $par empty_mpirun $mt"
    done
  done
fi
if [ "${MPI:-0}" = 1 ]; then
  grep -q "FM_HAVE_MPI 1" "$build/fm_config.h" || { say "multi_gpu: MPI=1 but $build has no MPI"; exit 1; }
  [ -n "$mpirun" ] || { say "multi_gpu: MPI=1 but no mpirun"; exit 1; }
  # N ranks of one fullmonte-run (no --devices: rank r of the host takes GPU r).
  fmr() {  # N DIR ARGS...
    local n=$1 rc=0; shift
    launch=("$mpirun" --oversubscribe --bind-to none -np "$n")
    fm "$@" || rc=1
    launch=()
    return $rc
  }
  rankopt() { if [ "$kernel" = cuda ]; then echo "--kernel cuda"; else echo "--kernel cpu --threads 1"; fi; }
  say "== 5b. one rank per GPU (mpirun -np N): tiny run, 10-run batch, long run (process wall s, run s, absorbed)"
  declare -A rtiny rten rlw rlr
  for r in $(seq 1 "$rounds"); do
    for n in $(printf '%s\n' 1 2 "$gpus" | sort -nu); do
      v=$(fmr "$n" "$work/rtiny_$n" --source "$src" --packets 1000 $(rankopt)) || fail=1
      say "ranks_tiny ranks $n round $r: $v"
      rtiny[$n]="${rtiny[$n]:-} ${v%% *}"
    done
    for n in 1 "$gpus"; do
      v=$(fmr "$n" "$work/rten_$n" --batch-sources "$work/ten.txt" --packets "$short" $(rankopt)) || fail=1
      say "ranks_batch10 ranks $n round $r: $v"
      rten[$n]="${rten[$n]:-} ${v%% *}"
    done
    v=$(fmr "$gpus" "$work/rlong" --source "$src" --packets "$long" --seed 1 $(rankopt)) || fail=1
    say "ranks_long ranks $gpus round $r: $v kernel $(json "$work/rlong/summary.json" "s.get('kernel_seconds', 0)")"
    read -r vw vr _ <<< "$v"
    rlw[x]="${rlw[x]:-} $vw"; rlr[x]="${rlr[x]:-} $vr"
  done
  r1=$(best "${rtiny[1]}"); r2=$(best "${rtiny[2]}"); rn=$(best "${rtiny[$gpus]}")
  say "ranks_fixed_cost_per_extra_gpu_s 2_ranks $(awk -v a="$r1" -v b="$r2" 'BEGIN { printf "%.3f", b - a }') ${gpus}_ranks $(awk -v a="$r1" -v b="$rn" -v n="$gpus" 'BEGIN { printf "%.3f", (b - a) / (n - 1) }') (one process: 1 device $w1, 2 devices $w2, $gpus devices $wn; target <= 0.1)"
  b1=$(best "${rten[1]}"); bn=$(best "${rten[$gpus]}")
  say "ranks_batch10_wall_s 1_rank $b1 ${gpus}_ranks $bn (one process, 1 device: $t1)"
  say "ranks_long_efficiency_run $(eff "$(best "${lr[1]}")" "$(best "${rlr[x]}")") process $(eff "$(best "${lw[1]}")" "$(best "${rlw[x]}")") (against the 1-GPU process; target >= 0.95)"
  say "ranks_long_l1_vs_1_gpu $("$bin/fullmonte-compare" "$work/long_1/fluence.txt" "$work/rlong/fluence.txt" | head -1)"
  for n in $(printf '%s\n' 1 2 "$gpus" | sort -nu); do mpi_checks="$mpi_checks rtiny_$n:1000"; done
  mpi_checks="$mpi_checks rten_$gpus:$short rlong:$long"
fi

say "== 4. checks"
"$bin/fullmonte-run" --mesh "$fmb" --opt "$opt" --source "$src" --packets "$cpuN" --seed 77 --kernel cpu --no-surface \
  --quiet --output "$work/cpu" >/dev/null 2>&1 || { say "CPU run FAILED"; fail=1; }
ref=$(json "$work/long_1/summary.json" "s['ledger']['absorbed']")
z() { "$py" -c "import math; print('%.2f' % (($1 - $2) / math.sqrt(0.25 / $3 + 0.25 / $4)))"; }
zc=$(z "$ref" "$(json "$work/cpu/summary.json" "s['ledger']['absorbed']")" "$long" "$cpuN")
say "check_long_1gpu_vs_cpu_absorbed_z $zc"
checks="$zc"
for f in $(printf 'tiny_%s\n' 1 2 "$gpus" | sort -u); do checks="$checks $(z "$ref" "$(json "$work/$f/summary.json" "s['ledger']['absorbed']")" "$long" 1000)"; done
for n in 1 "$gpus"; do checks="$checks $(z "$ref" "$(json "$work/ten_$n/summary.json" "s['per_run'][0]['ledger']['absorbed']")" "$long" "$short")"; done
checks="$checks $(z "$ref" "$(json "$work/long_$gpus/summary.json" "s['ledger']['absorbed']")" "$long" "$long")"
for c in $mpi_checks; do
  checks="$checks $(z "$ref" "$(json "$work/${c%%:*}/summary.json" "s['ledger']['absorbed'] if 'ledger' in s else s['per_run'][0]['ledger']['absorbed']")" "$long" "${c##*:}")"
done
say "check_absorbed_z (cpu, tiny runs, batch run 0 x2, long on $gpus${mpi_checks:+, ranks:$mpi_checks}): $checks"
for v in $checks; do awk -v z="$v" 'BEGIN { exit !(z < 4 && z > -4) }' || fail=1; done
rm -rf "$work"
if [ "$fail" = 0 ]; then say "multi_gpu: all checks pass"; else say "multi_gpu: SOME CHECKS FAILED"; fi
say "multi_gpu: targets missed:${missed:- none}"
exit $fail
