// SPDX-License-Identifier: GPL-3.0-or-later
// fullmonte-mcml: MCML's command line on FullMonte's engine. Runs every run of an .mci file
// through the layered model and writes each .mco it names, in MCML's ASCII format.
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <vector>

#include "Apps/AppMain.hpp"
#include "Common/ProgressBar.hpp"
#include "Common/Errors.hpp"
#include "Kernels/CPU/CpuKernel.hpp"
#include "Common/WholeNumber.hpp"
#include "Kernels/Dispatch.hpp"
#include "Kernels/BatchMeans.hpp"
#include "Kernels/McmlKernel.hpp"
#include "Kernels/McmlRecords.hpp"
#include "Storage/Detected/DetectedFile.hpp"
#include "Storage/Detected/MchFile.hpp"
#include "Storage/MCML/MCMLKernelRun.hpp"
#include "Common/ResourceLimits.hpp"
#include "Kernels/Tuning.hpp"
#include "Storage/AtomicFile.hpp"
#include "Storage/OutputFolder.hpp"
#include "Storage/MCML/MCIReader.hpp"
#include "Storage/MCML/MCOWriter.hpp"
#include "Apps/McmlTimeOutput.hpp"
#include "Kernels/TimeGates.hpp"

using namespace fm;
namespace fs = std::filesystem;

namespace {

const char* kUsage =
    "usage: fullmonte-mcml FILE.mci [--threads T] [--seed K] [--kernel cpu|cuda] [--batches B] [--output-dir D] [--quiet]\n"
    "       [--time-gates START,STOP,STEP] [--records [--max-detected N] [--records-radius R] [--mch]]\n"
    "  Runs every run in FILE.mci and writes each .mco it names (relative to the .mci's folder,\n"
    "  or to D; a name may not lead out of that folder, and two runs may not share one).\n"
    "  Run k uses packets after those of runs 1..k-1, so runs are independent.\n"
    "  --threads T   CPU threads of --kernel cpu (default: all cores)\n"
    "  --seed K      random seed (default 1)\n"
    "  --kernel      cpu (default) or cuda\n"
    "  --batches B   contiguous photon batches behind the standard errors (default 10 on the CPU,\n"
    "                1 on the GPU; 1: none);\n"
    "                given explicitly (>= 2), each run also writes NAME_stderr.mco, the standard\n"
    "                error of every value in .mco layout (docs/USER_GUIDE.md)\n"
    "  --output-dir  folder for the .mco files (created if needed)\n"
    "  --max-output-gb G  refuse runs whose .mco files together exceed G GB (default 1)\n"
    "  --quiet       no progress bar\n"
    "  --time-gates START,STOP,STEP  also write NAME_time.txt beside each NAME.mco: Rd, Tt and A per\n"
    "                time gate (ns, on the photon clock), Rd(r,t), Tt(r,t), A(z,t) (docs/TIME_DOMAIN.md)\n"
    "  --records     also write NAME.fmd beside each NAME.mco: one record per photon leaving through\n"
    "                the top (detector 0, Rd) or bottom (detector 1, Tt) surface, with its weight,\n"
    "                exit point, direction, time, scatters and path per layer (docs/DETECTORS.md \"MCML\");\n"
    "                both kernels (cuda: up to 30 layers)\n"
    "  --max-detected N   records kept per run, the lowest photon indices (default 1e6; more are\n"
    "                counted, not kept)\n"
    "  --records-radius R  record only exits within R mm of the beam axis (default: the whole surface)\n"
    "  --mch         also write NAME.mch: the records as an MMC/MCX .mch file\n";

struct Args {
    std::string mci, kernel = "cpu", outputDir;
    uint64_t seed = 1;
    uint64_t batches = 0;  // 0: the default (no _stderr.mco files)
    TimeGates gates;       // off unless --time-gates
    double maxOutputBytes = 1e9;
    unsigned threads = 0;
    bool threadsGiven = false;
    bool quiet = false, help = false;
    // --records: per-photon exit records (NAME.fmd, and NAME.mch with --mch)
    bool records = false, mch = false;
    uint64_t maxDetected = 1000000;
    double recordsRadius = 0;  // mm; 0: the whole surface
    std::vector<std::string> recordOptions;  // given options that need --records
};

// A radius in mm: a finite number > 0.
double radiusOption(const std::string& k, const std::string& v) {
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !std::isfinite(x) || !(x > 0))
        throw ParameterError(k + " must be a finite number of mm > 0, got '" + v + "'");
    return x;
}

Args parse(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; ++i) {
        std::string k = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw ParameterError(k + " needs a value");
            return argv[++i];
        };
        if (k == "--help" || k == "-h") a.help = true;
        else if (k == "--quiet") a.quiet = true;
        else if (k == "--threads") {
            a.threads = unsigned(wholeNumberOption(k, value(), 0, 4096));
            a.threadsGiven = true;
        } else if (k == "--seed") a.seed = wholeNumberOption(k, value(), 0, ~uint64_t(0));
        else if (k == "--kernel") a.kernel = value();
        else if (k == "--batches") a.batches = parseBatches(value(), "--batches");
        else if (k == "--output-dir") a.outputDir = value();
        else if (k == "--time-gates") a.gates = parseTimeGates(value(), "--time-gates");
        else if (k == "--records") a.records = true;
        else if (k == "--mch") {
            a.mch = true;
            a.recordOptions.push_back(k);
        } else if (k == "--max-detected") {
            a.maxDetected = wholeNumberOption(k, value(), 1, uint64_t(1) << 40);
            a.recordOptions.push_back(k);
        } else if (k == "--records-radius") {
            a.recordsRadius = radiusOption(k, value());
            a.recordOptions.push_back(k);
        } else if (k == "--max-output-gb") a.maxOutputBytes = 1e9 * double(wholeNumberOption(k, value(), 1, 1000000));
        else if (k.size() > 1 && k[0] == '-') throw ParameterError("unknown argument '" + k + "' (see --help)");
        else if (a.mci.empty()) a.mci = k;
        else throw ParameterError("only one .mci file is taken, got '" + a.mci + "' and '" + k + "'");
    }
    if (a.kernel != "cpu" && a.kernel != "cuda")
        throw ParameterError("--kernel must be cpu or cuda, got '" + a.kernel + "'");
    // The CUDA kernel runs every photon on the GPU: a thread count would be ignored, so it is refused.
    if (!a.records && !a.recordOptions.empty()) throw ParameterError(a.recordOptions[0] + " needs --records");
    if (a.kernel == "cuda" && a.threadsGiven)
        throw ParameterError("--threads sets the CPU kernel's threads; --kernel cuda runs on the GPU");
    return a;
}

// "run.mco" -> "run_stderr.mco": the standard errors beside the values.
std::string stderrName(const std::string& mco) {
    const fs::path p(mco);
    return (p.parent_path() / (p.stem().string() + "_stderr" + p.extension().string())).string();
}

// NAME.fmd / NAME.mch beside NAME.mco: the records of --records.
std::string recordsName(const std::string& mco, const char* extension) {
    return fs::path(mco).replace_extension(extension).string();
}

// NAME_time.txt beside NAME.mco: the time-resolved output of --time-gates.
std::string timeName(const std::string& mco) {
    const fs::path p(mco);
    return (p.parent_path() / (p.stem().string() + "_time.txt")).string();
}

std::string outputFolder(const Args& a) {
    fs::path dir = a.outputDir.empty() ? fs::path(a.mci).parent_path() : fs::path(a.outputDir);
    return dir.empty() ? std::string(".") : dir.string();
}

// Each run's memory, and the .mco files' size against --max-output-gb and the free disk space,
// before any run starts or the output folder is touched.
void checkLimits(const Args& a, const MCMLInput& input) {
    const unsigned threads = a.kernel == "cpu" ? resolveThreads(a.threads) : 1;
    for (size_t k = 0; k < input.runs.size(); ++k)
        requireMemory(mcmlMemoryBytes(mcmlGrid(input.runs[k]), threads),
                      a.mci + ": run " + std::to_string(k + 1) + " (nz=" + std::to_string(input.runs[k].nz) +
                          " nr=" + std::to_string(input.runs[k].nr) + " na=" + std::to_string(input.runs[k].na) +
                          ", " + std::to_string(threads) + " thread(s))",
                      "use fewer bins (nr, nz, na) or fewer threads");
    double bytes = 0;
    for (const MCMLRun& run : input.runs) bytes += mcoFileBytes(run) * (a.batches >= 2 ? 2 : 1);  // + _stderr.mco
    const std::string dir = outputFolder(a);
    if (bytes > a.maxOutputBytes)
        throw ParameterError(a.mci + ": the .mco files of its " + std::to_string(input.runs.size()) +
                             " run(s) would take " + bytesText(bytes) + ", above the limit of " +
                             bytesText(a.maxOutputBytes) + "; use fewer bins (nr, nz, na) or raise --max-output-gb");
    std::error_code ec;
    fs::path probe = dir;
    while (!probe.empty() && !fs::exists(probe, ec)) probe = probe.parent_path();
    requireDiskSpace(bytes, probe.empty() ? "." : probe.string());
}

// Every run's .mco name, checked before the first run starts or the folder is touched. A name from the .mci must
// stay inside the output folder (an uploaded .mci must not write anywhere): no absolute path, no
// '..', no symbolic link leading out; no two runs may write one file.
void checkOutputNames(const Args& a, const MCMLInput& in) {
    const fs::path dir = outputFolder(a);
    const fs::path base = fs::weakly_canonical(fs::absolute(dir));
    std::vector<fs::path> resolved;
    for (size_t k = 0; k < in.runs.size(); ++k) {
        const fs::path name(in.runs[k].outName);
        const std::string what = a.mci + ": run " + std::to_string(k + 1) + ": output name '" +
                                 in.runs[k].outName + "'";
        const std::string inside = " (.mco names must stay inside " + dir.string() + ")";
        if (name.is_absolute()) throw ParameterError(what + " is an absolute path" + inside);
        for (const auto& part : name)
            if (part == "..") throw ParameterError(what + " contains '..'" + inside);
        const fs::path full = fs::weakly_canonical(base / name);
        const fs::path rel = full.lexically_relative(base);
        if (rel.empty() || *rel.begin() == ".." || rel == ".")
            throw ParameterError(what + " leads outside the output folder through a symbolic link" + inside);
        if (fs::is_directory(full)) throw ParameterError(what + ": " + (dir / name).string() + " is a directory");
        for (size_t j = 0; j < resolved.size(); ++j)
            if (resolved[j] == full)
                throw ParameterError(what + " is also the output of run " + std::to_string(j + 1) +
                                     ": one would overwrite the other");
        resolved.push_back(full);
    }
}

void printSummary(size_t k, size_t runs, const std::string& path, const MCMLResult& r,
                  const McmlTallies& t) {
    std::printf("run %zu/%zu: %llu photons in %.3f s (%.0f photons/s, kernel %s) -> %s\n", k + 1, runs,
                (unsigned long long)t.packetsDone, t.seconds, t.packetsDone / std::fmax(t.seconds, 1e-9),
                t.kernel.c_str(), path.c_str());
    std::printf("  Rsp %.6f  Rd %.6f  A %.6f  Tt %.6f\n", r.Rsp, r.Rd, r.A, r.Tt);
    if (const auto& e = r.standardError)
        std::printf("  standard errors (%llu batches): Rd %.2g  A %.2g  Tt %.2g\n", (unsigned long long)r.batches, e->Rd,
                    e->A, e->Tt);
    std::printf("  %.1f interactions per photon, %.3g interactions/s\n",
                double(t.events.absorb) / std::fmax(1.0, double(t.packetsDone)),
                double(t.events.absorb) / std::fmax(t.seconds, 1e-9));
    if (t.kernelSeconds > 0) std::printf("  GPU kernel %.3f s of the %.3f s\n", t.kernelSeconds, t.seconds);
    const Ledger& L = t.ledger;
    if (L.abnormal > 0)
        std::printf("  warning: %.3g of the launched weight was booked abnormal (step/hit guards)\n",
                    L.abnormal / L.launched);
}

// NAME.fmd (and NAME.mch) of a run's records, staged in `out`; a line on what they hold.
void writeRecords(OutputFolder& out, const std::string& mco, bool mch, const DetectedPackets& dp) {
    AtomicFile f(out.staged(recordsName(mco, ".fmd")));
    writeDetected(f.out, dp);
    f.commit();
    if (mch) {
        AtomicFile m(out.staged(recordsName(mco, ".mch")));
        writeMch(m.out, dp);
        m.commit();
    }
    std::printf("  records: %llu exits detected (%llu kept%s); detected weight per launched photon: top %.6g  bottom %.6g\n",
                (unsigned long long)dp.detected, (unsigned long long)dp.records.size(),
                dp.truncated() ? ", the lowest photon indices: raise --max-detected to keep all" : "",
                dp.detectedWeight.at(0) / double(dp.packets), dp.detectedWeight.at(1) / double(dp.packets));
    if (dp.refilledPackets > 0)  // GPU: photons from the lowest one whose record found the buffer full
        std::printf("  records: %llu photons run again to keep the first ones\n", (unsigned long long)dp.refilledPackets);
}

int run(int argc, char** argv) {
    Args a = parse(argc, argv);
    if (a.help || a.mci.empty()) {
        std::cout << kUsage;
        return a.help ? 0 : 1;
    }
    KernelWarmUp warm(a.kernel, {});  // CUDA context creation overlaps reading the .mci
    MCMLInput input = readMCI(a.mci);
    checkOutputNames(a, input);
    checkLimits(a, input);
    warm.join();
    installStopHandlers();
    // The .mco files are written into the folder's staging area and moved into place when every
    // run is done: an interrupted or failed invocation leaves none of them (and no older ones).
    std::vector<std::string> names;
    for (const MCMLRun& run : input.runs) names.push_back(run.outName);
    const bool writeErrors = a.batches >= 2;
    if (writeErrors)
        for (const MCMLRun& run : input.runs) names.push_back(stderrName(run.outName));
    if (a.gates.on())
        for (const MCMLRun& run : input.runs) names.push_back(timeName(run.outName));
    if (a.records)
        for (const MCMLRun& run : input.runs) {
            names.push_back(recordsName(run.outName, ".fmd"));
            if (a.mch) names.push_back(recordsName(run.outName, ".mch"));
        }
    OutputFolder out(outputFolder(a), names);
    ProgressBar bar(!a.quiet);
    uint64_t first = 0;
    for (size_t k = 0; k < input.runs.size(); ++k) {
        const MCMLRun& run = input.runs[k];
        RunOptions opt = mcmlRunOptions(run);
        opt.tuning = tuningFromEnvironment();
        opt.params.seed = a.seed;
        opt.threads = a.threads;
        opt.firstPacket = first;
        opt.batches = a.batches;
        opt.gates = a.gates;
        opt.progress = [&](uint64_t d, uint64_t t) { bar(d, t); };
        opt.cancel = &stopFlag();
        first += run.photons;
        const LayeredModel model = layeredFromMcml(run);
        DetectionSpec records;
        if (a.records) {
            records = layeredDetection(packLayered(model), a.maxDetected, a.recordsRadius);
            opt.detection = &records;
        }
        McmlTallies raw;
        MCMLResult res = runMcml(a.kernel, model, run, opt, &raw);
        if (raw.cancelled) {
            std::cerr << "fullmonte-mcml: interrupted in run " << k + 1 << " after " << raw.packetsDone
                      << " of " << raw.packetsRequested << " photons; no .mco was written\n";
            return stoppedExitStatus();
        }
        AtomicFile f(out.staged(run.outName));
        writeMCO(f.out, res);
        f.commit();
        if (writeErrors && res.standardError) {
            AtomicFile e(out.staged(stderrName(run.outName)));
            writeMCO(e.out, *res.standardError);
            e.commit();
        }
        if (a.gates.on()) {
            AtomicFile tf(out.staged(timeName(run.outName)));
            writeMcmlTimeResolved(tf.out, raw, run);
            tf.commit();
        }
        if (a.records) writeRecords(out, run.outName, a.mch, raw.records);
        printSummary(k, input.runs.size(), (fs::path(out.dir()) / run.outName).string(), res, raw);
    }
    throwIfStopped("fullmonte-mcml");
    out.publish();
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    preferOneCudaQueue();
    return guardedMain("fullmonte-mcml", [&] { return run(argc, argv); });
}
