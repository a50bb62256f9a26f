// SPDX-License-Identifier: GPL-3.0-or-later
// TIM-OS readers/writers: real benchmark files, round trips, and errors naming file:line.
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Storage/MMC/MMC.hpp"
#include "Storage/TIMOS/TIMOS.hpp"
#include "Storage/TextReader.hpp"
#include "Tests/TestUtil.hpp"

using namespace fm;
namespace fs = std::filesystem;

namespace {
std::string tmpFile(const std::string& name, const std::string& text) {
    fs::path p = fs::temp_directory_path() / ("fm_test_" + std::to_string(::getpid()) + "_" + name);
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
}
template <class F>
void expectFormatError(F f, const std::string& needle) {
    try {
        f();
        BOOST_ERROR("no error; expected '" << needle << "'");
    } catch (const FormatError& e) {
        BOOST_CHECK_MESSAGE(std::string(e.what()).find(needle) != std::string::npos,
                            "message '" << e.what() << "' lacks '" << needle << "'");
    } catch (const std::exception& e) {
        BOOST_ERROR("wrong exception type: " << e.what());
    }
}
}  // namespace

BOOST_AUTO_TEST_SUITE(timos)

BOOST_AUTO_TEST_CASE(cube_5med_reads_and_ledger_closes) {
    if (!fmtest::haveSharedData("timos/cube_5med/cube_5med.mesh")) return;
    std::string base = fmtest::sharedData("timos/cube_5med/cube_5med");
    TetraMesh m = readTIMOSMesh(base + ".mesh");
    BOOST_CHECK_EQUAL(m.pointCount(), 9261u);
    BOOST_CHECK_EQUAL(m.tetraCount(), 48000u);
    MaterialSet ms = readTIMOSMaterials(base + ".opt");
    BOOST_CHECK_EQUAL(ms.size(), 6u);
    BOOST_CHECK_CLOSE(ms.material(5).n, 1.5, 1e-9);
    BOOST_CHECK_CLOSE(ms.exterior().n, 1.0, 1e-9);
    auto src = readTIMOSSource(base + ".source");
    BOOST_CHECK_EQUAL(src.totalPackets, 1e7);
    KernelInput in = packModel(m, ms, *src.source);
    RunOptions o;
    o.packets = 20000;
    o.threads = 2;
    RunResult r = runCpu(in, o);
    BOOST_CHECK_SMALL(r.ledger.imbalance() / r.ledger.launched, 1e-12);
    BOOST_CHECK_EQUAL(r.ledger.abnormal, 0.0);
    // MMC measured 76.735% absorbed at 1e8 (../shared/data/README.md); binomial-like spread
    // of the absorbed fraction per packet is below 0.5, so 4 sigma at 2e4 packets < 1.5%.
    double a = r.ledger.absorbed / r.ledger.launched;
    BOOST_TEST_MESSAGE("cube_5med absorbed fraction " << a);
    BOOST_CHECK_SMALL(a - 0.76735, 4 * 0.5 / std::sqrt(20000.0));
}

BOOST_AUTO_TEST_CASE(round_trip) {
    std::string mesh = tmpFile("a.mesh",
                               "5\n2\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n1 1 1\n1 2 3 4 1\n2 3 4 5 2\n");
    TetraMesh m = readTIMOSMesh(mesh);
    BOOST_CHECK_EQUAL(m.tetraCount(), 2u);
    std::string out = tmpFile("b.mesh", "");
    writeTIMOSMesh(out, m);
    TetraMesh m2 = readTIMOSMesh(out);
    BOOST_CHECK(m.points() == m2.points());
    BOOST_CHECK(m.tetras() == m2.tetras());
    BOOST_CHECK(m.regions() == m2.regions());
    std::string opt = tmpFile("a.opt", "1\n2\n0.1 10 0.9 1.4\n0.2 20 0.8 1.3\n1\n1.0\n");
    MaterialSet ms = readTIMOSMaterials(opt);
    std::string opt2 = tmpFile("b.opt", "");
    writeTIMOSMaterials(opt2, ms);
    MaterialSet ms2 = readTIMOSMaterials(opt2);
    BOOST_CHECK_EQUAL(ms2.material(2).mu_s, 20.0);
    std::string src = tmpFile("a.source", "2\n1 0.2 0.2 0.2 3\n2 2 1\n");
    auto s = readTIMOSSource(src);
    BOOST_CHECK_EQUAL(s.totalPackets, 4.0);
    std::string src2 = tmpFile("b.source", "");
    writeTIMOSSource(src2, *s.source, m);
    BOOST_CHECK_EQUAL(readTIMOSSource(src2).totalPackets, 4.0);
}

// A run without a packet count takes the file's weights only where they are TIM-OS photon counts
// (whole numbers adding up to at least kMinFilePacketCount); relative powers (1 and 2, 1.5, what
// TIMOSSourceWriter writes) give none, so the run's default applies instead of 3 packets.
BOOST_AUTO_TEST_CASE(source_weights_are_packet_counts_only_when_they_look_like_counts) {
    BOOST_CHECK_EQUAL(readTIMOSSource(tmpFile("c1.source", "2\n1 0.2 0.2 0.2 1000\n1 0.3 0.2 0.2 500\n")).packetCount, 1500.0);
    BOOST_CHECK_EQUAL(readTIMOSSource(tmpFile("c2.source", "2\n1 0.2 0.2 0.2 1\n1 0.3 0.2 0.2 2\n")).packetCount, 0.0);
    BOOST_CHECK_EQUAL(readTIMOSSource(tmpFile("c3.source", "1\n1 0.2 0.2 0.2 1500.5\n")).packetCount, 0.0);
    BOOST_CHECK_EQUAL(readTIMOSSource(tmpFile("c4.source", "1\n1 0.2 0.2 0.2 1e300\n")).packetCount, 0.0);
    BOOST_CHECK_EQUAL(readTIMOSSource(tmpFile("c5.source", "1\n1 0.2 0.2 0.2 1e7\n")).packetCount, 1e7);
}

// Files saved by Windows editors start with a UTF-8 byte-order mark: not part of the text.
BOOST_AUTO_TEST_CASE(byte_order_mark_is_skipped) {
    const std::string bom = "\xEF\xBB\xBF";
    TetraMesh m = readTIMOSMesh(tmpFile("bom.mesh", bom + "4\n1\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n1 2 3 4 1\n"));
    BOOST_CHECK_EQUAL(m.tetraCount(), 1u);
    BOOST_CHECK_EQUAL(readTIMOSMaterials(tmpFile("bom.opt", bom + "1\n1\n0.1 10 0.9 1.4\n1\n1.0\n")).material(1).mu_s, 10.0);
    BOOST_CHECK_EQUAL(readTIMOSSource(tmpFile("bom.source", bom + "1\n1 0.2 0.2 0.2 1000\n")).totalPackets, 1000.0);
    // A VTK file given as a TIM-OS mesh is named as such, with the way to convert it.
    expectFormatError([] { readTIMOSMesh(tmpFile("m.vtu", "<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\">\n")); },
                      "a VTK file, not a TIM-OS mesh: convert it with fullmonte-mesh --convert");
    expectFormatError([] { readTIMOSMesh(tmpFile("m.vtk", "# vtk DataFile Version 3.0\nmesh\nASCII\n")); }, "a VTK file");
    // Only a whole mark is skipped: a stray 0xEF is still an error naming the line.
    expectFormatError([] { readTIMOSSource(tmpFile("ef.source", "\xEF" "1\n1 0.2 0.2 0.2 1000\n")); }, ":1:");
}

BOOST_AUTO_TEST_CASE(malformed_inputs_name_file_and_line) {
    expectFormatError([] { readTIMOSMesh(tmpFile("e1.mesh", "")); }, ":1: unexpected end of file");
    expectFormatError([] { readTIMOSMesh(tmpFile("e2.mesh", "4\n1\n0 0 0\n1 0 0\n0 1 0\n")); },
                      ":6: unexpected end of file");
    expectFormatError([] { readTIMOSMesh(tmpFile("e3.mesh", "4\n1\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n1 2 3 7 1\n")); },
                      ":7: tetrahedron 1 refers to point 7");
    expectFormatError([] { readTIMOSMesh(tmpFile("e4.mesh", "4\n1\n0 0 0\n1 nan 0\n0 1 0\n0 0 1\n1 2 3 4 1\n")); },
                      ":4: coordinate y of point 2 is not finite");
    expectFormatError([] { readTIMOSMesh(tmpFile("e5.mesh", std::string("4\n1\n\0\x01\x02", 7))); },
                      "binary data");
    expectFormatError([] { readTIMOSMesh(tmpFile("e6.mesh", "4\n1\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n1 2 3 4 0\n")); },
                      "region 0");
    expectFormatError([] { readTIMOSMesh(tmpFile("e7.mesh", "4\n1\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n1 2 3 4 1\n9 9\n")); },
                      "unexpected extra data");
    expectFormatError([] { readTIMOSMesh(tmpFile("e8.mesh", "1000000000000\n1\n")); }, "larger than");
    expectFormatError([] { readTIMOSMaterials(tmpFile("e1.opt", "1\n1\n-0.1 10 0.9 1.4\n1\n1\n")); },
                      ":3: material 1: mu_a must be >= 0");
    expectFormatError([] { readTIMOSMaterials(tmpFile("e2.opt", "1\n1\n0.1 10 1.2 1.4\n1\n1\n")); }, "|g| < 1");
    expectFormatError([] { readTIMOSMaterials(tmpFile("e3.opt", "1\n1\n0.1 10 0.9 0\n1\n1\n")); }, "refractive index must be > 0");
    expectFormatError([] { readTIMOSMaterials(tmpFile("e4.opt", "1\n2\n0.1 10 0.9 1.4\n")); }, ":4: unexpected end of file");
    expectFormatError([] { readTIMOSSource(tmpFile("e1.source", "1\n7 1 2 3 4\n")); }, ":2: source 1: unknown source type 7");
    expectFormatError([] { readTIMOSSource(tmpFile("e2.source", "0\n")); }, "at least 1");
    // a degenerate tetra is a model error naming the file and tetra
    try {
        readTIMOSMesh(tmpFile("e9.mesh", "4\n1\n0 0 0\n1 0 0\n2 0 0\n0 0 1\n1 2 3 4 1\n"));
        BOOST_ERROR("degenerate tetra accepted");
    } catch (const ModelError& e) {
        BOOST_CHECK(std::string(e.what()).find("tetra 1 is degenerate") != std::string::npos);
    }
}

// TIM-OS takes g = 1 as a medium that never deflects (FullMonte's own TIM-OS example half_sphere
// has such free-space and lens materials, with CRLF line ends): it reads as the same medium
// without scattering, and a pencil through 10 mm of it, matched, is absorbed as Beer-Lambert says.
BOOST_AUTO_TEST_CASE(g_of_one_is_a_non_deflecting_medium) {
    MaterialSet ms = readTIMOSMaterials(tmpFile("g1.opt", "1\r\n2\r\n0.08 10 1 1.0\r\n0.05 10 0.9 1.0\r\n2\r\n"));
    BOOST_CHECK_EQUAL(ms.material(1).mu_s, 0.0);
    BOOST_CHECK_EQUAL(ms.material(1).g, 0.0);
    BOOST_CHECK_EQUAL(ms.material(1).mu_a, 0.08);
    BOOST_CHECK_EQUAL(ms.material(2).mu_s, 10.0);
    BOOST_CHECK(ms.matchedBoundary);

    TetraMesh m = makeBoxMesh({0, 0, 0}, {10, 10, 10}, 2, 2, 2, [](const Point3&) { return 1u; });
    PencilBeamSource beam;
    beam.position = {5.1, 4.9, 0};
    beam.direction = {0, 0, 1};
    const uint64_t N = 40000;
    RunOptions o;
    o.packets = N;
    o.threads = 2;
    RunResult r = runCpu(packModel(m, ms, beam), o);
    BOOST_CHECK_SMALL(r.ledger.imbalance() / r.ledger.launched, 1e-12);
    const double p = 1 - std::exp(-0.08 * 10.0), a = r.ledger.absorbed / r.ledger.launched;
    fmtest::checkWithinSigma("Beer-Lambert through g = 1", {a, std::sqrt(p * (1 - p) / N)}, p);
}

BOOST_AUTO_TEST_CASE(mmc_reader) {
    std::string node = tmpFile("node.dat", "1\t5\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n5 1 1 1\n");
    std::string elem = tmpFile("elem.dat", "1\t2\n1 1 2 3 4 1\n2 2 3 4 5 1\n");
    std::string prop = tmpFile("prop.dat", "1\t1\n1 0.01 1.0 0.9 1.37\n");
    TetraMesh m = readMMCMesh(node, elem);
    BOOST_CHECK_EQUAL(m.tetraCount(), 2u);
    MaterialSet ms = readMMCMaterials(prop);
    BOOST_CHECK_CLOSE(ms.material(1).n, 1.37, 1e-9);
    expectFormatError([&] { readMMCMesh(node, tmpFile("elem2.dat", "1\t2\n1 1 2 3 4 1\n3 2 3 4 5 1\n")); },
                      ":3: element rows must be numbered");
}

BOOST_AUTO_TEST_SUITE_END()

// A whole number written with a fraction of 2^64 (the double 2^64 itself) is out of range of a
// 64-bit count, even when the count's bound is 2^64 - 1 (whose double rounds up to 2^64): an
// error naming it, not an undefined conversion.
BOOST_AUTO_TEST_CASE(count_at_two_to_the_64_is_refused) {
    for (const char* text : {"18446744073709551616.0", "18446744073709551616.02", "1.8446744073709552e19", "1e30"}) {
        std::istringstream in(std::string("seed ") + text + "\n");
        TextReader t(in, "x.txt");
        t.need("seed");
        BOOST_CHECK_THROW(t.count("seed", std::numeric_limits<uint64_t>::max()), FormatError);
    }
    std::istringstream ok("7e0\n");
    TextReader t(ok, "x.txt");
    BOOST_CHECK_EQUAL(t.count("seed", std::numeric_limits<uint64_t>::max()), 7u);
}
