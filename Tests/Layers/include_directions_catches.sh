#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# scripts/check-includes.sh reports what it must: a scratch tree with allowed includes passes,
# and each planted violation (a lower layer including a higher one, Common/ including the
# project, Kernels/Core including Common/) fails with FILE:LINE naming the include.
# Usage: include_directions_catches.sh REPOSITORY_ROOT
set -uo pipefail
check="$1/scripts/check-includes.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# plant FILE INCLUDE...: writes FILE (under the scratch tree) including each header.
plant() {
  local f="$tmp/$1"; shift
  mkdir -p "$(dirname "$f")"
  { echo "// planted"; for inc in "$@"; do echo "#include \"$inc\""; done; } >"$f"
}

plant Common/Text.hpp Common/Errors.hpp
plant Kernels/Core/Packet.hpp Kernels/Core/Rng.hpp
plant Kernels/CPU/Run.cpp Common/Interrupt.hpp Kernels/Core/Packet.hpp
plant Geometry/Mesh.cpp Common/Errors.hpp Kernels/Core/Records.hpp Kernels/KernelInput.hpp
plant Storage/VTK/Traces.hpp Common/Errors.hpp Kernels/Core/TraceSet.hpp Geometry/TetraMesh.hpp
plant Apps/run.cpp Common/ProgressBar.hpp Kernels/CPU/TraceCpu.hpp Storage/TIMOS/TIMOS.hpp
plant Tcl/TclKernels.cpp Common/ProgressBar.hpp Kernels/Dispatch.hpp
if ! out=$(bash "$check" "$tmp" 2>&1); then
  echo "FAIL: a tree of allowed includes was refused:"; echo "$out"; fail=1
fi

# expect FILE LINE INCLUDE: the check, with FILE planted, fails and names FILE:LINE and INCLUDE.
expect() {
  local out rc
  out=$(bash "$check" "$tmp" 2>&1); rc=$?
  if [[ $rc == 0 ]] || ! grep -qF "$1:$2: includes $3," <<<"$out"; then
    echo "FAIL: $1 including $3 not reported (exit $rc):"; echo "$out"; fail=1
  else
    echo "ok: $1:$2 includes $3 is reported"
  fi
  rm -f "$tmp/$1"
}
plant Common/Bad.hpp Common/Errors.hpp Geometry/TetraMesh.hpp
expect Common/Bad.hpp 3 Geometry/TetraMesh.hpp
plant Kernels/Core/Bad.hpp Common/Errors.hpp
expect Kernels/Core/Bad.hpp 2 Common/Errors.hpp
plant Kernels/Bad.cpp Geometry/TetraMesh.hpp
expect Kernels/Bad.cpp 2 Geometry/TetraMesh.hpp
plant Storage/VTK/Bad.hpp Kernels/CPU/TraceCpu.hpp
expect Storage/VTK/Bad.hpp 2 Kernels/CPU/TraceCpu.hpp
plant Tcl/Bad.cpp Apps/AppMain.hpp
expect Tcl/Bad.cpp 2 Apps/AppMain.hpp
plant Geometry/Bad.cpp Storage/TIMOS/TIMOS.hpp
expect Geometry/Bad.cpp 2 Storage/TIMOS/TIMOS.hpp
exit $fail
