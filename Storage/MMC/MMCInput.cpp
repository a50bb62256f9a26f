// SPDX-License-Identifier: GPL-3.0-or-later
#include "Storage/MMC/MMCInput.hpp"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <vector>

#include "Common/Errors.hpp"
#include "Common/WholeNumber.hpp"
#include "fm_config.h"
#include "Storage/MMC/MMC.hpp"

namespace fm {

namespace mmcdetail {

int64_t drawSeed() {
    std::random_device device;
    const uint64_t clock = uint64_t(std::chrono::system_clock::now().time_since_epoch().count());
    std::seed_seq mix{uint64_t(device()), uint64_t(device()), clock, clock >> 32};
    std::mt19937 g(mix);
    return int64_t(std::uniform_int_distribution<uint32_t>(1, 2147483647u)(g));
}

bool setSeed(MMCSimulation& s, const std::string& text, const std::string& where) {
    const bool negative = !text.empty() && text[0] == '-';
    std::optional<uint64_t> v = parseWholeNumber(negative ? text.substr(1) : text);
    if (!v || *v > uint64_t(INT64_MAX)) return false;
    if (!negative || *v == 0) {
        s.seed = int64_t(*v);
        s.seedNote.clear();
        return true;
    }
    s.seed = drawSeed();
    s.seedNote = where + " " + text + " asks for a seed from the clock (as in MMC): seed " + std::to_string(s.seed) +
                 " was drawn; give it as the seed to repeat this run";
    return true;
}

std::string folderOf(const std::string& path) {
    std::string d = std::filesystem::path(path).parent_path().string();
    return d.empty() ? "." : d;
}

TetraMesh meshFiles(const std::string& dir, const std::string& id, std::vector<uint32_t>& tetraOfElement) {
    return readMMCMesh(dir + "/node_" + id + ".dat", dir + "/elem_" + id + ".dat", {}, &tetraOfElement);
}

MaterialSet propFile(const std::string& dir, const std::string& id, double exteriorN) {
    return readMMCMaterials(dir + "/prop_" + id + ".dat", exteriorN);
}

std::string backgroundNote(const std::vector<uint32_t>& tetraOfElement, uint64_t& count) {
    count = 0;
    for (size_t i = 1; i < tetraOfElement.size(); ++i) count += tetraOfElement[i] == 0;
    if (!count) return "";
    return std::to_string(count) + " of the " + std::to_string(tetraOfElement.size() - 1) +
           " MMC elements are background (labels 0 and -1) and are left out of the mesh: photons that "
           "cross into them leave, as in MMC; per-tetra outputs list the tissue elements only, in MMC's order";
}

namespace {

// Why FullMonte has no equivalent of an MMC source type; "" for the types it reads.
std::string unsupportedSourceType(const std::string& type) {
    if (type == "pencil" || type == "isotropic" || type == "cone" || type == "disk" || type == "planar") return "";
    if (type == "gaussian" || type == "zgaussian")
        return "a Gaussian beam profile (gaussian) or Gaussian zenith angles (zgaussian)";
    if (type == "pattern" || type == "fourier" || type == "fourierx" || type == "fourierx2d")
        return "a parallelogram beam weighted by an image (pattern) or a sinusoid (fourier, fourierx, fourierx2d)";
    if (type == "arcsine") return "directions uniform in zenith angle";
    if (type == "line") return "MMC's line emits perpendicular to the source direction, not to the segment";
    if (type == "slit") return "a collimated beam from a segment";
    return "not a source type of MMC either";
}

}  // namespace

SourcePtr source(const SourceSpec& spec, const TetraMesh& mesh, const MaterialSet& mats,
                 const std::vector<uint32_t>& tetraOfElement, const std::string& where) {
    for (double x : spec.pos)
        if (!std::isfinite(x)) throw FormatError(where + ": source position is not finite");
    const std::string why = unsupportedSourceType(spec.type);
    if (!why.empty())
        throw FormatError(where + ": MMC source type '" + spec.type + "' is not supported (" + why +
                          "); FullMonte reads pencil, isotropic, cone, disk and planar (docs/COMPATIBILITY.md lists them all)");
    // InitElem in MMC's numbering -> tetra; a background element means the photon starts outside the tissue.
    const long long e0 = spec.initElem;
    bool inBackground = false;
    uint32_t hint = 0;
    if (e0 >= 1 && uint64_t(e0) < tetraOfElement.size()) {
        hint = tetraOfElement[size_t(e0)];
        inBackground = hint == 0;
    } else if (e0 >= 1 && tetraOfElement.empty() && uint64_t(e0) <= mesh.tetraCount()) {
        hint = uint32_t(e0);
    }
    const Point3& d = spec.dir;
    double len = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    const bool needsDir = spec.type != "isotropic";
    if (needsDir && (!(len > 0) || !std::isfinite(len))) throw FormatError(where + ": source direction must be a non-zero vector");
    const Point3 u = needsDir ? Point3{d[0] / len, d[1] / len, d[2] / len} : Point3{0, 0, 1};
    const bool beam = spec.type == "pencil" || spec.type == "disk" || spec.type == "planar";
    if (inBackground && !beam)
        throw FormatError(where + ": an MMC " + spec.type + " source in a background element (InitElem " +
                          std::to_string(e0) + ", label 0 or -1) is not supported: FullMonte launches "
                          "it in tissue; only a pencil, disk or planar beam may start in MMC's background");
    if (spec.type == "pencil") {
        auto p = std::make_shared<PencilBeamSource>();
        p->position = spec.pos;
        p->direction = u;
        p->elementHint = hint;
        // MMC starts the photon inside InitElem, weight 1; from the background it is reflected
        // and refracted where it enters the tissue.
        p->specularAtEntry = inBackground;
        return p;
    }
    if (spec.type == "isotropic") {
        auto p = std::make_shared<PointSource>();
        p->position = spec.pos;
        p->elementHint = hint;
        return p;
    }
    if (spec.type == "disk") {
        // Uniform over the disk of radius Param1[0] normal to Dir, every photon along Dir; MMC's
        // Param1[1] > 0 is an inner radius (a ring).
        if (!(spec.param1[0] > 0) || spec.param1[1] != 0)
            throw FormatError(where + ": MMC disk needs Param1[0] > 0 (the radius) and Param1[1] = 0 (no inner "
                              "radius), found " + std::to_string(spec.param1[0]) + " and " + std::to_string(spec.param1[1]));
        auto p = std::make_shared<DiskSource>();
        p->centre = spec.pos;
        p->direction = u;
        p->radius = spec.param1[0];
        p->specularAtEntry = true;  // from the background, reflected where it enters the tissue
        return p;
    }
    if (spec.type == "planar") {
        // Uniform over the parallelogram Pos + s Param1[0..2] + t Param2[0..2], every photon along Dir.
        const Point3 a{spec.param1[0], spec.param1[1], spec.param1[2]}, b{spec.param2[0], spec.param2[1], spec.param2[2]};
        const Point3 n{a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
        if (!(n[0] * n[0] + n[1] * n[1] + n[2] * n[2] > 0))
            throw FormatError(where + ": MMC planar needs two sides Param1[0..2] and Param2[0..2] that span an area");
        auto p = std::make_shared<PlanarSource>();
        p->corner = spec.pos;
        p->side1 = {spec.param1[0], spec.param1[1], spec.param1[2]};
        p->side2 = {spec.param2[0], spec.param2[1], spec.param2[2]};
        p->direction = u;
        p->specularAtEntry = true;  // from the background, reflected where it enters the tissue
        return p;
    }
    // cone: uniform in solid angle within half-angle Param1[0] (radians) of Dir, from Pos in tissue.
    const double theta = spec.param1[0];
    if (spec.param1[1] != 0)
        throw FormatError(where + ": MMC cone with Param1[1] != 0 (directions uniform in angle, not in solid "
                          "angle) is not supported");
    if (!(theta > 0 && theta <= M_PI / 2))
        throw FormatError(where + ": MMC cone half-angle Param1[0] must be in (0, pi/2] radians for FullMonte "
                          "(a fibre's cone), found " + std::to_string(theta));
    uint32_t t = hint && mesh.contains(hint, spec.pos) ? hint : mesh.locate(spec.pos);
    if (!t) throw FormatError(where + ": MMC cone source position is outside the tissue");
    auto f = std::make_shared<FiberSource>();
    f->position = spec.pos;
    f->direction = u;
    f->numericalAperture = mats.material(mesh.region(t)).n * std::sin(theta);
    f->specularAtEntry = false;  // MMC launches inside InitElem, weight 1
    return f;
}

}  // namespace mmcdetail

namespace {

// MMC reads each .inp item with fscanf and drops the rest of its line (the comment), so a record
// is the numbers or words at the start of the next non-blank line.
class InpLines {
public:
    explicit InpLines(const std::string& path) : path_(path), in_(path, std::ios::binary) {
        if (!in_) throw FormatError(path + ": cannot open file");
    }
    // The tokens before any '#' of the next non-blank line; empty at end of file when optional.
    std::vector<std::string> next(const std::string& what, bool optional = false) {
        std::string l;
        while (std::getline(in_, l)) {
            ++line_;
            if (l.find('\0') != std::string::npos) fail("binary data (NUL byte) in a text file");
            std::istringstream s(l.substr(0, l.find('#')));
            std::vector<std::string> t;
            for (std::string w; s >> w;) t.push_back(w);
            if (!t.empty()) return t;
        }
        if (!optional) fail("unexpected end of file, expected " + what);
        return {};
    }
    // The first n numbers of the next record.
    std::vector<double> numbers(size_t n, const std::string& what) {
        std::vector<std::string> t = next(what);
        return numbersOf(t, n, what);
    }
    std::vector<double> numbersOf(const std::vector<std::string>& t, size_t n, const std::string& what) {
        if (t.size() < n) fail("expected " + what + " (" + std::to_string(n) + " numbers), found " + std::to_string(t.size()));
        std::vector<double> v;
        for (size_t i = 0; i < n; ++i) {
            char* end = nullptr;
            double x = std::strtod(t[i].c_str(), &end);
            if (end == t[i].c_str() || *end || !std::isfinite(x)) fail("expected " + what + ", found '" + t[i] + "'");
            v.push_back(x);
        }
        return v;
    }
    [[noreturn]] void fail(const std::string& msg) const {
        throw FormatError(path_ + ":" + std::to_string(line_) + ": " + msg);
    }
    std::string where() const { return path_ + ":" + std::to_string(line_); }

private:
    std::string path_;
    std::ifstream in_;
    int line_ = 0;
};

double whole(InpLines& r, double x, const std::string& what, double lo) {
    if (x != std::floor(x) || x < lo || x > 9.2e18) r.fail(what + " must be a whole number >= " + std::to_string(int(lo)));
    return x;
}

// A whole number of either sign (the initial element), refused rather than converted
// when it has a fraction or lies beyond what a 64-bit integer holds.
long long signedWhole(InpLines& r, double x, const std::string& what) {
    if (x != std::floor(x) || std::fabs(x) > 9.2e18) r.fail(what + " must be a whole number of at most 9.2e18");
    return (long long)x;
}

}  // namespace

MMCSimulation readMMCInp(const std::string& path, double exteriorN) {
    InpLines r(path);
    MMCSimulation s;
    s.photons = uint64_t(whole(r, r.numbers(1, "the number of photons")[0], "the number of photons", 1));
    const std::string seed = r.next("the random seed")[0];
    if (!mmcdetail::setSeed(s, seed, r.where() + ": the random seed"))
        r.fail("the random seed must be a whole number in [0, 2^63-1] (negative: a seed from the clock, as in MMC), "
               "found '" + seed + "'");
    std::vector<double> p = r.numbers(3, "the source position x y z");
    std::vector<double> d = r.numbers(3, "the source direction x y z");
    std::string dirWhere = r.where();
    std::vector<double> gates = r.numbers(3, "the time gates (start end step)");
    if (!(gates[0] <= gates[1] && gates[2] != 0)) r.fail("incorrect time gates (start > end or step 0)");
    s.id = r.next("the mesh id")[0];
    const std::string e0What = "the element enclosing the source";
    long long e0 = signedWhole(r, r.numbers(1, e0What)[0], e0What);
    std::vector<double> det = r.numbers(2, "the number of detectors and their radius");
    for (double i = 0, n = whole(r, det[0], "the number of detectors", 0); i < n; ++i)
        r.numbers(3, "detector position x y z");
    mmcdetail::SourceSpec spec;
    std::vector<std::string> t = r.next("the source type", true);
    std::string where = t.empty() ? dirWhere : r.where();
    if (!t.empty()) {
        spec.type = t[0];
        // MMC reads Param1 (4 numbers) after a type, then Param2 when present.
        for (double* dst : {spec.param1, spec.param2}) {
            const std::string what = dst == spec.param1 ? "the source parameters Param1" : "the source parameters Param2";
            std::vector<std::string> v = r.next(what, true);
            if (v.empty()) break;
            std::vector<double> x = r.numbersOf(v, 4, what);
            std::copy(x.begin(), x.end(), dst);
        }
    }
    spec.pos = {p[0], p[1], p[2]};
    spec.dir = {d[0], d[1], d[2]};
    spec.initElem = e0;

    std::string dir = mmcdetail::folderOf(path);
    std::vector<uint32_t> tetraOf;
    s.mesh = mmcdetail::meshFiles(dir, s.id, tetraOf);
    s.materials = mmcdetail::propFile(dir, s.id, exteriorN);
    s.source = mmcdetail::source(spec, s.mesh, s.materials, tetraOf, where);
    std::string note = mmcdetail::backgroundNote(tetraOf, s.backgroundElements);
    if (!note.empty()) s.warnings.push_back(note);
    return s;
}

#if !FM_HAVE_JSON
MMCSimulation readMMCJson(const std::string& path) {
    throw ParameterError(path + ": this FullMonte was built without nlohmann-json (Debian "
                         "nlohmann-json3-dev), so MMC's JSON inputs cannot be read; use the .inp form");
}
#endif

MMCSimulation readMMCInput(const std::string& path, double exteriorN) {
    std::string ext = std::filesystem::path(path).extension().string();
    if (ext == ".json") return readMMCJson(path);
    if (ext == ".inp") return readMMCInp(path, exteriorN);
    throw ParameterError(path + ": an MMC input is a .json or .inp file");
}

}  // namespace fm
