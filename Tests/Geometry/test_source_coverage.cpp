// SPDX-License-Identifier: GPL-3.0-or-later
// Sources against the mesh (Geometry/SourceCompiler, SourceCoverage): a source partly outside
// gets a warning with the fraction outside (checked against the analytic fraction within the
// sampling error), one entirely outside is an error, and a point on a face or vertex belongs to
// the lowest-numbered tetra containing it.
#include <boost/test/unit_test.hpp>
#include <cmath>

#include "Common/Errors.hpp"
#include "Geometry/MeshBuilder.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Geometry/SourceCompiler.hpp"
#include "Geometry/SourceCoverage.hpp"
#include "Kernels/Dispatch.hpp"

using namespace fm;

namespace {

const TetraMesh& box() {  // [-5, 5]^3 in unit cubes
    static TetraMesh m = makeBoxMesh({-5, -5, -5}, {5, 5, 5}, 10, 10, 10, [](const Point3& c) {
        return c[0] < 0 ? 1u : 2u;
    });
    return m;
}

MaterialSet mats() {
    MaterialSet ms;
    ms.exterior(Material(0, 0, 0, 1.0));
    ms.append(Material(0.1, 1, 0, 1.4));
    ms.append(Material(0.1, 1, 0, 1.4));
    return ms;
}

KernelInput compile(const Source& s) {
    KernelInput in;
    compileSources(s, box(), mats(), in);
    return in;
}

std::string allWarnings(const KernelInput& in) {
    std::string s;
    for (const auto& w : in.warnings) s += w + "\n";
    return s;
}

bool mentions(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

// |estimate - exact| within 4 binomial standard errors of the sampled fraction.
void checkFraction(double estimate, double exact, int samples) {
    double se = std::sqrt(exact * (1 - exact) / samples);
    BOOST_CHECK_MESSAGE(std::fabs(estimate - exact) <= 4 * se,
                        "sampled " << estimate << ", exact " << exact << " (4 se = " << 4 * se << ")");
}

uint32_t lowestContaining(const Point3& p) {
    for (uint32_t t = 1; t <= box().tetraCount(); ++t)
        if (box().contains(t, p)) return t;
    return 0;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(source_coverage)

BOOST_AUTO_TEST_CASE(a_ball_partly_outside_is_warned_with_its_fraction) {
    BallSource b;
    b.centre = {6, 0, 0};
    b.radius = 1.5;  // a cap of height 0.5 inside: h^2 (3r - h) / (4 r^3) of the volume
    double inside = 0.25 * (4.5 - 0.5) / (4 * 3.375);
    Coverage c = ballCoverage(box(), b.centre, b.radius);
    checkFraction(c.outside, 1 - inside, c.samples);
    KernelInput in = compile(b);
    BOOST_REQUIRE_EQUAL(in.warnings.size(), 1u);
    BOOST_CHECK(mentions(in.warnings[0], "Ball source at (6 0 0)"));
    BOOST_CHECK(mentions(in.warnings[0], "of it lies outside the mesh"));
    BOOST_CHECK(mentions(in.warnings[0], "the part inside emits the source's full power"));
    // What the warning says happens: every packet starts inside, none is lost.
    RunOptions o;
    o.packets = 2000;
    o.threads = 1;
    RunResult r = runKernel("cpu", packModel(box(), mats(), b), o);
    BOOST_CHECK_EQUAL(r.ledger.abnormal, 0.0);
    BOOST_CHECK_CLOSE(r.ledger.launched, 2000.0, 1e-9);
}

BOOST_AUTO_TEST_CASE(a_source_entirely_outside_is_an_error) {
    BallSource b;
    b.centre = {6.6, 0, 0};  // near the x = 5 face, not touching it
    b.radius = 1.5;
    BOOST_CHECK_EXCEPTION(compile(b), ModelError,
                          [](const ModelError& e) { return mentions(e.what(), "lies entirely outside the mesh"); });
    CylinderSource c;
    c.endpoint[0] = {0, 0, 7};
    c.endpoint[1] = {0, 0, 9};
    c.radius = 1;
    c.emitVolume = true;
    BOOST_CHECK_THROW(compile(c), ModelError);
    LineSource l;
    l.endpoint[0] = {0, 0, 7};
    l.endpoint[1] = {0, 0, 9};
    BOOST_CHECK_THROW(compile(l), ModelError);
}

BOOST_AUTO_TEST_CASE(a_line_half_outside_is_warned_exactly) {
    LineSource l;
    l.endpoint[0] = {0.1, 0.2, 0};
    l.endpoint[1] = {0.1, 0.2, 10};
    std::string w = allWarnings(compile(l));
    BOOST_CHECK(mentions(w, "Line source from (0.1 0.2 0) to (0.1 0.2 10): 50% of its length lies outside"));
    // Along the mesh's edges (x = y = 0 is a grid line): every tetra around an edge holds that
    // part of the line, and the part inside is their union, not their sum.
    LineSource e;
    e.endpoint[0] = {0, 0, -2};
    e.endpoint[1] = {0, 0, 10};
    BOOST_CHECK(mentions(allWarnings(compile(e)), "Line source from (0 0 -2) to (0 0 10): 41.7% of its length lies outside"));
    CylinderSource c;  // a diffuser's axis likewise (fullmonte-plan's example mesh put one there)
    c.endpoint[0] = {0, 0, -2};
    c.endpoint[1] = {0, 0, 10};
    c.radius = 0.5;
    BOOST_CHECK(mentions(allWarnings(compile(c)), "Cylinder source axis from (0 0 -2) to (0 0 10): 41.7% of its length"));
}

BOOST_AUTO_TEST_CASE(cylinders_partly_outside_are_warned) {
    CylinderSource c;
    c.endpoint[0] = {0.1, 0.2, 0};
    c.endpoint[1] = {0.1, 0.2, 10};
    c.radius = 1;
    c.emitVolume = true;
    checkFraction(cylinderVolumeCoverage(box(), c.endpoint[0], c.endpoint[1], c.radius).outside, 0.5, kCoverageSamples);
    BOOST_CHECK(mentions(allWarnings(compile(c)), "Cylinder source (volume)"));
    // A diffuser along the y = 5 face's inside, 0.5 mm from it: its surface points with
    // cos(phi) > 0.5 (a third) are outside although its axis is inside.
    CylinderSource d;
    d.endpoint[0] = {0.1, 4.5, -2};
    d.endpoint[1] = {0.1, 4.5, 2};
    d.radius = 1;
    Coverage s = cylinderSurfaceCoverage(box(), d.endpoint[0], d.endpoint[1], d.radius);
    BOOST_CHECK_EQUAL(s.outside, 0.0);
    checkFraction(s.lost, 1.0 / 3, s.samples);
    std::string w = allWarnings(compile(d));
    BOOST_CHECK(mentions(w, "Cylinder source (surface)"));
    BOOST_CHECK(mentions(w, "lost (booked abnormal)"));
}

BOOST_AUTO_TEST_CASE(beams_from_outside_say_where_they_enter) {
    FiberSource f;
    f.position = {0.1, 0.2, 8};
    f.direction = {0, 0, -1};
    std::string w = allWarnings(compile(f));
    BOOST_CHECK(mentions(w, "Fiber source at (0.1 0.2 8) is outside the mesh"));
    BOOST_CHECK(mentions(w, "enters at (0.1 0.2 5)"));
    PencilBeamSource p;
    p.position = {0.1, 0.2, -5};  // on the surface: the usual placement, nothing to say
    p.direction = {0, 0, 1};
    BOOST_CHECK(compile(p).warnings.empty());
    p.position = {0.1, 0.2, -7};
    BOOST_CHECK(mentions(allWarnings(compile(p)), "PencilBeam source at (0.1 0.2 -7) is outside the mesh"));
}

BOOST_AUTO_TEST_CASE(a_point_on_a_face_or_vertex_goes_to_the_lowest_numbered_tetra) {
    // An interior vertex (24 tetras), an edge, a face between regions 1 and 2, a cube diagonal.
    for (Point3 p : {Point3{0, 0, 0}, Point3{1, 1, 0.5}, Point3{0, 0.3, 0.6}, Point3{1.5, 1.5, 1.5}}) {
        PointSource s;
        s.position = p;
        KernelInput in = compile(s);
        BOOST_CHECK_EQUAL(in.emitters[0].tetra, lowestContaining(p));
        BOOST_CHECK(in.warnings.empty());
        BOOST_CHECK_EQUAL(compile(s).emitters[0].tetra, in.emitters[0].tetra);
    }
    PointSource s;
    s.position = {5, 0.3, 0.3};  // on the mesh surface
    KernelInput in = compile(s);
    BOOST_CHECK_EQUAL(in.emitters[0].tetra, lowestContaining(s.position));
    BOOST_CHECK(mentions(allWarnings(in), "lies on the mesh surface (tetra"));
    BOOST_CHECK(mentions(allWarnings(in), "): about 50% of its light leaves the mesh at once"));
    s.position = {5, 5, 0.3};  // on an edge of the box: three quarters leave
    BOOST_CHECK(mentions(allWarnings(compile(s)), "about 75% of its light leaves"));
    s.position = {5, 5, 5};  // on a corner: seven eighths
    BOOST_CHECK(mentions(allWarnings(compile(s)), "about 88% of its light leaves"));
}

BOOST_AUTO_TEST_SUITE_END()
