// SPDX-License-Identifier: GPL-3.0-or-later
// COMSOL .mphtxt reader/writer: the tetras and domains of a small COMSOL 5 file, a round trip of a
// box mesh, and errors naming file:line.
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <sstream>
#include <unistd.h>

#include "Common/Errors.hpp"
#include "Geometry/MeshBuilder.hpp"
#include "Storage/COMSOL/COMSOLMesh.hpp"

using namespace fm;
namespace fs = std::filesystem;

namespace {

// Two tets sharing a face, domains 1 and 2, after a vertex type and a triangle type with
// parameters and up/down pairs (which the reader skips). Line 20 is the first tet.
const char* kTwoTets =
    "# Created by COMSOL Multiphysics.\n"        // 1
    "0 1 # major & minor version\n"              // 2
    "4 Mesh # class\n"                           // 3
    "4 # version\n"                              // 4
    "3 # sdim\n"                                 // 5
    "5 # number of mesh vertices\n"              // 6
    "0 # lowest mesh vertex index\n"             // 7
    "# Mesh vertex coordinates\n"                // 8
    "0 0 0\n1 0 0\n0 1 0\n0 0 1\n1 1 1\n"        // 9-13
    "2 # number of element types\n"              // 14
    "3 tri # type name\n"                        // 15
    "3 # number of vertices per element\n"       // 16
    "1 # number of elements\n# Elements\n1 2 3\n"  // 17-19
    "3 tet # type name\n4 # number of vertices per element\n2 # number of elements\n# Elements\n"  // 20-23
    "0 1 2 3\n1 2 3 4\n"                         // 24-25
    "2 # number of geometric entity indices\n# Geometric entity indices\n1\n2\n";  // 26-29

TetraMesh readText(const std::string& text) {
    std::istringstream in(text);
    return readCOMSOLMesh(in, "t.mphtxt");
}

void expectError(const std::string& text, const std::string& needle) {
    try {
        readText(text);
        BOOST_ERROR("no error; expected '" << needle << "'");
    } catch (const FormatError& e) {
        BOOST_CHECK_MESSAGE(std::string(e.what()).find(needle) != std::string::npos,
                            "message '" << e.what() << "' lacks '" << needle << "'");
    }
}

std::string replaced(std::string s, const std::string& a, const std::string& b) {
    return s.replace(s.find(a), a.size(), b);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(comsol)

// The two tets of kTwoTets: 5 points, domains 1 and 2, volumes 1/6 and 1/3.
void checkTwoTets(const TetraMesh& m) {
    BOOST_CHECK_EQUAL(m.pointCount(), 5u);
    BOOST_REQUIRE_EQUAL(m.tetraCount(), 2u);
    BOOST_CHECK_EQUAL(m.region(1), 1u);
    BOOST_CHECK_EQUAL(m.region(2), 2u);
    BOOST_CHECK_CLOSE(m.volume(1), 1.0 / 6, 1e-9);
    BOOST_CHECK_CLOSE(m.volume(2), 1.0 / 3, 1e-9);
}

BOOST_AUTO_TEST_CASE(two_tets_with_domains) { checkTwoTets(readText(kTwoTets)); }

// The same two tets in mesh version 2 without COMSOL's field labels, as iso2mesh's savemphtxt
// lays them out (a comment line first, 1-based vertices, a triangle type with its parameter and
// domain counts and up/down pairs): read by position.
const char* kTwoTetsUnlabelled =
    "# Created by a mesher\n"               // 1
    "0 1\n1\n5 mesh1\n1\n3 obj\n\n0 0 1\n"  // 2-8
    "4 Mesh\n2\n3\n5\n1\n"                  // 9-13: class, version, sdim, vertices, lowest index
    "0 0 0\n1 0 0\n0 1 0\n0 0 1\n1 1 1\n"   // 14-18
    "2\n"                                   // 19: element types
    "3 tri\n3\n1\n1 2 3\n1\n0\n1\n1\n1\n0 0\n"  // 20-29
    "3 tet\n4\n2\n1 2 3 4\n2 3 4 5\n4\n0\n2\n1\n2\n0\n";  // 30-41: tets on lines 33-34

BOOST_AUTO_TEST_CASE(unlabelled_version_2_read_by_position) {
    checkTwoTets(readText(kTwoTetsUnlabelled));
    expectError(replaced(kTwoTetsUnlabelled, "2 3 4 5\n", "2 3 4 9\n"), "t.mphtxt:34: tet element 1: vertex 9 is not one");
    expectError(replaced(kTwoTetsUnlabelled, "4 Mesh\n2\n", "4 Mesh\n4\n"), "t.mphtxt:10: mesh version 4 without '#' labels");
    expectError(replaced(kTwoTetsUnlabelled, "0\n2\n1\n2\n0\n", "0\n2\n1\n"), "unexpected end of file");
    expectError("0 1\n1\n5 mesh1\n1\n3 obj\n0 0 1\n4 Geom\n", "t.mphtxt:7: the object is not a Mesh");
}

// A value that is not a finite number gets the same message by position as by label, at its line.
BOOST_AUTO_TEST_CASE(bad_numbers_named_alike_in_both_readings) {
    for (const char* bad : {"z", "inf", "nan", "1e400", "2x"}) {
        const std::string q = std::string("\"") + bad + "\" is not a number";
        expectError(replaced(kTwoTets, "0 0 1\n1 1 1\n", std::string("0 0 ") + bad + "\n1 1 1\n"),
                    "t.mphtxt:12: mesh vertex coordinates: " + q);
        expectError(replaced(kTwoTetsUnlabelled, "0 0 1\n1 1 1\n", std::string("0 0 ") + bad + "\n1 1 1\n"),
                    "t.mphtxt:17: mesh vertex coordinates: " + q);
        expectError(replaced(kTwoTets, "indices\n1\n2\n", std::string("indices\n1\n") + bad + "\n"),
                    "t.mphtxt:29: tet geometric entity indices: " + q);
        expectError(replaced(kTwoTetsUnlabelled, "2\n1\n2\n0\n", std::string("2\n1\n") + bad + "\n0\n"),
                    "t.mphtxt:39: tet domains: " + q);
    }
}

BOOST_AUTO_TEST_CASE(domains_from_zero_are_shifted) {
    TetraMesh m = readText(replaced(kTwoTets, "indices\n1\n2\n", "indices\n0\n1\n"));
    BOOST_CHECK_EQUAL(m.region(1), 1u);
    BOOST_CHECK_EQUAL(m.region(2), 2u);
}

BOOST_AUTO_TEST_CASE(round_trip) {
    TetraMesh a = makeBoxMesh({0, 0, 0}, {3, 2, 1}, 3, 2, 1,
                              [](const Point3& c) { return c[0] < 1.5 ? 1u : 3u; });
    fs::path p = fs::temp_directory_path() / ("fm_test_comsol_" + std::to_string(::getpid()) + ".mphtxt");
    writeCOMSOLMesh(p.string(), a);
    TetraMesh b = readCOMSOLMesh(p.string());
    fs::remove(p);
    BOOST_REQUIRE_EQUAL(b.tetraCount(), a.tetraCount());
    BOOST_CHECK_EQUAL(b.pointCount(), a.pointCount());
    for (uint32_t t = 1; t <= a.tetraCount(); ++t) {
        BOOST_CHECK_EQUAL(b.region(t), a.region(t));
        BOOST_CHECK_CLOSE(b.volume(t), a.volume(t), 1e-9);
    }
}

BOOST_AUTO_TEST_CASE(errors_name_file_and_line) {
    expectError(replaced(kTwoTets, "1 2 3 4\n", "1 2 3\n"), "t.mphtxt:25: tet elements: expected 4 values");
    expectError(replaced(kTwoTets, "1 2 3 4\n", "1 2 3 7\n"), "t.mphtxt:25: tet element 1: vertex 7 is not one of the 5");
    expectError(replaced(kTwoTets, "0 0 1\n", "0 0 z\n"), "t.mphtxt:12: mesh vertex coordinates: \"z\" is not a number");
    expectError(replaced(kTwoTets, "0 1 2 3\n1 2 3 4\n", "0 1 2 3\n"), "tet elements: expected 2 rows, found 1");
    expectError(replaced(kTwoTets, "3 tet", "3 prism"), "no \"tet\" element type");
    expectError(replaced(kTwoTets, "indices\n1\n2\n", "indices\n1\n-2\n"), "t.mphtxt:29: geometric entity index -2");
    // A domain is a material index: labels past the packed cells' 16 bits are refused at their
    // line (503392988 once made a fuzzed file ask for 4 GB of materials).
    expectError(replaced(kTwoTets, "indices\n1\n2\n", "indices\n1\n503392988\n"),
                "t.mphtxt:29: geometric entity index 503392988: indices up to 65535 are supported");
    expectError(replaced(kTwoTets, "indices\n1\n2\n", "indices\n1\n65536\n"), "t.mphtxt:29: geometric entity index 65536");
    BOOST_CHECK_EQUAL(readText(replaced(kTwoTets, "indices\n1\n2\n", "indices\n1\n65535\n")).regionCount(), 65536u);
    expectError(replaced(kTwoTets, "3 # sdim", "2 # sdim"), "t.mphtxt:5: space dimension 2");
    expectError(replaced(kTwoTets, "0 0 0\n1 0 0\n0 1 0\n0 0 1\n", "0 0 0\n1 0 0\n0 1 0\n1 0 0\n"), "t.mphtxt");
    expectError(std::string("0 1\n") + '\0' + "\n", "t.mphtxt:2: binary data");
    // The element count restated after fewer tets were read: the indices must match the tets read.
    expectError(replaced(kTwoTets, "2 # number of elements\n# Elements\n0 1 2 3\n1 2 3 4\n",
                         "1 # number of elements\n# Elements\n0 1 2 3\n2 # number of elements\n"),
                "t.mphtxt:27: 2 geometric entity indices for 1 tet elements read");
}

BOOST_AUTO_TEST_SUITE_END()
