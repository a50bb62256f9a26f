// SPDX-License-Identifier: GPL-3.0-or-later
// The physics of one packet step, written once for CPU and GPU: exit face of a cell, Fresnel
// and Snell at an interface, Henyey-Greenstein and isotropic directions.
#pragma once
#include <math.h>
#include <string.h>
#include <type_traits>
#include "Kernels/Core/Records.hpp"
#include "Kernels/Core/Rng.hpp"

namespace fm {

// Natural log of x in [2^-24, 1] (the step draw -log(u), u from uniformOpen). Device: the
// __logf intrinsic. Host: inline arithmetic instead of a libm call, so the CPU's lane loops
// vectorise: x = 2^e m with m in [sqrt(1/2), sqrt(2)), log(1 + f) from the Cephes logf
// polynomial (S. Moshier). Over all 2^24 values of uniformOpen the relative error of -log(u)
// against double log is at most 8.1e-8 (Tests/Core/test_physics.cpp checks < 1e-6 exhaustively).
FM_HD float fm_log(float x) {
#if defined(__CUDA_ARCH__)
    return __logf(x);
#else
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    int32_t e = int32_t(bits >> 23) - 126;  // x = m 2^e with m in [1/2, 1): x positive, normal
    bits = (bits & 0x007fffffu) | 0x3f000000u;
    float m;
    memcpy(&m, &bits, sizeof m);
    const bool low = m < 0.707106781186547524f;
    e -= low ? 1 : 0;
    const float f = (low ? m + m : m) - 1.f;  // exact
    const float z = f * f;
    float y = 7.0376836292E-2f;
    y = y * f - 1.1514610310E-1f;
    y = y * f + 1.1676998740E-1f;
    y = y * f - 1.2420140846E-1f;
    y = y * f + 1.4249322787E-1f;
    y = y * f - 1.6668057665E-1f;
    y = y * f + 2.0000714765E-1f;
    y = y * f - 2.4999993993E-1f;
    y = y * f + 3.3333331174E-1f;
    y = y * f * z;
    const float fe = float(e);
    y += -2.12194440e-4f * fe;  // ln 2 = 0.693359375 - 2.12194440e-4, the first part exact
    y += -0.5f * z;
    return (f + y) + 0.693359375f * fe;
#endif
}

// s = sin(2 pi u), c = cos(2 pi u) for u in [0, 1] (azimuths). Device: the __sincosf
// intrinsic. Host: inline, reduced by quarter turns exactly (4u - k is exact in float), then
// the Cephes sinf/cosf polynomials on |r| <= pi/4: absolute error at most 1.1e-7 (tested). The
// directions built from them are not renormalised; deflect() says why that is safe.
FM_HD void fm_sincos2pi(float u, float& s, float& c) {
#if defined(__CUDA_ARCH__)
    __sincosf(6.28318530718f * u, &s, &c);
#else
    // Nearest quarter turn k = round(4u) by the 1.5*2^23 trick (no float-to-int conversion,
    // which would keep the CPU's lane loop from vectorising): k is exact, and so is 4u - k.
    const float t = 4.f * u;
    const float big = t + 12582912.f;
    uint32_t q;
    memcpy(&q, &big, sizeof q);  // low mantissa bits: k
    const float r = (t - (big - 12582912.f)) * 1.57079632679489662f;
    const float z = r * r;
    const float sr = r + ((-1.9515295891E-4f * z + 8.3321608736E-3f) * z - 1.6666654611E-1f) * z * r;
    const float cr = 1.f - 0.5f * z +
                     ((2.443315711809948E-5f * z - 1.388731625493765E-3f) * z + 4.166664568298827E-2f) * z * z;
    const float ss = (q & 1) ? cr : sr, cc = (q & 1) ? sr : cr;  // turn by q quarters
    s = (q & 2) ? -ss : ss;
    c = ((q + 1) & 2) ? -cc : cc;
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
    // Distances compared as fractions height/cosn without dividing (height_i cosn_b <
    // height_b cosn_i, all terms >= 0 and cosn > 0): one division, for the nearest face, instead
    // of four.
    float hb = 1.f, cb = 0.f;  // the nearest so far as hb / cb; cb = 0: none yet
    FM_UNROLL
    for (int i = 0; i < 4; ++i) {
        const float cosn = T.nx[i] * d.x + T.ny[i] * d.y + T.nz[i] * d.z;
        const float height = positivePart(T.C[i] - (T.nx[i] * p.x + T.ny[i] * p.y + T.nz[i] * p.z));
        if (cosn > 0.f && height * cb < hb * cosn) {
            hb = height;
            cb = cosn;
            h.face = i;
            h.normal = Vec3{T.nx[i], T.ny[i], T.nz[i]};
        }
    }
    const float t = h.face >= 0 ? hb / cb : kInfinity;
    if (t < kInfinity) h.t = t;
    else h.face = -1;  // no face when the distance overflows
    return h;
}

// exitFace without the normal, for models that look the exit face's normal up only where a
// crossing needs it (LazyNormals below: the GPU's DeviceModel). Each face's distance is divided
// out (on the GPU with --use_fast_math a reciprocal and a product, as exitFace's one division)
// and the nearest kept: no cross products, no per-face clamp, no normal carried through the
// selects, so fewer instructions per event on the GPU. A packet just outside
// a face it moves towards (rounding) gets a negative distance there, the nearest, clamped to 0
// at the end: it leaves through that face at once, as with exitFace. Faces with cosn <= 0
// never count, nor does an overflowed distance (no face, as in exitFace).
template <class Planes>
FM_HD FaceHit exitFaceNearest(const Planes& T, Vec3 p, Vec3 d) {
    float t[4];
    FM_UNROLL
    for (int i = 0; i < 4; ++i) {
        const float cosn = T.nx[i] * d.x + T.ny[i] * d.y + T.nz[i] * d.z;
        const float height = T.C[i] - T.nx[i] * p.x - T.ny[i] * p.y - T.nz[i] * p.z;
        t[i] = cosn > 0.f ? height / cosn : kInfinity;
    }
    // The nearest in two rounds of pairs (a chain of two compares instead of four; ties keep
    // the lower index, as a scan would, so the histories are those of a scan).
    const bool b01 = t[1] < t[0], b23 = t[3] < t[2];
    const float ta = b01 ? t[1] : t[0], tc = b23 ? t[3] : t[2];
    const int fa = b01 ? 1 : 0, fc = b23 ? 3 : 2;
    const bool bc = tc < ta;
    const float tb = bc ? tc : ta;
    const int fb = tb < kInfinity ? (bc ? fc : fa) : -1;
    return FaceHit{positivePart(tb), fb, Vec3{0.f, 0.f, 0.f}};
}

// Models that say kLazyNormals leave FaceHit::normal empty in cellExit and give the normal of
// face f of cell i through faceNormal(i, f) (crossFace reads it only at a change of index).
template <class Model, class = void>
struct LazyNormals : std::false_type {};
template <class Model>
struct LazyNormals<Model, std::void_t<decltype(Model::kLazyNormals)>> : std::bool_constant<Model::kLazyNormals> {};

// The exit of cell i of a model that stores four planes per cell (ArrayModel, the GPU's
// DeviceModel). Models without planes() provide their own (SlabModel.hpp).
template <class Model>
FM_HD auto cellExit(const Model& m, uint32_t i, Vec3 p, Vec3 d) -> decltype(m.planes(i), FaceHit{}) {
    if constexpr (LazyNormals<Model>::value) return exitFaceNearest(m.planes(i), p, d);
    else return exitFace(m.planes(i), p, d);
}

// The outward unit normal of the face that hit h leaves cell i through.
template <class Model>
FM_HD Vec3 hitNormal(const Model& m, uint32_t i, const FaceHit& h) {
    if constexpr (LazyNormals<Model>::value) return m.faceNormal(i, h.face);
    else return h.normal;
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

// sin and cos of a uniform azimuth 2 pi u, u = rng.uniform(). On the GPU the 2^-24 of the
// draw's conversion and the 2 pi are one constant: the same product (scaling by a power of two
// is exact), one multiplication fewer.
FM_HD void sampleAzimuth(PacketRng& rng, float& s, float& c) {
#if defined(__CUDA_ARCH__)
    __sincosf(rng.uniformTimes(6.28318530718f), &s, &c);
#else
    fm_sincos2pi(rng.uniform(), s, c);
#endif
}

FM_HD Vec3 isotropicDirection(PacketRng& rng) {
    float cost = 2.f * rng.uniform() - 1.f;
    float sint = fm_sqrt(positivePart(1.f - cost * cost));
    float s, c;
    sampleAzimuth(rng, s, c);
    return Vec3{sint * c, sint * s, cost};
}

// Cosine of the Henyey-Greenstein deflection angle for anisotropy g: the inverse of its CDF at
// u, (1 + g^2 - ((1 - g^2) / (1 - g + 2 g u))^2) / (2 g), with 1 - g + 2 g u written 1 + g v
// and 1 / (2 g) from the material record; isotropic (hgScale 0) the cosine is v = 2 u - 1.
// Without a branch on |g| and with one division instead of two (fewer instructions per event);
// the same distribution to rounding.
// On the GPU v is the draw's exact 2u (uniform()'s 24 bits times 2^-23 instead of 2^-24) less
// one: a multiply and an add by constants, with no register for the constant 2 that the fused
// multiply-add 2 u - 1 takes. The clamp there is fminf/fmaxf, two min/max instructions, where the
// CPU's form takes two compares and two selects: the same value for every cost but NaN, which
// the compares pass on and fmaxf turns into -1 (cost is NaN only for g = 1 at u = 0: 0 / 0).
FM_HD float sampleHG(const MaterialRecord& m, PacketRng& rng) {
#if defined(__CUDA_ARCH__)
    const float v = __fmul_rn(float(int32_t(rng.next() >> 8)), 1.f / 8388608.f) - 1.f;  // uniform()'s bits
#else
    const float v = 2.f * rng.uniform() - 1.f;
#endif
    const float f = m.hgB / (1.f + m.g * v);
    const float hg = (m.hgA - f * f) * m.hgScale;
    const float cost = m.hgScale == 0.f ? v : hg;
#if defined(__CUDA_ARCH__)
    return fminf(fmaxf(cost, -1.f), 1.f);
#else
    // Clamped with compares: fminf/fmaxf are library calls on the CPU and block vectorising.
    return cost < -1.f ? -1.f : (cost > 1.f ? 1.f : cost);
#endif
}

// Turn unit d by polar cosine cost and a uniform azimuth, in the branch-free orthonormal basis
// of Duff et al. (JCGT 2017): stable at every direction and with no square root, unlike the
// MCML formula and its special case near the poles.
// The result is not renormalised: its length's error from rounding (and on the GPU from the
// approximate sine, cosine and square root) does not accumulate, because a turn shrinks the
// incoming direction's length error (on average to 0.46 of it for g = 0, 0.90 for g = 0.9,
// 0.99 for g = 0.99: about the mean cos^2 of the turn), so the length stays near 1 over any
// number of turns (Tests/Core/test_physics.cpp: within 1e-5 over 2e6 turns, 1e-4 with added
// noise). Leaving normalize() out saves a square root and a division per interaction.
// kCosInRange: the caller's cost lies in [-1, 1] (sampleHG's), so 1 - cost^2 is >= 0 as computed
// (cost^2 <= 1 rounds to at most 1) and the GPU leaves out the clamp to 0.
template <bool kCosInRange = false>
FM_HD Vec3 deflect(Vec3 d, float cost, PacketRng& rng) {
#if defined(__CUDA_ARCH__)
    float sint = fm_sqrt(kCosInRange ? 1.f - cost * cost : positivePart(1.f - cost * cost));
#else
    float sint = fm_sqrt(positivePart(1.f - cost * cost));
#endif
    float sp, cp;
    sampleAzimuth(rng, sp, cp);
    float sign = copysignf(1.f, d.z);
    float a = -1.f / (sign + d.z);
    float b = d.x * d.y * a;
    Vec3 u{1.f + sign * d.x * d.x * a, sign * b, -sign * d.x};
    Vec3 v{b, sign + d.y * d.y * a, -d.y};
    return cost * d + (sint * cp) * u + (sint * sp) * v;
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
