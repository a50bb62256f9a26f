// SPDX-License-Identifier: GPL-3.0-or-later
// What the fuzz targets do with a model that parsed: pack it and push a few packets through the
// shared packet loop with small guards, so a mesh the readers accept is also exercised by the
// geometry (faces, adjacency, point location, source compilation) and the kernel physics.
#pragma once
#include <cmath>
#include <vector>

#include "Geometry/ModelPacker.hpp"
#include "Kernels/Core/Packet.hpp"
#include "Kernels/Core/TallyScorer.hpp"
#include "Tests/Fuzz/FuzzUtil.hpp"

namespace fmfuzz {

struct HostAdd {
    static void add(double* p, double v) { *p += v; }
};

// Plausible, distinct materials for regions 1..regions-1, with index steps so that Fresnel and
// total internal reflection happen.
inline fm::MaterialSet defaultMaterials(uint32_t regions) {
    fm::MaterialSet ms;
    ms.exterior(fm::Material(0, 0, 0, 1.0));
    for (uint32_t r = 1; r < regions; ++r)
        ms.append(fm::Material(0.05 * (r % 4 + 1), 5.0 * (r % 3 + 1), 0.8, 1.3 + 0.1 * (r % 3)));
    return ms;
}

// Every packet must end (the guards book the rest abnormal), the ledger must close and the
// tallies must be finite and agree with it: a violation is a finding even without a crash.
inline void simulateFew(const fm::KernelInput& in, unsigned packets, uint32_t guard) {
    fm::KernelParams kp;
    kp.maxSteps = guard;
    kp.maxHits = guard;
    std::vector<double> vol(in.cells.size(), 0.0), surf(in.faceCount, 0.0);
    fm::TallyScorer<true, true, false, HostAdd> sc;
    sc.volume = vol.data();
    sc.surface = surf.data();
    const fm::ArrayModel model = in.view();
    for (unsigned i = 0; i < packets; ++i) fm::runPacket(model, kp, i, sc);
    sc.flush();
    const fm::Ledger& L = sc.ledger;
    require(L.launched == double(packets), "launched != packets");
    require(std::fabs(L.imbalance()) <= 1e-9 * (1 + L.launched + L.rouletteGained), "ledger does not close");
    double v = 0, s = 0;
    for (double e : vol) v += e;
    for (double e : surf) s += e;
    require(std::isfinite(v) && std::isfinite(s), "non-finite tally");
    require(std::fabs(v - L.absorbed) <= 1e-9 * (1 + L.absorbed), "volume tally != absorbed");
    require(std::fabs(s - L.exited) <= 1e-9 * (1 + L.exited), "surface tally != exited");
    require(L.abnormal >= 0 && L.specular >= 0 && L.absorbed >= 0, "negative ledger entry");
}

// A parsed mesh with default materials and a source inside tetra 1.
inline void exerciseMesh(const fm::TetraMesh& mesh) {
    fm::VolumeSource src;
    src.element = 1;
    fm::KernelInput in = fm::packModel(mesh, defaultMaterials(mesh.regionCount()), src);
    simulateFew(in, 2, 200);
}

}  // namespace fmfuzz
