#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A one-run .mci from the seven-layer skin file's third run with PHOTONS photons, writing NAME.mco.
# Usage: bench/skin_mci.sh SKIN.mci PHOTONS NAME > OUT.mci   (used by the GPU/MCML benchmarks)
set -euo pipefail
awk -v n="$2" -v name="$3" '
  /# number of runs/ && !hdr {print "1\t\t\t\t\t\t# number of runs"; hdr=1; next}
  /^### Specify data for run/ {r++}
  !hdr {print; next}
  r == 3 {
    if ($1 ~ /\.mco$/) {print name ".mco\tA"; next}
    if ($1 == "10000000") {print n; next}
    print
  }' "$1"
