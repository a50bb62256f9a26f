#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# fullmonte-mcml writes .mco files only inside the output folder (issue 26): an .mci naming an
# absolute path, a path with '..', or a path through a symbolic link leading out is refused before
# any run starts, as are two runs naming one file; nothing is written. Good names still work.
# Usage: mcml_paths.sh path/to/fullmonte-mcml
set -u
exe=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/in" "$dir/out/sub" "$dir/outside"
ln -s "$dir/outside" "$dir/out/link"
failures=0

# mci FILE NAME...: an .mci with one small run per output name.
mci() {
  local file=$1 name
  shift
  { echo "1.0"; echo "$#"; for name in "$@"; do
      printf '%s A\n100\n0.01 0.01\n5 5 5\n1\n1.0\n1.0 10 90 0.75 0.02\n1.0\n' "$name"
    done; } >"$file"
}

expect_fail() {  # NAME NEEDLE NAMES...
  local name=$1 needle=$2
  shift 2
  mci "$dir/in/t.mci" "$@"
  local out rc
  out=$(timeout 60 "$exe" "$dir/in/t.mci" --output-dir "$dir/out" --quiet 2>&1)
  rc=$?
  if [ "$rc" != 1 ] || ! grep -qF -- "$needle" <<<"$out"; then
    echo "FAIL $name: exit $rc, output: $out (want exit 1 and '$needle')"
    failures=$((failures + 1))
  elif [ -n "$(find "$dir/outside" "$dir/out" "$dir/in" -name '*.mco')" ]; then
    echo "FAIL $name: .mco written despite the error: $(find "$dir" -name '*.mco')"
    failures=$((failures + 1))
  else
    echo "ok   $name: $out"
  fi
  find "$dir" -name '*.mco' -delete
}

expect_fail "absolute path" "run 1: output name '$dir/outside/a.mco' is an absolute path" "$dir/outside/a.mco"
expect_fail "parent folder" "run 2: output name '../outside/a.mco' contains '..'" ok.mco ../outside/a.mco
expect_fail "'..' inside a path" "contains '..'" sub/../../a.mco
expect_fail "symbolic link out" "run 1: output name 'link/a.mco' leads outside the output folder" link/a.mco
expect_fail "same name twice" "run 3: output name 'a.mco' is also the output of run 1" a.mco b.mco a.mco
expect_fail "same file, two spellings" "run 2: output name './a.mco' is also the output of run 1" a.mco ./a.mco
expect_fail "name is a folder" "$dir/out/sub is a directory" sub

# Good names (a subfolder included) still write their files, inside the output folder.
mci "$dir/in/good.mci" a.mco sub/b.mco
if timeout 60 "$exe" "$dir/in/good.mci" --output-dir "$dir/out" --quiet >/dev/null 2>"$dir/err" &&
   [ -s "$dir/out/a.mco" ] && [ -s "$dir/out/sub/b.mco" ]; then
  echo "ok   good names"
else
  echo "FAIL good names: $(cat "$dir/err")"
  failures=$((failures + 1))
fi
echo "mcml_paths: $failures failure(s)"
[ "$failures" = 0 ]
