// SPDX-License-Identifier: GPL-3.0-or-later
#include "Planning/PlanSpec.hpp"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "Common/Errors.hpp"
#include "Geometry/MeshBuilder.hpp"
#include "Storage/TIMOS/TIMOS.hpp"

namespace fm::planning {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// A JSON value with its path, so every error names where it is: "FILE: /a/b/0/c: what".
struct Node {
    const json& j;
    std::string file, path;

    [[noreturn]] void fail(const std::string& what) const {
        throw ParameterError(file + ": " + (path.empty() ? "/" : path) + ": " + what);
    }
    bool has(const std::string& key) const { return j.is_object() && j.contains(key); }
    Node at(const std::string& key) const {
        if (!j.is_object()) fail("expected an object");
        if (!j.contains(key)) Node{j, file, path}.fail("missing field '" + key + "'");
        return Node{j.at(key), file, path + "/" + key};
    }
    Node at(size_t i) const { return Node{j.at(i), file, path + "/" + std::to_string(i)}; }
    size_t size() const { return j.size(); }
    std::vector<Node> array() const {
        if (!j.is_array()) fail("expected an array");
        std::vector<Node> out;
        for (size_t i = 0; i < j.size(); ++i) out.push_back(at(i));
        return out;
    }
    double number() const {
        if (!j.is_number()) fail("expected a number");
        double v = j.get<double>();
        if (!std::isfinite(v)) fail("expected a finite number");
        return v;
    }
    double nonNegative() const {
        double v = number();
        if (v < 0) fail("must not be negative, got " + std::to_string(v));
        return v;
    }
    double positive() const {
        double v = number();
        if (!(v > 0)) fail("must be positive, got " + std::to_string(v));
        return v;
    }
    uint64_t count(double lo, double hi) const {
        double v = number();
        if (v != std::floor(v) || v < lo || v > hi)
            fail("expected a whole number in [" + std::to_string(uint64_t(lo)) + ", " + std::to_string(uint64_t(hi)) + "]");
        return uint64_t(v);
    }
    std::string string() const {
        if (!j.is_string()) fail("expected a string");
        return j.get<std::string>();
    }
    bool boolean() const {
        if (!j.is_boolean()) fail("expected true or false");
        return j.get<bool>();
    }
    Point3 point() const {
        if (!j.is_array() || j.size() != 3) fail("expected [x, y, z] in mm");
        return {at(0).number(), at(1).number(), at(2).number()};
    }
    // Fields this object may hold; any other is an error (a misspelt key must not be ignored).
    void allow(std::initializer_list<const char*> keys) const {
        if (!j.is_object()) fail("expected an object");
        std::set<std::string> ok(keys.begin(), keys.end());
        for (auto it = j.begin(); it != j.end(); ++it)
            if (!ok.count(it.key())) {
                std::string list;
                for (auto& k : ok) list += (list.empty() ? "" : ", ") + k;
                Node{it.value(), file, path + "/" + it.key()}.fail("unknown field (expected one of: " + list + ")");
            }
    }
};

// A dose given with its unit in the key: NAME_J_cm2 or NAME_J_mm2 (x 100). Both, or the bare
// name, are errors. Returns NaN when absent and not required.
double doseField(const Node& n, const std::string& name, bool required) {
    bool cm = n.has(name + "_J_cm2"), mm = n.has(name + "_J_mm2");
    if (n.has(name)) n.at(name).fail("give the unit in the key: '" + name + "_J_cm2' or '" + name + "_J_mm2'");
    if (cm && mm)
        n.at(name + "_J_mm2").fail("conflicting units: both '" + name + "_J_cm2' and '" + name + "_J_mm2' are given");
    if (cm) return n.at(name + "_J_cm2").nonNegative();
    if (mm) return n.at(name + "_J_mm2").nonNegative() * kJcm2PerJmm2;
    if (required) n.fail("missing field '" + name + "_J_cm2' (a dose in J/cm^2; or '" + name + "_J_mm2')");
    return NAN;
}

// An energy bound: NAME_energy_J, or NAME_power_W x the treatment time. Both is an error.
double energyField(const Node& n, const std::string& name, double treatmentTime, double dflt) {
    bool e = n.has(name + "_energy_J"), p = n.has(name + "_power_W");
    if (e && p)
        n.at(name + "_power_W").fail("conflicting units: both '" + name + "_energy_J' and '" + name + "_power_W' are given");
    if (e) return n.at(name + "_energy_J").nonNegative();
    if (p) {
        double w = n.at(name + "_power_W").nonNegative();
        if (!std::isfinite(treatmentTime))
            n.at(name + "_power_W").fail("a power needs /prescription/treatment_time_s (energy = power x time)");
        return w * treatmentTime;
    }
    return dflt;
}

double percentField(const Node& n, const std::string& key) {
    double v = n.at(key).number();
    if (v < 0 || v > 100) n.at(key).fail("a percentage must be in [0, 100], got " + std::to_string(v));
    return v / 100.0;
}

uint32_t regionOf(const Node& n, const std::map<uint32_t, std::string>& names, const TetraMesh& mesh) {
    if (n.j.is_number()) {
        uint64_t r = n.count(1, 1e9);
        if (r >= mesh.regionCount() || mesh.regionVolume(uint32_t(r)) <= 0)
            n.fail("region " + std::to_string(r) + " has no tetras in the mesh");
        return uint32_t(r);
    }
    std::string s = n.string();
    std::string list;
    for (auto& [id, name] : names) {
        if (name == s) {
            if (id >= mesh.regionCount() || mesh.regionVolume(id) <= 0)
                n.fail("region '" + s + "' (" + std::to_string(id) + ") has no tetras in the mesh");
            return id;
        }
        list += (list.empty() ? "" : ", ") + name;
    }
    n.fail("unknown region '" + s + "' (regions: " + list + ")");
}

std::string resolve(const std::string& p, const std::string& baseDir) {
    return fs::path(p).is_absolute() || baseDir.empty() ? p : (fs::path(baseDir) / p).string();
}

// "box": the structured mesher with shapes painted in order (later over earlier).
TetraMesh boxMesh(const Node& b) {
    b.allow({"lower", "upper", "divisions", "region", "shapes"});
    Point3 lo = b.at("lower").point(), hi = b.at("upper").point();
    Node d = b.at("divisions");
    if (!d.j.is_array() || d.size() != 3) d.fail("expected [nx, ny, nz]");
    unsigned n[3];
    for (int i = 0; i < 3; ++i) n[i] = unsigned(d.at(i).count(1, 400));
    for (int i = 0; i < 3; ++i)
        if (!(hi[i] > lo[i])) b.at("upper").fail("upper must exceed lower on every axis");
    uint32_t background = b.has("region") ? uint32_t(b.at("region").count(1, 255)) : 1;
    struct Shape {
        uint32_t region;
        int kind;  // 0 sphere, 1 cylinder, 2 box
        Point3 a, c;
        double r;
    };
    std::vector<Shape> shapes;
    if (b.has("shapes"))
        for (const Node& s : b.at("shapes").array()) {
            Shape sh{uint32_t(s.at("region").count(1, 255)), 0, {}, {}, 0};
            std::string t = s.at("type").string();
            if (t == "sphere") {
                s.allow({"region", "type", "centre", "radius"});
                sh.kind = 0, sh.a = s.at("centre").point(), sh.r = s.at("radius").positive();
            } else if (t == "cylinder") {
                s.allow({"region", "type", "from", "to", "radius"});
                sh.kind = 1, sh.a = s.at("from").point(), sh.c = s.at("to").point(), sh.r = s.at("radius").positive();
            } else if (t == "box") {
                s.allow({"region", "type", "lower", "upper"});
                sh.kind = 2, sh.a = s.at("lower").point(), sh.c = s.at("upper").point();
            } else {
                s.at("type").fail("unknown shape '" + t + "' (sphere, cylinder, box)");
            }
            shapes.push_back(sh);
        }
    auto inside = [](const Shape& s, const Point3& p) {
        if (s.kind == 0) return normP(sub(p, s.a)) <= s.r;
        if (s.kind == 2)
            return p[0] >= s.a[0] && p[0] <= s.c[0] && p[1] >= s.a[1] && p[1] <= s.c[1] && p[2] >= s.a[2] && p[2] <= s.c[2];
        Point3 ax = sub(s.c, s.a), ap = sub(p, s.a);
        double L2 = dotP(ax, ax), t = dotP(ap, ax) / L2;
        if (t < 0 || t > 1) return false;
        Point3 q{ap[0] - t * ax[0], ap[1] - t * ax[1], ap[2] - t * ax[2]};
        return normP(q) <= s.r;
    };
    return makeBoxMesh(lo, hi, n[0], n[1], n[2], [&](const Point3& p) {
        uint32_t r = background;
        for (const Shape& s : shapes)
            if (inside(s, p)) r = s.region;
        return r;
    });
}

void readModel(const Node& root, PlanSpec& p, const std::string& baseDir) {
    Node m = root.at("mesh");
    m.allow({"file", "box"});
    if (m.has("file") == m.has("box")) m.fail("give either 'file' (a TIM-OS .mesh) or 'box' (the built-in mesher)");
    if (m.has("file")) {
        std::string f = resolve(m.at("file").string(), baseDir);
        try {
            p.mesh = std::make_shared<TetraMesh>(readTIMOSMesh(f));
        } catch (const Error& e) {
            m.at("file").fail(e.what());
        }
    } else {
        p.mesh = std::make_shared<TetraMesh>(boxMesh(m.at("box")));
    }
    Node regions = root.at("regions");
    std::vector<Node> list = regions.array();
    if (list.empty()) regions.fail("no regions listed");
    if (root.has("exterior_n")) p.materials.exterior(Material(0, 0, 0, root.at("exterior_n").positive()));
    for (const Node& r : list) {
        r.allow({"id", "name", "mu_a", "mu_s", "g", "n", "photosensitizer_mu_a_per_mm"});
        uint32_t id = uint32_t(r.at("id").count(1, 65535));
        std::string name = r.at("name").string();
        if (p.regionNames.count(id)) r.at("id").fail("region " + std::to_string(id) + " is listed twice");
        for (auto& [i, nm] : p.regionNames)
            if (nm == name) r.at("name").fail("region name '" + name + "' is used twice");
        p.regionNames[id] = name;
        if (r.has("photosensitizer_mu_a_per_mm")) p.photosensitizerMuA[id] = r.at("photosensitizer_mu_a_per_mm").nonNegative();
        double g = r.at("g").number();
        if (std::fabs(g) >= 1) r.at("g").fail("anisotropy must satisfy |g| < 1");
        p.materials.set(id, Material(r.at("mu_a").nonNegative(), r.at("mu_s").nonNegative(), g, r.at("n").positive()));
    }
    for (uint32_t t = 1; t <= p.mesh->tetraCount(); ++t)
        if (!p.regionNames.count(p.mesh->region(t)))
            regions.fail("the mesh has region " + std::to_string(p.mesh->region(t)) + " (tetra " + std::to_string(t) +
                         ") but no entry gives its optical properties");
}

SourcePtr readSourceShape(const Node& s, const PlanSpec& p) {
    std::string type = s.at("type").string();
    if (type == "cylinder") {
        auto c = std::make_shared<CylinderSource>();
        c->endpoint[0] = s.at("from").point(), c->endpoint[1] = s.at("to").point();
        c->radius = s.has("radius") ? s.at("radius").positive() : 0.5;
        if (s.has("emit")) {
            std::string e = s.at("emit").string();
            if (e != "surface" && e != "volume") s.at("emit").fail("expected 'surface' or 'volume'");
            c->emitVolume = e == "volume";
        }
        return c;
    }
    if (type == "line") {
        auto l = std::make_shared<LineSource>();
        l->endpoint[0] = s.at("from").point(), l->endpoint[1] = s.at("to").point();
        return l;
    }
    if (type == "point") {
        auto q = std::make_shared<PointSource>();
        q->position = s.at("position").point();
        return q;
    }
    if (type == "pencil" || type == "fiber") {
        Point3 d = s.at("direction").point();
        if (!(normP(d) > 0)) s.at("direction").fail("direction must not be zero");
        if (type == "pencil") {
            auto q = std::make_shared<PencilBeamSource>();
            q->position = s.at("position").point(), q->direction = d;
            return q;
        }
        auto f = std::make_shared<FiberSource>();
        f->position = s.at("position").point(), f->direction = d;
        if (s.has("na")) f->numericalAperture = s.at("na").positive();
        return f;
    }
    if (type == "ball") {
        auto b = std::make_shared<BallSource>();
        b->centre = s.at("centre").point(), b->radius = s.at("radius").positive();
        return b;
    }
    if (type == "volume" || type == "surface") {
        uint32_t r = regionOf(s.at("region"), p.regionNames, *p.mesh);
        if (type == "volume") {
            auto v = std::make_shared<VolumeSource>();
            v->region = r;
            return v;
        }
        auto f = std::make_shared<SurfaceSource>();
        f->region = r;
        return f;
    }
    s.at("type").fail("unknown source type '" + type + "' (cylinder, line, point, pencil, fiber, ball, volume, surface)");
}

void readSources(const Node& root, PlanSpec& p) {
    Node list = root.at("sources");
    if (list.array().empty()) list.fail("no candidate sources");
    const double T = p.prescription.treatmentTime;
    for (const Node& s : list.array()) {
        s.allow({"name", "type", "from", "to", "radius", "emit", "position", "direction", "na", "centre", "region",
                 "min_energy_J", "max_energy_J", "min_power_W", "max_power_W", "packets"});
        CandidateSource c;
        c.name = s.has("name") ? s.at("name").string() : "S" + std::to_string(p.sources.size() + 1);
        for (auto& o : p.sources)
            if (o.name == c.name) s.at("name").fail("source name '" + c.name + "' is used twice");
        c.source = readSourceShape(s, p);
        c.minEnergy = energyField(s, "min", T, 0);
        c.maxEnergy = energyField(s, "max", T, INFINITY);
        if (c.minEnergy > c.maxEnergy) s.fail("minimum energy exceeds maximum energy");
        if (s.has("packets")) c.packets = s.at("packets").count(1, 1e13);
        p.sources.push_back(std::move(c));
    }
}

void readSimulation(const Node& root, PlanSpec& p, const std::string& baseDir) {
    if (!root.has("simulation")) return;
    Node s = root.at("simulation");
    s.allow({"packets_per_source", "batches", "seed", "kernel", "devices", "threads", "matrix", "matrix_batches",
             "matrix_unchecked"});
    SimulationSpec& m = p.simulation;
    if (s.has("packets_per_source")) m.packetsPerSource = s.at("packets_per_source").count(1, 1e13);
    if (s.has("batches")) m.batches = unsigned(s.at("batches").count(1, 64));
    if (s.has("seed")) m.seed = s.at("seed").count(0, 9007199254740992.0);
    if (s.has("threads")) m.threads = unsigned(s.at("threads").count(0, 4096));
    if (s.has("kernel")) {
        m.kernel = s.at("kernel").string();
        if (m.kernel != "cpu" && m.kernel != "cuda") s.at("kernel").fail("expected 'cpu' or 'cuda'");
    }
    if (s.has("devices")) {
        Node d = s.at("devices");
        if (d.j.is_string() && d.string() == "all") m.devices = {-1};
        else
            for (const Node& x : d.array()) m.devices.push_back(int(x.count(0, 1023)));
    }
    if (s.has("matrix")) m.matrixFile = resolve(s.at("matrix").string(), baseDir);
    if (s.has("matrix_batches")) m.matrixBatches = unsigned(s.at("matrix_batches").count(1, 64));
    if (s.has("matrix_unchecked")) m.matrixUnchecked = s.at("matrix_unchecked").boolean();
    if (m.packetsPerSource < m.batches) s.fail("packets_per_source must be at least batches");
}

void readSlices(const Node& root, PlanSpec& p) {
    if (!root.has("outputs")) return;  // slicePlanes() picks planes through the target
    Node o = root.at("outputs");
    o.allow({"slices"});
    for (const Node& s : o.at("slices").array()) {
        s.allow({"axis", "at_mm"});
        std::string a = s.at("axis").string();
        if (a != "x" && a != "y" && a != "z") s.at("axis").fail("expected 'x', 'y' or 'z'");
        const int axis = a[0] - 'x';
        const double at = s.at("at_mm").number();
        const std::array<Point3, 2> box = p.mesh->bounds();
        if (!(at >= box[0][axis] && at <= box[1][axis])) {
            std::ostringstream m;
            m << at << " mm is outside the mesh (" << a << " " << box[0][axis] << " .. " << box[1][axis] << " mm)";
            s.at("at_mm").fail(m.str());
        }
        p.slices.push_back({axis, at});
    }
}

// What a prescription is read against: region names, the mesh, and the PDT threshold model (a
// region's photosensitizer absorption and the photodynamic threshold dose).
struct RegionContext {
    const std::map<uint32_t, std::string>& names;
    const TetraMesh& mesh;
    const std::map<uint32_t, double>& psMuA;  // 1/mm
    double pdtThreshold = NAN;                // J/cm^3 absorbed by the photosensitizer
};

// A region's threshold: given in J/cm^2, or from the PDT threshold model: the fluence at which the
// photosensitizer absorbs the threshold dose, D_th / mu_a,PS (J/cm^3 over 1/cm = J/cm^2).
double thresholdOf(const Node& n, uint32_t region, const RegionContext& c, bool required) {
    double given = doseField(n, "threshold", false);
    auto ps = c.psMuA.find(region);
    bool model = std::isfinite(c.pdtThreshold) && ps != c.psMuA.end();
    if (std::isfinite(given) && model)
        n.at(n.has("threshold_J_cm2") ? "threshold_J_cm2" : "threshold_J_mm2")
            .fail("the PDT threshold model (photosensitizer_mu_a_per_mm of this region with the prescription's "
                  "pdt_threshold) also gives this threshold: give one or the other");
    if (model) {
        if (!(ps->second > 0)) n.fail("the region's photosensitizer_mu_a_per_mm is 0: the PDT threshold model gives no threshold");
        return c.pdtThreshold / (10 * ps->second);
    }
    if (required && !std::isfinite(given))
        n.fail("missing field 'threshold_J_cm2' (a dose in J/cm^2; or 'threshold_J_mm2', or the PDT threshold model: "
               "the region's photosensitizer_mu_a_per_mm with the prescription's pdt_threshold_J_cm3)");
    return given;
}

TargetSpec readTarget(const Node& t, const RegionContext& c) {
    const auto& names = c.names;
    const TetraMesh& mesh = c.mesh;
    t.allow({"region", "threshold_J_cm2", "threshold_J_mm2", "threshold", "weight", "V100_goal_percent", "min_doses"});
    TargetSpec s;
    s.region = regionOf(t.at("region"), names, mesh);
    s.threshold = thresholdOf(t, s.region, c, true);
    if (!(s.threshold > 0)) t.fail("the threshold must be positive");
    if (t.has("weight")) s.weight = t.at("weight").positive();
    if (t.has("V100_goal_percent")) s.v100Goal = percentField(t, "V100_goal_percent");
    if (t.has("min_doses"))
        for (const Node& d : t.at("min_doses").array()) {
            d.allow({"D_percent", "min_J_cm2", "min_J_mm2", "min"});
            double f = percentField(d, "D_percent");
            if (f <= 0) d.at("D_percent").fail("D_percent must be above 0");
            s.minDoses.push_back({f, doseField(d, "min", true)});
        }
    return s;
}

OrganSpec readOrgan(const Node& o, const RegionContext& c) {
    const auto& names = c.names;
    const TetraMesh& mesh = c.mesh;
    o.allow({"region", "threshold_J_cm2", "threshold_J_mm2", "threshold", "weight", "max_doses"});
    OrganSpec s;
    s.region = regionOf(o.at("region"), names, mesh);
    double th = thresholdOf(o, s.region, c, false);
    if (std::isfinite(th)) s.threshold = th;
    if (o.has("weight")) s.weight = o.at("weight").positive();
    if (o.has("max_doses"))
        for (const Node& d : o.at("max_doses").array()) {
            d.allow({"D_percent", "max_J_cm2", "max_J_mm2", "max"});
            double f = d.has("D_percent") ? percentField(d, "D_percent") : 0;
            if (f >= 1) d.at("D_percent").fail("D_percent must be below 100");
            s.maxDoses.push_back({f, doseField(d, "max", true)});
        }
    if (!std::isfinite(s.threshold) && s.maxDoses.empty())
        o.fail("an organ at risk needs a threshold_J_cm2 (penalty) or max_doses (hard limits)");
    return s;
}

// The photodynamic threshold dose in J/cm^3: given so, or as photons/cm^3 at a wavelength.
double pdtThreshold(const Node& n) {
    bool j = n.has("pdt_threshold_J_cm3"), ph = n.has("pdt_threshold_photons_cm3");
    if (j && ph) n.at("pdt_threshold_photons_cm3").fail("conflicting units: both 'pdt_threshold_J_cm3' and 'pdt_threshold_photons_cm3' are given");
    if (j) return n.at("pdt_threshold_J_cm3").positive();
    if (!ph) return NAN;
    if (!n.has("wavelength_nm")) n.at("pdt_threshold_photons_cm3").fail("photons need /prescription/wavelength_nm (photon energy h c / lambda)");
    const double h = 6.62607015e-34, c = 299792458.0;
    return n.at("pdt_threshold_photons_cm3").positive() * h * c / (n.at("wavelength_nm").positive() * 1e-9);
}

Prescription readPrescription(const Node& n, const std::map<uint32_t, std::string>& names, const TetraMesh& mesh,
                              const std::map<uint32_t, double>& psMuA, double& treatmentTime) {
    n.allow({"targets", "organs_at_risk", "treatment_time_s", "total_max_energy_J", "total_max_power_W", "max_sources",
             "drop_below_percent", "solver", "pdt_threshold_J_cm3", "pdt_threshold_photons_cm3", "wavelength_nm"});
    RegionContext ctx{names, mesh, psMuA, pdtThreshold(n)};
    Prescription p;
    if (n.has("treatment_time_s")) p.treatmentTime = n.at("treatment_time_s").positive();
    treatmentTime = p.treatmentTime;
    p.maxTotalEnergy = energyField(n, "total_max", p.treatmentTime, INFINITY);
    for (const Node& t : n.at("targets").array()) p.targets.push_back(readTarget(t, ctx));
    if (p.targets.empty()) n.at("targets").fail("at least one target is needed");
    if (n.has("organs_at_risk"))
        for (const Node& o : n.at("organs_at_risk").array()) p.organs.push_back(readOrgan(o, ctx));
    std::set<uint32_t> seen;
    for (size_t i = 0; i < p.targets.size() + p.organs.size(); ++i) {
        uint32_t r = i < p.targets.size() ? p.targets[i].region : p.organs[i - p.targets.size()].region;
        if (!seen.insert(r).second) {
            bool t = i < p.targets.size();
            n.at(t ? "targets" : "organs_at_risk").at(t ? i : i - p.targets.size())
                .at("region").fail("region is prescribed twice (as target or organ at risk)");
        }
    }
    if (n.has("max_sources")) p.maxSources = unsigned(n.at("max_sources").count(1, 1e6));
    if (n.has("drop_below_percent")) p.dropBelow = percentField(n, "drop_below_percent");
    if (n.has("solver")) p.solver = n.at("solver").string();
    return p;
}

json parseJson(const std::string& text, const std::string& name) {
    try {
        return json::parse(text);
    } catch (const json::parse_error& e) {
        throw ParameterError(name + ": not valid JSON: " + e.what());
    }
}

}  // namespace

std::string PlanSpec::regionName(uint32_t r) const {
    auto it = regionNames.find(r);
    return it == regionNames.end() ? "region " + std::to_string(r) : it->second;
}

PlanSpec parsePlan(const std::string& text, const std::string& name, const std::string& baseDir) {
    json j = parseJson(text, name);
    Node root{j, name, ""};
    root.allow({"mesh", "regions", "exterior_n", "sources", "simulation", "prescription", "outputs", "comment"});
    PlanSpec p;
    p.file = name;
    readModel(root, p, baseDir);
    // Read first: source powers need its treatment time.
    double T = NAN;
    p.prescription = readPrescription(root.at("prescription"), p.regionNames, *p.mesh, p.photosensitizerMuA, T);
    readSources(root, p);
    readSimulation(root, p, baseDir);
    readSlices(root, p);
    return p;
}

PlanSpec readPlanFile(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw ParameterError(path + ": cannot open the plan file");
    std::stringstream ss;
    ss << in.rdbuf();
    return parsePlan(ss.str(), path, fs::path(path).parent_path().string());
}

Prescription parsePrescription(const std::string& text, const std::string& name,
                               const std::map<uint32_t, std::string>& regionNames, const TetraMesh& mesh,
                               std::vector<CandidateSource>& sources, const std::map<uint32_t, double>& psMuA) {
    json j = parseJson(text, name);
    Node root{j, name, ""};
    double T = NAN;
    Prescription p;
    if (j.is_object() && j.contains("sources")) {
        json rest = j;
        rest.erase("sources");
        p = readPrescription(Node{rest, name, ""}, regionNames, mesh, psMuA, T);
        Node list = root.at("sources");
        std::vector<Node> items = list.array();
        if (items.size() != sources.size())
            list.fail("lists " + std::to_string(items.size()) + " sources, the batch has " + std::to_string(sources.size()));
        for (size_t i = 0; i < items.size(); ++i) {
            items[i].allow({"name", "min_energy_J", "max_energy_J", "min_power_W", "max_power_W"});
            if (items[i].has("name")) sources[i].name = items[i].at("name").string();
            sources[i].minEnergy = energyField(items[i], "min", T, 0);
            sources[i].maxEnergy = energyField(items[i], "max", T, INFINITY);
            if (sources[i].minEnergy > sources[i].maxEnergy) items[i].fail("minimum energy exceeds maximum energy");
        }
    } else {
        p = readPrescription(root, regionNames, mesh, psMuA, T);
    }
    return p;
}

}  // namespace fm::planning
