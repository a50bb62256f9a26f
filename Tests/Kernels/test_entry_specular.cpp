// SPDX-License-Identifier: GPL-3.0-or-later
// Specular reflection where a beam enters the mesh from outside (Geometry/SourceCompiler.cpp):
// none through a matched boundary (TIM-OS boundary type 2), MCML's Fresnel reflection by default
// against a mismatched exterior, none with specularAtEntry = false (FullMonte 2018's beams).
// Compared statistics come from independent batches (other packet ranges of the same seed).
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Tests/TestUtil.hpp"

using namespace fm;

namespace {

constexpr double kTissueN = 1.37;

// A strongly absorbing block (most launched weight is absorbed, so a lost 2.4% shows clearly).
TetraMesh block() {
    return makeBoxMesh({-8, -8, 0}, {8, 8, 8}, 4, 4, 4, [](const Point3&) { return 1u; });
}

MaterialSet materials(double exteriorN, bool matched) {
    MaterialSet ms;
    ms.exterior(Material(0, 0, 0, exteriorN));
    ms.append(Material(1.0, 5.0, 0.8, kTissueN));
    ms.matchedBoundary = matched;
    return ms;
}

// A pencil beam from outside, entering the top face along the normal; `angled` tilts it by 30
// degrees, so that refraction at entry would matter too.
PencilBeamSource beam(bool specularAtEntry, bool angled = false) {
    PencilBeamSource b;
    b.position = {0.013, 0.027, -1};
    b.direction = angled ? Point3{0.5, 0, std::sqrt(0.75)} : Point3{0, 0, 1};
    b.specularAtEntry = specularAtEntry;
    return b;
}

struct Fractions {
    fmtest::MeanSd absorbed, specular;
};

// Per-batch absorbed and specular fractions of the launched weight; batches start at `first`.
Fractions fractions(const KernelInput& in, uint64_t first, uint64_t perBatch = 5000, int batches = 10) {
    std::vector<double> a, s;
    for (int b = 0; b < batches; ++b) {
        RunOptions o;
        o.packets = perBatch;
        o.firstPacket = first + uint64_t(b) * perBatch;
        o.threads = 2;
        RunResult r = runCpu(in, o);
        BOOST_REQUIRE_SMALL(r.ledger.imbalance() / r.ledger.launched, 1e-12);
        a.push_back(r.ledger.absorbed / r.ledger.launched);
        s.push_back(r.ledger.specular / r.ledger.launched);
    }
    return {fmtest::meanSd(a), fmtest::meanSd(s)};
}

// |a - b| within 3 combined standard errors.
void checkSame(const std::string& what, const fmtest::MeanSd& a, const fmtest::MeanSd& b) {
    fmtest::checkWithinSigma(what, {a.mean - b.mean, std::hypot(a.sdMean, b.sdMean)}, 0.0);
}

double normalFresnel(double n1, double n2) { return std::pow((n1 - n2) / (n1 + n2), 2); }

}  // namespace

BOOST_AUTO_TEST_SUITE(entry_specular)

// A matched boundary reflects nothing where the beam enters (the exterior's nominal n = 1 is
// not used), and absorbs what an explicit exterior of the tissue's index absorbs.
BOOST_AUTO_TEST_CASE(matched_boundary_has_no_specular_at_entry) {
    TetraMesh m = block();
    for (bool angled : {false, true}) {
        BOOST_TEST_CONTEXT("angled " << angled) {
            Fractions matched = fractions(packModel(m, materials(1.0, true), beam(true, angled)), 0);
            Fractions explicitN = fractions(packModel(m, materials(kTissueN, false), beam(true, angled)), 100000);
            BOOST_CHECK_EQUAL(matched.specular.mean, 0.0);
            BOOST_CHECK_EQUAL(explicitN.specular.mean, 0.0);
            checkSame("matched vs explicit exterior n: absorbed", matched.absorbed, explicitN.absorbed);
            BOOST_CHECK_GT(matched.absorbed.mean, 0.8);
        }
    }
}

BOOST_AUTO_TEST_CASE(matched_boundary_fiber_has_no_specular_at_entry) {
    TetraMesh m = block();
    FiberSource f;
    f.position = {0.013, 0.027, -1};
    f.direction = {0, 0, 1};
    RunOptions o;
    o.packets = 2000;
    o.threads = 2;
    RunResult matched = runCpu(packModel(m, materials(1.0, true), f), o);
    BOOST_CHECK_EQUAL(matched.ledger.specular, 0.0);
    RunResult air = runCpu(packModel(m, materials(1.0, false), f), o);
    BOOST_CHECK_CLOSE(air.ledger.specular / air.ledger.launched, normalFresnel(1.0, kTissueN), 1e-3);
}

// Default: MCML's specular reflection at entry, R = ((n - 1)/(n + 1))^2 at normal incidence.
// specularAtEntry = false: no reflection, so absorption is 1/(1 - R) times the default's.
BOOST_AUTO_TEST_CASE(surface_pencil_specular_is_an_option) {
    TetraMesh m = block();
    const double R = normalFresnel(1.0, kTissueN);
    Fractions mcml = fractions(packModel(m, materials(1.0, false), beam(true)), 0);
    Fractions fm2018 = fractions(packModel(m, materials(1.0, false), beam(false)), 100000);
    BOOST_CHECK_CLOSE(mcml.specular.mean, R, 1e-3);
    BOOST_CHECK_EQUAL(fm2018.specular.mean, 0.0);
    checkSame("absorbed without entry specular x (1 - R) vs with",
              {fm2018.absorbed.mean * (1 - R), fm2018.absorbed.sdMean * (1 - R)}, mcml.absorbed);
    // The difference the option makes is many standard errors: the comparison above can fail.
    BOOST_CHECK_GT(std::fabs(fm2018.absorbed.mean - mcml.absorbed.mean),
                   6 * std::hypot(fm2018.absorbed.sdMean, mcml.absorbed.sdMean));
}

// setSpecularAtEntry reaches pencil beams and fibres inside composites.
BOOST_AUTO_TEST_CASE(set_specular_at_entry_walks_composites) {
    auto p = std::make_shared<PencilBeamSource>();
    auto f = std::make_shared<FiberSource>();
    auto inner = std::make_shared<CompositeSource>();
    inner->elements = {f};
    CompositeSource c;
    c.elements = {p, inner, std::make_shared<PointSource>()};
    setSpecularAtEntry(c, false);
    BOOST_CHECK(!p->specularAtEntry);
    BOOST_CHECK(!f->specularAtEntry);
    setSpecularAtEntry(c, true);
    BOOST_CHECK(p->specularAtEntry && f->specularAtEntry);
}

BOOST_AUTO_TEST_SUITE_END()
