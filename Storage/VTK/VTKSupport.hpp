// SPDX-License-Identifier: GPL-3.0-or-later
// Internal to Storage/VTK (never included by a public header): the VTK plumbing the readers,
// writers and the renderer share, so that VTK's headers stay out of what the Tcl wrapper sees.
#pragma once
#include <vtkSmartPointer.h>

#include <string>
#include <utility>
#include <vector>

#include "Geometry/TetraMesh.hpp"

class vtkDataArray;
class vtkDataObject;
class vtkDataSet;
class vtkDoubleArray;
class vtkPolyData;
class vtkUnstructuredGrid;

namespace fm {
namespace vtkio {

// Named per-element arrays as the public classes hold them (index 0 = dummy, as in TetraMesh).
using NamedData = std::vector<std::pair<std::string, std::vector<double>>>;

// VTK reports problems by printing to its global output window and carrying on with empty or
// partial data. While one of these is alive, that text is captured instead, so the caller can
// turn it into an exception naming the file. Not thread-safe (the output window is global).
class MessageCapture {
public:
    MessageCapture();
    ~MessageCapture();
    MessageCapture(const MessageCapture&) = delete;
    MessageCapture& operator=(const MessageCapture&) = delete;
    // First error (or, failing that, warning) text, trimmed; empty when VTK was silent.
    std::string firstProblem() const;
    bool hasError() const;
    bool hasProblem() const;  // an error or a warning

private:
    struct Impl;
    Impl* impl_;
};

std::string lowerExtension(const std::string& path);  // ".vtu", ".vtk" ... ("" if none)

// A double array named `name` holding values[first..]; NaN stays NaN.
vtkSmartPointer<vtkDoubleArray> makeArray(const std::string& name, const std::vector<double>& v,
                                          size_t first);
// Values of `a` (component 0) with a dummy 0 in front, to match the mesh's indexing.
std::vector<double> arrayValues(vtkDataArray* a);

// Points 1..N of the mesh as VTK points 0..N-1, tetras as VTK_TETRA, and cell data "Region".
vtkSmartPointer<vtkUnstructuredGrid> makeGrid(const TetraMesh& mesh);

// Triangles of the listed faces (flipped where asked, so normals leave the chosen side), over
// just the points they use; cell data "FaceId" and "Region" (region of the tetra `inside`).
struct FaceRef {
    uint32_t face;
    uint32_t inside;  // tetra on the side the triangle's normal leaves
};
vtkSmartPointer<vtkPolyData> makeFaces(const TetraMesh& mesh, const std::vector<FaceRef>& faces);
// The mesh boundary, or the boundary of region r (r > 0), as FaceRefs.
std::vector<FaceRef> surfaceFaces(const TetraMesh& mesh, uint32_t region);

// Attaches "Comment" string field data (ParaView shows it under Information).
void addComments(vtkDataObject* obj, const std::vector<std::string>& comments);
// Attaches "Units" string field data, one "<array name>: <unit>" entry per array that has a unit,
// so array names stay as the caller chose them (FullMonte's "Fluence") and the unit travels too.
void addUnits(vtkDataObject* obj, const std::vector<std::pair<std::string, std::string>>& units);

// File version of legacy .vtk output: 5.1 (VTK 9's, the default) or 4.2, which VTK 8-era tools
// and ParaView before 5.9 read (5.1 stores cells as offsets + connectivity, which they reject).
enum class LegacyVersion { V5_1, V4_2 };
// "4.2" or "5.1" (also "42", "51"); anything else is a ParameterError naming `what`.
LegacyVersion parseLegacyVersion(const std::string& text, const std::string& what);

// Writes through "<path>.*.partial" and renames, as AtomicFile does, so a failed write never
// leaves a file that looks complete. The writer follows the extension: .vtk (legacy, binary, in
// file version `legacy`), .vtu (grid) or .vtp (polydata) XML. `what` names the caller in errors.
void writeDataSet(vtkDataSet* data, const std::string& path, const std::string& what,
                  const std::string& legacyHeader, LegacyVersion legacy = LegacyVersion::V5_1);

// addData for the writers: rejects empty and reserved names, replaces data of the same name.
void addNamedData(NamedData& data, const std::string& what, const std::string& name,
                  const std::vector<double>& values, const std::vector<std::string>& reserved);

// Checks a per-element array's length: n+1 (with dummy 0) is the documented form, n is accepted
// too. Returns the index of the first real element (1 or 0); throws ParameterError otherwise.
size_t firstIndexFor(const std::string& what, const std::string& name, size_t size, size_t n,
                     const char* elements);

}  // namespace vtkio
}  // namespace fm
