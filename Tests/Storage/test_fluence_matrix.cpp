// SPDX-License-Identifier: GPL-3.0-or-later
// The fluence matrix binary format (docs/FLUENCE_MATRIX.md): round trip, byte layout (the model
// fingerprint included), files without a fingerprint, and a FormatError naming the file and the
// fault for each kind of bad file.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <limits>
#include <unistd.h>

#include "Common/Errors.hpp"
#include "Storage/FluenceMatrix/FluenceMatrix.hpp"
#include "fm_config.h"
#if FM_HAVE_HDF5 && defined(FM_TEST_HDF5)
#include "Storage/FluenceMatrix/FluenceMatrixHDF5.hpp"
#endif

using namespace fm;
namespace fs = std::filesystem;

namespace {
std::string tmpPath(const std::string& name) {
    fs::path d = fs::temp_directory_path() / ("fm_matrix_test_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return (d / name).string();
}
FluenceMatrix sample() {
    FluenceMatrix m;
    m.header.rows = 5;
    m.header.cols = 6;
    m.header.sources = 3;
    m.header.materialSets = 2;
    for (uint64_t c = 0; c < 6; ++c)
        for (uint64_t r = 0; r < 5; ++r) m.values.push_back(1.0 / (1 + r + 10 * c) + 1e-17 * c);
    m.values[7] = std::numeric_limits<double>::quiet_NaN();  // mu_a = 0 tetras are NaN
    m.values[8] = 1e300;
    m.values[9] = -0.0;
    m.header.model = {0x0123456789ab, 0xfedcba987654, 1, kFingerprintPartMask};
    return m;
}
std::vector<unsigned char> bytesOf(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void writeBytes(const std::string& p, const std::vector<unsigned char>& b) {
    std::ofstream o(p, std::ios::binary | std::ios::trunc);
    o.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}
void expectFormatError(const std::string& path, const std::string& fragment) {
    try {
        readFluenceMatrix(path);
        BOOST_ERROR("accepted a bad file: expected '" << fragment << "'");
    } catch (const FormatError& e) {
        std::string m = e.what();
        BOOST_CHECK_MESSAGE(m.find(path) == 0 && m.find(fragment) != std::string::npos, m);
    }
}
// Each test's files live in one temporary folder, removed afterwards.
struct TmpDir {
    ~TmpDir() {
        std::error_code ec;
        fs::remove_all(fs::path(tmpPath("x")).parent_path(), ec);
    }
};
bool sameValues(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != b.size()) return false;
    return std::memcmp(a.data(), b.data(), 8 * a.size()) == 0;  // NaN and -0.0 bit for bit
}
}  // namespace

BOOST_FIXTURE_TEST_SUITE(fluence_matrix, TmpDir)

BOOST_AUTO_TEST_CASE(round_trip_and_layout) {
    std::string p = tmpPath("m.fmm");
    FluenceMatrix m = sample();
    writeFluenceMatrix(p, m);
    BOOST_CHECK(!fs::exists(p + ".partial"));
    FluenceMatrix r = readFluenceMatrix(p);
    BOOST_CHECK(sameValues(r.values, m.values));
    BOOST_CHECK_EQUAL(r.header.rows, 5u);
    BOOST_CHECK_EQUAL(r.header.cols, 6u);
    BOOST_CHECK_EQUAL(r.header.sources, 3u);
    BOOST_CHECK_EQUAL(r.header.materialSets, 2u);
    BOOST_CHECK(r.header.quantity == MatrixQuantity::Fluence);
    BOOST_CHECK_EQUAL(r.header.units, "mm^-2 per J emitted");
    BOOST_CHECK_EQUAL(r.at(3, 4), 1.0 / (1 + 3 + 40) + 4e-17);
    // The bytes the format document promises.
    auto b = bytesOf(p);
    BOOST_REQUIRE_EQUAL(b.size(), 128u + 8 * 30);
    BOOST_CHECK(std::memcmp(b.data(), "FMFLUMAT", 8) == 0);
    BOOST_CHECK_EQUAL(b[8], 1);                           // version, little-endian
    BOOST_CHECK(b[12] == 4 && b[13] == 3 && b[14] == 2 && b[15] == 1);  // 0x01020304 LE
    BOOST_CHECK_EQUAL(b[16], 1);                          // float64
    BOOST_CHECK_EQUAL(b[24], 5);                          // rows
    BOOST_CHECK_EQUAL(b[32], 6);                          // cols
    BOOST_CHECK_EQUAL(b[96], 128);                        // data offset
    // The model fingerprint: four 48-bit little-endian parts from offset 104.
    BOOST_CHECK(r.header.model == m.header.model);
    BOOST_CHECK(b[104] == 0xab && b[105] == 0x89 && b[109] == 0x01);  // mesh 0x0123456789ab
    BOOST_CHECK(b[110] == 0x54 && b[115] == 0xfe);                     // materials
    BOOST_CHECK(b[116] == 1 && b[117] == 0);                           // sources
    BOOST_CHECK(b[122] == 0xff && b[127] == 0xff);                     // runs 2^48 - 1
    double v;
    std::memcpy(&v, b.data() + 128 + 8 * (4 * 5 + 3), 8);  // column-major (row 3, column 4)
    BOOST_CHECK_EQUAL(v, m.at(3, 4));
}

BOOST_AUTO_TEST_CASE(columns_stream_in_any_order) {
    std::string p = tmpPath("s.fmm");
    FluenceMatrix m = sample();
    {
        FluenceMatrixWriter w(p, m.header);
        for (uint64_t c : {5, 0, 3, 1, 4, 2}) w.writeColumn(c, m.column(c));
        BOOST_CHECK(!fs::exists(p));  // only "<p>.partial" until commit
        w.commit();
    }
    BOOST_CHECK(sameValues(readFluenceMatrix(p).values, m.values));
    {
        FluenceMatrixWriter w(tmpPath("u.fmm"), m.header);
        w.writeColumn(0, m.column(0));
        BOOST_CHECK_THROW(w.commit(), Error);  // columns 1..5 missing
        BOOST_CHECK_THROW(w.writeColumn(6, m.column(0)), Error);
        BOOST_CHECK_THROW(w.writeColumn(1, {1.0, 2.0}), Error);
    }
    BOOST_CHECK(!fs::exists(tmpPath("u.fmm")) && !fs::exists(tmpPath("u.fmm.partial")));
}

// A folder given for the file is named as one (as the text writers name it) before anything is
// written, not as a failed write at the end; one made there during the writing, at the commit.
BOOST_AUTO_TEST_CASE(a_folder_for_the_file_is_named) {
    const auto failure = [](const std::function<void()>& write) -> std::string {
        try {
            write();
        } catch (const Error& e) {
            return e.what();
        }
        return "written";
    };
    const std::string dir = tmpPath("folder.fmm");
    fs::create_directories(dir);
    BOOST_TEST(failure([&] { writeFluenceMatrix(dir, sample()); }) == dir + ": is a folder, not a file (give a file name)");
    const std::string late = tmpPath("late.fmm");
    BOOST_TEST(failure([&] {
                   FluenceMatrix m = sample();
                   FluenceMatrixWriter w(late, m.header);
                   for (uint64_t c = 0; c < m.header.cols; ++c) w.writeColumn(c, m.column(c));
                   fs::create_directories(late);
                   w.commit();
               }) == late + ": is a folder, not a file (give a file name)");
    for (const auto& e : fs::directory_iterator(fs::path(dir).parent_path()))
        BOOST_TEST(e.path().extension() != ".partial", e.path());  // no staging file left
#ifdef FM_TEST_HDF5
    BOOST_TEST(failure([&] { FluenceMatrixHDF5Writer(dir, sample().header); }) ==
               dir + ": is a folder, not a file (give a file name)");
#endif
}

BOOST_AUTO_TEST_CASE(big_endian_file_is_read) {
    std::string p = tmpPath("le.fmm"), q = tmpPath("be.fmm");
    FluenceMatrix m = sample();
    writeFluenceMatrix(p, m);
    auto b = bytesOf(p);
    auto swapAt = [&](size_t off, size_t n) { std::reverse(b.begin() + off, b.begin() + off + n); };
    for (size_t off : {8, 12, 16, 20, 56}) swapAt(off, 4);
    for (size_t off : {24, 32, 40, 48, 96}) swapAt(off, 8);
    for (size_t off : {104, 110, 116, 122}) swapAt(off, 6);
    for (size_t i = 0; i < 30; ++i) swapAt(128 + 8 * i, 8);
    writeBytes(q, b);
    const FluenceMatrix r = readFluenceMatrix(q);
    BOOST_CHECK(sameValues(r.values, m.values));
    BOOST_CHECK(r.header.model == m.header.model);
}

// A file written before the fingerprint (zeros at 104..127) still reads, with none().
BOOST_AUTO_TEST_CASE(file_without_a_fingerprint_reads) {
    std::string p = tmpPath("old.fmm");
    FluenceMatrix m = sample();
    m.header.model = {};
    writeFluenceMatrix(p, m);
    auto b = bytesOf(p);
    BOOST_CHECK(std::all_of(b.begin() + 104, b.begin() + 128, [](unsigned char c) { return c == 0; }));
    const FluenceMatrix r = readFluenceMatrix(p);
    BOOST_CHECK(r.header.model.none());
    BOOST_CHECK(sameValues(r.values, m.values));
    m.header.model.runs = kFingerprintPartMask + 1;  // does not fit its 6 bytes
    BOOST_CHECK_THROW(writeFluenceMatrix(tmpPath("wide.fmm"), m), Error);
}

BOOST_AUTO_TEST_CASE(bad_files_are_named_errors) {
    std::string p = tmpPath("good.fmm");
    writeFluenceMatrix(p, sample());
    const auto good = bytesOf(p);
    auto variant = [&](const std::string& name, auto edit) {
        auto b = good;
        edit(b);
        std::string q = tmpPath(name);
        writeBytes(q, b);
        return q;
    };
    expectFormatError(tmpPath("absent.fmm"), "cannot open");
    expectFormatError(variant("short.fmm", [](auto& b) { b.resize(100); }), "shorter than the 128-byte header");
    expectFormatError(variant("magic.fmm", [](auto& b) { b[0] = 'X'; }), "magic");
    expectFormatError(variant("version.fmm", [](auto& b) { b[8] = 2; }), "version 2");
    expectFormatError(variant("bom.fmm", [](auto& b) { b[12] = 9; }), "byte-order mark");
    expectFormatError(variant("dtype.fmm", [](auto& b) { b[16] = 2; }), "dtype 2");
    expectFormatError(variant("quantity.fmm", [](auto& b) { b[56] = 9; }), "quantity 9");
    expectFormatError(variant("units.fmm", [](auto& b) { std::memset(b.data() + 64, 'u', 32); }), "units");
    expectFormatError(variant("trunc.fmm", [](auto& b) { b.resize(b.size() - 8); }), "truncated");
    expectFormatError(variant("extra.fmm", [](auto& b) { b.push_back(0); }), "1 bytes after the last value");
    expectFormatError(variant("dims.fmm", [](auto& b) { b[40] = 4; }), "sources (4) x material sets (2) != columns (6)");
    // A huge row count must fail on the size check, not allocate.
    expectFormatError(variant("huge.fmm", [](auto& b) { std::memset(b.data() + 24, 0xff, 7); }), "exceed the file");
}

#if FM_HAVE_HDF5 && defined(FM_TEST_HDF5)
BOOST_AUTO_TEST_CASE(hdf5_file_reads_back_through_the_c_api) {
    std::string p = tmpPath("m.h5");
    FluenceMatrix m = sample();
    {
        FluenceMatrixHDF5Writer w(p, m.header, {"a", "b", "c", "d", "e", "f"});
        for (uint64_t c : {2, 0, 1, 5, 4, 3}) w.writeColumn(c, m.column(c));
        w.commit();
    }
    BOOST_CHECK(fs::exists(p) && !fs::exists(p + ".partial"));
    FluenceMatrix r = readFluenceMatrixHDF5(p);
    BOOST_CHECK_EQUAL(r.header.rows, 5u);
    BOOST_CHECK_EQUAL(r.header.cols, 6u);
    BOOST_CHECK_EQUAL(r.header.sources, 3u);
    BOOST_CHECK_EQUAL(r.header.materialSets, 2u);
    BOOST_CHECK(sameValues(r.values, m.values));
    BOOST_CHECK(r.header.model == m.header.model);  // attribute model_fingerprint
    BOOST_CHECK(readFluenceMatrixHDF5Labels(p) == std::vector<std::string>({"a", "b", "c", "d", "e", "f"}));
    {  // without a fingerprint, no attribute, and none() back
        FluenceMatrix old = sample();
        old.header.model = {};
        FluenceMatrixHDF5Writer w(tmpPath("old.h5"), old.header);
        for (uint64_t c = 0; c < 6; ++c) w.writeColumn(c, old.column(c));
        w.commit();
    }
    BOOST_CHECK(readFluenceMatrixHDF5(tmpPath("old.h5")).header.model.none());
    writeFluenceMatrix(tmpPath("m.fmm"), m);
    BOOST_CHECK_THROW(readFluenceMatrixHDF5(tmpPath("m.fmm")), FormatError);  // not HDF5
    BOOST_CHECK_EQUAL(openHDF5Objects(), 0);
}

// Issue 26: labels were one attribute, limited to 64 KiB (about 4,000 rows of a sources file, or
// 17 long paths). 5,000 runs with 300-byte labels (1.5 MB of labels) must write and read back.
BOOST_AUTO_TEST_CASE(hdf5_thousands_of_long_labels) {
    std::string p = tmpPath("many.h5");
    FluenceMatrixHeader h;
    h.rows = 2;
    h.cols = 5000;
    h.sources = 5000;
    h.materialSets = 1;
    std::vector<std::string> labels;
    for (uint64_t j = 0; j < h.cols; ++j)
        labels.push_back("/data/plans/patient-" + std::to_string(j) + "/" + std::string(280, 'x') + "-\u00e9.source");
    {
        FluenceMatrixHDF5Writer w(p, h, labels);
        for (uint64_t c = 0; c < h.cols; ++c) w.writeColumn(c, {double(c), -double(c)});
        w.commit();
    }
    FluenceMatrix r = readFluenceMatrixHDF5(p);
    BOOST_CHECK_EQUAL(r.header.cols, 5000u);
    BOOST_CHECK_EQUAL(r.at(1, 4999), -4999.0);
    BOOST_CHECK(readFluenceMatrixHDF5Labels(p) == labels);
    BOOST_CHECK_EQUAL(openHDF5Objects(), 0);
}

// Error paths close every handle and leave no partial file.
BOOST_AUTO_TEST_CASE(hdf5_error_paths_close_everything) {
    FluenceMatrixHeader h = sample().header;
    BOOST_CHECK_THROW(FluenceMatrixHDF5Writer(tmpPath("nodir/x.h5"), h), Error);  // cannot create
    BOOST_CHECK_THROW(FluenceMatrixHDF5Writer(tmpPath("n.h5"), h, {"only one"}), Error);  // labels != runs
    BOOST_CHECK(!fs::exists(tmpPath("n.h5.partial")));
    {
        FluenceMatrixHDF5Writer w(tmpPath("u.h5"), h, {"a", "b", "c", "d", "e", "f"});
        BOOST_CHECK_THROW(w.writeColumn(9, std::vector<double>(h.rows)), Error);
        BOOST_CHECK_THROW(w.commit(), Error);  // columns missing
    }
    BOOST_CHECK(!fs::exists(tmpPath("u.h5.partial")) && !fs::exists(tmpPath("u.h5")));
    BOOST_CHECK_THROW(readFluenceMatrixHDF5(tmpPath("nothere.h5")), FormatError);
    BOOST_CHECK_EQUAL(openHDF5Objects(), 0);
}
#endif

BOOST_AUTO_TEST_SUITE_END()
