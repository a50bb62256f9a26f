#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# fullmonte-mcml refuses options it would otherwise ignore or misread, before any run starts:
# --threads with --kernel cuda (the GPU kernel has no thread count), an unknown kernel.
# Usage: mcml_options.sh path/to/fullmonte-mcml
set -u
exe=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0
printf '1.0\n1\nt.mco A\n100\n0.01 0.01\n5 5 5\n1\n1.0\n1.0 10 90 0.75 0.02\n1.0\n' >"$dir/t.mci"

expect_fail() {  # NAME NEEDLE ARGS...
  local name=$1 needle=$2 out rc
  shift 2
  out=$(timeout 60 "$exe" "$dir/t.mci" --output-dir "$dir/out" --quiet "$@" 2>&1)
  rc=$?
  if [ "$rc" != 1 ] || ! grep -qF -- "$needle" <<<"$out" || [ -e "$dir/out/t.mco" ]; then
    echo "FAIL $name: exit $rc, output: $out (want exit 1, '$needle' and no .mco)"
    failures=$((failures + 1))
  else
    echo "ok   $name: $out"
  fi
}
expect_fail "threads with cuda" "--threads sets the CPU kernel's threads; --kernel cuda runs on the GPU" --kernel cuda --threads 2
expect_fail "unknown kernel" "--kernel must be cpu or cuda, got 'gpu'" --kernel gpu

# The same file with --threads on the CPU kernel runs (the harness itself is sound).
if timeout 60 "$exe" "$dir/t.mci" --output-dir "$dir/out" --quiet --threads 1 >/dev/null 2>"$dir/err" &&
   [ -s "$dir/out/t.mco" ]; then
  echo "ok   cpu run with --threads"
else
  echo "FAIL cpu run with --threads: $(cat "$dir/err")"
  failures=$((failures + 1))
fi
echo "mcml_options: $failures failure(s)"
[ "$failures" = 0 ]
