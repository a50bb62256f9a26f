// SPDX-License-Identifier: GPL-3.0-or-later
#include "Storage/MMC/MMCInput.hpp"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "Common/Errors.hpp"
#include "fm_config.h"
#include "Storage/MMC/MMC.hpp"

namespace fm {

namespace mmcdetail {

std::string folderOf(const std::string& path) {
    std::string d = std::filesystem::path(path).parent_path().string();
    return d.empty() ? "." : d;
}

TetraMesh meshFiles(const std::string& dir, const std::string& id) {
    return readMMCMesh(dir + "/node_" + id + ".dat", dir + "/elem_" + id + ".dat");
}

MaterialSet propFile(const std::string& dir, const std::string& id, double exteriorN) {
    return readMMCMaterials(dir + "/prop_" + id + ".dat", exteriorN);
}

SourcePtr source(const std::string& type, const Point3& pos, const Point3& dir, long long initElem,
                 const TetraMesh& mesh, const std::string& where) {
    for (double x : pos)
        if (!std::isfinite(x)) throw FormatError(where + ": source position is not finite");
    uint32_t hint = initElem >= 1 && uint64_t(initElem) <= mesh.tetraCount() ? uint32_t(initElem) : 0;
    if (type == "pencil") {
        double len = std::sqrt(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
        if (!(len > 0) || !std::isfinite(len)) throw FormatError(where + ": source direction must be a non-zero vector");
        auto p = std::make_shared<PencilBeamSource>();
        p->position = pos;
        p->direction = {dir[0] / len, dir[1] / len, dir[2] / len};
        p->elementHint = hint;
        p->specularAtEntry = false;  // MMC starts the photon inside InitElem, weight 1
        return p;
    }
    if (type == "isotropic") {
        auto p = std::make_shared<PointSource>();
        p->position = pos;
        p->elementHint = hint;
        return p;
    }
    throw FormatError(where + ": MMC source type '" + type +
                      "' is not supported (FullMonte reads pencil and isotropic; use a FullMonte source "
                      "for the others)");
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

// A whole number of either sign (the seed, the initial element), refused rather than converted
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
    s.seed = signedWhole(r, r.numbers(1, "the random seed")[0], "the random seed");
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
    std::string type = "pencil";
    std::vector<std::string> t = r.next("the source type", true);
    std::string typeWhere = r.where();
    if (!t.empty()) type = t[0];

    std::string dir = mmcdetail::folderOf(path);
    s.mesh = mmcdetail::meshFiles(dir, s.id);
    s.materials = mmcdetail::propFile(dir, s.id, exteriorN);
    s.source = mmcdetail::source(type, {p[0], p[1], p[2]}, {d[0], d[1], d[2]}, e0, s.mesh,
                                 t.empty() ? dirWhere : typeWhere);
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
