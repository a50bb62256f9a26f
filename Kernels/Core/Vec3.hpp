// SPDX-License-Identifier: GPL-3.0-or-later
// Minimal 3-vector of floats usable on host and device.
#pragma once
#include "Kernels/Core/Config.hpp"

namespace fm {

struct Vec3 {
    float x, y, z;
};

FM_HD Vec3 operator+(Vec3 a, Vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
FM_HD Vec3 operator-(Vec3 a, Vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
FM_HD Vec3 operator*(float s, Vec3 a) { return {s * a.x, s * a.y, s * a.z}; }
FM_HD Vec3 operator-(Vec3 a) { return {-a.x, -a.y, -a.z}; }
FM_HD float dot(Vec3 a, Vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
FM_HD Vec3 cross(Vec3 a, Vec3 b) {
    return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
FM_HD float norm(Vec3 a) { return fm_sqrt(dot(a, a)); }
FM_HD Vec3 normalize(Vec3 a) { return (1.0f / norm(a)) * a; }

// Any unit vector perpendicular to unit vector d (used to build a local frame).
FM_HD Vec3 perpendicular(Vec3 d) {
    Vec3 t = (d.x * d.x < 0.5f) ? Vec3{1.f, 0.f, 0.f} : Vec3{0.f, 1.f, 0.f};
    return normalize(cross(d, t));
}

}  // namespace fm
