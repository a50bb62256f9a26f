#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The packaging route of docs/PYTHON.md: a wheel built from the checkout with Debian's
# python3-build (no network, reusing this build folder), installed into an empty prefix with
# python3-installer, imported from there and run.
set -euo pipefail
py=${1:?python} src=${2:?source dir} build=${3:?build dir}
if ! "$py" -c "import build, installer" 2>/dev/null; then
  echo "SKIP python_wheel: python3-build or python3-installer missing (scripts/install-deps.sh installs them)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$build/setuptools"
(cd "$src" && FM_BUILD_DIR="$build" "$py" -m build --wheel --no-isolation --outdir "$tmp/dist" . >"$tmp/build.log" 2>&1) ||
  { tail -30 "$tmp/build.log"; exit 1; }
"$py" -m installer --destdir "$tmp/root" --prefix /usr "$tmp"/dist/fullmonte-*.whl
site=$(find "$tmp/root" -type d -name fullmonte -path '*-packages/*' | head -1)
[ -n "$site" ] || { echo "no fullmonte package in the installed wheel"; exit 1; }
cd "$tmp"
PYTHONPATH=$(dirname "$site") "$py" - <<'PY'
import fullmonte as fm, os
assert "/root/" in fm.__file__ or os.sep + "root" + os.sep in fm.__file__, fm.__file__
m = fm.box_mesh((-1, -1, -1), (1, 1, 1), (2, 2, 2))
r = fm.run(m, fm.MaterialSet([fm.Material(0.1, 1, 0, 1)]), fm.PointSource((0, 0, 0)), packets=100)
assert r.packets == 100
print("wheel ok:", fm.__file__)
PY
