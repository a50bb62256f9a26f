#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Every bad input to fullmonte-run must end with exit status 1 and one message naming the file
# and line, or the parameter - never a crash, a hang or an exception escaping main.
# Usage: bad_inputs.sh path/to/fullmonte-run
set -u
exe=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$(dirname "$0")/model.sh"
write_model "$dir"
m=(--mesh "$dir/m.mesh" --opt "$dir/m.opt" --source "$dir/m.source" --output "$dir/out" --quiet)
failures=0

# expect_fail NAME NEEDLE ARGS...: exit 1, stderr holds NEEDLE, no outputs written.
expect_fail() {
  local name=$1 needle=$2
  shift 2
  rm -rf "$dir/out"
  timeout 60 "$exe" "$@" >"$dir/stdout" 2>"$dir/stderr"
  local rc=$?
  local msg
  msg=$(cat "$dir/stderr")
  if [ "$rc" != 1 ] || ! grep -qF -- "$needle" "$dir/stderr"; then
    echo "FAIL $name: exit $rc (want 1), message: $msg (want it to contain '$needle')"
    failures=$((failures + 1))
  elif [ -e "$dir/out/volume_energy.txt" ] || [ -e "$dir/out/summary.json" ]; then
    echo "FAIL $name: outputs written despite the error"
    failures=$((failures + 1))
  else
    echo "ok   $name: $msg"
  fi
}

printf '\x7fELF\x02\x01\x00\x00garbage\x00\xff' >"$dir/garbage.mesh"
printf '4\n1\n0 0 0\n1 0 0\n0 1 0\n' >"$dir/truncated.mesh"
printf '4\n1\n0 0 0\n1 0 0\n2 0 0\n0 0 1\n1 2 3 4 1\n' >"$dir/degenerate.mesh"
printf '1\n1\n0.1 -10 0.9 1.4\n1\n1.0\n' >"$dir/negative.opt"
printf '1\n1 5 5 5 1000\n' >"$dir/outside.source"
: >"$dir/empty.opt"
printf '5\n2\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n1 1 1\n1 2 3 4 1\n2 3 4 5 2\n9\n' >"$dir/extra.mesh"
printf '4\n1\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n1 2 0 4 1\n' >"$dir/index0.mesh"
printf '4\n1\n0 0 0\n1 0 0\n0 inf 0\n0 0 1\n1 2 3 4 1\n' >"$dir/inf.mesh"
printf '5\n3\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n0 0 -1\n1 2 3 4 1\n1 2 3 5 1\n2 1 3 4 1\n' >"$dir/shared3.mesh"
printf '1\n1\n0.1 10 0.9 1.4\n1\n1.0\n' >"$dir/one.opt"
printf '1\n2\n0.1 10 1.5 1.4\n0.1 10 0.9 1.4\n1\n1.0\n' >"$dir/g1.opt"
printf '1\n2\n0.1 10 0.9 1.4\n0.1 10 0.9 0\n1\n1.0\n' >"$dir/n0.opt"

expect_fail "missing file" "$dir/nope.mesh: cannot open" --mesh "$dir/nope.mesh" --opt "$dir/m.opt" --source "$dir/m.source" --output "$dir/out"
expect_fail "binary garbage" "$dir/garbage.mesh:1:" --mesh "$dir/garbage.mesh" --opt "$dir/m.opt" --source "$dir/m.source" --output "$dir/out"
expect_fail "truncated mesh" "$dir/truncated.mesh:6: unexpected end of file" --mesh "$dir/truncated.mesh" --opt "$dir/m.opt" --source "$dir/m.source" --output "$dir/out"
expect_fail "degenerate tetra" "tetra 1 is degenerate" --mesh "$dir/degenerate.mesh" --opt "$dir/m.opt" --source "$dir/m.source" --output "$dir/out"
expect_fail "empty --output" "--output needs a value (it was given an empty one)" --mesh "$dir/m.mesh" --opt "$dir/m.opt" --source "$dir/m.source" --output ""
expect_fail "empty opt" "$dir/empty.opt:1: unexpected end of file" --mesh "$dir/m.mesh" --opt "$dir/empty.opt" --source "$dir/m.source" --output "$dir/out"
expect_fail "negative mu_s" "$dir/negative.opt:3: material 1: mu_s must be >= 0" --mesh "$dir/m.mesh" --opt "$dir/negative.opt" --source "$dir/m.source" --output "$dir/out"
expect_fail "extra data (counts disagree)" "$dir/extra.mesh:10: unexpected extra data" --mesh "$dir/extra.mesh" --opt "$dir/m.opt" --source "$dir/m.source" --output "$dir/out"
expect_fail "point index 0" "$dir/index0.mesh:7: tetrahedron 1 refers to point 0" --mesh "$dir/index0.mesh" --opt "$dir/m.opt" --source "$dir/m.source" --output "$dir/out"
expect_fail "inf coordinate" "$dir/inf.mesh:5: coordinate y of point 3 is not finite" --mesh "$dir/inf.mesh" --opt "$dir/m.opt" --source "$dir/m.source" --output "$dir/out"
expect_fail "face shared by three tetras" "is shared by 3 tetras" --mesh "$dir/shared3.mesh" --opt "$dir/m.opt" --source "$dir/m.source" --output "$dir/out"
expect_fail "region without material" "$dir/one.opt, $dir/m.source: region 2 has no material" --mesh "$dir/m.mesh" --opt "$dir/one.opt" --source "$dir/m.source" --output "$dir/out"
expect_fail "|g| > 1" "$dir/g1.opt:3: material 1: anisotropy g must satisfy |g| < 1" --mesh "$dir/m.mesh" --opt "$dir/g1.opt" --source "$dir/m.source" --output "$dir/out"
expect_fail "n <= 0" "$dir/n0.opt:4: material 2: refractive index must be > 0" --mesh "$dir/m.mesh" --opt "$dir/n0.opt" --source "$dir/m.source" --output "$dir/out"
expect_fail "source outside the mesh" "$dir/outside.source: Point source: position (5 5 5) is outside the mesh" --mesh "$dir/m.mesh" --opt "$dir/m.opt" --source "$dir/outside.source" --output "$dir/out"
expect_fail "zero packets" "packets must be at least 1" "${m[@]}" --packets 0
expect_fail "packets not a number" "--packets: 'lots' is not a whole number" "${m[@]}" --packets lots
expect_fail "packets beyond 2^64" "--packets: '1e20' is not a whole number in [0, 2^64-1]" "${m[@]}" --packets 1e20
expect_fail "threads 0" "--threads must be at least 1" "${m[@]}" --threads 0
expect_fail "threads negative" "--threads: '-2' is not a whole number" "${m[@]}" --threads -2
# Integers are parsed as integers (issue 26): nothing is rounded through double.
expect_fail "packets 2^53+1" "--packets = 9007199254740993 is larger than 9007199254740991" "${m[@]}" --packets 9007199254740993
# One limit on a run's packets from every front end (fm::kMaxPackets, as Tcl and Python): 2^53-1.
expect_fail "packets 2^53" "--packets = 9007199254740992 is larger than 9007199254740991" "${m[@]}" --packets 9007199254740992
expect_fail "packets fractional" "--packets: '1000.5' is not a whole number" "${m[@]}" --packets 1000.5
expect_fail "packets negative" "--packets: '-1000' is not a whole number" "${m[@]}" --packets -1000
expect_fail "packets junk suffix" "--packets: '1000x' is not a whole number" "${m[@]}" --packets 1000x
expect_fail "seed 2^64" "--seed: '18446744073709551616' is not a whole number" "${m[@]}" --seed 18446744073709551616
expect_fail "seed negative" "--seed: '-1' is not a whole number" "${m[@]}" --seed -1
expect_fail "seed fractional" "--seed: '1.5' is not a whole number" "${m[@]}" --seed 1.5
expect_fail "max-steps beyond uint32" "--max-steps = 4294967296 is larger than" "${m[@]}" --max-steps 4294967296
# The CUDA kernel has no thread count: --threads with it is refused rather than ignored.
expect_fail "threads with cuda" "--threads sets the CPU kernel's threads; --kernel cuda runs on the GPU" "${m[@]}" --kernel cuda --threads 4
expect_fail "devices fractional" "--devices: '0.5' is not a whole number" "${m[@]}" --kernel cuda --devices 0,0.5
expect_fail "devices with cpu" "--devices needs --kernel cuda or hybrid" "${m[@]}" --kernel cpu --devices 0
expect_fail "unknown kernel" "unknown kernel 'gpu' (use cpu, cuda or hybrid)" "${m[@]}" --kernel gpu
expect_fail "batch with hybrid" "kernel hybrid runs one run at a time; a batch takes kernel cpu or cuda" \
  --mesh "$dir/m.mesh" --opt "$dir/m.opt" --batch-sources "$dir/m.source" --output "$dir/out" --quiet --kernel hybrid
# --kernel hybrid: without a GPU an error naming the kernel; with one, a run saying the CPU's share.
rm -rf "$dir/out"
if "$exe" "${m[@]}" --packets 1000 --kernel hybrid --threads 1 >"$dir/stdout" 2>"$dir/stderr"; then
  if grep -q '"cpu_packets": ' "$dir/out/summary.json"; then echo "ok   hybrid run"; else
    echo "FAIL hybrid run: no cpu_packets in summary.json"; failures=$((failures + 1)); fi
elif [ $? = 1 ] && grep -qF "kernel hybrid: " "$dir/stderr" && [ ! -e "$dir/out/summary.json" ]; then
  echo "ok   hybrid without a GPU: $(cat "$dir/stderr")"
else
  echo "FAIL hybrid: $(cat "$dir/stderr")"; failures=$((failures + 1))
fi
expect_fail "wmin out of range" "--wmin must be in [0, 1)" "${m[@]}" --wmin 1e300
expect_fail "prwin out of range" "--prwin must be in (0, 1]" "${m[@]}" --prwin 0
expect_fail "max-steps 0" "--max-steps and --max-hits must be at least 1" "${m[@]}" --max-steps 0
expect_fail "unknown flag" "unknown argument '--bogus'" "${m[@]}" --bogus
expect_fail "flag without value" "--seed needs a value" "${m[@]}" --seed
expect_fail "no output" "--output DIR is required" --mesh "$dir/m.mesh" --opt "$dir/m.opt" --source "$dir/m.source"
expect_fail "bad point list" "--point needs 3 comma-separated numbers" --mesh "$dir/m.mesh" --opt "$dir/m.opt" --point 1,2 --output "$dir/out"
# Contradicting options are refused, none silently wins (issue 26).
expect_fail "point and pencil" "--point and --pencil cannot be combined" --mesh "$dir/m.mesh" --opt "$dir/m.opt" --point 0.2,0.2,0.2 --pencil 0.2,0.2,0.2,1,0,0 --output "$dir/out"
expect_fail "source and point" "--source and --point cannot be combined" "${m[@]}" --point 0.2,0.2,0.2
expect_fail "TIM-OS and MMC inputs" "--mesh and --mmc-node cannot be combined" "${m[@]}" --mmc-node "$dir/m.mesh"
expect_fail "TIM-OS and MMC materials" "--mesh and --mmc-prop cannot be combined" "${m[@]}" --mmc-prop "$dir/m.opt"
expect_fail "opt and batch-opt" "--opt and --batch-opt cannot be combined" --mesh "$dir/m.mesh" --opt "$dir/m.opt" --batch-opt "$dir/m.opt" --batch-sources "$dir/m.source" --output "$dir/out"
expect_fail "exterior-n without MMC" "--exterior-n applies to MMC inputs" "${m[@]}" --exterior-n 1.3
# A folder where a file is expected says so.
expect_fail "mesh is a directory" "$dir is a directory, not a file" --mesh "$dir" --opt "$dir/m.opt" --source "$dir/m.source" --output "$dir/out"
expect_fail "opt is a directory" "$dir is a directory, not a file" --mesh "$dir/m.mesh" --opt "$dir" --source "$dir/m.source" --output "$dir/out"

# A good run still works (the harness itself is sound).
if "$exe" "${m[@]}" --packets 1000 --threads 2 >"$dir/stdout" 2>"$dir/stderr" && [ -s "$dir/out/volume_energy.txt" ]; then
  echo "ok   valid run"
else
  echo "FAIL valid run: $(cat "$dir/stderr")"
  failures=$((failures + 1))
fi
# The whole 64-bit seed range is accepted and kept exactly.
if "$exe" "${m[@]}" --packets 1e3 --threads 1 --seed 18446744073709551615 >"$dir/stdout" 2>"$dir/stderr" &&
   grep -q '"seed": 18446744073709551615,' "$dir/out/summary.json"; then
  echo "ok   seed 2^64-1 kept exactly"
else
  echo "FAIL seed 2^64-1: $(cat "$dir/stderr")"
  failures=$((failures + 1))
fi
echo "bad_inputs: $failures failure(s)"
[ "$failures" = 0 ]
