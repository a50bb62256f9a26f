#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Runs interrupted by SIGINT or SIGTERM at random moments (issue 26): a long CPU run, a packet
# trapped under raised guards, a batch, fullmonte-mcml during its run and while it writes a
# large .mco, an MPI run when mpirun is given, and GPU runs where a CUDA device is present.
# Each must stop within $FM_KILL_MS ms (default 1500; MPI: 1000 more, mpirun's own teardown)
# with exit 130 (SIGINT) or 143 (SIGTERM) (an MPI launcher: any failure status), and its output
# folder, which holds a complete earlier run's outputs when the run starts, must never look like
# a complete run: no tallies, matrix or .mco, summary.json absent or "interrupted", no partial
# files. (A run stopped while it still reads its inputs has not touched its folder: the earlier
# run's outputs stay whole.) Also: a second run into a folder in use is refused.
# Usage: kill_test.sh fullmonte-run fullmonte-mcml [mpirun]
set -u
run=$1; mcml=$2; mpirun=${3:-}
limit=${FM_KILL_MS:-1500}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; for f in "$dir"/*.err; do echo "--- $f"; cat "$f"; done; exit 1; }
RANDOM=$(( $$ % 32768 ))
echo "kill_test: RANDOM seeded with $(( $$ % 32768 ))"

# A 10 mm cube of 6 tetras; tissue, a clear index-matched scatterer (a packet needs ~1e9
# scatterings to leave: trapped under raised guards), and 40 point sources for a batch.
printf '8\n6\n0 0 0\n10 0 0\n0 10 0\n10 10 0\n0 0 10\n10 0 10\n0 10 10\n10 10 10\n1 2 4 8 1\n1 2 6 8 1\n1 3 4 8 2\n1 3 7 8 2\n1 5 6 8 1\n1 5 7 8 2\n' > "$dir/m.mesh"
printf '1\n2\n0.05 5 0.8 1.4\n0.2 10 0.9 1.37\n1\n1.0\n' > "$dir/m.opt"
printf '1\n2\n0 10000 0 1.0\n0 10000 0 1.0\n1\n1.0\n' > "$dir/trap.opt"
printf '1\n1 4 5 6 1\n' > "$dir/m.source"
{ echo 40; for i in $(seq 1 40); do echo "1 $((i % 9 + 1)) 5 5 1"; done; } > "$dir/many.source"
mci() {  # mci FILE OUT.mco PHOTONS NZ NR NA
  printf '1.0\n1\n%s A\n%s\n0.001 0.001\n%s %s %s\n1\n1.0\n1.37 1 100 0.9 0.1\n1.0\n' "$2" "$3" "$4" "$5" "$6" > "$1"
}
mci "$dir/long.mci" run.mco 1000000000 10 10 5
mci "$dir/big.mci" big.mco 1 1000 10000 2  # 2e7 values: a ~130 MB .mco, written in ~0.3 s

run_args=(--mesh "$dir/m.mesh" --threads 2 --quiet)
# A complete earlier run in $1 (its outputs must not survive an interrupted run into $1).
complete_run() { "$run" "${run_args[@]}" --opt "$dir/m.opt" --source "$dir/m.source" --packets 2000 --output "$1" > /dev/null 2>&1 || fail "setup run into $1"; }

# Folder $1 must not look like a complete run.
check_folder() {
  local d=$1 name=$2
  for f in volume_energy.txt fluence.txt surface_exit.txt fluence_matrix.fmm fluence_matrix.h5 run.mco big.mco; do
    [ ! -e "$d/$f" ] || fail "$name: $f left in the output folder"
  done
  if [ -e "$d/summary.json" ]; then
    grep -q '"status": "interrupted"' "$d/summary.json" || fail "$name: summary.json not marked interrupted"
  fi
  local left
  if [ "${WATCHDOG:-0}" = 1 ]; then  # ended by the watchdog: the staging folder may stay
    left=$(find "$d" -name '*.partial' -not -path '*/.fullmonte-staging-*/*')
  else
    left=$(find "$d" -name '*.partial' -o -name '.fullmonte-staging-*')
  fi
  [ -z "$left" ] || fail "$name: left behind: $left"
}

# interrupt NAME FOLDER WAIT_FOR DELAY_MS_MAX COMMAND...: starts COMMAND, waits until WAIT_FOR
# (a shell test: the run has taken its folder, or has started writing) holds, then a random
# 0..DELAY_MS_MAX ms, sends SIGINT or SIGTERM at random and
# checks the stop time, the exit status and the folder.
interrupt() {
  local name=$1 out=$2 ready=$3 delay=$4; shift 4
  "$@" > "$dir/$name.out" 2> "$dir/$name.err" &
  local pid=$! waited=0
  until eval "$ready"; do
    sleep 0.02; waited=$((waited + 1))
    [ $waited -lt 1500 ] || fail "$name: never became ready ($ready)"
    kill -0 $pid 2> /dev/null || fail "$name: ended before the signal (exit $(wait $pid; echo $?))"
  done
  local ms=$((RANDOM % (delay + 1)))
  sleep "$(printf '0.%03d' "$ms")"
  local sig=INT want=130
  if [ $((RANDOM % 2)) = 1 ]; then sig=TERM; want=143; fi
  kill -0 $pid 2> /dev/null || fail "$name: ended before the signal (exit $(wait $pid; echo $?))"
  local t0; t0=$(date +%s%N)
  kill -$sig $pid
  wait $pid; local rc=$?
  local took=$((($(date +%s%N) - t0) / 1000000))
  echo "$name: SIG$sig after ${ms} ms more: exit $rc in $took ms"
  if [ "${MPI_RUN:-0}" = 1 ]; then
    [ $rc -ne 0 ] || fail "$name: exit 0 after SIG$sig"
  else
    [ $rc = $want ] || fail "$name: exit $rc after SIG$sig, want $want"
  fi
  local max=$limit
  [ "${MPI_RUN:-0}" = 1 ] && max=$((limit + 1000))  # mpirun's own teardown takes ~1 s
  [ $took -le "$max" ] || fail "$name: took $took ms to stop (limit $max)"
  check_folder "$out" "$name"
}

# 1. A long CPU run, anywhere in its first second.
complete_run "$dir/o1"
interrupt cpu_run "$dir/o1" '[ -n "$(find "$dir/o1" -maxdepth 1 -name ".fullmonte-staging-*" 2> /dev/null)" ]' 1000 \
  "$run" "${run_args[@]}" --opt "$dir/m.opt" --source "$dir/m.source" --packets 1e12 --output "$dir/o1"
grep -q '"status": "interrupted"' "$dir/o1/summary.json" || fail "cpu_run: no interrupted summary.json"

# 2. Packets trapped under raised guards (each would take minutes).
complete_run "$dir/o2"
interrupt trapped "$dir/o2" '[ -n "$(find "$dir/o2" -maxdepth 1 -name ".fullmonte-staging-*" 2> /dev/null)" ]' 800 \
  "$run" "${run_args[@]}" --opt "$dir/trap.opt" --source "$dir/m.source" --packets 100 \
  --max-steps 4000000000 --max-hits 4000000000 --output "$dir/o2"

# 3. A batch of 40 runs, stopped during one of them.
complete_run "$dir/o3"
interrupt batch "$dir/o3" '[ -n "$(find "$dir/o3" -maxdepth 1 -name ".fullmonte-staging-*" 2> /dev/null)" ]' 1000 \
  "$run" "${run_args[@]}" --opt "$dir/m.opt" --batch-sources "$dir/many.source" --packets 200000 --output "$dir/o3"

# 4. fullmonte-mcml during its photons (an earlier .mco of the same name must not survive).
mkdir -p "$dir/o4"; echo old > "$dir/o4/run.mco"
interrupt mcml_run "$dir/o4" '[ -n "$(find "$dir/o4" -maxdepth 1 -name ".fullmonte-staging-*" 2> /dev/null)" ]' 1000 "$mcml" "$dir/long.mci" --threads 2 --quiet --output-dir "$dir/o4"

# 5. fullmonte-mcml while it writes a large .mco: signalled once the file is being written, within
# a third of the time the writing takes on a quiet machine (it only gets slower under load).
mkdir -p "$dir/o5"; echo old > "$dir/o5/big.mco"
interrupt mco_write "$dir/o5" '[ -n "$(find "$dir/o5" -name "*.partial" -size +1k 2> /dev/null)" ]' 100 \
  "$mcml" "$dir/big.mci" --threads 1 --quiet --output-dir "$dir/o5"

# 6. Two runs into one folder: the second is refused at once and the first completes.
"$run" "${run_args[@]}" --opt "$dir/m.opt" --source "$dir/m.source" --packets 1e12 --output "$dir/o6" \
  > /dev/null 2> "$dir/first.err" &
first=$!
until [ -e "$dir/o6" ]; do sleep 0.02; done
sleep 0.2
"$run" "${run_args[@]}" --opt "$dir/m.opt" --source "$dir/m.source" --packets 1000 --output "$dir/o6" \
  > /dev/null 2> "$dir/second.err"
rc=$?
[ $rc = 1 ] || fail "a second run into a folder in use: exit $rc, want 1"
grep -q "another FullMonte run is writing into this output folder" "$dir/second.err" || fail "second run: no clear error"
kill -INT $first; wait $first
check_folder "$dir/o6" concurrent
# The same for fullmonte-mcml.
"$mcml" "$dir/long.mci" --threads 1 --quiet --output-dir "$dir/o9" > /dev/null 2> "$dir/first.err" &
first=$!
until [ -n "$(find "$dir/o9" -maxdepth 1 -name '.fullmonte-staging-*' 2> /dev/null)" ]; do sleep 0.02; done
"$mcml" "$dir/long.mci" --threads 1 --quiet --output-dir "$dir/o9" > /dev/null 2> "$dir/second.err"
rc=$?
[ $rc = 1 ] || fail "a second fullmonte-mcml into a folder in use: exit $rc, want 1"
grep -q "another FullMonte run is writing into this output folder" "$dir/second.err" || fail "second mcml: no clear error"
kill -TERM $first; wait $first
[ $? = 143 ] || fail "first mcml: exit status after SIGTERM"
check_folder "$dir/o9" concurrent_mcml

# 7. MPI: signals go to the launcher, which passes them on to the ranks.
if [ -n "$mpirun" ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  mpi=("$mpirun" -n 2)
  "$mpirun" --oversubscribe -n 1 true > /dev/null 2>&1 && mpi=("$mpirun" --oversubscribe -n 2)
  complete_run "$dir/o7"
  MPI_RUN=1 interrupt mpi_run "$dir/o7" '[ -n "$(find "$dir/o7" -maxdepth 1 -name ".fullmonte-staging-*" 2> /dev/null)" ]' 500 \
    "${mpi[@]}" "$run" "${run_args[@]}" --threads 1 --opt "$dir/m.opt" --source "$dir/m.source" \
    --packets 1e12 --output "$dir/o7"
fi
# 8. GPU, where a CUDA device is present: a long run, and packets trapped in a kernel that only
# the watchdog can end (its staging folder stays, and the next run into the folder removes it).
if "$run" "${run_args[@]}" --kernel cuda --opt "$dir/m.opt" --source "$dir/m.source" --packets 1000 \
  --output "$dir/probe" > /dev/null 2>&1; then
  complete_run "$dir/o8"
  interrupt cuda_run "$dir/o8" '[ -n "$(find "$dir/o8" -maxdepth 1 -name ".fullmonte-staging-*" 2> /dev/null)" ]' 1000 \
    "$run" "${run_args[@]}" --kernel cuda --opt "$dir/m.opt" --source "$dir/m.source" --packets 1e12 --output "$dir/o8"
  WATCHDOG=1 interrupt cuda_trapped "$dir/o8" '[ -n "$(find "$dir/o8" -maxdepth 1 -name ".fullmonte-staging-*" 2> /dev/null)" ]' 500 \
    "$run" "${run_args[@]}" --kernel cuda --opt "$dir/trap.opt" --source "$dir/m.source" --packets 100 \
    --max-steps 4000000000 --max-hits 4000000000 --output "$dir/o8"
  complete_run "$dir/o8"
  [ -z "$(find "$dir/o8" -name '.fullmonte-staging-*')" ] || fail "a stale staging folder survived the next run"
else
  echo "kill_test: GPU cases SKIP (no CUDA device, or a build without CUDA)"
fi
echo "kill_test: ok"
