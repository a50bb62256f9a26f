// SPDX-License-Identifier: GPL-3.0-or-later
// fullmonte-vtk: turns a mesh and fullmonte-run's text outputs into files ParaView opens (.vtu /
// .vtk, plus the boundary surface as .vtp) and, optionally, a PNG of the fluence. Lives beside
// the VTK classes so that everything needing VTK is in Storage/VTK.
#include <memory>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <filesystem>
#include <iostream>
#include <new>
#include <map>
#include <sstream>

#include "Storage/TIMOS/TIMOS.hpp"
#include "Storage/Text/TextFile.hpp"
#include "Storage/TextReader.hpp"
#include "Storage/TimeGated/TimeGatedFile.hpp"
#include "Storage/VTK/FluenceRenderer.hpp"
#include "Storage/VTK/VTKMeshReader.hpp"
#include "Storage/VTK/VTKMeshWriter.hpp"
#include "Storage/VTK/VTKSurfaceWriter.hpp"

using namespace fm;
namespace fs = std::filesystem;

namespace {

const char* kUsage =
    "usage: fullmonte-vtk --mesh MESH --output OUT.vtu [options]\n"
    "  --mesh FILE          TIM-OS .mesh, or a VTK .vtk/.vtu tetra mesh\n"
    "  --region-array NAME  region cell array of a VTK mesh (default: the first of Region, Tissue Type,\n"
    "                       Material, Label, CellEntityIds, gmsh:physical, medit:ref, ... present)\n"
    "  --single-region      a VTK mesh without region labels: every tetra region 1\n"
    "  --allow-defects      accept a mesh with cracks or folded tetras (docs/MESH_CHECKS.md)\n"
    "  --output FILE        .vtu (XML) or .vtk (legacy binary): cell data Region + the arrays below\n"
    "  --results DIR        a fullmonte-run output folder: adds its fluence.txt and volume_energy.txt\n"
    "                       (and the fluence per time gate of fluence_gated.fmtg: Fluence gate K\n"
    "                       [t0-t1 ns], Fluence before/after the gates; docs/TIME_DOMAIN.md)\n"
    "                       (and surface_exit.txt and the exit fluence per time gate of\n"
    "                       surface_exit_gated.fmtg to --surface)\n"
    "  --fluence FILE       per-tetra fluence, one value per line (as fullmonte-run writes)\n"
    "  --energy FILE        per-tetra absorbed energy, one value per line (packet weight)\n"
    "  --unit W|J           what fullmonte-run's --power was: power in W (default) or energy in J\n"
    "  --surface FILE       also write the mesh boundary (.vtp or .vtk) with exit energy/fluence\n"
    "  --png FILE           render the fluence to a PNG (needs X: run under `xvfb-run -a`)\n"
    "  --view slice|surface what the PNG shows (default slice)\n"
    "  --slice x,y,z,nx,ny,nz  slice plane (default: through the mesh centre, normal +z)\n"
    "  --size WxH           PNG size in pixels (default 800x600)\n"
    "  --comment TEXT       stored in the files' Comment field data\n"
    "  --vtk-version V      legacy .vtk file version: 5.1 (default) or 4.2 for VTK 8-era tools and\n"
    "                       ParaView before 5.9\n";

using Args = std::map<std::string, std::string>;

Args parse(int argc, char** argv) {
    static const char* kKeys[] = {"--mesh", "--region-array", "--output", "--results", "--fluence", "--energy",
                                  "--unit", "--surface", "--png", "--view", "--slice", "--size", "--comment",
                                  "--vtk-version"};
    Args a;
    for (int i = 1; i < argc; ++i) {
        std::string k = argv[i];
        if (k == "--help" || k == "-h" || k == "--single-region" || k == "--allow-defects") {
            a[k == "-h" ? "--help" : k] = "";
            continue;
        }
        bool known = false;
        for (auto key : kKeys) known = known || k == key;
        if (!known) throw ParameterError("unknown argument '" + k + "' (see --help)");
        if (i + 1 >= argc) throw ParameterError(k + " needs a value");
        a[k] = argv[++i];
    }
    return a;
}

std::vector<double> numbers(const std::string& key, const std::string& s, char sep, size_t n) {
    std::vector<double> v;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, sep)) {
        char* end = nullptr;
        double x = std::strtod(item.c_str(), &end);
        if (item.empty() || *end || !std::isfinite(x)) throw ParameterError(key + ": '" + item + "' is not a number");
        v.push_back(x);
    }
    if (v.size() != n) throw ParameterError(key + " needs " + std::to_string(n) + " numbers separated by '" + sep + "'");
    return v;
}

TetraMesh readMesh(const Args& a) {
    std::string path = a.at("--mesh");
    std::string ext = fs::path(path).extension().string();
    MeshCheckOptions check;
    check.allowDefects = a.count("--allow-defects") > 0;
    TetraMesh m;
    if (ext == ".vtk" || ext == ".vtu") {
        VTKMeshReader r(path);
        if (a.count("--region-array")) r.regionArrayName(a.at("--region-array"));
        r.singleRegion(a.count("--single-region") > 0);
        r.checkOptions(check);
        r.read();
        m = r.takeMesh();
    } else {
        m = readTIMOSMesh(path, check);
    }
    for (const std::string& w : m.checkReport().warnings()) std::cerr << "fullmonte-vtk: warning: " << w << "\n";
    return m;
}

struct SurfaceExit {
    std::vector<double> energy, fluence;  // per face id, index 0 the dummy
    std::vector<double> fluenceError;     // the same, of a run with standard errors; else empty
};

// surface_exit.txt rows: face p1 p2 p3 energy exit_fluence, and energy_stderr
// exit_fluence_stderr where the header line names them (a run with batches, the default). The
// point ids are checked against the mesh so that results from another mesh are caught instead of
// drawn on the wrong faces.
SurfaceExit readSurfaceExit(const std::string& path, const TetraMesh& mesh) {
    std::string header;
    {
        std::ifstream in(path);
        std::getline(in, header);
    }
    const bool errors = header.rfind("#", 0) == 0 && header.find("exit_fluence_stderr") != std::string::npos;
    TextReader r(path, true);
    SurfaceExit s{std::vector<double>(mesh.faceCount() + 1, 0.0), std::vector<double>(mesh.faceCount() + 1, 0.0), {}};
    if (errors) s.fluenceError.assign(mesh.faceCount() + 1, 0.0);
    for (std::string t = r.token(); !t.empty(); t = r.token()) {
        char* end = nullptr;
        unsigned long f = std::strtoul(t.c_str(), &end, 10);
        if (*end || f == 0 || f > mesh.faceCount()) r.fail("face id '" + t + "' is not a face of the mesh");
        for (int k = 0; k < 3; ++k)
            if (r.count("point id", ~0u) != mesh.face(uint32_t(f)).points[k])
                r.fail("face " + t + " has other points than the mesh's face (results from another mesh?)");
        s.energy[f] = r.number("exit energy");
        s.fluence[f] = r.number("exit fluence");
        if (errors) {
            r.number("exit energy standard error");
            s.fluenceError[f] = r.number("exit fluence standard error");
        }
    }
    return s;
}

// A gated file of listed elements as `count` values per bin (an array over the mesh's tetras or
// face ids): element k at index ids[k] - 1, NaN elsewhere. `what` and `listFile` name the ids in
// the error for a list of another length.
TimeGatedArray spreadListed(const TimeGatedArray& g, const std::vector<uint32_t>& ids, size_t count,
                            const std::string& what, const std::string& listFile, const std::string& file) {
    if (ids.size() != g.elements)
        throw Error(listFile + ": " + std::to_string(ids.size()) + " " + what + " for the " + std::to_string(g.elements) +
                    " elements of " + file + " (files of different runs?)");
    TimeGatedArray full = g;
    full.elements = count;
    full.values.assign(size_t(g.gates.bins()) * count, std::nan(""));
    for (uint32_t b = 0; b < g.gates.bins(); ++b)
        for (size_t k = 0; k < ids.size(); ++k) full.values[b * count + ids[k] - 1] = g.values[b * g.elements + k];
    full.stderrs.clear();
    return full;
}

// A gated fluence over chosen tetras (--time-gate-regions; `tetrasFile` lists their ids in the
// order of the elements) as one value per tetra of the mesh, NaN where not gated.
TimeGatedArray scatterGatedTetras(const TimeGatedArray& g, const std::string& tetrasFile, const TetraMesh& mesh) {
    const GatedElementList l = readGatedElementList(tetrasFile, false);
    for (size_t k = 0; k < l.ids.size(); ++k)
        if (l.ids[k] > mesh.tetraCount())
            throw Error(tetrasFile + ":" + std::to_string(l.lines[k]) + ": tetra " + std::to_string(l.ids[k]) +
                        " is not a tetra of the mesh (1.." + std::to_string(mesh.tetraCount()) + ")");
    return spreadListed(g, l.ids, mesh.tetraCount(), "tetra ids", tetrasFile, "fluence_gated.fmtg");
}

// surface_exit_gated.fmtg as one value per face id per bin (faceCount values, face f at f - 1;
// NaN on faces not listed, the interior ones, which no surface shows): its elements are the faces
// surface_exit_gated_faces.txt lists (id and points, checked against the mesh as
// surface_exit.txt's rows), or, in a file of quantity 2 (every face id, written before the list
// existed), face i + 1 already.
TimeGatedArray gatedExitPerFace(const std::string& dir, const TetraMesh& mesh) {
    const std::string file = dir + "/surface_exit_gated.fmtg", listFile = dir + "/surface_exit_gated_faces.txt";
    TimeGatedArray g = readTimeGated(file);
    if (g.quantity == GatedQuantity::exitFluence) {
        if (g.elements != mesh.faceCount())
            throw Error(file + ": " + std::to_string(g.elements) + " faces, the mesh has " +
                        std::to_string(mesh.faceCount()) + " (results from another mesh?)");
        g.stderrs.clear();
        return g;
    }
    if (g.quantity != GatedQuantity::exitFluenceListed)
        throw Error(file + ": not an exit fluence file (quantity " + std::to_string(uint32_t(g.quantity)) + ")");
    const GatedElementList l = readGatedElementList(listFile, true);
    for (size_t k = 0; k < l.ids.size(); ++k) {
        const std::string where = listFile + ":" + std::to_string(l.lines[k]) + ": face " + std::to_string(l.ids[k]);
        if (l.ids[k] > mesh.faceCount()) throw Error(where + " is not a face of the mesh");
        for (int j = 0; j < 3; ++j)
            if (l.points[k][j] != mesh.face(l.ids[k]).points[j])
                throw Error(where + " has other points than the mesh's face (results from another mesh?)");
    }
    return spreadListed(g, l.ids, mesh.faceCount(), "faces", listFile, file);
}

// The name of bin b's array of a gated quantity ("Fluence", "Exit fluence").
std::string gatedArrayName(const std::string& what, const TimeGates& g, uint32_t b, const std::string& unit) {
    std::ostringstream name;
    if (b < g.count)
        name << what << " gate " << b << " [" << g.gateStart(b) << "-" << g.gateStop(b) << " ns]";
    else
        name << what << " " << (b == g.earlyBin() ? "before" : "after") << " the gates";
    name << " (" << unit << "/mm^2)";
    return name.str();
}

// One cell array per bin of a time-gated fluence file.
void addGatedData(VTKMeshWriter& w, const TimeGatedArray& g, const std::string& unit) {
    for (uint32_t b = 0; b < g.gates.bins(); ++b)
        w.addData(gatedArrayName("Fluence", g.gates, b, unit),
                  std::vector<double>(g.values.begin() + b * g.elements, g.values.begin() + (b + 1) * g.elements));
}

void addFileData(VTKMeshWriter& w, std::vector<double>& fluence, const Args& a, const std::string& unit,
                 const TetraMesh& mesh) {
    std::string dir = a.count("--results") ? a.at("--results") : "";
    std::string fl = a.count("--fluence") ? a.at("--fluence") : (dir.empty() ? "" : dir + "/fluence.txt");
    std::string en = a.count("--energy") ? a.at("--energy") : (dir.empty() ? "" : dir + "/volume_energy.txt");
    // A results folder with no volume values (not a run's folder, or a run without the volume
    // tally) would give a mesh with only its regions: refused before anything is written.
    if (!dir.empty() && !a.count("--fluence") && !a.count("--energy") && !fs::exists(fl) && !fs::exists(en) &&
        !fs::exists(dir + "/fluence_gated.fmtg"))
        throw ParameterError("--results " + dir + ": no fluence.txt, volume_energy.txt or fluence_gated.fmtg there "
                             "(a fullmonte-run output folder with the volume tally?)");
    if (!fl.empty() && (a.count("--fluence") || fs::exists(fl))) {
        fluence = readValues(fl);
        w.addData("Fluence (" + unit + "/mm^2)", fluence);
    }
    if (!en.empty() && (a.count("--energy") || fs::exists(en)))
        w.addData("Absorbed energy (packet weight)", readValues(en));
    if (!dir.empty() && fs::exists(dir + "/fluence_gated.fmtg")) {
        TimeGatedArray g = readTimeGated(dir + "/fluence_gated.fmtg");
        if (fs::exists(dir + "/fluence_gated_tetras.txt")) g = scatterGatedTetras(g, dir + "/fluence_gated_tetras.txt", mesh);
        addGatedData(w, g, unit);
    }
}

// The surface's writer with its arrays read and checked (before any file is written), not yet
// written.
std::unique_ptr<VTKSurfaceWriter> surfaceWriter(const Args& a, const TetraMesh& mesh, const std::string& unit) {
    auto p = std::make_unique<VTKSurfaceWriter>(a.at("--surface"));
    VTKSurfaceWriter& s = *p;
    s.mesh(mesh);
    if (a.count("--vtk-version")) s.legacyVersion(a.at("--vtk-version"));
    std::string exitFile = a.count("--results") ? a.at("--results") + "/surface_exit.txt" : "";
    if (!exitFile.empty() && fs::exists(exitFile)) {
        SurfaceExit e = readSurfaceExit(exitFile, mesh);
        s.addData("Exit energy (packet weight)", e.energy);
        s.addData("Exit fluence (" + unit + "/mm^2)", e.fluence);
        if (!e.fluenceError.empty()) s.addData("Exit fluence standard error (" + unit + "/mm^2)", e.fluenceError);
    }
    const std::string dir = a.count("--results") ? a.at("--results") : "";
    if (!dir.empty() && fs::exists(dir + "/surface_exit_gated.fmtg")) {  // one array per bin of the gated exit fluence
        const TimeGatedArray g = gatedExitPerFace(dir, mesh);
        for (uint32_t b = 0; b < g.gates.bins(); ++b)
            s.addData(gatedArrayName("Exit fluence", g.gates, b, unit),
                      std::vector<double>(g.values.begin() + b * g.elements, g.values.begin() + (b + 1) * g.elements));
    }
    if (a.count("--comment")) s.addHeaderComment(a.at("--comment"));
    return p;
}

// The picture's renderer, its options checked (before any file is written), not yet drawn.
std::unique_ptr<FluenceRenderer> renderer(const Args& a, const TetraMesh& mesh, const std::vector<double>& fluence,
                                          const std::string& unit) {
    if (fluence.empty()) throw ParameterError("--png needs fluence (--fluence FILE or --results DIR)");
    auto p = std::make_unique<FluenceRenderer>();
    FluenceRenderer& r = *p;
    r.filename(a.at("--png"));
    r.mesh(mesh);
    r.data(fluence, "Fluence (" + unit + "/mm^2)");
    std::string view = a.count("--view") ? a.at("--view") : "slice";
    if (view == "surface") r.surface();
    else if (view != "slice") throw ParameterError("--view must be slice or surface, not '" + view + "'");
    if (a.count("--slice")) {
        auto v = numbers("--slice", a.at("--slice"), ',', 6);
        r.slice({v[0], v[1], v[2]}, {v[3], v[4], v[5]});
    }
    if (a.count("--size")) {
        auto v = numbers("--size", a.at("--size"), 'x', 2);
        auto pixels = [](double x) { return x >= 0 && x <= 1e6 ? unsigned(x) : 0u; };  // 0: refused by size()
        r.size(pixels(v[0]), pixels(v[1]));
    }
    return p;
}

int run(int argc, char** argv) {
    Args a = parse(argc, argv);
    if (a.count("--help") || argc == 1) {
        std::cout << kUsage;
        return argc == 1 ? 1 : 0;
    }
    if (!a.count("--mesh") || !a.count("--output")) throw ParameterError("--mesh and --output are required");
    std::string unit = a.count("--unit") ? a.at("--unit") : "W";
    if (unit != "W" && unit != "J") throw ParameterError("--unit must be W or J, not '" + unit + "'");
    TetraMesh mesh = readMesh(a);
    VTKMeshWriter w(a.at("--output"));
    w.mesh(mesh);
    if (a.count("--vtk-version")) w.legacyVersion(a.at("--vtk-version"));
    std::vector<double> fluence;
    addFileData(w, fluence, a, unit, mesh);
    const std::unique_ptr<FluenceRenderer> picture = a.count("--png") ? renderer(a, mesh, fluence, unit) : nullptr;
    const std::unique_ptr<VTKSurfaceWriter> surface = a.count("--surface") ? surfaceWriter(a, mesh, unit) : nullptr;
    if (a.count("--comment")) w.addHeaderComment(a.at("--comment"));
    w.write();
    std::cout << "fullmonte-vtk: wrote " << a.at("--output") << " (" << mesh.tetraCount() << " tetras)\n";
    if (surface) {
        surface->write();
        std::cout << "fullmonte-vtk: wrote " << a.at("--surface") << "\n";
    }
    if (picture) {
        picture->write();
        std::cout << "fullmonte-vtk: wrote " << a.at("--png") << "\n";
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::bad_alloc&) {
        std::cerr << "fullmonte-vtk: error: out of memory (a memory allocation failed); use a smaller mesh "
                     "or raise the memory limit\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "fullmonte-vtk: error: " << e.what() << "\n";
        return 1;
    }
}
