#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Planning loops (issue 29 items 2-3) in one device call, to set kDefaultRunsPerLaunch
# (Kernels/Batch.hpp) from the numbers: builds the core + CUDA kernel (CUDA, CMake and Boost
# headers only) with bench/planning_loop.sh, which runs the batch tests (with
# test_cuda_async_materials: two GPU runs at once with different materials) and measures on
# cube_5med kernel-only throughput, the C++ batch API with one run per launch (one and two runs
# in flight) and groups of 2, 4, 8, 16, 32 runs per launch, the Tcl-free C++ planning loop (pack +
# runKernel per run, as a Tcl kernel's runSync; packing everything per run and keeping the
# packed cells: script_loop_*, script_loop_reuse_*), the CLI batch, with checks (run 0 of each batch
# equals the same run alone; GPU vs CPU absorbed fraction). Then the CLI batch
# (`fullmonte-run --batch-sources`) with FM_BATCH_RUNS_PER_LAUNCH = 8 (the C++ API covers 2-32),
# each checked run by run against the one-run-per-launch batch (same packets: equal absorbed
# fractions to rounding).
# Groups of 8 run twice each with the group kernel compiled for 3 blocks per SM (the default) and
# for 4 (FM_CUDA_GROUP_BLOCKS_PER_SM=4: labels 8b4, 8b4r2), interleaved, and
# once each with one group in flight (8s1, 8b4s1), which prints the group kernels' own rate
# (*_in_kernel_fraction_of_kernel_only, from the runs' kernel_seconds) beside the batch's,
# telling a loss inside the kernel from one between launches.
# With several GPUs: planning_loop.sh's 1-vs-all batches (the 10-run batch with --devices all
# now brings up only the devices its work is worth) and, where the Digimouse data is present,
# bench/multi_gpu.sh (fixed cost per extra GPU, 10-run batch on 1 vs N, 1e9 Digimouse scaling).
# Prints "key value" lines (also OUT/planning_all.txt); exit 1 when a test or check fails.
# Usage (GPU machine, repo root): bench/planning_all.sh [DATA] OUT
#   DATA (default $FM_DEVICE_DATA or .device-data) holds timos/cube_5med and, for the multi-GPU
#   part, dm_morton.mesh.gz, digimouse.opt, digimouse.source.
#   Env: RUNS (500 on one GPU, 300 on several: fits the call), PACKETS (1e6), LONG (1e8),
#   FM_BUILD_DIR (build-plan), JOBS (16), DM_LONG (1e9; the Digimouse run on several GPUs).
# Expected time on one H100: build ~3 min, planning_loop ~2 min at 500 runs, CLI groups ~50 s:
# about 6-7 minutes. On 2 x H100 add ~3 minutes for multi_gpu.sh (RUNS 300).
set -uo pipefail
if [ $# -ge 2 ]; then data=$1; out=$2; else data=${FM_DEVICE_DATA:-.device-data}; out=${1:?OUT dir}; fi
command -v nvcc >/dev/null || [ -n "${CUDACXX:-}" ] || export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$out"
res=$out/planning_all.txt
: > "$res"
say() { echo "$@" | tee -a "$res"; }
fail=0
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "$ngpu" -ge 1 ] || { say "planning_all: no GPU"; exit 1; }
runs=${RUNS:-$([ "$ngpu" -gt 1 ] && echo 300 || echo 500)}
packets=${PACKETS:-1000000}
build=${FM_BUILD_DIR:-build-plan}
export FM_BUILD_DIR=$build
say "planning_all: $ngpu GPU(s), $runs runs of $packets packets (fewer than 1,000 to fit one device call)"
t0=$(date +%s)

RUNS=$runs PACKETS=$packets bench/planning_loop.sh "$data" "$out/loop" || fail=1
tee -a "$res" < "$out/loop/planning_loop.txt" > /dev/null
say "planning_loop_wall_s $(( $(date +%s) - t0 ))"

# The CLI batch in groups of runs per launch, against its one-run-per-launch batch.
bin=$build/bin
b="$data/timos/cube_5med/cube_5med"
krate=$(awk '$1 == "cli_kernel_only_packets_per_s" { print $2 }' "$out/loop/planning_loop.txt")
base=$out/loop/batch_0_one_run_per_launch/summary.json
py=$(command -v python3 || command -v /usr/bin/python3)
# Labels: N runs per launch; "b4": the group kernel compiled for 4 blocks per SM, to A/B against
# the default (3) in the same call; "s1": one group in flight (its runs' kernel seconds are then
# the group kernels' own time); "r2": a second round.
for gl in 8 8b4 8s1 8b4s1 8b4r2 8r2; do
  if [ ! -f "$base" ] || [ -z "$krate" ]; then say "planning_all: no one-run-per-launch batch to compare with"; fail=1; break; fi
  g=${gl%%[brs]*}; gb=; gs=
  case $gl in *b4*) gb=4 ;; esac
  case $gl in *s1*) gs=1 ;; esac
  t1=$(date +%s.%N)
  if ! FM_BATCH_SLOTS_PER_DEVICE=$gs FM_CUDA_GROUP_BLOCKS_PER_SM=$gb FM_BATCH_RUNS_PER_LAUNCH=$g "$bin/fullmonte-run" --mesh "$b.mesh" --opt "$b.opt" --kernel cuda --devices 0 --quiet \
      --batch-sources "$out/loop/cands.source" --packets "$packets" --output "$out/cli_group$gl" > "$out/cli_group$gl.log" 2>&1; then
    say "cli_group${gl} FAIL"; tail -5 "$out/cli_group$gl.log"; fail=1; continue
  fi
  t2=$(date +%s.%N)
  "$py" - "$out/cli_group$gl/summary.json" "$base" "$krate" "$gl" "$t1" "$t2" <<'EOF' | tee -a "$res"
import json, sys
s = json.load(open(sys.argv[1])); one = json.load(open(sys.argv[2]))
krate, g, wall = float(sys.argv[3]), sys.argv[4], float(sys.argv[6]) - float(sys.argv[5])
print(f"cli_group{g}_runs_per_launch {s.get('runs_per_launch', '?')}")
print(f"cli_group{g}_process_wall_s {wall:.3f}")
print(f"cli_group{g}_seconds {s['seconds']:.4f}")
print(f"cli_group{g}_fraction_of_kernel_only {s['packets'] / s['seconds'] / krate:.4f}")
print(f"cli_group{g}_overhead_per_run_ms {1e3 * (s['seconds'] - s['packets'] / krate) / s['runs']:.3f}")
ks = sum(r.get('kernel_seconds', 0.0) for r in s['per_run'])
if ks > 0 and g.endswith('s1'):  # one group in flight: the group kernels' own rate
    print(f"cli_group{g}_in_kernel_fraction_of_kernel_only {s['packets'] / ks / krate:.4f}")
d = max(abs(x['ledger']['absorbed'] - y['ledger']['absorbed']) / max(y['ledger']['absorbed'], 1e-300)
        for x, y in zip(s['per_run'], one['per_run']))
ok = len(s['per_run']) == len(one['per_run']) and d < 1e-9
print(f"check_cli_group{g}_vs_one_run_per_launch_max_rel_absorbed_diff {d:.3g} {'ok' if ok else 'FAIL'}")
EOF
  grep -q "check_cli_group${gl}_vs.* ok$" "$res" || fail=1
done

# Several GPUs: bench/multi_gpu.sh on the clinical mesh (per-extra-GPU cost, 10-run batch on 1 vs
# N, 1e9 scaling), where its data is present.
if [ "$ngpu" -gt 1 ]; then
  if [ -f "$data/dm_morton.mesh.gz" ] && [ -f "$data/digimouse.opt" ] && [ -f "$data/digimouse.source" ]; then
    GPUS=$ngpu LONG=${DM_LONG:-1000000000} ROUNDS=1 FM_BUILD_DIR=$build FM_REUSE_BUILD=1 \
      bench/multi_gpu.sh "$data/dm_morton.mesh.gz" "$data/digimouse.opt" "$data/digimouse.source" "$out/multi" || fail=1
    tee -a "$res" < "$out/multi/multi_gpu.txt" > /dev/null
  else
    say "planning_all: no Digimouse data under $data: multi_gpu.sh skipped"
  fi
fi
say "planning_all_wall_s $(( $(date +%s) - t0 ))"
if [ "$fail" = 0 ]; then say "planning_all: all checks pass"; else say "planning_all: SOME CHECKS FAILED"; fi
exit $fail
