// SPDX-License-Identifier: GPL-3.0-or-later
#include "Tcl/TclGeometry.hpp"

#include <cmath>

#include "Geometry/MeshBuilder.hpp"
#include "Storage/NonDeflectingMedium.hpp"
#include "Tcl/TclMeshCheck.hpp"
#include "Tcl/TclUtil.hpp"

using fm::ParameterError;
using fmtcl::formatVec3;
using fmtcl::parseVec3;

namespace {

void checkIndex(unsigned i, size_t n, const std::string& what) {
    if (i >= n)
        throw ParameterError(what + " " + std::to_string(i) + " is out of range (0.." + std::to_string(n - 1) + ")");
}

}  // namespace

// ---- Partition, Points, TetraCells, FaceList ----

unsigned Partition::count() const { return unsigned(m_->tetraCount() + 1); }
unsigned Partition::get(unsigned t) const {
    checkIndex(t, m_->tetraCount() + 1, "Partition get: tetra");
    return m_->region(t);
}
unsigned Partition::regionCount() const { return m_->regionCount(); }
void Partition::assign(unsigned, unsigned) {
    throw ParameterError("Partition assign: meshes are immutable here; build a new mesh with the regions you need");
}

unsigned Points::size() const { return unsigned(m_->pointCount() + 1); }
std::string Points::get(unsigned i) const {
    checkIndex(i, m_->pointCount() + 1, "Points get: point");
    return formatVec3(m_->point(i));
}

unsigned TetraCells::size() const { return unsigned(m_->tetraCount() + 1); }
std::string TetraCells::get(unsigned t) const {
    checkIndex(t, m_->tetraCount() + 1, "TetraCells get: tetra");
    const auto& T = m_->tetra(t);
    return std::to_string(T[0]) + " " + std::to_string(T[1]) + " " + std::to_string(T[2]) + " " +
           std::to_string(T[3]);
}

unsigned FaceList::size() const { return unsigned(f_.size()); }
unsigned FaceList::get(unsigned i) const {
    checkIndex(i, f_.size(), "FaceList get: index");
    return f_[i];
}

// ---- TetraMesh ----

TetraMesh::TetraMesh() = default;

const std::shared_ptr<fm::TetraMesh>& TetraMesh::ptr() const {
    if (!m_) throw ParameterError("TetraMesh is empty (read or build a mesh first)");
    return m_;
}
std::string TetraMesh::unitDimension() const { return ptr()->unitDimension; }
void TetraMesh::unitDimension(const std::string& u) {
    ptr()->unitDimension = fmtcl::checkUnit(u, "TetraMesh unitDimension");
}
Partition* TetraMesh::regions() const { return new Partition(ptr()); }
Points* TetraMesh::points() const { return new Points(ptr()); }
TetraCells* TetraMesh::tetraCells() const { return new TetraCells(ptr()); }

FaceList* TetraMesh::internalFacesForFluenceCounting() const {
    const fm::TetraMesh& m = *ptr();
    std::vector<uint32_t> f;
    for (uint32_t i = 1; i <= m.faceCount(); ++i) {
        const fm::MeshFace& F = m.face(i);
        if (F.other && m.region(F.owner) != m.region(F.other)) f.push_back(i);
    }
    return new FaceList(std::move(f));
}

FaceList* TetraMesh::internalFacesForFluenceCounting(VolumeCellInRegionPredicate* p) const {
    unsigned r = fmtcl::need(p, "internalFacesForFluenceCounting").region();
    std::vector<uint32_t> f;
    for (auto [face, tetra] : ptr()->regionBoundary(r)) f.push_back(face);
    return new FaceList(std::move(f));
}

unsigned TetraMesh::pointCount() const { return unsigned(ptr()->pointCount()); }
unsigned TetraMesh::tetraCount() const { return unsigned(ptr()->tetraCount()); }
unsigned TetraMesh::faceCount() const { return unsigned(ptr()->faceCount()); }
std::string TetraMesh::checkWarnings() const { return fmtcl::tclList(ptr()->checkReport().warnings()); }
unsigned TetraMesh::componentCount() const { return unsigned(ptr()->checkReport().components); }
double TetraMesh::checkTolerance() const { return ptr()->checkReport().tolerance; }
unsigned TetraMesh::regionCount() const { return ptr()->regionCount(); }
unsigned TetraMesh::boundaryFaceCount() const { return unsigned(ptr()->boundaryFaces().size()); }
unsigned TetraMesh::region(unsigned t) const {
    checkIndex(t, ptr()->tetraCount() + 1, "TetraMesh region: tetra");
    return m_->region(t);
}
double TetraMesh::volume(unsigned t) const {
    checkIndex(t, ptr()->tetraCount() + 1, "TetraMesh volume: tetra");
    return m_->volume(t);
}
double TetraMesh::regionVolume(unsigned r) const { return ptr()->regionVolume(r); }
double TetraMesh::faceArea(unsigned f) const {
    checkIndex(f, ptr()->faceCount() + 1, "TetraMesh faceArea: face");
    return m_->face(f).area;
}
std::string TetraMesh::facePoints(unsigned f) const {
    checkIndex(f, ptr()->faceCount() + 1, "TetraMesh facePoints: face");
    const auto& p = m_->face(f).points;
    return std::to_string(p[0]) + " " + std::to_string(p[1]) + " " + std::to_string(p[2]);
}
std::string TetraMesh::faceCentroid(unsigned f) const {
    checkIndex(f, ptr()->faceCount() + 1, "TetraMesh faceCentroid: face");
    fm::Point3 c{0, 0, 0};
    for (uint32_t p : m_->face(f).points)
        for (int k = 0; k < 3; ++k) c[k] += m_->point(p)[k] / 3.0;
    return formatVec3(c);
}
std::string TetraMesh::faceNormal(unsigned f) const {
    checkIndex(f, ptr()->faceCount() + 1, "TetraMesh faceNormal: face");
    return formatVec3(m_->face(f).normal);
}
std::string TetraMesh::boundaryFaceIDs() const {
    std::string s;
    for (uint32_t f : ptr()->boundaryFaces()) s += (s.empty() ? "" : " ") + std::to_string(f);
    return s;
}
std::string TetraMesh::tetraCentroid(unsigned t) const {
    checkIndex(t, ptr()->tetraCount() + 1, "TetraMesh tetraCentroid: tetra");
    fm::Point3 c{0, 0, 0};
    for (uint32_t p : m_->tetra(t))
        for (int k = 0; k < 3; ++k) c[k] += 0.25 * m_->point(p)[k];
    return formatVec3(c);
}

unsigned TetraMesh::locate(const std::string& xyz) const {
    return ptr()->locate(parseVec3(xyz, "TetraMesh locate"));
}
std::string TetraMesh::bounds() const {
    auto b = ptr()->bounds();
    return formatVec3(b[0]) + formatVec3(b[1]);
}

// ---- Material ----

Material::Material() : d_(std::make_shared<MaterialData>()) {}
Material::Material(double a, double s, double g, double n) : Material() {
    absorptionCoeff(a);
    scatteringCoeff(s);
    anisotropy(g);
    refractiveIndex(n);
}
double Material::absorptionCoeff() const { return d_->m.mu_a; }
void Material::absorptionCoeff(double v) { d_->m.mu_a = fmtcl::nonNegative(v, "Material absorptionCoeff"); }
double Material::scatteringCoeff() const { return d_->m.mu_s; }
void Material::scatteringCoeff(double v) { d_->m.mu_s = fmtcl::nonNegative(v, "Material scatteringCoeff"); }
double Material::reducedScatteringCoeff() const { return d_->m.mu_s * (1 - d_->m.g); }
void Material::reducedScatteringCoeff(double v) {
    if (d_->m.g == 1)
        throw ParameterError("Material reducedScatteringCoeff: with anisotropy 1 (no deflection) it is 0; "
                             "set scatteringCoeff instead");
    d_->m.mu_s = fmtcl::nonNegative(v, "Material reducedScatteringCoeff") / (1 - d_->m.g);
}
double Material::anisotropy() const { return d_->m.g; }
// g = 1 (FullMonte 2018 took any g) is a medium that never deflects: kept as given here, run as
// the same medium without scattering (MaterialSet::build).
void Material::anisotropy(double g) {
    if (!(std::fabs(g) < 1 || g == 1))
        throw ParameterError("Material anisotropy must satisfy |g| < 1 (or be 1: no deflection), got " +
                             std::to_string(g));
    d_->m.g = g;
}
double Material::refractiveIndex() const { return d_->m.n; }
void Material::refractiveIndex(double n) { d_->m.n = fmtcl::positive(n, "Material refractiveIndex"); }
std::string Material::unitDimension() const { return d_->unit; }
void Material::unitDimension(const std::string& u) { d_->unit = fmtcl::checkUnit(u, "Material unitDimension"); }

// ---- MaterialSet ----

MaterialSet::MaterialSet()
    : m_(std::make_shared<std::vector<std::shared_ptr<MaterialData>>>()),
      matched_(std::make_shared<bool>(false)) {
    auto ext = std::make_shared<MaterialData>();
    ext->m = fm::Material(0, 0, 0, 1);
    m_->push_back(ext);
}

MaterialSet::MaterialSet(const fm::MaterialSet& ms) : MaterialSet() {
    m_->clear();
    for (size_t i = 0; i < ms.size(); ++i) {
        auto d = std::make_shared<MaterialData>();
        d->m = ms.material(i);
        m_->push_back(d);
    }
    *matched_ = ms.matchedBoundary;
}

void MaterialSet::exterior(Material* m) { (*m_)[0] = fmtcl::need(m, "MaterialSet exterior").data(); }
Material* MaterialSet::exterior() const { return new Material((*m_)[0]); }
unsigned MaterialSet::append(Material* m) {
    m_->push_back(fmtcl::need(m, "MaterialSet append").data());
    return unsigned(m_->size() - 1);
}
void MaterialSet::set(unsigned i, Material* m) {
    fm::checkMaterialSlot(i, "MaterialSet set");
    auto d = fmtcl::need(m, "MaterialSet set").data();
    if (i >= m_->size()) m_->resize(i + 1);
    (*m_)[i] = d;
}
Material* MaterialSet::material(unsigned i) const {
    if (i >= m_->size() || !(*m_)[i])
        throw ParameterError("MaterialSet material: no material " + std::to_string(i) + " (" +
                             std::to_string(m_->size()) + " slots incl. the exterior)");
    return new Material((*m_)[i]);
}
unsigned MaterialSet::size() const { return unsigned(m_->size()); }
unsigned MaterialSet::count() const { return size(); }
bool MaterialSet::matchedBoundary() const { return *matched_; }
void MaterialSet::matchedBoundary(bool b) { *matched_ = b; }

fm::MaterialSet MaterialSet::build(const std::string& lengthUnit) const {
    double meshMM = fmtcl::unitLengthMM(lengthUnit);
    fm::MaterialSet out;
    for (size_t i = 0; i < m_->size(); ++i) {
        const auto& d = (*m_)[i];
        if (!d) throw fm::ModelError("MaterialSet: slot " + std::to_string(i) + " was never set");
        fm::Material m = d->m;
        // mu in 1/materialUnit -> 1/meshUnit: multiply by meshUnit/materialUnit.
        double f = meshMM / fmtcl::unitLengthMM(d->unit);
        m.mu_a *= f;
        m.mu_s *= f;
        out.set(i, fm::nonDeflectingAsClear(m));
    }
    out.matchedBoundary = *matched_;
    return out;
}

// ---- VolumeCellInRegionPredicate ----

void VolumeCellInRegionPredicate::setRegion(unsigned r) { r_ = r; }
unsigned VolumeCellInRegionPredicate::region() const { return r_; }

// ---- BoxMeshBuilder ----

struct BoxMeshBuilder::Shape : fm::RegionShape {};

void BoxMeshBuilder::lower(const std::string& xyz) { lo_ = parseVec3(xyz, "BoxMeshBuilder lower"); }
void BoxMeshBuilder::upper(const std::string& xyz) { hi_ = parseVec3(xyz, "BoxMeshBuilder upper"); }
void BoxMeshBuilder::divisions(unsigned nx, unsigned ny, unsigned nz) {
    if (!nx || !ny || !nz) throw ParameterError("BoxMeshBuilder divisions must be >= 1");
    n_[0] = nx;
    n_[1] = ny;
    n_[2] = nz;
}
void BoxMeshBuilder::region(unsigned r) {
    if (!r) throw ParameterError("BoxMeshBuilder region: 0 is the exterior");
    background_ = r;
}
void BoxMeshBuilder::addBox(unsigned r, const std::string& lo, const std::string& hi) {
    shapes_.push_back(std::make_shared<Shape>(Shape{{fm::RegionShape::Box, r, parseVec3(lo, "addBox lower"),
                                                     parseVec3(hi, "addBox upper"), 0}}));
}
void BoxMeshBuilder::addSphere(unsigned r, const std::string& c, double radius) {
    shapes_.push_back(std::make_shared<Shape>(Shape{{fm::RegionShape::Sphere, r, parseVec3(c, "addSphere centre"), {},
                                                     fmtcl::positive(radius, "addSphere radius")}}));
}
void BoxMeshBuilder::addCylinder(unsigned r, const std::string& a, const std::string& b, double radius) {
    shapes_.push_back(std::make_shared<Shape>(Shape{{fm::RegionShape::Cylinder, r, parseVec3(a, "addCylinder endpoint 0"),
                                                     parseVec3(b, "addCylinder endpoint 1"),
                                                     fmtcl::positive(radius, "addCylinder radius")}}));
}
void BoxMeshBuilder::addShell(unsigned r, double thickness) {
    shapes_.push_back(std::make_shared<Shape>(
        Shape{{fm::RegionShape::Shell, r, {}, {}, fmtcl::positive(thickness, "addShell thickness")}}));
}
void BoxMeshBuilder::clearShapes() { shapes_.clear(); }

uint32_t BoxMeshBuilder::regionOf(const fm::Point3& c) const {
    uint32_t r = background_;
    for (const auto& s : shapes_)
        if (s->contains(c, lo_, hi_)) r = s->region;
    return r;
}

void BoxMeshBuilder::update() {
    for (const auto& s : shapes_)
        if (!s->region) throw ParameterError("BoxMeshBuilder: region 0 is the exterior; shapes need regions >= 1");
    mesh_ = std::make_shared<fm::TetraMesh>(fm::makeBoxMesh(
        lo_, hi_, n_[0], n_[1], n_[2], [this](const fm::Point3& c) { return regionOf(c); }));
    fmtcl::reportWarnings(mesh_->checkReport().warnings());
}

TetraMesh* BoxMeshBuilder::mesh() const {
    if (!mesh_) throw ParameterError("BoxMeshBuilder mesh: call update first");
    return new TetraMesh(mesh_);
}
