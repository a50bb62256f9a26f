#!/usr/bin/env bash
# Installs what FullMonte needs to build and test on Debian 12 (apt, no recommends).
# Usage: scripts/install-deps.sh [core|full]   (default full: Tcl, VTK, MPI, test tools too)
set -euo pipefail
level=${1:-full}
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
pkgs=(build-essential cmake libboost-dev libboost-test-dev)
if [ "$level" = full ]; then
  # libgl1-mesa-dri: the software OpenGL that Xvfb renders the VTK pictures with.
  pkgs+=(tcl tcl-dev tcllib swig libvtk9-dev xvfb xauth libgl1-mesa-dri libopenmpi-dev openmpi-bin libhdf5-dev)
  # The mesher (issue 23): CGAL's Mesh_3 (header-only, GMP/MPFR), NIfTI images, zlib for MetaImage.
  pkgs+=(libcgal-dev libgmp-dev libmpfr-dev libnifti2-dev zlib1g-dev)
  # clang + its runtime (libFuzzer, sanitizers): the fuzz targets (scripts/fuzz.sh).
  pkgs+=(clang libclang-rt-14-dev)
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
