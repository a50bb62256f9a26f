// SPDX-License-Identifier: GPL-3.0-or-later
// Locality numbering (Geometry/MeshOrder.hpp): a permutation that keeps the geometry, brings
// neighbours together, and leaves every packet history unchanged.
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "Geometry/MeshBuilder.hpp"
#include "Geometry/MeshOrder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Tests/TestUtil.hpp"

using namespace fm;

namespace {
// A box mesh with its tetras and points shuffled (a fixed Fisher-Yates walk): the scattered
// numbering of a mesh written by a tool that does not care about locality.
TetraMesh shuffledBox() {
    TetraMesh box = makeBoxMesh({-5, -5, -5}, {5, 5, 5}, 8, 8, 8, [](const Point3& c) {
        return c[0] * c[0] + c[1] * c[1] + c[2] * c[2] < 9 ? 2u : 1u;
    });
    std::vector<Point3> pts = box.points();
    std::vector<TetraPoints> tet = box.tetras();
    std::vector<uint32_t> reg = box.regions();
    uint64_t s = 12345;
    auto next = [&](size_t n) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        return size_t((s >> 33) % n);
    };
    for (size_t i = tet.size() - 1; i > 1; --i) {
        size_t j = 1 + next(i);
        std::swap(tet[i], tet[j]);
        std::swap(reg[i], reg[j]);
    }
    std::vector<uint32_t> to(pts.size());
    for (size_t i = 0; i < to.size(); ++i) to[i] = uint32_t(i);
    for (size_t i = to.size() - 1; i > 1; --i) std::swap(to[i], to[1 + next(i)]);
    std::vector<Point3> moved(pts.size());
    for (size_t i = 0; i < pts.size(); ++i) moved[to[i]] = pts[i];
    for (auto& t : tet)
        for (auto& v : t) v = to[v];
    return TetraMesh(std::move(moved), std::move(tet), std::move(reg));
}

// Mean |t - u| over pairs of face neighbours: how far apart neighbours are stored.
double meanNeighbourGap(const TetraMesh& m) {
    double sum = 0;
    size_t n = 0;
    for (uint32_t t = 1; t <= m.tetraCount(); ++t)
        for (int i = 0; i < 4; ++i)
            if (uint32_t u = m.neighbour(t, i)) {
                sum += std::fabs(double(t) - double(u));
                ++n;
            }
    return sum / n;
}
}  // namespace

BOOST_AUTO_TEST_CASE(locality_order_is_a_permutation_that_keeps_the_geometry) {
    const TetraMesh in = shuffledBox();
    MeshNumbering map;
    const TetraMesh out = orderForLocality(in, &map);
    BOOST_REQUIRE_EQUAL(out.tetraCount(), in.tetraCount());
    BOOST_REQUIRE_EQUAL(out.pointCount(), in.pointCount());
    std::vector<int> seen(in.tetraCount() + 1, 0);
    for (uint32_t t = 1; t <= out.tetraCount(); ++t) {
        const uint32_t old = map.tetraFrom[t];
        BOOST_REQUIRE(old >= 1 && old <= in.tetraCount());
        ++seen[old];
        BOOST_REQUIRE_EQUAL(out.region(t), in.region(old));
        for (int k = 0; k < 4; ++k)  // same corners in the same order
            BOOST_REQUIRE(out.point(out.tetra(t)[k]) == in.point(in.tetra(old)[k]));
    }
    for (uint32_t t = 1; t <= in.tetraCount(); ++t) BOOST_REQUIRE_EQUAL(seen[t], 1);
    for (uint32_t p = 1; p <= out.pointCount(); ++p) BOOST_REQUIRE(out.point(p) == in.point(map.pointFrom[p]));
    // Deterministic: the same input gives the same numbering.
    MeshNumbering again;
    orderForLocality(in, &again);
    BOOST_CHECK(again.tetraFrom == map.tetraFrom);
    BOOST_CHECK(again.pointFrom == map.pointFrom);
}

BOOST_AUTO_TEST_CASE(locality_order_brings_neighbours_together) {
    const TetraMesh in = shuffledBox();
    const TetraMesh out = orderForLocality(in);
    const double before = meanNeighbourGap(in), after = meanNeighbourGap(out);
    BOOST_TEST_MESSAGE("mean neighbour gap: shuffled " << before << ", ordered " << after);
    // A random numbering puts neighbours ~n/3 apart; along a Morton curve most neighbours share
    // a small cell of the curve, so the mean gap falls by an order of magnitude or more.
    BOOST_CHECK_LT(after, before / 10);
}

BOOST_AUTO_TEST_CASE(locality_order_keeps_every_history) {
    const TetraMesh in = shuffledBox();
    MeshNumbering map;
    const TetraMesh out = orderForLocality(in, &map);
    MaterialSet mats;
    mats.exterior(Material(0, 0, 0, 1.0));
    mats.append(Material(0.05, 5, 0.8, 1.4));
    mats.append(Material(0.5, 20, 0.9, 1.37));
    PointSource P;
    P.position = {0.3, -0.2, 0.1};
    RunOptions o;
    o.packets = 3000;
    o.threads = 1;
    o.params.seed = 5;
    const RunResult a = runCpu(packModel(in, mats, P), o), b = runCpu(packModel(out, mats, P), o);
    fmtest::checkSameEvents(a.events, b.events);
    BOOST_REQUIRE_EQUAL(a.volume.size(), b.volume.size());
    size_t differ = 0;
    for (uint32_t t = 1; t <= out.tetraCount(); ++t)
        if (b.volume[t] != a.volume[map.tetraFrom[t]]) ++differ;
    BOOST_CHECK_EQUAL(differ, 0u);
    BOOST_CHECK_EQUAL(a.ledger.absorbed, b.ledger.absorbed);
}
