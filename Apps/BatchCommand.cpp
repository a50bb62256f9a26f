// SPDX-License-Identifier: GPL-3.0-or-later
#include "Apps/BatchCommand.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <system_error>
#include <thread>
#include <unistd.h>

#include "Apps/GatedOutputs.hpp"
#include "Apps/RunSummary.hpp"
#include "Common/Errors.hpp"
#include "Common/Text.hpp"
#include "Geometry/BatchModel.hpp"
#include "Geometry/ModelFingerprint.hpp"
#include "Geometry/Queries.hpp"
#include "Kernels/Batch.hpp"
#include "Common/ResourceLimits.hpp"
#include "Storage/FluenceMatrix/FluenceMatrix.hpp"
#include "Storage/OutputFolder.hpp"
#include "Storage/TIMOS/TIMOS.hpp"
#include "fm_config.h"
#if FM_HAVE_HDF5
#include "Storage/FluenceMatrix/FluenceMatrixHDF5.hpp"
#endif

namespace fm {
namespace {

namespace fs = std::filesystem;

struct Entry {
    std::string label;  // file (and row) it came from
    std::string where;  // "LIST:LINE" for errors, or the file
    std::string path;
    int row = 0;        // 1-based row of a multi-row .source file, 0 = the whole file
};

// A folder (every *EXT in it, sorted), one EXT file, or a list file: one path per line,
// relative to the list's folder; blank lines and # comments are skipped.
std::vector<Entry> listInputs(const std::string& arg, const std::string& ext, const std::string& flag) {
    std::vector<Entry> out;
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
        for (const auto& e : fs::directory_iterator(arg))
            if (e.is_regular_file() && e.path().extension() == ext)
                out.push_back({e.path().filename().string(), e.path().string(), e.path().string(), 0});
        std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.label < b.label; });
        if (out.empty()) throw ParameterError(flag + " " + arg + ": no " + ext + " files in this folder");
        return out;
    }
    if (!fs::exists(arg, ec)) throw ParameterError(flag + " " + arg + ": no such file or folder");
    if (endsWith(arg, ext)) return {Entry{fs::path(arg).filename().string(), arg, arg, 0}};
    std::ifstream in(arg);
    if (!in) throw ParameterError(flag + " " + arg + ": cannot open");
    fs::path base = fs::path(arg).parent_path();
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
        auto b = line.find_first_not_of(" \t\r");
        if (b == std::string::npos || line[b] == '#') continue;
        auto e = line.find_last_not_of(" \t\r");
        std::string item = line.substr(b, e - b + 1);
        if (item.find('\0') != std::string::npos) throw FormatError(arg + ":" + std::to_string(n) + ": not a text list of files");
        fs::path p = fs::path(item).is_absolute() ? fs::path(item) : base / item;
        std::string where = arg + ":" + std::to_string(n);
        if (!fs::is_regular_file(p, ec)) throw FormatError(where + ": '" + item + "' is not a readable file");
        out.push_back({item, where, p.string(), 0});
    }
    if (out.empty()) throw FormatError(arg + ": lists no files (one path per line expected)");
    return out;
}

// Errors of a listed file keep its own FILE:LINE and say which list line named it.
template <class F>
auto readListed(const Entry& e, F read) -> decltype(read(e.path)) {
    try {
        return read(e.path);
    } catch (const FormatError& x) {
        if (e.where == e.path) throw;
        throw FormatError(e.where + ": " + x.what());
    }
}

std::string ledgerJson(const RunResult& r) {
    const Ledger& L = r.ledger;
    double n = L.launched > 0 ? L.launched : 1.0;
    std::ostringstream o;
    o << "{\"launched\": " << jsonNumber(L.launched / n) << ", \"specular\": " << jsonNumber(L.specular / n)
      << ", \"absorbed\": " << jsonNumber(L.absorbed / n) << ", \"exited\": " << jsonNumber(L.exited / n)
      << ", \"roulette_gained\": " << jsonNumber(L.rouletteGained / n)
      << ", \"roulette_lost\": " << jsonNumber(L.rouletteLost / n) << ", \"abnormal\": " << jsonNumber(L.abnormal / n)
      << ", \"imbalance\": " << jsonNumber(L.imbalance() / n) << "}";
    return o.str();
}

std::string eventsJson(const Events& e) {
    std::ostringstream o;
    o << "{\"launch\": " << e.launch << ", \"absorb\": " << e.absorb << ", \"scatter\": " << e.scatter
      << ", \"boundary\": " << e.boundary << ", \"tir\": " << e.tir << ", \"fresnel\": " << e.fresnel
      << ", \"refract\": " << e.refract << ", \"interface\": " << e.interface << ", \"exit\": " << e.exit
      << ", \"die\": " << e.die << ", \"win\": " << e.win << ", \"abnormal\": " << e.abnormal << "}";
    return o.str();
}

struct RunRecord {
    bool have = false;
    RunResult r;  // tallies dropped once written
    std::string timeGates = "null";  // the run's summary "time_gates" (gatedSummaryJson), with --time-gates
};

// The folder of batch run j's time-gated outputs inside the output folder: "run_0003/".
std::string gatedRunFolder(size_t j) {
    std::string n = std::to_string(j);
    return "run_" + std::string(n.size() < 4 ? 4 - n.size() : 0, '0') + n + "/";
}

// The run folders (run_NNNN/) in `dir` of runs `runs` and up: left by an earlier batch of more
// runs (or a gated batch before an ungated one), they would make the folder look as if it held
// runs it does not. Each must hold only gated outputs (what batches write there); a folder with
// anything else is the user's, and the batch refuses rather than mix it with its outputs.
std::vector<fs::path> staleRunFolders(const std::string& dir, size_t runs) {
    std::vector<fs::path> stale;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return stale;
    for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
        const std::string name = e.path().filename().string();
        if (name.size() < 8 || name.size() > 23 || name.compare(0, 4, "run_") != 0 ||
            name.find_first_not_of("0123456789", 4) != std::string::npos || !e.is_directory(ec) || e.is_symlink(ec))
            continue;
        const size_t j = size_t(std::stoull(name.substr(4)));
        if (gatedRunFolder(j) != name + "/" || j < runs) continue;  // not a batch's name, or this batch's
        for (const fs::directory_entry& f : fs::directory_iterator(e.path()))
            if (!f.is_regular_file(ec) || f.is_symlink(ec) ||
                std::find(kGatedOutputs.begin(), kGatedOutputs.end(), f.path().filename().string()) == kGatedOutputs.end())
                throw ParameterError("--output " + dir + ": " + name + "/ (a run folder this batch does not write) holds '" +
                                     f.path().filename().string() +
                                     "', which no batch writes; move it out or choose another --output folder");
        stale.push_back(e.path());
    }
    return stale;
}

// Every file the batch may write: the single run's list, and with time gates each run's gated
// outputs in its own folder (before summary.json, the marker published last).
std::vector<std::string> batchOutputs(const BatchCommand& c, size_t runs) {
    std::vector<std::string> names = kRunOutputs;
    if (!c.opt.outputs.gated()) return names;
    std::vector<std::string> gated;
    for (size_t j = 0; j < runs; ++j)
        for (const std::string& f : kGatedOutputs) gated.push_back(gatedRunFolder(j) + f);
    names.insert(names.end() - 1, gated.begin(), gated.end());
    return names;
}

// What the batch is made of, read from the files the command line names.
struct BatchInputs {
    std::vector<SourcePtr> sources;
    std::vector<std::string> srcLabels, srcWhere;  // names in the summary; where, for errors
    std::vector<uint64_t> packets;
    std::vector<MaterialSet> matSets;
    std::vector<std::string> matLabels, matWhere;
};

std::string whereOf(const Entry& e, const std::string& label) {
    return e.where == e.path ? label : e.where + ": " + label;
}

}  // namespace

struct BatchSourceFiles {
    std::string arg;  // the --batch-sources argument
    std::vector<Entry> entries;
    std::vector<TIMOSSources> files;  // [entry]
};

namespace {

std::shared_ptr<BatchSourceFiles> readSourceFiles(const std::string& arg) {
    auto f = std::make_shared<BatchSourceFiles>();
    f->arg = arg;
    f->entries = listInputs(arg, ".source", "--batch-sources");
    for (const Entry& e : f->entries)
        f->files.push_back(readListed(e, [](const std::string& p) { return readTIMOSSource(p); }));
    return f;
}

// Sources: each entry one run; a multi-row .source given directly is one run per row. The files
// as c.sourceFiles holds them, else read here.
void readSources(const BatchCommand& c, BatchInputs& in) {
    const std::shared_ptr<BatchSourceFiles> read =
        c.sourceFiles && c.sourceFiles->arg == c.sources ? c.sourceFiles : readSourceFiles(c.sources);
    const std::vector<Entry>& entries = read->entries;
    // A file's weights are packet counts only where they are TIM-OS photon counts
    // (TIMOSSources::packetCount); relative powers leave the default.
    auto packetsOf = [&](const TIMOSSources& s, double rowWeight) {
        if (c.packetsGiven) return c.opt.packets;
        return s.packetCount > 0 && rowWeight >= 1 ? uint64_t(rowWeight) : uint64_t(1000000);
    };
    const bool splitRows = entries.size() == 1 && entries[0].where == entries[0].path;
    for (size_t i = 0; i < entries.size(); ++i) {
        const Entry& e = entries[i];
        const TIMOSSources& s = read->files[i];
        if (!c.specularAtEntry) setSpecularAtEntry(*s.source, false);
        auto* comp = dynamic_cast<CompositeSource*>(s.source.get());
        if (splitRows && comp && comp->elements.size() > 1) {
            for (size_t k = 0; k < comp->elements.size(); ++k) {
                in.sources.push_back(comp->elements[k]);
                in.srcLabels.push_back(e.label + "#" + std::to_string(k + 1));
                in.srcWhere.push_back(e.label + " row " + std::to_string(k + 1));
                in.packets.push_back(packetsOf(s, comp->elements[k]->power));
            }
        } else {
            in.sources.push_back(s.source);
            in.srcLabels.push_back(e.label);
            in.srcWhere.push_back(whereOf(e, e.label));
            in.packets.push_back(packetsOf(s, s.totalPackets));
        }
    }
}

}  // namespace

double batchPacketEstimate(const std::string& sources, const std::string& materialSets, bool packetsGiven,
                           uint64_t packets, std::shared_ptr<BatchSourceFiles>* read) {
    try {
        BatchCommand c;
        c.sources = sources;
        c.packetsGiven = packetsGiven;
        c.opt.packets = packets;
        c.sourceFiles = readSourceFiles(sources);
        if (read) *read = c.sourceFiles;
        BatchInputs in;
        readSources(c, in);
        const double sets = materialSets.empty() ? 1.0 : double(listInputs(materialSets, ".opt", "--batch-opt").size());
        double total = 0;
        for (uint64_t p : in.packets) total += double(p);
        return total * sets;
    } catch (const std::exception&) {
        return 0;
    }
}

namespace {

// Material sets: --batch-opt, else --opt alone.
void readMaterialSets(const BatchCommand& c, BatchInputs& in) {
    if (c.materialSets.empty()) {
        if (!c.materials) throw ParameterError("--opt or --batch-opt is required");
        in.matSets.push_back(*c.materials);
        in.matLabels.push_back(c.materialsFile);
        in.matWhere.push_back(c.materialsFile);
        return;
    }
    for (const Entry& e : listInputs(c.materialSets, ".opt", "--batch-opt")) {
        in.matSets.push_back(readListed(e, [](const std::string& p) { return readTIMOSMaterials(p); }));
        in.matLabels.push_back(e.label);
        in.matWhere.push_back(whereOf(e, e.label));
    }
}

// The matrix files of rank 0: binary, and HDF5 where built. Columns are streamed as runs end.
class MatrixFiles {
public:
    MatrixFiles(const OutputFolder& out, const FluenceMatrixHeader& h, const std::vector<std::string>& labels) {
        bin_ = std::make_unique<FluenceMatrixWriter>(out.staged("fluence_matrix.fmm"), h);
#if FM_HAVE_HDF5
        h5_ = std::make_unique<FluenceMatrixHDF5Writer>(out.staged("fluence_matrix.h5"), h, labels);
#else
        (void)labels;
#endif
    }
    void writeColumn(size_t j, const std::vector<double>& col) {
        bin_->writeColumn(j, col);
#if FM_HAVE_HDF5
        h5_->writeColumn(j, col);
#endif
    }
    std::vector<std::string> commit() {
        bin_->commit();
#if FM_HAVE_HDF5
        h5_->commit();
        return {"fluence_matrix.fmm", "fluence_matrix.h5"};
#else
        return {"fluence_matrix.fmm"};
#endif
    }

private:
    std::unique_ptr<FluenceMatrixWriter> bin_;
#if FM_HAVE_HDF5
    std::unique_ptr<FluenceMatrixHDF5Writer> h5_;
#endif
};

// The finished runs' fluence columns, made and written off the batch's calling thread: a few
// worker threads turn runs' tallies into columns (fluence per tetra), and the columns go into
// the matrix files one at a time, so that the calling thread hands the GPUs their next runs
// meanwhile instead of waiting for the conversion and the disk. At most `queue` runs' tallies
// wait; a full queue makes add() wait, and the batch's slots then wait for the disk as they
// must. A column that cannot be written stops the batch at the next add() (or in finish()).
class ColumnWriters {
public:
    ColumnWriters(MatrixFiles& files, const TetraMesh& mesh, size_t workers)
        : files_(files), mesh_(mesh), queue_(2 * std::max<size_t>(workers, 1)) {
        try {
            for (size_t i = 0; i < std::max<size_t>(workers, 1); ++i) threads_.emplace_back([this] { work(); });
        } catch (const std::system_error& e) {
            stop();
            throw Error(std::string("batch: cannot start a thread that writes the matrix (") + e.what() + ")");
        }
    }
    ~ColumnWriters() { stop(); }
    ColumnWriters(const ColumnWriters&) = delete;
    ColumnWriters& operator=(const ColumnWriters&) = delete;

    // Column `col` from a run's volume tally (energy per tetra, dummy first) times `scale`.
    void add(size_t col, const MaterialSet& mats, std::vector<double>&& volume, double scale) {
        std::unique_lock<std::mutex> lock(m_);
        space_.wait(lock, [&] { return jobs_.size() < queue_ || error_; });
        if (error_) std::rethrow_exception(error_);
        jobs_.push_back(Job{col, &mats, std::move(volume), scale});
        ready_.notify_one();
    }
    // Waits until every column added is written; rethrows the first error.
    void finish() {
        {
            std::unique_lock<std::mutex> lock(m_);
            space_.wait(lock, [&] { return (jobs_.empty() && busy_ == 0) || error_; });
        }
        stop();
        if (error_) std::rethrow_exception(error_);
    }

private:
    struct Job {
        size_t col;
        const MaterialSet* mats;
        std::vector<double> volume;
        double scale;
    };
    void work() {
        std::unique_lock<std::mutex> lock(m_);
        for (;;) {
            ready_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
            if (jobs_.empty()) return;
            Job j = std::move(jobs_.front());
            jobs_.pop_front();
            ++busy_;
            space_.notify_all();
            lock.unlock();
            std::exception_ptr err;
            try {
                const std::vector<double> column = matrixColumn(volumeFluence(mesh_, *j.mats, j.volume, j.scale));
                j.volume = std::vector<double>();
                std::lock_guard<std::mutex> g(write_);
                files_.writeColumn(j.col, column);
            } catch (...) {
                err = std::current_exception();
            }
            lock.lock();
            --busy_;
            if (err && !error_) error_ = err;
            space_.notify_all();
        }
    }
    void stop() {
        {
            std::lock_guard<std::mutex> g(m_);
            stop_ = true;
            if (error_) jobs_.clear();
        }
        ready_.notify_all();
        for (std::thread& t : threads_)
            if (t.joinable()) t.join();
        threads_.clear();
    }

    MatrixFiles& files_;
    const TetraMesh& mesh_;
    const size_t queue_;
    std::mutex m_, write_;
    std::condition_variable ready_, space_;
    std::deque<Job> jobs_;
    size_t busy_ = 0;
    bool stop_ = false;
    std::exception_ptr error_;
    std::vector<std::thread> threads_;
};

// Threads that make and write columns: a few, leaving the rest of the host to the batch's slots.
size_t columnWorkers() {
    const unsigned n = std::thread::hardware_concurrency();
    return std::clamp<size_t>(n / 4, 1, 4);
}

template <class T, class F>
void jsonList(std::ostream& o, const std::vector<T>& v, F item) {
    o << "[";
    for (size_t i = 0; i < v.size(); ++i) o << (i ? ", " : "") << item(v[i]);
    o << "]";
}

struct SummaryContext {
    const BatchCommand& c;
    const BatchInputs& in;
    const BatchModel& model;
    const BatchSummary& sum;
    const FluenceMatrixHeader& h;
    const std::vector<RunRecord>& records;
    const std::vector<std::string>& files;
    bool complete;
    uint64_t packetsTotal;
};

void writePerRun(std::ostream& o, const SummaryContext& x) {
    for (size_t j = 0; j < x.records.size(); ++j) {
        const RunRecord& rec = x.records[j];
        o << "    {\"run\": " << j << ", \"source\": " << jsonString(x.in.srcLabels[j % x.model.sources])
          << ", \"material_set\": " << jsonString(x.in.matLabels[j / x.model.sources])
          << ", \"seed\": " << x.model.runs[j].seed << ", \"packets_requested\": " << x.model.runs[j].packets;
        if (rec.have) {
            o << ", \"status\": \"" << (rec.r.cancelled ? "interrupted" : "complete") << "\", \"packets\": "
              << rec.r.packetsDone << ", \"seconds\": " << jsonNumber(rec.r.seconds) << ", \"kernel\": "
              << jsonString(rec.r.kernel);
            if (x.c.opt.outputs.gated())
                o << ", \"gated_outputs\": " << jsonString(gatedRunFolder(j)) << ",\n     \"time_gates\": " << rec.timeGates;
            if (rec.r.kernelSeconds > 0)  // GPU: this run's upload is its sources and materials only
                o << ", \"upload_seconds\": " << jsonNumber(rec.r.uploadSeconds) << ", \"kernel_seconds\": "
                  << jsonNumber(rec.r.kernelSeconds);
            o << ",\n     \"ledger\": " << ledgerJson(rec.r) << ",\n     \"events\": " << eventsJson(rec.r.events) << "}";
        } else {
            o << ", \"status\": \"not run\"}";
        }
        o << (j + 1 < x.records.size() ? ",\n" : "\n");
    }
}

// abnormalWarning of every run that has one, as "run j (source | material set): ...".
std::vector<std::string> batchWarnings(const SummaryContext& x) {
    std::vector<std::string> w;
    for (size_t j = 0; j < x.records.size(); ++j) {
        if (!x.records[j].have) continue;
        std::string a = abnormalWarning(x.records[j].r.ledger);
        if (!a.empty())
            w.push_back("run " + std::to_string(j) + " (" + x.in.srcLabels[j % x.model.sources] + " | " +
                        x.in.matLabels[j / x.model.sources] + "): " + a);
    }
    return w;
}

void writeBatchSummary(const std::string& path, const SummaryContext& x, AtomicFile::Stop stop) {
    const BatchSummary& sum = x.sum;
    const KernelParams& p = x.c.opt.params;
    AtomicFile f(path, stop);
    auto& o = f.out;
    auto str = [](const std::string& s) { return jsonString(s); };
    o << "{\n  \"mode\": \"batch\",\n  \"status\": \"" << (x.complete ? "complete" : "interrupted") << "\",\n"
      << "  \"kernel\": " << jsonString(sum.kernel) << ",\n  \"ranks\": " << sum.ranks << ",\n"
      << "  \"devices_per_rank\": " << sum.slots << ",\n  \"runs_per_launch\": " << sum.runsPerLaunch << ",\n"
      << "  \"runs_in_flight_per_device\": " << sum.slotsPerDevice << ",\n  \"runs\": " << sum.runs << ",\n  \"runs_per_rank\": ";
    jsonList(o, sum.runsPerRank, [](size_t n) { return std::to_string(n); });
    o << ",\n  \"runs_done\": " << sum.delivered << ",\n  \"sources\": " << x.model.sources << ",\n"
      << "  \"material_sets\": " << x.model.materialSets << ",\n  \"tetras\": " << x.h.rows << ",\n"
      << "  \"seed\": " << p.seed << ",\n  \"seed_drawn\": " << (x.c.seedDrawn ? "true" : "false")
      << ",\n  \"wmin\": " << jsonNumber(p.wmin) << ",\n"
      << "  \"prwin\": " << jsonNumber(p.prwin) << ",\n  \"packets\": " << x.packetsTotal << ",\n"
      << "  \"seconds\": " << jsonNumber(sum.seconds) << ",\n"
      << "  \"packets_per_second\": " << jsonNumber(sum.seconds > 0 ? x.packetsTotal / sum.seconds : 0) << ",\n"
      << "  \"time\": {";
    const auto split = batchTimeSplit(sum);
    for (size_t i = 0; i < split.size(); ++i) o << (i ? ", " : "") << jsonString(split[i].first) << ": " << jsonNumber(split[i].second);
    o << "},\n"
      << "  \"abnormal_warning_threshold\": " << jsonNumber(kAbnormalWarningFraction) << ",\n"
      << "  \"matrix\": {\"files\": ";
    jsonList(o, x.files, str);
    o << ", \"rows\": " << x.h.rows << ", \"cols\": " << x.h.cols << ", \"quantity\": \"fluence\", \"units\": "
      << jsonString(x.h.units) << ", \"column\": \"material_set * sources + source\"},\n  \"source_files\": ";
    jsonList(o, x.in.srcLabels, str);
    o << ",\n  \"material_files\": ";
    jsonList(o, x.in.matLabels, str);
    std::vector<std::string> warnings = x.c.warnings;
    warnings.insert(warnings.end(), x.model.warnings.begin(), x.model.warnings.end());
    const std::vector<std::string> abnormal = batchWarnings(x);
    warnings.insert(warnings.end(), abnormal.begin(), abnormal.end());
    o << ",\n  \"warnings\": " << jsonStringList(warnings);
    o << ",\n  \"per_run\": [\n";
    writePerRun(o, x);
    o << "  ]\n}\n";
    f.commit();
}

BatchOptions batchOptions(const BatchCommand& c) {
    BatchOptions bo;
    bo.kernel = c.kernel;
    bo.params = c.opt.params;
    bo.threads = c.opt.threads;
    bo.devices = c.opt.devices;
    bo.tuning = c.opt.tuning;
    bo.outputs.volume = true;  // the matrix needs only the volume tally
    bo.outputs.surface = false;
    bo.outputs.directed = false;
    bo.outputs.gatedVolume = c.opt.outputs.gatedVolume;  // --time-gates: each run's own gated outputs
    bo.outputs.gatedSurface = c.opt.outputs.gatedSurface;
    bo.gates = c.opt.gates;
    bo.cancel = c.cancel;
    return bo;
}

}  // namespace

int runBatchCommand(const BatchCommand& c, const MpiSession& mpi) {
    const TetraMesh& mesh = *c.mesh;
    BatchInputs in;
    readSources(c, in);
    readMaterialSets(c, in);
    BatchModel model = packBatch(mesh, in.matSets, in.sources, in.packets, c.opt.params.seed, in.srcWhere, in.matWhere);
    if (mpi.rank() == 0)
        for (const std::string& w : model.warnings) std::cerr << "fullmonte-run: warning: " << w << "\n";

    BatchOptions bo = batchOptions(c);
    const bool root = mpi.rank() == 0;
    const bool bar = root && !c.quiet && isatty(2);
    bo.progress = [&](size_t done, size_t total) {
        if (bar) std::fprintf(stderr, "\rbatch: %zu/%zu runs", done, total), std::fflush(stderr);
    };
    FluenceMatrixHeader h;
    h.rows = mesh.tetraCount();
    h.cols = model.runs.size();
    h.sources = model.sources;
    h.materialSets = model.materialSets;
    std::vector<uint64_t> columnPackets;
    for (const BatchRunSpec& r : model.runs) columnPackets.push_back(r.packets);
    h.model = modelFingerprint(mesh, in.matSets, in.sources, columnPackets, c.opt.params);
    std::vector<std::string> runLabels;
    for (size_t m = 0; m < model.materialSets; ++m)
        for (size_t s = 0; s < model.sources; ++s)
            runLabels.push_back(in.srcLabels[s] + (model.materialSets > 1 ? " | " + in.matLabels[m] : ""));

    // Rank 0 locks the folder, clears an earlier run's outputs and stages the matrix files.
    installStopHandlers();
    std::unique_ptr<OutputFolder> out;
    std::unique_ptr<MatrixFiles> matrix;
    std::exception_ptr openError;
    if (root) {
        try {
            const size_t runFolders = c.opt.outputs.gated() ? model.runs.size() : 0;
            staleRunFolders(c.output, runFolders);  // refuses before anything is removed
            out = std::make_unique<OutputFolder>(c.output, batchOutputs(c, model.runs.size()));
            for (const fs::path& p : staleRunFolders(c.output, runFolders)) fs::remove_all(p);  // summary.json is gone
            // The matrix files (binary, and HDF5 where built) hold 8 bytes a tetra and run each;
            // a run's gated files about their arrays' size.
            const double gated = (c.opt.outputs.gatedVolume ? gatedArrayBytes(c.opt.gates, gatedVolumeStride(c.opt.gates, mesh.tetraCount())) : 0) +
                                 (c.opt.outputs.gatedSurface ? gatedArrayBytes(c.opt.gates, gatedSurfaceStride(mesh.boundaryFaces().size())) : 0);
            requireDiskSpace(((FM_HAVE_HDF5 ? 2.0 : 1.0) * 8.0 * double(h.rows) + gated) * double(h.cols), c.output);
            matrix = std::make_unique<MatrixFiles>(*out, h, runLabels);
        } catch (...) {
            openError = std::current_exception();
        }
    }
    // Every rank stops if rank 0 cannot write (the batch is collective: no rank may wait alone).
    if (!mpi.allAgree(!openError)) {
        if (openError) std::rethrow_exception(openError);
        throw Error("rank " + std::to_string(mpi.rank()) + ": stopping, rank 0 cannot write its outputs");
    }
    std::vector<RunRecord> records(model.runs.size());
    std::unique_ptr<ColumnWriters> columns;
    if (root) columns = std::make_unique<ColumnWriters>(*matrix, mesh, columnWorkers());
    auto onResult = [&](size_t run, RunResult&& r) {
        if (!r.cancelled) {
            const MaterialSet& mats = in.matSets[run / model.sources];
            columns->add(run, mats, std::move(r.volume), 1.0 / double(r.packetsDone));
            if (r.gates.on()) {  // as a single run's gated outputs (per J launched), in the run's folder
                writeGatedOutputs(*out, mesh, mats, r, 1.0, gatedRunFolder(run));
                records[run].timeGates = gatedSummaryJson(r);
            }
        }
        r.volume.clear();
        r.gatedVolume.clear();
        r.gatedSurface.clear();
        r.surface.clear();
        r.directed.clear();
        records[run].r = std::move(r);
        records[run].have = true;
    };
    BatchSummary sum = runBatch(model.mesh, model.runs, bo, onResult, &mpi);
    if (!root) return stopRequested() ? stoppedExitStatus() : 0;
    // The batch's time ends when its last column is written.
    const auto drain0 = std::chrono::steady_clock::now();
    columns->finish();
    const double drain = std::chrono::duration<double>(std::chrono::steady_clock::now() - drain0).count();
    sum.seconds += drain;
    sum.tailSeconds += drain;
    if (bar) std::fprintf(stderr, "\n");

    bool complete = !sum.cancelled;
    uint64_t packetsTotal = 0;
    for (auto& rec : records) {
        complete = complete && rec.have && !rec.r.cancelled;
        packetsTotal += rec.have ? rec.r.packetsDone : 0;
    }
    std::vector<std::string> files;
    const std::string summary = out->staged("summary.json");
    if (complete) {
        try {
            files = matrix->commit();
            const SummaryContext done{c, in, model, sum, h, records, files, true, packetsTotal};
            writeBatchSummary(summary, done, AtomicFile::Stop::check);
            out->publish();
            for (const std::string& w : batchWarnings(done)) std::cerr << "fullmonte-run: warning: " << w << "\n";
        } catch (const Interrupted&) {
            complete = false;  // stopped while writing: no matrix, as if stopped in the runs
            files.clear();
        }
    }
    if (!complete) {
        writeBatchSummary(summary, SummaryContext{c, in, model, sum, h, records, files, false, packetsTotal},
                          AtomicFile::Stop::ignore);
        out->publish({"summary.json"});
        std::cerr << "fullmonte-run: batch interrupted after " << sum.delivered << " of " << sum.runs
                  << " runs; no matrix written (summary.json has status \"interrupted\")\n";
        return stoppedExitStatus();
    }
    std::cout << "fullmonte-run: batch of " << sum.runs << " runs (" << model.sources << " sources x "
              << model.materialSets << " material sets), " << packetsTotal << " packets in " << sum.seconds
              << " s (kernel " << sum.kernel << ")\n  fluence matrix " << h.rows << " x " << h.cols << " in "
              << c.output << "\n";
    return 0;
}

}  // namespace fm
