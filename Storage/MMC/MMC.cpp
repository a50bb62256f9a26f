// SPDX-License-Identifier: GPL-3.0-or-later
#include "Storage/MMC/MMC.hpp"

#include <cmath>
#include <cstdlib>

#include "Storage/AtomicFile.hpp"
#include "Storage/NonDeflectingMedium.hpp"
#include "Storage/TextReader.hpp"

namespace fm {

namespace {
constexpr uint64_t kMax = 2000000000ull;

uint64_t header(TextReader& r, const std::string& what) {
    r.count("header field (1)", kMax);
    return r.count("number of " + what, kMax);
}

void rowIndex(TextReader& r, uint64_t expect, const std::string& what) {
    uint64_t i = r.count("index of " + what + " " + std::to_string(expect), kMax);
    if (i != expect) r.fail(what + " rows must be numbered 1..N in order: expected " +
                            std::to_string(expect) + ", found " + std::to_string(i));
}

TetraMesh readMesh(TextReader& rn, TextReader& re, const MeshCheckOptions& check, std::vector<uint32_t>* tetraOf) {
    uint64_t np = header(rn, "nodes");
    if (np < 4) rn.fail("a mesh needs at least 4 nodes, found " + std::to_string(np));
    std::vector<Point3> pts(1, Point3{0, 0, 0});
    for (uint64_t i = 1; i <= np; ++i) {
        rowIndex(rn, i, "node");
        Point3 p;
        for (int k = 0; k < 3; ++k)
            p[k] = rn.bounded(std::string(1, "xyz"[k]) + " of node " + std::to_string(i), kMaxCoordinate);
        pts.push_back(p);
    }
    rn.expectEnd();
    uint64_t ne = header(re, "elements");
    if (ne < 1) re.fail("no elements");
    std::vector<TetraPoints> tets(1, TetraPoints{0, 0, 0, 0});
    std::vector<uint32_t> regions(1, 0);
    if (tetraOf) tetraOf->assign(1, 0);
    for (uint64_t t = 1; t <= ne; ++t) {
        rowIndex(re, t, "element");
        TetraPoints T;
        for (int k = 0; k < 4; ++k) {
            uint64_t v = re.count("node " + std::to_string(k + 1) + " of element " + std::to_string(t), kMax);
            if (v < 1 || v > np) re.fail("element " + std::to_string(t) + " refers to node " + std::to_string(v) +
                                         ", valid nodes are 1.." + std::to_string(np));
            T[k] = uint32_t(v);
        }
        std::string tok = re.need("region of element " + std::to_string(t));
        char* end = nullptr;
        long long reg = std::strtoll(tok.c_str(), &end, 10);
        if (end == tok.c_str() || *end || reg > (1 << 20))
            re.fail("expected region of element " + std::to_string(t) + " (an integer label), found '" + tok + "'");
        std::string problem = mmcLabelProblem(reg);
        if (!problem.empty()) re.fail("element " + std::to_string(t) + ": " + problem);
        if (tetraOf) tetraOf->push_back(mmcBackgroundLabel(reg) ? 0 : uint32_t(tets.size()));
        if (mmcBackgroundLabel(reg)) continue;
        tets.push_back(T);
        regions.push_back(uint32_t(reg));
    }
    re.expectEnd();
    if (tets.size() == 1) re.fail("every element is MMC's background (labels 0 and -1): there is no tissue");
    try {
        return TetraMesh(std::move(pts), std::move(tets), std::move(regions), check);
    } catch (const ModelError& e) {
        throw ModelError(re.path() + ": " + e.what());
    }
}

MaterialSet readMaterials(TextReader& r, double exteriorN) {
    uint64_t n = header(r, "materials");
    if (n < 1) r.fail("no materials");
    MaterialSet ms;
    ms.exterior(Material(0, 0, 0, exteriorN));
    for (uint64_t i = 1; i <= n; ++i) {
        rowIndex(r, i, "material");
        std::string m = "material " + std::to_string(i);
        double mu_a = r.number("mu_a of " + m), mu_s = r.number("mu_s of " + m);
        double g = r.number("g of " + m), n = r.number("n of " + m);
        std::string problem;
        Material mat = mmcMedium(mu_a, mu_s, g, n, problem);
        if (!problem.empty()) r.fail(m + ": " + problem);
        ms.append(mat);
    }
    r.expectEnd();
    return ms;
}

}  // namespace

bool mmcBackgroundLabel(long long label) { return label == 0 || label == -1; }

std::string mmcLabelProblem(long long label) {
    if (label >= 1 || mmcBackgroundLabel(label)) return "";
    if (label == -2) return "label -2 marks MMC's external detector elements, which FullMonte does not have";
    return "label " + std::to_string(label) + " is not a medium (labels are 1..number of media)";
}

Material mmcMedium(double mu_a, double mu_s, double g, double n, std::string& problem) {
    problem.clear();
    if (!(mu_a >= 0 && mu_s >= 0 && mu_a <= kMaxCoefficient && mu_s <= kMaxCoefficient))
        problem = "mu_a and mu_s must be >= 0 and <= 1e15 /mm";
    else if (!(std::fabs(g) < 1 || g == 1))
        problem = "anisotropy g must satisfy |g| < 1 (or be 1, MMC's non-scattering medium), found " +
                  std::to_string(g);
    if (problem.empty() && !(n > 0 && n <= kMaxCoefficient)) problem = "refractive index must be > 0 (and <= 1e15)";
    return nonDeflectingAsClear(Material(mu_a, mu_s, g, n));
}

TetraMesh readMMCMesh(const std::string& nodePath, const std::string& elemPath, const MeshCheckOptions& check,
                      std::vector<uint32_t>* tetraOfElement) {
    TextReader rn(nodePath), re(elemPath);
    return readMesh(rn, re, check, tetraOfElement);
}
TetraMesh readMMCMesh(std::istream& node, const std::string& nodeName, std::istream& elem,
                      const std::string& elemName, const MeshCheckOptions& check) {
    TextReader rn(node, nodeName), re(elem, elemName);
    return readMesh(rn, re, check, nullptr);
}
MaterialSet readMMCMaterials(const std::string& propPath, double exteriorN) {
    TextReader r(propPath);
    return readMaterials(r, exteriorN);
}
MaterialSet readMMCMaterials(std::istream& prop, const std::string& propName, double exteriorN) {
    TextReader r(prop, propName);
    return readMaterials(r, exteriorN);
}

void writeMMCMesh(const std::string& dir, const std::string& id, const TetraMesh& mesh) {
    AtomicFile node(dir + "/node_" + id + ".dat"), elem(dir + "/elem_" + id + ".dat"),
        velem(dir + "/velem_" + id + ".dat");
    node.out.precision(17);
    velem.out.precision(17);
    node.out << "1 " << mesh.pointCount() << "\n";
    for (size_t i = 1; i <= mesh.pointCount(); ++i)
        node.out << i << " " << mesh.point(i)[0] << " " << mesh.point(i)[1] << " " << mesh.point(i)[2] << "\n";
    // MMC's orientation is the opposite of FullMonte's (its positive volume is FullMonte's
    // negative one): the last two points swapped. With the volumes given, MMC does not test the
    // orientation itself in single precision, which gets the smallest tetras of a fine mesh
    // wrong (docs/PERFORMANCE.md, MMC on 2-5M tetras).
    elem.out << "1 " << mesh.tetraCount() << "\n";
    velem.out << "1 " << mesh.tetraCount() << "\n";
    for (size_t t = 1; t <= mesh.tetraCount(); ++t) {
        const TetraPoints& T = mesh.tetra(t);
        elem.out << t << " " << T[0] << " " << T[1] << " " << T[3] << " " << T[2] << " " << mesh.region(t) << "\n";
        velem.out << t << " " << mesh.volume(uint32_t(t)) << "\n";
    }
    node.commit();
    elem.commit();
    velem.commit();
}

void writeMMCMaterials(const std::string& dir, const std::string& id, const MaterialSet& mats) {
    AtomicFile f(dir + "/prop_" + id + ".dat");
    f.out.precision(17);
    f.out << "1 " << mats.size() - 1 << "\n";
    for (size_t i = 1; i < mats.size(); ++i) {
        const Material& m = mats.material(i);
        const bool still = m.mu_s == 0;  // MMC's non-scattering medium
        f.out << i << " " << m.mu_a << " " << m.mu_s << " " << (still ? 1.0 : m.g) << " " << m.n << "\n";
    }
    f.commit();
}

}  // namespace fm
