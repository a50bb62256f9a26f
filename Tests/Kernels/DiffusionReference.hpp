// SPDX-License-Identifier: GPL-3.0-or-later
// Analytic references of the time-resolved tests: the diffusion approximation's Green's function
// in an infinite homogeneous medium, and the time-resolved diffuse reflectance (TPSF) of a
// semi-infinite medium with the extrapolated boundary (Patterson, Chance and Wilson 1989;
// Contini, Martelli and Zaccanti 1997), with their continuous-wave (time-integrated) forms, which
// the tests use to check the time-domain forms numerically. Per unit launched energy; mm, ns.
#pragma once
#include <cmath>
#include <functional>

#include "Kernels/TimeGates.hpp"

namespace fmtest::diffusion {

struct Medium {
    double mua = 0, musp = 0, n = 1;  // 1/mm, 1/mm (reduced scattering), refractive index
    double D() const { return 1.0 / (3.0 * (mua + musp)); }  // mm
    double v() const { return fm::kLightMmPerNs / n; }        // mm/ns
    double mueff() const { return std::sqrt(mua / D()); }     // 1/mm
};

// Fluence rate (1/(mm^2 ns)) at distance r (mm) and time t (ns) after a unit isotropic impulse
// at the origin of an infinite medium.
inline double infiniteFluenceRate(const Medium& m, double r, double t) {
    if (!(t > 0)) return 0;
    const double Dv = m.D() * m.v();
    return m.v() * std::pow(4 * M_PI * Dv * t, -1.5) * std::exp(-r * r / (4 * Dv * t) - m.mua * m.v() * t);
}

// Its time integral: the CW fluence (1/mm^2) of a unit isotropic point source.
inline double infiniteFluenceCW(const Medium& m, double r) {
    return std::exp(-m.mueff() * r) / (4 * M_PI * m.D() * r);
}

// Semi-infinite medium (z >= 0), a pencil beam at the origin taken as an isotropic source at
// depth z0 = 1/mu_s', extrapolated boundary at -ze, ze = 2 A D (A = 1 for a matched boundary):
// the diffuse reflectance (flux out of the surface, 1/(mm^2 ns)) at distance rho and time t.
inline double z0(const Medium& m) { return 1.0 / m.musp; }
inline double semiInfiniteReflectance(const Medium& m, double rho, double t, double A = 1) {
    if (!(t > 0)) return 0;
    const double Dv = m.D() * m.v(), ze = 2 * A * m.D(), a = z0(m), b = a + 2 * ze;
    const double common = std::pow(4 * M_PI * Dv, -1.5) * std::pow(t, -2.5) *
                          std::exp(-m.mua * m.v() * t - rho * rho / (4 * Dv * t));
    return 0.5 * common * (a * std::exp(-a * a / (4 * Dv * t)) + b * std::exp(-b * b / (4 * Dv * t)));
}

// Its time integral, the CW diffuse reflectance (1/mm^2) of the same dipole (Farrell, Patterson
// and Wilson 1992, with the source at z0 = 1/mu_s').
inline double semiInfiniteReflectanceCW(const Medium& m, double rho, double A = 1) {
    const double ze = 2 * A * m.D(), a = z0(m), b = a + 2 * ze, k = m.mueff();
    const double r1 = std::sqrt(a * a + rho * rho), r2 = std::sqrt(b * b + rho * rho);
    return (a * (k + 1 / r1) * std::exp(-k * r1) / (r1 * r1) + b * (k + 1 / r2) * std::exp(-k * r2) / (r2 * r2)) /
           (4 * M_PI);
}

// Composite Simpson integral of f over [a, b] with n (even) intervals.
inline double simpson(const std::function<double(double)>& f, double a, double b, int n = 2000) {
    const double h = (b - a) / n;
    double s = f(a) + f(b);
    for (int i = 1; i < n; ++i) s += f(a + i * h) * (i % 2 ? 4 : 2);
    return s * h / 3;
}

// A quantity of rate f(t) integrated over each gate of g: what a gated tally holds per gate.
inline double overGate(const std::function<double(double)>& f, const fm::TimeGates& g, uint32_t k) {
    return simpson(f, g.gateStart(k), g.gateStop(k), 400);
}

}  // namespace fmtest::diffusion
