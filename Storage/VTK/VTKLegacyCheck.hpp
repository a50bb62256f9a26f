// SPDX-License-Identifier: GPL-3.0-or-later
// Internal to Storage/VTK: a structural check of a legacy .vtk file's CELLS and CELL_TYPES
// sections, run before VTK reads it. VTK 9.1's reader for the pre-5.0 cell layout trusts the
// per-cell point counts and writes past its buffer when they disagree with the declared size
// (a heap overflow, then abort), so a malformed file must be rejected before VTK sees it.
#pragma once
#include <string>

namespace fm {
namespace vtkio {

// Throws FormatError("file: reason") when the cell sections are inconsistent. Files in the 5.x
// layout (OFFSETS/CONNECTIVITY, read safely by VTK) are left to the checks after reading.
void checkLegacyCells(const std::string& file);

}  // namespace vtkio
}  // namespace fm
