// SPDX-License-Identifier: GPL-3.0-or-later
// Mesh checks run on every TetraMesh construction (so on every load: TIM-OS, MMC, VTK, Tcl,
// CLI). Each defect is counted and shown with a few examples (ids, coordinates). Three kinds of
// severity (docs/MESH_CHECKS.md):
//   fatal   - the kernels cannot walk the mesh: degenerate tetras, duplicated tetras, faces
//             shared by more than two tetras. Always an error.
//   error   - the mesh runs but the physics is wrong: cracks (boundary faces lying on other
//             boundary faces: surfaces not joined, light leaks out) and folded tetras (two
//             neighbours on the same side of their shared face: overlapping volumes). An error
//             unless MeshCheckOptions::allowDefects, then a warning.
//   warning - coincident vertices, several connected components, region labels with no tetra.
// Tetras given with negative orientation are re-oriented silently (a file convention).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fm {

class TetraMesh;

struct MeshCheckOptions {
    bool allowDefects = false;  // physics-changing (not fatal) defects become warnings
    double tolerance = 0;       // coincidence distance (mesh units); 0: kRelativeTolerance x diagonal
    static constexpr double kRelativeTolerance = 1e-6;
};

struct MeshDefect {
    enum Severity { Warning, Error, Fatal };
    std::string kind;                   // e.g. "crack", "duplicated tetra"
    Severity severity = Warning;
    size_t count = 0;
    std::string what;                   // what the count counts and why it matters
    std::vector<std::string> examples;  // a few, with ids and coordinates
    std::string line() const;           // "kind: count what, e.g. ..."
};

struct MeshCheckReport {
    std::vector<MeshDefect> defects;
    size_t components = 0;  // connected components (through shared faces)
    double tolerance = 0;   // the coincidence distance used
    bool allowDefects = false;

    bool hasFatal() const;
    bool hasErrors() const;  // fatal or error
    // Errors (fatal and physics-changing) joined into one message with what to do.
    std::string errorText() const;
    // The lines a user must see when the mesh is used: warnings, and errors allowed through.
    std::vector<std::string> warnings() const;
    void add(MeshDefect d);
};

// The findings of a check run in chunks, joined in chunk order into d: the counts added, and
// the first examples kept (as the check run in one piece finds them).
void joinChunks(MeshDefect& d, std::vector<MeshDefect>& chunks);

// Checks on the raw tetra list, before faces exist: tetras listing the same four points.
void checkDuplicateTetras(const std::vector<std::array<uint32_t, 4>>& tetras,
                          const std::vector<std::array<double, 3>>& points, MeshCheckReport& rep);

// Checks on a built mesh: components, coincident vertices, cracks, folded tetras, empty regions.
void checkMeshStructure(const TetraMesh& mesh, MeshCheckReport& rep);

// "(x y z)" with 9 significant digits, as the findings show coordinates.
std::string pointText(const std::array<double, 3>& p);

// Coincidence distance for the mesh: the option, or kRelativeTolerance x bounding-box diagonal.
double meshTolerance(const std::vector<std::array<double, 3>>& points, const MeshCheckOptions& opt);

// Pairs (i, j), i < j, of points closer than tol among those with used[i] set (spatial hash:
// O(n) for well-spread points).
std::vector<std::pair<uint32_t, uint32_t>> coincidentPoints(const std::vector<std::array<double, 3>>& points,
                                                            const std::vector<char>& used, double tol);

}  // namespace fm
