// SPDX-License-Identifier: GPL-3.0-or-later
// Which kernel detected a record set: the .fmd header says it, and replays refuse records of
// another kernel (a packet's history reproduces only on the kernel that ran it); the hybrid
// kernel refuses detectors. Needs no GPU.
#include <boost/test/unit_test.hpp>

#include <sstream>

#include "Common/Errors.hpp"
#include "Geometry/Detectors.hpp"
#include "Geometry/MaterialSet.hpp"
#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/Dispatch.hpp"
#include "Storage/Detected/DetectedFile.hpp"

namespace {

struct SmallDetectorModel {
    fm::TetraMesh mesh = fm::makeBoxMesh({-5, -5, 0}, {5, 5, 5}, 4, 4, 2, [](const fm::Point3&) { return 1u; });
    fm::KernelInput in;
    fm::DetectionSpec spec;
    fm::RunOptions opt;
    SmallDetectorModel() {
        fm::MaterialSet m;
        m.exterior(fm::Material(0, 0, 0, 1.0));
        m.append(fm::Material(0.05, 5, 0.8, 1.4));
        fm::PencilBeamSource beam;
        beam.position = {0, 0, 0};
        beam.direction = {0, 0, 1};
        in = fm::packModel(mesh, m, beam);
        fm::Detector d;
        d.centre = {2, 0, 0};
        d.radius = 1.5;
        spec = fm::compileDetectors(mesh, {d}, 1000);
        opt.packets = 2000;
        opt.threads = 1;
        opt.detection = &spec;
    }
};

template <class E, class F>
std::string errorOf(F&& f) {
    try {
        f();
    } catch (const E& e) {
        return e.what();
    }
    return "no error";
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(detector_kernels, SmallDetectorModel)

BOOST_AUTO_TEST_CASE(fmd_header_names_the_kernel) {
    fm::DetectedPackets dp = fm::runKernel("cpu", in, opt).detected;
    BOOST_CHECK_EQUAL(dp.kernel, "cpu");
    dp.kernel = "cuda";
    std::ostringstream out;
    fm::writeDetected(out, dp);
    const std::string bytes = out.str();
    BOOST_REQUIRE_NE(bytes.find("\nkernel cuda\n"), std::string::npos);
    std::istringstream in1(bytes);
    BOOST_CHECK_EQUAL(fm::readDetected(in1, "t.fmd").kernel, "cuda");
    // A file written before the kernel line: cpu.
    std::string old = bytes;
    old.erase(old.find("kernel cuda\n"), 12);
    std::istringstream in2(old);
    BOOST_CHECK_EQUAL(fm::readDetected(in2, "old.fmd").kernel, "cpu");
    std::string bad = bytes;
    bad.replace(bad.find("kernel cuda"), 11, "kernel gpux");
    const std::string e = errorOf<fm::FormatError>([&] {
        std::istringstream s(bad);
        fm::readDetected(s, "bad.fmd");
    });
    BOOST_CHECK_NE(e.find("bad.fmd:4"), std::string::npos);
    BOOST_CHECK_NE(e.find("kernel must be cpu or cuda"), std::string::npos);
}

BOOST_AUTO_TEST_CASE(replays_refuse_another_kernels_records) {
    fm::DetectedPackets dp = fm::runKernel("cpu", in, opt).detected;
    BOOST_REQUIRE_GT(dp.records.size(), 0u);
    BOOST_CHECK_EQUAL(fm::replayKernel("cpu", in, opt, spec, dp).mismatched, 0u);
    const std::string onGpu = errorOf<fm::ParameterError>([&] { fm::replayKernel("cuda", in, opt, spec, dp); });
    BOOST_CHECK_NE(onGpu.find("detected by the cpu kernel, not cuda"), std::string::npos);
    dp.kernel = "cuda";
    const std::string onCpu = errorOf<fm::ParameterError>([&] { fm::replayKernel("cpu", in, opt, spec, dp); });
    BOOST_CHECK_NE(onCpu.find("detected by the cuda kernel, not cpu"), std::string::npos);
}

BOOST_AUTO_TEST_CASE(hybrid_refuses_detectors) {
    const std::string e = errorOf<fm::ParameterError>([&] { fm::runKernel("hybrid", in, opt); });
    BOOST_CHECK_NE(e.find("hybrid kernel does not record detected packets"), std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
