// SPDX-License-Identifier: GPL-3.0-or-later
// Mesh construction without a text format in the way: bytes choose points (from a table of grid
// values, sliver offsets, huge values, NaN, inf), tetras (indices including 0 and out of range),
// regions, materials and a source of any type. Either a conforming box mesh with perturbed
// points (slivers, inverted tetras) or free-form tetras. Whatever TetraMesh and packModel accept
// is simulated with small guards; whatever they reject must be an fm::Error.
#include <limits>
#include <map>

#include "Geometry/MeshBuilder.hpp"
#include "Tests/Fuzz/FuzzModel.hpp"

namespace {

using fm::Point3;

class Bytes {
public:
    Bytes(const uint8_t* d, size_t n) : d_(d), n_(n) {}
    uint8_t next() { return i_ < n_ ? d_[i_++] : 0; }
    template <class T, size_t N>
    T pick(const T (&table)[N]) { return table[next() % N]; }

private:
    const uint8_t* d_;
    size_t n_, i_ = 0;
};

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Mostly a half-unit grid (coplanar and coincident points come easily), plus the values that
// break geometry code. The top three bits add a small offset: near-degenerate tetras.
double coordinate(Bytes& b) {
    static const double kSpecial[] = {1e-7, 1e-13, -1e-7, 1e-300, 1e6, 1e20, 1e31, 1e300,
                                      -1e300, kNaN, kInf, -0.0};
    uint8_t v = b.next();
    int c = v & 31;
    double x = c < 20 ? (c - 10) * 0.5 : kSpecial[c - 20];
    return x + (v >> 5) * 1e-6;
}

Point3 point(Bytes& b) { return {coordinate(b), coordinate(b), coordinate(b)}; }

fm::TetraMesh freeForm(Bytes& b) {
    const uint32_t np = 4 + b.next() % 13, nt = 1 + b.next() % 12;
    std::vector<Point3> pts(1, Point3{0, 0, 0});
    for (uint32_t i = 0; i < np; ++i) pts.push_back(point(b));
    std::vector<fm::TetraPoints> tets(1, fm::TetraPoints{0, 0, 0, 0});
    std::vector<uint32_t> regions(1, 0);
    for (uint32_t t = 0; t < nt; ++t) {
        fm::TetraPoints T;
        for (auto& v : T) v = b.next() % (np + 2);  // 0 and np+1 are invalid
        tets.push_back(T);
        regions.push_back(b.next() % 4);             // 0 is invalid
    }
    return fm::TetraMesh(std::move(pts), std::move(tets), std::move(regions));
}

// Unit-cube box meshes of up to 2x2x2 cubes (48 tetras), two regions split at x = split/8.
// Built once each: building meshes is most of the cost of an input.
const fm::TetraMesh& boxMesh(unsigned nx, unsigned ny, unsigned nz, unsigned split) {
    static std::map<unsigned, fm::TetraMesh> cache;
    const unsigned key = ((nx * 3 + ny) * 3 + nz) * 9 + split;
    auto it = cache.find(key);
    if (it == cache.end())
        it = cache.emplace(key, fm::makeBoxMesh({0, 0, 0}, {1, 1, 1}, nx, ny, nz, [&](const Point3& c) {
                 return 1u + (c[0] * 8 > split ? 1u : 0u);
             })).first;
    return it->second;
}

// A conforming box mesh whose points are then moved: slivers, inversions, overlaps.
fm::TetraMesh perturbedBox(Bytes& b) {
    const unsigned nx = 1 + b.next() % 2, ny = 1 + b.next() % 2, nz = 1 + b.next() % 2;
    const fm::TetraMesh& box = boxMesh(nx, ny, nz, b.next() % 9);
    std::vector<Point3> pts = box.points();
    for (unsigned moves = b.next() % 6; moves > 0; --moves) {
        Point3& p = pts[1 + b.next() % box.pointCount()];
        const int axis = b.next() % 3;
        static const double kShift[] = {0.5, -0.5, 1e-7, -1e-7, 0.999999, 1e-13, 2.0, kNaN};
        p[axis] += b.pick(kShift);
    }
    return fm::TetraMesh(std::move(pts), box.tetras(), box.regions());
}

fm::MaterialSet materials(Bytes& b) {
    static const double kMua[] = {0, 0.01, 0.1, 1, 10, -1, kNaN, 1e35};
    static const double kMus[] = {0, 1, 10, 100, 1e4, -1, kInf, 1e35};
    static const double kG[] = {0, 0.5, 0.9, -0.9, 0.99999, 1, -1, kNaN};
    static const double kN[] = {1, 1.33, 1.5, 3, 0.5, 0, -1, 1e35};
    fm::MaterialSet ms;
    ms.exterior(fm::Material(0, 0, 0, b.pick(kN)));
    ms.matchedBoundary = b.next() & 1;
    for (unsigned n = 1 + b.next() % 3; n > 0; --n)
        ms.append(fm::Material(b.pick(kMua), b.pick(kMus), b.pick(kG), b.pick(kN)));
    return ms;
}

fm::SourcePtr source(Bytes& b) {
    static const double kPower[] = {1, 1, 1, 0.5, 0, -1, kNaN, 1e300};
    static const double kRadius[] = {0.5, 0.1, 1e-9, 0, -1, 10, kNaN, 1e30};
    fm::SourcePtr src;
    switch (b.next() % 9) {
        case 0: { auto s = std::make_shared<fm::PointSource>(); s->position = point(b); s->elementHint = b.next(); src = s; break; }
        case 1: { auto s = std::make_shared<fm::PencilBeamSource>(); s->position = point(b); s->direction = point(b); s->elementHint = b.next(); src = s; break; }
        case 2: { auto s = std::make_shared<fm::VolumeSource>(); s->element = b.next() % 16; s->region = b.next() % 5; src = s; break; }
        case 3: { auto s = std::make_shared<fm::SurfaceSource>(); if (b.next() & 1) s->faces.push_back(b.next()); s->region = b.next() % 5; s->emission = fm::SurfaceSource::Emission(b.next() % 3); src = s; break; }
        case 4: { auto s = std::make_shared<fm::BallSource>(); s->centre = point(b); s->radius = b.pick(kRadius); src = s; break; }
        case 5: { auto s = std::make_shared<fm::LineSource>(); s->endpoint[0] = point(b); s->endpoint[1] = point(b); s->pattern = fm::LineSource::Pattern(b.next() % 2); src = s; break; }
        case 6: { auto s = std::make_shared<fm::FiberSource>(); s->position = point(b); s->direction = point(b); s->numericalAperture = b.pick(kRadius); src = s; break; }
        case 7: {
            auto s = std::make_shared<fm::CylinderSource>();
            s->endpoint[0] = point(b); s->endpoint[1] = point(b); s->radius = b.pick(kRadius);
            uint8_t f = b.next();
            s->emitVolume = f & 1; s->emitHemiSphere = f & 2;
            s->hemiSphereEmitDistribution = fm::CylinderSource::Distribution((f >> 2) % 3);
            s->numericalAperture = b.pick(kRadius);
            src = s;
            break;
        }
        default: {
            auto s = std::make_shared<fm::CompositeSource>();
            auto a = std::make_shared<fm::PointSource>(); a->position = point(b);
            auto v = std::make_shared<fm::VolumeSource>(); v->element = 1;
            s->elements = {a, v};
            src = s;
        }
    }
    src->power = b.pick(kPower);
    return src;
}

void run(Bytes& b) {
    fm::TetraMesh mesh = (b.next() & 1) ? perturbedBox(b) : freeForm(b);
    for (int i = 0; i < 2; ++i) {  // point location must answer 0 or a tetra that holds the point
        Point3 p = point(b);
        uint32_t t = mesh.locate(p);
        fmfuzz::require(t <= mesh.tetraCount(), "locate returned a tetra that does not exist");
    }
    fm::MaterialSet mats = materials(b);
    fm::SourcePtr src = source(b);
    std::vector<uint32_t> directed;
    if (b.next() & 1) directed.push_back(b.next());
    fm::KernelInput in = fm::packModel(mesh, mats, *src, directed);
    fmfuzz::simulateFew(in, b.next() % 4, 16 + b.next());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    Bytes b(data, size);
    fmfuzz::expectOnlyUserErrors([&] { run(b); });
    return 0;
}
