// SPDX-License-Identifier: GPL-3.0-or-later
#include "Storage/FluenceMatrix/FluenceMatrix.hpp"
#include "Storage/AtomicFile.hpp"

#include <cstdio>
#include <cstring>
#include <filesystem>

#include "Common/Errors.hpp"
#include "Storage/InputFile.hpp"

namespace fm {
namespace {

// Fixed-size little-endian header fields, written and read byte by byte so the format does not
// depend on the host's byte order or struct padding.
void putU32(unsigned char* p, uint32_t v) { for (int i = 0; i < 4; ++i) p[i] = (unsigned char)(v >> (8 * i)); }
void putU64(unsigned char* p, uint64_t v) { for (int i = 0; i < 8; ++i) p[i] = (unsigned char)(v >> (8 * i)); }
void putU48(unsigned char* p, uint64_t v) { for (int i = 0; i < 6; ++i) p[i] = (unsigned char)(v >> (8 * i)); }
uint32_t getU32(const unsigned char* p, bool swap) {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t(p[swap ? 3 - i : i]) << (8 * i);
    return v;
}
uint64_t getU64(const unsigned char* p, bool swap) {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t(p[swap ? 7 - i : i]) << (8 * i);
    return v;
}

uint64_t getU48(const unsigned char* p, bool swap) {
    uint64_t v = 0;
    for (int i = 0; i < 6; ++i) v |= uint64_t(p[swap ? 5 - i : i]) << (8 * i);
    return v;
}

// The model fingerprint's four 48-bit parts at offsets 104, 110, 116 and 122 (mesh, materials,
// sources, runs): the header's last 24 bytes, zeros in files without one.
constexpr size_t kFingerprintOffset = 104;

bool hostLittleEndian() {
    const uint16_t one = 1;
    unsigned char b;
    std::memcpy(&b, &one, 1);
    return b == 1;
}

void encodeHeader(const FluenceMatrixHeader& h, unsigned char* b, const std::string& path) {
    std::memset(b, 0, kFluenceMatrixHeaderBytes);
    std::memcpy(b, kFluenceMatrixMagic, 8);
    putU32(b + 8, h.version);
    putU32(b + 12, kFluenceMatrixByteOrderMark);
    putU32(b + 16, h.dtype);
    putU32(b + 20, h.layout);
    putU64(b + 24, h.rows);
    putU64(b + 32, h.cols);
    putU64(b + 40, h.sources);
    putU64(b + 48, h.materialSets);
    putU32(b + 56, uint32_t(h.quantity));
    if (h.units.size() > 31) throw Error(path + ": units '" + h.units + "' longer than 31 bytes");
    std::memcpy(b + 64, h.units.data(), h.units.size());
    putU64(b + 96, kFluenceMatrixHeaderBytes);
    const uint64_t parts[4] = {h.model.mesh, h.model.materials, h.model.sources, h.model.runs};
    for (int i = 0; i < 4; ++i) {
        if (parts[i] > kFingerprintPartMask) throw Error(path + ": a model fingerprint part exceeds 48 bits");
        putU48(b + kFingerprintOffset + 6 * i, parts[i]);
    }
}

FluenceMatrixHeader decodeHeader(const unsigned char* b, uint64_t fileBytes, const std::string& path,
                                 bool& swap) {
    auto bad = [&](const std::string& what) { throw FormatError(path + ": " + what); };
    if (std::memcmp(b, kFluenceMatrixMagic, 8) != 0) bad("not a FullMonte fluence matrix (magic is not FMFLUMAT)");
    uint32_t bom = getU32(b + 12, false);
    if (bom == kFluenceMatrixByteOrderMark) swap = false;
    else if (getU32(b + 12, true) == kFluenceMatrixByteOrderMark) swap = true;
    else bad("byte-order mark at offset 12 is neither 0x01020304 nor its byte swap");
    FluenceMatrixHeader h;
    h.version = getU32(b + 8, swap);
    if (h.version != kFluenceMatrixVersion)
        bad("version " + std::to_string(h.version) + " is not supported (this reader knows version 1)");
    h.dtype = getU32(b + 16, swap);
    if (h.dtype != 1) bad("dtype " + std::to_string(h.dtype) + " is unknown (1 = float64)");
    h.layout = getU32(b + 20, swap);
    if (h.layout != 1) bad("layout " + std::to_string(h.layout) + " is unknown (1 = column-major)");
    h.rows = getU64(b + 24, swap);
    h.cols = getU64(b + 32, swap);
    h.sources = getU64(b + 40, swap);
    h.materialSets = getU64(b + 48, swap);
    uint32_t q = getU32(b + 56, swap);
    if (q != 1 && q != 2) bad("quantity " + std::to_string(q) + " is unknown (1 = fluence, 2 = absorbed energy)");
    h.quantity = MatrixQuantity(q);
    const char* u = reinterpret_cast<const char*>(b + 64);
    if (!std::memchr(u, 0, 32)) bad("units field (offset 64, 32 bytes) is not NUL-terminated");
    h.units = std::string(u);
    for (char c : h.units)
        if (c < 0x20 || c > 0x7e) bad("units field (offset 64) is not printable ASCII");
    uint64_t offset = getU64(b + 96, swap);
    if (offset != kFluenceMatrixHeaderBytes) bad("data offset " + std::to_string(offset) + " is not 128");
    const unsigned char* f = b + kFingerprintOffset;
    h.model = {getU48(f, swap), getU48(f + 6, swap), getU48(f + 12, swap), getU48(f + 18, swap)};
    // Divided, not multiplied: a product that wraps around 2^64 must not pass.
    if (h.materialSets == 0 ? h.cols != 0 : (h.cols % h.materialSets != 0 || h.cols / h.materialSets != h.sources))
        bad("sources (" + std::to_string(h.sources) + ") x material sets (" + std::to_string(h.materialSets) +
            ") != columns (" + std::to_string(h.cols) + ")");
    // Guard the multiplication before trusting it to size anything.
    const uint64_t maxValues = (fileBytes - kFluenceMatrixHeaderBytes) / 8 + 1;
    if (h.rows && h.cols > maxValues / h.rows) bad("dims " + std::to_string(h.rows) + " x " + std::to_string(h.cols) + " exceed the file");
    uint64_t expected = kFluenceMatrixHeaderBytes + 8 * h.rows * h.cols;
    if (fileBytes < expected)
        bad("truncated: " + std::to_string(h.rows) + " x " + std::to_string(h.cols) + " float64 need " +
            std::to_string(expected) + " bytes, the file has " + std::to_string(fileBytes));
    if (fileBytes > expected)
        bad(std::to_string(fileBytes - expected) + " bytes after the last value (expected " + std::to_string(expected) + ")");
    return h;
}

FluenceMatrixHeader readHeaderFrom(std::ifstream& in, const std::string& path, bool& swap) {
    std::error_code ec;
    uint64_t size = std::filesystem::file_size(path, ec);
    if (ec) throw FormatError(path + ": cannot read (" + ec.message() + ")");
    if (size < kFluenceMatrixHeaderBytes)
        throw FormatError(path + ": " + std::to_string(size) + " bytes is shorter than the 128-byte header");
    unsigned char b[kFluenceMatrixHeaderBytes];
    in.read(reinterpret_cast<char*>(b), sizeof b);
    if (!in) throw FormatError(path + ": cannot read the header");
    return decodeHeader(b, size, path, swap);
}

}  // namespace

std::vector<double> FluenceMatrix::column(uint64_t col) const {
    auto b = values.begin() + std::ptrdiff_t(col * header.rows);
    return std::vector<double>(b, b + std::ptrdiff_t(header.rows));
}

FluenceMatrixWriter::FluenceMatrixWriter(const std::string& path, const FluenceMatrixHeader& h)
    : path_(path), tmp_(stagingPath(path)), h_(h), written_(h.cols, false) {
    if (!hostLittleEndian()) throw Error(path + ": this writer supports little-endian hosts only");
    refuseFolderOutput(path);
    // Divided, not multiplied: a product that wraps around 2^64 must not pass.
    if (h.materialSets == 0 ? h.cols != 0 : (h.cols % h.materialSets != 0 || h.cols / h.materialSets != h.sources))
        throw Error(path + ": sources x material sets must equal columns");
    unsigned char b[kFluenceMatrixHeaderBytes];
    encodeHeader(h_, b, path);
    {
        std::ofstream o(tmp_, std::ios::binary | std::ios::trunc);
        if (!o) throw Error(path + ": cannot open for writing");
        o.write(reinterpret_cast<const char*>(b), sizeof b);
        if (!o) throw Error(path + ": write failed");
    }
    std::error_code ec;
    std::filesystem::resize_file(tmp_, kFluenceMatrixHeaderBytes + 8 * h.rows * h.cols, ec);
    if (ec) throw Error(path + ": cannot size the file (" + ec.message() + ")");
    f_.open(tmp_, std::ios::binary | std::ios::in | std::ios::out);
    if (!f_) throw Error(path + ": cannot open for writing");
}

FluenceMatrixWriter::~FluenceMatrixWriter() {
    if (!committed_) {
        f_.close();
        std::remove(tmp_.c_str());
    }
}

void FluenceMatrixWriter::writeColumn(uint64_t col, const std::vector<double>& v) {
    if (col >= h_.cols) throw Error(path_ + ": column " + std::to_string(col) + " beyond " + std::to_string(h_.cols));
    if (v.size() != h_.rows)
        throw Error(path_ + ": column " + std::to_string(col) + " has " + std::to_string(v.size()) +
                    " values, the matrix has " + std::to_string(h_.rows) + " rows");
    f_.seekp(std::streamoff(kFluenceMatrixHeaderBytes + 8 * col * h_.rows));
    f_.write(reinterpret_cast<const char*>(v.data()), std::streamsize(8 * v.size()));
    if (!f_) throw Error(path_ + ": write failed (disk full?)");
    written_[col] = true;
}

void FluenceMatrixWriter::commit() {
    for (uint64_t c = 0; c < h_.cols; ++c)
        if (!written_[c]) throw Error(path_ + ": column " + std::to_string(c) + " was never written");
    f_.flush();
    const bool ok = bool(f_);
    f_.close();
    if (!ok) {
        std::remove(tmp_.c_str());
        throw Error(path_ + ": write failed (disk full or not writable?)");
    }
    if (!moveIntoPlace(tmp_, path_)) throw placeError(path_, errno);
    committed_ = true;
}

void writeFluenceMatrix(const std::string& path, const FluenceMatrix& m) {
    if (m.values.size() != m.header.rows * m.header.cols)
        throw Error(path + ": " + std::to_string(m.values.size()) + " values for " + std::to_string(m.header.rows) +
                    " x " + std::to_string(m.header.cols));
    FluenceMatrixWriter w(path, m.header);
    for (uint64_t c = 0; c < m.header.cols; ++c) w.writeColumn(c, m.column(c));
    w.commit();
}

FluenceMatrixHeader readFluenceMatrixHeader(const std::string& path) {
    refuseDirectory(path);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw FormatError(path + ": cannot open");
    bool swap = false;
    return readHeaderFrom(in, path, swap);
}

FluenceMatrix readFluenceMatrix(const std::string& path) {
    refuseDirectory(path);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw FormatError(path + ": cannot open");
    FluenceMatrix m;
    bool swap = false;
    m.header = readHeaderFrom(in, path, swap);
    m.values.resize(m.header.rows * m.header.cols);
    in.read(reinterpret_cast<char*>(m.values.data()), std::streamsize(8 * m.values.size()));
    if (!in) throw FormatError(path + ": cannot read the values");
    if (swap != !hostLittleEndian()) {  // file order differs from the host's
        for (double& v : m.values) {
            unsigned char b[8];
            std::memcpy(b, &v, 8);
            for (int i = 0; i < 4; ++i) std::swap(b[i], b[7 - i]);
            std::memcpy(&v, b, 8);
        }
    }
    return m;
}

std::vector<double> matrixColumn(const std::vector<double>& perTetraWithDummy) {
    if (perTetraWithDummy.empty()) return {};
    return std::vector<double>(perTetraWithDummy.begin() + 1, perTetraWithDummy.end());
}

}  // namespace fm
