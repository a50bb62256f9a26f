#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Configures and builds FullMonte into ${FM_BUILD_DIR:-build}. Extra arguments go to cmake.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FM_BUILD_DIR:-$root/build}
jobs=${FM_JOBS:-$(nproc)}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" >"$build.configure.log" 2>&1 || {
  cat "$build.configure.log"; exit 1; }
grep "FullMonte:" "$build.configure.log" || true
cmake --build "$build" -j "$jobs"
