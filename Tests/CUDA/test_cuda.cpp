// SPDX-License-Identifier: GPL-3.0-or-later
// CUDA kernel against the CPU kernel. Skips (with a message) when no GPU is present.
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <fstream>
#include <numeric>
#include <string>

#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Kernels/Dispatch.hpp"
#include "Storage/MCML/MCMLKernelRun.hpp"
#include "Tests/TestUtil.hpp"
#include "fm_config.h"

using namespace fm;
using fmtest::haveGpu;
using fmtest::l1;

namespace {
struct Model {
    TetraMesh mesh = makeBoxMesh({-5, -5, -5}, {5, 5, 5}, 8, 8, 8, [](const Point3& c) {
        return c[0] * c[0] + c[1] * c[1] + c[2] * c[2] < 9 ? 2u : (c[2] > 2 ? 3u : 1u);
    });
    MaterialSet mats;
    Model() {
        mats.exterior(Material(0, 0, 0, 1.0));
        mats.append(Material(0.05, 5, 0.8, 1.4));
        mats.append(Material(0.5, 20, 0.9, 1.37));
        mats.append(Material(0.02, 2, 0.0, 1.33));
    }
};
}  // namespace

BOOST_FIXTURE_TEST_SUITE(cuda, Model)

BOOST_AUTO_TEST_CASE(gpu_matches_cpu_statistically) {
    if (!haveGpu()) return;
    PointSource P;
    P.position = {0.1, 0.2, 0.3};
    KernelInput in = packModel(mesh, mats, P, {mesh.tetraFace(100, 0) & 0x7fffffff});
    RunOptions o;
    o.packets = 200000;
    o.outputs.directed = true;
    RunResult g = runKernel("cuda", in, o);
    RunResult c = runKernel("cpu", in, o);
    o.params.seed = 99;
    RunResult c2 = runKernel("cpu", in, o);
    BOOST_CHECK_EQUAL(g.packetsDone, o.packets);
    BOOST_CHECK_SMALL(g.ledger.imbalance() / g.ledger.launched, 1e-9);
    // Same seed and packet indices: the GPU draws the same random numbers; float rounding in
    // the two compilers lets paths drift apart, so compare as statistics.
    double dGpu = l1(c.volume, g.volume), dCpu = l1(c.volume, c2.volume);
    BOOST_TEST_MESSAGE("L1 cpu-gpu " << dGpu << ", cpu-cpu(other seed) " << dCpu);
    BOOST_CHECK_LE(dGpu, 1.2 * dCpu);
    double pa = g.ledger.absorbed / g.ledger.launched, pc = c2.ledger.absorbed / c2.ledger.launched;
    BOOST_CHECK_SMALL(pa - pc, 3 * std::sqrt(2 * 0.25 / o.packets));
    // reproducible: same seed, same GPU -> same tallies to rounding (atomics reorder sums)
    o.params.seed = 1;
    RunResult g2 = runKernel("cuda", in, o);
    BOOST_CHECK_SMALL(l1(g.volume, g2.volume), 1e-9);
    BOOST_CHECK_EQUAL(g.events.scatter, g2.events.scatter);
}

// The directed (face-crossing) tally, spread over the tally replicas by the crossing's position
// like the others, against the CPU: same seed closer than the CPU's own other-seed spread.
BOOST_AUTO_TEST_CASE(directed_tallies_match_cpu) {
    if (!haveGpu()) return;
    PointSource P;
    P.position = {0.1, 0.2, 0.3};
    std::vector<uint32_t> scored;  // every third tetra's face 1
    for (uint32_t t = 1; t <= mesh.tetraCount(); t += 3) scored.push_back(mesh.tetraFace(t, 1) & 0x7fffffff);
    KernelInput in = packModel(mesh, mats, P, scored);
    RunOptions o;
    o.packets = 1000000;
    o.outputs.directed = true;
    const RunResult g = runKernel("cuda", in, o);
    const RunResult c = runKernel("cpu", in, o);
    o.params.seed = 99;
    const RunResult c2 = runKernel("cpu", in, o);
    BOOST_REQUIRE_EQUAL(g.directed.size(), c.directed.size());
    const double dGpu = l1(c.directed, g.directed), dCpu = l1(c.directed, c2.directed);
    BOOST_TEST_MESSAGE("directed L1 cpu-gpu " << dGpu << ", cpu-cpu(other seed) " << dCpu);
    BOOST_CHECK_GT(std::accumulate(g.directed.begin(), g.directed.end(), 0.0), 0.0);
    BOOST_CHECK_LE(dGpu, 1.2 * dCpu);
}

// The mesh kernel runs as many thread blocks per SM as fit (4), or at most tuning.cudaBlocksPerSm.
// Every packet keeps its history: the same event counts, and the same tallies and ledger (whose
// fields other than the absorbed weight are added by reductions into replicas) up to the order
// of the atomic additions.
BOOST_AUTO_TEST_CASE(blocks_per_sm_change_only_the_order_of_additions) {
    if (!haveGpu()) return;
    PointSource P;
    P.position = {0.1, 0.2, 0.3};
    KernelInput in = packModel(mesh, mats, P, {});
    RunOptions o;
    o.packets = 20000000;
    o.tuning.cudaBlocksPerSm = 3;
    const RunResult a = runKernel("cuda", in, o);
    o.tuning.cudaBlocksPerSm = 4;
    const RunResult b = runKernel("cuda", in, o);
    o.tuning.cudaBlocksPerSm = 0;
    const RunResult t = runKernel("cuda", in, o);
    BOOST_CHECK_EQUAL(a.gpuBlocksPerSm, 3);
    BOOST_CHECK_EQUAL(b.gpuBlocksPerSm, 4);
    BOOST_CHECK_EQUAL(t.gpuBlocksPerSm, 4);
    BOOST_TEST_MESSAGE("kernel s with 3 / 4 / default blocks per SM: " << a.kernelSeconds << " / " << b.kernelSeconds
                                                                      << " / " << t.kernelSeconds);
    for (const RunResult* r : {&b, &t}) {
        BOOST_CHECK_EQUAL(r->packetsDone, o.packets);
        fmtest::checkSameEvents(a.events, r->events);
        BOOST_CHECK_CLOSE(r->ledger.absorbed, a.ledger.absorbed, 1e-9);
        BOOST_CHECK_CLOSE(r->ledger.exited, a.ledger.exited, 1e-9);
        BOOST_CHECK_CLOSE(r->ledger.rouletteGained, a.ledger.rouletteGained, 1e-9);
        BOOST_CHECK_SMALL(r->ledger.imbalance() / r->ledger.launched, 1e-12);
        BOOST_CHECK_SMALL(l1(a.volume, r->volume), 1e-9);
        BOOST_CHECK_SMALL(l1(a.surface, r->surface), 1e-9);
    }
}

// Few cells: the GPU keeps the volume and exit tallies per block in shared memory and adds
// them once per block. A 2 x 2 x 2 box (40 tetras) with the source inside: same statistics as
// the CPU, and the ledger's absorbed weight equals the sum of the volume tally.
BOOST_AUTO_TEST_CASE(gpu_small_mesh_block_tallies) {
    if (!haveGpu()) return;
    TetraMesh small = makeBoxMesh({-3, -3, -3}, {3, 3, 3}, 2, 2, 2, [](const Point3&) { return 1u; });
    MaterialSet m;
    m.exterior(Material(0, 0, 0, 1.0));
    m.append(Material(0.1, 3, 0.5, 1.37));
    PointSource P;
    P.position = {0.2, 0.1, -0.3};
    KernelInput in = packModel(small, m, P, {});
    RunOptions o;
    o.packets = 400000;
    RunResult g = runKernel("cuda", in, o);
    o.params.seed = 7;
    RunResult c = runKernel("cpu", in, o);
    double sumV = 0, sumS = 0;
    for (double v : g.volume) sumV += v;
    for (double v : g.surface) sumS += v;
    BOOST_CHECK_CLOSE(sumV, g.ledger.absorbed, 1e-9);
    BOOST_CHECK_CLOSE(sumS, g.ledger.exited, 1e-9);
    // absorbed fraction per packet lies in [0, 1]: variance <= 1/4 per packet, two runs
    double pa = g.ledger.absorbed / g.ledger.launched, pc = c.ledger.absorbed / c.ledger.launched;
    BOOST_CHECK_SMALL(pa - pc, 3 * std::sqrt(2 * 0.25 / o.packets));
}

// Three index-mismatched layers between air and glass: crossings with Fresnel, TIR and refraction.
MCMLRun threeLayers(uint64_t photons) {
    MCMLRun run;
    run.outName = "gpu.mco";
    run.photons = photons;
    run.dz = 0.005; run.dr = 0.01; run.nz = 40; run.nr = 30; run.na = 6;
    run.nAbove = 1.0; run.nBelow = 1.2;
    run.layers = {{1.4, 2, 100, 0.8, 0.01}, {1.33, 1, 50, 0.9, 0.05}, {1.45, 5, 80, 0.7, 0.1}};
    return run;
}

// The run on the GPU twice, same seed: with the default tuning (into a) and with `change`
// made to the knobs (into b), for the tests of knobs that must keep every history.
template <class Change>
void runMcmlBoth(const MCMLRun& run, McmlTallies& a, McmlTallies& b, Change change) {
    const LayeredModel lm = layeredFromMcml(run);
    RunOptions o = mcmlRunOptions(run);
    runMcml("cuda", lm, run, o, &a);
    change(o.tuning);
    runMcml("cuda", lm, run, o, &b);
}

// The MCML kernel on the GPU (the slab photon loop, replicated tallies): the same RAT and
// per-layer absorption as the CPU kernel within 3 sigma, and its own books closed.
BOOST_AUTO_TEST_CASE(gpu_mcml_matches_cpu) {
    if (!haveGpu()) return;
    const MCMLRun run = threeLayers(200000);
    const LayeredModel lm = layeredFromMcml(run);
    RunOptions o = mcmlRunOptions(run);
    McmlTallies raw;
    MCMLResult g = runMcml("cuda", lm, run, o, &raw);
    // The slab loop books a layer's absorption per visit (McmlSlabLoop.hpp): the ledger closes
    // and the layers, the (r, z) grid and the ledger hold the same absorbed weight.
    BOOST_CHECK_SMALL(raw.ledger.imbalance() / raw.ledger.launched, 1e-12);
    double cells = 0, grid = 0;
    for (double v : raw.absorbedCell) cells += v;
    for (double v : raw.absorbedRZ) grid += v;
    BOOST_CHECK_CLOSE(cells, raw.ledger.absorbed, 1e-9);
    BOOST_CHECK_CLOSE(grid, raw.ledger.absorbed, 1e-9);
    BOOST_CHECK_EQUAL(raw.events.launch, run.photons);
    BOOST_CHECK_EQUAL(raw.events.abnormal, 0u);
    o.params.seed = 11;
    MCMLResult c = runMcml("cpu", lm, run, o);
    const double N = double(run.photons);
    auto sig = [N](double p) { return 3 * std::sqrt(2 * p * (1 - p) / N) + 1e-9; };
    BOOST_CHECK_GT(g.A, 0.05);  // the layers absorb (a kernel reading no materials gives 0)
    BOOST_CHECK_SMALL(g.Rd - c.Rd, sig(c.Rd));
    BOOST_CHECK_SMALL(g.A - c.A, sig(c.A));
    BOOST_CHECK_SMALL(g.Tt - c.Tt, sig(c.Tt));
    for (size_t l = 0; l < c.A_l.size(); ++l) BOOST_CHECK_SMALL(g.A_l[l] - c.A_l[l], sig(c.A_l[l]));
}

// The MCML kernel lets a lane that reaches a layer boundary wait for others of its warp and
// cross with them (McmlCuda.cu): a photon's history must not depend on it. Same seed with and
// without grouping: every event count equal, tallies and ledger equal up to the order of the
// atomic additions.
BOOST_AUTO_TEST_CASE(gpu_mcml_grouped_crossings_keep_histories) {
    if (!haveGpu()) return;
    McmlTallies grouped, single;
    runMcmlBoth(threeLayers(2000000), grouped, single, [](TuningKnobs& t) { t.mcmlGroupCrossings = false; });
    BOOST_TEST_MESSAGE("MCML run s grouped / single: " << grouped.seconds << " / " << single.seconds);
    BOOST_CHECK_GT(single.events.refract, 100000u);  // the crossings are there to group
    fmtest::checkSameEvents(single.events, grouped.events);
    BOOST_CHECK_CLOSE(grouped.ledger.absorbed, single.ledger.absorbed, 1e-9);
    BOOST_CHECK_CLOSE(grouped.ledger.exited, single.ledger.exited, 1e-9);
    BOOST_CHECK_SMALL(l1(single.absorbedRZ, grouped.absorbedRZ), 1e-9);
    BOOST_CHECK_SMALL(l1(single.reflectedRA, grouped.reflectedRA), 1e-9);
    BOOST_CHECK_SMALL(l1(single.transmittedRA, grouped.transmittedRA), 1e-9);
    BOOST_CHECK_SMALL(l1(single.absorbedCell, grouped.absorbedCell), 1e-9);
}

// The plain MCML run sends the bins at the beam (the grid's first rows, here 10 of 30) to
// replicas of their own (McmlCuda.cu, kRzNearBins): the same histories with and without them
// (FM_CUDA_RZ_NEAR_COPIES=1), the grid equal up to the order of the additions, and the grid's
// sum the ledger's absorbed weight (a near bin's deposits neither lost nor counted twice).
BOOST_AUTO_TEST_CASE(gpu_mcml_near_replicas_keep_the_grid) {
    if (!haveGpu()) return;
    MCMLRun run = threeLayers(1000000);
    run.dz = 0.0005;
    run.nz = 400;
    McmlTallies near, plain;
    runMcmlBoth(run, near, plain, [](TuningKnobs& t) { t.mcmlRzNearCopies = 1; });
    fmtest::checkSameEvents(plain.events, near.events);
    BOOST_CHECK_CLOSE(near.ledger.absorbed, plain.ledger.absorbed, 1e-9);
    double grid = 0, first = 0;
    for (size_t i = 0; i < near.absorbedRZ.size(); ++i) {
        grid += near.absorbedRZ[i];
        if (i < 10 * run.nz) first += near.absorbedRZ[i];
    }
    BOOST_CHECK_CLOSE(grid, near.ledger.absorbed, 1e-9);
    BOOST_CHECK_GT(first, 0.1 * grid);  // the near rows took their part
    BOOST_CHECK_SMALL(l1(plain.absorbedRZ, near.absorbedRZ), 1e-9);
}

// The plain MCML run adds a thread's layer visits into its own row of shared memory and each
// block's rows once into the cells (McmlCuda.cu, DeviceLayerTally) where the layers fit: the
// same histories with and without the rows (FM_CUDA_MCML_CELL_ROWS=0), the layers equal up to the
// order of the additions and summing to the ledger's absorbed weight. A stack of more layers
// than a row holds (kRowDoubles) adds by atomics and keeps its books too.
BOOST_AUTO_TEST_CASE(gpu_mcml_layer_rows_keep_the_layers) {
    if (!haveGpu()) return;
    const MCMLRun run = threeLayers(1000000);
    McmlTallies rows, atomics;
    runMcmlBoth(run, rows, atomics, [](TuningKnobs& t) { t.mcmlCellRows = false; });
    BOOST_CHECK(rows.layerRows);
    BOOST_CHECK(!atomics.layerRows);
    fmtest::checkSameEvents(atomics.events, rows.events);
    BOOST_CHECK_CLOSE(rows.ledger.absorbed, atomics.ledger.absorbed, 1e-9);
    BOOST_CHECK_SMALL(l1(atomics.absorbedCell, rows.absorbedCell), 1e-9);
    BOOST_CHECK_SMALL(l1(atomics.absorbedRZ, rows.absorbedRZ), 1e-9);
    double cells = 0;
    for (double v : rows.absorbedCell) cells += v;
    BOOST_CHECK_CLOSE(cells, rows.ledger.absorbed, 1e-9);
    for (size_t l = 1; l <= run.layers.size(); ++l) BOOST_CHECK_GT(rows.absorbedCell[l], 0.0);

    MCMLRun deep = threeLayers(200000);  // 36 layers: 38 cells, more than a row holds
    deep.layers.clear();
    for (int l = 0; l < 36; ++l) deep.layers.push_back({l % 2 ? 1.4 : 1.37, 0.5 + 0.05 * l, 60, 0.8, 0.005});
    const LayeredModel dm = layeredFromMcml(deep);
    McmlTallies d;
    runMcml("cuda", dm, deep, mcmlRunOptions(deep), &d);
    BOOST_CHECK(!d.layerRows);
    double deepCells = 0;
    for (double v : d.absorbedCell) deepCells += v;
    BOOST_CHECK_CLOSE(deepCells, d.ledger.absorbed, 1e-9);
    BOOST_CHECK_SMALL(d.ledger.imbalance() / d.ledger.launched, 1e-12);
}

BOOST_AUTO_TEST_CASE(gpu_errors_are_clear) {
    if (!haveGpu()) return;
    MaterialSet many;
    for (int i = 0; i < 300; ++i) many.append(Material(0.1, 1, 0, 1.4));
    PointSource P;
    P.position = {0, 0, 0};
    KernelInput in = packModel(mesh, many, P);
    RunOptions o;
    o.packets = 10;
    BOOST_CHECK_EXCEPTION(runKernel("cuda", in, o), Error, [](const Error& e) {
        return std::string(e.what()).find("constant memory") != std::string::npos;
    });
}

// The library leaves the process environment alone (the command-line tools ask for one CUDA
// hardware queue themselves: Kernels/Tuning.hpp preferOneCudaQueue). /proc/self/environ holds
// the environment the process started with; after the library is loaded and has used CUDA,
// CUDA_DEVICE_MAX_CONNECTIONS is what it was.
BOOST_AUTO_TEST_CASE(the_library_leaves_the_environment_alone) {
    std::ifstream f("/proc/self/environ", std::ios::binary);
    std::string entry;
    bool wasSet = false;
    std::string initial;
    while (std::getline(f, entry, '\0'))
        if (entry.rfind("CUDA_DEVICE_MAX_CONNECTIONS=", 0) == 0) {
            wasSet = true;
            initial = entry.substr(28);
        }
    std::string why;
    fm::cudaAvailable(&why);
    const char* now = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    BOOST_CHECK_EQUAL(now != nullptr, wasSet);
    if (now && wasSet) BOOST_CHECK_EQUAL(std::string(now), initial);
}

// Entry specular is compiled into the emitter records on the host, which both kernels sample:
// a matched boundary and specularAtEntry = false book no specular on the GPU either, the default
// books MCML's Fresnel reflection, and absorption agrees with the CPU within statistics.
BOOST_AUTO_TEST_CASE(gpu_entry_specular_as_cpu) {
    if (!haveGpu()) return;
    PencilBeamSource B;
    B.position = {0.1, 0.2, -7};
    B.direction = {0, 0, 1};
    for (int mode = 0; mode < 3; ++mode) {
        BOOST_TEST_CONTEXT("mode " << mode << " (0 MCML default, 1 matched boundary, 2 specularAtEntry 0)") {
            MaterialSet ms = mats;
            ms.matchedBoundary = mode == 1;
            B.specularAtEntry = mode != 2;
            KernelInput in = packModel(mesh, ms, B);
            RunOptions o;
            o.packets = 100000;
            RunResult g = runKernel("cuda", in, o);
            o.params.seed = 7;
            RunResult c = runKernel("cpu", in, o);
            const double R = std::pow((1.4 - 1.0) / (1.4 + 1.0), 2);  // the block's surface: n = 1.4
            BOOST_CHECK_CLOSE(g.ledger.specular / g.ledger.launched, mode == 0 ? R : 0.0, 1e-3);
            BOOST_CHECK_CLOSE(g.ledger.specular, c.ledger.specular, 1e-9);  // same records, sums reordered
            double pa = g.ledger.absorbed / g.ledger.launched, pc = c.ledger.absorbed / c.ledger.launched;
            BOOST_CHECK_SMALL(pa - pc, 3 * std::sqrt(2 * 0.25 / o.packets));
        }
    }
}

// Collimated beams (MMC's disk and planar) are drawn on the device by the same emitter code: the
// disk's rejection inside its cylinder, per-face refraction in the pieces. Same specular share,
// absorption within statistics, nothing abnormal.
BOOST_AUTO_TEST_CASE(gpu_collimated_beams_as_cpu) {
    if (!haveGpu()) return;
    DiskSource D;
    D.centre = {0.3, -0.2, -7};
    D.direction = {0.2, 0.1, 1};
    D.radius = 2.5;
    PlanarSource P;
    P.corner = {-2, -1.5, -7};
    P.side1 = {3, 0, 0.2};
    P.side2 = {0.5, 2.5, 0};
    P.direction = {0.1, -0.2, 1};
    for (const Source* src : {static_cast<const Source*>(&D), static_cast<const Source*>(&P)}) {
        BOOST_TEST_CONTEXT(src->typeName()) {
            KernelInput in = packModel(mesh, mats, *src);
            RunOptions o;
            o.packets = 100000;
            RunResult g = runKernel("cuda", in, o);
            o.params.seed = 7;
            RunResult c = runKernel("cpu", in, o);
            BOOST_CHECK_EQUAL(g.ledger.abnormal, 0.0);
            BOOST_CHECK_CLOSE(g.ledger.specular / g.ledger.launched, c.ledger.specular / c.ledger.launched, 1e-4);
            double pa = g.ledger.absorbed / g.ledger.launched, pc = c.ledger.absorbed / c.ledger.launched;
            BOOST_CHECK_SMALL(pa - pc, 3 * std::sqrt(2 * 0.25 / o.packets));
        }
    }
}

// A ball and a thin diffuser small against their tetras draw their points in the shape and find
// the tetra by a walk on the device as on the host (Kernels/Core/Emitters.hpp, inShape): no
// packet is lost, and the absorbed fraction is the CPU's within statistics.
BOOST_AUTO_TEST_CASE(gpu_small_volume_sources_as_cpu) {
    if (!haveGpu()) return;
    BallSource B;
    B.centre = {0.3, -0.2, 0.4};
    B.radius = 0.002;
    CylinderSource C;
    C.endpoint[0] = {-2, 0.1, 0.2};
    C.endpoint[1] = {2, 0.3, -0.1};
    C.radius = 0.01;
    C.emitVolume = true;
    for (const Source* src : {static_cast<const Source*>(&B), static_cast<const Source*>(&C)}) {
        BOOST_TEST_CONTEXT(src->typeName()) {
            KernelInput in = packModel(mesh, mats, *src);
            BOOST_REQUIRE_EQUAL(in.emitters[0].inShape, 1u);
            RunOptions o;
            o.packets = 100000;
            RunResult g = runKernel("cuda", in, o);
            o.params.seed = 7;
            RunResult c = runKernel("cpu", in, o);
            BOOST_CHECK_EQUAL(g.ledger.abnormal, 0.0);
            BOOST_CHECK_EQUAL(c.ledger.abnormal, 0.0);
            double pa = g.ledger.absorbed / g.ledger.launched, pc = c.ledger.absorbed / c.ledger.launched;
            BOOST_CHECK_SMALL(pa - pc, 3 * std::sqrt(2 * 0.25 / o.packets));
        }
    }
}

BOOST_AUTO_TEST_CASE(cpu_only_build_reports_why) {
    std::string why;
    bool ok = cudaAvailable(&why);
    BOOST_CHECK(ok || !why.empty());
}

BOOST_AUTO_TEST_SUITE_END()
