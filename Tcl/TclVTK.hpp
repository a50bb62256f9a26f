// SPDX-License-Identifier: GPL-3.0-or-later
// Tcl-facing VTK classes (FullMonte's later VTKMeshReader/VTKMeshWriter/VTKSurfaceWriter, plus
// FluenceRenderer) over Storage/VTK, which is built when FM_USE_VTK is ON. Maps are passed as
// output objects (SpatialMap), as FullMonte scripts do: `W addData "Fluence" [EF result]`.
#pragma once
#include <string>

#include "Tcl/TclOutputs.hpp"
#include "Tcl/TclStorage.hpp"

#ifndef SWIG
#include <memory>
#include <utility>
#include <vector>
#endif

class TetraMesh;

class VTKMeshReader : public FileIO {
public:
    // Region labels: this cell array; empty (default) takes the first present of Region, Tissue
    // Type, Material, Label(s), CellEntityIds, gmsh:physical, medit:ref, ... (docs/MESH_CHECKS.md);
    // with none, read fails listing the arrays.
    void regionArrayName(const std::string& n);
    std::string regionArrayName() const;
    void singleRegion(bool enabled);   // no labels on purpose: every tetra region 1
    void allowDefects(bool enabled);   // accept cracks and folded tetras as warnings
    void read();
    TetraMesh* mesh() const;
    std::string regionArrayUsed() const;
    std::string cellArrayNames() const;              // Tcl list
    SpatialMap* cellData(const std::string& name) const;  // per tetra, index 0 the dummy
#ifndef SWIG
private:
    std::string regionName_, used_;
    bool single_ = false, allow_ = false;
    std::shared_ptr<fm::TetraMesh> mesh_;
    std::vector<std::pair<std::string, std::vector<double>>> cells_;
#endif
};

// Cell data: Region plus one array per addData, named exactly as given (FullMonte's "Fluence",
// which FullMonteWeb's DVH page looks up); each map's unit is written as "Units" field data
// ("Fluence: J/mm^2"). .vtu or .vtk by extension.
class VTKMeshWriter : public FileIO {
public:
    void mesh(TetraMesh* m);
    void addData(const std::string& name, OutputData* d);
    void addHeaderComment(const std::string& text);
    // .vtk file version: 5.1 (default) or 4.2 for VTK 8-era tools and ParaView before 5.9.
    void legacyVersion(const std::string& v);
    std::string legacyVersion() const;
    // Beyond FullMonte: also write each map's standard errors as NAME_stderr (after the value
    // arrays; maps without errors add none). Off by default: a script's arrays stay as asked.
    void standardErrors(bool enabled);
    bool standardErrors() const;
    void clearData();
    void write();
#ifndef SWIG
private:
    std::shared_ptr<fm::TetraMesh> mesh_;
    std::vector<std::pair<std::string, MapPtr>> data_;
    std::vector<std::string> comments_;
    std::string legacy_ = "5.1";
    bool errors_ = false;
#endif
};

// Boundary triangles (region 0, the default) or one region's surface, with per-face data
// (e.g. SurfaceExitEnergy or its EnergyToFluence result), named as given, units as "Units" field
// data. A DirectedSurface map (TetraInternalKernel's output or its EnergyToFluence result) gives two
// arrays over a region's surface, "<name>" (into the region) and "<name> exiting"; its region is
// the scored one unless `region` is set. .vtp or .vtk by extension.
class VTKSurfaceWriter : public FileIO {
public:
    void mesh(TetraMesh* m);
    void region(unsigned region);
    unsigned region() const;
    void addData(const std::string& name, OutputData* d);
    void addHeaderComment(const std::string& text);
    void legacyVersion(const std::string& v);  // as VTKMeshWriter's
    std::string legacyVersion() const;
    void standardErrors(bool enabled);  // as VTKMeshWriter's
    bool standardErrors() const;
    void clearData();
    void write();
#ifndef SWIG
private:
    std::shared_ptr<fm::TetraMesh> mesh_;
    unsigned region_ = 0;
    std::vector<std::pair<std::string, MapPtr>> data_;
    std::vector<std::string> comments_;
    std::string legacy_ = "5.1";
    bool errors_ = false;
#endif
};

// A PNG of a per-tetra map, off-screen: a slice (default through the centre, normal +z) with
// region outlines, or a surface; log colour scale by default. Needs an X display (xvfb-run -a
// on a headless machine); without one, write raises an error saying so.
class FluenceRenderer : public FileIO {
public:
    void mesh(TetraMesh* m);
    void data(OutputData* map);                           // title "<name> (<unit>)"
    void data(OutputData* map, const std::string& title);
    void faceData(OutputData* map);                       // per-face values for surface views
    void faceData(OutputData* map, const std::string& title);
    void slice(const std::string& origin, const std::string& normal);
    void sliceThroughCentre(const std::string& normal);
    void surface();
    void surface(unsigned region);
    void size(unsigned width, unsigned height);
    void logScale(bool enabled);
    void range(double lo, double hi);
    void showRegionOutlines(bool enabled);
    void write();
    double usedMin() const;
    double usedMax() const;
#ifndef SWIG
    FluenceRenderer();
    ~FluenceRenderer() override;
    struct Impl;
private:
    std::shared_ptr<fm::TetraMesh> mesh_;
    std::unique_ptr<Impl> impl_;
#endif
};
