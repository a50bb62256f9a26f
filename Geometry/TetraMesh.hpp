// SPDX-License-Identifier: GPL-3.0-or-later
// Tetrahedral mesh: points, tetras and region labels in; faces, adjacency, volumes, areas,
// boundary and point location computed here (never trusted from files). Index 0 of points,
// tetras and faces is a dummy, as in FullMonte; region 0 is the exterior.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "Geometry/MeshCheck.hpp"

namespace fm {

using Point3 = std::array<double, 3>;
using TetraPoints = std::array<uint32_t, 4>;

// Largest coordinate magnitude a model may use (any unit). The kernels compute in single
// precision: below this, squared distances stay finite there (1e30 < 3.4e38).
constexpr double kMaxCoordinate = 1e15;

struct MeshFace {
    std::array<uint32_t, 3> points;  // ordered so the normal points out of `owner`
    uint32_t owner = 0;              // tetra on the side the normal leaves
    uint32_t other = 0;              // tetra on the other side, 0 on the boundary
    double area = 0;
    Point3 normal{};                 // unit, out of owner
};

class PointLocator;

// Seconds each step of a TetraMesh construction took (bench/mesh_load_bench): index and
// coordinate checks, duplicate tetras, orientation and volumes, faces and adjacency, the
// structure checks, the point locator.
struct MeshBuildTimes {
    double validate = 0, duplicates = 0, orient = 0, faces = 0, structure = 0, locator = 0;
    double total() const { return validate + duplicates + orient + faces + structure + locator; }
};

class TetraMesh {
public:
    TetraMesh();
    // points[0] and tetras[0] are dummies; regions.size() == tetras.size(), regions[0] = 0.
    // Re-orients inverted tetras and runs the mesh checks (Geometry/MeshCheck.hpp); throws
    // ModelError naming the tetras for bad indices, degenerate or duplicated tetras, faces
    // shared by more than two tetras, and (unless opt.allowDefects) cracks and folds.
    TetraMesh(std::vector<Point3> points, std::vector<TetraPoints> tetras,
              std::vector<uint32_t> regions, const MeshCheckOptions& opt = {});
    ~TetraMesh();
    TetraMesh(TetraMesh&&) noexcept;
    TetraMesh& operator=(TetraMesh&&) noexcept;

    size_t pointCount() const { return points_.size() - 1; }
    size_t tetraCount() const { return tetras_.size() - 1; }
    size_t faceCount() const { return faces_.size() - 1; }
    uint32_t regionCount() const { return regionCount_; }  // max region label + 1

    const Point3& point(uint32_t i) const { return points_[i]; }
    const TetraPoints& tetra(uint32_t t) const { return tetras_[t]; }
    uint32_t region(uint32_t t) const { return regions_[t]; }
    double volume(uint32_t t) const { return volumes_[t]; }
    const MeshFace& face(uint32_t f) const { return faces_[f]; }
    // Face of tetra t opposite its vertex i, with the side bit (31) set when t is not the owner.
    uint32_t tetraFace(uint32_t t, int i) const { return tetraFaces_[t][i]; }
    uint32_t neighbour(uint32_t t, int i) const;  // 0 on the boundary
    const std::vector<uint32_t>& boundaryFaces() const { return boundary_; }

    const std::vector<Point3>& points() const { return points_; }
    const std::vector<TetraPoints>& tetras() const { return tetras_; }
    const std::vector<uint32_t>& regions() const { return regions_; }

    // Faces between a tetra of region r and one of another region or the exterior, oriented
    // so the returned side is the one inside r: pairs (face id, tetra inside r).
    std::vector<std::pair<uint32_t, uint32_t>> regionBoundary(uint32_t r) const;
    double regionVolume(uint32_t r) const;
    std::array<Point3, 2> bounds() const;

    // Tetra containing p (0 if outside the mesh). Grid-accelerated: O(1) expected.
    uint32_t locate(const Point3& p) const;
    bool contains(uint32_t t, const Point3& p, double tol = 1e-9) const;

    std::string unitDimension = "mm";

    // What the checks found when the mesh was built (warnings, and errors allowed through).
    const MeshCheckReport& checkReport() const { return report_; }
    const MeshBuildTimes& buildTimes() const { return times_; }
    // A number no other mesh built in this process has (a mesh never changes once built; a move
    // takes its number along and leaves the moved-from mesh a new one, so a mesh object given
    // other contents never keeps its number): what the packed model's identity rests on
    // (KernelInput::cellsIdentity), so that a GPU keeping this mesh knows it without hashing it
    // and a loop of runs reuses its packed cells (Geometry/PackedModelCache.hpp).
    uint64_t identity() const { return identity_.value; }

private:
    void check();
    bool orient();  // false when degenerate tetras were found
    void buildFaces();
    void throwIfFatal() const;
    std::vector<Point3> points_;
    std::vector<TetraPoints> tetras_;
    std::vector<uint32_t> regions_;
    std::vector<double> volumes_;
    std::vector<MeshFace> faces_;
    std::vector<std::array<uint32_t, 4>> tetraFaces_;
    std::vector<uint32_t> boundary_;
    uint32_t regionCount_ = 1;
    std::unique_ptr<PointLocator> locator_;
    MeshCheckReport report_;
    MeshBuildTimes times_;
    struct Identity {
        uint64_t value;
        Identity();  // a new number
        Identity(Identity&& o) noexcept;
        Identity& operator=(Identity&& o) noexcept;
    };
    Identity identity_;
};

Point3 sub(const Point3& a, const Point3& b);
Point3 crossP(const Point3& a, const Point3& b);
double dotP(const Point3& a, const Point3& b);
double normP(const Point3& a);

}  // namespace fm
