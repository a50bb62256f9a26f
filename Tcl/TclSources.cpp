// SPDX-License-Identifier: GPL-3.0-or-later
#include "Tcl/TclSources.hpp"

#include <sstream>

#include "Tcl/TclGeometry.hpp"
#include "Tcl/TclUtil.hpp"

using fm::ParameterError;
using fmtcl::formatVec3;
using fmtcl::parseVec3;

namespace {

int endpointIndex(int i, const std::string& cls) {
    if (i != 0 && i != 1) throw ParameterError(cls + " endpoint: index must be 0 or 1, got " + std::to_string(i));
    return i;
}

// UNIFORM | LAMBERT | CUSTOM, any case.
fm::CylinderSource::Distribution distribution(const std::string& d, const std::string& what) {
    std::string u = fmtcl::lower(d);
    if (u == "uniform") return fm::CylinderSource::Uniform;
    if (u == "lambert") return fm::CylinderSource::Lambert;
    if (u == "custom") return fm::CylinderSource::Custom;
    throw ParameterError(what + ": '" + d + "' is not UNIFORM, LAMBERT or CUSTOM");
}

const char* distributionName(fm::CylinderSource::Distribution d) {
    return d == fm::CylinderSource::Uniform ? "UNIFORM" : d == fm::CylinderSource::Lambert ? "LAMBERT" : "CUSTOM";
}

fm::Point3 direction(const std::string& s, const std::string& what) {
    fm::Point3 d = parseVec3(s, what);
    if (!(fm::normP(d) > 0)) throw ParameterError(what + ": direction must not be zero");
    return d;
}

}  // namespace

// ---- Source ----

Source::~Source() = default;
double Source::power() const { return s_->power; }
void Source::power(double w) { s_->power = fmtcl::nonNegative(w, type() + " power"); }
std::string Source::type() const { return s_->typeName(); }

Source* Source::wrap(const fm::SourcePtr& s) {
    if (auto p = std::dynamic_pointer_cast<fm::PointSource>(s)) return new Point(p);
    if (auto p = std::dynamic_pointer_cast<fm::BallSource>(s)) return new Ball(p);
    if (auto p = std::dynamic_pointer_cast<fm::LineSource>(s)) return new Line(p);
    if (auto p = std::dynamic_pointer_cast<fm::PencilBeamSource>(s)) return new PencilBeam(p);
    if (auto p = std::dynamic_pointer_cast<fm::VolumeSource>(s)) return new Volume(p);
    if (auto p = std::dynamic_pointer_cast<fm::SurfaceSource>(s))
        return p->triangles.empty() ? new Surface(p) : new SurfaceTri(p);
    if (auto p = std::dynamic_pointer_cast<fm::CompositeSource>(s)) return new Composite(p);
    if (auto p = std::dynamic_pointer_cast<fm::CylinderSource>(s)) return new Cylinder(p);
    if (auto p = std::dynamic_pointer_cast<fm::FiberSource>(s)) return new Fiber(p);
    if (auto p = std::dynamic_pointer_cast<fm::DiskSource>(s)) return new Disk(p);
    if (auto p = std::dynamic_pointer_cast<fm::PlanarSource>(s)) return new Planar(p);
    throw ParameterError("source of type " + s->typeName() + " has no Tcl class");
}

// ---- Point ----

Point::Point() : Source(std::make_shared<fm::PointSource>()) {}
Point::Point(double w) : Point() { power(w); }
Point::Point(double w, const std::string& xyz) : Point(w) { position(xyz); }
Point::Point(double w, const std::string& xyz, unsigned hint) : Point(w, xyz) { elementHint(hint); }
std::string Point::position() const { return formatVec3(as<fm::PointSource>().position); }
void Point::position(const std::string& xyz) { as<fm::PointSource>().position = parseVec3(xyz, "Point position"); }
unsigned Point::elementHint() const { return as<fm::PointSource>().elementHint; }
void Point::elementHint(unsigned t) { as<fm::PointSource>().elementHint = t; }

// ---- Ball ----

Ball::Ball() : Source(std::make_shared<fm::BallSource>()) {}
std::string Ball::centre() const { return formatVec3(as<fm::BallSource>().centre); }
void Ball::centre(const std::string& xyz) { as<fm::BallSource>().centre = parseVec3(xyz, "Ball centre"); }
std::string Ball::position() const { return centre(); }
void Ball::position(const std::string& xyz) { as<fm::BallSource>().centre = parseVec3(xyz, "Ball position"); }
double Ball::radius() const { return as<fm::BallSource>().radius; }
void Ball::radius(double r) { as<fm::BallSource>().radius = fmtcl::positive(r, "Ball radius"); }

// ---- Line ----

Line::Line() : Source(std::make_shared<fm::LineSource>()) {}
std::string Line::endpoint(int i) const { return formatVec3(as<fm::LineSource>().endpoint[endpointIndex(i, "Line")]); }
void Line::endpoint(int i, const std::string& xyz) {
    as<fm::LineSource>().endpoint[endpointIndex(i, "Line")] = parseVec3(xyz, "Line endpoint");
}
std::string Line::pattern() const {
    return as<fm::LineSource>().pattern == fm::LineSource::Normal ? "Normal" : "Isotropic";
}
void Line::pattern(const std::string& p) {
    std::string u = fmtcl::lower(p);
    if (u == "isotropic") as<fm::LineSource>().pattern = fm::LineSource::Isotropic;
    else if (u == "normal") as<fm::LineSource>().pattern = fm::LineSource::Normal;
    else throw ParameterError("Line pattern: '" + p + "' is not Isotropic or Normal");
}

// ---- PencilBeam ----

PencilBeam::PencilBeam() : Source(std::make_shared<fm::PencilBeamSource>()) {}
std::string PencilBeam::position() const { return formatVec3(as<fm::PencilBeamSource>().position); }
void PencilBeam::position(const std::string& xyz) {
    as<fm::PencilBeamSource>().position = parseVec3(xyz, "PencilBeam position");
}
std::string PencilBeam::direction() const { return formatVec3(as<fm::PencilBeamSource>().direction); }
void PencilBeam::direction(const std::string& d) {
    as<fm::PencilBeamSource>().direction = ::direction(d, "PencilBeam direction");
}
double PencilBeam::radius() const { return as<fm::PencilBeamSource>().radius; }
void PencilBeam::radius(double r) { as<fm::PencilBeamSource>().radius = fmtcl::nonNegative(r, "PencilBeam radius"); }
unsigned PencilBeam::elementHint() const { return as<fm::PencilBeamSource>().elementHint; }
void PencilBeam::elementHint(unsigned t) { as<fm::PencilBeamSource>().elementHint = t; }
bool PencilBeam::specularAtEntry() const { return as<fm::PencilBeamSource>().specularAtEntry; }
void PencilBeam::specularAtEntry(bool on) { as<fm::PencilBeamSource>().specularAtEntry = on; }

// ---- Disk, Planar ----

Disk::Disk() : Source(std::make_shared<fm::DiskSource>()) {}
std::string Disk::centre() const { return formatVec3(as<fm::DiskSource>().centre); }
void Disk::centre(const std::string& xyz) { as<fm::DiskSource>().centre = parseVec3(xyz, "Disk centre"); }
std::string Disk::direction() const { return formatVec3(as<fm::DiskSource>().direction); }
void Disk::direction(const std::string& d) { as<fm::DiskSource>().direction = ::direction(d, "Disk direction"); }
double Disk::radius() const { return as<fm::DiskSource>().radius; }
void Disk::radius(double r) { as<fm::DiskSource>().radius = fmtcl::positive(r, "Disk radius"); }
bool Disk::specularAtEntry() const { return as<fm::DiskSource>().specularAtEntry; }
void Disk::specularAtEntry(bool on) { as<fm::DiskSource>().specularAtEntry = on; }

Planar::Planar() : Source(std::make_shared<fm::PlanarSource>()) {}
std::string Planar::corner() const { return formatVec3(as<fm::PlanarSource>().corner); }
void Planar::corner(const std::string& xyz) { as<fm::PlanarSource>().corner = parseVec3(xyz, "Planar corner"); }
std::string Planar::side1() const { return formatVec3(as<fm::PlanarSource>().side1); }
void Planar::side1(const std::string& xyz) { as<fm::PlanarSource>().side1 = parseVec3(xyz, "Planar side1"); }
std::string Planar::side2() const { return formatVec3(as<fm::PlanarSource>().side2); }
void Planar::side2(const std::string& xyz) { as<fm::PlanarSource>().side2 = parseVec3(xyz, "Planar side2"); }
std::string Planar::direction() const { return formatVec3(as<fm::PlanarSource>().direction); }
void Planar::direction(const std::string& d) { as<fm::PlanarSource>().direction = ::direction(d, "Planar direction"); }
bool Planar::specularAtEntry() const { return as<fm::PlanarSource>().specularAtEntry; }
void Planar::specularAtEntry(bool on) { as<fm::PlanarSource>().specularAtEntry = on; }

// ---- Volume ----

Volume::Volume() : Source(std::make_shared<fm::VolumeSource>()) {}
Volume::Volume(double w, unsigned tetra) : Volume() {
    power(w);
    elementID(tetra);
}
unsigned Volume::elementID() const { return as<fm::VolumeSource>().element; }
void Volume::elementID(unsigned t) { as<fm::VolumeSource>().element = t; }
unsigned Volume::region() const { return as<fm::VolumeSource>().region; }
void Volume::region(unsigned r) {
    as<fm::VolumeSource>().region = r;
    as<fm::VolumeSource>().element = 0;  // the core uses element when it is set
}

// ---- Surface, SurfaceTri ----

Surface::Surface() : Source(std::make_shared<fm::SurfaceSource>()) {}
unsigned Surface::surfaceID() const {
    const auto& f = as<fm::SurfaceSource>().faces;
    return f.empty() ? 0 : f.front();
}
void Surface::surfaceID(unsigned f) { as<fm::SurfaceSource>().faces.assign(1, f); }
void Surface::addSurfaceID(unsigned f) { as<fm::SurfaceSource>().faces.push_back(f); }
unsigned Surface::region() const { return as<fm::SurfaceSource>().region; }
void Surface::region(unsigned r) { as<fm::SurfaceSource>().region = r; }
std::string Surface::emission() const {
    auto e = as<fm::SurfaceSource>().emission;
    return e == fm::SurfaceSource::Normal ? "NORMAL" : e == fm::SurfaceSource::Lambert ? "LAMBERT"
           : e == fm::SurfaceSource::Cone ? "CONE" : "ISOTROPIC";
}
void Surface::emission(const std::string& e) {
    std::string u = fmtcl::lower(e);
    auto& s = as<fm::SurfaceSource>();
    if (u == "normal") s.emission = fm::SurfaceSource::Normal;
    else if (u == "lambert") s.emission = fm::SurfaceSource::Lambert;
    else if (u == "isotropic" || u == "uniform") s.emission = fm::SurfaceSource::Isotropic;
    else throw ParameterError("Surface emission: '" + e + "' is not NORMAL, LAMBERT or ISOTROPIC");
}

SurfaceTri::SurfaceTri() : Surface(std::make_shared<fm::SurfaceSource>()) {
    as<fm::SurfaceSource>().emission = fm::SurfaceSource::Normal;  // TIM-OS type 12
}
std::string SurfaceTri::triPointIDs() const {
    const auto& t = as<fm::SurfaceSource>().triangles;
    if (t.empty()) return "0 0 0";
    return std::to_string(t[0][0]) + " " + std::to_string(t[0][1]) + " " + std::to_string(t[0][2]);
}
void SurfaceTri::triPointIDs(const std::string& ijk) {
    fm::Point3 v = parseVec3(ijk, "SurfaceTri triPointIDs");
    std::array<uint32_t, 3> tri;
    for (int k = 0; k < 3; ++k) tri[k] = uint32_t(fmtcl::wholeNumber(v[k], "SurfaceTri point id", 1, 4e9));
    as<fm::SurfaceSource>().triangles.assign(1, tri);
}

// ---- Composite ----

Composite::Composite() : Source(std::make_shared<fm::CompositeSource>()) {}
namespace {
// Whether `target` is `from` or one of its members, at any depth. Composites form a DAG (add
// refuses cycles), so the walk ends; it keeps its own stack, so deep nesting cannot overflow.
bool reaches(const fm::Source* from, const fm::Source* target) {
    std::vector<const fm::Source*> todo{from};
    while (!todo.empty()) {
        const fm::Source* s = todo.back();
        todo.pop_back();
        if (s == target) return true;
        if (auto c = dynamic_cast<const fm::CompositeSource*>(s))
            for (const auto& e : c->elements) todo.push_back(e.get());
    }
    return false;
}
}  // namespace

void Composite::add(Source* s) {
    const auto& p = fmtcl::need(s, "Composite add").ptr();
    if (p == s_) throw ParameterError("Composite add: a composite cannot contain itself");
    if (reaches(p.get(), s_.get()))
        throw ParameterError("Composite add: the source contains this composite (a cycle)");
    as<fm::CompositeSource>().elements.push_back(p);
}
unsigned Composite::count() const { return unsigned(as<fm::CompositeSource>().elements.size()); }
Source* Composite::get(unsigned i) const {
    const auto& e = as<fm::CompositeSource>().elements;
    if (i >= e.size())
        throw ParameterError("Composite get: index " + std::to_string(i) + " out of range (" +
                             std::to_string(e.size()) + " elements)");
    return Source::wrap(e[i]);
}

// ---- Cylinder ----

Cylinder::Cylinder() : Source(std::make_shared<fm::CylinderSource>()) {}
std::string Cylinder::endpoint(int i) const {
    return formatVec3(as<fm::CylinderSource>().endpoint[endpointIndex(i, "Cylinder")]);
}
void Cylinder::endpoint(int i, const std::string& xyz) {
    as<fm::CylinderSource>().endpoint[endpointIndex(i, "Cylinder")] = parseVec3(xyz, "Cylinder endpoint");
}
double Cylinder::radius() const { return as<fm::CylinderSource>().radius; }
void Cylinder::radius(double r) { as<fm::CylinderSource>().radius = fmtcl::nonNegative(r, "Cylinder radius"); }
bool Cylinder::emitVolume() const { return as<fm::CylinderSource>().emitVolume; }
void Cylinder::emitVolume(bool b) { as<fm::CylinderSource>().emitVolume = b; }
bool Cylinder::emitHemiSphere() const { return as<fm::CylinderSource>().emitHemiSphere; }
void Cylinder::emitHemiSphere(bool b) { as<fm::CylinderSource>().emitHemiSphere = b; }
std::string Cylinder::hemiSphereEmitDistribution() const {
    return distributionName(as<fm::CylinderSource>().hemiSphereEmitDistribution);
}
void Cylinder::hemiSphereEmitDistribution(const std::string& d) {
    as<fm::CylinderSource>().hemiSphereEmitDistribution = distribution(d, "Cylinder hemiSphereEmitDistribution");
}
double Cylinder::numericalAperture() const { return as<fm::CylinderSource>().numericalAperture; }
void Cylinder::numericalAperture(double na) {
    if (!(na > 0 && na <= 1)) throw ParameterError("Cylinder numericalAperture must be in (0, 1], got " + std::to_string(na));
    as<fm::CylinderSource>().numericalAperture = na;
}

// ---- Fiber ----

Fiber::Fiber() : Source(std::make_shared<fm::FiberSource>()) {}
std::string Fiber::position() const { return formatVec3(as<fm::FiberSource>().position); }
void Fiber::position(const std::string& xyz) { as<fm::FiberSource>().position = parseVec3(xyz, "Fiber position"); }
std::string Fiber::direction() const { return formatVec3(as<fm::FiberSource>().direction); }
void Fiber::direction(const std::string& d) { as<fm::FiberSource>().direction = ::direction(d, "Fiber direction"); }
double Fiber::numericalAperture() const { return as<fm::FiberSource>().numericalAperture; }
bool Fiber::specularAtEntry() const { return as<fm::FiberSource>().specularAtEntry; }
void Fiber::specularAtEntry(bool on) { as<fm::FiberSource>().specularAtEntry = on; }
void Fiber::numericalAperture(double na) {
    as<fm::FiberSource>().numericalAperture = fmtcl::positive(na, "Fiber numericalAperture");
}

// ---- SurfaceSourceBuilder ----

void SurfaceSourceBuilder::mesh(TetraMesh* m) { mesh_ = fmtcl::need(m, "SurfaceSourceBuilder mesh").ptr(); }
void SurfaceSourceBuilder::setRegion(VolumeCellInRegionPredicate* p) {
    region_ = fmtcl::need(p, "SurfaceSourceBuilder setRegion").region();
}
void SurfaceSourceBuilder::setRegion(unsigned r) { region_ = r; }
unsigned SurfaceSourceBuilder::region() const { return region_; }
void SurfaceSourceBuilder::emitHemiSphere(bool b) { hemi_ = b; }
bool SurfaceSourceBuilder::emitHemiSphere() const { return hemi_; }
void SurfaceSourceBuilder::hemiSphereEmitDistribution(const std::string& d) {
    dist_ = distribution(d, "SurfaceSourceBuilder hemiSphereEmitDistribution");
}
std::string SurfaceSourceBuilder::hemiSphereEmitDistribution() const { return distributionName(dist_); }
void SurfaceSourceBuilder::numericalAperture(double na) {
    na_ = fmtcl::positive(na, "SurfaceSourceBuilder numericalAperture");
}
double SurfaceSourceBuilder::numericalAperture() const { return na_; }
void SurfaceSourceBuilder::checkDirection(bool b) { check_ = b; }
bool SurfaceSourceBuilder::checkDirection() const { return check_; }
void SurfaceSourceBuilder::emitDirection(const std::string& d) { dir_ = ::direction(d, "SurfaceSourceBuilder emitDirection"); }
std::string SurfaceSourceBuilder::emitDirection() const { return formatVec3(dir_); }
void SurfaceSourceBuilder::emitOutward(bool b) { outward_ = b; }
bool SurfaceSourceBuilder::emitOutward() const { return outward_; }
void SurfaceSourceBuilder::power(double w) { power_ = fmtcl::nonNegative(w, "SurfaceSourceBuilder power"); }
double SurfaceSourceBuilder::power() const { return power_; }

// Faces of the region's surface: against the exterior and against other regions. Each face emits
// into the region (or, with emitOutward, out of it into the neighbouring tissue; faces on the mesh
// boundary then have nothing to emit into and are left out). With checkDirection only faces
// whose emitting normal has a positive component along emitDirection are kept.
void SurfaceSourceBuilder::update() {
    const std::string what = "SurfaceSourceBuilder update";
    if (!mesh_) throw ParameterError(what + ": call mesh first");
    if (!region_) throw ParameterError(what + ": call setRegion with a region >= 1 first");
    if (region_ >= mesh_->regionCount() || !(mesh_->regionVolume(region_) > 0))
        throw fm::ModelError(what + ": region " + std::to_string(region_) + " has no tetras (regions 1.." +
                             std::to_string(mesh_->regionCount() - 1) + ")");
    const double len = fm::normP(dir_);
    const fm::Point3 u{dir_[0] / len, dir_[1] / len, dir_[2] / len};
    std::vector<std::pair<uint32_t, uint32_t>> sides;
    size_t onBoundary = 0, facing = 0;
    for (auto [f, inside] : mesh_->regionBoundary(region_)) {
        const fm::MeshFace& F = mesh_->face(f);
        const uint32_t outside = inside == F.owner ? F.other : F.owner;
        if (outward_ && !outside) {
            ++onBoundary;
            continue;
        }
        const uint32_t into = outward_ ? outside : inside;
        // The face normal points out of its owner: into `into` is -normal when `into` owns it.
        const double sgn = into == F.owner ? -1.0 : 1.0;
        if (check_ && !(sgn * fm::dotP(F.normal, u) > 1e-9)) continue;
        ++facing;
        sides.push_back({f, into});
    }
    if (sides.empty()) {
        std::string r = "region " + std::to_string(region_);
        if (outward_ && !facing && !onBoundary) throw fm::ModelError(what + ": " + r + " has no surface");
        if (outward_ && onBoundary && !check_)
            throw fm::ModelError(what + ": every face of " + r +
                                 "'s surface is on the mesh boundary, so emitOutward has no tissue to emit into");
        throw fm::ModelError(what + ": no face of " + r + "'s surface emits along emitDirection " +
                             formatVec3(dir_) + (outward_ ? " (emitting outward)" : " (emitting into the region)"));
    }
    auto s = std::make_shared<fm::SurfaceSource>();
    s->power = power_;
    s->sides = std::move(sides);
    s->numericalAperture = na_;
    s->emission = !hemi_ ? fm::SurfaceSource::Normal
                  : dist_ == fm::CylinderSource::Lambert ? fm::SurfaceSource::Lambert
                  : dist_ == fm::CylinderSource::Custom ? fm::SurfaceSource::Cone
                  : fm::SurfaceSource::Isotropic;
    out_ = s;
}

Surface* SurfaceSourceBuilder::output() const {
    if (!out_) throw ParameterError("SurfaceSourceBuilder output: call update first");
    return new Surface(out_);
}
unsigned SurfaceSourceBuilder::faceCount() const { return out_ ? unsigned(out_->sides.size()) : 0u; }
std::string SurfaceSourceBuilder::faceIDs() const {
    std::string r;
    if (out_)
        for (auto [f, t] : out_->sides) r += (r.empty() ? "" : " ") + std::to_string(f);
    return r;
}
double SurfaceSourceBuilder::area() const {
    double a = 0;
    if (out_)
        for (auto [f, t] : out_->sides) a += mesh_->face(f).area;
    return a;
}
