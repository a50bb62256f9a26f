#!/usr/bin/env bash
# The test command: installs dependencies, configures, builds, runs every test under ctest.
# Then the hardening checks (issue 6): ASan+UBSan and TSan builds running part of the suite, and
# a short fuzz run of every reader (FM_FUZZ_SECONDS per target, default 20). They run as a second
# ctest, so the last summary printed is ctest's and covers them. FM_HARDENING=0 skips them.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FM_BUILD_DIR:-$root/build}
"$root/scripts/install-deps.sh" full
mkdir -p "$build"
"$root/scripts/build.sh"
cd "$build"
ctest --output-on-failure -j "${FM_JOBS:-$(nproc)}" --timeout 1200
[ "${FM_HARDENING:-1}" = 0 ] && exit 0

# Each step builds with FM_JOBS cores in its own folder beside the main build.
hard="$build/hardening"
mkdir -p "$hard"
cat >"$hard/CTestTestfile.cmake" <<EOF
# Written by scripts/run-tests.sh: the hardening steps as tests, run one at a time.
add_test(sanitize_address "$root/scripts/sanitize.sh" "address")
add_test(sanitize_thread "$root/scripts/sanitize.sh" "thread")
add_test(fuzz_short "$root/scripts/fuzz.sh" "${FM_FUZZ_SECONDS:-20}")
set_tests_properties(sanitize_address sanitize_thread fuzz_short PROPERTIES TIMEOUT 1500
  ENVIRONMENT "FM_SANITIZE_BUILD_DIR=$build-sanitize;FM_FUZZ_BUILD_DIR=$build-fuzz;FM_JOBS=${FM_JOBS:-$(nproc)}")
EOF
cd "$hard"
ctest -V --timeout 1500
