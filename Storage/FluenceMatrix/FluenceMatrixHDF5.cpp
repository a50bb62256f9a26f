#include "Storage/FluenceMatrix/FluenceMatrixHDF5.hpp"

#include <hdf5.h>

#include <cstdio>

#include "Geometry/Errors.hpp"

namespace fm {
namespace {

void check(herr_t e, const std::string& path, const char* what) {
    if (e < 0) throw Error(path + ": HDF5: " + what + " failed");
}
hid_t checkId(hid_t id, const std::string& path, const char* what) {
    if (id < 0) throw Error(path + ": HDF5: " + what + " failed");
    return id;
}

void attrU64(hid_t obj, const char* name, uint64_t v, const std::string& path) {
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = checkId(H5Acreate2(obj, name, H5T_STD_U64LE, sp, H5P_DEFAULT, H5P_DEFAULT), path, name);
    check(H5Awrite(a, H5T_NATIVE_UINT64, &v), path, name);
    H5Aclose(a);
    H5Sclose(sp);
}
void attrString(hid_t obj, const char* name, const std::string& v, const std::string& path) {
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, v.empty() ? 1 : v.size());
    H5Tset_strpad(t, H5T_STR_NULLTERM);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = checkId(H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT), path, name);
    check(H5Awrite(a, t, v.c_str()), path, name);
    H5Aclose(a);
    H5Sclose(sp);
    H5Tclose(t);
}

}  // namespace

struct FluenceMatrixHDF5Writer::Impl {
    std::string path, tmp;
    FluenceMatrixHeader h;
    hid_t file = -1, data = -1;
    std::vector<bool> written;
    bool committed = false;
    void close() {
        if (data >= 0) H5Dclose(data);
        if (file >= 0) H5Fclose(file);
        data = file = -1;
    }
};

FluenceMatrixHDF5Writer::FluenceMatrixHDF5Writer(const std::string& path, const FluenceMatrixHeader& h,
                                                 const std::vector<std::string>& labels)
    : impl_(std::make_unique<Impl>()) {
    Impl& I = *impl_;
    I.path = path;
    I.tmp = path + ".partial";
    I.h = h;
    I.written.assign(h.cols, false);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors come back as exceptions, not stderr
    I.file = checkId(H5Fcreate(I.tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), path, "create file");
    hsize_t dims[2] = {hsize_t(h.cols), hsize_t(h.rows)};
    hid_t sp = H5Screate_simple(2, dims, nullptr);
    I.data = checkId(H5Dcreate2(I.file, "fluence", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                     path, "create dataset /fluence");
    H5Sclose(sp);
    attrString(I.data, "quantity", h.quantity == MatrixQuantity::Fluence ? "fluence" : "absorbed_energy", path);
    attrString(I.data, "units", h.units, path);
    attrU64(I.data, "sources", h.sources, path);
    attrU64(I.data, "material_sets", h.materialSets, path);
    attrU64(I.data, "first_tetra_id", 1, path);
    attrU64(I.data, "format_version", kFluenceMatrixVersion, path);
    attrString(I.data, "layout", "dims (runs, tetras): row j is run j's column of the tetras x runs matrix", path);
    if (!labels.empty()) {
        std::string joined;
        for (size_t i = 0; i < labels.size(); ++i) joined += (i ? "\n" : "") + labels[i];
        attrString(I.data, "run_labels", joined, path);
    }
}

FluenceMatrixHDF5Writer::~FluenceMatrixHDF5Writer() {
    if (!impl_) return;
    impl_->close();
    if (!impl_->committed) std::remove(impl_->tmp.c_str());
}

void FluenceMatrixHDF5Writer::writeColumn(uint64_t col, const std::vector<double>& v) {
    Impl& I = *impl_;
    if (col >= I.h.cols || v.size() != I.h.rows)
        throw Error(I.path + ": column " + std::to_string(col) + " with " + std::to_string(v.size()) +
                    " values does not fit " + std::to_string(I.h.rows) + " x " + std::to_string(I.h.cols));
    hid_t fs = H5Dget_space(I.data);
    hsize_t start[2] = {hsize_t(col), 0}, count[2] = {1, hsize_t(I.h.rows)};
    check(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, nullptr, count, nullptr), I.path, "select column");
    hid_t ms = H5Screate_simple(2, count, nullptr);
    herr_t e = H5Dwrite(I.data, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, v.data());
    H5Sclose(ms);
    H5Sclose(fs);
    check(e, I.path, "write column");
    I.written[col] = true;
}

void FluenceMatrixHDF5Writer::commit() {
    Impl& I = *impl_;
    for (uint64_t c = 0; c < I.h.cols; ++c)
        if (!I.written[c]) throw Error(I.path + ": column " + std::to_string(c) + " was never written");
    check(H5Fflush(I.file, H5F_SCOPE_GLOBAL), I.path, "flush");
    I.close();
    if (std::rename(I.tmp.c_str(), I.path.c_str()) != 0) throw Error(I.path + ": cannot rename the finished file");
    I.committed = true;
}

FluenceMatrix readFluenceMatrixHDF5(const std::string& path) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) throw FormatError(path + ": not an HDF5 file or cannot open");
    FluenceMatrix m;
    hid_t d = H5Dopen2(f, "fluence", H5P_DEFAULT);
    if (d < 0) {
        H5Fclose(f);
        throw FormatError(path + ": no dataset /fluence");
    }
    hid_t sp = H5Dget_space(d);
    hsize_t dims[2] = {0, 0};
    int nd = H5Sget_simple_extent_ndims(sp);
    if (nd == 2) H5Sget_simple_extent_dims(sp, dims, nullptr);
    H5Sclose(sp);
    auto fail = [&](const std::string& what) {
        H5Dclose(d);
        H5Fclose(f);
        throw FormatError(path + ": " + what);
    };
    if (nd != 2) fail("/fluence is not two-dimensional");
    m.header.cols = dims[0];
    m.header.rows = dims[1];
    auto readU64 = [&](const char* name) {
        uint64_t v = 0;
        hid_t a = H5Aopen(d, name, H5P_DEFAULT);
        if (a < 0 || H5Aread(a, H5T_NATIVE_UINT64, &v) < 0) {
            if (a >= 0) H5Aclose(a);
            fail(std::string("attribute ") + name + " missing");
        }
        H5Aclose(a);
        return v;
    };
    m.header.sources = readU64("sources");
    m.header.materialSets = readU64("material_sets");
    m.values.resize(m.header.rows * m.header.cols);
    if (!m.values.empty() && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, m.values.data()) < 0)
        fail("cannot read /fluence");
    H5Dclose(d);
    H5Fclose(f);
    return m;
}

}  // namespace fm
