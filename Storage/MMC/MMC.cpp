#include "Storage/MMC/MMC.hpp"

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

TetraMesh readMesh(TextReader& rn, TextReader& re, const MeshCheckOptions& check) {
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
    for (uint64_t t = 1; t <= ne; ++t) {
        rowIndex(re, t, "element");
        TetraPoints T;
        for (int k = 0; k < 4; ++k) {
            uint64_t v = re.count("node " + std::to_string(k + 1) + " of element " + std::to_string(t), kMax);
            if (v < 1 || v > np) re.fail("element " + std::to_string(t) + " refers to node " + std::to_string(v) +
                                         ", valid nodes are 1.." + std::to_string(np));
            T[k] = uint32_t(v);
        }
        uint64_t reg = re.count("region of element " + std::to_string(t), 1u << 20);
        if (reg == 0) re.fail("element " + std::to_string(t) + " has region 0 (reserved for the exterior)");
        tets.push_back(T);
        regions.push_back(uint32_t(reg));
    }
    re.expectEnd();
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
        Material mat;
        mat.mu_a = r.number("mu_a of " + m);
        mat.mu_s = r.number("mu_s of " + m);
        mat.g = r.number("g of " + m);
        mat.n = r.number("n of " + m);
        if (!(mat.mu_a >= 0 && mat.mu_s >= 0 && mat.mu_a <= kMaxCoefficient && mat.mu_s <= kMaxCoefficient))
            r.fail(m + ": mu_a and mu_s must be >= 0 and <= 1e15 /mm");
        if (!(std::fabs(mat.g) < 1)) r.fail(m + ": anisotropy g must satisfy |g| < 1, found " + std::to_string(mat.g));
        if (!(mat.n > 0 && mat.n <= kMaxCoefficient)) r.fail(m + ": refractive index must be > 0 (and <= 1e15)");
        ms.append(mat);
    }
    r.expectEnd();
    return ms;
}

}  // namespace

TetraMesh readMMCMesh(const std::string& nodePath, const std::string& elemPath, const MeshCheckOptions& check) {
    TextReader rn(nodePath), re(elemPath);
    return readMesh(rn, re, check);
}
TetraMesh readMMCMesh(std::istream& node, const std::string& nodeName, std::istream& elem,
                      const std::string& elemName, const MeshCheckOptions& check) {
    TextReader rn(node, nodeName), re(elem, elemName);
    return readMesh(rn, re, check);
}
MaterialSet readMMCMaterials(const std::string& propPath, double exteriorN) {
    TextReader r(propPath);
    return readMaterials(r, exteriorN);
}
MaterialSet readMMCMaterials(std::istream& prop, const std::string& propName, double exteriorN) {
    TextReader r(prop, propName);
    return readMaterials(r, exteriorN);
}

}  // namespace fm
