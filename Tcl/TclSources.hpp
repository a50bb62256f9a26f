// SPDX-License-Identifier: GPL-3.0-or-later
// Tcl-facing light sources (FullMonte's Source:: classes, namespaces flattened). Each holds a
// shared core source (Geometry/Sources.hpp), so a Composite sees later changes to its members as
// FullMonte's did. Getters and setters share a name; setters check their argument at once.
#pragma once
#include <string>

#ifndef SWIG
#include <memory>

#include "Geometry/Sources.hpp"
#endif

class TetraMesh;
class VolumeCellInRegionPredicate;

class Source {
public:
    virtual ~Source();
    double power() const;
    void power(double power);
    std::string type() const;
#ifndef SWIG
    const fm::SourcePtr& ptr() const { return s_; }
    static Source* wrap(const fm::SourcePtr& s);  // the adapter of the right class
protected:
    explicit Source(fm::SourcePtr s) : s_(std::move(s)) {}
    template <class T>
    T& as() const { return static_cast<T&>(*s_); }
    fm::SourcePtr s_;
#endif
};

class Point : public Source {
public:
    Point();
    Point(double power);
    Point(double power, const std::string& xyz);
    Point(double power, const std::string& xyz, unsigned hint);
    std::string position() const;
    void position(const std::string& xyz);
    unsigned elementHint() const;
    void elementHint(unsigned tetra);
#ifndef SWIG
    explicit Point(std::shared_ptr<fm::PointSource> s) : Source(std::move(s)) {}
#endif
};

class Ball : public Source {
public:
    Ball();
    std::string centre() const;
    void centre(const std::string& xyz);
    std::string position() const;  // alias of centre, as later FullMonte scripts use it
    void position(const std::string& xyz);
    double radius() const;
    void radius(double radius);
#ifndef SWIG
    explicit Ball(std::shared_ptr<fm::BallSource> s) : Source(std::move(s)) {}
#endif
};

class Line : public Source {
public:
    Line();
    std::string endpoint(int i) const;
    void endpoint(int i, const std::string& xyz);
    std::string pattern() const;  // "Isotropic" | "Normal"
    void pattern(const std::string& p);
#ifndef SWIG
    explicit Line(std::shared_ptr<fm::LineSource> s) : Source(std::move(s)) {}
#endif
};

class PencilBeam : public Source {
public:
    PencilBeam();
    std::string position() const;
    void position(const std::string& xyz);
    std::string direction() const;
    void direction(const std::string& dxyz);
    double radius() const;  // stored, ignored by the kernels (as in FullMonte)
    void radius(double radius);
    unsigned elementHint() const;
    void elementHint(unsigned tetra);
    // 1 (default): Fresnel reflection (booked w_specular) and refraction where the beam enters from
    // outside, as MCML; 0: none, as FullMonte 2018. A matched boundary never reflects at entry.
    bool specularAtEntry() const;
    void specularAtEntry(bool enabled);
#ifndef SWIG
    explicit PencilBeam(std::shared_ptr<fm::PencilBeamSource> s) : Source(std::move(s)) {}
#endif
};

class Volume : public Source {
public:
    Volume();
    Volume(double power, unsigned tetra);
    unsigned elementID() const;
    void elementID(unsigned tetra);
    unsigned region() const;  // beyond FullMonte: emit from a whole region
    void region(unsigned region);
#ifndef SWIG
    explicit Volume(std::shared_ptr<fm::VolumeSource> s) : Source(std::move(s)) {}
#endif
};

// Boundary faces by id (surfaceID) or a region's boundary; emits into the tissue.
class Surface : public Source {
public:
    Surface();
    unsigned surfaceID() const;
    void surfaceID(unsigned face);
    void addSurfaceID(unsigned face);
    unsigned region() const;
    void region(unsigned region);
    std::string emission() const;  // "NORMAL" | "LAMBERT" | "ISOTROPIC" (into the hemisphere)
    void emission(const std::string& e);
#ifndef SWIG
    explicit Surface(std::shared_ptr<fm::SurfaceSource> s) : Source(std::move(s)) {}
#endif
};

class SurfaceTri : public Surface {
public:
    SurfaceTri();
    std::string triPointIDs() const;
    void triPointIDs(const std::string& ijk);
#ifndef SWIG
    explicit SurfaceTri(std::shared_ptr<fm::SurfaceSource> s) : Surface(std::move(s)) {}
#endif
};

class Composite : public Source {
public:
    Composite();
    void add(Source* s);
    unsigned count() const;
    Source* get(unsigned index) const;
#ifndef SWIG
    explicit Composite(std::shared_ptr<fm::CompositeSource> s) : Source(std::move(s)) {}
#endif
};

class Cylinder : public Source {
public:
    Cylinder();
    std::string endpoint(int i) const;
    void endpoint(int i, const std::string& xyz);
    double radius() const;
    void radius(double radius);
    bool emitVolume() const;
    void emitVolume(bool enabled);
    bool emitHemiSphere() const;
    void emitHemiSphere(bool enabled);
    std::string hemiSphereEmitDistribution() const;  // UNIFORM | LAMBERT | CUSTOM
    void hemiSphereEmitDistribution(const std::string& d);
    double numericalAperture() const;
    void numericalAperture(double NA);
#ifndef SWIG
    explicit Cylinder(std::shared_ptr<fm::CylinderSource> s) : Source(std::move(s)) {}
#endif
};

// A fibre tip: a cone of numerical aperture NA around direction (FullMonte had no Tcl methods).
class Fiber : public Source {
public:
    Fiber();
    std::string position() const;
    void position(const std::string& xyz);
    std::string direction() const;
    void direction(const std::string& dxyz);
    double numericalAperture() const;
    void numericalAperture(double NA);
    bool specularAtEntry() const;  // as PencilBeam's
    void specularAtEntry(bool enabled);
#ifndef SWIG
    explicit Fiber(std::shared_ptr<fm::FiberSource> s) : Source(std::move(s)) {}
#endif
};

// A collimated beam of uniform intensity over a disk (MMC's "disk" source): every packet starts
// at a uniformly drawn point of the disk of `radius` around `centre`, square to `direction`, and
// travels along `direction`; from outside the mesh it enters where its ray meets the surface, as
// a PencilBeam (specularAtEntry likewise).
class Disk : public Source {
public:
    Disk();
    std::string centre() const;
    void centre(const std::string& xyz);
    std::string direction() const;
    void direction(const std::string& dxyz);
    double radius() const;
    void radius(double radius);
    bool specularAtEntry() const;
    void specularAtEntry(bool enabled);
#ifndef SWIG
    explicit Disk(std::shared_ptr<fm::DiskSource> s) : Source(std::move(s)) {}
#endif
};

// A collimated beam of uniform intensity over the parallelogram corner + s side1 + t side2
// (s, t in [0, 1]; MMC's "planar" source), every packet along `direction`; as Disk otherwise.
class Planar : public Source {
public:
    Planar();
    std::string corner() const;
    void corner(const std::string& xyz);
    std::string side1() const;
    void side1(const std::string& xyz);
    std::string side2() const;
    void side2(const std::string& xyz);
    std::string direction() const;
    void direction(const std::string& dxyz);
    bool specularAtEntry() const;
    void specularAtEntry(bool enabled);
#ifndef SWIG
    explicit Planar(std::shared_ptr<fm::PlanarSource> s) : Source(std::move(s)) {}
#endif
};

// Builds a Surface source on the surface of a region (FullMonte later API): the region's faces
// against the exterior and against other regions, emitting into the region (beyond FullMonte:
// emitOutward, out of it). Getters share the setters' names.
class SurfaceSourceBuilder {
public:
    void mesh(TetraMesh* m);
    void setRegion(VolumeCellInRegionPredicate* p);
    void setRegion(unsigned region);  // beyond FullMonte: the region number itself
    unsigned region() const;
    void emitHemiSphere(bool enabled);  // 1 (default): hemisphere per the distribution; 0: along the normal
    bool emitHemiSphere() const;
    void hemiSphereEmitDistribution(const std::string& d);  // UNIFORM | LAMBERT (default) | CUSTOM
    std::string hemiSphereEmitDistribution() const;
    void numericalAperture(double NA);  // CUSTOM: a cone of half-angle asin(NA / n)
    double numericalAperture() const;
    void checkDirection(bool enabled);
    bool checkDirection() const;
    void emitDirection(const std::string& dxyz);
    std::string emitDirection() const;
    void emitOutward(bool enabled);
    bool emitOutward() const;
    void power(double power);
    double power() const;
    void update();
    Surface* output() const;
    unsigned faceCount() const;   // faces selected by the last update
    std::string faceIDs() const;  // Tcl list of their ids
    double area() const;          // their total area
#ifndef SWIG
private:
    std::shared_ptr<fm::TetraMesh> mesh_;
    unsigned region_ = 0;
    bool hemi_ = true, check_ = false, outward_ = false;
    fm::CylinderSource::Distribution dist_ = fm::CylinderSource::Lambert;
    double na_ = 0.5;
    fm::Point3 dir_{0, 0, 1};
    double power_ = 1;
    std::shared_ptr<fm::SurfaceSource> out_;
#endif
};
