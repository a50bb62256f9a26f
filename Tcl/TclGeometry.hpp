// SPDX-License-Identifier: GPL-3.0-or-later
// Tcl-facing geometry classes, named as in FullMonte's Tcl API (docs/TCL_API.md). Each one is a
// thin handle around shared core data, so a handle stays valid whatever happens to the object it
// came from, and changes made through one handle are seen through all (FullMonte's pointer
// semantics, without its dangling pointers). Everything inside #ifndef SWIG is C++-only.
#pragma once
#include <string>
#include <vector>

#ifndef SWIG
#include <memory>

#include "Geometry/MaterialSet.hpp"
#include "Geometry/TetraMesh.hpp"
#endif

class VolumeCellInRegionPredicate;

// Region label per tetra (index 0 is the dummy). Read-only: our meshes are immutable once built.
class Partition {
public:
    unsigned count() const;        // number of tetras + 1 (the dummy), as FullMonte
    unsigned get(unsigned tetra) const;
    unsigned regionCount() const;  // max label + 1
    void assign(unsigned tetra, unsigned region);
#ifndef SWIG
    explicit Partition(std::shared_ptr<const fm::TetraMesh> m) : m_(std::move(m)) {}
private:
    std::shared_ptr<const fm::TetraMesh> m_;
#endif
};

class Points {
public:
    unsigned size() const;  // including the dummy point 0
    std::string get(unsigned point) const;
#ifndef SWIG
    explicit Points(std::shared_ptr<const fm::TetraMesh> m) : m_(std::move(m)) {}
private:
    std::shared_ptr<const fm::TetraMesh> m_;
#endif
};

class TetraCells {
public:
    unsigned size() const;  // including the dummy tetra 0
    std::string get(unsigned tetra) const;  // "p1 p2 p3 p4"
#ifndef SWIG
    explicit TetraCells(std::shared_ptr<const fm::TetraMesh> m) : m_(std::move(m)) {}
private:
    std::shared_ptr<const fm::TetraMesh> m_;
#endif
};

class FaceList {
public:
    unsigned size() const;
    unsigned get(unsigned index) const;  // face id
#ifndef SWIG
    explicit FaceList(std::vector<uint32_t> f) : f_(std::move(f)) {}
private:
    std::vector<uint32_t> f_;
#endif
};

class TetraMesh {
public:
    TetraMesh();  // empty until a reader or builder fills one
    std::string unitDimension() const;
    void unitDimension(const std::string& unit);
    Partition* regions() const;
    Points* points() const;
    TetraCells* tetraCells() const;
    FaceList* internalFacesForFluenceCounting() const;  // faces between different regions
    FaceList* internalFacesForFluenceCounting(VolumeCellInRegionPredicate* p) const;
    // Beyond FullMonte
    unsigned pointCount() const;
    unsigned tetraCount() const;
    unsigned faceCount() const;
    unsigned regionCount() const;
    unsigned boundaryFaceCount() const;
    unsigned region(unsigned tetra) const;
    double volume(unsigned tetra) const;
    double regionVolume(unsigned region) const;
    double faceArea(unsigned face) const;
    std::string facePoints(unsigned face) const;    // "p1 p2 p3"
    std::string faceCentroid(unsigned face) const;  // "x y z "
    std::string faceNormal(unsigned face) const;    // unit, out of the face's owner tetra
    std::string boundaryFaceIDs() const;         // Tcl list of the faces on the mesh boundary
    std::string tetraCentroid(unsigned tetra) const;
    unsigned locate(const std::string& xyz) const;
    std::string bounds() const;  // "xmin ymin zmin xmax ymax zmax "
    // Mesh checks (docs/MESH_CHECKS.md): what the load found (Tcl list of lines), connected
    // components, and the coincidence tolerance used.
    std::string checkWarnings() const;
    unsigned componentCount() const;
    double checkTolerance() const;
#ifndef SWIG
    explicit TetraMesh(std::shared_ptr<fm::TetraMesh> m) : m_(std::move(m)) {}
    const std::shared_ptr<fm::TetraMesh>& ptr() const;  // throws when empty
    bool empty() const { return !m_; }
private:
    std::shared_ptr<fm::TetraMesh> m_;
#endif
};

#ifndef SWIG
struct MaterialData {
    fm::Material m;
    std::string unit = "mm";
};
#endif

class Material {
public:
    Material();
    Material(double mu_a, double mu_s, double g, double n);
    double absorptionCoeff() const;
    void absorptionCoeff(double mu_a);
    double scatteringCoeff() const;
    void scatteringCoeff(double mu_s);
    double reducedScatteringCoeff() const;
    void reducedScatteringCoeff(double mu_s_reduced);  // sets mu_s = v / (1 - g) for the current g
    double anisotropy() const;
    void anisotropy(double g);
    double refractiveIndex() const;
    void refractiveIndex(double n);
    std::string unitDimension() const;
    void unitDimension(const std::string& unit);
#ifndef SWIG
    explicit Material(std::shared_ptr<MaterialData> d) : d_(std::move(d)) {}
    const std::shared_ptr<MaterialData>& data() const { return d_; }
private:
    std::shared_ptr<MaterialData> d_;
#endif
};

class MaterialSet {
public:
    MaterialSet();
    void exterior(Material* m);
    Material* exterior() const;
    unsigned append(Material* m);  // -> its region index
    void set(unsigned slot, Material* m);
    Material* material(unsigned slot) const;
    unsigned size() const;   // including the exterior
    unsigned count() const;  // the same
    bool matchedBoundary() const;
    void matchedBoundary(bool matched);
#ifndef SWIG
    explicit MaterialSet(const fm::MaterialSet& ms);
    // The core set with every coefficient converted to 1/lengthUnit (the mesh's unit).
    fm::MaterialSet build(const std::string& lengthUnit) const;
private:
    std::shared_ptr<std::vector<std::shared_ptr<MaterialData>>> m_;
    std::shared_ptr<bool> matched_;
#endif
};

class VolumeCellInRegionPredicate {
public:
    void setRegion(unsigned region);
    unsigned region() const;
#ifndef SWIG
private:
    unsigned r_ = 0;
#endif
};

// Beyond FullMonte: a box split into nx*ny*nz cubes of 6 tetras (Geometry/MeshBuilder), with
// regions painted by shapes tested at each tetra's centroid; later shapes paint over earlier ones.
class BoxMeshBuilder {
public:
    void lower(const std::string& xyz);
    void upper(const std::string& xyz);
    void divisions(unsigned nx, unsigned ny, unsigned nz);
    void region(unsigned region);  // background region (default 1)
    void addBox(unsigned region, const std::string& lo, const std::string& hi);
    void addSphere(unsigned region, const std::string& centre, double radius);
    void addCylinder(unsigned region, const std::string& a, const std::string& b, double radius);
    void addShell(unsigned region, double thickness);  // within thickness of the box's faces
    void clearShapes();
    void update();
    TetraMesh* mesh() const;
#ifndef SWIG
    struct Shape;
private:
    fm::Point3 lo_{-10, -10, -10}, hi_{10, 10, 10};
    unsigned n_[3] = {10, 10, 10};
    unsigned background_ = 1;
    std::vector<std::shared_ptr<Shape>> shapes_;
    std::shared_ptr<fm::TetraMesh> mesh_;
    uint32_t regionOf(const fm::Point3& c) const;
#endif
};
