#!/usr/bin/env bash
# The test command: installs dependencies, configures, builds, runs every test under ctest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh" full
mkdir -p "${FM_BUILD_DIR:-$root/build}"
"$root/scripts/build.sh"
cd "${FM_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j "${FM_JOBS:-$(nproc)}" --timeout 1200
