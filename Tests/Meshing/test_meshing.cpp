// SPDX-License-Identifier: GPL-3.0-or-later
// The mesher (Geometry/Meshing) on images these tests make: volumes against the analytic shapes,
// conforming interfaces, physical placement (spacing, origin, orientation of each reader), and
// a point source's absorption against the exact answer for the same spheres.
#include <boost/test/unit_test.hpp>
#include <nifti1.h>
#ifdef FM_TEST_ZLIB
#include <zlib.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "Common/Errors.hpp"
#include "Geometry/MaterialSet.hpp"
#include "Geometry/Meshing/MeshQuality.hpp"
#include "Geometry/Meshing/Mesher.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Geometry/Sources.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Tests/TestUtil.hpp"

using namespace fm;

namespace {

constexpr double kPi = 3.14159265358979323846;

// Voxels labelled by f(centre in mm) on an n-voxel grid of spacing s from origin o.
template <class F>
LabelImage makeImage(std::array<size_t, 3> n, Point3 s, Point3 o, F f) {
    LabelImage im;
    im.dims = n;
    im.spacing = s;
    im.origin = o;
    im.labels.resize(n[0] * n[1] * n[2]);
    for (size_t k = 0; k < n[2]; ++k)
        for (size_t j = 0; j < n[1]; ++j)
            for (size_t i = 0; i < n[0]; ++i)
                im.labels[im.index(i, j, k)] = f(Point3{o[0] + i * s[0], o[1] + j * s[1], o[2] + k * s[2]});
    return im;
}

// Inner sphere (label 2, radius r1) in a shell (label 1, to r2), centred at the origin.
const double r1 = 3, r2 = 5;
LabelImage nestedSpheres(double voxel) {
    size_t n = size_t(std::ceil(2 * (r2 + 1) / voxel));
    double o = -0.5 * voxel * double(n - 1);
    return makeImage({n, n, n}, {voxel, voxel, voxel}, {o, o, o}, [](const Point3& p) {
        double r = normP(p);
        return r < r1 ? 2 : r < r2 ? 1 : 0;
    });
}

MeshingOptions fineOptions() {
    MeshingOptions o;
    o.facetSize = 0.4;
    o.facetDistance = 0.05;
    o.cellSize = 0.8;
    o.seed = 7;
    o.perturb = false;  // exudation alone removes the slivers here, in a fraction of the time
    return o;
}

// The nested-spheres mesh, made once for the tests that use it.
const TetraMesh& nestedMesh() {
    static TetraMesh m = meshLabelImage(nestedSpheres(0.2), fineOptions());
    return m;
}

Point3 centroid(const TetraMesh& m, uint32_t t) {
    Point3 c{0, 0, 0};
    for (uint32_t p : m.tetra(t))
        for (int a = 0; a < 3; ++a) c[a] += m.point(p)[a] / 4;
    return c;
}

// Volume-weighted centroid of a region.
Point3 regionCentroid(const TetraMesh& m, uint32_t r) {
    Point3 c{0, 0, 0};
    double v = 0;
    for (uint32_t t = 1; t <= m.tetraCount(); ++t)
        if (m.region(t) == r) {
            Point3 x = centroid(m, t);
            for (int a = 0; a < 3; ++a) c[a] += x[a] * m.volume(t);
            v += m.volume(t);
        }
    for (int a = 0; a < 3; ++a) c[a] /= v;
    return c;
}

Point3 faceCentroid(const TetraMesh& m, uint32_t f) {
    Point3 c{0, 0, 0};
    for (uint32_t p : m.face(f).points)
        for (int a = 0; a < 3; ++a) c[a] += m.point(p)[a] / 3;
    return c;
}

// Voxel centroid of a label in physical coordinates.
Point3 voxelCentroid(const LabelImage& im, int32_t label) {
    Point3 c{0, 0, 0};
    double n = 0;
    for (size_t k = 0; k < im.dims[2]; ++k)
        for (size_t j = 0; j < im.dims[1]; ++j)
            for (size_t i = 0; i < im.dims[0]; ++i)
                if (im.at(i, j, k) == label) {
                    const size_t idx[3] = {i, j, k};
                    for (int a = 0; a < 3; ++a) c[a] += im.origin[a] + im.spacing[a] * double(idx[a]);
                    ++n;
                }
    for (int a = 0; a < 3; ++a) c[a] /= n;
    return c;
}

std::string tempPath(const std::string& name) {
    return (std::filesystem::temp_directory_path() / ("fm_meshing_" + std::to_string(::getpid()) + "_" + name)).string();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(meshing)

BOOST_AUTO_TEST_CASE(nested_spheres_volumes_within_2_percent) {
    const TetraMesh& m = nestedMesh();
    BOOST_TEST_MESSAGE(formatMeshReport(m, regionVolumes(m, nullptr), meshQuality(m)));
    double inner = 4.0 / 3 * kPi * r1 * r1 * r1, shell = 4.0 / 3 * kPi * (r2 * r2 * r2 - r1 * r1 * r1);
    BOOST_CHECK_EQUAL(m.regionCount(), 3u);
    BOOST_CHECK_SMALL(m.regionVolume(2) / inner - 1, 0.02);
    BOOST_CHECK_SMALL(m.regionVolume(1) / shell - 1, 0.02);
}

// Every face is shared by two tetras except the outer sphere's: no crack at the interface,
// no face inside the outer surface on the boundary, and interface faces lie on the inner sphere.
BOOST_AUTO_TEST_CASE(nested_spheres_conform) {
    const TetraMesh& m = nestedMesh();
    double tol = 0.25;  // facet distance plus the voxel staircase the image carries
    for (uint32_t f : m.boundaryFaces()) {
        double r = normP(faceCentroid(m, f));
        BOOST_REQUIRE_MESSAGE(r > r2 - tol, "boundary face " << f << " at radius " << r << " inside the outer sphere (a crack)");
    }
    size_t interface = 0;
    for (uint32_t f = 1; f <= m.faceCount(); ++f) {
        const MeshFace& F = m.face(f);
        if (!F.other || m.region(F.owner) == m.region(F.other)) continue;
        ++interface;
        BOOST_REQUIRE_SMALL(normP(faceCentroid(m, f)) - r1, tol);
    }
    BOOST_CHECK_GT(interface, 100u);
    for (uint32_t t = 1; t <= m.tetraCount(); ++t) BOOST_REQUIRE_GT(m.volume(t), 0);
    BOOST_CHECK_GT(meshQuality(m).minDihedral, 1.0);  // slivers removed
}

// The quality measures on a regular tetrahedron: dihedral angles acos(1/3), radius-edge sqrt(6)/4.
BOOST_AUTO_TEST_CASE(quality_of_regular_tetra) {
    TetraMesh m({{0, 0, 0}, {1, 1, 1}, {1, -1, -1}, {-1, 1, -1}, {-1, -1, 1}}, {{0, 0, 0, 0}, {1, 2, 3, 4}}, {0, 1});
    MeshQuality q = meshQuality(m);
    BOOST_CHECK_CLOSE(q.minDihedral, std::acos(1.0 / 3) * 180 / kPi, 1e-9);
    BOOST_CHECK_CLOSE(q.medianDihedral, std::acos(1.0 / 3) * 180 / kPi, 1e-9);
    BOOST_CHECK_CLOSE(q.maxRadiusEdge, std::sqrt(6.0) / 4, 1e-9);
}

// Pure absorbers (mu_s = 0, n matched): a packet from the centre is absorbed at a distance drawn
// from the local mu_a, so the fraction absorbed in the inner sphere is 1 - exp(-mu1 r1) and in
// the shell exp(-mu1 r1) (1 - exp(-mu2 (r2 - r1))), for radii from the mesh's region volumes.
// A crack at the interface would let packets out there; a misplaced interface shifts the split.
BOOST_AUTO_TEST_CASE(point_source_absorption_matches_exact) {
    const TetraMesh& m = nestedMesh();
    const double mu1 = 0.25, mu2 = 0.4;
    MaterialSet ms;
    ms.exterior(Material(0, 0, 0, 1.0));
    ms.append(Material(mu2, 0, 0, 1.0));  // region 1: the shell
    ms.append(Material(mu1, 0, 0, 1.0));  // region 2: the inner sphere
    PointSource src;
    src.position = {0.011, -0.007, 0.003};
    KernelInput in = packModel(m, ms, src);
    double R1 = std::cbrt(m.regionVolume(2) * 3 / (4 * kPi));
    double R2 = std::cbrt((m.regionVolume(1) + m.regionVolume(2)) * 3 / (4 * kPi));
    std::vector<double> inner, shell;
    for (int b = 0; b < 8; ++b) {
        RunOptions o;
        o.packets = 20000;
        o.firstPacket = uint64_t(b) * o.packets;
        o.threads = 2;
        RunResult r = runCpu(in, o);
        double e[3] = {0, 0, 0};
        for (uint32_t t = 1; t <= m.tetraCount(); ++t) e[m.region(t)] += r.volume[t];
        inner.push_back(e[2] / r.ledger.launched);
        shell.push_back(e[1] / r.ledger.launched);
    }
    double pInner = 1 - std::exp(-mu1 * R1);
    double pShell = std::exp(-mu1 * R1) * (1 - std::exp(-mu2 * (R2 - R1)));
    fmtest::checkWithinSigma("absorbed in the inner sphere", fmtest::meanSd(inner), pInner, 4);
    fmtest::checkWithinSigma("absorbed in the shell", fmtest::meanSd(shell), pShell, 4);
}

// An off-centre ball in an anisotropic image with an origin lands at its millimetre position.
BOOST_AUTO_TEST_CASE(spacing_and_origin_honoured) {
    const Point3 c{-6.2, 4.1, 13.3};
    LabelImage im = makeImage({30, 36, 24}, {0.3, 0.25, 0.4}, {-10, 0, 9}, [&](const Point3& p) {
        return normP(sub(p, c)) < 2.0 ? 5 : 0;
    });
    MeshingOptions o;
    o.seed = 3;
    TetraMesh m = meshLabelImage(im, o);
    Point3 got = regionCentroid(m, 5);
    for (int a = 0; a < 3; ++a) BOOST_CHECK_SMALL(got[a] - c[a], 0.05);
    BOOST_CHECK_SMALL(m.regionVolume(5) / (4.0 / 3 * kPi * 8) - 1, 0.05);
}

// The same seed gives the same mesh.
BOOST_AUTO_TEST_CASE(seed_reproducible) {
    LabelImage im = nestedSpheres(0.5);
    MeshingOptions o;
    o.seed = 11;
    TetraMesh a = meshLabelImage(im, o), b = meshLabelImage(im, o);
    BOOST_REQUIRE_EQUAL(a.tetraCount(), b.tetraCount());
    BOOST_CHECK(a.points() == b.points());
}

// Per-label sizes: a smaller cell size in the inner sphere gives it more, smaller tetras.
BOOST_AUTO_TEST_CASE(per_label_cell_size) {
    LabelImage im = nestedSpheres(0.5);
    MeshingOptions o;
    o.seed = 1;
    o.perturb = o.exude = false;  // sizes come from refinement alone
    TetraMesh plain = meshLabelImage(im, o);
    o.cellSizeByLabel[2] = 0.4;
    TetraMesh fine = meshLabelImage(im, o);
    auto count = [](const TetraMesh& m, uint32_t r) {
        size_t n = 0;
        for (uint32_t t = 1; t <= m.tetraCount(); ++t) n += m.region(t) == r;
        return n;
    };
    BOOST_CHECK_GT(count(fine, 2), 2 * count(plain, 2));
}

BOOST_AUTO_TEST_CASE(bad_options_and_images) {
    LabelImage im = nestedSpheres(1.0);
    MeshingOptions o;
    o.cellSize = -1;
    BOOST_CHECK_THROW(meshLabelImage(im, o), ParameterError);
    o = MeshingOptions();
    o.facetAngle = 40;
    BOOST_CHECK_THROW(meshLabelImage(im, o), ParameterError);
    o = MeshingOptions();
    LabelImage empty = im;
    std::fill(empty.labels.begin(), empty.labels.end(), 0);
    BOOST_CHECK_THROW(meshLabelImage(empty, o), ParameterError);
    LabelImage bad = im;
    bad.spacing[1] = 0;
    BOOST_CHECK_THROW(meshLabelImage(bad, o), ParameterError);
}

// ---- Readers: each format's geometry reaches physical millimetres ----

BOOST_AUTO_TEST_CASE(orient_permuted_and_flipped_axes) {
    // Stored axes: i along -y, j along +z, k along +x.
    LabelImage s;
    s.dims = {4, 3, 2};
    s.spacing = {0.5, 2, 3};
    s.origin = {10, 20, 30};
    s.labels.resize(24);
    for (size_t v = 0; v < 24; ++v) s.labels[v] = int32_t(v);
    std::array<std::array<double, 3>, 3> d{{{0, 0, 1}, {-1, 0, 0}, {0, 1, 0}}};
    LabelImage out = orientToAxes(s, d, "test");
    BOOST_CHECK((out.dims == std::array<size_t, 3>{2, 4, 3}));
    BOOST_CHECK((out.spacing == Point3{3, 0.5, 2}));
    BOOST_CHECK((out.origin == Point3{10, 20 - 1.5, 30}));
    // Every stored voxel keeps its physical centre.
    for (size_t k = 0; k < 2; ++k)
        for (size_t j = 0; j < 3; ++j)
            for (size_t i = 0; i < 4; ++i) {
                Point3 p{10 + 3.0 * k, 20 - 0.5 * i, 30 + 2.0 * j};
                size_t oi = size_t(std::lround((p[0] - out.origin[0]) / out.spacing[0]));
                size_t oj = size_t(std::lround((p[1] - out.origin[1]) / out.spacing[1]));
                size_t ok = size_t(std::lround((p[2] - out.origin[2]) / out.spacing[2]));
                BOOST_REQUIRE_EQUAL(out.at(oi, oj, ok), s.at(i, j, k));
            }
    std::array<std::array<double, 3>, 3> oblique{{{0.8, 0.6, 0}, {-0.6, 0.8, 0}, {0, 0, 1}}};
    BOOST_CHECK_THROW(orientToAxes(s, oblique, "test"), FormatError);
}

// A ball written as NIfTI with an sform that flips x and swaps y/z, read back and meshed: it
// sits where the sform puts it.
BOOST_AUTO_TEST_CASE(nifti_sform_honoured) {
    const size_t n[3] = {20, 16, 24};
    const double sp[3] = {0.5, 0.6, 0.4};
    const Point3 ijkCentre{12, 7, 9};
    nifti_1_header h;
    std::memset(&h, 0, sizeof h);
    h.sizeof_hdr = 348;
    h.dim[0] = 3;
    for (int a = 0; a < 3; ++a) h.dim[a + 1] = short(n[a]), h.pixdim[a + 1] = float(sp[a]);
    h.datatype = DT_INT16;
    h.bitpix = 16;
    h.vox_offset = 352;
    h.sform_code = 1;
    h.xyzt_units = NIFTI_UNITS_MM;
    // x = -0.5 i + 40, y = 0.4 k - 3, z = 0.6 j + 7
    float srow[3][4] = {{-0.5f, 0, 0, 40}, {0, 0, 0.4f, -3}, {0, 0.6f, 0, 7}};
    std::memcpy(h.srow_x, srow[0], sizeof h.srow_x);
    std::memcpy(h.srow_y, srow[1], sizeof h.srow_y);
    std::memcpy(h.srow_z, srow[2], sizeof h.srow_z);
    std::memcpy(h.magic, "n+1\0", 4);
    std::vector<int16_t> data(n[0] * n[1] * n[2]);
    for (size_t k = 0; k < n[2]; ++k)
        for (size_t j = 0; j < n[1]; ++j)
            for (size_t i = 0; i < n[0]; ++i) {
                double dx = (i - ijkCentre[0]) * sp[0], dy = (j - ijkCentre[1]) * sp[1], dz = (k - ijkCentre[2]) * sp[2];
                data[i + n[0] * (j + n[1] * k)] = dx * dx + dy * dy + dz * dz < 2.5 * 2.5 ? 3 : 0;
            }
    std::string path = tempPath("ball.nii");
    {
        std::ofstream f(path, std::ios::binary);
        f.write(reinterpret_cast<const char*>(&h), sizeof h);
        const char ext[4] = {0, 0, 0, 0};
        f.write(ext, 4);
        f.write(reinterpret_cast<const char*>(data.data()), std::streamsize(data.size() * 2));
    }
    LabelImage im = readLabelImage(path);
    std::filesystem::remove(path);
    Point3 expect{40 - 0.5 * ijkCentre[0], -3 + 0.4 * ijkCentre[2], 7 + 0.6 * ijkCentre[1]};
    const Point3 spacing{0.5, 0.4, 0.6};
    for (int a = 0; a < 3; ++a) BOOST_CHECK_SMALL(im.spacing[a] - spacing[a], 1e-6);  // stored as float
    Point3 vc = voxelCentroid(im, 3);
    for (int a = 0; a < 3; ++a) BOOST_CHECK_SMALL(vc[a] - expect[a], 1e-5);
    MeshingOptions o;
    o.seed = 5;
    TetraMesh m = meshLabelImage(im, o);
    Point3 mc = regionCentroid(m, 3);
    for (int a = 0; a < 3; ++a) BOOST_CHECK_SMALL(mc[a] - expect[a], 0.05);
}

// A 6 x 6 x 6 NIfTI-1 file of 8-bit labels (a 2 x 2 x 2 cube of label 1), or of the float32
// voxels given, its header changed by `edit`.
std::string writeSmallNifti(const std::string& name, const std::function<void(nifti_1_header&)>& edit,
                            const std::vector<float>& floats = {}) {
    nifti_1_header h;
    std::memset(&h, 0, sizeof h);
    h.sizeof_hdr = 348;
    h.dim[0] = 3;
    for (int a = 1; a <= 3; ++a) h.dim[a] = 6, h.pixdim[a] = 1;
    h.datatype = floats.empty() ? DT_UINT8 : DT_FLOAT32;
    h.bitpix = floats.empty() ? 8 : 32;
    h.vox_offset = 352;
    h.xyzt_units = NIFTI_UNITS_MM;
    std::memcpy(h.magic, "n+1\0", 4);
    edit(h);
    std::vector<uint8_t> data(216, 0);
    for (size_t k = 2; k < 4; ++k)
        for (size_t j = 2; j < 4; ++j)
            for (size_t i = 2; i < 4; ++i) data[i + 6 * (j + 6 * k)] = 1;
    const std::string path = tempPath(name);
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(&h), sizeof h);
    const char ext[4] = {0, 0, 0, 0};
    f.write(ext, 4);
    if (floats.empty())
        f.write(reinterpret_cast<const char*>(data.data()), std::streamsize(data.size()));
    else
        f.write(reinterpret_cast<const char*>(floats.data()), std::streamsize(4 * floats.size()));
    return path;
}

// What reading a label image says: "read", or the error's text; the file is removed.
std::string readRefusal(const std::string& path) {
    try {
        readLabelImage(path);
    } catch (const std::exception& e) {
        std::filesystem::remove(path);
        return e.what();
    }
    std::filesystem::remove(path);
    return "read";
}

// Headers libnifti would repair without a word (a size or voxel size of 0 becomes 1, an offset
// inside the header is moved) are refused naming the field, and so are voxel sizes outside a
// nanometre..a kilometre (below it CGAL's refinement gives up or never ends).
BOOST_AUTO_TEST_CASE(nifti_headers_libnifti_would_repair_are_refused) {
    const auto write = [](const std::string& name, const std::function<void(nifti_1_header&)>& edit) {
        return writeSmallNifti(name, edit);
    };
    const auto refusal = readRefusal;
    BOOST_TEST(refusal(write("ok.nii", [](nifti_1_header&) {})) == "read");
    BOOST_TEST(refusal(write("pix0.nii", [](nifti_1_header& h) { h.pixdim[2] = 0; })).find("pixdim[2] = 0") !=
               std::string::npos);
    BOOST_TEST(refusal(write("pixinf.nii", [](nifti_1_header& h) { h.pixdim[3] = INFINITY; })).find("pixdim[3] = inf") !=
               std::string::npos);
    BOOST_TEST(refusal(write("pixneg.nii", [](nifti_1_header& h) { h.qform_code = 1, h.pixdim[1] = -2; }))
                   .find("pixdim[1] = -2") != std::string::npos);
    BOOST_TEST(refusal(write("dim0.nii", [](nifti_1_header& h) { h.dim[0] = 0; })).find("dim[0] = 0") !=
               std::string::npos);
    BOOST_TEST(refusal(write("dimneg.nii", [](nifti_1_header& h) { h.dim[2] = -6; })).find("dim[2] = -6") !=
               std::string::npos);
    BOOST_TEST(refusal(write("off.nii", [](nifti_1_header& h) { h.vox_offset = -100; })).find("vox_offset = -100") !=
               std::string::npos);
    BOOST_TEST(refusal(write("tiny.nii", [](nifti_1_header& h) {
                   for (int a = 1; a <= 3; ++a) h.pixdim[a] = 1e-20f;
               })).find("is 1e-20 mm, outside") != std::string::npos);
    BOOST_TEST(refusal(write("nm.nii", [](nifti_1_header& h) {
                   for (int a = 1; a <= 3; ++a) h.pixdim[a] = 1e-6f;
               })) == "read");
    // The same bounds for images made in memory (Python's mesh_image).
    LabelImage im;
    im.dims = {2, 2, 2};
    im.labels.assign(8, 1);
    im.spacing = {1, 1e-9, 1};
    BOOST_CHECK_THROW(im.validate("labels"), ParameterError);
    im.spacing = {1, 1, 1e7};
    BOOST_CHECK_THROW(im.validate("labels"), ParameterError);
}

// libnifti's loader turns non-finite float voxels into 0 (the exterior) without a word: the reader
// refuses them, naming the file and the first such voxel. A transform with a non-finite entry
// is named as such, not as a voxel size of 0.
BOOST_AUTO_TEST_CASE(nifti_non_finite_voxels_and_transforms_are_refused) {
    std::vector<float> v(216, 0.0f);
    v[100] = 1;
    BOOST_TEST(readRefusal(writeSmallNifti("float.nii", [](nifti_1_header&) {}, v)) == "read");
    for (float bad : {NAN, INFINITY, -INFINITY}) {
        std::vector<float> w = v;
        w[37] = bad, w[150] = bad;
        const std::string path = tempPath("floatbad.nii");
        const std::string why = readRefusal(writeSmallNifti("floatbad.nii", [](nifti_1_header&) {}, w));
        BOOST_TEST(why.find(path + ": voxel 37 has value ") == 0, why);
        BOOST_TEST(why.find("not a label") != std::string::npos, why);
    }
    // The same in the other byte order: header and voxels are swapped as read (the header check
    // reads the stored header, which libnifti leaves in the file's order).
    std::vector<float> big = v;
    big[5] = NAN;
    for (float& x : big) {
        unsigned char b[4];
        std::memcpy(b, &x, 4);
        std::reverse(b, b + 4);
        std::memcpy(&x, b, 4);
    }
    const std::string swapped = readRefusal(writeSmallNifti("floatbig.nii", [](nifti_1_header& h) {
        const auto swapBytes = [](auto& x) {
            unsigned char* b = reinterpret_cast<unsigned char*>(&x);
            std::reverse(b, b + sizeof x);
        };
        swapBytes(h.sizeof_hdr), swapBytes(h.datatype), swapBytes(h.bitpix), swapBytes(h.vox_offset);
        for (int d = 0; d < 8; ++d) swapBytes(h.dim[d]), swapBytes(h.pixdim[d]);
    }, big));
    BOOST_TEST(swapped.find("voxel 5 has value nan") != std::string::npos, swapped);
#ifdef FM_TEST_ZLIB
    // The same in a .nii.gz: the voxels are read from the compressed file (a good one and a bad one).
    for (bool bad : {false, true}) {
        std::vector<float> w = v;
        if (bad) w[37] = NAN;
        const std::string plain = writeSmallNifti("floatgz.nii", [](nifti_1_header&) {}, w);
        std::ifstream in(plain, std::ios::binary);
        const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
        std::filesystem::remove(plain);
        const std::string gz = tempPath("floatgz.nii.gz");
        gzFile out = gzopen(gz.c_str(), "wb");
        BOOST_REQUIRE(out);
        gzwrite(out, bytes.data(), unsigned(bytes.size()));
        gzclose(out);
        const std::string why = readRefusal(gz);
        BOOST_TEST((bad ? why.find("voxel 37 has value nan") != std::string::npos : why == "read"), why);
    }
#endif
    const std::string sform = readRefusal(writeSmallNifti("pixnan.nii", [](nifti_1_header& h) {
        h.sform_code = 1;
        h.srow_x[0] = 1, h.srow_y[1] = NAN, h.srow_y[3] = 2, h.srow_z[2] = 1;
    }));
    BOOST_TEST(sform.find("NIfTI header srow_y[1] = nan: the sform (voxel to world transform) must be finite") !=
                   std::string::npos,
               sform);
    const std::string qform = readRefusal(writeSmallNifti("qnan.nii", [](nifti_1_header& h) {
        h.qform_code = 1, h.qoffset_z = INFINITY;
    }));
    BOOST_TEST(qform.find("NIfTI header qoffset_z = inf: the qform") != std::string::npos, qform);
}

// MetaImage with a flipped axis in TransformMatrix and external, big-endian data.
BOOST_AUTO_TEST_CASE(metaimage_orientation_and_byte_order) {
    std::string hdr = tempPath("img.mhd"), raw = tempPath("img.raw");
    {
        std::ofstream f(hdr);
        f << "ObjectType = Image\nNDims = 3\nBinaryDataByteOrderMSB = True\nTransformMatrix = 1 0 0 0 -1 0 0 0 1\n"
          << "Offset = 1 2 3\nElementSpacing = 0.5 0.25 2\nDimSize = 2 3 1\nElementType = MET_USHORT\n"
          << "ElementDataFile = " << std::filesystem::path(raw).filename().string() << "\n";
        std::ofstream d(raw, std::ios::binary);
        for (int v = 0; v < 6; ++v) {
            const char be[2] = {0, char(v + 1)};
            d.write(be, 2);
        }
    }
    LabelImage im = readLabelImage(hdr);
    std::filesystem::remove(hdr);
    std::filesystem::remove(raw);
    BOOST_CHECK((im.origin == Point3{1, 2 - 0.5, 3}));
    // Stored (i, j) at y = 2 - 0.25 j: stored j = 2 becomes output j = 0.
    BOOST_CHECK_EQUAL(im.at(0, 0, 0), 5);
    BOOST_CHECK_EQUAL(im.at(1, 2, 0), 2);
    BOOST_CHECK_THROW(readLabelImage(tempPath("missing.mha")), Error);
}

#ifdef FM_TEST_ZLIB
// Compressed MetaImage data (zlib), as ITK writes with compression on.
BOOST_AUTO_TEST_CASE(metaimage_compressed) {
    const uint8_t labels[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    uLongf packedSize = compressBound(sizeof labels);
    std::vector<Bytef> packed(packedSize);
    BOOST_REQUIRE_EQUAL(compress2(packed.data(), &packedSize, labels, sizeof labels, 9), Z_OK);
    std::string path = tempPath("z.mha");
    {
        std::ofstream f(path, std::ios::binary);
        f << "NDims = 3\nDimSize = 2 2 2\nElementType = MET_UCHAR\nCompressedData = True\n"
          << "CompressedDataSize = " << packedSize << "\nElementDataFile = LOCAL\n";
        f.write(reinterpret_cast<const char*>(packed.data()), std::streamsize(packedSize));
    }
    LabelImage im = readLabelImage(path);
    BOOST_CHECK_EQUAL(im.at(1, 1, 1), 7);
    BOOST_CHECK_EQUAL(im.at(1, 0, 1), 5);
    {
        std::ofstream f(path, std::ios::binary);
        f << "NDims = 3\nDimSize = 2 2 2\nElementType = MET_UCHAR\nCompressedData = True\nElementDataFile = LOCAL\n";
        f.write(reinterpret_cast<const char*>(packed.data()), std::streamsize(packedSize / 2));  // truncated
    }
    BOOST_CHECK_EXCEPTION(readLabelImage(path), FormatError, [](const FormatError& e) {
        return std::string(e.what()).find("corrupt or short") != std::string::npos;
    });
    std::filesystem::remove(path);
}
#endif

BOOST_AUTO_TEST_CASE(metaimage_round_trip_and_bad_files) {
    LabelImage im = nestedSpheres(1.0);
    im.origin = {-3.5, 2.25, 7};
    std::string path = tempPath("round.mha");
    writeMetaImage(path, im);
    LabelImage back = readLabelImage(path);
    BOOST_CHECK(back.labels == im.labels);
    BOOST_CHECK((back.origin == im.origin));
    {
        std::ofstream f(path);
        f << "NDims = 3\nDimSize = 2 2 2\nElementType = MET_FLOAT\nElementDataFile = LOCAL\n";
        float v[8] = {0, 1, 2, 1.5f, 0, 0, 0, 0};
        f.write(reinterpret_cast<const char*>(v), sizeof v);
    }
    BOOST_CHECK_EXCEPTION(readLabelImage(path), FormatError, [](const FormatError& e) {
        return std::string(e.what()).find("voxel 3 has value 1.5") != std::string::npos;
    });
    {
        std::ofstream f(path);
        f << "NDims = 2\nDimSize = 2 2\nElementType = MET_UCHAR\nElementDataFile = LOCAL\n";
    }
    BOOST_CHECK_THROW(readLabelImage(path), FormatError);
    std::filesystem::remove(path);
    BOOST_CHECK_THROW(readLabelImage(tempPath("x.png")), ParameterError);
}

BOOST_AUTO_TEST_CASE(label_maps) {
    LabelMap m = parseLabelMap("1=2, 3=0");
    BOOST_CHECK_EQUAL(m.at(1), 2);
    BOOST_CHECK_EQUAL(m.at(3), 0);
    BOOST_CHECK_THROW(parseLabelMap("1=x"), ParameterError);
    BOOST_CHECK_THROW(parseLabelMap("1=2,1=3"), ParameterError);
    BOOST_CHECK_THROW(parseLabelMap(""), ParameterError);
    LabelImage im = nestedSpheres(1.0);
    applyLabelMap(im, parseLabelMap("2=1"));
    BOOST_CHECK_EQUAL(im.labelCounts().count(2), 0u);
}

// ---- Surfaces: a polyhedral complex ----

namespace {

// A box as 12 outward triangles; each face is split along the diagonal through its
// lexicographically smallest corner, so two boxes sharing a face share its two triangles.
TriangleSurface boxTriangles(const Point3& lo, const Point3& hi) {
    TriangleSurface t;
    for (int c = 0; c < 8; ++c) t.points.push_back({(c & 1 ? hi : lo)[0], (c & 2 ? hi : lo)[1], (c & 4 ? hi : lo)[2]});
    const uint32_t faces[6][4] = {{0, 4, 6, 2}, {1, 3, 7, 5}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 2, 3, 1}, {4, 5, 7, 6}};
    for (const auto& q : faces) {
        int m = int(std::min_element(q, q + 4) - q);
        t.triangles.push_back({q[m], q[(m + 1) % 4], q[(m + 2) % 4]});
        t.triangles.push_back({q[m], q[(m + 2) % 4], q[(m + 3) % 4]});
    }
    return t;
}

void writeBoxObj(const std::string& path, const Point3& lo, const Point3& hi) {
    TriangleSurface t = boxTriangles(lo, hi);
    std::ofstream f(path);
    for (const Point3& p : t.points) f << "v " << p[0] << " " << p[1] << " " << p[2] << "\n";
    for (const auto& tri : t.triangles) f << "f " << tri[0] + 1 << " " << tri[1] + 1 << " " << tri[2] + 1 << "\n";
}

// Region volume and the area of the faces between regions a and b (their centroids at x = 2).
double interfaceArea(const TetraMesh& m, uint32_t a, uint32_t b) {
    double area = 0;
    for (uint32_t f = 1; f <= m.faceCount(); ++f) {
        const MeshFace& F = m.face(f);
        if (!F.other) continue;
        uint32_t x = m.region(F.owner), y = m.region(F.other);
        if (std::min(x, y) == std::min(a, b) && std::max(x, y) == std::max(a, b)) {
            BOOST_REQUIRE_SMALL(faceCentroid(m, f)[0] - 2, 1e-6);
            area += F.area;
        }
    }
    return area;
}

}  // namespace

// Two boxes touching along x = 2 (labels 1, 2) inside a larger box (label 3): volumes exact,
// one conforming interface of area 4 at x = 2, and the only boundary is the outer box.
BOOST_AUTO_TEST_CASE(surfaces_touching_and_nested) {
    std::vector<RegionSurface> s = {{tempPath("a.obj"), 1, {}}, {tempPath("b.obj"), 2, {}}, {tempPath("c.obj"), 3, {}}};
    writeBoxObj(s[0].file, {0, 0, 0}, {2, 2, 2});
    writeBoxObj(s[1].file, {2, 0, 0}, {4, 2, 2});
    writeBoxObj(s[2].file, {-1, -1, -1}, {5, 3, 3});
    MeshingOptions o;
    o.facetSize = 0.5;
    o.cellSize = 0.6;
    o.facetDistance = 0.1;
    o.seed = 2;
    TetraMesh m = meshSurfaces(s, o);
    for (const auto& x : s) std::filesystem::remove(x.file);
    BOOST_CHECK_EQUAL(m.regionCount(), 4u);
    BOOST_CHECK_CLOSE(m.regionVolume(1), 8, 0.5);
    BOOST_CHECK_CLOSE(m.regionVolume(2), 8, 0.5);
    BOOST_CHECK_CLOSE(m.regionVolume(3), 96 - 16, 0.5);
    BOOST_CHECK_CLOSE(interfaceArea(m, 1, 2), 4, 0.01);
    for (uint32_t f : m.boundaryFaces()) BOOST_REQUIRE_EQUAL(m.region(m.face(f).owner), 3u);
}

// The same two touching boxes as one labelled surface: each triangle names the labels on its
// two sides; the shared face once, between 1 and 2.
BOOST_AUTO_TEST_CASE(labelled_surface) {
    TriangleSurface a = boxTriangles({0, 0, 0}, {2, 2, 2}), b = boxTriangles({2, 0, 0}, {4, 2, 2});
    TriangleSurface all = a;
    for (const auto& t : a.triangles) {
        bool shared = true;
        for (uint32_t v : t) shared = shared && a.points[v][0] == 2;
        all.sides.push_back({1, shared ? 2 : 0});
    }
    for (size_t i = 0; i < b.triangles.size(); ++i) {
        bool shared = true;
        for (uint32_t v : b.triangles[i]) shared = shared && b.points[v][0] == 2;
        if (shared) continue;  // given once, by box a
        all.triangles.push_back({b.triangles[i][0] + 8, b.triangles[i][1] + 8, b.triangles[i][2] + 8});
        all.sides.push_back({2, 0});
    }
    all.points.insert(all.points.end(), b.points.begin(), b.points.end());
    MeshingOptions o;
    o.facetSize = 0.5;
    o.cellSize = 0.6;
    o.seed = 2;
    TetraMesh m = meshSurfaces({{"labelled", 0, all}}, o);
    BOOST_CHECK_EQUAL(m.regionCount(), 3u);
    BOOST_CHECK_CLOSE(m.regionVolume(1), 8, 0.5);
    BOOST_CHECK_CLOSE(m.regionVolume(2), 8, 0.5);
    BOOST_CHECK_CLOSE(interfaceArea(m, 1, 2), 4, 0.01);
    TriangleSurface bad = all;
    bad.sides.pop_back();
    BOOST_CHECK_THROW(meshSurfaces({{"labelled", 0, bad}}, o), FormatError);
    bad = all;
    bad.sides[0] = {1, 1};
    BOOST_CHECK_THROW(meshSurfaces({{"labelled", 0, bad}}, o), FormatError);
    BOOST_CHECK_THROW(meshSurfaces({{"labelled", 0, all}, {"labelled", 0, all}}, o), ParameterError);
}

BOOST_AUTO_TEST_CASE(surfaces_bad_input) {
    std::string open = tempPath("open.obj");
    {
        std::ofstream f(open);
        f << "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\n";  // one face missing
    }
    BOOST_CHECK_EXCEPTION(meshSurfaces({{open, 1, {}}}, MeshingOptions()), FormatError, [](const FormatError& e) {
        return std::string(e.what()).find("not closed") != std::string::npos;
    });
    std::filesystem::remove(open);
    BOOST_CHECK_THROW(meshSurfaces({{tempPath("none.stl"), 1, {}}}, MeshingOptions()), Error);
    // Label 0 alone means a labelled surface: without per-triangle labels it is refused.
    BOOST_CHECK_EXCEPTION(meshSurfaces({{open, 0, {}}}, MeshingOptions()), FormatError, [](const FormatError& e) {
        return std::string(e.what()).find("no per-triangle labels") != std::string::npos;
    });
    BOOST_CHECK_THROW(meshSurfaces({{open, 0, {}}, {open, 1, {}}}, MeshingOptions()), ParameterError);
}

// ---- Surfaces that meet other than along shared triangles are refused before refinement ----

namespace {

// The message meshSurfaces throws as FormatError for `s` (empty when it throws none or another type).
std::string formatErrorOf(const std::vector<RegionSurface>& s, const MeshingOptions& o = MeshingOptions()) {
    try {
        meshSurfaces(s, o);
    } catch (const FormatError& e) {
        return e.what();
    } catch (...) {
    }
    return "";
}

// The ParameterError's message from f (empty when it throws none).
template <class F>
std::string parameterErrorOf(F f) {
    try {
        f();
    } catch (const ParameterError& e) {
        return e.what();
    }
    return "";
}

// Boxes `lo`-`hi` (pairs) written as one OBJ file.
void writeBoxesObj(const std::string& path, const std::vector<std::pair<Point3, Point3>>& boxes) {
    std::ofstream f(path);
    uint32_t base = 0;
    for (const auto& [lo, hi] : boxes) {
        TriangleSurface t = boxTriangles(lo, hi);
        for (const Point3& p : t.points) f << "v " << p[0] << " " << p[1] << " " << p[2] << "\n";
        for (const auto& tri : t.triangles) f << "f " << base + tri[0] + 1 << " " << base + tri[1] + 1 << " " << base + tri[2] + 1 << "\n";
        base += uint32_t(t.points.size());
    }
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

// Two closed boxes of 2 mm, a = [0,2]^3 and b placed to cross it in the ways separately segmented
// organs do: each is refused naming both files and the contact's neighbourhood.
BOOST_AUTO_TEST_CASE(crossing_surfaces_refused) {
    const std::string a = tempPath("x_a.obj"), b = tempPath("x_b.obj");
    writeBoxObj(a, {0, 0, 0}, {2, 2, 2});
    struct Case {
        const char* name;
        Point3 lo, hi;
    };
    const Case cases[] = {
        {"overlap", {1, 1, 1}, {3, 3, 3}},
        {"corner overlap", {1.8, 1.8, 1.8}, {3.8, 3.8, 3.8}},
        {"slight overlap", {1.98, 0, 0}, {3.98, 2, 2}},
        {"coplanar touch, other triangles", {2, 1, 0}, {4, 3, 2}},
        {"edge touch from outside", {2, 2, 0.5}, {3, 3, 1.5}},
        {"inside, one face flush", {0, 0.5, 0.5}, {1, 1.5, 1.5}},
    };
    for (const Case& c : cases) {
        writeBoxObj(b, c.lo, c.hi);
        std::string msg = formatErrorOf({{a, 1, {}}, {b, 2, {}}});
        BOOST_TEST_INFO(c.name << ": " << msg);
        BOOST_CHECK(has(msg, a + " and " + b + " intersect near (") || has(msg, b + " and " + a + " intersect near ("));
        BOOST_CHECK(has(msg, "organ surfaces must not cross"));
    }
    writeBoxObj(b, {2.5, 0.5, 0.5}, {3.5, 1.5, 1.5});  // apart: meshed
    MeshingOptions o;
    o.facetSize = o.cellSize = 0.5;
    o.perturb = o.exude = false;
    TetraMesh m = meshSurfaces({{a, 1, {}}, {b, 2, {}}}, o);
    BOOST_CHECK_CLOSE(m.regionVolume(1), 8, 0.5);
    BOOST_CHECK_CLOSE(m.regionVolume(2), 1, 0.5);
    std::filesystem::remove(a);
    std::filesystem::remove(b);
}

// One file holding two overlapping boxes: closed, 2-manifold, and intersecting itself.
BOOST_AUTO_TEST_CASE(self_intersecting_surface_refused) {
    const std::string f = tempPath("selfx.obj");
    writeBoxesObj(f, {{{0, 0, 0}, {2, 2, 2}}, {{1, 1, 1}, {3, 3, 3}}});
    std::string msg = formatErrorOf({{f, 1, {}}});
    BOOST_TEST_INFO(msg);
    BOOST_CHECK(has(msg, f + " intersects itself near ("));
    // Apart, the same two boxes in one file are one region of two pieces.
    writeBoxesObj(f, {{{0, 0, 0}, {2, 2, 2}}, {{3, 0, 0}, {5, 2, 2}}});
    MeshingOptions o;
    o.facetSize = o.cellSize = 0.5;
    o.perturb = o.exude = false;
    BOOST_CHECK_CLOSE(meshSurfaces({{f, 1, {}}}, o).regionVolume(1), 16, 0.5);
    std::filesystem::remove(f);
}

// A surface inside another that touches it along triangles both have is accepted: the box
// [0,2]^3 (label 1) whose x = 0 face is the base of a frustum widening to [-1,3]^2 at x = 4
// (label 2, volume 4/3 (4 + 16 + 8)); only the shared face's edges and corners meet the frustum's sides.
BOOST_AUTO_TEST_CASE(nested_surface_sharing_triangles_with_its_container_meshes) {
    const std::string a = tempPath("in_a.obj"), c = tempPath("in_c.obj");
    writeBoxObj(a, {0, 0, 0}, {2, 2, 2});
    {
        std::ofstream f(c);
        f << "v 0 0 0\nv 0 2 0\nv 0 2 2\nv 0 0 2\nv 4 -1 -1\nv 4 3 -1\nv 4 3 3\nv 4 -1 3\n";
        f << "f 1 4 3\nf 1 3 2\nf 5 6 7\nf 5 7 8\n";  // the base (the box's x = 0 triangles), the top
        for (int i = 0; i < 4; ++i) {
            int b0 = 1 + i, b1 = 1 + (i + 1) % 4, t0 = 5 + i, t1 = 5 + (i + 1) % 4;
            f << "f " << b0 << " " << b1 << " " << t1 << "\nf " << b0 << " " << t1 << " " << t0 << "\n";
        }
    }
    MeshingOptions o;
    o.facetSize = o.cellSize = 0.5;
    o.seed = 3;
    TetraMesh m = meshSurfaces({{a, 1, {}}, {c, 2, {}}}, o);
    std::filesystem::remove(a);
    std::filesystem::remove(c);
    BOOST_CHECK_CLOSE(m.regionVolume(1), 8, 0.5);
    BOOST_CHECK_CLOSE(m.regionVolume(2), 4.0 / 3 * 28 - 8, 0.5);
}

// A labelled surface whose two boxes overlap: the interfaces cross.
BOOST_AUTO_TEST_CASE(labelled_surface_crossing_refused) {
    TriangleSurface a = boxTriangles({0, 0, 0}, {2, 2, 2}), b = boxTriangles({1, 1, 1}, {3, 3, 3});
    TriangleSurface all = a;
    all.sides.assign(a.triangles.size(), {1, 0});
    for (const auto& t : b.triangles) {
        all.triangles.push_back({t[0] + 8, t[1] + 8, t[2] + 8});
        all.sides.push_back({2, 0});
    }
    all.points.insert(all.points.end(), b.points.begin(), b.points.end());
    std::string msg = formatErrorOf({{"labelled.vtp", 0, all}});
    BOOST_TEST_INFO(msg);
    BOOST_CHECK(has(msg, "labelled.vtp: the interface between labels 1 and 0 and the interface between labels 2 and 0 "
                         "intersect near (") ||
                has(msg, "labelled.vtp: the interface between labels 2 and 0 and the interface between labels 1 and 0 "
                         "intersect near ("));
}

// Sizes whose mesh could not fit: a facet size of 1e-9 mm on a 2 mm box (~1e19 triangles), and
// on an image; a cell size of 1e-5 mm. Refused with the numbers and the size's name.
BOOST_AUTO_TEST_CASE(absurd_sizes_refused) {
    const std::string a = tempPath("tiny_a.obj");
    writeBoxObj(a, {0, 0, 0}, {2, 2, 2});
    MeshingOptions o;
    o.facetSize = 1e-9;
    std::string msg = parameterErrorOf([&] { meshSurfaces({{a, 1, {}}}, o); });
    BOOST_TEST_INFO(msg);
    BOOST_CHECK(has(msg, "facet size 1e-09 mm over 24 mm^2") && has(msg, "of memory"));
    o = MeshingOptions();
    o.cellSize = 1e-5;
    msg = parameterErrorOf([&] { meshSurfaces({{a, 1, {}}}, o); });
    BOOST_TEST_INFO(msg);
    BOOST_CHECK(has(msg, "cell size 1e-05 mm over 8 mm^3") && has(msg, "of memory"));
    std::filesystem::remove(a);

    LabelImage im = nestedSpheres(1.0);
    o = MeshingOptions();
    o.facetSize = 1e-9;
    MeshingEstimate e = estimateImageMeshing(im, o);
    BOOST_CHECK_GT(e.triangles, 1e18);
    msg = parameterErrorOf([&] { meshLabelImage(im, o); });
    BOOST_TEST_INFO(msg);
    BOOST_CHECK(has(msg, "surface triangles (facet size 1e-09 mm") && has(msg, "of memory"));
    o = MeshingOptions();
    o.facetDistance = 1e-9;
    msg = parameterErrorOf([&] { meshLabelImage(im, o); });
    BOOST_TEST_INFO(msg);
    BOOST_CHECK(has(msg, "facet distance 1e-09 mm is below"));
    BOOST_CHECK(has(parameterErrorOf([&] { estimateImageMeshing(im, o); }), "facet distance 1e-09 mm"));
}

// The estimate's triangles are a lower bound on the surface faces made (image and surfaces).
BOOST_AUTO_TEST_CASE(triangle_estimate_is_a_lower_bound) {
    auto surfaceFaces = [](const TetraMesh& m) {
        size_t n = 0;
        for (uint32_t f = 1; f <= m.faceCount(); ++f) {
            const MeshFace& F = m.face(f);
            n += !F.other || m.region(F.owner) != m.region(F.other);
        }
        return double(n);
    };
    LabelImage im = nestedSpheres(0.5);
    MeshingOptions o;
    o.perturb = o.exude = false;
    o.seed = 5;
    MeshingEstimate e = estimateImageMeshing(im, o);
    TetraMesh m = meshLabelImage(im, o);
    BOOST_TEST_INFO(e.detail << "; made " << surfaceFaces(m) << " surface faces");
    BOOST_CHECK(e.triangles > 0 && e.triangles <= surfaceFaces(m));

    const std::string a = tempPath("lb_a.obj");
    writeBoxObj(a, {0, 0, 0}, {2, 2, 2});
    std::string progress;
    o.facetSize = 0.3;
    o.cellSize = 0.5;
    o.perturb = o.exude = true;  // flat tetras otherwise
    o.progress = [&](const std::string& s) { if (s.rfind("surfaces: ", 0) == 0) progress = s; };
    m = meshSurfaces({{a, 1, {}}}, o);
    std::filesystem::remove(a);
    BOOST_TEST_INFO(progress << "; made " << m.tetraCount() << " tetras, " << surfaceFaces(m) << " surface faces");
    double tetras = 0, triangles = 0;
    BOOST_REQUIRE_EQUAL(std::sscanf(progress.c_str(), "surfaces: at least %lg tetras", &tetras), 1);
    BOOST_REQUIRE(has(progress, ") and "));
    triangles = std::strtod(progress.c_str() + progress.find(") and ") + 6, nullptr);
    BOOST_CHECK(tetras > 0 && tetras <= double(m.tetraCount()));
    BOOST_CHECK(triangles > 0 && triangles <= surfaceFaces(m));
}

// A per-label size for a label the input does not have is refused, naming the labels present.
BOOST_AUTO_TEST_CASE(size_of_absent_label_refused) {
    LabelImage im = nestedSpheres(1.0);
    MeshingOptions o;
    o.cellSizeByLabel[7] = 1;
    std::string msg = parameterErrorOf([&] { meshLabelImage(im, o); });
    BOOST_CHECK_EQUAL(msg, "cell size of label 7: the image has no label 7 (labels present: 1, 2)");
    BOOST_CHECK_EQUAL(parameterErrorOf([&] { estimateImageMeshing(im, o); }), msg);
    o = MeshingOptions();
    o.facetSizeByLabel[3] = 1;
    const std::string a = tempPath("lbl_a.obj");
    writeBoxObj(a, {0, 0, 0}, {2, 2, 2});
    msg = parameterErrorOf([&] { meshSurfaces({{a, 1, {}}}, o); });
    std::filesystem::remove(a);
    BOOST_CHECK_EQUAL(msg, "facet size of label 3: the surfaces have no label 3 (labels present: 1)");
}

BOOST_AUTO_TEST_SUITE_END()
