// SPDX-License-Identifier: GPL-3.0-or-later
// The fluence matrix as HDF5 (optional component FM_USE_HDF5, library fullmonte_hdf5; the core
// does not depend on HDF5). Same values and order as the binary format: dataset "/fluence",
// float64, dims (runs, tetras), so row j of the dataset is column j of the tetras x runs matrix
// (h5py: f["fluence"][...].T). Attributes on it: quantity, units, sources, material_sets,
// first_tetra_id (1), format_version (1), and model_fingerprint (four uint64: mesh, materials,
// sources, runs) where the header has one. Run labels, when given, are the dataset "/run_labels"
// (one variable-length UTF-8 string per run). docs/FLUENCE_MATRIX.md has the details.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "Storage/FluenceMatrix/FluenceMatrix.hpp"

namespace fm {

// Streams columns like FluenceMatrixWriter: "<path>.partial", renamed on commit().
class FluenceMatrixHDF5Writer {
public:
    // columnLabels: none, or one per column.
    FluenceMatrixHDF5Writer(const std::string& path, const FluenceMatrixHeader& h,
                            const std::vector<std::string>& columnLabels = {});
    ~FluenceMatrixHDF5Writer();
    FluenceMatrixHDF5Writer(const FluenceMatrixHDF5Writer&) = delete;
    FluenceMatrixHDF5Writer& operator=(const FluenceMatrixHDF5Writer&) = delete;
    void writeColumn(uint64_t col, const std::vector<double>& values);
    void commit();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Reads "/fluence" back (for tests and tools); throws FormatError naming the file.
FluenceMatrix readFluenceMatrixHDF5(const std::string& path);
// The run labels ("/run_labels"), empty when the file has none.
std::vector<std::string> readFluenceMatrixHDF5Labels(const std::string& path);
// HDF5 files, datasets, types, spaces and attributes open in this process (tests check that
// every writer and reader, on every path, closes what it opens).
long openHDF5Objects();

}  // namespace fm
