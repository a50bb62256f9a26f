// SPDX-License-Identifier: GPL-3.0-or-later
// Source emission, shared by CPU and GPU: every source is compiled on the host (Geometry/Sources)
// into primitive emitters plus "pieces" (tetras, faces, segments), and a packet's launch record
// is drawn from them with the packet's own random stream. The GPU thus emits on the device with
// the same code the CPU uses, and no launch records cross PCIe.
#pragma once
#include "Kernels/Core/Physics.hpp"

namespace fm {

enum EmitterType : uint32_t {
    kEmitPoint = 0,      // isotropic (or cone) from pos in tetra
    kEmitPencil = 1,     // fixed pos/dir/tetra/weight (specular already taken)
    kEmitVolume = 2,     // uniform in volume pieces (tetras); optional ball/cylinder rejection, or
                         // uniform in the ball/cylinder itself (inShape)
    kEmitFaces = 3,      // uniform on face pieces, direction per mode around inward normal
    kEmitLine = 4,       // uniform on segment pieces
    kEmitCylinderSurface = 5,  // on the lateral surface of a cylinder around segment pieces
};

enum DirectionMode : uint32_t {
    kDirIsotropic = 0,
    kDirNormal = 1,      // along the reference normal (inward for faces)
    kDirLambert = 2,     // cosine-weighted around the reference normal
    kDirCone = 3,        // uniform within cosMax of the reference normal
    kDirPerpendicular = 4,  // perpendicular to the axis (line source "normal" pattern)
    kDirHemisphere = 5,  // uniform in the hemisphere around the reference normal
};

enum RejectShape : uint32_t { kRejectNone = 0, kRejectBall = 1, kRejectCylinder = 2 };

// A tetra (a,b,c,d), a triangle (a,b,c; d = inward unit normal) or a segment (a,b).
struct Piece {
    float a[3], b[3], c[3], d[3];
    uint32_t tetra;
    uint32_t pad[3];
};

struct EmitterRecord {
    uint32_t type, tetra, first, count;  // [first, first+count) indexes pieces and pieceCdf
    Vec3 pos, dir;                       // position/centre/axis start; direction/axis unit vector
    float radius, length, cosMax, weight;
    uint32_t mode, reject;
    // A ball or cylinder small against the tetras it touches (kEmitVolume): points are drawn in
    // the shape and their tetra found by a straight walk from the point walkFrom along the axis
    // from pos (the ball's centre: 0), which lies in `tetra`; drawn in the tetras and kept when
    // inside the shape, most would be rejected.
    uint32_t inShape;
    float walkFrom;
};

struct EmitterView {
    const EmitterRecord* emitters;
    const double* emitterCdf;  // cumulative power fraction, last = 1
    uint32_t count;
    const Piece* pieces;
    const double* pieceCdf;    // cumulative within each emitter's range, last of a range = 1
};

FM_HD Vec3 toVec3(const float* v) { return Vec3{v[0], v[1], v[2]}; }

// First index i in [first, first+count) with cdf[i] > u (binary search).
FM_HD uint32_t pickFromCdf(const double* cdf, uint32_t first, uint32_t count, double u) {
    uint32_t lo = first, hi = first + count - 1;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (cdf[mid] > u) hi = mid; else lo = mid + 1;
    }
    return lo;
}

FM_HD Vec3 uniformInTetra(const Piece& p, PacketRng& rng) {
    float s = rng.uniform(), t = rng.uniform(), u = rng.uniform();
    if (s + t > 1.f) { s = 1.f - s; t = 1.f - t; }  // fold the cube into a prism, then a tetra
    if (t + u > 1.f) {
        float tmp = u; u = 1.f - s - t; t = 1.f - tmp;
    } else if (s + t + u > 1.f) {
        float tmp = u; u = s + t + u - 1.f; s = 1.f - t - tmp;
    }
    Vec3 a = toVec3(p.a);
    return a + s * (toVec3(p.b) - a) + t * (toVec3(p.c) - a) + u * (toVec3(p.d) - a);
}

FM_HD Vec3 uniformInTriangle(const Piece& p, PacketRng& rng) {
    float r1 = fm_sqrt(rng.uniform()), r2 = rng.uniform();
    return (1.f - r1) * toVec3(p.a) + (r1 * (1.f - r2)) * toVec3(p.b) + (r1 * r2) * toVec3(p.c);
}

FM_HD Vec3 emitDirection(uint32_t mode, Vec3 ref, float cosMax, PacketRng& rng) {
    switch (mode) {
        case kDirNormal: return ref;
        case kDirLambert: return lambertDirection(ref, rng);
        case kDirCone: return coneDirection(ref, cosMax, rng);
        case kDirHemisphere: return coneDirection(ref, 0.f, rng);
        case kDirPerpendicular: return deflect(ref, 0.f, rng);
        default: return isotropicDirection(rng);
    }
}

FM_HD bool insideShape(const EmitterRecord& e, Vec3 p) {
    Vec3 r = p - e.pos;
    if (e.reject == kRejectBall) return dot(r, r) <= e.radius * e.radius;
    if (e.reject == kRejectCylinder) {
        float along = dot(r, e.dir);
        Vec3 radial = r - along * e.dir;
        return along >= 0.f && along <= e.length && dot(radial, radial) <= e.radius * e.radius;
    }
    return true;
}

// A point uniform in the emitter's ball or cylinder (insideShape's shape).
FM_HD Vec3 uniformInShape(const EmitterRecord& e, PacketRng& rng) {
    if (e.reject == kRejectBall) {
        // The largest of three uniforms has density 3 r^2 on [0, 1]: the radius of a point
        // uniform in the unit ball.
        const float u1 = rng.uniform(), u2 = rng.uniform(), u3 = rng.uniform();
        const float r = e.radius * fmaxf(u1, fmaxf(u2, u3));
        return e.pos + r * isotropicDirection(rng);
    }
    const float along = e.length * rng.uniform();
    const float r = e.radius * fm_sqrt(rng.uniform());
    return e.pos + along * e.dir + r * deflect(e.dir, 0.f, rng);  // a unit vector across the axis
}

// Walk in a straight line from `from` (inside cell `tetra`) to `to`; returns the cell holding
// `to`, or 0 when the segment leaves the mesh or the walk does not settle.
template <class Model>
FM_HD uint32_t walkTo(const Model& m, uint32_t tetra, Vec3 from, Vec3 to) {
    Vec3 d = to - from;
    float len = norm(d);
    if (len <= 0.f) return tetra;
    d = (1.f / len) * d;
    for (int hops = 0; hops < 100000; ++hops) {
        FaceHit h = cellExit(m, tetra, from, d);
        if (h.t >= len) return tetra;
        if (h.face < 0) return 0;
        uint32_t next = m.adjacent(tetra, h.face);
        if (isExterior(next)) return 0;
        from = from + h.t * d;
        len -= h.t;
        tetra = next;
    }
    return 0;
}

constexpr int kMaxRejections = 10000;

// Draw a launch record. weight = 0 marks a failed emission, booked abnormal by the caller.
template <class Model>
FM_HD LaunchRecord emit(const Model& m, const EmitterView& v, PacketRng& rng) {
    uint32_t ei = v.count > 1 ? pickFromCdf(v.emitterCdf, 0, v.count, rng.uniformDouble()) : 0;
    const EmitterRecord& e = v.emitters[ei];
    LaunchRecord L{e.pos, e.dir, e.tetra, e.weight};
    switch (e.type) {
        case kEmitPoint:
            L.dir = emitDirection(e.mode, e.dir, e.cosMax, rng);
            return L;
        case kEmitPencil:
            return L;
        case kEmitVolume:
            if (e.inShape) {
                const Vec3 from = e.pos + e.walkFrom * e.dir;
                for (int k = 0; k < kMaxRejections; ++k) {
                    const Vec3 x = uniformInShape(e, rng);
                    const uint32_t t = walkTo(m, e.tetra, from, x);
                    if (t == 0) continue;  // outside the mesh: drawn again, as the tetras' draw never goes there
                    L.pos = x;
                    L.tetra = t;
                    L.dir = emitDirection(e.mode, e.dir, e.cosMax, rng);
                    return L;
                }
                L.weight = 0.f;
                return L;
            }
            for (int k = 0; k < kMaxRejections; ++k) {
                const Piece& p = v.pieces[pickFromCdf(v.pieceCdf, e.first, e.count, rng.uniformDouble())];
                Vec3 x = uniformInTetra(p, rng);
                if (!insideShape(e, x)) continue;
                L.pos = x;
                L.tetra = p.tetra;
                L.dir = emitDirection(e.mode, e.dir, e.cosMax, rng);
                return L;
            }
            L.weight = 0.f;
            return L;
        case kEmitFaces:  // rejection: a disk beam keeps the points inside its cylinder
            for (int k = 0; k < kMaxRejections; ++k) {
                const Piece& p = v.pieces[pickFromCdf(v.pieceCdf, e.first, e.count, rng.uniformDouble())];
                Vec3 x = uniformInTriangle(p, rng);
                if (!insideShape(e, x)) continue;
                L.pos = x;
                L.tetra = p.tetra;
                L.dir = emitDirection(e.mode, toVec3(p.d), e.cosMax, rng);
                return L;
            }
            L.weight = 0.f;
            return L;
        case kEmitLine: {
            const Piece& p = v.pieces[pickFromCdf(v.pieceCdf, e.first, e.count, rng.uniformDouble())];
            Vec3 a = toVec3(p.a);
            L.pos = a + rng.uniform() * (toVec3(p.b) - a);
            L.tetra = p.tetra;
            L.dir = emitDirection(e.mode, e.dir, e.cosMax, rng);
            return L;
        }
        case kEmitCylinderSurface: {
            const Piece& p = v.pieces[pickFromCdf(v.pieceCdf, e.first, e.count, rng.uniformDouble())];
            Vec3 a = toVec3(p.a);
            Vec3 axisPoint = a + rng.uniform() * (toVec3(p.b) - a);
            Vec3 radial = deflect(e.dir, 0.f, rng);  // random unit vector perpendicular to the axis
            L.pos = axisPoint + e.radius * radial;
            L.tetra = walkTo(m, p.tetra, axisPoint, L.pos);
            L.dir = emitDirection(e.mode, radial, e.cosMax, rng);
            if (L.tetra == 0) L.weight = 0.f;
            return L;
        }
        default:
            L.weight = 0.f;
            return L;
    }
}

}  // namespace fm
