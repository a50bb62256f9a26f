// SPDX-License-Identifier: GPL-3.0-or-later
// Adjoint fluence per detector (Geometry/AdjointFluence.hpp): reciprocity between the detected
// signal of a forward run and the overlap of its source with the detector's adjoint fluence.
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "Common/Errors.hpp"
#include "Geometry/AdjointFluence.hpp"
#include "Geometry/Detectors.hpp"
#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/Dispatch.hpp"

namespace {

// A 20 x 20 x 10 mm block of one tissue (two region labels of equal optics: region 2, a
// 4 x 4 x 2 mm block at depth 4-6 mm under x = 3, is the forward source), index-matched to the
// outside so that no Fresnel reflection breaks the symmetry of transport; a detector of the top
// faces within 2 mm of (3, 0, 0) as a face set (so that the adjoint source covers it exactly).
struct AdjointModel {
    fm::TetraMesh mesh;
    fm::MaterialSet mats;
    fm::DetectionSpec spec;
    AdjointModel()
        : mesh(fm::makeBoxMesh({-10, -10, 0}, {10, 10, 10}, 10, 10, 5, [](const fm::Point3& c) {
              return std::fabs(c[0] - 3) < 2 && std::fabs(c[1]) < 2 && c[2] > 4 && c[2] < 6 ? 2u : 1u;
          })) {
        mats.exterior(fm::Material(0, 0, 0, 1.0));
        mats.append(fm::Material(0.05, 5, 0.8, 1.0));
        mats.append(fm::Material(0.05, 5, 0.8, 1.0));
        fm::Detector disk;
        disk.centre = {3, 0, 0};
        disk.radius = 2;
        const fm::DetectionSpec diskSpec = fm::compileDetectors(mesh, {disk});
        fm::Detector faces;
        for (uint32_t f = 1; f < diskSpec.faceDetectors.size(); ++f)
            if (diskSpec.faceDetectors[f] & 1u) faces.faces.push_back(f);
        spec = fm::compileDetectors(mesh, {faces});
    }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(adjoint)

// Forward: a uniform isotropic source in region 2 (unit total), its detected weight per packet
// S with its batch-means error. Adjoint: the detector's faces emitting inward by the cosine law;
// by reciprocity S = (A / 4) sum over region 2's tetras of (V_t / V_2) phi_t. The adjoint
// overlap's error comes from K independent adjoint runs (seeds); the two estimates are
// independent, so |difference| <= 4 sqrt(se_f^2 + se_a^2) fails by chance with probability 6e-5.
BOOST_AUTO_TEST_CASE(reciprocity_of_forward_signal_and_adjoint_overlap) {
    AdjointModel m;
    fm::VolumeSource src;
    src.region = 2;
    fm::RunOptions o;
    o.packets = 200000;
    o.params.seed = 1;
    o.threads = 2;
    o.batches = 20;
    o.detection = &m.spec;
    const fm::RunResult fwd = fm::runKernel("cpu", fm::packModel(m.mesh, m.mats, src), o);
    BOOST_REQUIRE_EQUAL(fwd.detected.detectedWeightError.size(), 1u);
    const double N = double(fwd.packetsDone);
    const double sF = fwd.detected.detectedWeight[0] / N, seF = fwd.detected.detectedWeightError[0] / N;

    const double area = fm::detectorArea(m.mesh, m.spec, 0);
    double V2 = 0;
    for (uint32_t t = 1; t <= m.mesh.tetraCount(); ++t)
        if (m.mesh.region(t) == 2) V2 += m.mesh.volume(t);
    const int K = 8;
    std::vector<double> overlap;
    fm::RunOptions a;
    a.packets = 50000;
    a.threads = 2;
    a.batches = 1;
    for (int k = 0; k < K; ++k) {
        a.params.seed = 100 + uint64_t(k);
        const std::vector<double> phi = fm::adjointFluence(m.mesh, m.mats, m.spec, a, [](const fm::KernelInput& k, const fm::RunOptions& o) {
            return fm::runKernel("cpu", k, o);
        }).at(0);
        double s = 0;
        for (uint32_t t = 1; t <= m.mesh.tetraCount(); ++t)
            if (m.mesh.region(t) == 2) s += m.mesh.volume(t) / V2 * phi[t];
        overlap.push_back(area / 4 * s);
    }
    double mean = 0, var = 0;
    for (double v : overlap) mean += v / K;
    for (double v : overlap) var += (v - mean) * (v - mean) / (K - 1);
    const double seA = std::sqrt(var / K);
    BOOST_TEST_MESSAGE("forward " << sF << " +- " << seF << ", adjoint overlap " << mean << " +- " << seA
                                  << " (detector area " << area << " mm^2)");
    BOOST_REQUIRE_GT(sF, 10 * seF);
    BOOST_CHECK_LT(std::fabs(sF - mean), 4 * std::sqrt(seF * seF + seA * seA));
}

// Bad input: a detector that does not exist.
BOOST_AUTO_TEST_CASE(bad_detector) {
    AdjointModel m;
    BOOST_CHECK_THROW(fm::detectorAdjointSource(m.mesh, m.spec, 1), fm::ParameterError);
    try {
        fm::detectorArea(m.mesh, m.spec, 3);
    } catch (const fm::ParameterError& e) {
        BOOST_CHECK_NE(std::string(e.what()).find("adjoint: detector 3 does not exist"), std::string::npos);
    }
}

BOOST_AUTO_TEST_SUITE_END()
