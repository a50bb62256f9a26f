// SPDX-License-Identifier: GPL-3.0-or-later
#include "Storage/TIMOS/TIMOS.hpp"

#include <cmath>
#include <iterator>

#include "Storage/AtomicFile.hpp"
#include "Storage/Binary/BinaryMesh.hpp"
#include "Storage/NonDeflectingMedium.hpp"
#include "Storage/TIMOS/TIMOSMeshParser.hpp"
#include "Storage/TextReader.hpp"

namespace fm {

namespace {

constexpr uint64_t kMaxCount = 2000000000ull;  // indices must fit the kernels' 31-bit ids

TetraMesh readMesh(TextReader& r, const MeshCheckOptions& check) {
    uint64_t np = r.count("number of points", kMaxCount);
    uint64_t nt = r.count("number of tetrahedra", kMaxCount);
    if (np < 4 || nt < 1) r.fail("a mesh needs at least 4 points and 1 tetrahedron (found " +
                                 std::to_string(np) + " points, " + std::to_string(nt) + " tetrahedra)");
    std::vector<Point3> pts(1, Point3{0, 0, 0});
    // The count comes from the file and may be a lie: reserve only what a small file holds
    // (a two-line file claiming 1.6e7 points used to reserve 400 MB).
    pts.reserve(std::min<uint64_t>(np, 1u << 16) + 1);
    for (uint64_t i = 1; i <= np; ++i) {
        Point3 p;
        for (int k = 0; k < 3; ++k)
            p[k] = r.bounded("coordinate " + std::string(1, "xyz"[k]) + " of point " + std::to_string(i), kMaxCoordinate);
        pts.push_back(p);
    }
    std::vector<TetraPoints> tets(1, TetraPoints{0, 0, 0, 0});
    std::vector<uint32_t> regions(1, 0);
    for (uint64_t t = 1; t <= nt; ++t) {
        TetraPoints T;
        for (int k = 0; k < 4; ++k) {
            uint64_t v = r.count("point index " + std::to_string(k + 1) + " of tetrahedron " + std::to_string(t), kMaxCount);
            if (v < 1 || v > np) r.fail("tetrahedron " + std::to_string(t) + " refers to point " + std::to_string(v) +
                                        ", valid points are 1.." + std::to_string(np));
            T[k] = uint32_t(v);
        }
        uint64_t reg = r.count("region of tetrahedron " + std::to_string(t), 1u << 20);
        if (reg == 0) r.fail("tetrahedron " + std::to_string(t) + " has region 0 (reserved for the exterior)");
        tets.push_back(T);
        regions.push_back(uint32_t(reg));
    }
    r.expectEnd();
    return buildMesh(MeshArrays{std::move(pts), std::move(tets), std::move(regions)}, r.path(), check);
}

MaterialSet readMaterials(TextReader& r) {
    uint64_t type = r.count("region type (1 = per region)", 9);
    if (type != 1) r.fail("region type " + std::to_string(type) + " is not supported (only 1: properties per region)");
    uint64_t n = r.count("number of materials", 1u << 20);
    if (n == 0) r.fail("number of materials must be at least 1");
    MaterialSet ms;
    for (uint64_t i = 1; i <= n; ++i) {
        std::string m = "material " + std::to_string(i);
        Material mat;
        mat.mu_a = r.number("mu_a of " + m);
        mat.mu_s = r.number("mu_s of " + m);
        mat.g = r.number("g of " + m);
        mat.n = r.number("n of " + m);
        if (!(mat.mu_a >= 0 && mat.mu_a <= kMaxCoefficient))
            r.fail(m + ": mu_a must be >= 0 and <= 1e15 /mm, found " + std::to_string(mat.mu_a));
        if (!(mat.mu_s >= 0 && mat.mu_s <= kMaxCoefficient))
            r.fail(m + ": mu_s must be >= 0 and <= 1e15 /mm, found " + std::to_string(mat.mu_s));
        if (!(std::fabs(mat.g) < 1 || mat.g == 1))
            r.fail(m + ": anisotropy g must satisfy |g| < 1 (or be 1, TIM-OS's non-scattering medium), found " +
                   std::to_string(mat.g));
        if (!(mat.n > 0 && mat.n <= kMaxCoefficient))
            r.fail(m + ": refractive index must be > 0 (and <= 1e15), found " + std::to_string(mat.n));
        ms.append(nonDeflectingAsClear(mat));
    }
    uint64_t bt = r.count("boundary type (1 = exterior index follows, 2 = matched)", 9);
    if (bt == 1) {
        double ne = r.number("refractive index of the exterior");
        if (!(ne > 0 && ne <= kMaxCoefficient))
            r.fail("refractive index of the exterior must be > 0 (and <= 1e15), found " + std::to_string(ne));
        ms.exterior(Material(0, 0, 0, ne));
    } else if (bt == 2) {
        ms.matchedBoundary = true;
    } else {
        r.fail("boundary type must be 1 or 2, found " + std::to_string(bt));
    }
    r.expectEnd();
    return ms;
}

TIMOSSources readSources(TextReader& r) {
    uint64_t n = r.count("number of sources", 1u << 24);
    if (n == 0) r.fail("number of sources must be at least 1");
    auto comp = std::make_shared<CompositeSource>();
    double total = 0;
    for (uint64_t i = 1; i <= n; ++i) {
        std::string s = "source " + std::to_string(i);
        uint64_t type = r.count("type of " + s + " (1, 2, 11 or 12)", 100);
        auto point = [&](const std::string& what) {
            Point3 p;
            for (int k = 0; k < 3; ++k) p[k] = r.bounded(std::string(1, "xyz"[k]) + " of " + what + " of " + s, kMaxCoordinate);
            return p;
        };
        SourcePtr src;
        if (type == 1) {
            auto p = std::make_shared<PointSource>();
            p->position = point("position");
            src = p;
        } else if (type == 2) {
            auto v = std::make_shared<VolumeSource>();
            v->element = uint32_t(r.count("tetra of " + s, kMaxCount));
            if (v->element == 0) r.fail(s + ": tetra index 0 is not valid (indices are 1-based)");
            src = v;
        } else if (type == 11) {
            auto b = std::make_shared<PencilBeamSource>();
            b->elementHint = uint32_t(r.count("tetra of " + s, kMaxCount));
            b->position = point("position");
            b->direction = point("direction");
            src = b;
        } else if (type == 12) {
            auto f = std::make_shared<SurfaceSource>();
            std::array<uint32_t, 3> tri;
            for (int k = 0; k < 3; ++k) {
                tri[k] = uint32_t(r.count("point " + std::to_string(k + 1) + " of " + s, kMaxCount));
                if (tri[k] == 0) r.fail(s + ": point index 0 is not valid (indices are 1-based)");
            }
            f->triangles.push_back(tri);
            f->emission = SurfaceSource::Normal;
            src = f;
        } else {
            r.fail(s + ": unknown source type " + std::to_string(type) + " (expected 1, 2, 11 or 12)");
        }
        src->power = r.number("weight of " + s);
        if (!(src->power >= 0)) r.fail(s + ": weight must be >= 0, found " + std::to_string(src->power));
        total += src->power;
        comp->elements.push_back(src);
    }
    r.expectEnd();
    if (!(total > 0)) r.fail("all source weights are zero");
    bool counts = total >= kMinFilePacketCount && total <= 1e15;
    for (const SourcePtr& e : comp->elements) counts = counts && e->power == std::floor(e->power);
    const double packets = counts ? total : 0;
    if (n == 1) return {comp->elements[0], total, packets};
    return {comp, total, packets};
}

}  // namespace

// The fast parser first; text it does not accept goes through the token reader, which says
// what is wrong where. A FullMonte binary mesh (.fmb) is recognised by its first bytes.
static TetraMesh readTIMOSMeshText(std::string text, const std::string& name, const MeshCheckOptions& check) {
    if (isBinaryMesh(text)) return buildMesh(parseBinaryMesh(text, name), name, check);
    if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);  // a UTF-8 byte-order mark
    // A mesh of another format (what fullmonte-mesh writes by default is VTK) named as such.
    const size_t first = text.find_first_not_of(" \t\r\n");
    if (first != std::string::npos &&
        (text.compare(first, 5, "<?xml") == 0 || text.compare(first, 8, "<VTKFile") == 0 ||
         text.compare(first, 14, "# vtk DataFile") == 0))
        throw FormatError(name + ": a VTK file, not a TIM-OS mesh: convert it with fullmonte-mesh --convert " + name +
                          " -o MESH.fmb (a VTK build), or read it with Tcl's VTKMeshReader");
    MeshArrays a;
    if (parseTIMOSMeshFast(text.data(), text.data() + text.size(), a)) return buildMesh(std::move(a), name, check);
    std::istringstream in(std::move(text));
    TextReader r(in, name);
    return readMesh(r, check);
}

TetraMesh readTIMOSMesh(const std::string& path, const MeshCheckOptions& check) {
    return readTIMOSMeshText(readWholeFile(path), path, check);
}
TetraMesh readTIMOSMesh(std::istream& in, const std::string& name, const MeshCheckOptions& check) {
    return readTIMOSMeshText(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()),
                             name, check);
}
MaterialSet readTIMOSMaterials(const std::string& path) {
    TextReader r(path);
    return readMaterials(r);
}
MaterialSet readTIMOSMaterials(std::istream& in, const std::string& name) {
    TextReader r(in, name);
    return readMaterials(r);
}
TIMOSSources readTIMOSSource(const std::string& path) {
    TextReader r(path);
    return readSources(r);
}
TIMOSSources readTIMOSSource(std::istream& in, const std::string& name) {
    TextReader r(in, name);
    return readSources(r);
}

void writeTIMOSMesh(const std::string& path, const TetraMesh& mesh) {
    AtomicFile f(path);
    f.out.precision(17);
    f.out << mesh.pointCount() << "\n" << mesh.tetraCount() << "\n";
    for (size_t i = 1; i <= mesh.pointCount(); ++i)
        f.out << mesh.point(i)[0] << " " << mesh.point(i)[1] << " " << mesh.point(i)[2] << "\n";
    for (size_t t = 1; t <= mesh.tetraCount(); ++t) {
        const auto& T = mesh.tetra(t);
        f.out << T[0] << " " << T[1] << " " << T[2] << " " << T[3] << " " << mesh.region(t) << "\n";
    }
    f.commit();
}

void writeTIMOSMaterials(const std::string& path, const MaterialSet& mats) {
    AtomicFile f(path);
    f.out.precision(17);
    f.out << "1\n" << mats.size() - 1 << "\n";
    for (size_t i = 1; i < mats.size(); ++i) {
        const Material& m = mats.material(i);
        f.out << m.mu_a << " " << m.mu_s << " " << m.g << " " << m.n << "\n";
    }
    if (mats.matchedBoundary) f.out << "2\n";
    else f.out << "1\n" << mats.exterior().n << "\n";
    f.commit();
}

namespace {
void collectRows(const Source& s, const TetraMesh& mesh, double scale, std::vector<std::string>& rows) {
    std::ostringstream o;
    o.precision(17);
    double w = s.power * scale;
    auto xyz = [&](const Point3& p) { o << p[0] << " " << p[1] << " " << p[2]; };
    if (auto c = dynamic_cast<const CompositeSource*>(&s)) {
        for (auto& e : c->elements) collectRows(*e, mesh, scale, rows);
        return;
    } else if (auto p = dynamic_cast<const PointSource*>(&s)) {
        o << "1 "; xyz(p->position);
    } else if (auto v = dynamic_cast<const VolumeSource*>(&s)) {
        if (!v->element) throw Error("TIM-OS source files cannot hold a whole-region Volume source");
        o << "2 " << v->element;
    } else if (auto b = dynamic_cast<const PencilBeamSource*>(&s)) {
        uint32_t t = b->elementHint ? b->elementHint : mesh.locate(b->position);
        o << "11 " << t << " "; xyz(b->position); o << " "; xyz(b->direction);
    } else if (auto f = dynamic_cast<const SurfaceSource*>(&s)) {
        std::vector<std::array<uint32_t, 3>> tris = f->triangles;
        for (uint32_t id : f->faces) tris.push_back(mesh.face(id).points);
        if (tris.empty()) throw Error("TIM-OS source files cannot hold a whole-region Surface source");
        for (size_t i = 0; i < tris.size(); ++i) {
            std::ostringstream r;
            r.precision(17);
            r << "12 " << tris[i][0] << " " << tris[i][1] << " " << tris[i][2] << " " << w / tris.size();
            rows.push_back(r.str());
        }
        return;
    } else {
        throw Error("TIM-OS source files cannot hold a " + s.typeName() + " source");
    }
    o << " " << w;
    rows.push_back(o.str());
}
}  // namespace

void writeTIMOSSource(const std::string& path, const Source& src, const TetraMesh& mesh) {
    std::vector<std::string> rows;
    collectRows(src, mesh, 1.0, rows);
    AtomicFile f(path);
    f.out << rows.size() << "\n";
    for (auto& r : rows) f.out << r << "\n";
    f.commit();
}

}  // namespace fm
