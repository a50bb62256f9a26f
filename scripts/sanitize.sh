#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Sanitizer builds of the core, CPU kernel, readers and their tests (no CUDA, Tcl, VTK, MPI),
# each in its own build directory, and the part of the test suite that exercises them.
#   address: ASan + UBSan (FM_SANITIZE=address): core, geometry, storage, MCML files, CPU kernel,
#            stuck packets, long runs, the fuzz corpus replayed, fullmonte-run's bad-input and
#            SIGINT tests, fullmonte-compare/-mcml bad inputs, summary.json, matrix readers
#   thread:  TSan (FM_SANITIZE=thread): the CPU kernel's threading (cpu_kernel suite: thread
#            counts, cancel) and fullmonte-run's SIGINT path
#   tcl:     ASan + UBSan over the Tcl package (Tcl on): the API fuzz test and the API, error,
#            source and batch tests (not run by default)
# Usage: scripts/sanitize.sh [address|thread|tcl ...]   (default: address thread)
# Env: FM_SANITIZE_BUILD_DIR (prefix, default build-sanitize: build-sanitize-address, ...),
#      FM_JOBS (default 2).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=${FM_SANITIZE_BUILD_DIR:-$root/build-sanitize}
jobs=${FM_JOBS:-2}
kinds=("${@:-address thread}")
read -r -a kinds <<<"${kinds[*]}"

# Reports must fail the test that triggers them.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# atexit_sleep_ms=0: TSan otherwise waits 1 s at exit while any thread lives (the apps' stop
# watchdog always does), which the interrupt tests would count as a slow stop.
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:atexit_sleep_ms=0}

configure_and_build() {  # kind build targets...
  local kind=$1 build=$2
  shift 2
  mkdir -p "$build"
  # -O1 -g1: line numbers in reports at a fraction of a debug build's compile time.
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
    -DFM_SANITIZE="$kind" -DFM_USE_CUDA=OFF -DFM_USE_TCL="${tcl:-OFF}" -DFM_USE_VTK=OFF -DFM_USE_MPI=OFF -DFM_USE_HDF5=OFF -DFM_USE_PYTHON=OFF \
    >"$build/configure.log" 2>&1 || { cat "$build/configure.log"; return 1; }
  cmake --build "$build" -j "$jobs" --target "$@" >"$build/build.log" 2>&1 || {
    grep -E "error|Error" "$build/build.log" | head -30; return 1; }
}

status=0
for kind in "${kinds[@]}"; do
  build="$prefix-$kind"
  start=$SECONDS
  echo "== sanitize $kind: building in $build"
  case $kind in
    address)
      configure_and_build address "$build" test_core test_geometry test_storage test_kernel_cpu \
        test_stuck test_long_run test_mcml_files fuzz_replay fullmonte-run test_batch test_fluence_matrix \
        fullmonte-compare fullmonte-mcml fmm_dump \
        || { status=1; continue; }
      (cd "$build" && ctest --output-on-failure -j "$jobs" --timeout 1200 \
        -R '^(test_core|test_geometry|test_storage|test_kernel_cpu|test_stuck|test_long_run|test_mcml_files|fuzz_corpus_replay|app_bad_inputs|app_interrupt|test_batch|test_fluence_matrix|app_batch_cli|app_compare|app_mcml_paths|app_summary_json|fluence_matrix_readers)$') || status=1
      ;;
    thread)
      configure_and_build thread "$build" test_kernel_cpu test_batch fullmonte-run fullmonte-mcml test_reliability \
        || { status=1; continue; }
      # The validation suite is single-threaded physics, slow under TSan: only the kernel's
      # threading tests (Boost.Test filter through the environment, for this one test).
      (cd "$build" && BOOST_TEST_RUN_FILTERS=cpu_kernel ctest --output-on-failure --timeout 1200 \
        -R '^test_kernel_cpu$' && ctest --output-on-failure --timeout 600 -R '^(app_interrupt|app_kill|test_reliability)$' &&
        BOOST_TEST_RUN_FILTERS=batch/three_sources_equal_three_single_runs:batch/cancel_stops_the_batch \
          ctest --output-on-failure --timeout 900 -R '^test_batch$') || status=1
      ;;
    tcl)
      # Leak checks off: the launcher exits without deleting its interpreter, so every object a
      # script left alive would be reported.
      tcl=ON configure_and_build address "$build" fullmonte-tclsh || { status=1; continue; }
      (cd "$build" && ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 ctest --output-on-failure -j "$jobs" \
        --timeout 1200 -R '^tcl_(fuzz_api|api|errors|surface_sources|batch)$') || status=1
      ;;
    *)
      echo "sanitize: unknown kind '$kind' (address, thread or tcl)" >&2
      exit 2
      ;;
  esac
  echo "== sanitize $kind: $((SECONDS - start)) s"
done
exit $status
