// SPDX-License-Identifier: GPL-3.0-or-later
#include "Geometry/ModelFingerprint.hpp"

#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>

namespace fm {
namespace {

static_assert(std::numeric_limits<double>::is_iec559, "the fingerprint hashes IEEE 754 doubles");

// 64-bit FNV-1a over the bytes given, each value as canonical little-endian bytes whatever the
// host's order: integers as 4 or 8 bytes, reals as the 8 bytes of their IEEE 754 double (-0 as
// +0, every NaN as 0x7ff8000000000000), text as its length (8 bytes) and its bytes. Every part
// starts with a tag naming it, so two parts never hash the same bytes.
class Fnv1a {
public:
    explicit Fnv1a(const char* tag) { text(tag); }
    void byte(uint8_t b) { h_ = (h_ ^ b) * 0x100000001b3ull; }
    void u32(uint32_t v) {
        for (int i = 0; i < 4; ++i) byte(uint8_t(v >> (8 * i)));
    }
    void u64(uint64_t v) {
        for (int i = 0; i < 8; ++i) byte(uint8_t(v >> (8 * i)));
    }
    void f64(double v) {
        uint64_t bits = 0x7ff8000000000000ull;
        if (v == 0) v = 0.0;  // -0 and +0 are the same model
        if (v == v) std::memcpy(&bits, &v, 8);
        u64(bits);
    }
    void point(const Point3& p) { f64(p[0]), f64(p[1]), f64(p[2]); }
    void text(const std::string& s) {
        u64(s.size());
        for (char c : s) byte(uint8_t(c));
    }
    // Folded to 48 bits (the high 16 onto the low ones); 0 is kept for "no fingerprint".
    uint64_t part() const {
        const uint64_t p = (h_ ^ (h_ >> 48)) & kFingerprintPartMask;
        return p ? p : 1;
    }

private:
    uint64_t h_ = 0xcbf29ce484222325ull;
};

// The mesh's points, tetras and regions hashed once per mesh object: a mesh never changes once
// built, and its identity() is the mesh's own (Geometry/TetraMesh.hpp), so the runs of a loop
// over one mesh (Tcl, Python) do not hash it again. The length unit, which may change, is added
// after.
Fnv1a meshGeometryHash(const TetraMesh& mesh) {
    static std::mutex m;
    static uint64_t lastIdentity = 0;
    static Fnv1a last("");
    {
        std::lock_guard<std::mutex> g(m);
        if (lastIdentity == mesh.identity() && lastIdentity != 0) return last;
    }
    Fnv1a h("FullMonte mesh 1");
    h.u64(mesh.pointCount());
    for (uint32_t i = 1; i <= mesh.pointCount(); ++i) h.point(mesh.point(i));
    h.u64(mesh.tetraCount());
    for (uint32_t t = 1; t <= mesh.tetraCount(); ++t) {
        for (uint32_t p : mesh.tetra(t)) h.u32(p);
        h.u32(mesh.region(t));
    }
    std::lock_guard<std::mutex> g(m);
    lastIdentity = mesh.identity();
    last = h;
    return h;
}

void describeSource(Fnv1a& h, const Source* s);

void describeElements(Fnv1a& h, const CompositeSource& c) {
    h.u64(c.elements.size());
    for (const SourcePtr& e : c.elements) {
        h.f64(e ? e->power : 0.0);  // relative weights within the composite
        describeSource(h, e.get());
    }
}

// The kind, then the fields that shape where and how the source emits. Element hints (a tetra
// that holds a point) only speed up the search for it and are left out.
void describeSource(Fnv1a& h, const Source* s) {
    if (!s) {
        h.text("none");
        return;
    }
    h.text(s->typeName());
    if (auto* p = dynamic_cast<const PointSource*>(s)) {
        h.point(p->position);
    } else if (auto* b = dynamic_cast<const PencilBeamSource*>(s)) {
        h.point(b->position), h.point(b->direction), h.f64(b->radius), h.byte(b->specularAtEntry);
    } else if (auto* ball = dynamic_cast<const BallSource*>(s)) {
        h.point(ball->centre), h.f64(ball->radius);
    } else if (auto* l = dynamic_cast<const LineSource*>(s)) {
        h.point(l->endpoint[0]), h.point(l->endpoint[1]), h.u32(uint32_t(l->pattern));
    } else if (auto* v = dynamic_cast<const VolumeSource*>(s)) {
        h.u32(v->element), h.u32(v->region);
    } else if (auto* f = dynamic_cast<const SurfaceSource*>(s)) {
        h.u64(f->faces.size());
        for (uint32_t id : f->faces) h.u32(id);
        h.u64(f->triangles.size());
        for (const auto& t : f->triangles) h.u32(t[0]), h.u32(t[1]), h.u32(t[2]);
        h.u64(f->sides.size());
        for (const auto& [face, tetra] : f->sides) h.u32(face), h.u32(tetra);
        h.u32(f->region), h.u32(uint32_t(f->emission)), h.f64(f->numericalAperture);
    } else if (auto* fi = dynamic_cast<const FiberSource*>(s)) {
        h.point(fi->position), h.point(fi->direction), h.f64(fi->numericalAperture), h.byte(fi->specularAtEntry);
    } else if (auto* d = dynamic_cast<const DiskSource*>(s)) {
        h.point(d->centre), h.point(d->direction), h.f64(d->radius), h.byte(d->specularAtEntry);
    } else if (auto* q = dynamic_cast<const PlanarSource*>(s)) {
        h.point(q->corner), h.point(q->side1), h.point(q->side2), h.point(q->direction), h.byte(q->specularAtEntry);
    } else if (auto* c = dynamic_cast<const CylinderSource*>(s)) {
        h.point(c->endpoint[0]), h.point(c->endpoint[1]), h.f64(c->radius), h.byte(c->emitVolume),
            h.byte(c->emitHemiSphere), h.u32(uint32_t(c->hemiSphereEmitDistribution)), h.f64(c->numericalAperture);
    } else if (auto* comp = dynamic_cast<const CompositeSource*>(s)) {
        describeElements(h, *comp);
    }
}

}  // namespace

uint64_t meshFingerprint(const TetraMesh& mesh) {
    Fnv1a h = meshGeometryHash(mesh);
    h.text(mesh.unitDimension);
    return h.part();
}

uint64_t materialsFingerprint(const std::vector<MaterialSet>& sets) {
    Fnv1a h("FullMonte materials 1");
    h.u64(sets.size());
    for (const MaterialSet& s : sets) {
        h.u64(s.size());
        h.byte(s.matchedBoundary);
        h.f64(s.exterior().n);  // only the exterior's index matters
        for (size_t i = 1; i < s.size(); ++i) {
            const Material& m = s.material(i);
            h.f64(m.mu_a), h.f64(m.mu_s), h.f64(m.g), h.f64(m.n);
        }
    }
    return h.part();
}

uint64_t sourcesFingerprint(const std::vector<SourcePtr>& sources) {
    Fnv1a h("FullMonte sources 1");
    h.u64(sources.size());
    for (const SourcePtr& s : sources) describeSource(h, s.get());
    return h.part();
}

uint64_t runsFingerprint(const std::vector<uint64_t>& packetsPerColumn, const KernelParams& p) {
    Fnv1a h("FullMonte runs 1");
    h.u64(packetsPerColumn.size());
    for (uint64_t n : packetsPerColumn) h.u64(n);
    h.f64(p.wmin), h.f64(p.prwin), h.u32(p.maxSteps), h.u32(p.maxHits);
    return h.part();
}

ModelFingerprint modelFingerprint(const TetraMesh& mesh, const std::vector<MaterialSet>& sets,
                                  const std::vector<SourcePtr>& sources, const std::vector<uint64_t>& packetsPerColumn,
                                  const KernelParams& params) {
    ModelFingerprint f;
    f.mesh = meshFingerprint(mesh);
    f.materials = materialsFingerprint(sets);
    f.sources = sourcesFingerprint(sources);
    f.runs = runsFingerprint(packetsPerColumn, params);
    return f;
}

std::vector<std::string> fingerprintDifferences(const ModelFingerprint& a, const ModelFingerprint& b) {
    std::vector<std::string> d;
    if (a.mesh != b.mesh) d.push_back("mesh");
    if (a.materials != b.materials) d.push_back("materials");
    if (a.sources != b.sources) d.push_back("sources");
    if (a.runs != b.runs) d.push_back("packets or kernel settings");
    return d;
}

std::string fingerprintText(const ModelFingerprint& f) {
    if (f.none()) return "none";
    char b[128];
    std::snprintf(b, sizeof b, "mesh %012llx, materials %012llx, sources %012llx, runs %012llx",
                  (unsigned long long)f.mesh, (unsigned long long)f.materials, (unsigned long long)f.sources,
                  (unsigned long long)f.runs);
    return b;
}

}  // namespace fm
