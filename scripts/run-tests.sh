#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The test command: installs dependencies, configures, builds, runs every test under ctest.
# Then the hardening checks (issue 6): ASan+UBSan and TSan builds running part of the suite, and
# a short fuzz run of every reader (FM_FUZZ_SECONDS per target; by default 20, or 12 where the
# run so far leaves less room in CI's 30-minute budget). They run as a second
# ctest, so the last summary printed is ctest's and covers them. FM_HARDENING=0 skips them.
# The Docker image check (issue 7: docker/ci.sh, podman, image from this build) is the first
# of them while the run is young enough to stay inside CI's 30-minute budget (FM_DOCKER=0
# skips it; FM_DOCKER=1 forces it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FM_BUILD_DIR:-$root/build}
start=$SECONDS
"$root/scripts/install-deps.sh" full
mkdir -p "$build"
"$root/scripts/build.sh"
cd "$build"
ctest --output-on-failure -j "${FM_JOBS:-$(nproc)}" --timeout 1200
[ "${FM_HARDENING:-1}" = 0 ] && exit 0

# Each step builds with FM_JOBS cores in its own folder beside the main build.
hard="$build/hardening"
mkdir -p "$hard"
docker=${FM_DOCKER:-auto}
if [ "$docker" = auto ]; then
  # About 4-5 min from nothing on 2 cores (debootstrap base, image, two runs): only when the
  # run so far leaves room for it and the hardening steps (~12 min).
  if [ $((SECONDS - start)) -lt 720 ]; then docker=1; else docker=0; fi
fi
{
  echo "# Written by scripts/run-tests.sh: the hardening steps as tests, run one at a time."
  if [ "$docker" = 1 ]; then
    echo "add_test(docker_image \"$root/docker/ci.sh\")"
    echo "set_tests_properties(docker_image PROPERTIES TIMEOUT 1200 ENVIRONMENT \"FM_BUILD_DIR=$build\")"
  else
    echo "add_test(docker_image /bin/echo \"SKIP docker_image: FM_DOCKER=0 or not enough time left ($((SECONDS - start)) s used)\")"
    echo "set_tests_properties(docker_image PROPERTIES SKIP_REGULAR_EXPRESSION \"SKIP docker_image\")"
  fi
} >"$hard/CTestTestfile.cmake"
fuzz_seconds=${FM_FUZZ_SECONDS:-$([ $((SECONDS - start)) -lt 600 ] && echo 20 || echo 12)}
cat >>"$hard/CTestTestfile.cmake" <<EOF
add_test(sanitize_address "$root/scripts/sanitize.sh" "address")
add_test(sanitize_thread "$root/scripts/sanitize.sh" "thread")
add_test(fuzz_short "$root/scripts/fuzz.sh" "$fuzz_seconds")
set_tests_properties(sanitize_address sanitize_thread fuzz_short PROPERTIES TIMEOUT 1500
  ENVIRONMENT "FM_SANITIZE_BUILD_DIR=$build-sanitize;FM_FUZZ_BUILD_DIR=$build-fuzz;FM_JOBS=${FM_JOBS:-$(nproc)}")
EOF
cd "$hard"
ctest -V --timeout 1500
