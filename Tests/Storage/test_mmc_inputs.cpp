// SPDX-License-Identifier: GPL-3.0-or-later
// MMC's simulation inputs (Storage/MMC/MMCInput.hpp): .inp and JSON (mesh files by MeshID, or
// MeshNode/MeshElem/Domain.Media inline) give the same model; MMC's conventions (g = 1 as a
// non-scattering medium, medium 0 as the exterior, a pencil launched inside InitElem without
// specular reflection, LengthUnit); absorbed fractions against Beer-Lambert; errors naming the
// file and line or JSON path. The MMC-style inputs are written here (MMC's own files are not).
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Kernels/Core/Emitters.hpp"
#include "Storage/MMC/MMC.hpp"
#include "Storage/MMC/MMCInput.hpp"
#include "Tests/Storage/MmcTestFiles.hpp"
#include "Tests/TestUtil.hpp"
#include "fm_config.h"

using namespace fm;
namespace fs = std::filesystem;

namespace {

// This process's folder of written inputs, removed when the process exits.
struct ScratchFolder {
    fs::path path = fs::temp_directory_path() / ("fm_mmc_inputs_" + std::to_string(::getpid()));
    ScratchFolder() { fs::create_directories(path); }
    ~ScratchFolder() {
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
};

fs::path scratchDir() {
    static const ScratchFolder d;
    return d.path;
}

std::string write(const std::string& name, const std::string& text) {
    fs::path p = scratchDir() / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
}

// A 10 x 10 x 10 mm cube (z from 0) in 2 x 2 x 2 cells; region 2 where z > 5 when two layers.
TetraMesh cube(bool twoLayers) {
    return makeBoxMesh({0, 0, 0}, {10, 10, 10}, 2, 2, 2,
                       [=](const Point3& c) { return twoLayers && c[2] > 5 ? 2u : 1u; });
}

// The mesh as MMC's node_/elem_ files, and as MeshNode/MeshElem JSON arrays.
void writeMeshFiles(const TetraMesh& m, const std::string& id) {
    write("node_" + id + ".dat", fmtest::mmcNodeText(m));
    write("elem_" + id + ".dat", fmtest::mmcElemText(m));
}

std::string jsonArrays(const TetraMesh& m) {
    std::ostringstream o;
    o << "\"MeshNode\": [";
    for (uint32_t i = 1; i <= m.pointCount(); ++i)
        o << (i > 1 ? "," : "") << "[" << m.point(i)[0] << "," << m.point(i)[1] << "," << m.point(i)[2] << "]";
    o << "], \"MeshElem\": [";
    for (uint32_t t = 1; t <= m.tetraCount(); ++t) {
        o << (t > 1 ? "," : "") << "[";
        for (uint32_t v : m.tetra(t)) o << v << ",";
        o << m.region(t) << "]";
    }
    o << "]";
    return o.str();
}

// Media 1 and 2 of the two-layer cube: a scattering one, then MMC's non-scattering g = 1.
const char* kProp = "1 2\n1 0.02 7.0 0.89 1.37\n2 0.05 0.0 1.0 1.37\n";
const char* kMediaJson = "[{\"mua\":0,\"mus\":0,\"g\":1,\"n\":1},{\"mua\":0.02,\"mus\":7.0,\"g\":0.89,\"n\":1.37},"
                         "[0.05,0.0,1.0,1.37]]";

std::string inp(const std::string& id, const std::string& sourceType = "") {
    return "5000 # photons\n29012392 # seed\n5.1 4.9 0.0 # source\n0 0 1 # direction\n"
           "0 5e-9 5e-10 # time gates\n" + id + " # mesh id\n1 # initial element\n2 1.0 # detectors\n"
           "5 3 0\n5 7 0\n" + sourceType;
}

RunResult run(const MMCSimulation& s, uint64_t packets, uint64_t first = 0) {
    RunOptions o;
    o.packets = packets;
    o.firstPacket = first;
    o.threads = 2;
    o.params.seed = 5;
    return runCpu(packModel(s.mesh, s.materials, *s.source), o);
}

// Index-matched (n = 1 in and out) non-scattering MMC model (prop rows with g = 1) through an
// .inp, run with N packets.
RunResult runClear(const std::string& id, bool twoLayers, const std::string& prop, uint64_t N) {
    writeMeshFiles(cube(twoLayers), id);
    write("prop_" + id + ".dat", prop);
    MMCSimulation s = readMMCInp(write(id + ".inp", inp(id)), 1.0);
    RunResult r = run(s, N);
    BOOST_CHECK_EQUAL(r.ledger.specular, 0.0);
    BOOST_CHECK_SMALL(r.ledger.imbalance() / r.ledger.launched, 1e-12);
    return r;
}

template <class F>
void expectFormatError(F f, std::initializer_list<std::string> needles) {
    try {
        f();
        BOOST_ERROR("no error; expected one mentioning '" << *needles.begin() << "'");
    } catch (const Error& e) {
        std::string m = e.what();
        BOOST_TEST_MESSAGE("error as expected: " << m);
        for (const auto& n : needles)
            BOOST_CHECK_MESSAGE(m.find(n) != std::string::npos, "message '" << m << "' lacks '" << n << "'");
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(mmc_inputs)

BOOST_AUTO_TEST_CASE(inp_reads_mesh_media_source_and_counts) {
    TetraMesh m = cube(true);
    writeMeshFiles(m, "two");
    write("prop_two.dat", kProp);
    MMCSimulation s = readMMCInp(write("two.inp", inp("two")), 1.0);
    BOOST_CHECK_EQUAL(s.photons, 5000u);
    BOOST_CHECK_EQUAL(s.seed, 29012392);
    BOOST_CHECK_EQUAL(s.mesh.tetraCount(), m.tetraCount());
    BOOST_CHECK_EQUAL(s.materials.size(), 3u);
    BOOST_CHECK_EQUAL(s.materials.exterior().n, 1.0);
    // g = 1: MMC's non-scattering medium, read as mu_s = 0.
    BOOST_CHECK_EQUAL(s.materials.material(2).mu_s, 0.0);
    BOOST_CHECK_EQUAL(s.materials.material(2).g, 0.0);
    auto* p = dynamic_cast<PencilBeamSource*>(s.source.get());
    BOOST_REQUIRE(p);
    BOOST_CHECK(!p->specularAtEntry);  // MMC launches inside, weight 1
    BOOST_CHECK_EQUAL(p->position[0], 5.1);
    RunResult r = run(s, 2000);
    BOOST_CHECK_EQUAL(r.ledger.specular, 0.0);
    BOOST_CHECK_SMALL(r.ledger.imbalance() / r.ledger.launched, 1e-12);
}

// The three spellings of one model run the same histories.
BOOST_AUTO_TEST_CASE(json_by_mesh_id_inline_and_inp_agree) {
    TetraMesh m = cube(true);
    writeMeshFiles(m, "two");
    write("prop_two.dat", kProp);
    MMCSimulation a = readMMCInp(write("two.inp", inp("two")), 1.0);
#if FM_HAVE_JSON
    const std::string session = "\"Session\": {\"Photons\": 5000, \"RNGSeed\": 29012392, \"ID\": \"two\"},"
                                "\"Forward\": {\"T0\": 0, \"T1\": 5e-9, \"Dt\": 5e-10},"
                                "\"Optode\": {\"Source\": {\"Pos\": [5.1, 4.9, 0.0], \"Dir\": [0, 0, 1]},"
                                "\"Detector\": [{\"Pos\": [5, 3, 0], \"R\": 1}]}";
    MMCSimulation b = readMMCJson(write("byid.json", "{\"Mesh\": {\"MeshID\": \"two\", \"InitElem\": 1}," + session + "}"));
    MMCSimulation c = readMMCJson(write("inline.json", "{\"Mesh\": {" + jsonArrays(m) + ", \"InitElem\": 1}, \"Domain\": {\"Media\": " +
                                                           kMediaJson + "}," + session + "}"));
    // MMC's older examples hold MeshID and InitElem in Domain.
    MMCSimulation d = readMMCJson(write("domain.json", "{\"Domain\": {\"MeshID\": \"two\", \"InitElem\": 1}," + session + "}"));
    // A length unit with mesh files is refused, naming the key that gave it.
    expectFormatError([&] { readMMCJson(write("unit_files.json", "{\"Mesh\": {\"MeshID\": \"two\"}, \"Domain\": {\"LengthUnit\": 10}," + session + "}")); },
                      {"unit_files.json", "Domain.LengthUnit", "inline MeshNode only"});
    RunResult ra = run(a, 3000);
    for (const MMCSimulation* s : {&b, &c, &d}) {
        BOOST_CHECK_EQUAL(s->photons, 5000u);
        BOOST_CHECK_EQUAL(s->seed, 29012392);
        RunResult r = run(*s, 3000);
        BOOST_CHECK(r.volume == ra.volume);
        BOOST_CHECK_EQUAL(r.ledger.absorbed, ra.ledger.absorbed);
    }
#else
    BOOST_TEST_MESSAGE("SKIP JSON: built without nlohmann-json");
    expectFormatError([] { readMMCJson(write("x.json", "{}")); }, {"nlohmann-json"});
#endif
}

// Beer-Lambert through MMC's non-scattering medium (g = 1, mu_s = 0), index-matched (n = 1 in
// and out, nothing reflected): a packet is absorbed within depth L with p = 1 - exp(-mu_a L),
// so the absorbed fraction of N packets has standard error sqrt(p (1 - p) / N).
// MMC's seeds: a negative one asks for a seed from the clock (MMC's convention), so one is drawn
// and named for the user to repeat the run; a whole number is taken exactly (an .inp's digits are
// not rounded through double); anything else is refused naming the line or key.
BOOST_AUTO_TEST_CASE(seeds_negative_drawn_whole_exact_others_refused) {
    writeMeshFiles(cube(true), "two");
    write("prop_two.dat", kProp);
    auto withSeed = [](const std::string& seed) {
        std::string t = inp("two");
        return t.replace(t.find("29012392"), 8, seed);
    };
    for (const char* negative : {"-1", "-7"}) {
        MMCSimulation s = readMMCInp(write("neg.inp", withSeed(negative)), 1.0);
        BOOST_TEST_CONTEXT("seed " << negative) {
            BOOST_CHECK(s.seed >= 1 && s.seed <= 2147483647);
            BOOST_CHECK(s.seedNote.find("neg.inp:2: the random seed " + std::string(negative) +
                                        " asks for a seed from the clock") != std::string::npos);
            BOOST_CHECK(s.seedNote.find("seed " + std::to_string(s.seed) + " was drawn") != std::string::npos);
        }
    }
    MMCSimulation plain = readMMCInp(write("plain.inp", withSeed("9000000000000000001")), 1.0);
    BOOST_CHECK_EQUAL(plain.seed, 9000000000000000001LL);
    BOOST_CHECK(plain.seedNote.empty());
    BOOST_CHECK_EQUAL(readMMCInp(write("exp.inp", withSeed("1e6")), 1.0).seed, 1000000);
    BOOST_CHECK_EQUAL(readMMCInp(write("zero.inp", withSeed("0")), 1.0).seed, 0);
    for (const char* bad : {"1.5", "abc", "9.3e18", "-1.5"})
        BOOST_TEST_CONTEXT("seed " << bad) {
            expectFormatError([&] { readMMCInp(write("bad.inp", withSeed(bad)), 1.0); },
                              {"bad.inp:2: the random seed must be a whole number", "found '" + std::string(bad) + "'"});
        }
#if FM_HAVE_JSON
    auto json = [](const std::string& seed) {
        return "{\"Mesh\": {\"MeshID\": \"two\", \"InitElem\": 1}, \"Session\": {\"RNGSeed\": " + seed +
               "}, \"Optode\": {\"Source\": {\"Pos\": [5.1, 4.9, 0.0], \"Dir\": [0, 0, 1]}}}";
    };
    MMCSimulation j = readMMCJson(write("neg.json", json("-1")));
    BOOST_CHECK(j.seed >= 1 && j.seed <= 2147483647);
    BOOST_CHECK(j.seedNote.find("neg.json: Session.RNGSeed -1 asks for a seed from the clock") != std::string::npos);
    BOOST_CHECK(j.seedNote.find("seed " + std::to_string(j.seed) + " was drawn") != std::string::npos);
    BOOST_CHECK_EQUAL(readMMCJson(write("big.json", json("9000000000000000001"))).seed, 9000000000000000001LL);
    BOOST_CHECK_EQUAL(readMMCJson(write("float.json", json("1e6"))).seed, 1000000);
    BOOST_CHECK(readMMCJson(write("float.json", json("1e6"))).seedNote.empty());
    for (const char* bad : {"1.5", "1e30", "18446744073709551615", "\"12\"", "true"})
        BOOST_TEST_CONTEXT("RNGSeed " << bad) {
            expectFormatError([&] { readMMCJson(write("bad.json", json(bad))); }, {"bad.json: Session.RNGSeed: "});
        }
    expectFormatError([&] { readMMCJson(write("bad.json", json("1.5"))); },
                      {"bad.json: Session.RNGSeed: must be a whole number in [0, 2^63-1]", "found 1.5"});
    expectFormatError([&] { readMMCJson(write("bad.json", json("\"12\""))); },
                      {"bad.json: Session.RNGSeed: expected a whole number, found string"});
#endif
}

BOOST_AUTO_TEST_CASE(beer_lambert_through_g1_medium) {
    const uint64_t N = 40000;
    RunResult r = runClear("clear", false, "1 1\n1 0.08 0.0 1.0 1.0\n", N);
    const double p = 1 - std::exp(-0.08 * 10.0);
    const double a = r.ledger.absorbed / r.ledger.launched;
    fmtest::checkWithinSigma("Beer-Lambert absorbed", {a, std::sqrt(p * (1 - p) / N)}, p);
}

// Two non-scattering layers of different mu_a (media 1 and 2 by label), matched: absorbed in
// layer 1 is 1 - exp(-mu1 5), in layer 2 exp(-mu1 5)(1 - exp(-mu2 5)); the rest leaves.
BOOST_AUTO_TEST_CASE(beer_lambert_per_region_and_energy_conservation) {
    const uint64_t N = 40000;
    RunResult r = runClear("layers", true, "1 2\n1 0.06 0 1 1.0\n2 0.15 0 1 1.0\n", N);
    TetraMesh m = cube(true);
    double e1 = 0, e2 = 0;
    for (uint32_t t = 1; t <= m.tetraCount(); ++t) (m.region(t) == 1 ? e1 : e2) += r.volume[t];
    const double p1 = 1 - std::exp(-0.3), p2 = std::exp(-0.3) * (1 - std::exp(-0.75));
    fmtest::checkWithinSigma("layer 1", {e1 / N, std::sqrt(p1 * (1 - p1) / N)}, p1);
    fmtest::checkWithinSigma("layer 2", {e2 / N, std::sqrt(p2 * (1 - p2) / N)}, p2);
    BOOST_CHECK_CLOSE(r.ledger.absorbed + r.ledger.exited, r.ledger.launched, 1e-9);
}

#if FM_HAVE_JSON
// LengthUnit (mm per unit) scales node and source coordinates; Media[0].n is the exterior index;
// DoMismatch 0 makes the boundary matched; "isotropic" is a point source.
BOOST_AUTO_TEST_CASE(json_length_unit_exterior_and_mismatch) {
    TetraMesh m = makeBoxMesh({0, 0, 0}, {1, 1, 1}, 2, 2, 2, [](const Point3&) { return 1u; });
    const std::string body = "\"Mesh\": {" + jsonArrays(m) + ", \"InitElem\": 1, \"LengthUnit\": 10},"
                             "\"Domain\": {\"Media\": [[0,0,1,1.33],[0.01,1,0.9,1.37]]},"
                             "\"Optode\": {\"Source\": {\"Pos\": [0.5, 0.5, 0.5], \"Type\": \"isotropic\"}}";
    MMCSimulation s = readMMCJson(write("unit.json", "{" + body + "}"));
    BOOST_CHECK_CLOSE(s.mesh.bounds()[1][0], 10.0, 1e-12);
    BOOST_CHECK_EQUAL(s.materials.exterior().n, 1.33);
    BOOST_CHECK(!s.materials.matchedBoundary);
    auto* p = dynamic_cast<PointSource*>(s.source.get());
    BOOST_REQUIRE(p);
    BOOST_CHECK_CLOSE(p->position[2], 5.0, 1e-12);
    MMCSimulation t = readMMCJson(write("nomismatch.json", "{" + body + ", \"Session\": {\"DoMismatch\": 0}}"));
    BOOST_CHECK(t.materials.matchedBoundary);
}
#endif

BOOST_AUTO_TEST_CASE(bad_inputs_name_file_and_line_or_json_path) {
    TetraMesh m = cube(true);
    writeMeshFiles(m, "two");
    write("prop_two.dat", kProp);
    // element labels -2 (MMC's external detector elements) and below; 0 and -1 are read (background)
    std::ostringstream elem;
    elem << "1\t" << m.tetraCount() << "\n";
    for (uint32_t t = 1; t <= m.tetraCount(); ++t) {
        elem << t;
        for (uint32_t v : m.tetra(t)) elem << "\t" << v;
        elem << "\t" << (t == 3 ? "LABEL" : std::to_string(m.region(t))) << "\n";
    }
    write("node_lab.dat", "");
    fs::copy_file(scratchDir() / "node_two.dat", scratchDir() / "node_lab.dat", fs::copy_options::overwrite_existing);
    write("prop_lab.dat", kProp);
    for (auto [label, fragment] : {std::pair{"-2", "external detector"}, std::pair{"-3", "label -3 is not a medium"}}) {
        std::string text = elem.str();
        text.replace(text.find("LABEL"), 5, label);
        std::string e = write("elem_lab.dat", text);
        expectFormatError([] { readMMCInp(write("lab.inp", inp("lab")), 1.0); }, {"elem_lab.dat:4: element 3", fragment});
    }
    expectFormatError([] { readMMCInp(write("slit.inp", inp("two", "slit\n0 0 1 0\n")), 1.0); },
                      {"slit.inp:11", "source type 'slit' is not supported", "collimated beam from a segment"});
    expectFormatError([] { readMMCInp(write("cone.inp", inp("two", "cone\n2.0 0 0 0\n")), 1.0); },
                      {"cone.inp:11", "half-angle Param1[0] must be in (0, pi/2]"});
    expectFormatError([] { readMMCInp(write("conep.inp", inp("two", "cone\n0.5\n")), 1.0); },
                      {"conep.inp:12", "Param1 (4 numbers)"});
    expectFormatError([] { readMMCInp(write("short.inp", "1000\n1\n0 0 0\n"), 1.0); },
                      {"short.inp:3: unexpected end of file, expected the source direction"});
    expectFormatError([] { readMMCInp(write("gates.inp", "1000\n1\n0 0 0\n0 0 1\n1e-9 0 1e-10\n"), 1.0); },
                      {"gates.inp:5: incorrect time gates"});
    expectFormatError([] { readMMCInp(write("nomesh.inp", inp("nosuch")), 1.0); }, {"node_nosuch.dat: cannot open"});
    // Numbers beyond a 64-bit integer, or with a fraction, are refused, not converted (fuzz_mmc_inp).
    expectFormatError([] { readMMCInp(write("seed.inp", "1000\n2.9e35\n0 0 0\n0 0 1\n"), 1.0); },
                      {"seed.inp:2: the random seed must be a whole number"});
    expectFormatError([] { readMMCInp(write("elem.inp", "1000\n1\n0 0 0\n0 0 1\n0 1e-9 1e-9\ntwo\n1e30\n"), 1.0); },
                      {"elem.inp:7: the element enclosing the source must be a whole number"});
    expectFormatError([] { readMMCInp(write("elemfrac.inp", "1000\n1\n0 0 0\n0 0 1\n0 1e-9 1e-9\ntwo\n1.5\n"), 1.0); },
                      {"elemfrac.inp:7: the element enclosing the source must be a whole number"});
    write("prop_g.dat", "1 2\n1 0.02 7.0 1.5 1.37\n2 0.05 0.0 1.0 1.37\n");
    fs::copy_file(scratchDir() / "node_two.dat", scratchDir() / "node_g.dat", fs::copy_options::overwrite_existing);
    fs::copy_file(scratchDir() / "elem_two.dat", scratchDir() / "elem_g.dat", fs::copy_options::overwrite_existing);
    expectFormatError([] { readMMCInp(write("g.inp", inp("g")), 1.0); }, {"prop_g.dat:2: material 1", "or be 1, MMC's non-scattering"});
    expectFormatError([] { readMMCInput(write("x.txt", ""), 1.0); }, {"x.txt: an MMC input is a .json or .inp file"});
#if FM_HAVE_JSON
    const std::string src = "\"Optode\": {\"Source\": {\"Pos\": [5, 5, 0]}}";
    struct Case {
        std::string name, text;
        std::vector<std::string> fragments;
    };
    const std::string mesh = "\"Mesh\": {" + jsonArrays(m) + ", \"InitElem\": 1}";
    std::string badLabel = mesh;
    badLabel.replace(badLabel.find(",1]"), 3, ",-2]");  // the first element's label -> -2
    std::vector<Case> cases = {
        {"syntax", "{\"Mesh\": ", {"syntax.json: not valid JSON"}},
        {"overflow", "{\"Mesh\": {\"InitElem\": 1e400}}", {"overflow.json: not valid JSON", "1e400"}},
        {"nomesh", "{" + src + "}", {"nomesh.json: no mesh"}},
        {"pos", "{" + mesh + ", \"Domain\": {\"Media\": " + kMediaJson + "}, \"Optode\": {\"Source\": {\"Pos\": [5, 5]}}}",
         {"pos.json: Optode.Source.Pos: expected an array of 3 numbers"}},
        {"type", "{" + mesh + ", \"Domain\": {\"Media\": " + kMediaJson +
                     "}, \"Optode\": {\"Source\": {\"Pos\": [5,5,0], \"Type\": \"pattern\"}}}",
         {"type.json: Optode.Source", "'pattern' is not supported", "weighted by an image"}},
        {"planar", "{" + mesh + ", \"Domain\": {\"Media\": " + kMediaJson +
                       "}, \"Optode\": {\"Source\": {\"Pos\": [5,5,-1], \"Type\": \"planar\", \"Param1\": [1,0,0]}}}",
         {"planar.json: Optode.Source", "planar needs two sides"}},
        {"label", "{" + badLabel + ", \"Domain\": {\"Media\": " + kMediaJson + "}," + src + "}",
         {"label.json: Mesh.MeshElem[", "]: label -2 marks MMC's external detector"}},
        {"media", "{" + mesh + ", \"Domain\": {\"Media\": [[0,0,1,1],[0.1,1,0.9,1.37]]}," + src + "}",
         {"media.json: Domain.Media: the mesh has labels up to 2 but only 1 media"}},
        {"medium", "{" + mesh + ", \"Domain\": {\"Media\": [[0,0,1,1],{\"mua\":0.1,\"mus\":1,\"g\":0.9},[0,0,1,1]]}," + src + "}",
         {"medium.json: Domain.Media[1]: missing \"n\""}},
        {"mismatch", "{" + mesh + ", \"Domain\": {\"Media\": [[0,0,1,1],[0.1,1,0.9,1.37],[0.1,1,0.9,1.4]]}, \"Session\": {\"DoMismatch\": 0}," +
                         src + "}",
         {"mismatch.json: Session.DoMismatch: 0", "media 1 and 2"}},
        {"photons", "{" + mesh + ", \"Domain\": {\"Media\": " + kMediaJson + "}, \"Session\": {\"Photons\": \"many\"}," + src + "}",
         {"photons.json: Session.Photons: expected a number, found string"}},
    };
    for (const Case& c : cases) {
        BOOST_TEST_CONTEXT("case " << c.name) {
            std::string path = write(c.name + ".json", c.text);
            try {
                readMMCJson(path);
                BOOST_ERROR("no error");
            } catch (const Error& e) {
                for (const auto& f : c.fragments)
                    BOOST_CHECK_MESSAGE(std::string(e.what()).find(f) != std::string::npos, e.what() << " lacks " << f);
            }
        }
    }
#endif
}

BOOST_AUTO_TEST_SUITE_END()

// MMC's background (labels 0 and -1): an air layer (z in [-2, 0], label 0, the source's element
// -1 as MMC's wide-field source elements) over a non-scattering slab (z in [0, 6], mu_a 0.2,
// n 1.37) in air (n 1). MMC's photon crosses the air layer unattenuated, is reflected at the
// tissue with R = ((n - 1) / (n + 1))^2 at normal incidence, each pass through the slab absorbs
// 1 - a (a = exp(-mu_a L)) and each exit, into the background or the exterior alike, reflects R
// back: absorbed = (1 - R)(1 - a) / (1 - R a). A packet is absorbed whole (weight 1 - R) or not
// at all: standard error (1 - R) sqrt(p (1 - p) / N) with p = absorbed / (1 - R). Were the air
// layer tissue, or the beam started inside the slab without reflection, the absorbed fraction
// would be 1 - a = 0.699 or (1 - a) / (1 - R a) = 0.704 instead of 0.687 (8 standard errors off).
namespace {
struct AirSlab {
    TetraMesh full = makeBoxMesh({0, 0, -2}, {10, 10, 6}, 2, 2, 4,
                                 [](const Point3& c) { return c[2] < 0 ? 2u : 1u; });
    uint32_t init = 0, air = 0;
    AirSlab() {
        init = full.locate({5.1, 4.9, -1});
        std::ostringstream elem;
        elem << "1\t" << full.tetraCount() << "\n";
        for (uint32_t t = 1; t <= full.tetraCount(); ++t) {
            elem << t;
            for (uint32_t v : full.tetra(t)) elem << "\t" << v;
            air += full.region(t) == 2;
            elem << "\t" << (t == init ? "-1" : full.region(t) == 2 ? "0" : "1") << "\n";
        }
        write("node_air.dat", fmtest::mmcNodeText(full));
        write("elem_air.dat", elem.str());
        write("prop_air.dat", "1 1\n1 0.2 0 1 1.37\n");
    }
};
}  // namespace

BOOST_AUTO_TEST_CASE(background_labels_left_out_entry_reflected_as_mmc) {
    AirSlab slab;
    BOOST_REQUIRE(slab.init && slab.full.region(slab.init) == 2);
    const std::string text = "100000\n7\n5.1 4.9 -1\n0 0 1\n0 5e-9 5e-9\nair\n" + std::to_string(slab.init) + "\n0 1\n";
    MMCSimulation s = readMMCInp(write("air.inp", text), 1.0);
    BOOST_CHECK_EQUAL(s.backgroundElements, slab.air);
    BOOST_CHECK_EQUAL(s.mesh.tetraCount(), slab.full.tetraCount() - slab.air);
    BOOST_CHECK_EQUAL(s.mesh.locate({5.1, 4.9, -1}), 0u);  // the air layer is not part of the mesh
    BOOST_REQUIRE_EQUAL(s.warnings.size(), 1u);
    BOOST_CHECK(s.warnings[0].find("background (labels 0 and -1)") != std::string::npos);
    auto* p = dynamic_cast<PencilBeamSource*>(s.source.get());
    BOOST_REQUIRE(p);
    BOOST_CHECK(p->specularAtEntry);
    const uint64_t N = 100000;
    RunResult r = run(s, N);
    const double R = std::pow(0.37 / 2.37, 2), a = std::exp(-0.2 * 6);
    const double A = (1 - R) * (1 - a) / (1 - R * a), q = A / (1 - R);
    BOOST_CHECK_CLOSE(r.ledger.specular / r.ledger.launched, R, 1e-4);
    fmtest::checkWithinSigma("absorbed below MMC's air layer",
                             {r.ledger.absorbed / r.ledger.launched, (1 - R) * std::sqrt(q * (1 - q) / N)}, A, 4);
    BOOST_CHECK_SMALL(r.ledger.imbalance() / r.ledger.launched, 1e-12);
#if FM_HAVE_JSON
    // The same by JSON with DoMismatch 0: no reflection anywhere, absorbed = 1 - a.
    MMCSimulation m = readMMCJson(write("air.json", "{\"Mesh\": {\"MeshID\": \"air\", \"InitElem\": " +
                                                        std::to_string(slab.init) + "}, \"Session\": {\"DoMismatch\": 0},"
                                                        "\"Optode\": {\"Source\": {\"Pos\": [5.1, 4.9, -1], \"Dir\": [0, 0, 1]}}}"));
    RunResult rm = run(m, N);
    BOOST_CHECK_EQUAL(rm.ledger.specular, 0.0);
    fmtest::checkWithinSigma("absorbed, DoMismatch 0", {rm.ledger.absorbed / rm.ledger.launched, std::sqrt(a * (1 - a) / N)},
                             1 - a, 4);
    // A planar beam (a 4 x 3 mm rectangle in the air layer, MMC's wide-field source) gives the same
    // closed form: every packet enters at normal incidence.
    MMCSimulation pl = readMMCJson(write("airplanar.json", "{\"Mesh\": {\"MeshID\": \"air\", \"InitElem\": " +
                                                              std::to_string(slab.init) + "}, \"Optode\": {\"Source\": {\"Pos\": [3, 4, -1],"
                                                              "\"Dir\": [0, 0, 1], \"Type\": \"planar\", \"Param1\": [4, 0, 0, 0], \"Param2\": [0, 3, 0, 0]}}}"));
    BOOST_REQUIRE(dynamic_cast<PlanarSource*>(pl.source.get()));
    RunResult rp = run(pl, N);
    BOOST_CHECK_CLOSE(rp.ledger.specular / rp.ledger.launched, R, 1e-3);
    fmtest::checkWithinSigma("absorbed under a planar beam",
                             {rp.ledger.absorbed / rp.ledger.launched, (1 - R) * std::sqrt(q * (1 - q) / N)}, A, 4);
    // MMC's background takes medium 0: one that absorbs is refused (FullMonte's background is void).
    expectFormatError([&] {
        readMMCJson(write("airmedium.json", "{\"Mesh\": {\"MeshID\": \"air\", \"InitElem\": " + std::to_string(slab.init) +
                                                "}, \"Domain\": {\"Media\": [[0.01, 0, 1, 1], [0.2, 0, 1, 1.37]]},"
                                                "\"Optode\": {\"Source\": {\"Pos\": [5.1, 4.9, -1]}}}"));
    }, {"airmedium.json: Domain.Media[0]", "background elements", "medium 0 absorbs or scatters"});
    // Only a beam (pencil, disk, planar) may start in the background.
    expectFormatError([&] {
        readMMCJson(write("airiso.json", "{\"Mesh\": {\"MeshID\": \"air\", \"InitElem\": " + std::to_string(slab.init) +
                                             "}, \"Optode\": {\"Source\": {\"Pos\": [5.1, 4.9, -1], \"Type\": \"isotropic\"}}}"));
    }, {"airiso.json: Optode.Source", "isotropic source in a background element"});
    // .inp: the type line, Param1 and Param2 lines.
    const std::string planarInp = "1000\n7\n3 4 -1\n0 0 1\n0 5e-9 5e-9\nair\n" + std::to_string(slab.init) +
                                  "\n0 1\nplanar\n4 0 0 0\n0 3 0 0\n";
    MMCSimulation pi = readMMCInp(write("airplanar.inp", planarInp), 1.0);
    auto* ps = dynamic_cast<PlanarSource*>(pi.source.get());
    BOOST_REQUIRE(ps);
    BOOST_CHECK_EQUAL(ps->side1[0], 4.0);
    BOOST_CHECK_EQUAL(ps->side2[1], 3.0);
#endif
    // Every element background: no tissue.
    write("node_none.dat", fmtest::mmcNodeText(slab.full));
    std::string none = "1\t" + std::to_string(slab.full.tetraCount()) + "\n";
    for (uint32_t t = 1; t <= slab.full.tetraCount(); ++t) {
        none += std::to_string(t);
        for (uint32_t v : slab.full.tetra(t)) none += "\t" + std::to_string(v);
        none += "\t0\n";
    }
    write("elem_none.dat", none);
    write("prop_none.dat", "1 1\n1 0.2 0 1 1.37\n");
    expectFormatError([] { readMMCInp(write("none.inp", inp("none")), 1.0); }, {"elem_none.dat", "there is no tissue"});
}

// MMC's cone (Param1[0] the half-angle in radians, uniform in solid angle) is a fibre cone of
// NA = n sin(theta) from Pos: the cosine to Dir is uniform on [cos theta, 1], mean (1 + c) / 2,
// standard deviation (1 - c) / sqrt(12).
BOOST_AUTO_TEST_CASE(cone_source_directions_and_run) {
    TetraMesh m = cube(true);
    writeMeshFiles(m, "cone");
    write("prop_cone.dat", kProp);
    const std::string text = "20000\n3\n5.1 4.9 2.0\n0 0.6 0.8\n0 5e-9 5e-9\ncone\n0\n0 1\ncone\n0.6 0 0 0\n";
    MMCSimulation s = readMMCInp(write("conesrc.inp", text), 1.0);
    KernelInput in = packModel(s.mesh, s.materials, *s.source);
    ArrayModel am = in.view();
    const int n = 40000;
    double sum = 0;
    for (int i = 0; i < n; ++i) {
        PacketRng rng(11, uint64_t(i));
        LaunchRecord L = emit(am, am.emitters, rng);
        BOOST_REQUIRE(L.weight == 1.f);
        BOOST_REQUIRE(std::fabs(L.pos.z - 2.0f) < 1e-6f);
        sum += L.dir.y * 0.6 + L.dir.z * 0.8;
    }
    const double c = std::cos(0.6);
    fmtest::checkWithinSigma("mean cosine to Dir", {sum / n, (1 - c) / std::sqrt(12.0 * n)}, (1 + c) / 2, 4);
    RunResult r = run(s, 20000);
    BOOST_CHECK_EQUAL(r.ledger.specular, 0.0);
    BOOST_CHECK_GT(r.ledger.absorbed, 0.0);
    BOOST_CHECK_SMALL(r.ledger.imbalance() / r.ledger.launched, 1e-12);
}

// FullMonte's MMC writers (the files a side-by-side run with MMC reads) read back as the same
// mesh and media, MMC's non-scattering convention included.
BOOST_AUTO_TEST_CASE(mmc_writers_round_trip) {
    TetraMesh box = makeBoxMesh({-1.5, -2, -0.25}, {1.5, 2, 3.1}, 3, 4, 5, [](const Point3& c) {
        return c[2] > 1 ? 2u : 1u;
    });
    MaterialSet mats;
    mats.exterior(Material(0, 0, 0, 1.0));
    mats.append(Material(0.0123456789, 10.5, 0.9, 1.37));
    mats.append(Material(0.25, 0, 0, 1.4));  // non-scattering
    const std::string dir = scratchDir().string();
    writeMMCMesh(dir, "rt", box);
    writeMMCMaterials(dir, "rt", mats);
    TetraMesh back = readMMCMesh(dir + "/node_rt.dat", dir + "/elem_rt.dat");
    BOOST_REQUIRE_EQUAL(back.pointCount(), box.pointCount());
    BOOST_REQUIRE_EQUAL(back.tetraCount(), box.tetraCount());
    for (uint32_t p = 1; p <= box.pointCount(); ++p) BOOST_REQUIRE(back.point(p) == box.point(p));
    for (uint32_t t = 1; t <= box.tetraCount(); ++t) {
        BOOST_REQUIRE(back.tetra(t) == box.tetra(t));
        BOOST_REQUIRE_EQUAL(back.region(t), box.region(t));
    }
    // Each element in MMC's orientation (its volume, -(b - a) . ((c - a) x (d - a)) / 6, is
    // positive), and the volumes MMC takes from velem_rt.dat instead of computing them in
    // single precision (which inverts the smallest tetras of a fine mesh).
    std::ifstream elem(dir + "/elem_rt.dat"), velem(dir + "/velem_rt.dat");
    BOOST_REQUIRE_MESSAGE(velem, "no velem_rt.dat");
    size_t one = 0, count = 0, vone = 0, vcount = 0;
    elem >> one >> count;
    velem >> vone >> vcount;
    BOOST_REQUIRE_EQUAL(count, box.tetraCount());
    BOOST_REQUIRE_EQUAL(vcount, box.tetraCount());
    for (uint32_t t = 1; t <= box.tetraCount(); ++t) {
        uint32_t id = 0, p[4] = {}, region = 0, vid = 0;
        double v = 0;
        elem >> id >> p[0] >> p[1] >> p[2] >> p[3] >> region;
        velem >> vid >> v;
        BOOST_REQUIRE(elem && velem);
        BOOST_REQUIRE_EQUAL(id, t);
        BOOST_REQUIRE_EQUAL(vid, t);
        const Point3 &a = box.point(p[0]), &b = box.point(p[1]), &c = box.point(p[2]), &d = box.point(p[3]);
        const double mmcVolume = -dotP(sub(b, a), crossP(sub(c, a), sub(d, a))) / 6;
        BOOST_CHECK_CLOSE(mmcVolume, box.volume(t), 1e-9);
        BOOST_CHECK_CLOSE(v, box.volume(t), 1e-12);
    }
    MaterialSet m = readMMCMaterials(dir + "/prop_rt.dat", 1.0);
    BOOST_REQUIRE_EQUAL(m.size(), mats.size());
    for (size_t i = 1; i < m.size(); ++i) {
        BOOST_CHECK_EQUAL(m.material(i).mu_a, mats.material(i).mu_a);
        BOOST_CHECK_EQUAL(m.material(i).mu_s, mats.material(i).mu_s);
        BOOST_CHECK_EQUAL(m.material(i).g, mats.material(i).g);
        BOOST_CHECK_EQUAL(m.material(i).n, mats.material(i).n);
    }
    std::ifstream prop(dir + "/prop_rt.dat");
    std::string all((std::istreambuf_iterator<char>(prop)), std::istreambuf_iterator<char>());
    BOOST_CHECK_MESSAGE(all.find("\n2 0.25 0 1 ") != std::string::npos, "mu_s = 0 not written as g = 1: " << all);
}
