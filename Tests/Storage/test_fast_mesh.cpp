// SPDX-License-Identifier: GPL-3.0-or-later
// The fast mesh load path (issue 29): faces and adjacency on many threads equal to a plain sort
// of all faces, the same mesh and packed model for any thread count, the fast TIM-OS parser
// equal to the token reader, and the binary mesh (.fmb): round trips bit for bit, runs with
// the same tallies as the text mesh, and refuses truncated, corrupt and inconsistent files
// naming the file and what is wrong.
#include <boost/test/unit_test.hpp>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "Common/ParallelFor.hpp"
#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Storage/Binary/BinaryMesh.hpp"
#include "Storage/TIMOS/TIMOS.hpp"

using namespace fm;
namespace fs = std::filesystem;

namespace {

std::string tmpPath(const std::string& name) {
    return (fs::temp_directory_path() / ("fm_fastmesh_" + std::to_string(::getpid()) + "_" + name)).string();
}
void writeBytes(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
}

// Sets the load threads for a scope, with chunks small enough that a test mesh splits into
// as many as there are threads in every parallel pass.
struct Threads {
    explicit Threads(unsigned n) {
        setLoadThreads(n);
        loadGrainDivisor() = 4096;
    }
    ~Threads() {
        setLoadThreads(0);
        loadGrainDivisor() = 1;
    }
};

// A box mesh whose tetras are shuffled and half of them given with the other orientation, so
// that face buckets fill in an order unlike the tetra order.
MeshArrays shuffledBox(unsigned n, unsigned seed) {
    TetraMesh box = makeBoxMesh({0, 0, 0}, {3, 2, 1}, n, n + 1, n + 2, [](const Point3& c) {
        return c[0] < 1 ? 1u : c[1] < 1 ? 2u : 3u;
    });
    MeshArrays a{box.points(), box.tetras(), box.regions()};
    std::mt19937 rng(seed);
    std::vector<size_t> order(a.tetras.size() - 1);
    for (size_t i = 0; i < order.size(); ++i) order[i] = i + 1;
    std::shuffle(order.begin(), order.end(), rng);
    MeshArrays s{a.points, {a.tetras[0]}, {0}};
    for (size_t i : order) {
        TetraPoints T = a.tetras[i];
        if (rng() & 1) std::swap(T[0], T[1]);
        s.tetras.push_back(T);
        s.regions.push_back(a.regions[i]);
    }
    return s;
}

TetraMesh build(const MeshArrays& a) { return TetraMesh(a.points, a.tetras, a.regions); }

// Face ids as one sort of every (sorted points, tetra) pair numbers them: the definition the
// mesh's faces must follow.
void checkAgainstPlainSort(const TetraMesh& m) {
    struct E {
        std::array<uint32_t, 3> key;
        uint32_t t;
        int i;
    };
    static const int kFace[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};
    std::vector<E> e;
    for (uint32_t t = 1; t <= m.tetraCount(); ++t)
        for (int i = 0; i < 4; ++i) {
            std::array<uint32_t, 3> k{m.tetra(t)[kFace[i][0]], m.tetra(t)[kFace[i][1]], m.tetra(t)[kFace[i][2]]};
            std::sort(k.begin(), k.end());
            e.push_back({k, t, i});
        }
    std::sort(e.begin(), e.end(), [](const E& a, const E& b) { return a.key != b.key ? a.key < b.key : a.t < b.t; });
    uint32_t id = 0;
    std::vector<uint32_t> boundary;
    size_t mismatches = 0;
    for (size_t j = 0; j < e.size();) {
        size_t k = j;
        while (k < e.size() && e[k].key == e[j].key) ++k;
        ++id;
        const MeshFace& F = m.face(id);
        mismatches += F.owner != e[j].t || m.tetraFace(e[j].t, e[j].i) != id;
        if (k - j == 2) mismatches += F.other != e[j + 1].t || m.tetraFace(e[j + 1].t, e[j + 1].i) != (id | 0x80000000u);
        else mismatches += F.other != 0, boundary.push_back(id);
        j = k;
    }
    BOOST_CHECK_EQUAL(id, m.faceCount());
    BOOST_CHECK_EQUAL(mismatches, 0u);
    BOOST_CHECK(boundary == m.boundaryFaces());
}

std::string packedBytes(const TetraMesh& m) {
    MaterialSet ms;
    for (uint32_t r = 1; r < m.regionCount(); ++r) ms.append(Material(0.05 * r, 5, 0.8, 1.3 + 0.05 * r));
    auto src = std::make_shared<PointSource>();
    src->position = {1.5, 1.01, 0.49};
    KernelInput in = packModel(m, ms, *src);
    return std::string(reinterpret_cast<const char*>(in.cells.data()), in.cells.size() * sizeof(TetraRecord));
}

void checkSameMesh(const TetraMesh& a, const TetraMesh& b) {
    BOOST_REQUIRE_EQUAL(a.tetraCount(), b.tetraCount());
    BOOST_REQUIRE_EQUAL(a.faceCount(), b.faceCount());
    BOOST_CHECK(a.points() == b.points());
    BOOST_CHECK(a.tetras() == b.tetras());
    BOOST_CHECK(a.regions() == b.regions());
    BOOST_CHECK(a.boundaryFaces() == b.boundaryFaces());
    size_t differ = 0;
    for (uint32_t f = 1; f <= a.faceCount(); ++f) {
        const MeshFace &x = a.face(f), &y = b.face(f);
        differ += x.points != y.points || x.owner != y.owner || x.other != y.other ||
                  std::memcmp(&x.area, &y.area, sizeof x.area) || x.normal != y.normal;
    }
    for (uint32_t t = 1; t <= a.tetraCount(); ++t)
        for (int i = 0; i < 4; ++i) differ += a.tetraFace(t, i) != b.tetraFace(t, i) || a.volume(t) != b.volume(t);
    BOOST_CHECK_EQUAL(differ, 0u);
    BOOST_CHECK(packedBytes(a) == packedBytes(b));
}

template <class F>
void expectFormatError(F f, const std::vector<std::string>& needles) {
    try {
        f();
        BOOST_ERROR("no error; expected '" << needles[0] << "'");
    } catch (const FormatError& e) {
        for (const auto& n : needles)
            BOOST_CHECK_MESSAGE(std::string(e.what()).find(n) != std::string::npos,
                                "message '" << e.what() << "' lacks '" << n << "'");
    } catch (const std::exception& e) {
        BOOST_ERROR("wrong exception type: " << e.what());
    }
}

// Header fields the corruption tests rewrite (docs/BINARY_MESH.md).
constexpr size_t kVersionAt = 8, kOrderAt = 12, kTetrasAt = 24, kHeaderSumAt = 72;
void resealHeader(std::string& b) {
    uint64_t sum = binaryMeshChecksum(b.data(), kHeaderSumAt);
    std::memcpy(&b[kHeaderSumAt], &sum, 8);
}
// Rewrites a section's checksum so that only the value checks can catch what was changed.
void resealSection(std::string& b, size_t sumAt, size_t from, size_t bytes) {
    uint64_t sum = binaryMeshChecksum(b.data() + from, bytes);
    std::memcpy(&b[sumAt], &sum, 8);
    resealHeader(b);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(fast_mesh)

BOOST_AUTO_TEST_CASE(faces_on_many_threads_equal_one_sort_of_all_faces) {
    MeshArrays a = shuffledBox(9, 1);  // 9*10*11*6 = 5,940 tetras
    Threads one(1);
    TetraMesh serial = build(a);
    checkAgainstPlainSort(serial);
    for (unsigned n : {2u, 3u, 7u, 16u}) {
        setLoadThreads(n);
        TetraMesh parallel = build(a);
        checkAgainstPlainSort(parallel);
        checkSameMesh(serial, parallel);
    }
}

BOOST_AUTO_TEST_CASE(large_mesh_same_for_one_and_many_threads) {
    // 24*25*26*6 = 93,600 tetras: above the chunk sizes, so every parallel pass splits.
    MeshArrays a = shuffledBox(24, 2);
    TetraMesh serial = [&] {
        Threads t(1);
        return build(a);
    }();
    Threads t(5);
    TetraMesh parallel = build(a);
    checkAgainstPlainSort(parallel);
    checkSameMesh(serial, parallel);
    // locate(): the first queries scan, later ones use the grid; both give the same tetra.
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> u(-0.1, 3.1);
    // First (scanned) a grid point of the box, on faces of several tetras, and a mesh point.
    std::vector<Point3> q{{1, 1, 0.5}, serial.point(serial.tetra(17)[2])};
    for (int i = 0; i < 40; ++i) q.push_back({u(rng), u(rng) * 2 / 3, u(rng) / 3});
    std::vector<uint32_t> first, again;
    for (auto& p : q) first.push_back(parallel.locate(p));
    for (auto& p : q) again.push_back(parallel.locate(p));
    BOOST_CHECK(first == again);
    for (size_t i = 0; i < q.size(); ++i)
        if (first[i]) BOOST_CHECK(parallel.contains(first[i], q[i]));
}

BOOST_AUTO_TEST_CASE(duplicates_and_non_manifold_faces_found_on_many_threads) {
    MeshArrays a = shuffledBox(24, 4);
    a.tetras.push_back(a.tetras[100]);
    a.regions.push_back(a.regions[100]);
    std::string serialText, parallelText;
    for (unsigned n : {1u, 6u}) {
        Threads t(n);
        try {
            build(a);
            BOOST_ERROR("a repeated tetra was accepted");
        } catch (const ModelError& e) {
            (n == 1 ? serialText : parallelText) = e.what();
        }
    }
    BOOST_CHECK(serialText.find("duplicated tetras: 1") != std::string::npos);
    BOOST_CHECK(serialText.find("non-manifold faces") != std::string::npos);
    BOOST_CHECK_EQUAL(serialText, parallelText);
}

BOOST_AUTO_TEST_CASE(fast_parser_gives_the_token_readers_values) {
    // The same file twice: plainly written (fast path), and with one '+' sign that only the
    // token reader takes (strtod), so the second read goes through the token reader.
    Threads threads(3);
    std::string pts = "0 0 0\n1e0 0 0\n0 .5E+1 0\n-0.0 0 2.5\n0.5 2.0000000000000004 1.5\n1.7976931348623157e3 2 3\n";
    std::string tets = "1 2 3 4 1\n2 3 4 5 2\n";
    std::string fast = tmpPath("fast.mesh"), careful = tmpPath("careful.mesh");
    writeBytes(fast, "6\n2\n" + pts + tets);
    writeBytes(careful, "6\n2\n" + pts.substr(0, pts.size() - 2) + "+3\n" + tets);
    TetraMesh a = readTIMOSMesh(fast), b = readTIMOSMesh(careful);
    BOOST_CHECK(a.points() == b.points());
    BOOST_CHECK(a.tetras() == b.tetras());
    BOOST_CHECK_EQUAL(a.point(5)[1], 2.0000000000000004);
    // An error found by the fast path's fallback still names the file and line.
    std::string bad = tmpPath("bad.mesh");
    writeBytes(bad, "6\n2\n" + pts + "1 2 3 4 1\n2 3 9 5 2\n");
    expectFormatError([&] { readTIMOSMesh(bad); }, {bad + ":10:", "refers to point 9"});
    writeBytes(bad, "6\n2\n" + pts + "1 2 3 4 1\n2 3 4 5\n");
    expectFormatError([&] { readTIMOSMesh(bad); }, {bad + ":", "unexpected end of file"});
    for (auto& p : {fast, careful, bad}) fs::remove(p);
}

BOOST_AUTO_TEST_CASE(binary_round_trip_is_bit_identical) {
    Threads threads(4);
    MeshArrays a = shuffledBox(9, 5);
    TetraMesh m = build(a);
    std::string text = tmpPath("rt.mesh"), bin = tmpPath("rt.fmb");
    writeTIMOSMesh(text, m);
    TetraMesh fromText = readTIMOSMesh(text);
    writeBinaryMesh(bin, fromText);
    BOOST_CHECK(isBinaryMeshFile(bin));
    BOOST_CHECK(!isBinaryMeshFile(text));
    TetraMesh fromBinary = readBinaryMesh(bin);
    checkSameMesh(fromText, fromBinary);
    checkSameMesh(m, fromBinary);
    // The TIM-OS reader (fullmonte-run --mesh, Tcl TIMOSMeshReader) takes .fmb by its content.
    checkSameMesh(fromBinary, readTIMOSMesh(bin));
    // Writing again gives the same bytes.
    std::ifstream in(bin, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    BOOST_CHECK(bytes == binaryMeshBytes(fromBinary));
    BOOST_CHECK_EQUAL(bytes.size(), kBinaryMeshHeaderBytes + 24 * m.pointCount() + 20 * m.tetraCount());
    // The header alone gives the tetra count (the device choice of fullmonte-run --devices all);
    // 0 for a text mesh, a missing file and a header whose checksum fails.
    BOOST_CHECK_EQUAL(binaryMeshTetraCount(bin), m.tetraCount());
    BOOST_CHECK_EQUAL(binaryMeshTetraCount(text), 0u);
    BOOST_CHECK_EQUAL(binaryMeshTetraCount(tmpPath("absent.fmb")), 0u);
    std::string bad = bytes;
    bad[24] ^= 1;  // the tetra count, under the header checksum
    std::ofstream(tmpPath("bad.fmb"), std::ios::binary) << bad;
    BOOST_CHECK_EQUAL(binaryMeshTetraCount(tmpPath("bad.fmb")), 0u);
    fs::remove(tmpPath("bad.fmb"));
    fs::remove(text);
    fs::remove(bin);
}

BOOST_AUTO_TEST_CASE(run_from_binary_mesh_gives_identical_tallies) {
    MeshArrays a = shuffledBox(7, 6);
    TetraMesh m = build(a);
    std::string text = tmpPath("run.mesh"), bin = tmpPath("run.fmb");
    writeTIMOSMesh(text, m);
    writeBinaryMesh(bin, readTIMOSMesh(text));
    MaterialSet ms;
    for (uint32_t r = 1; r < m.regionCount(); ++r) ms.append(Material(0.1 * r, 4, 0.7, 1.4));
    auto src = std::make_shared<PointSource>();
    src->position = {1.4, 0.9, 0.45};
    RunOptions o;
    o.packets = 20000;
    o.threads = 2;
    RunResult x = runCpu(packModel(readTIMOSMesh(text), ms, *src), o);
    RunResult y = runCpu(packModel(readTIMOSMesh(bin), ms, *src), o);
    BOOST_CHECK(x.volume == y.volume);
    BOOST_CHECK(x.surface == y.surface);
    BOOST_CHECK_EQUAL(x.ledger.absorbed, y.ledger.absorbed);
    BOOST_CHECK_GT(x.ledger.absorbed, 0.0);
    fs::remove(text);
    fs::remove(bin);
}

BOOST_AUTO_TEST_CASE(truncated_corrupt_and_inconsistent_binary_files_are_refused) {
    TetraMesh m = build(shuffledBox(3, 7));
    const std::string good = binaryMeshBytes(m);
    const size_t np = m.pointCount(), nt = m.tetraCount();
    const size_t pointsAt = kBinaryMeshHeaderBytes, tetrasAt = pointsAt + 24 * np, regionsAt = tetrasAt + 16 * nt;
    const std::string path = tmpPath("bad.fmb");
    auto refused = [&](const std::string& bytes, std::vector<std::string> needles) {
        writeBytes(path, bytes);
        needles.insert(needles.begin(), path + ": ");
        expectFormatError([&] { readBinaryMesh(path); }, needles);
    };
    // Truncated anywhere: in the header, in each section, one byte short.
    for (size_t n : {size_t(0), size_t(5)}) refused(good.substr(0, n), {"not a FullMonte binary mesh"});
    for (size_t n : {size_t(8), size_t(40), size_t(79)}) refused(good.substr(0, n), {"truncated"});
    for (size_t n : {pointsAt + 7, tetrasAt + 3, regionsAt + 1, good.size() - 1}) refused(good.substr(0, n), {"truncated"});
    refused(good + "x", {"1 bytes of extra data"});
    refused("4\n1\n0 0 0\n", {"not a FullMonte binary mesh"});
    // One flipped bit in each part.
    auto flipped = [&](size_t at) {
        std::string b = good;
        b[at] ^= 0x10;
        return b;
    };
    refused(flipped(20), {"header checksum mismatch"});
    refused(flipped(pointsAt + 13), {"points checksum mismatch"});
    refused(flipped(tetrasAt + 5), {"tetras checksum mismatch"});
    refused(flipped(regionsAt + 2), {"regions checksum mismatch"});
    // Foreign or future files (header resealed, so the field itself is what is refused).
    std::string b = good;
    uint32_t v = 2;
    std::memcpy(&b[kVersionAt], &v, 4);
    resealHeader(b);
    refused(b, {"format version 2"});
    b = good;
    v = 0x04030201u;
    std::memcpy(&b[kOrderAt], &v, 4);
    resealHeader(b);
    refused(b, {"byte-order mark"});
    // Counts that do not match the file's size.
    b = good;
    uint64_t more = nt + 1;
    std::memcpy(&b[kTetrasAt], &more, 8);
    resealHeader(b);
    refused(b, {"truncated", std::to_string(nt + 1) + " tetras"});
    b = good;
    uint64_t huge = 1ull << 40;
    std::memcpy(&b[kTetrasAt], &huge, 8);
    resealHeader(b);
    refused(b, {"counts out of range"});
    // Values no reader accepts, with checksums that match them (another program's file).
    auto withValue = [&](size_t at, const void* value, size_t size, size_t sumAt, size_t from, size_t bytes) {
        std::string c = good;
        std::memcpy(&c[at], value, size);
        resealSection(c, sumAt, from, bytes);
        return c;
    };
    uint32_t point = uint32_t(np + 1), zero = 0, region = (1u << 20) + 1;
    refused(withValue(tetrasAt + 16 * 2 + 4, &point, 4, 48, tetrasAt, 16 * nt),
            {"tetra 3 refers to point " + std::to_string(np + 1)});
    refused(withValue(tetrasAt, &zero, 4, 48, tetrasAt, 16 * nt), {"tetra 1 refers to point 0"});
    refused(withValue(regionsAt + 4, &zero, 4, 56, regionsAt, 4 * nt), {"tetra 2 has region 0"});
    refused(withValue(regionsAt, &region, 4, 56, regionsAt, 4 * nt), {"tetra 1 has region 1048577"});
    double nan = std::nan("");
    refused(withValue(pointsAt + 8, &nan, 8, 40, pointsAt, 24 * np), {"point 1 has coordinate nan"});
    // A tetra list that passes the format but not the mesh checks: the checks name the file.
    uint32_t same[4];
    std::memcpy(same, &good[tetrasAt], 16);
    same[3] = same[2];
    writeBytes(path, withValue(tetrasAt, same, 16, 48, tetrasAt, 16 * nt));
    try {
        readBinaryMesh(path);
        BOOST_ERROR("a flat tetra was accepted");
    } catch (const ModelError& e) {
        BOOST_CHECK_MESSAGE(std::string(e.what()).find(path + ": ") == 0, e.what());
        BOOST_CHECK(std::string(e.what()).find("degenerate") != std::string::npos);
    }
    fs::remove(path);
}

// The box mesher fills its arrays on all threads: the same arrays for any thread count, cube
// (i, j, k)'s six tetras where its documentation puts them, and regions from their centroids.
BOOST_AUTO_TEST_CASE(box_mesh_arrays_same_for_one_and_many_threads) {
    const unsigned nx = 7, ny = 5, nz = 6;
    auto region = [](const Point3& c) { return c[0] + c[1] < 3 ? 1u : 2u; };
    BoxMeshArrays serial = [&] {
        Threads t(1);
        return makeBoxMeshArrays({0, 0, 0}, {3.5, 2.5, 3}, nx, ny, nz, region);
    }();
    Threads t(6);
    BoxMeshArrays parallel = makeBoxMeshArrays({0, 0, 0}, {3.5, 2.5, 3}, nx, ny, nz, region);
    BOOST_CHECK(serial.points == parallel.points);
    BOOST_CHECK(serial.tetras == parallel.tetras);
    BOOST_CHECK(serial.regions == parallel.regions);
    BOOST_REQUIRE_EQUAL(parallel.tetras.size(), 1 + 6u * nx * ny * nz);
    BOOST_REQUIRE_EQUAL(parallel.points.size(), 1 + (nx + 1u) * (ny + 1) * (nz + 1));
    for (unsigned k = 0; k < nz; ++k)
        for (unsigned j = 0; j < ny; ++j)
            for (unsigned i = 0; i < nx; ++i)
                for (unsigned q = 0; q < 6; ++q) {
                    const size_t at = 1 + 6 * (i + nx * (j + size_t(ny) * k)) + q;
                    Point3 c{0, 0, 0};
                    for (uint32_t p : parallel.tetras[at]) {
                        const Point3& x = parallel.points[p];
                        BOOST_REQUIRE(x[0] >= 0.5 * i - 1e-12 && x[0] <= 0.5 * (i + 1) + 1e-12);
                        BOOST_REQUIRE(x[1] >= 0.5 * j - 1e-12 && x[1] <= 0.5 * (j + 1) + 1e-12);
                        BOOST_REQUIRE(x[2] >= 0.5 * k - 1e-12 && x[2] <= 0.5 * (k + 1) + 1e-12);
                        for (int d = 0; d < 3; ++d) c[d] += 0.25 * x[d];
                    }
                    BOOST_REQUIRE_EQUAL(parallel.regions[at], region(c));
                }
    TetraMesh m(std::move(parallel.points), std::move(parallel.tetras), std::move(parallel.regions));
    double v = 0;
    for (uint32_t q = 1; q <= m.tetraCount(); ++q) v += m.volume(q);
    BOOST_CHECK_CLOSE(v, 3.5 * 2.5 * 3, 1e-9);
    BOOST_CHECK_EQUAL(m.boundaryFaces().size(), 4u * (nx * ny + ny * nz + nx * nz));
}

BOOST_AUTO_TEST_SUITE_END()
