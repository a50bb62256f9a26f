// SPDX-License-Identifier: GPL-3.0-or-later
// Reads a tetrahedral mesh with region labels from a VTK unstructured grid: legacy .vtk or XML
// .vtu (format sniffed from the file's first bytes, not its name). Every cell must be a VTK_TETRA.
// VTK points 0..N-1 become mesh points 1..N (index 0 is TetraMesh's dummy).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "Geometry/TetraMesh.hpp"

namespace fm {

class VTKMeshReader {
public:
    VTKMeshReader();
    explicit VTKMeshReader(const std::string& filename);
    ~VTKMeshReader();

    void filename(const std::string& f) { filename_ = f; }
    const std::string& filename() const { return filename_; }
    // Cell array holding the region labels (integer or float with whole values). Empty (the
    // default) takes the first of regionArrayNames() present, compared ignoring case, spaces,
    // '_' and '-'; when none is present read() fails listing the arrays found. A name set here
    // must exist.
    void regionArrayName(const std::string& name) { regionArrayName_ = name; }
    const std::string& regionArrayName() const { return regionArrayName_; }
    // The names tried, in order: what FullMonte, MMC/iso2mesh, meshio (gmsh, medit, tetgen),
    // VTK's own filters and common tools call a cell label array.
    static const std::vector<std::string>& regionArrayNames();
    // Every tetra region 1, whatever the arrays (a mesh without labels, on purpose).
    void singleRegion(bool on) { singleRegion_ = on; }
    bool singleRegion() const { return singleRegion_; }
    // Mesh checks (Geometry/MeshCheck.hpp): allowDefects lets cracks and folds through as warnings.
    void checkOptions(const MeshCheckOptions& o) { check_ = o; }
    const MeshCheckOptions& checkOptions() const { return check_; }

    // Throws FormatError ("file: reason") for unreadable, malformed or non-tetra files and
    // ModelError ("file: mesh: ...") for a mesh that cannot be simulated.
    void read();

    // The mesh read (throws Error before a successful read()). takeMesh() moves it out.
    TetraMesh& mesh();
    TetraMesh takeMesh();
    // The region array actually used ("" with singleRegion).
    const std::string& regionArrayUsed() const { return regionArrayUsed_; }

    // Every cell array in the file, region array included, as doubles with a dummy 0 in front
    // (so values[t] belongs to tetra t). Multi-component arrays give component 0.
    std::vector<std::string> cellArrayNames() const;
    const std::vector<double>& cellData(const std::string& name) const;

private:
    std::string filename_, regionArrayName_, regionArrayUsed_;
    bool singleRegion_ = false;
    MeshCheckOptions check_;
    std::unique_ptr<TetraMesh> mesh_;
    std::vector<std::pair<std::string, std::vector<double>>> cellData_;
};

}  // namespace fm
