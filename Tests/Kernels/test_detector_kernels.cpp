// SPDX-License-Identifier: GPL-3.0-or-later
// Which kernel detected a record set: the .fmd header says it (and, for the GPU, the cell layout
// it read), and replays refuse records of another kernel (a packet's history reproduces only on
// the kernel that ran it) or another layout forced; the hybrid kernel refuses detectors. Needs no
// GPU.
#include <boost/test/unit_test.hpp>

#include <sstream>

#include "Common/Errors.hpp"
#include "Geometry/Detectors.hpp"
#include "Geometry/MaterialSet.hpp"
#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/Core/CellLayout.hpp"
#include "Kernels/Detection.hpp"
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

std::string fmdBytes(const fm::DetectedPackets& dp) {
    std::ostringstream out;
    fm::writeDetected(out, dp);
    return out.str();
}

fm::DetectedPackets readBytes(const std::string& bytes, const std::string& name) {
    std::istringstream in(bytes);
    return fm::readDetected(in, name);
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

// Records of the records' layout (CPU, GPU) write no cells line: the bytes of files from before
// it, which read back as "record" and replay on the CPU as before; compact GPU records write
// "cells compact", which reads back; a bad value or compact CPU records name the file and line.
BOOST_AUTO_TEST_CASE(fmd_header_names_the_cell_layout) {
    const fm::DetectedPackets cpu = fm::runKernel("cpu", in, opt).detected;
    BOOST_REQUIRE_GT(cpu.records.size(), 0u);
    BOOST_CHECK_EQUAL(cpu.cells, "record");
    const std::string old = fmdBytes(cpu);
    BOOST_CHECK_EQUAL(old.find("cells"), std::string::npos);
    const fm::DetectedPackets back = readBytes(old, "old.fmd");
    BOOST_CHECK_EQUAL(back.cells, "record");
    BOOST_CHECK_EQUAL(back.file, "old.fmd");
    const fm::ReplayResult a = fm::replayKernel("cpu", in, opt, spec, cpu), b = fm::replayKernel("cpu", in, opt, spec, back);
    BOOST_CHECK_EQUAL(b.mismatched, 0u);
    BOOST_CHECK_EQUAL(b.replayed, a.replayed);
    BOOST_CHECK(b.jacobian == a.jacobian);

    fm::DetectedPackets gpu = cpu;
    gpu.kernel = "cuda";
    BOOST_CHECK_EQUAL(fmdBytes(gpu).find("cells"), std::string::npos);
    gpu.cells = "compact";
    const std::string compact = fmdBytes(gpu);
    BOOST_REQUIRE_NE(compact.find("\nkernel cuda\ncells compact\nregions "), std::string::npos);
    const fm::DetectedPackets c = readBytes(compact, "c.fmd");
    BOOST_CHECK_EQUAL(c.cells, "compact");
    BOOST_CHECK_EQUAL(c.kernel, "cuda");
    BOOST_CHECK_EQUAL(c.records.size(), cpu.records.size());
    BOOST_CHECK_EQUAL(fmdBytes(c), compact);

    std::string bad = compact;
    bad.replace(bad.find("cells compact"), 13, "cells planar");
    const std::string e1 = errorOf<fm::FormatError>([&] { readBytes(bad, "bad.fmd"); });
    BOOST_CHECK_NE(e1.find("bad.fmd:5"), std::string::npos);
    BOOST_CHECK_NE(e1.find("cells must be record or compact"), std::string::npos);
    std::string onCpu = compact;
    onCpu.replace(onCpu.find("kernel cuda"), 11, "kernel cpu");
    const std::string e2 = errorOf<fm::FormatError>([&] { readBytes(onCpu, "cpu.fmd"); });
    BOOST_CHECK_NE(e2.find("cpu.fmd:5"), std::string::npos);
    BOOST_CHECK_NE(e2.find("needs kernel cuda"), std::string::npos);
    fm::DetectedPackets cpuCompact = cpu;
    cpuCompact.cells = "compact";
    BOOST_CHECK_THROW(fmdBytes(cpuCompact), fm::Error);
}

// A GPU replay reads the layout its records name: Auto follows them, the split layout serves
// records-layout records (the same planes), and another layout forced is refused with an error
// naming the file and both layouts. A CPU replay of compact records is refused, saying why.
BOOST_AUTO_TEST_CASE(replay_layout_follows_the_records) {
    using fm::CellLayout;
    fm::DetectedPackets dp;
    dp.kernel = "cuda";
    dp.file = "run/detected.fmd";
    BOOST_CHECK(fm::replayCellLayout(dp, CellLayout::Auto) == CellLayout::Record);
    BOOST_CHECK(fm::replayCellLayout(dp, CellLayout::Record) == CellLayout::Record);
    BOOST_CHECK(fm::replayCellLayout(dp, CellLayout::Split) == CellLayout::Split);
    const std::string toCompact = errorOf<fm::ParameterError>([&] { fm::replayCellLayout(dp, CellLayout::Compact); });
    BOOST_CHECK_NE(toCompact.find("run/detected.fmd"), std::string::npos);
    BOOST_CHECK_NE(toCompact.find("record cell layout"), std::string::npos);
    BOOST_CHECK_NE(toCompact.find("FM_CUDA_CELL_LAYOUT=compact"), std::string::npos);
    dp.cells = "compact";
    BOOST_CHECK(fm::replayCellLayout(dp, CellLayout::Auto) == CellLayout::Compact);
    BOOST_CHECK(fm::replayCellLayout(dp, CellLayout::Compact) == CellLayout::Compact);
    for (CellLayout other : {CellLayout::Record, CellLayout::Split}) {
        const std::string e = errorOf<fm::ParameterError>([&] { fm::replayCellLayout(dp, other); });
        BOOST_CHECK_NE(e.find("run/detected.fmd"), std::string::npos);
        BOOST_CHECK_NE(e.find("compact cell layout"), std::string::npos);
        BOOST_CHECK_NE(e.find(other == CellLayout::Split ? "FM_CUDA_CELL_LAYOUT=split" : "FM_CUDA_CELL_LAYOUT=record"),
                       std::string::npos);
    }
    BOOST_CHECK_EQUAL(fm::recordedCells(CellLayout::Compact), "compact");
    BOOST_CHECK_EQUAL(fm::recordedCells(CellLayout::Record), "record");
    BOOST_CHECK_EQUAL(fm::recordedCells(CellLayout::Split), "record");

    fm::DetectedPackets records = fm::runKernel("cpu", in, opt).detected;
    records.kernel = "cuda";
    records.cells = "compact";
    const std::string e = errorOf<fm::ParameterError>([&] { fm::replayKernel("cpu", in, opt, spec, records); });
    BOOST_CHECK_NE(e.find("detected by the cuda kernel, not cpu"), std::string::npos);
    BOOST_CHECK_NE(e.find("compact cell planes"), std::string::npos);
}

BOOST_AUTO_TEST_CASE(hybrid_refuses_detectors) {
    const std::string e = errorOf<fm::ParameterError>([&] { fm::runKernel("hybrid", in, opt); });
    BOOST_CHECK_NE(e.find("hybrid kernel does not record detected packets"), std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
