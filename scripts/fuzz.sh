#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Builds the libFuzzer targets (Tests/Fuzz, clang++ with ASan+UBSan) and runs each for N seconds.
# Usage: scripts/fuzz.sh [seconds-per-target] [target ...]     (default 60 s, all targets)
# Env: FM_FUZZ_BUILD_DIR (default build-fuzz), FM_JOBS (default 2), FM_FUZZ_MAX_LEN (4096).
# Prints executions, rate and crashes per target; exits 1 if any target found something.
# Inputs that fail are saved under $FM_FUZZ_BUILD_DIR/artifacts: rerun one with
#   build-fuzz/fuzz_<target> build-fuzz/artifacts/<target>-crash-...
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
shift || true
build=${FM_FUZZ_BUILD_DIR:-$root/build-fuzz}
jobs=${FM_JOBS:-2}
all=(timos_mesh timos_opt timos_source mmc_node mmc_elem mmc_prop mmc_inp mmc_json mci mco mesh_build comsol binary_mesh detected time_gated gated_list)
targets=("${@:-${all[@]}}")

cxx=${FM_FUZZ_CXX:-$(command -v clang++ || command -v clang++-14 || true)}
if [ -z "$cxx" ]; then
  echo "fuzz: clang++ not found (scripts/install-deps.sh full installs clang and libFuzzer)" >&2
  exit 1
fi

mkdir -p "$build"
cmake -S "$root/Tests/Fuzz" -B "$build" -DCMAKE_CXX_COMPILER="$cxx" >"$build/configure.log" 2>&1 || {
  cat "$build/configure.log"; exit 1; }
cmake --build "$build" -j "$jobs" --target "${targets[@]/#/fuzz_}" >"$build/build.log" 2>&1 || {
  tail -50 "$build/build.log"; exit 1; }

# A finding must stop the run: UBSan aborts (built without recovery), ASan reports leaks too.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
mkdir -p "$build/artifacts" "$build/logs"
failed=0
printf '%-14s %12s %10s %8s %8s\n' target executions exec/s crashes corpus
for t in "${targets[@]}"; do
  work="$build/corpus/$t"     # grows across runs; the seeds in the repository stay untouched
  mkdir -p "$work"
  case $t in  # token dictionaries speed up reaching the deeper checks
    mci|mco) dict=(-dict="$root/Tests/Fuzz/mcml.dict") ;;
    mmc_json) dict=(-dict="$root/Tests/Fuzz/mmc_json.dict") ;;
    mesh_build|binary_mesh) dict=() ;;
    *) dict=(-dict="$root/Tests/Fuzz/numbers.dict") ;;
  esac
  log="$build/logs/$t.log"
  before=$(ls "$build/artifacts" | grep -c "^$t-" || true)
  rc=0
  # -timeout: an input running longer than 5 s is a hang. -rss_limit_mb: memory a count in a
  # file makes us reserve is a finding too.
  "$build/fuzz_$t" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 \
    -max_len="${FM_FUZZ_MAX_LEN:-4096}" -print_final_stats=1 "${dict[@]}" \
    -artifact_prefix="$build/artifacts/$t-" "$work" "$root/Tests/Fuzz/corpus/$t" >"$log" 2>&1 || rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  after=$(ls "$build/artifacts" | grep -c "^$t-" || true)
  crashes=$((after - before))
  if [ "$rc" != 0 ] && [ "$crashes" = 0 ]; then crashes=1; fi
  printf '%-14s %12s %10s %8s %8s\n' "$t" "${execs:-?}" "${rate:-?}" "$crashes" "$(ls "$work" | wc -l)"
  if [ "$crashes" != 0 ]; then
    failed=1
    grep -E 'ERROR|runtime error|invariant|deadly|Test unit written' "$log" | head -8 | sed 's/^/    /'
    echo "    full log: $log"
  fi
done
exit $failed
