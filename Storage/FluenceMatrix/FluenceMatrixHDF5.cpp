// SPDX-License-Identifier: GPL-3.0-or-later
#include "Storage/FluenceMatrix/FluenceMatrixHDF5.hpp"
#include "Storage/AtomicFile.hpp"

#include <hdf5.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "Common/Errors.hpp"

namespace fm {
namespace {

// An HDF5 identifier, closed by its close function when it goes out of scope: no handle leaks on
// any error path.
class H5Id {
public:
    using Close = herr_t (*)(hid_t);
    H5Id() = default;
    H5Id(hid_t id, Close close) : id_(id), close_(close) {}
    H5Id(H5Id&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
    H5Id& operator=(H5Id&& o) noexcept {
        if (this != &o) {
            reset();
            id_ = o.id_, close_ = o.close_;
            o.id_ = -1;
        }
        return *this;
    }
    H5Id(const H5Id&) = delete;
    H5Id& operator=(const H5Id&) = delete;
    ~H5Id() { reset(); }
    void reset() {
        if (id_ >= 0) close_(id_);
        id_ = -1;
    }
    operator hid_t() const { return id_; }

private:
    hid_t id_ = -1;
    Close close_ = nullptr;
};

void check(herr_t e, const std::string& path, const std::string& what) {
    if (e < 0) throw Error(path + ": HDF5: " + what + " failed");
}
// Takes ownership of id; throws when it is an error.
H5Id own(hid_t id, H5Id::Close close, const std::string& path, const std::string& what) {
    if (id < 0) throw Error(path + ": HDF5: " + what + " failed");
    return H5Id(id, close);
}

void attrU64(hid_t obj, const char* name, uint64_t v, const std::string& path) {
    H5Id sp = own(H5Screate(H5S_SCALAR), H5Sclose, path, name);
    H5Id a = own(H5Acreate2(obj, name, H5T_STD_U64LE, sp, H5P_DEFAULT, H5P_DEFAULT), H5Aclose, path, name);
    check(H5Awrite(a, H5T_NATIVE_UINT64, &v), path, name);
}
// The model fingerprint as one attribute of four uint64 (mesh, materials, sources, runs), written
// only where the header has one.
void attrFingerprint(hid_t obj, const ModelFingerprint& f, const std::string& path) {
    if (f.none()) return;
    const uint64_t v[4] = {f.mesh, f.materials, f.sources, f.runs};
    const hsize_t n = 4;
    H5Id sp = own(H5Screate_simple(1, &n, nullptr), H5Sclose, path, "model_fingerprint");
    H5Id a = own(H5Acreate2(obj, "model_fingerprint", H5T_STD_U64LE, sp, H5P_DEFAULT, H5P_DEFAULT), H5Aclose, path,
                 "model_fingerprint");
    check(H5Awrite(a, H5T_NATIVE_UINT64, v), path, "model_fingerprint");
}
void attrString(hid_t obj, const char* name, const std::string& v, const std::string& path) {
    H5Id t = own(H5Tcopy(H5T_C_S1), H5Tclose, path, name);
    check(H5Tset_size(t, v.empty() ? 1 : v.size()), path, name);
    check(H5Tset_strpad(t, H5T_STR_NULLTERM), path, name);
    H5Id sp = own(H5Screate(H5S_SCALAR), H5Sclose, path, name);
    H5Id a = own(H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT), H5Aclose, path, name);
    check(H5Awrite(a, t, v.c_str()), path, name);
}
// Variable-length UTF-8 strings (labels are file names: any length, any count).
H5Id stringType(const std::string& path) {
    H5Id t = own(H5Tcopy(H5T_C_S1), H5Tclose, path, "string type");
    check(H5Tset_size(t, H5T_VARIABLE), path, "string type");
    check(H5Tset_cset(t, H5T_CSET_UTF8), path, "string type");
    return t;
}
// Dataset "/run_labels": one string per run (a dataset, not an attribute: attributes are limited
// to 64 KiB, a few thousand labels).
void writeLabels(hid_t file, const std::vector<std::string>& labels, const std::string& path) {
    H5Id t = stringType(path);
    hsize_t n = labels.size();
    H5Id sp = own(H5Screate_simple(1, &n, nullptr), H5Sclose, path, "run_labels space");
    H5Id d = own(H5Dcreate2(file, "run_labels", t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose, path,
                 "create dataset /run_labels");
    std::vector<const char*> text;
    for (const std::string& l : labels) text.push_back(l.c_str());
    check(H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, text.data()), path, "write /run_labels");
}

}  // namespace

struct FluenceMatrixHDF5Writer::Impl {
    std::string path, tmp;
    FluenceMatrixHeader h;
    H5Id file, data;
    std::vector<bool> written;
    bool committed = false;
    void close() {
        data.reset();
        file.reset();
    }
    // Also when the constructor throws part way: the partial file goes with the handles.
    ~Impl() {
        close();
        if (!committed && !tmp.empty()) std::remove(tmp.c_str());
    }
};

FluenceMatrixHDF5Writer::FluenceMatrixHDF5Writer(const std::string& path, const FluenceMatrixHeader& h,
                                                 const std::vector<std::string>& labels)
    : impl_(std::make_unique<Impl>()) {
    Impl& I = *impl_;
    I.path = path;
    I.h = h;
    I.written.assign(h.cols, false);
    if (!labels.empty() && labels.size() != h.cols)
        throw Error(path + ": " + std::to_string(labels.size()) + " run labels for " + std::to_string(h.cols) + " runs");
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors come back as exceptions, not stderr
    refuseFolderOutput(path);
    I.tmp = stagingPath(path);
    I.file = own(H5Fcreate(I.tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose, path, "create file");
    hsize_t dims[2] = {hsize_t(h.cols), hsize_t(h.rows)};
    H5Id sp = own(H5Screate_simple(2, dims, nullptr), H5Sclose, path, "dataspace");
    I.data = own(H5Dcreate2(I.file, "fluence", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose,
                 path, "create dataset /fluence");
    attrString(I.data, "quantity", h.quantity == MatrixQuantity::Fluence ? "fluence" : "absorbed_energy", path);
    attrString(I.data, "units", h.units, path);
    attrU64(I.data, "sources", h.sources, path);
    attrU64(I.data, "material_sets", h.materialSets, path);
    attrU64(I.data, "first_tetra_id", 1, path);
    attrU64(I.data, "format_version", kFluenceMatrixVersion, path);
    attrString(I.data, "layout", "dims (runs, tetras): row j is run j's column of the tetras x runs matrix", path);
    attrFingerprint(I.data, h.model, path);
    if (!labels.empty()) writeLabels(I.file, labels, path);
}

FluenceMatrixHDF5Writer::~FluenceMatrixHDF5Writer() = default;

void FluenceMatrixHDF5Writer::writeColumn(uint64_t col, const std::vector<double>& v) {
    Impl& I = *impl_;
    if (col >= I.h.cols || v.size() != I.h.rows)
        throw Error(I.path + ": column " + std::to_string(col) + " with " + std::to_string(v.size()) +
                    " values does not fit " + std::to_string(I.h.rows) + " x " + std::to_string(I.h.cols));
    H5Id fs = own(H5Dget_space(I.data), H5Sclose, I.path, "dataspace");
    hsize_t start[2] = {hsize_t(col), 0}, count[2] = {1, hsize_t(I.h.rows)};
    check(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, nullptr, count, nullptr), I.path, "select column");
    H5Id ms = own(H5Screate_simple(2, count, nullptr), H5Sclose, I.path, "dataspace");
    check(H5Dwrite(I.data, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, v.data()), I.path, "write column");
    I.written[col] = true;
}

void FluenceMatrixHDF5Writer::commit() {
    Impl& I = *impl_;
    for (uint64_t c = 0; c < I.h.cols; ++c)
        if (!I.written[c]) throw Error(I.path + ": column " + std::to_string(c) + " was never written");
    check(H5Fflush(I.file, H5F_SCOPE_GLOBAL), I.path, "flush");
    I.close();
    if (!moveIntoPlace(I.tmp, I.path)) throw placeError(I.path, errno);
    I.committed = true;
}

namespace {
H5Id openForReading(const std::string& path) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) throw FormatError(path + ": not an HDF5 file or cannot open");
    return H5Id(f, H5Fclose);
}
}  // namespace

FluenceMatrix readFluenceMatrixHDF5(const std::string& path) {
    H5Id f = openForReading(path);
    FluenceMatrix m;
    auto fail = [&](const std::string& what) { throw FormatError(path + ": " + what); };
    hid_t dId = H5Dopen2(f, "fluence", H5P_DEFAULT);
    if (dId < 0) fail("no dataset /fluence");
    H5Id d(dId, H5Dclose);
    hsize_t dims[2] = {0, 0};
    {
        H5Id sp = own(H5Dget_space(d), H5Sclose, path, "dataspace");
        if (H5Sget_simple_extent_ndims(sp) != 2) fail("/fluence is not two-dimensional");
        H5Sget_simple_extent_dims(sp, dims, nullptr);
    }
    m.header.cols = dims[0];
    m.header.rows = dims[1];
    auto readU64 = [&](const char* name) {
        uint64_t v = 0;
        hid_t aId = H5Aopen(d, name, H5P_DEFAULT);
        if (aId < 0) fail(std::string("attribute ") + name + " missing");
        H5Id a(aId, H5Aclose);
        if (H5Aread(a, H5T_NATIVE_UINT64, &v) < 0) fail(std::string("attribute ") + name + " unreadable");
        return v;
    };
    m.header.sources = readU64("sources");
    m.header.materialSets = readU64("material_sets");
    if (H5Aexists(d, "model_fingerprint") > 0) {  // absent in files without one
        H5Id a = own(H5Aopen(d, "model_fingerprint", H5P_DEFAULT), H5Aclose, path, "open model_fingerprint");
        H5Id sp = own(H5Aget_space(a), H5Sclose, path, "model_fingerprint space");
        hsize_t n = 0;
        if (H5Sget_simple_extent_ndims(sp) != 1 || (H5Sget_simple_extent_dims(sp, &n, nullptr), n != 4))
            fail("attribute model_fingerprint is not four integers");
        uint64_t v[4] = {0, 0, 0, 0};
        if (H5Aread(a, H5T_NATIVE_UINT64, v) < 0) fail("attribute model_fingerprint unreadable");
        for (uint64_t x : v)
            if (x > kFingerprintPartMask) fail("attribute model_fingerprint has a part over 48 bits");
        m.header.model = {v[0], v[1], v[2], v[3]};
    }
    m.values.resize(m.header.rows * m.header.cols);
    if (!m.values.empty() && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, m.values.data()) < 0)
        fail("cannot read /fluence");
    return m;
}

std::vector<std::string> readFluenceMatrixHDF5Labels(const std::string& path) {
    H5Id f = openForReading(path);
    std::vector<std::string> labels;
    if (H5Lexists(f, "run_labels", H5P_DEFAULT) <= 0) return labels;
    H5Id d = own(H5Dopen2(f, "run_labels", H5P_DEFAULT), H5Dclose, path, "open /run_labels");
    H5Id sp = own(H5Dget_space(d), H5Sclose, path, "/run_labels dataspace");
    if (H5Sget_simple_extent_ndims(sp) != 1) throw FormatError(path + ": /run_labels is not one-dimensional");
    hsize_t n = 0;
    H5Sget_simple_extent_dims(sp, &n, nullptr);
    H5Id t = stringType(path);
    std::vector<char*> text(n, nullptr);
    if (n && H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, text.data()) < 0)
        throw FormatError(path + ": cannot read /run_labels (not variable-length strings?)");
    for (char* s : text) labels.emplace_back(s ? s : "");
    if (n) H5Dvlen_reclaim(t, sp, H5P_DEFAULT, text.data());
    return labels;
}

long openHDF5Objects() { return long(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL)); }

}  // namespace fm
