#!/usr/bin/env bash
# The main job: installs dependencies, builds, and runs Examples/quickstart.tcl (outputs in
# ./quickstart-out). Extra arguments are passed to the script.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh" full
mkdir -p "${FM_BUILD_DIR:-$root/build}"
"$root/scripts/build.sh"
"${FM_BUILD_DIR:-$root/build}/bin/fullmonte" "$root/Examples/quickstart.tcl" "$@"
