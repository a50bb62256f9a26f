// SPDX-License-Identifier: GPL-3.0-or-later
// The model fingerprint a fluence matrix carries (Geometry/ModelFingerprint.hpp): the same model
// built twice gives the same parts; each change of the model changes its own part and no other;
// and the parts are the hash docs/FLUENCE_MATRIX.md defines, recomputed here from the document's
// byte list by a separate implementation (so the definition, not a stored number, is what is
// checked).
#include <boost/test/unit_test.hpp>

#include <cstring>

#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelFingerprint.hpp"

using namespace fm;

namespace {

// docs/FLUENCE_MATRIX.md, "Model fingerprint": 64-bit FNV-1a over little-endian bytes, folded to
// 48 bits as (h xor h >> 48) and 2^48 - 1, a 0 made 1.
struct Reference {
    std::vector<unsigned char> bytes;
    void le(uint64_t v, int n) {
        for (int i = 0; i < n; ++i) bytes.push_back((unsigned char)(v >> (8 * i)));
    }
    void real(double v) {
        uint64_t b;
        std::memcpy(&b, &v, 8);
        le(b, 8);
    }
    void text(const std::string& s) {
        le(s.size(), 8);
        bytes.insert(bytes.end(), s.begin(), s.end());
    }
    uint64_t part() const {
        uint64_t h = 14695981039346656037ull;
        for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
        uint64_t p = (h ^ (h >> 48)) & ((uint64_t(1) << 48) - 1);
        return p ? p : 1;
    }
};

TetraMesh box(double shift = 0, unsigned split = 1) {
    return makeBoxMesh({0, 0, 0}, {2 + shift, 2, 2}, 2, 1, 1,
                       [split](const Point3& c) { return c[0] < split ? 1u : 2u; });
}

MaterialSet materials(double muA = 0.05) {
    MaterialSet m;
    m.exterior(Material(0, 0, 0, 1.0));
    m.append(Material(muA, 5, 0.9, 1.37));
    m.append(Material(0.1, 8, 0.8, 1.4));
    return m;
}

std::vector<SourcePtr> sources(double x = 0.5, double elementPower = 1) {
    auto p = std::make_shared<PointSource>();
    p->position = {x, 1, 1};
    auto c = std::make_shared<CylinderSource>();
    c->endpoint[0] = {1, 1, 0.2};
    c->endpoint[1] = {1, 1, 1.8};
    c->radius = 0.3;
    auto l = std::make_shared<LineSource>();
    l->endpoint[0] = {0.2, 0.5, 1};
    l->endpoint[1] = {1.8, 0.5, 1};
    l->power = elementPower;
    auto mix = std::make_shared<CompositeSource>();
    mix->elements = {l, std::make_shared<PointSource>()};
    return {p, c, mix};
}

ModelFingerprint of(const TetraMesh& mesh, const MaterialSet& m, const std::vector<SourcePtr>& s,
                    std::vector<uint64_t> packets = {1000, 1000, 1000}, KernelParams params = {}) {
    return modelFingerprint(mesh, {m}, s, packets, params);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(model_fingerprint)

BOOST_AUTO_TEST_CASE(same_model_built_twice_same_fingerprint) {
    const TetraMesh a = box(), b = box();
    BOOST_TEST(a.identity() != b.identity());  // two meshes: nothing is shared but the contents
    const ModelFingerprint fa = of(a, materials(), sources()), fb = of(b, materials(), sources());
    BOOST_TEST(!fa.none());
    BOOST_TEST((fa == fb));
    for (uint64_t p : {fa.mesh, fa.materials, fa.sources, fa.runs}) BOOST_TEST((p >= 1 && p <= kFingerprintPartMask));
    BOOST_TEST(fingerprintDifferences(fa, fb).empty());
    BOOST_TEST(fingerprintText(fa).find("mesh ") == 0u);
    BOOST_TEST(fingerprintText(ModelFingerprint{}) == "none");
}

BOOST_AUTO_TEST_CASE(each_change_shows_in_its_own_part) {
    const TetraMesh mesh = box();
    const ModelFingerprint base = of(mesh, materials(), sources());
    auto differ = [&](const ModelFingerprint& f) { return fingerprintDifferences(base, f); };
    using V = std::vector<std::string>;
    BOOST_TEST(differ(of(box(0.5), materials(), sources())) == V{"mesh"});   // a point moved, same tetras
    BOOST_TEST(differ(of(box(0, 2), materials(), sources())) == V{"mesh"});  // region labels
    TetraMesh cm = box();
    cm.unitDimension = "cm";
    BOOST_TEST(differ(of(cm, materials(), sources())) == V{"mesh"});
    BOOST_TEST(differ(of(mesh, materials(0.06), sources())) == V{"materials"});  // mu_a
    MaterialSet ext = materials();
    ext.exterior(Material(0, 0, 0, 1.33));
    BOOST_TEST(differ(of(mesh, ext, sources())) == V{"materials"});
    MaterialSet matched = materials();
    matched.matchedBoundary = true;  // Fresnel at the surface off
    BOOST_TEST(differ(of(mesh, matched, sources())) == V{"materials"});
    BOOST_TEST(differ(of(mesh, materials(), sources(0.6))) == V{"sources"});  // a moved source
    BOOST_TEST(differ(of(mesh, materials(), sources(0.5, 2))) == V{"sources"});  // a composite's weights
    std::vector<SourcePtr> reordered = sources();
    std::swap(reordered[0], reordered[1]);  // columns in another order
    BOOST_TEST(differ(of(mesh, materials(), reordered)) == V{"sources"});
    BOOST_TEST(differ(of(mesh, materials(), sources(), {1000, 1000, 2000})) == V{"packets or kernel settings"});
    KernelParams roulette;
    roulette.wmin = 1e-4f;
    BOOST_TEST(differ(of(mesh, materials(), sources(), {1000, 1000, 1000}, roulette)) == V{"packets or kernel settings"});
    roulette = {};
    roulette.seed = 99;  // another seed: another estimate of the same matrix
    BOOST_TEST(differ(of(mesh, materials(), sources(), {1000, 1000, 1000}, roulette)).empty());
    std::vector<SourcePtr> louder = sources();
    louder[0]->power = 7;  // the matrix is per J emitted: a source's own power does not change it
    BOOST_TEST(differ(of(mesh, materials(), louder)).empty());
    // Several at once are all named, in order.
    BOOST_TEST(differ(of(box(0.5), materials(0.06), sources(0.6), {1, 1, 1})) ==
               (V{"mesh", "materials", "sources", "packets or kernel settings"}));
}

BOOST_AUTO_TEST_CASE(parts_are_the_documented_hash) {
    // A one-tetra mesh, one material set, one point source, two columns.
    TetraMesh mesh({{0, 0, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, {{0, 0, 0, 0}, {1, 2, 3, 4}}, {0, 1});
    Reference m;
    m.text("FullMonte mesh 1");
    m.le(4, 8);
    for (uint32_t i = 1; i <= 4; ++i)
        for (double c : mesh.point(i)) m.real(c == 0 ? 0.0 : c);
    m.le(1, 8);
    for (uint32_t p : mesh.tetra(1)) m.le(p, 4);
    m.le(1, 4);  // its region
    m.text("mm");
    BOOST_TEST(meshFingerprint(mesh) == m.part());

    MaterialSet mats;
    mats.exterior(Material(0, 0, 0, 1.0));
    mats.append(Material(0.05, 5, 0.9, 1.37));
    Reference a;
    a.text("FullMonte materials 1");
    a.le(1, 8);  // sets
    a.le(2, 8);  // materials with the exterior
    a.le(0, 1);  // matched boundary: no
    a.real(1.0);
    for (double v : {0.05, 5.0, 0.9, 1.37}) a.real(v);
    BOOST_TEST(materialsFingerprint({mats}) == a.part());

    auto p = std::make_shared<PointSource>();
    p->position = {0.2, 0.2, 0.2};
    Reference s;
    s.text("FullMonte sources 1");
    s.le(1, 8);
    s.text("Point");
    for (double v : {0.2, 0.2, 0.2}) s.real(v);
    BOOST_TEST(sourcesFingerprint({p}) == s.part());

    KernelParams kp;
    Reference r;
    r.text("FullMonte runs 1");
    r.le(2, 8);
    r.le(500, 8), r.le(700, 8);
    r.real(double(kp.wmin)), r.real(double(kp.prwin));
    r.le(kp.maxSteps, 4), r.le(kp.maxHits, 4);
    BOOST_TEST(runsFingerprint({500, 700}, kp) == r.part());
}

BOOST_AUTO_TEST_CASE(negative_zero_is_zero) {
    auto a = std::make_shared<PointSource>(), b = std::make_shared<PointSource>();
    a->position = {0.0, 1, 1};
    b->position = {-0.0, 1, 1};
    BOOST_TEST(sourcesFingerprint({a}) == sourcesFingerprint({b}));
}

BOOST_AUTO_TEST_SUITE_END()
