#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Installs what FullMonte needs to build and test on Debian 12 (apt, no recommends).
# Usage: scripts/install-deps.sh [core|full]   (default full: Tcl, VTK, MPI, test tools too)
set -euo pipefail
level=${1:-full}
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
pkgs=(build-essential cmake libboost-dev libboost-test-dev nlohmann-json3-dev)
if [ "$level" = full ]; then
  # libgl1-mesa-dri: the software OpenGL that Xvfb renders the VTK pictures with.
  pkgs+=(tcl tcl-dev tcllib swig libvtk9-dev xvfb xauth libgl1-mesa-dri libopenmpi-dev openmpi-bin libhdf5-dev)
  # The Python package (pybind11) and its tests: Debian's interpreter, numpy and pytest;
  # python3-build + python3-installer for the wheel route (pip install . / python3 -m build).
  pkgs+=(python3-dev pybind11-dev python3-numpy python3-pytest python3-build python3-installer)
  # The mesher (issue 23): CGAL's Mesh_3 (header-only, GMP/MPFR), NIfTI images, zlib for MetaImage.
  pkgs+=(libcgal-dev libgmp-dev libmpfr-dev libnifti2-dev zlib1g-dev)
  # clang + its runtime (libFuzzer, sanitizers): the fuzz targets (scripts/fuzz.sh).
  pkgs+=(clang libclang-rt-14-dev)
  # The planner (Planning/, fullmonte-plan): plan files, LP solvers, pictures.
  pkgs+=(nlohmann-json3-dev coinor-libclp-dev libglpk-dev libcairo2-dev pkg-config)
  # python3 + numpy: scripts/read_fluence_matrix.py and its test (run with /usr/bin/python3).
  pkgs+=(python3 python3-numpy)
  # strace: app_sources_read_once counts the files a batch opens.
  pkgs+=(strace)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
