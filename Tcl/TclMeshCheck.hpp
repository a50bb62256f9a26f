// SPDX-License-Identifier: GPL-3.0-or-later
// Mesh checks and repair from Tcl (Geometry/MeshCheck.hpp, Geometry/MeshRepair.hpp), and the
// package's warning list: every warning a model raises (mesh checks on load, sources partly
// outside the mesh) is printed to stderr as "FullMonte warning: ..." and kept, so that scripts
// can query it with FullMonte_warnings (a Tcl list; ::FullMonte::warnings) and clear it.
#pragma once
#include <string>

#ifndef SWIG
#include <memory>
#include <vector>

#include "Geometry/MeshRepair.hpp"
#endif

class TetraMesh;

std::string FullMonte_warnings();  // Tcl list of every warning since the last clear
void FullMonte_clearWarnings();

// MeshRepair: `R mesh $M; R tolerance 0; R update; set fixed [R result]`. Merges coincident
// vertices (tolerance 0: 1e-6 x the mesh's bounding-box diagonal), joining surfaces meshed apart.
class MeshRepair {
public:
    void mesh(TetraMesh* m);
    void tolerance(double tolerance);  // mesh units; 0 (default) = relative to the mesh size
    double tolerance() const;
    void allowDefects(bool enabled);  // the repaired mesh may keep errors (as warnings)
    void update();
    TetraMesh* result() const;
    unsigned pointsMerged() const;
    unsigned facesJoined() const;
    std::string summary() const;
#ifndef SWIG
private:
    std::shared_ptr<fm::TetraMesh> in_, out_;
    double tolerance_ = 0;
    bool allow_ = false;
    fm::RepairReport report_;
#endif
};

#ifndef SWIG
namespace fmtcl {
// Print each line to stderr and keep it for FullMonte_warnings.
void reportWarnings(const std::vector<std::string>& lines);
std::string tclList(const std::vector<std::string>& items);
}  // namespace fmtcl
#endif
