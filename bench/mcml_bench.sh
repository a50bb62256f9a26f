#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Photons/s of MCML mode (fullmonte-mcml) on the seven-layer skin model at 600 nm
# (Meglinsky & Matcher, as in shared/data/mcml/skin7), grid dz 0.002 cm, dr 0.01 cm, 500x200x30.
#
# usage: bench/mcml_bench.sh [BUILD_DIR] [PHOTONS] [THREADS] [KERNEL] [REPEATS]
#   defaults: build 200000 2 cpu 3
# Prints each repeat's line from fullmonte-mcml, the median photons/s (wall clock) and the median
# photons per CPU-second (user + system time of the process), which is what one core delivers
# and stays meaningful when other jobs share the machine; the load average is printed too.
set -euo pipefail

build=${1:-build}
photons=${2:-200000}
threads=${3:-2}
kernel=${4:-cpu}
repeats=${5:-3}

exe=$(find "$build" -name fullmonte-mcml -type f -perm -u+x | head -n 1)
if [ -z "$exe" ]; then
  echo "mcml_bench: no fullmonte-mcml under '$build' (cmake --build $build --target fullmonte-mcml)" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/skin7.mci" <<MCI
1.0
1
skin7_bench.mco A
$photons
0.002 0.01
500 200 30
7
1.0
1.53 0.2  1000 0.9  0.002
1.34 0.15 400  0.85 0.008
1.4  0.7  300  0.8  0.01
1.39 1    350  0.9  0.008
1.4  0.7  200  0.76 0.162
1.39 1    350  0.95 0.02
1.44 0.3  150  0.8  0.59
1.0
MCI

echo "mcml_bench: $exe, $photons photons, $threads threads, kernel $kernel, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
rates=()
perCpu=()
TIMEFORMAT='%U %S'
for ((i = 1; i <= repeats; ++i)); do
  { cpu=$( { time "$exe" "$work/skin7.mci" $([ "$kernel" = cpu ] && echo --threads "$threads") --kernel "$kernel" --seed "$i" --quiet > "$work/out" ; } 2>&1 ); }
  head -n 1 "$work/out"
  rates+=("$(head -n 1 "$work/out" | sed -n 's/.*(\([0-9.]*\) photons\/s.*/\1/p')")
  perCpu+=("$(echo "$cpu" | awk -v n="$photons" '{print n / ($1 + $2)}')")
done
echo "mcml_bench: median $(printf '%s\n' "${rates[@]}" | median) photons/s wall clock ($threads threads)," \
     "$(printf '%s\n' "${perCpu[@]}" | median) photons per CPU-second, load $(cut -d' ' -f1-3 /proc/loadavg)"
