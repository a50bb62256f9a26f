// SPDX-License-Identifier: GPL-3.0-or-later
// The layered special case against an explicit tetrahedral mesh of the same layers (the
// four-layer TIM-OS/MCML case), and the fullmonte-mcml command line.
#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Storage/MCML/MCIReader.hpp"
#include "Storage/MCML/MCOReader.hpp"
#include "Tests/Kernels/McmlTestUtil.hpp"

using namespace fm;
namespace fs = std::filesystem;

namespace {

// The layers as a box mesh wide enough that lateral loss is negligible (the layered model is
// infinite): cubes of 20 mm across, one cube per layer in depth, regions by centroid depth.
struct SlabMesh {
    TetraMesh mesh;
    MaterialSet mats;
    KernelInput in;

    SlabMesh(const LayeredModel& m, double halfWidth, unsigned across) {
        const size_t L = m.layers.size();
        mesh = makeBoxMesh({-halfWidth, -halfWidth, 0}, {halfWidth, halfWidth, m.depth()}, across, across,
                           unsigned(L), [&](const Point3& c) {
                               uint32_t r = 1;
                               while (r < L && c[2] > m.top(r)) ++r;
                               return r;
                           });
        mats.exterior(Material(0, 0, 0, m.nAbove));
        for (const Layer& l : m.layers) mats.append(Material(l.mu_a, l.mu_s, l.g, l.n));
        PencilBeamSource beam;
        beam.position = {0.013, 0.027, -1};  // off the mesh's vertices and edges
        beam.direction = {0, 0, 1};
        in = packModel(mesh, mats, beam);
    }

    // Per batch: absorbed fraction per region, then reflected and transmitted fractions.
    std::vector<double> fractions(const RunResult& r) const {
        std::vector<double> f(mats.size() + 2, 0.0);
        for (uint32_t t = 1; t <= mesh.tetraCount(); ++t) f[mesh.region(t)] += r.volume[t];
        for (uint32_t id : mesh.boundaryFaces()) {
            double nz = mesh.face(id).normal[2];
            if (nz < -0.5) f[mats.size()] += r.surface[id];
            if (nz > 0.5) f[mats.size() + 1] += r.surface[id];
        }
        for (double& v : f) v /= r.ledger.launched;
        return f;
    }
};

void compare(const std::string& what, const fmtest::MeanSd& a, const fmtest::MeanSd& b) {
    double z = (a.mean - b.mean) / std::sqrt(a.sdMean * a.sdMean + b.sdMean * b.sdMean);
    BOOST_TEST_MESSAGE(what << ": layered " << a.mean << " +- " << a.sdMean << ", mesh " << b.mean << " +- "
                            << b.sdMean << " (z = " << z << ")");
    BOOST_CHECK_MESSAGE(std::fabs(z) <= 3, what << ": layered and mesh differ by z = " << z);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(mcml_vs_mesh)

BOOST_AUTO_TEST_CASE(four_layers_layered_equals_tetra_mesh) {
    const char* kMci = "timos/fourlayer/mcml_fourlayer.mci";
    if (!fmtest::haveSharedData(kMci)) return;
    const MCMLRun run = readMCI(fmtest::sharedData(kMci)).runs.at(0);
    const LayeredModel model = layeredFromMcml(run);
    BOOST_REQUIRE_EQUAL(model.nAbove, model.nBelow);  // the mesh has one exterior medium
    const uint64_t perBatch = 40000;
    const int batches = 10;
    fmtest::McmlBatches layered = fmtest::runMcmlBatches(run, perBatch, batches);
    BOOST_TEST_MESSAGE("four layers, layered: " << layered.photons << " photons in " << layered.seconds << " s");

    SlabMesh slab(model, 300, 30);
    std::vector<std::vector<double>> meshBatches;
    for (int b = 0; b < batches; ++b) {
        RunOptions o = mcmlRunOptions(run);
        o.packets = perBatch;
        o.firstPacket = uint64_t(b) * perBatch;
        o.threads = 2;
        // Another seed: with the same one both models replay the same walks (their z motion is
        // identical) and the two estimates would not be independent.
        o.params.seed = 1001;
        RunResult r = runCpu(slab.in, o);
        BOOST_REQUIRE_SMALL(r.ledger.imbalance() / r.ledger.launched, 1e-9);
        meshBatches.push_back(slab.fractions(r));
    }
    auto meshStat = [&](size_t k) {
        std::vector<double> x;
        for (auto& f : meshBatches) x.push_back(f[k]);
        return fmtest::meanSd(x);
    };
    const size_t L = model.layers.size();
    for (size_t l = 0; l < L; ++l)
        compare("A_l[" + std::to_string(l + 1) + "]",
                fmtest::batchStat(layered, [l](const MCMLResult& r) { return r.A_l[l]; }), meshStat(l + 1));
    compare("Rd", fmtest::batchStat(layered, [](const MCMLResult& r) { return r.Rd; }), meshStat(L + 1));
    compare("Tt", fmtest::batchStat(layered, [](const MCMLResult& r) { return r.Tt; }), meshStat(L + 2));
}

// fullmonte-mcml runs every run of a file, writes each .mco where asked, fails cleanly.
BOOST_AUTO_TEST_CASE(command_line_writes_every_mco) {
    fs::path dir = fs::temp_directory_path() / ("fm_mcml_cli_" + std::to_string(std::random_device{}()));
    fs::create_directories(dir / "out");
    const std::string block = "1\n1.0\n1.37 1 100 0.9 0.1\n1.0\n";
    std::ofstream(dir / "two.mci") << "# two runs\n1.0\n2\n"
                                   << "a.mco A\n2000\n0.01 0.01\n10 10 5\n" << block
                                   << "b.mco A\n3000\n0.01 0.01\n10 10 5\n" << block;
    const std::string exe = FM_MCML_EXE, mci = (dir / "two.mci").string(), log = (dir / "log").string();
    int rc = std::system((exe + " " + mci + " --threads 2 --seed 3 --quiet > " + log + " 2>&1").c_str());
    BOOST_CHECK_EQUAL(rc, 0);
    MCMLResult a = readMCO((dir / "a.mco").string()), b = readMCO((dir / "b.mco").string());
    BOOST_CHECK_EQUAL(b.run.photons, 3000u);
    BOOST_CHECK_CLOSE(a.Rsp + a.Rd + a.A + a.Tt, 1.0, 1e-3);
    BOOST_CHECK_NE(a.Rd, b.Rd);  // the two runs use disjoint packet ranges
    rc = std::system((exe + " " + mci + " --output-dir " + (dir / "out").string() + " --quiet > " + log + " 2>&1").c_str());
    BOOST_CHECK_EQUAL(rc, 0);
    BOOST_CHECK(fs::exists(dir / "out" / "b.mco"));
    rc = std::system((exe + " " + (dir / "missing.mci").string() + " > " + log + " 2>&1").c_str());
    BOOST_CHECK_NE(rc, 0);
    std::ifstream in(log);
    std::string msg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    BOOST_CHECK_MESSAGE(msg.find("fullmonte-mcml: error:") != std::string::npos, "message was: " << msg);
#if !(FM_HAVE_CUDA && defined(FM_HAVE_CUDA_MCML))
    rc = std::system((exe + " " + mci + " --kernel cuda --quiet > " + log + " 2>&1").c_str());
    BOOST_CHECK_NE(rc, 0);
#endif
    std::error_code ignored;
    fs::remove_all(dir, ignored);
}

BOOST_AUTO_TEST_SUITE_END()
