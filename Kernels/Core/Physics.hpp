// The physics of one packet step, written once for CPU and GPU: exit face of a cell, Fresnel
// and Snell at an interface, Henyey-Greenstein and isotropic directions.
#pragma once
#include <math.h>
#include "Kernels/Core/Records.hpp"
#include "Kernels/Core/Rng.hpp"

namespace fm {

FM_HD float fm_log(float x) {
#if defined(__CUDA_ARCH__)
    return __logf(x);
#else
    return logf(x);
#endif
}

FM_HD void fm_sincos(float a, float& s, float& c) {
#if defined(__CUDA_ARCH__)
    __sincosf(a, &s, &c);
#else
    s = sinf(a);
    c = cosf(a);
#endif
}

// The face a packet leaves a cell through. The face is selected with unrolled compares so that
// the planes are never indexed at run time (on the GPU that would move them to local memory).
struct FaceHit {
    float t;      // distance to the exit face (kInfinity if none: a degenerate cell)
    int face;     // 0..3, or -1
    Vec3 normal;  // outward unit normal of that face
};

// Nearest face the ray leaves through. Only faces the packet moves towards count (dot(n,d) > 0),
// so the face just entered through is never chosen again; a slightly negative distance from
// rounding is clamped to zero rather than letting the packet go backwards.
// Planes is CellPlanes or TetraRecord (same leading members).
template <class Planes>
FM_HD FaceHit exitFace(const Planes& T, Vec3 p, Vec3 d) {
    FaceHit h{kInfinity, -1, Vec3{0.f, 0.f, 0.f}};
    FM_UNROLL
    for (int i = 0; i < 4; ++i) {
        float cosn = T.nx[i] * d.x + T.ny[i] * d.y + T.nz[i] * d.z;
        float height = T.C[i] - (T.nx[i] * p.x + T.ny[i] * p.y + T.nz[i] * p.z);
        float t = cosn > 0.f ? positivePart(height) / cosn : kInfinity;
        if (t < h.t) {
            h.t = t;
            h.face = i;
            h.normal = Vec3{T.nx[i], T.ny[i], T.nz[i]};
        }
    }
    return h;
}

// The exit of cell i of a model that stores four planes per cell (ArrayModel, the GPU's
// DeviceModel). Models without planes() provide their own (SlabModel.hpp).
template <class Model>
FM_HD auto cellExit(const Model& m, uint32_t i, Vec3 p, Vec3 d) -> decltype(m.planes(i), FaceHit{}) {
    return exitFace(m.planes(i), p, d);
}

// Unpolarised Fresnel reflectance for incidence cosine cosi (> 0) from index n1 into n2.
// Returns 1 for total internal reflection; cost receives the transmitted angle's cosine.
FM_HD float fresnelReflectance(float n1, float n2, float cosi, float& cost) {
    float ratio = n1 / n2;
    float sint2 = ratio * ratio * (1.f - cosi * cosi);
    if (sint2 >= 1.f) {
        cost = 0.f;
        return 1.f;
    }
    cost = fm_sqrt(1.f - sint2);
    float rs = (n1 * cosi - n2 * cost) / (n1 * cosi + n2 * cost);
    float rp = (n1 * cost - n2 * cosi) / (n1 * cost + n2 * cosi);
    return 0.5f * (rs * rs + rp * rp);
}

// Mirror d about a plane with unit normal n.
FM_HD Vec3 reflect(Vec3 d, Vec3 n, float cosi) { return d - (2.f * cosi) * n; }

// Snell refraction of unit d through a plane with unit normal n (pointing along the travel),
// cosi = dot(d, n) > 0, cost from fresnelReflectance.
FM_HD Vec3 refract(Vec3 d, Vec3 n, float n1, float n2, float cosi, float cost) {
    float r = n1 / n2;
    return normalize(r * d + (cost - r * cosi) * n);
}

FM_HD Vec3 isotropicDirection(PacketRng& rng) {
    float cost = 2.f * rng.uniform() - 1.f;
    float sint = fm_sqrt(positivePart(1.f - cost * cost));
    float s, c;
    fm_sincos(6.28318530718f * rng.uniform(), s, c);
    return Vec3{sint * c, sint * s, cost};
}

// Cosine of the Henyey-Greenstein deflection angle for anisotropy g.
FM_HD float sampleHG(const MaterialRecord& m, PacketRng& rng) {
    float u = rng.uniform();
    if (fabsf(m.g) < 1e-6f) return 2.f * u - 1.f;
    float f = m.hgB / (1.f - m.g + 2.f * m.g * u);
    float cost = (m.hgA - f * f) / (2.f * m.g);
    return fminf(1.f, fmaxf(-1.f, cost));
}

// Turn unit d by polar cosine cost and a uniform azimuth, in the branch-free orthonormal basis
// of Duff et al. (JCGT 2017): stable at every direction and with no square root, unlike the
// MCML formula and its special case near the poles.
FM_HD Vec3 deflect(Vec3 d, float cost, PacketRng& rng) {
    float sint = fm_sqrt(positivePart(1.f - cost * cost));
    float sp, cp;
    fm_sincos(6.28318530718f * rng.uniform(), sp, cp);
    float sign = copysignf(1.f, d.z);
    float a = -1.f / (sign + d.z);
    float b = d.x * d.y * a;
    Vec3 u{1.f + sign * d.x * d.x * a, sign * b, -sign * d.x};
    Vec3 v{b, sign + d.y * d.y * a, -d.y};
    return normalize(cost * d + (sint * cp) * u + (sint * sp) * v);
}

// Direction in a cone of half-angle acos(cosMax) around unit axis, uniform in solid angle.
FM_HD Vec3 coneDirection(Vec3 axis, float cosMax, PacketRng& rng) {
    float cost = 1.f - rng.uniform() * (1.f - cosMax);
    return deflect(axis, cost, rng);
}

// Lambertian (cosine-weighted) direction around the unit axis.
FM_HD Vec3 lambertDirection(Vec3 axis, PacketRng& rng) {
    float cost = fm_sqrt(rng.uniformOpen());
    return deflect(axis, cost, rng);
}

}  // namespace fm
