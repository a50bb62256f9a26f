// SPDX-License-Identifier: GPL-3.0-or-later
// MMC's JSON input through nlohmann-json (built when FM_USE_JSON is ON). Errors name the file and
// the JSON path ("cube.json: Optode.Source.Pos: expected 3 numbers").
#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "Common/Errors.hpp"
#include "Storage/MMC/MMC.hpp"
#include "Storage/MMC/MMCInput.hpp"

namespace fm {

namespace {

using Json = nlohmann::json;

class JsonInput {
public:
    explicit JsonInput(const std::string& path) : path_(path) {
        std::ifstream in(path, std::ios::binary);
        if (!in) throw FormatError(path + ": cannot open file");
        try {
            root_ = Json::parse(in);
        } catch (const Json::exception& e) {  // syntax, or a number out of double's range
            throw FormatError(path + ": not valid JSON (" + std::string(e.what()) + ")");
        }
        if (!root_.is_object()) fail("", "the top level must be an object");
    }
    [[noreturn]] void fail(const std::string& where, const std::string& msg) const {
        throw FormatError(path_ + ": " + (where.empty() ? "" : where + ": ") + msg);
    }
    const Json& root() const { return root_; }
    // The first of the named sections that exists (MMC reads the mesh from Mesh, Shapes or, in its
    // older examples, Domain), with its name; null when none.
    std::pair<const Json*, std::string> section(std::initializer_list<const char*> names) const {
        for (const char* n : names)
            if (root_.contains(n)) {
                if (!root_[n].is_object()) fail(n, "expected an object");
                return {&root_[n], n};
            }
        return {nullptr, ""};
    }
    double number(const Json& j, const std::string& where) const {
        if (!j.is_number()) fail(where, "expected a number, found " + std::string(j.type_name()));
        double x = j.get<double>();
        if (!std::isfinite(x)) fail(where, "not a finite number");
        return x;
    }
    long long integer(const Json& j, const std::string& where) const {
        double x = number(j, where);
        if (x != std::floor(x) || std::fabs(x) > 9e15) fail(where, "expected an integer (of at most 9e15)");
        return (long long)x;
    }
    std::vector<double> numbers(const Json& j, const std::string& where, size_t lo, size_t hi) const {
        if (!j.is_array() || j.size() < lo || j.size() > hi)
            fail(where, "expected an array of " + (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)) +
                            " numbers");
        std::vector<double> v;
        for (size_t i = 0; i < j.size(); ++i) v.push_back(number(j[i], where + "[" + std::to_string(i) + "]"));
        return v;
    }
    std::string text(const Json& j, const std::string& where) const {
        if (!j.is_string()) fail(where, "expected a string");
        return j.get<std::string>();
    }
    const std::string& path() const { return path_; }

private:
    std::string path_;
    Json root_;
};

// MeshNode [[x,y,z],...] and MeshElem [[n1,n2,n3,n4,label],...], nodes 1-based.
TetraMesh inlineMesh(const JsonInput& in, const Json& mesh, const std::string& sec, double unit,
                     std::vector<uint32_t>& tetraOf) {
    const std::string np = sec + ".MeshNode", ep = sec + ".MeshElem";
    if (!mesh.contains("MeshElem")) in.fail(sec, "MeshNode is given without MeshElem");
    const Json& nodes = mesh["MeshNode"];
    const Json& elems = mesh["MeshElem"];
    if (!nodes.is_array() || nodes.size() < 4)
        in.fail(np, "expected an array of [x, y, z] rows, at least 4 (JData-encoded arrays are not read)");
    if (!elems.is_array() || elems.empty())
        in.fail(ep, "expected an array of [n1, n2, n3, n4, label] rows (JData-encoded arrays are not read)");
    std::vector<Point3> pts(1, Point3{0, 0, 0});
    for (size_t i = 0; i < nodes.size(); ++i) {
        std::vector<double> v = in.numbers(nodes[i], np + "[" + std::to_string(i) + "]", 3, 3);
        for (double& x : v) {
            x *= unit;
            if (std::fabs(x) > kMaxCoordinate) in.fail(np + "[" + std::to_string(i) + "]", "coordinate beyond 1e15");
        }
        pts.push_back({v[0], v[1], v[2]});
    }
    std::vector<TetraPoints> tets(1, TetraPoints{0, 0, 0, 0});
    std::vector<uint32_t> regions(1, 0);
    tetraOf.assign(1, 0);
    for (size_t t = 0; t < elems.size(); ++t) {
        const std::string where = ep + "[" + std::to_string(t) + "]";
        if (!elems[t].is_array() || elems[t].size() != 5) in.fail(where, "expected [n1, n2, n3, n4, label]");
        TetraPoints T;
        for (int k = 0; k < 4; ++k) {
            long long v = in.integer(elems[t][k], where + "[" + std::to_string(k) + "]");
            if (v < 1 || uint64_t(v) >= pts.size())
                in.fail(where, "node " + std::to_string(v) + " does not exist (nodes are 1.." + std::to_string(pts.size() - 1) + ")");
            T[k] = uint32_t(v);
        }
        long long label = in.integer(elems[t][4], where + "[4]");
        std::string problem = mmcLabelProblem(label);
        if (!problem.empty()) in.fail(where, problem);
        if (label > (1 << 20)) in.fail(where, "label " + std::to_string(label) + " is too large");
        tetraOf.push_back(mmcBackgroundLabel(label) ? 0 : uint32_t(tets.size()));
        if (mmcBackgroundLabel(label)) continue;
        tets.push_back(T);
        regions.push_back(uint32_t(label));
    }
    if (tets.size() == 1) in.fail(ep, "every element is MMC's background (labels 0 and -1): there is no tissue");
    try {
        return TetraMesh(std::move(pts), std::move(tets), std::move(regions));
    } catch (const ModelError& e) {
        throw ModelError(in.path() + ": " + ep + ": " + e.what());
    }
}

// Domain.Media: [{mua, mus, g, n} or [mua, mus, g, n], ...], Media[0] the exterior (its n).
MaterialSet media(const JsonInput& in, const Json& list) {
    if (!list.is_array() || list.size() < 2) in.fail("Domain.Media", "expected medium 0 (the exterior) and at least one medium");
    MaterialSet ms;
    for (size_t i = 0; i < list.size(); ++i) {
        const std::string where = "Domain.Media[" + std::to_string(i) + "]";
        const Json& m = list[i];
        double v[4];
        const char* keys[4] = {"mua", "mus", "g", "n"};
        if (m.is_object()) {
            for (int k = 0; k < 4; ++k) {
                if (!m.contains(keys[k])) in.fail(where, std::string("missing \"") + keys[k] + "\"");
                v[k] = in.number(m[keys[k]], where + "." + keys[k]);
            }
        } else {
            std::vector<double> a = in.numbers(m, where, 4, 4);
            std::copy(a.begin(), a.end(), v);
        }
        std::string problem;
        Material mat = mmcMedium(v[0], v[1], v[2], v[3], problem);
        if (!problem.empty()) in.fail(where, problem);
        if (i == 0) ms.exterior(Material(0, 0, 0, mat.n));
        else ms.append(mat);
    }
    return ms;
}

}  // namespace

MMCSimulation readMMCJson(const std::string& path) {
    JsonInput in(path);
    MMCSimulation s;
    auto [mesh, sec] = in.section({"Mesh", "Shapes", "Domain"});
    if (!mesh || !(mesh->contains("MeshID") || mesh->contains("MeshNode")))
        in.fail("", "no mesh: give Mesh.MeshID (node_/elem_/prop_<id>.dat files) or Mesh.MeshNode and Mesh.MeshElem");
    const Json* domain = in.root().contains("Domain") ? &in.root()["Domain"] : nullptr;
    const Json* session = in.root().contains("Session") ? &in.root()["Session"] : nullptr;
    const Json* forward = in.root().contains("Forward") ? &in.root()["Forward"] : nullptr;
    double unit = 1;
    std::string unitFrom = sec + ".LengthUnit";  // the key that gave it, for messages
    for (auto [j, name] : {std::pair{mesh, sec}, std::pair{domain, std::string("Domain")}})
        if (j && j->contains("LengthUnit")) {
            unitFrom = name + ".LengthUnit";
            unit = in.number((*j)["LengthUnit"], unitFrom);
            if (!(unit > 0)) in.fail(unitFrom, "must be > 0 (mm per length unit)");
        }
    std::string dir = mmcdetail::folderOf(path);
    std::vector<uint32_t> tetraOf;
    if (mesh->contains("MeshNode")) {
        s.mesh = inlineMesh(in, *mesh, sec, unit, tetraOf);
    } else {
        s.id = in.text((*mesh)["MeshID"], sec + ".MeshID");
        s.mesh = mmcdetail::meshFiles(dir, s.id, tetraOf);
        if (unit != 1) in.fail(unitFrom, "is supported with inline MeshNode only (scale the node file to mm)");
    }
    double nOut = 1;
    if (forward && forward->contains("N0")) nOut = in.number((*forward)["N0"], "Forward.N0");
    if (domain && domain->contains("Media")) s.materials = media(in, (*domain)["Media"]);
    else if (!s.id.empty()) s.materials = mmcdetail::propFile(dir, s.id, nOut);
    else in.fail("Domain.Media", "missing: inline meshes need their media here");
    if (s.materials.size() - 1 < s.mesh.regionCount() - 1)
        in.fail("Domain.Media", "the mesh has labels up to " + std::to_string(s.mesh.regionCount() - 1) + " but only " +
                                    std::to_string(s.materials.size() - 1) + " media are given");

    if (session) {
        if (session->contains("Photons")) {
            long long n = in.integer((*session)["Photons"], "Session.Photons");
            if (n < 1) in.fail("Session.Photons", "must be at least 1");
            s.photons = uint64_t(n);
        }
        if (session->contains("RNGSeed")) {
            const Json& j = (*session)["RNGSeed"];
            if (!j.is_number()) in.fail("Session.RNGSeed", "expected a whole number, found " + std::string(j.type_name()));
            // The number's JSON text (1e6 reads as 1000000.0): parsed as an integer, never rounded.
            if (!mmcdetail::setSeed(s, j.dump(), in.path() + ": Session.RNGSeed"))
                in.fail("Session.RNGSeed", "must be a whole number in [0, 2^63-1] (negative: a seed from the clock, as "
                                           "in MMC), found " + j.dump());
        }
        if (session->contains("ID")) s.id = in.text((*session)["ID"], "Session.ID");
        if (session->contains("DoMismatch")) {
            const Json& m = (*session)["DoMismatch"];
            bool mismatch = m.is_boolean() ? m.get<bool>() : in.integer(m, "Session.DoMismatch") != 0;
            if (!mismatch) {
                for (size_t i = 2; i < s.materials.size(); ++i)
                    if (s.materials.material(i).n != s.materials.material(1).n)
                        in.fail("Session.DoMismatch", "0 (no reflection anywhere) with media of different n (media 1 and " +
                                                          std::to_string(i) + ") is not supported: FullMonte always refracts "
                                                          "between them");
                s.materials.matchedBoundary = true;
            }
        }
    }
    if (!in.root().contains("Optode") || !in.root()["Optode"].contains("Source"))
        in.fail("Optode.Source", "missing (a source needs at least Pos)");
    const Json& src = in.root()["Optode"]["Source"];
    if (!src.is_object() || !src.contains("Pos")) in.fail("Optode.Source.Pos", "missing");
    std::vector<double> pos = in.numbers(src["Pos"], "Optode.Source.Pos", 3, 3);
    for (double& x : pos) x *= unit;
    mmcdetail::SourceSpec spec;
    spec.pos = {pos[0], pos[1], pos[2]};
    if (src.contains("Dir")) {
        std::vector<double> d = in.numbers(src["Dir"], "Optode.Source.Dir", 3, 4);
        spec.dir = {d[0], d[1], d[2]};
    }
    if (src.contains("Type")) spec.type = in.text(src["Type"], "Optode.Source.Type");
    for (auto [key, dst] : {std::pair{"Param1", spec.param1}, std::pair{"Param2", spec.param2}})
        if (src.contains(key)) {
            std::vector<double> v = in.numbers(src[key], std::string("Optode.Source.") + key, 1, 4);
            std::copy(v.begin(), v.end(), dst);
        }
    if (spec.type == "disk") spec.param1[0] *= unit;  // the radius, a length
    if (spec.type == "planar")
        for (int k = 0; k < 3; ++k) spec.param1[k] *= unit, spec.param2[k] *= unit;  // the sides
    spec.initElem = mesh->contains("InitElem") ? in.integer((*mesh)["InitElem"], sec + ".InitElem") : 0;
    s.source = mmcdetail::source(spec, s.mesh, s.materials, tetraOf, path + ": Optode.Source");
    std::string note = mmcdetail::backgroundNote(tetraOf, s.backgroundElements);
    if (!note.empty()) s.warnings.push_back(note);
    if (s.backgroundElements && domain && domain->contains("Media")) {
        // MMC gives its background elements medium 0; FullMonte's background is void.
        const Json& m0 = (*domain)["Media"][0];
        double mua = m0.is_object() ? m0["mua"].get<double>() : m0[0].get<double>();
        double mus = m0.is_object() ? m0["mus"].get<double>() : m0[1].get<double>();
        if (mua != 0 || mus != 0)
            in.fail("Domain.Media[0]", "the mesh has background elements (labels 0 and -1), which take medium 0 in MMC, "
                                       "and medium 0 absorbs or scatters (mua " + std::to_string(mua) + ", mus " +
                                       std::to_string(mus) + "); FullMonte's background is void: give medium 0 mua = mus = 0");
    }
    return s;
}

}  // namespace fm
