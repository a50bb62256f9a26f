// SPDX-License-Identifier: GPL-3.0-or-later
// Light sources, each with a power (relative weight inside a Composite; absolute J or W when a
// run is normalised). Compiled into kernel emitters by SourceCompiler.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "Geometry/TetraMesh.hpp"

namespace fm {

struct Source {
    double power = 1.0;
    virtual ~Source() = default;
    virtual std::string typeName() const = 0;
};
using SourcePtr = std::shared_ptr<Source>;

// Isotropic point. elementHint (optional) is the tetra holding it.
struct PointSource : Source {
    Point3 position{};
    uint32_t elementHint = 0;
    std::string typeName() const override { return "Point"; }
};

// Collimated beam. From outside the mesh (or on its surface) it enters through the boundary face
// its ray hits, with specular reflection booked and refraction as in MCML; placed inside, it
// starts there. radius is ignored. A matched boundary (MaterialSet::matchedBoundary) has no
// specular reflection, nor has specularAtEntry = false (FullMonte 2018's, TIM-OS's and MMC's
// beams: the packet starts at the surface with weight 1 and its own direction).
struct PencilBeamSource : Source {
    Point3 position{};
    Point3 direction{0, 0, 1};
    uint32_t elementHint = 0;
    double radius = 0;
    bool specularAtEntry = true;
    std::string typeName() const override { return "PencilBeam"; }
};

// Uniform within a sphere (clipped to the mesh), isotropic.
struct BallSource : Source {
    Point3 centre{};
    double radius = 1;
    std::string typeName() const override { return "Ball"; }
};

// Segment, isotropic or emitting perpendicular to its axis (cylindrical diffuser).
struct LineSource : Source {
    Point3 endpoint[2]{};
    enum Pattern { Isotropic, Normal } pattern = Isotropic;
    std::string typeName() const override { return "Line"; }
};

// Uniform in one tetra (element > 0) or a whole region (region > 0), isotropic.
struct VolumeSource : Source {
    uint32_t element = 0;
    uint32_t region = 0;
    std::string typeName() const override { return "Volume"; }
};

// Uniform over boundary faces (by id), or a region's boundary; into the tissue.
struct SurfaceSource : Source {
    std::vector<uint32_t> faces;
    std::vector<std::array<uint32_t, 3>> triangles;  // boundary faces given by point ids
    // Any faces, boundary or internal, each with the tetra it emits into: (face id, tetra).
    // Used with or instead of `faces` (SurfaceSourceBuilder's internal region surfaces).
    std::vector<std::pair<uint32_t, uint32_t>> sides;
    uint32_t region = 0;  // used when faces/triangles/sides are empty: all faces bounding this region
    // Isotropic: uniform in the inward hemisphere. Cone: uniform within asin(NA / n) of the
    // inward normal, n that of the tissue emitted into.
    enum Emission { Normal, Lambert, Isotropic, Cone } emission = Lambert;
    double numericalAperture = 0.5;
    std::string typeName() const override { return "Surface"; }
};

// Optical fibre tip: a cone of numerical aperture NA around `direction`, half-angle
// asin(NA / n_tissue). Inside the mesh it emits from the point; outside or on the surface it
// emits from where its axis enters the mesh (the fibre touching the skin), with specular
// reflection there as a pencil beam (and specularAtEntry as it).
struct FiberSource : Source {
    Point3 position{};
    Point3 direction{0, 0, 1};
    double numericalAperture = 0.22;
    bool specularAtEntry = true;
    std::string typeName() const override { return "Fiber"; }
};

// Collimated beam of uniform intensity over a disk of `radius` around `centre`, normal to
// `direction` (MMC's "disk" source). The disk lies outside the tissue; each packet enters where
// its ray meets the surface, reflected and refracted there by that face's Fresnel law (none with
// specularAtEntry false or a matched boundary). The part of the disk whose rays miss the mesh
// emits nothing (a warning gives it).
struct DiskSource : Source {
    Point3 centre{};
    Point3 direction{0, 0, 1};
    double radius = 1;
    bool specularAtEntry = true;
    std::string typeName() const override { return "Disk"; }
};

// Collimated beam of uniform intensity over the parallelogram corner + s side1 + t side2
// (s, t in [0, 1]), every packet along `direction` (MMC's "planar" source); as DiskSource
// otherwise.
struct PlanarSource : Source {
    Point3 corner{}, side1{1, 0, 0}, side2{0, 1, 0};
    Point3 direction{0, 0, 1};
    bool specularAtEntry = true;
    std::string typeName() const override { return "Planar"; }
};

// FullMonte's cylinder diffuser: from the volume of a cylinder or from its lateral surface,
// isotropic or into the outward hemisphere (uniform or Lambertian).
struct CylinderSource : Source {
    Point3 endpoint[2]{};
    double radius = 0.5;
    bool emitVolume = false;
    bool emitHemiSphere = false;
    enum Distribution { Uniform, Lambert, Custom } hemiSphereEmitDistribution = Uniform;
    double numericalAperture = 0.5;  // for Custom: a cone of this NA around the surface normal
    std::string typeName() const override { return "Cylinder"; }
};

// Power-weighted mix.
struct CompositeSource : Source {
    std::vector<SourcePtr> elements;
    std::string typeName() const override { return "Composite"; }
};

// Sets specularAtEntry of every pencil beam and fibre in s (composites included).
inline void setSpecularAtEntry(Source& s, bool on) {
    if (auto* p = dynamic_cast<PencilBeamSource*>(&s)) p->specularAtEntry = on;
    if (auto* f = dynamic_cast<FiberSource*>(&s)) f->specularAtEntry = on;
    if (auto* d = dynamic_cast<DiskSource*>(&s)) d->specularAtEntry = on;
    if (auto* q = dynamic_cast<PlanarSource*>(&s)) q->specularAtEntry = on;
    if (auto* c = dynamic_cast<CompositeSource*>(&s))
        for (const SourcePtr& e : c->elements)
            if (e) setSpecularAtEntry(*e, on);
}

}  // namespace fm
