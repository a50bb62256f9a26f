#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# MCML seven-layer skin on the GPU: 1e6 (vs CPU) and 1e8 photons, RAT and A_l against the
# CUDAMCML 1e8 reference. Usage: bench/gpu_mcml.sh DATA OUT BUILD_DIR
set -uo pipefail
data=$1; out=$2; build=$3
mkdir -p "$out/mcml"
skin="$data/mcml/skin7/7layerskin_600nm.mci"
mk() {  # photons name -> a one-run .mci from the skin file's third run
  "$(dirname "$0")/skin_mci.sh" "$skin" "$1" "$2" > "$out/mcml/$2.mci"
}
mk 1000000 skin_1e6; mk 100000000 skin_1e8
grep -E 'runs|mco|photons|^[0-9]{6,}' "$out/mcml/skin_1e8.mci" | head -4
for k in cuda cpu; do
  /usr/bin/time -f "$k 1e6 wall %e s" "$build/bin/fullmonte-mcml" "$out/mcml/skin_1e6.mci" --kernel $k --quiet --output-dir "$out/mcml/$k" 2>&1 | tail -3
done
for s in 1 2; do
  /usr/bin/time -f "cuda 1e8 seed $s wall %e s" "$build/bin/fullmonte-mcml" "$out/mcml/skin_1e8.mci" --kernel cuda --seed $s --quiet --output-dir "$out/mcml/cuda$s" 2>&1 | tail -3
done
for f in "$out"/mcml/*/*.mco "$data/mcml/skin7/sevenlayer_600nm_100M.mco"; do
  echo "$f: $(awk '/^RAT/{getline a; getline b; getline c; getline d; print a+0, b+0, c+0, d+0} /^A_l/{printf "A_l:"; for(i=0;i<7;i++){getline x; printf " %s", x+0}; print ""}' "$f" | tr '\n' ' ')"
done
if [ "${SANITIZE:-1}" = 1 ] && command -v compute-sanitizer >/dev/null; then
  mk 20000 skin_2e4   # the MCML kernel keeps its layer tallies in shared memory: check races too
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool --error-exitcode 3 "$build/bin/fullmonte-mcml" "$out/mcml/skin_2e4.mci" --kernel cuda \
      --quiet --output-dir "$out/mcml/san_$tool" > "$out/mcml/san_$tool.log" 2>&1
    echo "compute-sanitizer $tool (MCML, 2e4 photons): exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/mcml/san_$tool.log" | head -1)"
  done
fi
