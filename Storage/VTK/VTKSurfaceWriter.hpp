// SPDX-License-Identifier: GPL-3.0-or-later
// Writes triangle surfaces of a TetraMesh as VTK polydata: the mesh boundary (default) or the
// boundary of one region, .vtp (XML) or .vtk (legacy binary) by extension. Triangles are
// oriented with normals leaving the mesh (or the region). Cell data: "FaceId" (the mesh face
// id), "Region" (region of the tetra inside) and one double array per addData call.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "Geometry/TetraMesh.hpp"

namespace fm {

class VTKSurfaceWriter {
public:
    VTKSurfaceWriter() = default;
    explicit VTKSurfaceWriter(const std::string& filename) : filename_(filename) {}

    void filename(const std::string& f) { filename_ = f; }
    const std::string& filename() const { return filename_; }
    // Kept by address: the mesh must outlive write().
    void mesh(const TetraMesh& m) { mesh_ = &m; }
    // 0 (default): the mesh boundary. r > 0: faces between region r and anything else.
    void region(uint32_t r) { region_ = r; }
    uint32_t region() const { return region_; }
    // Per-face values indexed by face id, index 0 the dummy (size faceCount()+1; exactly
    // faceCount() values are accepted too). Only the written faces' values are used, so the
    // same array serves the boundary and every region. Name carries the unit.
    void addData(const std::string& name, const std::vector<double>& values);
    void clearData() { data_.clear(); units_.clear(); }
    // The unit of array `name` (e.g. "J/mm^2"), written as "Units" field data ("name: unit").
    void addUnit(const std::string& name, const std::string& unit) { units_.push_back({name, unit}); }
    void addHeaderComment(const std::string& text) { comments_.push_back(text); }
    // Legacy .vtk file version: "5.1" (default, VTK 9) or "4.2" (VTK 8-era tools, ParaView < 5.9).
    // Anything else is a ParameterError. Ignored for XML files.
    void legacyVersion(const std::string& v);
    std::string legacyVersion() const { return legacy42_ ? "4.2" : "5.1"; }

    // Throws ParameterError (missing mesh/filename, bad sizes, region with no surface, unknown
    // extension) or Error (cannot write). Writes via "<file>.*.partial".
    void write() const;
    // Triangles the current settings produce (for checks before writing).
    size_t faceCount() const;

private:
    std::string filename_;
    const TetraMesh* mesh_ = nullptr;
    uint32_t region_ = 0;
    std::vector<std::pair<std::string, std::vector<double>>> data_;
    std::vector<std::string> comments_;
    std::vector<std::pair<std::string, std::string>> units_;
    bool legacy42_ = false;
};

}  // namespace fm
