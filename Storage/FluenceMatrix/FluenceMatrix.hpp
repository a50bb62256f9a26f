// SPDX-License-Identifier: GPL-3.0-or-later
// The fluence matrix of a batch (tetras x runs) in FullMonte's binary format, version 1:
// docs/FLUENCE_MATRIX.md describes it byte by byte. A 128-byte header (magic, version, byte
// order, dtype, layout, dims, quantity, units, the fingerprint of the model it was simulated from)
// and float64 values, one run's column after the other, so a writer can stream columns as runs
// finish (in any order) and a reader can map the file. Errors are FormatError "FILE: what is wrong".
#pragma once
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "Geometry/ModelFingerprint.hpp"

namespace fm {

constexpr char kFluenceMatrixMagic[8] = {'F', 'M', 'F', 'L', 'U', 'M', 'A', 'T'};
constexpr uint32_t kFluenceMatrixVersion = 1;
constexpr uint32_t kFluenceMatrixByteOrderMark = 0x01020304u;
constexpr uint64_t kFluenceMatrixHeaderBytes = 128;

enum class MatrixQuantity : uint32_t {
    Fluence = 1,         // E / (V mu_a) per unit emitted energy: mm^-2 (J/mm^2 per J emitted)
    AbsorbedEnergy = 2,  // absorbed weight per tetra per launched packet (dimensionless)
};

struct FluenceMatrixHeader {
    uint32_t version = kFluenceMatrixVersion;
    uint32_t dtype = 1;   // 1 = IEEE 754 float64 (the only one in version 1)
    uint32_t layout = 1;  // 1 = column-major: element (row i, column j) at index j * rows + i
    uint64_t rows = 0;    // tetras: row i is tetra i + 1 of the mesh (ids are 1-based)
    uint64_t cols = 0;    // runs: column j = material set (j / sources), source (j % sources)
    uint64_t sources = 0, materialSets = 0;
    MatrixQuantity quantity = MatrixQuantity::Fluence;
    std::string units = "mm^-2 per J emitted";  // at most 31 bytes
    // The model the columns were simulated from (offset 104, four 48-bit parts); none() in a
    // file written before fingerprints or by a writer that does not know the model.
    ModelFingerprint model;
};

struct FluenceMatrix {
    FluenceMatrixHeader header;
    std::vector<double> values;  // rows * cols, column-major
    double at(uint64_t row, uint64_t col) const { return values[col * header.rows + row]; }
    std::vector<double> column(uint64_t col) const;
};

// Streams columns into "<path>.*.partial" (pre-sized, so columns may come in any order) and
// renames it to path on commit(); a writer destroyed before commit() removes the partial file.
class FluenceMatrixWriter {
public:
    FluenceMatrixWriter(const std::string& path, const FluenceMatrixHeader& h);
    ~FluenceMatrixWriter();
    FluenceMatrixWriter(const FluenceMatrixWriter&) = delete;
    FluenceMatrixWriter& operator=(const FluenceMatrixWriter&) = delete;
    // values.size() must equal rows.
    void writeColumn(uint64_t col, const std::vector<double>& values);
    void commit();

private:
    std::string path_, tmp_;
    FluenceMatrixHeader h_;
    std::fstream f_;
    std::vector<bool> written_;
    bool committed_ = false;
};

void writeFluenceMatrix(const std::string& path, const FluenceMatrix& m);
FluenceMatrixHeader readFluenceMatrixHeader(const std::string& path);
FluenceMatrix readFluenceMatrix(const std::string& path);

// Per-tetra column from tallies: what a batch writes for one run. volume[0] (the dummy) is
// dropped, so the column has one value per tetra.
std::vector<double> matrixColumn(const std::vector<double>& perTetraWithDummy);

}  // namespace fm
