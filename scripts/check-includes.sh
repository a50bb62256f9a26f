#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Checks that no layer includes a higher one (docs/ARCHITECTURE.md, "Folders and what each may
# include"). Reads every `#include "Folder/..."` of the project's own headers in the library
# folders and prints each one that its rules do not allow as FILE:LINE: what, then exits 1.
# Usage: scripts/check-includes.sh [repository root]
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"

# What each folder may include besides itself (the most specific folder's rule applies).
# Prefixes are paths of included headers; a trailing / means a whole folder.
rule() {
  case $1 in
    Common/*)            echo "Common/" ;;
    Kernels/Core/*)      echo "Kernels/Core/" ;;
    Kernels/*)           echo "Kernels/ Common/" ;;
    Geometry/Meshing/*)  echo "Geometry/ Common/ Kernels/Core/ Kernels/KernelInput.hpp Kernels/Batch.hpp" ;;
    Geometry/*)          echo "Geometry/ Common/ Kernels/Core/ Kernels/KernelInput.hpp Kernels/Batch.hpp" ;;
    Storage/MCML/MCMLKernelRun.*) echo "Storage/ Common/ Geometry/ Kernels/Core/ Kernels/KernelInput.hpp Kernels/McmlKernel.hpp Kernels/BatchMeans.hpp Kernels/Dispatch.hpp Kernels/McmlRecords.hpp" ;;
    Storage/*)           echo "Storage/ Common/ Geometry/ Kernels/Core/ Kernels/KernelInput.hpp" ;;
    Planning/*)          echo "Planning/ Common/ Storage/ Geometry/ Kernels/" ;;
    Apps/*)              echo "Apps/ Common/ Planning/ Storage/ Geometry/ Kernels/" ;;
    Tcl/*)               echo "Tcl/ Common/ Planning/ Storage/ Geometry/ Kernels/" ;;
    Python/*)            echo "Python/ Common/ Planning/ Storage/ Geometry/ Kernels/" ;;
    *)                   echo "" ;;
  esac
}

# Includes that break the rules, each with the issue that removes it: none today. An exception
# that is no longer used is reported, so the list cannot go stale.
exceptions=(
)

top='Apps|Common|Geometry|Kernels|Planning|Python|Storage|Tcl'
bad=0
used=()
while IFS=: read -r file line text; do
  [[ $text =~ \"([^\"]+)\" ]] && inc=${BASH_REMATCH[1]}
  ok=0
  for allowed in $(rule "$file"); do
    case $allowed in
      */) [[ $inc == "$allowed"* ]] && ok=1 ;;
      *)  [[ $inc == "$allowed" ]] && ok=1 ;;
    esac
  done
  if (( !ok )); then
    for e in "${exceptions[@]}"; do
      if [[ "$file $inc" == "$e" ]]; then ok=1; used+=("$e"); fi
    done
  fi
  if (( !ok )); then
    echo "$file:$line: includes $inc, which its layer may not (docs/ARCHITECTURE.md)"
    bad=1
  fi
done < <(grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]+\"($top)/" \
           --include='*.hpp' --include='*.cpp' --include='*.h' --include='*.cu' --include='*.cuh' \
           Apps Common Geometry Kernels Storage Tcl $(for d in Planning Python; do [[ -d $d ]] && echo $d; done) || true)

for e in "${exceptions[@]}"; do
  found=0
  for u in "${used[@]+"${used[@]}"}"; do [[ $u == "$e" ]] && found=1; done
  (( found )) || echo "note: listed exception no longer needed: $e (remove it from $0)"
done
if (( bad )); then
  echo "include directions: FAILED"
  exit 1
fi
echo "include directions: OK (${#exceptions[@]} listed exceptions)"
