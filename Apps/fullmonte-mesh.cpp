// SPDX-License-Identifier: GPL-3.0-or-later
// fullmonte-mesh: a segmentation (labelled image, or closed organ surfaces) to a tetrahedral mesh
// whose regions are the labels, written as .vtu/.vtk (VTK builds) or TIM-OS .mesh, with a report
// of tetra count, per-region volumes and element quality.
#include <sys/resource.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>

#include "Common/Errors.hpp"
#include "Common/Text.hpp"
#include "Geometry/Meshing/MeshQuality.hpp"
#include "Geometry/MeshOrder.hpp"
#include "Geometry/MeshRepair.hpp"
#include "Geometry/Meshing/Mesher.hpp"
#include "Common/ResourceLimits.hpp"
#include "Storage/Binary/BinaryMesh.hpp"
#include "Storage/TIMOS/TIMOS.hpp"
#include "fm_config.h"
#if FM_HAVE_VTK
#include "Storage/VTK/VTKImageReader.hpp"
#include "Storage/VTK/VTKMeshReader.hpp"
#include "Storage/VTK/VTKMeshWriter.hpp"
#endif

using namespace fm;

namespace {

const char* kUsage =
    "usage: fullmonte-mesh IMAGE -o OUT [options]           labelled image: .nii .nii.gz .mha .mhd (.vti: VTK builds)\n"
    "       fullmonte-mesh --surface FILE:LABEL ... -o OUT [options]   closed surfaces: .stl .obj .off .ply (.vtp: VTK builds)\n"
    "       fullmonte-mesh --surface FILE.vtp -o OUT [options]   one labelled surface (cell array Labels: behind, in front)\n"
    "       fullmonte-mesh --repair MESH -o OUT [--tolerance MM]   merge coincident vertices of an existing mesh\n"
    "                                (.mesh, or .vtu/.vtk in VTK builds): organs meshed apart become one conforming mesh\n"
    "       fullmonte-mesh --reorder MESH -o OUT   renumber an existing mesh for memory locality (faster runs,\n"
    "                                same results with the tetra ids permuted); the mesher's own output is already so\n"
    "       fullmonte-mesh --convert MESH -o OUT   an existing mesh (.mesh, .fmb; .vtu/.vtk in VTK builds), checked,\n"
    "                                in another format, e.g. -o OUT.fmb for fast loading\n"
    "OUT: .vtu or .vtk (VTK builds; cell array Region = label), .mesh (TIM-OS) or .fmb (FullMonte binary mesh,\n"
    "     docs/BINARY_MESH.md), by extension\n"
    "options (sizes in mm; defaults from the smallest voxel spacing s, or from the surfaces' bounding box):\n"
    "  --cell-size MM           largest tetra circumradius (default 2.5 s)\n"
    "  --facet-size MM          largest surface triangle circumradius (default 2 s)\n"
    "  --facet-distance MM      largest distance of a surface triangle from the true surface (default 0.5 s)\n"
    "  --cell-size-label L=MM,...   cell size per label\n"
    "  --facet-size-label L=MM,...  facet size per label (an interface takes the smaller of its two labels')\n"
    "  --facet-angle DEG        smallest surface triangle angle, <= 30 (default 25)\n"
    "  --radius-edge R          largest tetra circumradius/shortest edge, >= 2 (default 3)\n"
    "  --label-map FILE|a=b,... merge (a=b) or drop (a=0) labels before meshing; 0=K meshes the background as K\n"
    "  --compact-labels         renumber the labels present (after --label-map) to regions 1..N, printing the table\n"
    "  --downsample N           mesh blocks of N^3 voxels as one voxel (their majority label): for images too large\n"
    "                           to mesh at full resolution\n"
    "  --seed N                 random seed: the same seed and options give the same mesh (default 0)\n"
    "  --no-perturb             skip sliver perturbation\n"
    "  --no-exude               skip sliver exudation\n"
    "  --sliver-bound DEG       the optimisers improve tetras whose smallest dihedral angle is below this\n"
    "                           (default 10; 0 = as far as they get, slower)\n"
    "  --time-limit S           time limit per sliver optimiser in seconds (default none)\n"
    "  --quiet                  no progress (the report is still printed)\n"
    "  --tolerance MM           --repair: merge points closer than this (default 1e-6 x the bounding-box diagonal)\n";

double parseNumber(const std::string& text, const std::string& option) {
    size_t used = 0;
    double v = NAN;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != text.size() || !std::isfinite(v))
        throw ParameterError(option + ": '" + text + "' is not a number");
    return v;
}

// "L=MM,L=MM" -> label -> size.
std::map<int32_t, double> parseLabelSizes(const std::string& text, const std::string& option) {
    std::map<int32_t, double> m;
    std::istringstream s(text);
    std::string item;
    while (std::getline(s, item, ',')) {
        size_t eq = item.find('=');
        if (eq == std::string::npos) throw ParameterError(option + ": '" + item + "' is not LABEL=MM");
        double label = parseNumber(item.substr(0, eq), option + " label");
        if (label < 0 || label != std::floor(label)) throw ParameterError(option + ": label '" + item + "' is not an integer >= 0");
        m[int32_t(label)] = parseNumber(item.substr(eq + 1), option + " size");
    }
    if (m.empty()) throw ParameterError(option + ": no LABEL=MM pairs");
    return m;
}

struct Args {
    std::string image, output;
    std::vector<RegionSurface> surfaces;
    std::string labelMap;
    bool compactLabels = false;
    unsigned downsample = 1;
    MeshingOptions options;
    bool quiet = false;
    std::string repair;    // --repair: the mesh to repair instead of meshing
    std::string reorder;   // --reorder: the mesh to renumber for locality instead of meshing
    std::string convert;   // --convert: the mesh to write in another format
    double tolerance = 0;  // --tolerance (mm); 0: relative to the mesh size
};

// FILE:LABEL (a closed surface of one region) or FILE alone (a labelled .vtp surface).
RegionSurface parseSurface(const std::string& text) {
    size_t colon = text.rfind(':');
    if (colon == std::string::npos) {
        if (!endsWith(text, ".vtp"))
            throw ParameterError("--surface: '" + text + "' should be FILE:LABEL (FILE alone: a labelled .vtp surface)");
        return {text, 0, {}};
    }
    if (colon + 1 == text.size()) throw ParameterError("--surface: '" + text + "' should be FILE:LABEL");
    double label = parseNumber(text.substr(colon + 1), "--surface " + text + " label");
    if (label < 1 || label != std::floor(label))
        throw ParameterError("--surface " + text + ": the label must be an integer >= 1 (0 is the outside)");
    return {text.substr(0, colon), int32_t(label)};
}

Args parseArgs(int argc, char** argv) {
    Args a;
    auto value = [&](int& i) -> std::string {
        if (i + 1 >= argc) throw ParameterError(std::string(argv[i]) + " needs a value");
        return argv[++i];
    };
    for (int i = 1; i < argc; ++i) {
        std::string k = argv[i];
        MeshingOptions& o = a.options;
        if (k == "-o" || k == "--output") a.output = value(i);
        else if (k == "--cell-size") o.cellSize = parseNumber(value(i), k);
        else if (k == "--facet-size") o.facetSize = parseNumber(value(i), k);
        else if (k == "--facet-distance") o.facetDistance = parseNumber(value(i), k);
        else if (k == "--facet-angle") o.facetAngle = parseNumber(value(i), k);
        else if (k == "--radius-edge") o.cellRadiusEdgeRatio = parseNumber(value(i), k);
        else if (k == "--cell-size-label") o.cellSizeByLabel = parseLabelSizes(value(i), k);
        else if (k == "--facet-size-label") o.facetSizeByLabel = parseLabelSizes(value(i), k);
        else if (k == "--time-limit") o.optimiserTimeLimit = parseNumber(value(i), k);
        else if (k == "--sliver-bound") o.sliverBound = parseNumber(value(i), k);
        else if (k == "--label-map") a.labelMap = value(i);
        else if (k == "--compact-labels") a.compactLabels = true;
        else if (k == "--downsample") {
            a.downsample = downsampleFactor(parseNumber(value(i), k), k);
        }
        else if (k == "--surface") a.surfaces.push_back(parseSurface(value(i)));
        else if (k == "--no-perturb") o.perturb = false;
        else if (k == "--no-exude") o.exude = false;
        else if (k == "--quiet") a.quiet = true;
        else if (k == "--seed") {
            double s = parseNumber(value(i), k);
            if (s < 0 || s > 4294967295.0 || s != std::floor(s)) throw ParameterError("--seed must be an integer in [0, 2^32)");
            o.seed = uint32_t(s);
        } else if (k == "--repair") a.repair = value(i);
        else if (k == "--reorder") a.reorder = value(i);
        else if (k == "--convert") a.convert = value(i);
        else if (k == "--tolerance") {
            a.tolerance = parseNumber(value(i), k);
            if (!(a.tolerance > 0)) throw ParameterError("--tolerance must be > 0 (mm)");
        }
        else if (!k.empty() && k[0] == '-') throw ParameterError("unknown option " + k);
        else if (a.image.empty()) a.image = k;
        else throw ParameterError("more than one input image: '" + a.image + "' and '" + k + "'");
    }
    if (!a.convert.empty()) {
        if (!a.image.empty() || !a.surfaces.empty() || !a.repair.empty() || !a.reorder.empty())
            throw ParameterError("--convert takes one mesh: give no IMAGE, --surface, --repair or --reorder with it");
        if (a.output.empty()) throw ParameterError("no output: -o OUT.fmb|OUT.mesh|OUT.vtu|OUT.vtk");
        return a;
    }
    if (!a.repair.empty() && !a.reorder.empty()) throw ParameterError("give --repair or --reorder, not both");
    if (!a.repair.empty() || !a.reorder.empty()) {
        const std::string what = a.repair.empty() ? "--reorder" : "--repair";
        if (!a.image.empty() || !a.surfaces.empty())
            throw ParameterError(what + " takes one mesh: give no IMAGE or --surface with it");
        if (!a.reorder.empty() && a.tolerance > 0) throw ParameterError("--tolerance applies to --repair only");
        if (a.output.empty()) throw ParameterError("no output: -o OUT.vtu|OUT.vtk|OUT.mesh|OUT.fmb");
        return a;
    }
    if (a.tolerance > 0) throw ParameterError("--tolerance applies to --repair only");
    if (a.image.empty() && a.surfaces.empty()) throw ParameterError("no input: give an IMAGE or --surface FILE:LABEL");
    if (!a.image.empty() && !a.surfaces.empty()) throw ParameterError("give an IMAGE or --surface files, not both");
    if (a.output.empty()) throw ParameterError("no output: -o OUT.vtu|OUT.vtk|OUT.mesh|OUT.fmb");
    if (!a.surfaces.empty() && (!a.labelMap.empty() || a.compactLabels || a.downsample > 1))
        throw ParameterError("--label-map, --compact-labels and --downsample apply to images only");
    validateMeshingOptions(a.options);
    return a;
}

void checkOutput(const std::string& out) {
    if (endsWith(out, ".mesh") || endsWith(out, ".fmb")) return;
    if (endsWith(out, ".vtu") || endsWith(out, ".vtk")) {
        if (!FM_HAVE_VTK) throw ParameterError("-o " + out + ": .vtu/.vtk need a VTK build; use .mesh (TIM-OS)");
        return;
    }
    throw ParameterError("-o " + out + ": unknown output format (.vtu, .vtk, .mesh or .fmb)");
}

void writeMesh(const std::string& out, const TetraMesh& mesh) {
    if (endsWith(out, ".mesh")) return writeTIMOSMesh(out, mesh);
    if (endsWith(out, ".fmb")) return writeBinaryMesh(out, mesh);
#if FM_HAVE_VTK
    VTKMeshWriter w(out);
    w.mesh(mesh);
    w.addHeaderComment("fullmonte-mesh: Region = label of the segmentation");
    w.write();
#endif
}

LabelImage readImage(const std::string& path) {
    requireMemory(labelImageReadBytes(path), path + ": reading its voxels", kImageTooLargeAdvice);
#if FM_HAVE_VTK
    if (endsWith(path, ".vti")) return readVTKLabelImage(path);
#endif
    return readLabelImage(path);
}

// A mesh file by its extension (.mesh and .fmb by content), checked with `check`.
TetraMesh readMeshFile(const std::string& path, const MeshCheckOptions& check) {
    if (endsWith(path, ".vtu") || endsWith(path, ".vtk")) {
#if FM_HAVE_VTK
        VTKMeshReader r(path);
        r.checkOptions(check);
        r.read();
        return r.takeMesh();
#else
        throw ParameterError(path + ": .vtu/.vtk meshes are read in VTK builds only; use a TIM-OS .mesh");
#endif
    }
    if (!endsWith(path, ".mesh") && !endsWith(path, ".fmb"))
        throw ParameterError(path + ": unknown mesh format (.mesh, .fmb, .vtu or .vtk)");
    return readTIMOSMesh(path, check);
}

// --convert: every check on load, as for a run; the mesh written as it was read.
int convert(const Args& a) {
    TetraMesh mesh = readMeshFile(a.convert, {});
    for (const std::string& w : mesh.checkReport().warnings()) std::cout << "warning: " << w << "\n";
    writeMesh(a.output, mesh);
    std::cout << "wrote " << a.output << " (" << mesh.pointCount() << " points, " << mesh.tetraCount() << " tetras)\n";
    return 0;
}

// --repair: coincident vertices merged; the result must pass every mesh check before it is written.
int repair(const Args& a) {
    // Read with its defects allowed: they are what the repair is for.
    MeshCheckOptions check;
    check.allowDefects = true;
    TetraMesh in = readMeshFile(a.repair, check);
    RepairReport report;
    TetraMesh out = mergeCoincidentVertices(in, a.tolerance, &report);
    std::cout << a.repair << ": " << report.summary() << "\n";
    for (const std::string& e : report.examples) std::cout << "  " << e << "\n";
    for (const std::string& w : out.checkReport().warnings()) std::cout << "warning: " << w << "\n";
    writeMesh(a.output, out);
    std::cout << "wrote " << a.output << "\n";
    return 0;
}

// --reorder: the same mesh numbered for locality (Geometry/MeshOrder.hpp).
int reorder(const Args& a) {
    TetraMesh out = orderForLocality(readMeshFile(a.reorder, {}));
    for (const std::string& w : out.checkReport().warnings()) std::cout << "warning: " << w << "\n";
    writeMesh(a.output, out);
    std::cout << "wrote " << a.output << " (" << out.tetraCount() << " tetras numbered along a Morton curve)\n";
    return 0;
}

void printImage(const std::string& what, const LabelImage& image) {
    std::cout << describeLabelImage(what, image) << "\n";
}

// Refuses, before meshing starts, a mesh whose least size at these options cannot fit in memory.
void requireMeshingMemory(const LabelImage& image, const MeshingOptions& options) {
    MeshingEstimate e = estimateImageMeshing(image, options);
    requireMemory(e.bytes, "meshing: " + e.detail + ",", kMeshTooLargeAdvice);
}

int run(int argc, char** argv) {
    Args a = parseArgs(argc, argv);
    checkOutput(a.output);
    if (!a.convert.empty()) return convert(a);
    if (!a.repair.empty()) return repair(a);
    if (!a.reorder.empty()) return reorder(a);
    if (!a.quiet) a.options.progress = [](const std::string& s) { std::cerr << "fullmonte-mesh: " << s << std::endl; };
    TetraMesh mesh;
    LabelImage image;
    bool fromImage = !a.image.empty();
    if (fromImage) {
        image = readImage(a.image);
        if (!a.labelMap.empty()) {
            bool isFile = std::filesystem::exists(a.labelMap);
            applyLabelMap(image, isFile ? readLabelMapFile(a.labelMap) : parseLabelMap(a.labelMap));
        }
        printImage(a.image, image);
        for (const std::string& w : labelImageWarnings(image)) std::cout << "warning: " << w << "\n";
        // --compact-labels (the mesh's regions are the new numbers, the table printed), --downsample N.
        for (const std::string& line : prepareLabelImage(image, {a.compactLabels, a.downsample})) std::cout << line << "\n";
        requireMeshingMemory(image, a.options);
        mesh = meshLabelImage(image, a.options);
    } else {
        for (RegionSurface& s : a.surfaces)
            if (endsWith(s.file, ".vtp")) {
#if FM_HAVE_VTK
                s.surface = readVTKSurface(s.file);
#else
                throw ParameterError(s.file + ": .vtp surfaces are read in VTK builds only");
#endif
            }
        mesh = meshSurfaces(a.surfaces, a.options);
    }
    std::cout << formatMeshReport(mesh, regionVolumes(mesh, fromImage ? &image : nullptr), meshQuality(mesh));
    writeMesh(a.output, mesh);
    std::cout << "wrote " << a.output << "\n";
    return 0;
}

// Caps the address space at what is in use now plus the memory available, so that a mesh that
// outgrows the machine ends in std::bad_alloc (reported below) instead of the kernel's OOM kill.
void capAddressSpace() {
    uint64_t room = availableMemoryBytes(), inUse = 0;
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("VmSize:", 0) == 0) inUse = std::stoull(line.substr(7)) * 1024;
    rlimit rl{};
    if (room == UINT64_MAX || inUse == 0 || getrlimit(RLIMIT_AS, &rl) != 0) return;
    rlim_t cap = rlim_t(inUse + room);
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur <= cap) return;
    rl.rlim_cur = cap;
    setrlimit(RLIMIT_AS, &rl);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
        std::cout << kUsage;
        return argc < 2 ? 1 : 0;
    }
    capAddressSpace();
    try {
        return run(argc, argv);
    } catch (const std::bad_alloc&) {
        std::cerr << "fullmonte-mesh: out of memory (the limit is the memory available when it started): give a "
                     "larger --cell-size / --facet-size, or --downsample N\n";
    } catch (const ParameterError& e) {
        std::cerr << "fullmonte-mesh: " << e.what() << "\n(fullmonte-mesh --help for usage)\n";
    } catch (const std::exception& e) {
        std::cerr << "fullmonte-mesh: " << e.what() << "\n";
    }
    return 1;
}
