// SPDX-License-Identifier: GPL-3.0-or-later
// Writes a TetraMesh as a VTK unstructured grid for ParaView: .vtu (XML, compressed) or .vtk
// (legacy, binary), chosen by the file extension. Points in mesh order (dummy 0 skipped), one
// VTK_TETRA per tetra, cell data "Region" (int) plus one double array per addData call.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "Geometry/TetraMesh.hpp"

namespace fm {

class VTKMeshWriter {
public:
    VTKMeshWriter() = default;
    explicit VTKMeshWriter(const std::string& filename) : filename_(filename) {}

    void filename(const std::string& f) { filename_ = f; }
    const std::string& filename() const { return filename_; }
    // Kept by address: the mesh must outlive write().
    void mesh(const TetraMesh& m) { mesh_ = &m; }
    // Per-tetra values indexed by tetra id, index 0 the dummy (size tetraCount()+1; a vector of
    // exactly tetraCount() values, without the dummy, is accepted too). The name is written as
    // given; its unit goes in the name ("Fluence (W/mm^2)") or in addUnit. NaN is written as NaN. A second
    // call with the same name replaces the data. Checked against the mesh in write().
    void addData(const std::string& name, const std::vector<double>& values);
    void clearData() { data_.clear(); units_.clear(); }
    // The unit of array `name` (e.g. "J/mm^2"), written as "Units" field data ("name: unit").
    void addUnit(const std::string& name, const std::string& unit) { units_.push_back({name, unit}); }
    // Free text stored as "Comment" field data (and, for .vtk, in the one-line legacy header).
    void addHeaderComment(const std::string& text) { comments_.push_back(text); }
    // Legacy .vtk file version: "5.1" (default, VTK 9) or "4.2" (VTK 8-era tools, ParaView < 5.9).
    // Anything else is a ParameterError. Ignored for XML files.
    void legacyVersion(const std::string& v);
    std::string legacyVersion() const { return legacy42_ ? "4.2" : "5.1"; }

    // Throws ParameterError for a missing mesh/filename, bad data sizes or an unknown extension,
    // Error when the file cannot be written. Writes via "<file>.*.partial", renamed when complete.
    void write() const;

private:
    std::string filename_;
    const TetraMesh* mesh_ = nullptr;
    std::vector<std::pair<std::string, std::vector<double>>> data_;
    std::vector<std::string> comments_;
    std::vector<std::pair<std::string, std::string>> units_;
    bool legacy42_ = false;
};

}  // namespace fm
