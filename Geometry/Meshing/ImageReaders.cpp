// SPDX-License-Identifier: GPL-3.0-or-later
// Label image readers: NIfTI through libnifti2 (when built with it), MetaImage by our own parser.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <utility>

#include "Common/Errors.hpp"
#include "Common/Text.hpp"
#include "Geometry/Meshing/LabelImage.hpp"

#ifdef FM_MESH_NIFTI
#include <nifti2_io.h>
#endif
#ifdef FM_MESH_ZLIB
#include <zlib.h>
#endif

namespace fm {

namespace {

using Matrix3 = std::array<std::array<double, 3>, 3>;

// One voxel value as a label; fractional or out-of-range values name the voxel.
int32_t toLabel(double v, size_t voxel, const std::string& file) {
    if (!std::isfinite(v) || v != std::floor(v) || v < 0 || v > INT32_MAX)
        throw FormatError(file + ": voxel " + std::to_string(voxel) + " has value " + std::to_string(v) +
                          ", not a label (labels are integers >= 0; is this a label image?)");
    return int32_t(v);
}

// Bytes reading an image takes at most: the stored data, up to two more copies of it (file
// buffer, decompression) and two label copies (conversion, reorientation) of 4 bytes a voxel.
double readBytes(const std::array<size_t, 3>& dims, size_t storedBytes) {
    return double(dims[0]) * double(dims[1]) * double(dims[2]) * double(3 * storedBytes + 8);
}

// Converts n values of a stored scalar type to labels.
template <class T>
void convertLabels(const void* data, size_t n, double slope, double inter, bool swap,
                   std::vector<int32_t>& out, const std::string& file) {
    out.resize(n);
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) {
        unsigned char b[sizeof(T)];
        std::memcpy(b, p + i * sizeof(T), sizeof(T));
        if (swap) std::reverse(b, b + sizeof(T));
        T v;
        std::memcpy(&v, b, sizeof(T));
        out[i] = toLabel(double(v) * slope + inter, i, file);
    }
}

// ---- NIfTI ----

#ifdef FM_MESH_NIFTI
struct NiftiFree {
    void operator()(nifti_image* p) const { nifti_image_free(p); }
};

double niftiUnitToMm(int units, const std::string& file) {
    switch (XYZT_TO_SPACE(units)) {
        case NIFTI_UNITS_METER: return 1000;
        case NIFTI_UNITS_MM: return 1;
        case NIFTI_UNITS_MICRON: return 1e-3;
        case 0: return 1;  // unknown: NIfTI's convention is mm
    }
    throw FormatError(file + ": unknown spatial unit code " + std::to_string(XYZT_TO_SPACE(units)));
}

// The voxel block as stored (file byte order). libnifti's loader (nifti_image_load) replaces
// non-finite float voxels by 0 without a word, so a NaN in a float label image would become
// label 0, the exterior; read here, such a voxel reaches toLabel, which refuses it by index.
// Reads the data file libnifti names (the .nii, or the .img of a pair; gzip too) from the offset
// it read, where a negative one (ANALYZE) means the data ends the file, as libnifti has it.
std::vector<unsigned char> readNiftiVoxels(const nifti_image& im, const std::string& path) {
    const int64_t bytes = im.nvox * int64_t(im.nbyper);
    const bool gz = nifti_is_gzfile(im.iname) != 0;
    int64_t offset = im.iname_offset;
    if (offset < 0) {
        if (gz) throw FormatError(path + ": a negative voxel offset (data at the end) needs an uncompressed file");
        offset = std::max<int64_t>(nifti_get_filesize(im.iname) - bytes, 0);
    }
    znzFile f = znzopen(im.iname, "rb", gz);
    if (znz_isnull(f)) throw FormatError(path + ": cannot open the NIfTI voxel data " + im.iname);
    std::vector<unsigned char> data(size_t(std::max<int64_t>(bytes, 0)));
    // znzseek returns fseek's 0 or gzseek's new offset on success, -1 on failure.
    const bool ok = znzseek(f, znz_off_t(offset), SEEK_SET) >= 0 && znzread(data.data(), 1, data.size(), f) == data.size();
    znzclose(f);
    if (!ok) throw FormatError(path + ": NIfTI voxel data is missing or short");
    return data;
}

void niftiLabels(const nifti_image& im, const std::vector<unsigned char>& stored, size_t n, std::vector<int32_t>& out,
                 const std::string& file) {
    double slope = im.scl_slope, inter = im.scl_inter;
    if (slope == 0 || !std::isfinite(slope)) slope = 1, inter = 0;  // 0: no scaling (NIfTI)
    const void* d = stored.data();
    const bool swap = im.byteorder != nifti_short_order();
    switch (im.datatype) {
        case DT_UINT8: return convertLabels<uint8_t>(d, n, slope, inter, swap, out, file);
        case DT_INT8: return convertLabels<int8_t>(d, n, slope, inter, swap, out, file);
        case DT_UINT16: return convertLabels<uint16_t>(d, n, slope, inter, swap, out, file);
        case DT_INT16: return convertLabels<int16_t>(d, n, slope, inter, swap, out, file);
        case DT_UINT32: return convertLabels<uint32_t>(d, n, slope, inter, swap, out, file);
        case DT_INT32: return convertLabels<int32_t>(d, n, slope, inter, swap, out, file);
        case DT_UINT64: return convertLabels<uint64_t>(d, n, slope, inter, swap, out, file);
        case DT_INT64: return convertLabels<int64_t>(d, n, slope, inter, swap, out, file);
        case DT_FLOAT32: return convertLabels<float>(d, n, slope, inter, swap, out, file);
        case DT_FLOAT64: return convertLabels<double>(d, n, slope, inter, swap, out, file);
    }
    throw FormatError(file + ": NIfTI data type " + nifti_datatype_string(im.datatype) +
                      " cannot hold labels (integer or float scalars only)");
}

// libnifti repairs a header while it builds its image: a size (dim) <= 0 becomes 1, a voxel size
// (pixdim) that is 0 or not finite becomes 1 mm (with a qform, a negative one too), and an offset
// inside the header is moved. Such a file would be meshed at a made-up size or from the wrong
// bytes, so the header as stored is checked first and the field named.
template <class Header>
void checkStoredNiftiHeader(const Header& h, double headerBytes, const std::string& path) {
    const auto field = [&](const std::string& name, double v) {
        std::ostringstream o;
        o << path << ": NIfTI header " << name << " = " << v << ": ";
        return o.str();
    };
    const int64_t nd = int64_t(h.dim[0]);
    if (nd < 1 || nd > 7) throw FormatError(field("dim[0]", double(nd)) + "the number of dimensions must be 1 to 7");
    for (int d = 1; d <= std::min<int64_t>(nd, 3); ++d)
        if (h.dim[d] < 1)
            throw FormatError(field("dim[" + std::to_string(d) + "]", double(h.dim[d])) + "an image size must be >= 1");
    if (h.sform_code <= 0)  // no sform: the voxel size comes from pixdim
        for (int d = 1; d <= std::min<int64_t>(nd, 3); ++d) {
            const double v = double(h.pixdim[d]);
            if (!std::isfinite(v) || v == 0 || (v < 0 && h.qform_code > 0))
                throw FormatError(field("pixdim[" + std::to_string(d) + "]", v) +
                                  "the voxel size must be a finite number > 0");
        }
    // The transform the reader uses (sform, else qform) must be finite: libnifti passes a NaN on,
    // and a NaN column would read as a voxel size of 0 or NaN far from its cause.
    if (h.sform_code > 0) {
        const decltype(&h.srow_x[0]) rows[3] = {h.srow_x, h.srow_y, h.srow_z};
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 4; ++c)
                if (!std::isfinite(double(rows[r][c])))
                    throw FormatError(field(std::string("srow_") + "xyz"[r] + "[" + std::to_string(c) + "]",
                                            double(rows[r][c])) +
                                      "the sform (voxel to world transform) must be finite");
    } else if (h.qform_code > 0) {
        const std::pair<const char*, double> q[] = {{"quatern_b", double(h.quatern_b)}, {"quatern_c", double(h.quatern_c)},
                                                    {"quatern_d", double(h.quatern_d)}, {"qoffset_x", double(h.qoffset_x)},
                                                    {"qoffset_y", double(h.qoffset_y)}, {"qoffset_z", double(h.qoffset_z)}};
        for (const auto& [name, v] : q)
            if (!std::isfinite(v))
                throw FormatError(field(name, v) + "the qform (voxel to world transform) must be finite");
    }
    const std::string magic(h.magic, h.magic + 3);
    if ((magic == "n+1" || magic == "n+2") && double(h.vox_offset) < headerBytes)
        throw FormatError(field("vox_offset", double(h.vox_offset)) + "the voxel data cannot start inside the " +
                          std::to_string(int(headerBytes)) + "-byte header");
}

void checkStoredNiftiHeader(const std::string& path) {
    int version = 0;
    std::unique_ptr<void, void (*)(void*)> raw(nifti_read_header(path.c_str(), &version, 0), std::free);
    if (!raw) return;  // unreadable: nifti_image_read says so
    // nifti_read_header gives the header in the file's byte order: a file of the other byte order
    // (its sizeof_hdr reads swapped) is swapped here, as libnifti swaps it for its image.
    if (version == 2) {
        auto* h = static_cast<nifti_2_header*>(raw.get());
        if (h->sizeof_hdr != 540) swap_nifti_header(h, 2);
        checkStoredNiftiHeader(*h, 540, path);
    } else if (version == 1) {
        auto* h = static_cast<nifti_1_header*>(raw.get());
        if (h->sizeof_hdr != 348) swap_nifti_header(h, 1);
        checkStoredNiftiHeader(*h, 352, path);
    }
}

LabelImage readNifti(const std::string& path) {
    if (!std::filesystem::exists(path)) throw Error(path + ": no such file");
    nifti_set_debug_level(0);
    checkStoredNiftiHeader(path);
    std::unique_ptr<nifti_image, NiftiFree> im(nifti_image_read(path.c_str(), 0));  // header only
    if (!im) throw FormatError(path + ": not a readable NIfTI-1/NIfTI-2 image");
    for (int d = 4; d <= 7; ++d)
        if (im->dim[0] >= d && im->dim[d] > 1)
            throw FormatError(path + ": image has " + std::to_string(im->dim[0]) +
                              " dimensions; a label image has 3 (dim[" + std::to_string(d) +
                              "] = " + std::to_string(im->dim[d]) + ")");
    LabelImage stored;
    stored.dims = {size_t(im->nx), size_t(std::max<int64_t>(im->ny, 1)), size_t(std::max<int64_t>(im->nz, 1))};
    const std::vector<unsigned char> voxels = readNiftiVoxels(*im, path);
    // sform when set (the scanner/atlas frame), else qform; libnifti fills qto_xyz from pixdim
    // alone (NIfTI "method 1") when neither is set.
    const nifti_dmat44& m = im->sform_code > 0 ? im->sto_xyz : im->qto_xyz;
    double unit = niftiUnitToMm(im->xyz_units, path);
    Matrix3 dir{};
    for (int a = 0; a < 3; ++a) {
        double len = std::sqrt(m.m[0][a] * m.m[0][a] + m.m[1][a] * m.m[1][a] + m.m[2][a] * m.m[2][a]);
        if (!(len > 0)) throw FormatError(path + ": voxel spacing along axis " + std::to_string(a) + " is 0");
        stored.spacing[a] = len * unit;
        for (int r = 0; r < 3; ++r) dir[r][a] = m.m[r][a] / len;
        stored.origin[a] = m.m[a][3] * unit;
    }
    niftiLabels(*im, voxels, stored.dims[0] * stored.dims[1] * stored.dims[2], stored.labels, path);
    return orientToAxes(std::move(stored), dir, path);
}
#endif

// ---- MetaImage ----

struct MetaHeader {
    std::map<std::string, std::string> fields;
    std::streampos dataStart = 0;
};

MetaHeader readMetaHeader(std::istream& in, const std::string& path) {
    MetaHeader h;
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
        size_t eq = line.find('=');
        if (eq == std::string::npos) {
            if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
            throw FormatError(path + ":" + std::to_string(n) + ": expected 'Key = Value' in a MetaImage header");
        }
        std::string key = line.substr(0, eq), value = line.substr(eq + 1);
        key.erase(key.find_last_not_of(" \t") + 1);
        key.erase(0, key.find_first_not_of(" \t"));
        value.erase(0, value.find_first_not_of(" \t"));
        value.erase(value.find_last_not_of(" \t\r") + 1);
        h.fields[key] = value;
        if (key == "ElementDataFile") {
            h.dataStart = in.tellg();
            return h;
        }
    }
    throw FormatError(path + ": MetaImage header has no ElementDataFile line");
}

std::vector<double> metaNumbers(const MetaHeader& h, const std::string& key, size_t n,
                                std::vector<double> fallback, const std::string& path) {
    auto it = h.fields.find(key);
    if (it == h.fields.end()) return fallback;
    std::istringstream s(it->second);
    std::vector<double> v;
    double x;
    while (s >> x) v.push_back(x);
    if (v.size() != n || !s.eof())
        throw FormatError(path + ": MetaImage field " + key + " = '" + it->second + "' should be " +
                          std::to_string(n) + " numbers");
    return v;
}

bool metaTrue(const MetaHeader& h, const std::string& key) {
    auto it = h.fields.find(key);
    return it != h.fields.end() && (it->second == "True" || it->second == "true" || it->second == "1");
}

std::string metaField(const MetaHeader& h, const std::vector<std::string>& keys) {
    for (const auto& k : keys) {
        auto it = h.fields.find(k);
        if (it != h.fields.end()) return it->second;
    }
    return "";
}

std::string inflate(const std::string& packed, size_t expected, const std::string& path) {
#ifdef FM_MESH_ZLIB
    std::string out(expected, '\0');
    z_stream z{};
    if (inflateInit2(&z, 15 + 32) != Z_OK) throw Error(path + ": zlib initialisation failed");
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data()));
    z.avail_in = uInt(packed.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = uInt(out.size());
    int rc = ::inflate(&z, Z_FINISH);
    size_t got = z.total_out;
    inflateEnd(&z);
    if (rc != Z_STREAM_END || got != expected)
        throw FormatError(path + ": compressed MetaImage data is corrupt or short (" + std::to_string(got) +
                          " of " + std::to_string(expected) + " bytes)");
    return out;
#else
    (void)packed, (void)expected;
    throw FormatError(path + ": compressed MetaImage data needs zlib, which this build lacks");
#endif
}

std::string metaData(std::istream& headerStream, const MetaHeader& h, size_t bytes, const std::string& path) {
    std::string file = h.fields.at("ElementDataFile");
    std::string raw;
    if (file == "LOCAL") {
        headerStream.seekg(h.dataStart);
        raw.assign(std::istreambuf_iterator<char>(headerStream), {});
    } else {
        if (file == "LIST" || file.find('%') != std::string::npos || file.find(' ') != std::string::npos)
            throw FormatError(path + ": MetaImage ElementDataFile '" + file + "' (a file list) is not supported");
        auto dataPath = std::filesystem::path(path).parent_path() / file;
        std::ifstream d(dataPath, std::ios::binary);
        if (!d) throw Error(dataPath.string() + ": cannot open the MetaImage data file named by " + path);
        raw.assign(std::istreambuf_iterator<char>(d), {});
    }
    if (metaTrue(h, "CompressedData")) return inflate(raw, bytes, path);
    if (raw.size() < bytes)
        throw FormatError(path + ": MetaImage data has " + std::to_string(raw.size()) + " bytes, " +
                          std::to_string(bytes) + " expected");
    return raw.substr(raw.size() - bytes);  // HeaderSize -1 / trailing data: ITK reads the last bytes
}

const std::map<std::string, size_t> kMetaSizes = {
    {"MET_UCHAR", 1}, {"MET_CHAR", 1},  {"MET_USHORT", 2}, {"MET_SHORT", 2}, {"MET_UINT", 4},
    {"MET_INT", 4},   {"MET_FLOAT", 4}, {"MET_DOUBLE", 8}, {"MET_ULONG", 8}, {"MET_LONG", 8}};

// readBytes from a MetaImage header; 0 when the header does not give DimSize and ElementType.
double metaReadBytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return 0;
    MetaHeader h = readMetaHeader(in, path);
    auto dim = metaNumbers(h, "DimSize", 3, {}, path);
    auto ts = kMetaSizes.find(metaField(h, {"ElementType"}));
    if (dim.empty() || ts == kMetaSizes.end()) return 0;
    return readBytes({size_t(std::max(dim[0], 1.0)), size_t(std::max(dim[1], 1.0)), size_t(std::max(dim[2], 1.0))},
                     ts->second);
}

LabelImage readMetaImage(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path + ": cannot open");
    MetaHeader h = readMetaHeader(in, path);
    if (metaField(h, {"NDims"}) != "3")
        throw FormatError(path + ": MetaImage NDims is '" + metaField(h, {"NDims"}) + "'; a label image has 3");
    std::string channels = metaField(h, {"ElementNumberOfChannels"});
    if (!channels.empty() && channels != "1")
        throw FormatError(path + ": MetaImage has " + channels + " channels per voxel; labels have 1");
    auto dim = metaNumbers(h, "DimSize", 3, {}, path);
    if (dim.empty()) throw FormatError(path + ": MetaImage header has no DimSize");
    LabelImage stored;
    for (int a = 0; a < 3; ++a) {
        if (dim[a] < 1 || dim[a] != std::floor(dim[a]))
            throw FormatError(path + ": MetaImage DimSize must be 3 integers >= 1");
        stored.dims[a] = size_t(dim[a]);
    }
    auto sp = metaNumbers(h, h.fields.count("ElementSpacing") ? "ElementSpacing" : "ElementSize", 3, {1, 1, 1}, path);
    std::string originKey = h.fields.count("Offset") ? "Offset" : h.fields.count("Position") ? "Position" : "Origin";
    auto org = metaNumbers(h, originKey, 3, {0, 0, 0}, path);
    std::string dirKey = h.fields.count("TransformMatrix") ? "TransformMatrix"
                         : h.fields.count("Rotation")      ? "Rotation"
                                                           : "Orientation";
    auto tm = metaNumbers(h, dirKey, 9, {1, 0, 0, 0, 1, 0, 0, 0, 1}, path);
    Matrix3 dir{};
    for (int a = 0; a < 3; ++a) {
        stored.spacing[a] = sp[a];
        stored.origin[a] = org[a];
        for (int r = 0; r < 3; ++r) dir[r][a] = tm[3 * a + r];  // MetaIO: axis a's direction is row a
    }
    std::string type = metaField(h, {"ElementType"});
    auto ts = kMetaSizes.find(type);
    if (ts == kMetaSizes.end()) throw FormatError(path + ": MetaImage ElementType '" + type + "' cannot hold labels");
    size_t n = stored.dims[0] * stored.dims[1] * stored.dims[2];
    std::string data = metaData(in, h, n * ts->second, path);
    bool swap = metaTrue(h, "ElementByteOrderMSB") || metaTrue(h, "BinaryDataByteOrderMSB");
    const void* p = data.data();
    auto& L = stored.labels;
    if (type == "MET_UCHAR") convertLabels<uint8_t>(p, n, 1, 0, swap, L, path);
    else if (type == "MET_CHAR") convertLabels<int8_t>(p, n, 1, 0, swap, L, path);
    else if (type == "MET_USHORT") convertLabels<uint16_t>(p, n, 1, 0, swap, L, path);
    else if (type == "MET_SHORT") convertLabels<int16_t>(p, n, 1, 0, swap, L, path);
    else if (type == "MET_UINT") convertLabels<uint32_t>(p, n, 1, 0, swap, L, path);
    else if (type == "MET_INT") convertLabels<int32_t>(p, n, 1, 0, swap, L, path);
    else if (type == "MET_FLOAT") convertLabels<float>(p, n, 1, 0, swap, L, path);
    else if (type == "MET_DOUBLE") convertLabels<double>(p, n, 1, 0, swap, L, path);
    else if (type == "MET_ULONG") convertLabels<uint64_t>(p, n, 1, 0, swap, L, path);
    else convertLabels<int64_t>(p, n, 1, 0, swap, L, path);
    return orientToAxes(std::move(stored), dir, path);
}

}  // namespace

bool labelImageFormatSupported(const std::string& path, std::string* why) {
    auto no = [&](const std::string& w) {
        if (why) *why = w;
        return false;
    };
    if (endsWithIgnoringCase(path, ".nii") || endsWithIgnoringCase(path, ".nii.gz")) {
#ifdef FM_MESH_NIFTI
        return true;
#else
        return no(path + ": NIfTI needs libnifti2 (libnifti2-dev), which this build lacks");
#endif
    }
    if (endsWithIgnoringCase(path, ".mha") || endsWithIgnoringCase(path, ".mhd")) return true;
    if (endsWithIgnoringCase(path, ".vti")) return no(path + ": .vti images are read in VTK builds only (FM_USE_VTK)");
    return no(path + ": unknown label image format (.nii, .nii.gz, .mha, .mhd, or .vti with VTK)");
}

double labelImageReadBytes(const std::string& path) {
    if (!labelImageFormatSupported(path)) return 0;
#ifdef FM_MESH_NIFTI
    if (endsWithIgnoringCase(path, ".nii") || endsWithIgnoringCase(path, ".nii.gz")) {
        if (!std::filesystem::exists(path)) return 0;
        nifti_set_debug_level(0);
        std::unique_ptr<nifti_image, NiftiFree> im(nifti_image_read(path.c_str(), 0));  // header only
        if (!im) return 0;
        return readBytes({size_t(std::max<int64_t>(im->nx, 1)), size_t(std::max<int64_t>(im->ny, 1)),
                          size_t(std::max<int64_t>(im->nz, 1))},
                         size_t(std::max(im->nbyper, 1)));
    }
#endif
    return metaReadBytes(path);
}

LabelImage readLabelImage(const std::string& path) {
    std::string why;
    if (!labelImageFormatSupported(path, &why)) throw ParameterError(why);
    LabelImage im;
#ifdef FM_MESH_NIFTI
    if (endsWithIgnoringCase(path, ".nii") || endsWithIgnoringCase(path, ".nii.gz")) im = readNifti(path);
#endif
    if (endsWithIgnoringCase(path, ".mha") || endsWithIgnoringCase(path, ".mhd")) im = readMetaImage(path);
    im.validate(path);
    return im;
}

void writeMetaImage(const std::string& path, const LabelImage& im) {
    im.validate(path);
    std::ofstream out(path, std::ios::binary);
    if (!out) throw Error(path + ": cannot write");
    out.precision(17);
    out << "ObjectType = Image\nNDims = 3\nBinaryData = True\nBinaryDataByteOrderMSB = False\n"
        << "CompressedData = False\nTransformMatrix = 1 0 0 0 1 0 0 0 1\n"
        << "Offset = " << im.origin[0] << " " << im.origin[1] << " " << im.origin[2] << "\n"
        << "ElementSpacing = " << im.spacing[0] << " " << im.spacing[1] << " " << im.spacing[2] << "\n"
        << "DimSize = " << im.dims[0] << " " << im.dims[1] << " " << im.dims[2] << "\n"
        << "ElementType = MET_INT\nElementDataFile = LOCAL\n";
    out.write(reinterpret_cast<const char*>(im.labels.data()), std::streamsize(im.labels.size() * sizeof(int32_t)));
    if (!out) throw Error(path + ": write failed");
}

}  // namespace fm
