// SPDX-License-Identifier: GPL-3.0-or-later
#include "Storage/Binary/BinaryMesh.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "Common/Errors.hpp"
#include "Storage/AtomicFile.hpp"

namespace fm {

namespace {

constexpr uint32_t kByteOrderMark = 0x01020304u;
constexpr uint64_t kMaxCount = 2000000000ull;  // the kernels' 31-bit ids, as the text readers
constexpr uint32_t kMaxRegion = 1u << 20;

// Header fields and their byte offsets (docs/BINARY_MESH.md).
enum Offset : size_t {
    kMagic = 0, kVersion = 8, kByteOrder = 12, kPoints = 16, kTetras = 24, kFlags = 32, kReserved32 = 36,
    kPointsSum = 40, kTetrasSum = 48, kRegionsSum = 56, kReserved64 = 64, kHeaderSum = 72
};

bool littleEndianHost() {
    const uint32_t one = 1;
    unsigned char b;
    std::memcpy(&b, &one, 1);
    return b == 1;
}

template <class T>
T field(const std::string& bytes, size_t at) {
    T v;
    std::memcpy(&v, bytes.data() + at, sizeof v);
    return v;
}
template <class T>
void put(std::string& bytes, size_t at, T v) {
    std::memcpy(&bytes[at], &v, sizeof v);
}

std::string hex(uint64_t v) {
    char s[24];
    std::snprintf(s, sizeof s, "0x%016llx", (unsigned long long)v);
    return s;
}

}  // namespace

uint64_t binaryMeshChecksum(const void* data, size_t size) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    uint64_t h = 0x6a09e667f3bcc909ull ^ uint64_t(size);
    auto mix = [&h](uint64_t w) {
        h = ((h << 27) | (h >> 37)) ^ w;
        h *= 0x9e3779b97f4a7c15ull;
    };
    size_t i = 0;
    for (; i + 8 <= size; i += 8) {
        uint64_t w;
        std::memcpy(&w, p + i, 8);
        mix(w);
    }
    if (i < size) {
        uint64_t w = 0;
        std::memcpy(&w, p + i, size - i);
        mix(w);
    }
    return h ^ (h >> 32);
}

bool isBinaryMesh(const std::string& bytes) {
    return bytes.size() >= sizeof kBinaryMeshMagic && std::memcmp(bytes.data(), kBinaryMeshMagic, sizeof kBinaryMeshMagic) == 0;
}

bool isBinaryMeshFile(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return false;
    char head[sizeof kBinaryMeshMagic];
    bool yes = std::fread(head, 1, sizeof head, f) == sizeof head &&
               std::memcmp(head, kBinaryMeshMagic, sizeof head) == 0;
    std::fclose(f);
    return yes;
}

namespace {

// What is wrong with a .fmb header (the first kBinaryMeshHeaderBytes of `bytes`, when there are
// that many): "" for a header this reader takes. Checks in order: host byte order, magic,
// length, byte-order mark, checksum, version, flags and reserved fields, counts.
std::string headerProblem(const std::string& bytes) {
    if (!littleEndianHost()) return "FullMonte binary meshes are read on little-endian hosts only";
    if (!isBinaryMesh(bytes)) return "not a FullMonte binary mesh (the file does not start with FMBMESH)";
    if (bytes.size() < kBinaryMeshHeaderBytes)
        return "truncated: " + std::to_string(bytes.size()) + " bytes, shorter than the " +
               std::to_string(kBinaryMeshHeaderBytes) + "-byte header";
    const uint32_t order = field<uint32_t>(bytes, kByteOrder);
    if (order != kByteOrderMark) return "byte-order mark " + hex(order) + " is not 0x01020304 (a big-endian or corrupt file)";
    if (binaryMeshChecksum(bytes.data(), kHeaderSum) != field<uint64_t>(bytes, kHeaderSum))
        return "header checksum mismatch (the header is corrupt)";
    const uint32_t version = field<uint32_t>(bytes, kVersion);
    if (version != kBinaryMeshVersion)
        return "format version " + std::to_string(version) + "; this FullMonte reads version " +
               std::to_string(kBinaryMeshVersion) + " (written by a newer FullMonte?)";
    if (field<uint32_t>(bytes, kFlags) || field<uint32_t>(bytes, kReserved32) || field<uint64_t>(bytes, kReserved64))
        return "unknown flags or reserved fields set (written by a newer FullMonte?)";
    const uint64_t np = field<uint64_t>(bytes, kPoints), nt = field<uint64_t>(bytes, kTetras);
    if (np < 4 || np > kMaxCount || nt < 1 || nt > kMaxCount)
        return "counts out of range: " + std::to_string(np) + " points (4.." + std::to_string(kMaxCount) + "), " +
               std::to_string(nt) + " tetras (1.." + std::to_string(kMaxCount) + ")";
    return "";
}

}  // namespace

uint64_t binaryMeshTetraCount(const std::string& path) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return 0;
    std::string head(kBinaryMeshHeaderBytes, '\0');
    const bool whole = std::fread(&head[0], 1, head.size(), f) == head.size();
    std::fclose(f);
    return whole && headerProblem(head).empty() ? field<uint64_t>(head, kTetras) : 0;
}

MeshArrays parseBinaryMesh(const std::string& bytes, const std::string& name) {
    auto fail = [&](const std::string& what) -> void { throw FormatError(name + ": " + what); };
    if (const std::string problem = headerProblem(bytes); !problem.empty()) fail(problem);
    const uint64_t np = field<uint64_t>(bytes, kPoints), nt = field<uint64_t>(bytes, kTetras);
    const uint64_t pointBytes = 24 * np, tetraBytes = 16 * nt, regionBytes = 4 * nt;
    const uint64_t expected = kBinaryMeshHeaderBytes + pointBytes + tetraBytes + regionBytes;
    if (bytes.size() < expected)
        fail("truncated: " + std::to_string(bytes.size()) + " bytes, the header's " + std::to_string(np) +
             " points and " + std::to_string(nt) + " tetras need " + std::to_string(expected));
    if (bytes.size() > expected)
        fail(std::to_string(bytes.size() - expected) + " bytes of extra data after the regions (expected " +
             std::to_string(expected) + " bytes)");
    const char* pointsAt = bytes.data() + kBinaryMeshHeaderBytes;
    const char* tetrasAt = pointsAt + pointBytes;
    const char* regionsAt = tetrasAt + tetraBytes;
    if (binaryMeshChecksum(pointsAt, pointBytes) != field<uint64_t>(bytes, kPointsSum))
        fail("points checksum mismatch (the points section is corrupt)");
    if (binaryMeshChecksum(tetrasAt, tetraBytes) != field<uint64_t>(bytes, kTetrasSum))
        fail("tetras checksum mismatch (the tetras section is corrupt)");
    if (binaryMeshChecksum(regionsAt, regionBytes) != field<uint64_t>(bytes, kRegionsSum))
        fail("regions checksum mismatch (the regions section is corrupt)");

    MeshArrays a;
    a.points.resize(np + 1, Point3{0, 0, 0});
    a.tetras.resize(nt + 1, TetraPoints{0, 0, 0, 0});
    a.regions.resize(nt + 1, 0);
    std::memcpy(a.points.data() + 1, pointsAt, pointBytes);
    std::memcpy(a.tetras.data() + 1, tetrasAt, tetraBytes);
    std::memcpy(a.regions.data() + 1, regionsAt, regionBytes);
    // A file with good checksums may still be wrong (written by other software): the values
    // the text readers refuse are refused here too.
    for (uint64_t i = 1; i <= np; ++i)
        for (int k = 0; k < 3; ++k)
            if (!(std::fabs(a.points[i][k]) <= kMaxCoordinate)) {
                std::ostringstream o;
                o << "point " << i << " has coordinate " << a.points[i][k] << ", outside +-1e15";
                fail(o.str());
            }
    for (uint64_t t = 1; t <= nt; ++t) {
        for (uint32_t v : a.tetras[t])
            if (v < 1 || v > np)
                fail("tetra " + std::to_string(t) + " refers to point " + std::to_string(v) + ", valid points are 1.." +
                     std::to_string(np));
        if (a.regions[t] < 1 || a.regions[t] > kMaxRegion)
            fail("tetra " + std::to_string(t) + " has region " + std::to_string(a.regions[t]) + " (regions are 1.." +
                 std::to_string(kMaxRegion) + ")");
    }
    return a;
}

TetraMesh readBinaryMesh(const std::string& path, const MeshCheckOptions& check) {
    return buildMesh(parseBinaryMesh(readWholeFile(path), path), path, check);
}

std::string binaryMeshBytes(const TetraMesh& mesh) {
    const uint64_t np = mesh.pointCount(), nt = mesh.tetraCount();
    const size_t pointBytes = 24 * np, tetraBytes = 16 * nt, regionBytes = 4 * nt;
    std::string b(kBinaryMeshHeaderBytes + pointBytes + tetraBytes + regionBytes, '\0');
    std::memcpy(&b[kMagic], kBinaryMeshMagic, sizeof kBinaryMeshMagic);
    put<uint32_t>(b, kVersion, kBinaryMeshVersion);
    put<uint32_t>(b, kByteOrder, kByteOrderMark);
    put<uint64_t>(b, kPoints, np);
    put<uint64_t>(b, kTetras, nt);
    char* pointsAt = &b[kBinaryMeshHeaderBytes];
    char* tetrasAt = pointsAt + pointBytes;
    char* regionsAt = tetrasAt + tetraBytes;
    std::memcpy(pointsAt, mesh.points().data() + 1, pointBytes);
    std::memcpy(tetrasAt, mesh.tetras().data() + 1, tetraBytes);
    std::memcpy(regionsAt, mesh.regions().data() + 1, regionBytes);
    put<uint64_t>(b, kPointsSum, binaryMeshChecksum(pointsAt, pointBytes));
    put<uint64_t>(b, kTetrasSum, binaryMeshChecksum(tetrasAt, tetraBytes));
    put<uint64_t>(b, kRegionsSum, binaryMeshChecksum(regionsAt, regionBytes));
    put<uint64_t>(b, kHeaderSum, binaryMeshChecksum(b.data(), kHeaderSum));
    return b;
}

void writeBinaryMesh(const std::string& path, const TetraMesh& mesh) {
    if (!littleEndianHost()) throw Error(path + ": FullMonte binary meshes are written on little-endian hosts only");
    std::string b = binaryMeshBytes(mesh);
    AtomicFile f(path);
    f.out.write(b.data(), std::streamsize(b.size()));
    f.commit();
}

}  // namespace fm
