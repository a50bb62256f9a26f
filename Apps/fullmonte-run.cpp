// SPDX-License-Identifier: GPL-3.0-or-later
// fullmonte-run: the command-line contract other tools build on. Reads TIM-OS (or MMC) inputs,
// runs the CPU or CUDA kernel, writes summary.json and per-element text outputs.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <initializer_list>
#include <map>
#include <sstream>
#include <vector>

#include "Apps/AppMain.hpp"
#include "Apps/BatchCommand.hpp"
#include "Apps/GatedOutputs.hpp"
#include "Apps/PhaseTimes.hpp"
#include "Common/ProgressBar.hpp"
#include "Apps/RunSummary.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Geometry/PackedModelCache.hpp"
#include "Common/ParallelFor.hpp"
#include "Geometry/Queries.hpp"
#include "Common/WholeNumber.hpp"
#include "Kernels/Dispatch.hpp"
#include "Kernels/DeviceVisibility.hpp"
#include "Kernels/MPI/MpiRun.hpp"
#include "Common/ResourceLimits.hpp"
#include "Kernels/Tuning.hpp"
#include "Storage/Binary/BinaryMesh.hpp"
#include "Storage/MMC/MMC.hpp"
#include "Storage/OutputFolder.hpp"
#include "Storage/MMC/MMCInput.hpp"
#include "Storage/TIMOS/TIMOS.hpp"
#include "Storage/Text/TextFile.hpp"
#include "Apps/DetectorOutputs.hpp"
#include "Storage/Detected/DetectedFile.hpp"
#include "Storage/Detected/MchFile.hpp"
#include "Geometry/AdjointFluence.hpp"

using namespace fm;

namespace {

const char* kUsage =
    "usage: fullmonte-run --mesh M.mesh --opt O.opt --source S.source --output DIR [options]\n"
    "       fullmonte-run --mmc-node N --mmc-elem E --mmc-prop P (--point x,y,z | --pencil x,y,z,dx,dy,dz) --output DIR\n"
    "       fullmonte-run --mmc SESSION.json|SESSION.inp --output DIR   (MMC's inputs: mesh, media, source,\n"
    "                     photons, seed; --point/--pencil/--packets/--seed override them)\n"
    "       fullmonte-run --mesh M.mesh (--opt O.opt | --batch-opt OPTS) --batch-sources SOURCES --output DIR\n"
    "       fullmonte-run --mesh M.mesh --save-mesh M.fmb   (convert: the checked mesh as a binary mesh)\n"
    "--mesh takes a TIM-OS .mesh or a FullMonte binary mesh .fmb (docs/BINARY_MESH.md), by content\n"
    "options:\n"
    "  --packets N        packets to launch (default: the source file's count, else 1e6)\n"
    "  --seed K           random seed (default 1)\n"
    "  --threads T        CPU threads of --kernel cpu or hybrid and of loading the mesh (default: all\n"
    "                     cores; hybrid: all but one per GPU)\n"
    "  --wmin W           roulette threshold (default 1e-5)\n"
    "  --prwin P          roulette survival probability (default 0.1)\n"
    "  --max-steps N      interactions per packet before it is booked abnormal (default 1e5)\n"
    "  --max-hits N       face crossings per step before it is booked abnormal (default 1e5)\n"
    "                     (a run with more than 0.1% of its launched weight booked abnormal is\n"
    "                     flagged: a warning on stderr and in summary.json \"warnings\")\n"
    "  --batches B        contiguous packet batches behind the standard errors (default 10, at\n"
    "                     most one per packet; on the GPU 10 from 1e8 packets, else 1; 1: none):\n"
    "                     *_stderr.txt, surface_exit.txt columns,\n"
    "                     summary.json \"standard_error\" (docs/USER_GUIDE.md)\n"
    "  --kernel cpu|cuda|hybrid  kernel (default cpu); hybrid: the GPUs and the CPU's threads share\n"
    "                     one run, the CPU joining where it pays (docs/USER_GUIDE.md)\n"
    "  --devices LIST     CUDA devices: comma-separated ids or 'all' (default 0); packets are\n"
    "                     shared out in chunks, results equal a single-device run; under\n"
    "                     mpirun the ranks of a host share its GPUs (or the LIST), one each\n"
    "  --power P          source power (W) or energy (J) that scales fluence.txt (default 1)\n"
    "  --exterior-n N     exterior refractive index for MMC prop files and .inp (default 1)\n"
    "  --no-surface       do not score surface exit energy\n"
    "  --time-gates START,STOP,STEP  time-resolved tallies (docs/TIME_DOMAIN.md): gates of STEP ns\n"
    "                     from START to STOP ns; fluence per tetra and exit fluence per boundary face\n"
    "                     per gate (fluence_gated.fmtg, surface_exit_gated.fmtg and its face list\n"
    "                     surface_exit_gated_faces.txt), per-gate totals (tpsf.txt,\n"
    "                     summary.json \"time_gates\"); what arrives before START or after STOP is\n"
    "                     kept in an early and a late bin, so the bins sum to the CW tallies\n"
    "  --no-gated-volume  with --time-gates: gate only the exit tally (the volume one takes\n"
    "                     8 bytes x tetras x (gates + 2))\n"
    "  --time-gate-regions LIST  with --time-gates: gate the volume tally only in the tetras of\n"
    "                     these regions (ids, commas between), 8 bytes x their tetras x (gates + 2);\n"
    "                     fluence_gated_tetras.txt lists them; exit and CW tallies unchanged\n"
    "  --allow-defects    run on a mesh with cracks or folded tetras (docs/MESH_CHECKS.md): they\n"
    "                     become warnings instead of errors\n"
    "  --no-entry-specular  pencil beams and fibres entering from outside are not Fresnel-reflected\n"
    "                     (FullMonte 2018, TIM-OS, MMC); default: reflected and refracted as MCML\n"
    "  --quiet            no progress bar\n"
    "  --detectors LIST   surface detectors, ';'-separated: x,y,z,r (mm: exits within r of the point) or\n"
    "                     faces:f1,f2,... (boundary face ids); writes detected.fmd (docs/DETECTORS.md);\n"
    "                     --kernel cpu or cuda (one GPU)\n"
    "  --adjoint          also run each detector as a source (its faces emitting inward, cosine law) and\n"
    "                     write adjoint_fluence.fmm: fluence per tetra per detector (docs/DETECTORS.md)\n"
    "  --mch              also write detected.mch: the records as an MMC/MCX .mch file (docs/DETECTORS.md)\n"
    "  --max-detected N   detected-packet records kept (default 1e6; more are counted, not kept)\n"
    "  --tpsf A,B,S       also write detector_tpsf.txt: detected weight per gate, A to B ns by S ns\n"
    "  --replay F.fmd     replay the packets of F.fmd (same model, source, --detectors, --wmin, --prwin,\n"
    "                     and the --kernel that detected them)\n"
    "                     and write jacobian.txt (d(detected signal)/d(mu_a) per tetra and detector)\n"
    "  --save-mesh F.fmb  also write the mesh read (TIM-OS, MMC or .fmb) as a binary mesh; without\n"
    "                     --output, only that (no run)\n"
    "batch (one run per source file, or per row of one .source file, x each material set):\n"
    "  --batch-sources S  a folder of .source files, one .source file (a run per row), or a list\n"
    "                     file naming .source files one per line (relative to the list)\n"
    "  --batch-opt O      material sets to sweep: a folder of .opt files, one .opt, or a list\n"
    "                     writes DIR/fluence_matrix.fmm (tetras x runs, docs/FLUENCE_MATRIX.md),\n"
    "                     fluence_matrix.h5 (HDF5 builds) and summary.json with per-run ledgers;\n"
    "                     with --time-gates each run's gated outputs in DIR/run_NNNN/ (one process)\n"
    "one process serving many runs (the mesh read once, CUDA started once, the mesh kept on the GPU):\n"
    "  --serve FILE       read runs from FILE ('-' = stdin), one per line: the options that change\n"
    "                     per run (--source/--point/--pencil or --batch-sources, --opt, --packets,\n"
    "                     --seed, --output ...), added to this command line's; prints\n"
    "                     'served LINE DIR ok|error|interrupted' per line\n";

struct Args {
    std::map<std::string, std::string> v;
    std::map<std::string, bool> flags;
    bool has(const std::string& k) const { return v.count(k) > 0; }
    std::string get(const std::string& k, const std::string& def = "") const {
        auto it = v.find(k);
        return it == v.end() ? def : it->second;
    }
};

// Adds argv[1..argc-1] to `a` (a later value replaces an earlier one).
void parseInto(Args& a, int argc, char** argv);

Args parse(int argc, char** argv) {
    Args a;
    parseInto(a, argc, argv);
    return a;
}

void parseInto(Args& a, int argc, char** argv) {
    static const char* kFlags[] = {"--no-surface", "--quiet", "--help", "--allow-defects", "--no-entry-specular",
                                   "--no-gated-volume", "--mch", "--adjoint"};
    static const char* const kValues[] = {"--mesh", "--opt", "--source", "--packets", "--seed", "--threads",
                                    "--wmin", "--prwin", "--kernel", "--output", "--power", "--mmc-node",
                                    "--mmc-elem", "--mmc-prop", "--point", "--pencil", "--exterior-n",
                                    "--max-steps", "--max-hits", "--devices", "--batch-sources", "--batch-opt",
                                    "--mmc", "--batches", "--serve", "--save-mesh",
                                    "--time-gates", "--time-gate-regions", "--detectors",
                                    "--max-detected", "--tpsf", "--replay"};
    for (int i = 1; i < argc; ++i) {
        std::string k = argv[i];
        bool known = false;
        for (auto f : kFlags) if (k == f) { a.flags[k] = true; known = true; }
        for (auto f : kValues)
            if (k == f) {
                if (i + 1 >= argc) throw ParameterError(k + " needs a value");
                // An empty value (an unset shell variable) is no value: "--output ''" would
                // write into the current folder.
                if (!*argv[i + 1]) throw ParameterError(k + " needs a value (it was given an empty one)");
                a.v[k] = argv[++i];
                known = true;
            }
        if (!known) throw ParameterError("unknown argument '" + k + "' (see --help)");
    }
}

double number(const Args& a, const std::string& k, double def) {
    if (!a.has(k)) return def;
    std::string s = a.get(k);
    char* end = nullptr;
    double x = std::strtod(s.c_str(), &end);
    if (end == s.c_str() || *end || !std::isfinite(x)) throw ParameterError(k + ": '" + s + "' is not a number");
    return x;
}

// Parsed as an integer (Common/WholeNumber.hpp): never rounded through double.
uint64_t whole(const Args& a, const std::string& k, uint64_t def, uint64_t max) {
    return a.has(k) ? wholeNumberOption(k, a.get(k), 0, max) : def;
}

// A number in (lo, hi] or [lo, hi) (lowInclusive), checked before it is narrowed to float.
double inRange(const Args& a, const std::string& k, double def, double lo, double hi,
               const std::string& range, bool lowInclusive) {
    double x = number(a, k, def);
    bool ok = lowInclusive ? (x >= lo && x < hi) : (x > lo && x <= hi);
    if (!ok) throw ParameterError(k + " must be in " + range + ", got " + a.get(k));
    return x;
}

std::vector<double> numberList(const std::string& k, const std::string& s, size_t n) {
    std::vector<double> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) {
        char* end = nullptr;
        double x = std::strtod(item.c_str(), &end);
        if (end == item.c_str() || *end || !std::isfinite(x)) throw ParameterError(k + ": '" + item + "' is not a number");
        out.push_back(x);
    }
    if (n && out.size() != n) throw ParameterError(k + " needs " + std::to_string(n) + " comma-separated numbers");
    if (out.empty()) throw ParameterError(k + " needs at least one number");
    return out;
}

// packModel's errors (a region without material, a source outside the mesh) come from the
// files together: name them, so the message says where to look.
std::shared_ptr<const KernelInput> packWithContext(const Args& a, PackedModelCache& packed, const TetraMesh& mesh,
                                                   const MaterialSet& mats, const Source& src) {
    try {
        return packed.pack(mesh, mats, src);
    } catch (const ModelError& e) {
        std::string files;
        for (const char* k : {"--mesh", "--opt", "--source", "--mmc-node", "--mmc-elem", "--mmc-prop", "--mmc"})
            if (a.has(k)) files += (files.empty() ? "" : ", ") + a.get(k);
        throw ModelError(files + ": " + e.what());
    }
}

void showWarnings(const std::vector<std::string>& w) {
    for (const std::string& line : w) std::cerr << "fullmonte-run: warning: " << line << "\n";
}

// --devices: comma-separated CUDA device ids or "all" ({-1}); empty when not given.
std::vector<int> deviceList(const Args& a, const std::string& kernel) {
    std::vector<int> devices;
    if (!a.has("--devices")) return devices;
    if (kernel != "cuda" && kernel != "hybrid") throw ParameterError("--devices needs --kernel cuda or hybrid");
    if (a.get("--devices") == "all") return {-1};
    std::stringstream ss(a.get("--devices"));
    for (std::string item; std::getline(ss, item, ',');)
        devices.push_back(int(wholeNumberOption("--devices", item, 0, 1023)));
    if (devices.empty()) throw ParameterError("--devices needs at least one device id");
    return devices;
}

// The text outputs' size: two values of up to 17 characters a tetra, a line of ~80 a boundary face.
double outputBytes(const TetraMesh& mesh, const RunOptions& opt) {
    const double gated = (opt.outputs.gatedVolume ? gatedArrayBytes(opt.gates, gatedVolumeStride(opt.gates, mesh.tetraCount())) : 0) +
                         (opt.outputs.gatedSurface ? gatedArrayBytes(opt.gates, gatedSurfaceStride(mesh.boundaryFaces().size())) : 0);
    return 36.0 * double(mesh.tetraCount()) + (opt.outputs.surface ? 80.0 * double(mesh.boundaryFaces().size()) : 0) +
           2 * gated + 4096.0;
}

// --time-gates and --no-gated-volume into opt (after --no-surface): the gated volume tally,
// and the gated exit tally where the exit tally is kept.
void applyTimeGates(const Args& a, RunOptions& opt) {
    const bool noVolume = a.flags.count("--no-gated-volume") > 0;
    if (!a.has("--time-gates")) {
        if (noVolume) throw ParameterError("--no-gated-volume needs --time-gates");
        return;
    }
    opt.gates = parseTimeGates(a.get("--time-gates"), "--time-gates");
    opt.outputs.gatedVolume = !noVolume;
    opt.outputs.gatedSurface = opt.outputs.surface;
    if (!opt.outputs.gated())
        throw ParameterError("--time-gates with --no-gated-volume and --no-surface leaves no tally to gate");
}

// --time-gate-regions LIST (after applyTimeGates): the gated volume tally only over the tetras of
// the listed regions of the mesh (TimeGates::tetras).
void applyGateRegions(const Args& a, const TetraMesh& mesh, RunOptions& opt) {
    if (!a.has("--time-gate-regions")) return;
    if (!opt.gates.on()) throw ParameterError("--time-gate-regions needs --time-gates");
    if (!opt.outputs.gatedVolume)
        throw ParameterError("--time-gate-regions chooses the tetras of the gated volume tally: not with --no-gated-volume");
    std::vector<uint32_t> region(mesh.tetraCount() + 1, 0);
    for (uint32_t t = 1; t <= mesh.tetraCount(); ++t) region[t] = mesh.region(t);
    opt.gates.tetras = gatedTetras(region, parseRegionList(a.get("--time-gate-regions"), "--time-gate-regions"),
                                   "--time-gate-regions");
}

// The tallies of a complete run, written into the staging folder; with standard errors, each
// beside its value (the conversions to fluence are linear, so errors convert as values do).
void writeOutputs(const OutputFolder& out, const TetraMesh& mesh, const MaterialSet& mats, const RunResult& r,
                  double power) {
    const double scale = power / double(r.packetsDone);
    const TallyErrors& se = r.standardError;
    writeValues(out.staged("volume_energy.txt"), r.volume);
    writeValues(out.staged("fluence.txt"), volumeFluence(mesh, mats, r.volume, scale));
    if (se.available()) {
        writeValues(out.staged("volume_energy_stderr.txt"), se.volume);
        writeValues(out.staged("fluence_stderr.txt"), volumeFluence(mesh, mats, se.volume, scale));
    }
    if (r.surface.empty()) return;
    std::vector<double> exitFluence = surfaceFluence(mesh, r.surface, scale);
    std::vector<double> exitError = se.available() ? surfaceFluence(mesh, se.surface, scale) : std::vector<double>{};
    AtomicFile f(out.staged("surface_exit.txt"));
    f.out << "# face p1 p2 p3 energy(packet weight) exit_fluence(per mm^2, scaled to --power)"
          << (se.available() ? " energy_stderr exit_fluence_stderr" : "") << "\n";
    for (uint32_t id : mesh.boundaryFaces()) {
        const auto& F = mesh.face(id);
        f.out << id << ' ' << F.points[0] << ' ' << F.points[1] << ' ' << F.points[2] << ' ';
        putValue(f.out, r.surface[id]);
        f.out << ' ';
        putValue(f.out, exitFluence[id]);
        if (se.available()) {
            f.out << ' ';
            putValue(f.out, se.surface[id]);
            f.out << ' ';
            putValue(f.out, exitError[id]);
        }
        f.out << '\n';
    }
    f.commit();
}

// --replay: the Jacobian of the recorded packets' detectors, written to jacobian.txt.
int replayCommand(const Args& a, OutputFolder& out, const TetraMesh& mesh, const KernelInput& in, const RunOptions& opt,
                  const DetectedPackets& dp) {
    const std::string kernel = a.get("--kernel", "cpu");
    const ReplayResult rr = replayKernel(kernel, in, opt, *opt.detection, dp);
    if (rr.cancelled || stopRequested()) {
        std::cerr << "fullmonte-run: replay interrupted; nothing written\n";
        return stoppedExitStatus();
    }
    if (rr.mismatched)
        throw ParameterError("--replay " + a.get("--replay") + ": " + std::to_string(rr.mismatched) + " of " +
                             std::to_string(rr.replayed) + " packets did not reproduce their records; the mesh, materials, "
                             "source, --detectors, --wmin, --prwin, --max-steps or the build "
                             "differ from the detecting run's");
    writeJacobian(out, mesh, rr, dp.packets);
    out.publish({"jacobian.txt"});
    std::cout << "fullmonte-run: replayed " << rr.replayed << " packets of " << dp.records.size() << " records"
              << (dp.truncated() ? " (the file was truncated: the Jacobian covers its records only)" : "")
              << "\n  jacobian.txt in " << out.dir() << "\n";
    return 0;
}

// Options that contradict each other are refused: none silently wins over another.
void checkConflicts(const Args& a) {
    auto givenOf = [&](std::initializer_list<const char*> keys) {
        std::vector<std::string> given;
        for (const char* k : keys)
            if (a.has(k)) given.push_back(k);
        return given;
    };
    auto exclusive = [&](std::initializer_list<const char*> keys, const std::string& why) {
        auto g = givenOf(keys);
        if (g.size() > 1) throw ParameterError(g[0] + " and " + g[1] + " cannot be combined: " + why);
    };
    exclusive({"--source", "--point", "--pencil"}, "give one source");
    auto timos = givenOf({"--mesh", "--opt"}), mmc = givenOf({"--mmc-node", "--mmc-elem", "--mmc-prop"});
    if (!timos.empty() && !mmc.empty())
        throw ParameterError(timos[0] + " and " + mmc[0] + " cannot be combined: give TIM-OS inputs (--mesh, --opt) "
                             "or MMC inputs (--mmc-node, --mmc-elem, --mmc-prop), not both");
    if (a.has("--batch-sources"))  // without it, --batch-opt alone is refused below
        exclusive({"--opt", "--batch-opt"}, "--batch-opt gives the material sets of a batch");
    if (a.has("--exterior-n") && !a.has("--mmc-prop"))
        throw ParameterError("--exterior-n applies to MMC inputs (--mmc-prop) only; a TIM-OS .opt file gives "
                             "the exterior refractive index itself");
}

// What stays between the runs of one process (--serve): the devices, narrowed once, the mesh,
// read once, and its packed cells (only materials and sources packed per line).
struct Session {
    std::vector<int> devices;
    bool serving = false;
    std::string meshPath;
    std::unique_ptr<TetraMesh> mesh;
    PackedModelCache packed;
    std::shared_ptr<BatchSourceFiles> batchSources;  // --batch-sources as the device choice read them
};

// Only the devices the run uses are visible to CUDA (Kernels/DeviceVisibility.hpp): set before
// the first CUDA call, so the driver initialises and the run creates contexts on those only.
// The CUDA kernel runs every packet on the GPU: a thread count would be ignored, so it is refused.
void refuseThreadsWithCuda(const Args& a) {
    if (a.get("--kernel", "cpu") == "cuda" && a.has("--threads"))
        throw ParameterError("--threads sets the CPU kernel's threads; --kernel cuda runs on the GPU (choose GPUs "
                             "with --devices)");
}

// This command's work for the choice of devices (restrictDevicesForWork): its packets and its
// mesh's tetras, from the command line, the source files and the mesh's first line or .fmb
// header; 0 where they do not tell (MMC inputs, unreadable files). A batch's source files read
// are left in *batchSources.
std::pair<double, size_t> estimatedWork(const Args& a, std::shared_ptr<BatchSourceFiles>* batchSources) {
    size_t tetras = 0;
    const std::string mesh = a.get("--mesh", "");
    if (mesh.size() > 5 && mesh.substr(mesh.size() - 5) == ".mesh") {
        std::ifstream f(mesh);
        double points = 0, cells = 0;
        if (f >> points >> cells && cells >= 1 && cells < 1e12) tetras = size_t(cells);
    } else if (isBinaryMeshFile(mesh)) {
        tetras = size_t(binaryMeshTetraCount(mesh));
    }
    try {
        const double given = a.has("--packets") ? double(whole(a, "--packets", 1, kMaxPackets)) : 0;
        if (a.has("--batch-sources"))
            return {batchPacketEstimate(a.get("--batch-sources"), a.get("--batch-opt", ""), given > 0, uint64_t(given),
                                        batchSources),
                    tetras};
        if (given > 0) return {given, tetras};
        if (a.has("--source")) {
            const double n = readTIMOSSource(a.get("--source")).packetCount;
            return {n > 0 ? n : 1e6, tetras};
        }
        return {1e6, tetras};
    } catch (const std::exception&) {  // the run reports bad input itself
        return {0, tetras};
    }
}

// Under mpirun the ranks of a host share its GPUs (devicesOfLocalRank); alone, --devices all
// brings up only as many as the work is worth.
std::vector<int> sessionDevices(const Args& a, Session& ses, const MpiSession& mpi) {
    refuseThreadsWithCuda(a);
    const std::string kernel = a.get("--kernel", "cpu");
    std::vector<int> devices = deviceList(a, kernel);
    if (kernel != "cuda" && kernel != "hybrid") return devices;
    if (mpi.localSize() > 1) {
        devices = devicesOfLocalRank(devices, mpi.localRank(), mpi.localSize(), visibleDeviceCount());
    } else if (kernel == "cuda" && !a.has("--serve")) {
        const auto [packets, tetras] = estimatedWork(a, &ses.batchSources);
        restrictDevicesForWork(devices, packets, tetras);
    }
    return restrictVisibleDevices(devices);
}

// --mesh FILE, read once per session when serving.
const TetraMesh& sessionMesh(Session& ses, const std::string& path, const MeshCheckOptions& check, TetraMesh& local) {
    if (!ses.serving) return local = readTIMOSMesh(path, check);
    if (!ses.mesh || ses.meshPath != path) {
        ses.mesh.reset();
        ses.mesh = std::make_unique<TetraMesh>(readTIMOSMesh(path, check));
        ses.meshPath = path;
    }
    return *ses.mesh;
}

int runOne(const Args& a, const MpiSession& mpi, Session& ses) {
    checkConflicts(a);
    const bool convertOnly = a.has("--save-mesh") && !a.has("--output");
    // --threads also bounds the threads that read, check and pack the mesh.
    if (a.has("--threads")) setLoadThreads(unsigned(whole(a, "--threads", 0, 4096)));
    if (!a.has("--output") && !convertOnly) throw ParameterError("--output DIR is required");
    const std::string kernel = a.get("--kernel", "cpu");
    refuseThreadsWithCuda(a);
    const std::vector<int> devices = ses.devices;
    // CUDA context creation (~0.2 s) overlaps reading the model; the run reports any error.
    KernelWarmUp warm(mpi.size() == 1 ? kernel : std::string("cpu"), devices);
    PhaseTimes phases;
    TetraMesh localMesh;
    const TetraMesh* meshp = &localMesh;
    MaterialSet mats;
    SourcePtr src;
    double filePackets = 0;
    MeshCheckOptions check;
    check.allowDefects = a.flags.count("--allow-defects") > 0;
    int64_t fileSeed = -1;
    std::string seedNote;  // the MMC file asked for a seed from the clock: which one was drawn
    std::vector<std::string> readerWarnings;  // what an input reader read differently (MMC's background)
    const auto loadStart = std::chrono::steady_clock::now();
    if (a.has("--mmc")) {
        if (a.has("--mesh") || a.has("--mmc-node") || a.has("--source"))
            throw ParameterError("--mmc gives mesh, media and source: leave out --mesh, --mmc-node and --source");
        if (a.has("--exterior-n") && a.get("--mmc").size() > 5 && a.get("--mmc").substr(a.get("--mmc").size() - 5) == ".json")
            throw ParameterError("--exterior-n: an MMC .json gives the exterior index itself (Domain.Media[0].n or Forward.N0)");
        MMCSimulation sim = readMMCInput(a.get("--mmc"), number(a, "--exterior-n", 1.0));
        localMesh = std::move(sim.mesh);
        mats = sim.materials;
        src = sim.source;
        filePackets = double(sim.photons);
        fileSeed = sim.seed;
        seedNote = sim.seedNote;
        readerWarnings = sim.warnings;
    } else if (a.has("--mesh")) {
        if (!a.has("--opt") && !a.has("--batch-opt") && !convertOnly)
            throw ParameterError("--opt (or --batch-opt) is required with --mesh");
        meshp = &sessionMesh(ses, a.get("--mesh"), check, localMesh);
        if (a.has("--opt")) mats = readTIMOSMaterials(a.get("--opt"));
    } else if (a.has("--mmc-node")) {
        if (!a.has("--mmc-elem") || !a.has("--mmc-prop"))
            throw ParameterError("--mmc-node needs --mmc-elem and --mmc-prop");
        std::vector<uint32_t> tetraOf;  // MMC's background elements are left out: say how many
        localMesh = readMMCMesh(a.get("--mmc-node"), a.get("--mmc-elem"), check, &tetraOf);
        uint64_t background = 0;
        std::string note = mmcdetail::backgroundNote(tetraOf, background);
        if (!note.empty()) readerWarnings.push_back(note);
        mats = readMMCMaterials(a.get("--mmc-prop"), number(a, "--exterior-n", 1.0));
    } else {
        throw ParameterError("--mesh (TIM-OS) or --mmc-node (MMC) is required");
    }
    const TetraMesh& mesh = *meshp;
    const double meshSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - loadStart).count();
    phases.mark("read and check the model");
    const MeshBuildTimes& bt = mesh.buildTimes();
    for (const auto& [name, sec] : {std::pair<const char*, double>{"mesh checks and faces", bt.total()},
                                    {"  of which faces", bt.faces}, {"  of which structure checks", bt.structure}})
        phases.note(name, sec);
    std::vector<std::string> warnings = mesh.checkReport().warnings();
    warnings.insert(warnings.begin(), readerWarnings.begin(), readerWarnings.end());
    if (mpi.rank() == 0) showWarnings(warnings);
    if (a.has("--save-mesh") && mpi.rank() == 0) {
        writeBinaryMesh(a.get("--save-mesh"), mesh);
        if (convertOnly)
            std::cout << "fullmonte-run: wrote " << a.get("--save-mesh") << " (" << mesh.pointCount() << " points, "
                      << mesh.tetraCount() << " tetras)\n";
    }
    if (convertOnly) return 0;
    const bool batch = a.has("--batch-sources");
    if (a.has("--batch-opt") && !batch) throw ParameterError("--batch-opt needs --batch-sources");
    if (batch && (a.has("--source") || a.has("--point") || a.has("--pencil")))
        throw ParameterError("--batch-sources replaces --source/--point/--pencil: give one or the other");
    if (batch && a.has("--power"))
        throw ParameterError("--power does not apply to a batch: the fluence matrix is per unit emitted energy");
    if (batch) {
        // batch mode reads its sources itself (below)
    } else if (a.has("--source") && !a.has("--mmc")) {
        auto s = readTIMOSSource(a.get("--source"));
        src = s.source;
        filePackets = s.packetCount;
        if (!a.has("--packets")) {
            if (filePackets > 0)
                std::fprintf(stderr, "fullmonte-run: %.0f packets, the sum of %s's weights (TIM-OS photon counts); "
                                     "--packets N chooses another count\n",
                             filePackets, a.get("--source").c_str());
            else
                std::fprintf(stderr, "fullmonte-run: %s's weights are relative powers, not photon counts (whole numbers "
                                     "adding up to at least %.0f): 1000000 packets; --packets N chooses another count\n",
                             a.get("--source").c_str(), kMinFilePacketCount);
        }
    } else if (a.has("--point")) {
        auto p = std::make_shared<PointSource>();
        auto v = numberList("--point", a.get("--point"), 3);
        p->position = {v[0], v[1], v[2]};
        src = p;
    } else if (a.has("--pencil")) {
        auto p = std::make_shared<PencilBeamSource>();
        auto v = numberList("--pencil", a.get("--pencil"), 6);
        p->position = {v[0], v[1], v[2]};
        p->direction = {v[3], v[4], v[5]};
        src = p;
    } else if (!src) {
        throw ParameterError("a source is required: --source, --point or --pencil");
    }

    RunOptions opt;
    opt.tuning = tuningFromEnvironment();
    uint64_t defPackets = filePackets >= 1 && filePackets <= 1e15 ? uint64_t(filePackets) : 1000000;
    opt.packets = whole(a, "--packets", defPackets, kMaxPackets);
    opt.params.seed = whole(a, "--seed", fileSeed >= 0 ? uint64_t(fileSeed) : 1, ~uint64_t(0));
    const bool seedDrawn = !seedNote.empty() && !a.has("--seed") && !a.has("--replay");
    if (seedDrawn) {  // each rank drew its own: all run rank 0's, which its note names
        opt.params.seed = mpi.fromRankZero(opt.params.seed);
        if (mpi.rank() == 0) std::cerr << "fullmonte-run: note: " << seedNote << " (or --seed " << opt.params.seed << ")\n";
    }
    opt.threads = unsigned(whole(a, "--threads", 0, 4096));
    if (a.has("--batches")) opt.batches = parseBatches(a.get("--batches"), "--batches");
    // An explicit 0 is a mistake (a script computing the count?), not a request for all cores.
    if (a.has("--threads") && opt.threads == 0)
        throw ParameterError("--threads must be at least 1 (leave it out to use all cores)");
    opt.params.wmin = float(inRange(a, "--wmin", 1e-5, 0, 1, "[0, 1)", true));
    opt.params.prwin = float(inRange(a, "--prwin", 0.1, 0, 1, "(0, 1]", false));
    opt.params.maxSteps = uint32_t(whole(a, "--max-steps", 100000, 4000000000u));
    opt.params.maxHits = uint32_t(whole(a, "--max-hits", 100000, 4000000000u));
    if (opt.params.maxSteps == 0 || opt.params.maxHits == 0)
        throw ParameterError("--max-steps and --max-hits must be at least 1");
    opt.outputs.surface = !a.flags.count("--no-surface");
    applyTimeGates(a, opt);
    applyGateRegions(a, mesh, opt);
    double power = number(a, "--power", 1.0);
    if (!(power > 0)) throw ParameterError("--power must be > 0");
    opt.devices = devices;
    validateRunOptions(opt);
    const bool detecting = a.has("--detectors");
    for (const char* k : {"--max-detected", "--tpsf", "--replay"})
        if (a.has(k) && !detecting) throw ParameterError(std::string(k) + " needs --detectors");
    if (a.flags.count("--mch") && !detecting) throw ParameterError("--mch needs --detectors");
    if (a.flags.count("--adjoint") && !detecting) throw ParameterError("--adjoint needs --detectors");
    if (detecting && kernel == "hybrid")
        throw ParameterError("--detectors: the hybrid kernel does not record detected packets (CPU and GPU histories in "
                             "one record set could not be replayed); use --kernel cpu or cuda");
    if (opt.outputs.gated() && batch && mpi.size() > 1)  // a rank sends rank 0 a run's CW tallies only
        throw ParameterError("--time-gates with --batch-sources runs in one process (no mpirun)");
    if (detecting && (batch || mpi.size() > 1))
        throw ParameterError("--detectors: detecting runs are single runs in one process (no --batch-sources, no mpirun)");
    DetectionSpec detection;
    std::unique_ptr<TimeGates> gates;
    DetectedPackets replayed;
    if (detecting) {
        detection = detectorsOption(a.get("--detectors"), whole(a, "--max-detected", 1000000, uint64_t(1) << 40), mesh);
        if (a.has("--tpsf")) gates = std::make_unique<TimeGates>(gatesOption(a.get("--tpsf")));
        if (a.has("--replay")) {
            replayed = readDetected(a.get("--replay"));
            if (a.has("--seed") && opt.params.seed != replayed.seed)
                throw ParameterError("--seed differs from the seed of " + a.get("--replay") + " (" + std::to_string(replayed.seed) + ")");
            opt.params.seed = replayed.seed;
        }
        opt.detection = &detection;
    }
    if (batch) {
        BatchCommand bc;
        bc.mesh = &mesh;
        bc.materials = (a.has("--opt") || a.has("--mmc-prop") || a.has("--mmc")) ? &mats : nullptr;
        bc.materialsFile = a.has("--opt") ? a.get("--opt") : a.has("--mmc") ? a.get("--mmc") : a.get("--mmc-prop");
        bc.sources = a.get("--batch-sources");
        bc.materialSets = a.get("--batch-opt");
        bc.packetsGiven = a.has("--packets");
        bc.specularAtEntry = !a.flags.count("--no-entry-specular");
        bc.opt = opt;
        bc.kernel = kernel;
        bc.output = a.get("--output");
        bc.quiet = a.flags.count("--quiet") > 0;
        bc.cancel = &stopFlag();
        bc.warnings = warnings;
        bc.seedDrawn = seedDrawn;
        bc.sourceFiles = std::move(ses.batchSources);  // read once (sessionDevices), used once
        return runBatchCommand(bc, mpi);
    }

    if (a.flags.count("--no-entry-specular")) setSpecularAtEntry(*src, false);
    phases.mark("read source, options");
    const std::shared_ptr<const KernelInput> packed = packWithContext(a, ses.packed, mesh, mats, *src);
    const KernelInput& in = *packed;
    phases.mark("pack the model");
    checkGatedRun(in, opt);
    if (mpi.rank() == 0) showWarnings(in.warnings);
    warnings.insert(warnings.end(), in.warnings.begin(), in.warnings.end());
    warm.join();
    phases.mark("wait for GPU start-up");
    // Rank 0 locks the folder and clears an earlier run's outputs; every rank stops if it cannot.
    installStopHandlers();
    std::unique_ptr<OutputFolder> out;
    std::exception_ptr openError;
    if (mpi.rank() == 0) {
        try {
            out = std::make_unique<OutputFolder>(a.get("--output"), kRunOutputs);
        } catch (...) {
            openError = std::current_exception();
        }
    }
    if (!mpi.allAgree(!openError)) {
        if (openError) std::rethrow_exception(openError);
        throw Error("rank " + std::to_string(mpi.rank()) + ": stopping, rank 0 cannot write its outputs");
    }

    if (out) requireDiskSpace(outputBytes(mesh, opt), out->dir());

    ProgressBar bar(!a.flags.count("--quiet") && mpi.rank() == 0);
    opt.progress = [&](uint64_t d, uint64_t t) { bar(d, t); };
    opt.cancel = &stopFlag();
    phases.mark("open the output folder");
    if (a.has("--replay")) return replayCommand(a, *out, mesh, in, opt, replayed);
    RunResult r = runDistributed(mpi, kernel, in, opt);
    phases.mark("run");
    phases.note("upload", r.uploadSeconds);
    phases.note("kernel", r.kernelSeconds);
    std::vector<std::vector<double>> adjoint;  // --adjoint: per detector, fluence per tetra
    if (a.flags.count("--adjoint") && !r.cancelled)  // the adjoint runs on the run's kernel
        adjoint = adjointFluence(mesh, mats, detection, opt,
                                 [&kernel](const KernelInput& k, const RunOptions& o) { return runKernel(kernel, k, o); });
    if (mpi.rank() != 0) return r.cancelled || stopRequested() ? stoppedExitStatus() : 0;  // rank 0 writes

    std::map<std::string, std::string> extra{
        {"ranks", std::to_string(mpi.size())},
        {"seed", std::to_string(opt.params.seed)},
        {"seed_drawn", seedDrawn ? "true" : "false"},
        {"wmin", jsonNumber(opt.params.wmin)},
        {"prwin", jsonNumber(opt.params.prwin)},
        {"threads", std::to_string(opt.threads)},
        {"tetras", std::to_string(mesh.tetraCount())},
        {"model_read_seconds", jsonNumber(meshSeconds)},
        {"power", jsonNumber(power)}};
    if (!r.cancelled) {
        std::string w = abnormalWarning(r.ledger);
        if (!w.empty()) warnings.push_back(w), std::cerr << "fullmonte-run: warning: " << w << "\n";
    }
    if (kernel == "hybrid") extra["cpu_packets"] = std::to_string(r.cpuPackets);
    extra["standard_error"] = standardErrorJson(r, [&](size_t t) { return mesh.region(uint32_t(t)); });
    extra["abnormal_warning_threshold"] = jsonNumber(kAbnormalWarningFraction);
    extra["warnings"] = jsonStringList(warnings);
    if (opt.gates.on()) extra["time_gates"] = gatedSummaryJson(r);
    phases.mark("summary values");
    if (detecting) extra["detectors"] = detectorsSummaryJson(r.detected);
    if (!r.cancelled) {
        try {
            writeOutputs(*out, mesh, mats, r, power);
            writeGatedOutputs(*out, mesh, mats, r, power);
            if (detecting) writeDetectorOutputs(*out, r.detected, gates.get());
            if (detecting && a.flags.count("--mch")) writeMch(out->staged("detected.mch"), r.detected);
            if (!adjoint.empty()) writeAdjointFluence(*out, adjoint, adjointFingerprint(mesh, mats, detection, opt));
            writeRunSummary(out->staged("summary.json"), r, extra);
            out->publish();
            phases.mark("write outputs");
        } catch (const Interrupted&) {
            r.cancelled = true;  // stopped while writing: no tallies, as if stopped in the run
        }
    }
    if (r.cancelled) {
        writeRunSummary(out->staged("summary.json"), r, extra, AtomicFile::Stop::ignore);
        out->publish({"summary.json"});
        std::cerr << "fullmonte-run: interrupted after " << r.packetsDone << " of " << r.packetsRequested
                  << " packets; no tallies written (summary.json has status \"interrupted\")\n";
        return stoppedExitStatus();
    }
    const Ledger& L = r.ledger;
    std::cout << "fullmonte-run: " << r.packetsDone << " packets in " << r.seconds << " s ("
              << (r.packetsDone / r.seconds) << " packets/s, kernel " << r.kernel << ")\n";
    if (kernel == "hybrid") std::cout << "  " << r.cpuPackets << " packets on the CPU's threads\n";
    std::cout
              << "  absorbed " << L.absorbed / L.launched << ", exited " << L.exited / L.launched
              << ", specular " << L.specular / L.launched << ", abnormal " << L.abnormal / L.launched
              << "\n  outputs in " << out->dir() << "\n";
    phases.print();
    return 0;
}

// The words of one --serve line ("..." keeps spaces in a word).
std::vector<std::string> splitLine(const std::string& line) {
    std::vector<std::string> w;
    std::string cur;
    bool quoted = false, any = false;
    for (char c : line) {
        if (c == '"') {
            quoted = !quoted;
            any = true;
        } else if (!quoted && (c == ' ' || c == '\t' || c == '\r')) {
            if (any) w.push_back(cur);
            cur.clear();
            any = false;
        } else {
            cur += c;
            any = true;
        }
    }
    if (quoted) throw ParameterError("unbalanced quote");  // the caller names the line
    if (any) w.push_back(cur);
    return w;
}

// --serve: one run (or batch) per line of FILE, each with this command line's options plus the
// line's. The process, its CUDA contexts, the mesh read from --mesh and the mesh kept on each
// GPU serve every line. A failing line is reported and the next one runs; the exit status is 1
// when any line failed.
int serve(const Args& base, const MpiSession& mpi, Session& ses) {
    if (mpi.size() > 1) throw ParameterError("--serve runs in one process (not under mpirun)");
    const std::string file = base.get("--serve");
    std::ifstream f;
    if (file != "-") {
        f.open(file);
        if (!f) throw ParameterError("--serve " + file + ": cannot open");
    }
    std::istream& in = file == "-" ? std::cin : f;
    ses.serving = true;
    const std::string name = file == "-" ? std::string("stdin") : file;
    KernelWarmUp warm(base.get("--kernel", "cpu"), ses.devices);  // overlaps reading the first line's model
    size_t served = 0, failed = 0;
    std::string line;
    for (int n = 1; !stopRequested() && std::getline(in, line); ++n) {
        const std::string where = name + ":" + std::to_string(n);
        std::string status = "ok", dir;
        try {
            std::vector<std::string> words = splitLine(line);
            if (words.empty() || words[0][0] == '#') continue;
            std::vector<char*> argv{const_cast<char*>("fullmonte-run")};
            for (auto& w : words) argv.push_back(&w[0]);
            Args a = base;
            a.v.erase("--serve");
            parseInto(a, int(argv.size()), argv.data());
            for (const char* k : {"--kernel", "--devices", "--serve", "--mesh", "--mmc", "--mmc-node", "--mmc-elem"})
                if (words.end() != std::find(words.begin(), words.end(), std::string(k)))
                    throw ParameterError(std::string(k) + " belongs on the --serve command line, not on a line");
            dir = a.get("--output");
            warm.join();
            if (runOne(a, mpi, ses) != 0) status = "interrupted";
        } catch (const Interrupted& e) {
            std::cerr << "fullmonte-run: " << where << ": " << e.what() << "\n";
            status = "interrupted";
        } catch (const std::exception& e) {
            std::cerr << "fullmonte-run: " << where << ": error: " << e.what() << "\n";
            status = "error";
        }
        ++served;
        failed += status == "ok" ? 0 : 1;
        std::cout << "served " << n << " " << (dir.empty() ? "-" : dir) << " " << status << std::endl;
    }
    std::cout << "fullmonte-run: served " << served << " lines of " << name << ", " << failed << " not ok" << std::endl;
    if (stopRequested()) return stoppedExitStatus();
    return failed ? 1 : 0;
}

int run(int argc, char** argv, const MpiSession& mpi) {
    Args a = parse(argc, argv);
    if (a.flags.count("--help") || argc == 1) {
        std::cout << kUsage;
        return argc == 1 ? 1 : 0;
    }
    Session ses;
    ses.devices = sessionDevices(a, ses, mpi);
    if (a.has("--serve")) return serve(a, mpi, ses);
    return runOne(a, mpi, ses);
}

}  // namespace

int main(int argc, char** argv) {
    PhaseTimes::processStart();
    preferOneCudaQueue();
    return guardedMain("fullmonte-run", [&] {
        MpiSession mpi(&argc, &argv);
        return run(argc, argv, mpi);
    });
}
