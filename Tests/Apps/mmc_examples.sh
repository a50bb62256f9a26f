#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# MMC's own examples, read from their JSON or .inp and data files in a checkout of MMC (never copied into
# this repository), give MMC's absorbed fractions within statistics (issue 25).
# The references are MMC v2025.10's own runs of these files (1e6 photons each, built and run
# outside this repository; docs/USER_GUIDE.md). FullMonte runs each example K times with other
# seeds; the per-packet spread estimated from those runs gives the standard error of their mean
# and of MMC's 1e6-photon value, and |mean - MMC| must stay within Student's t for K-1 degrees
# of freedom at the 0.1% level (two-sided).
# Usage: mmc_examples.sh path/to/fullmonte-run SOURCE_DIR   (FM_MMC_SRC: MMC checkout or bare
# repository; default SOURCE_DIR/../.mirror/fangq+mmc/repo). Exit 77 (skipped) without it.
set -u
run=$(realpath "$1") src=$2
repo=${FM_MMC_SRC:-$src/../.mirror/fangq+mmc/repo}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
if [ -d "$repo/examples/onecube" ]; then
  cp -r "$repo/examples" "$dir/"
elif [ -d "$repo" ] && git --git-dir="$repo" cat-file -e HEAD:examples/onecube/onecube.json 2>/dev/null; then
  git --git-dir="$repo" archive HEAD examples/onecube examples/validation examples/sphshells examples/reftest examples/skinvessel | tar x -C "$dir"
else
  echo "SKIP app_mmc_examples: no MMC checkout at $repo (set FM_MMC_SRC)"
  exit 77
fi
K=8 N=100000 T=5.41  # t(0.9995, 7)
failures=0
check() {  # folder input MMC_absorbed
  local vals=() k
  for k in $(seq 1 $K); do
    (cd "$dir/examples/$1" && timeout 120 "$run" --mmc "$2" --packets $N --seed $((100 + k)) --threads 2 --quiet \
      --output "$dir/out_$k" >/dev/null 2>"$dir/err") || { echo "FAIL $1/$2: $(cat "$dir/err")"; failures=$((failures + 1)); return; }
    vals+=("$(sed -n 's/.*"absorbed": \([0-9.eE+-]*\).*/\1/p' "$dir/out_$k/summary.json")")
  done
  awk -v ref="$3" -v K=$K -v N=$N -v T=$T -v name="$1/$2" -v vals="${vals[*]}" 'BEGIN {
    n = split(vals, v, " "); m = 0; for (i = 1; i <= n; ++i) m += v[i]; m /= n
    s2 = 0; for (i = 1; i <= n; ++i) s2 += (v[i] - m)^2; s2 /= (n - 1)
    perPacket = s2 * N                     # variance of one packet absorbed weight
    se = sqrt(s2 / n + perPacket / 1e6)    # our mean, and MMC reference of 1e6 photons
    t = (m - ref) / se
    printf "%-34s FullMonte %.5f (%d x %d)  MMC %.5f  t %+.2f\n", name, m, n, N, ref, t
    exit (t < -T || t > T) ? 1 : 0 }' || { echo "FAIL $1/$2: beyond t = $T"; failures=$((failures + 1)); }
}
check onecube onecube.json 0.039574
check onecube onecube_isotropic.json 0.050895
check validation cube2.json 0.272721
check sphshells dmmc_sphshells.json 0.516208
# MMC's legacy .inp sessions (mesh files by name, MMC's defaults: reflection on). References:
# MMC v2025.10 built for the CPU (--compute sse), mean of eight runs of 1e6 photons (seeds 11-18),
# whose standard error is below that of one 1e6-packet run of ours, as the test assumes.
check onecube onecube.inp 0.0396174
check reftest onecube.inp 0.0560704
check validation cube2.inp 0.1769482
# MMC's background elements (labels 0 and -1 between the disk and the skin) and its disk source:
# MMC v2025.10, SSE, the JSON as committed (dual-grid ray tracer), mean of eight runs of 1e6 photons
# (seeds 11-18).
check skinvessel dmmc_skinvessel.json 0.3987947
echo "mmc_examples: $failures failure(s)"
[ "$failures" = 0 ]
