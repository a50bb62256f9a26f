#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The main job: installs dependencies, builds, and runs Examples/quickstart.tcl (outputs in
# ./quickstart-out). Extra arguments are passed to the script.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh" full
mkdir -p "${FM_BUILD_DIR:-$root/build}"
"$root/scripts/build.sh"
# The fluence picture is rendered with OpenGL, which needs an X display: on a headless machine
# the script runs under xvfb-run (installed by install-deps.sh).
run=()
if [ -z "${DISPLAY:-}" ] && command -v xvfb-run >/dev/null; then run=(xvfb-run -a); fi
"${run[@]}" "${FM_BUILD_DIR:-$root/build}/bin/fullmonte" "$root/Examples/quickstart.tcl" "$@"
