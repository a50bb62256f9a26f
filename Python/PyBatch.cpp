// SPDX-License-Identifier: GPL-3.0-or-later
// Batches of runs over one mesh (Kernels/Batch runBatch, packed by Geometry/BatchModel with the
// packed cells Simulations keep, packedModels(), as Tcl's BatchRunner keeps its own), their
// fluence matrix, fluence-matrix files, and packet traces (Kernels/CPU/TraceCpu). Runs go
// through runCancellable: GIL released, Ctrl-C cancels.
#include <cstring>

#include "Geometry/BatchModel.hpp"
#include "Geometry/Layered.hpp"
#include "Geometry/ModelPacker.hpp"
#include "Geometry/Queries.hpp"
#include "Kernels/Batch.hpp"
#include "Kernels/CPU/TraceCpu.hpp"
#include "Kernels/Dispatch.hpp"
#include "Kernels/RunWarnings.hpp"
#include "Kernels/Tuning.hpp"
#include "Storage/MCML/MCMLKernelRun.hpp"
#include "Python/PyCommon.hpp"
#include "Storage/FluenceMatrix/FluenceMatrix.hpp"
#ifdef FM_PY_VTK
#include "Storage/VTK/VTKTraceWriter.hpp"
#endif
#ifdef FM_PY_HDF5
#include "Storage/FluenceMatrix/FluenceMatrixHDF5.hpp"
#endif

namespace fmpy {
namespace {

using MeshPtr = std::shared_ptr<const fm::TetraMesh>;
using MatsPtr = std::shared_ptr<const fm::MaterialSet>;

// The runs of a batch, run j = material set (j / sources), source (j % sources).
struct BatchResult {
    MeshPtr mesh;
    std::vector<MatsPtr> materialSets;
    size_t sources = 0;
    std::vector<std::shared_ptr<Result>> runs;
    double seconds = 0;
    std::vector<std::pair<std::string, double>> time;  // fm::batchTimeSplit
    std::string kernel;
    std::vector<size_t> runsPerRank;
    fm::ModelFingerprint model;  // taken when the batch ran: its sources and materials may change after

    // Fluence per tetra per J emitted (mm^-2), tetras x runs, column-major (as the file).
    std::vector<double> matrix() const {
        const size_t rows = mesh->tetraCount();
        std::vector<double> out(rows * runs.size());
        for (size_t j = 0; j < runs.size(); ++j) {
            const fm::RunResult& r = runs[j]->run;
            auto col = fm::volumeFluence(*mesh, *runs[j]->materials, r.volume, 1.0 / double(r.packetsDone));
            std::copy(col.begin() + 1, col.end(), out.begin() + ptrdiff_t(j * rows));
        }
        return out;
    }
    fm::FluenceMatrixHeader header() const {
        fm::FluenceMatrixHeader h;
        h.rows = mesh->tetraCount();
        h.cols = runs.size();
        h.sources = sources;
        h.materialSets = materialSets.size();
        h.model = model;
        return h;
    }
};

bool endsWith(const std::string& s, const std::string& e) {
    return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
}

// A (rows, cols) read-only numpy view of a column-major block owned by `owner`.
py::array fortranView(const double* data, size_t rows, size_t cols, py::handle owner) {
    py::array_t<double> a({py::ssize_t(rows), py::ssize_t(cols)},
                          {py::ssize_t(sizeof(double)), py::ssize_t(rows * sizeof(double))}, data, owner);
    py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
    return std::move(a);
}

// {"mesh", "materials", "sources", "runs"}: the 48-bit parts, or None for a file without one.
py::object fingerprintDict(const fm::ModelFingerprint& f) {
    if (f.none()) return py::none();
    py::dict d;
    d["mesh"] = f.mesh;
    d["materials"] = f.materials;
    d["sources"] = f.sources;
    d["runs"] = f.runs;
    return std::move(d);
}

// The inverse of fingerprintDict: None, or a mapping with the four parts (each in [1, 2^48)).
fm::ModelFingerprint fingerprintArg(py::handle f) {
    if (f.is_none()) return {};
    fm::ModelFingerprint m;
    uint64_t* parts[4] = {&m.mesh, &m.materials, &m.sources, &m.runs};
    const char* names[4] = {"mesh", "materials", "sources", "runs"};
    try {
        auto d = f.cast<std::map<std::string, uint64_t>>();
        for (int i = 0; i < 4; ++i) {
            auto it = d.find(names[i]);
            if (it == d.end() || it->second == 0 || it->second > fm::kFingerprintPartMask) throw py::cast_error();
            *parts[i] = it->second;
        }
        if (d.size() != 4) throw py::cast_error();
    } catch (const py::cast_error&) {
        throw py::value_error("write_fluence_matrix: fingerprint must be None or {'mesh', 'materials', 'sources', "
                              "'runs'} with integers in [1, 2^48)");
    }
    return m;
}

void writeMatrix(const std::string& path, const fm::FluenceMatrixHeader& h, const std::vector<double>& values) {
    std::vector<double> col(h.rows);
    auto column = [&](size_t j) {
        std::copy(values.begin() + ptrdiff_t(j * h.rows), values.begin() + ptrdiff_t((j + 1) * h.rows), col.begin());
        return col;
    };
    if (endsWith(path, ".h5") || endsWith(path, ".H5")) {
#ifdef FM_PY_HDF5
        fm::FluenceMatrixHDF5Writer w(path, h);
        for (size_t j = 0; j < h.cols; ++j) w.writeColumn(j, column(j));
        w.commit();
        return;
#else
        throw fm::ParameterError(path + ": this build has no HDF5 (rebuild with -DFM_USE_HDF5=ON, libhdf5-dev); "
                                 "write the binary format (any other extension, e.g. .fmm)");
#endif
    }
    fm::FluenceMatrixWriter w(path, h);
    for (size_t j = 0; j < h.cols; ++j) w.writeColumn(j, column(j));
    w.commit();
}

std::shared_ptr<BatchResult> runBatch(MeshPtr mesh, py::handle materials, const std::vector<fm::SourcePtr>& sources,
                                      py::handle packets, py::handle seed, unsigned threads,
                                      const std::string& kernel, const std::vector<int>& devices, double wmin,
                                      double prwin, uint32_t maxSteps, uint32_t maxHits, py::object progress,
                                      py::handle timeGates, py::handle gateRegions) {
    if (!mesh) throw py::value_error("run_batch: mesh is None");
    std::vector<MatsPtr> sets;
    if (py::isinstance<fm::MaterialSet>(materials)) sets.push_back(materials.cast<MatsPtr>());
    else {
        try {
            sets = materials.cast<std::vector<MatsPtr>>();
        } catch (const py::cast_error&) {
            throw py::type_error("run_batch: materials must be a MaterialSet or a list of MaterialSets");
        }
    }
    if (sets.empty()) throw py::value_error("run_batch: no material sets");
    for (size_t i = 0; i < sets.size(); ++i)
        if (!sets[i]) throw py::value_error("run_batch: materials[" + std::to_string(i) + "] is None");
    if (sources.empty()) throw py::value_error("run_batch: no sources (one run per source and material set)");
    for (size_t i = 0; i < sources.size(); ++i)
        if (!sources[i]) throw py::value_error("run_batch: sources[" + std::to_string(i) + "] is None");
    if (kernel != "cpu" && kernel != "cuda")
        throw py::value_error("run_batch: kernel must be 'cpu' or 'cuda', got '" + kernel + "'");
    if (!progress.is_none() && !PyCallable_Check(progress.ptr()))
        throw py::type_error("run_batch: progress must be callable (runs_done, runs_total) or None");
    fm::RunOptions ro = runOptions(packets, seed, threads, devices, wmin, prwin, maxSteps, maxHits);
    ro.outputs.volume = ro.outputs.surface = true;  // as the batch keeps them (below)
    applyTimeGatesArg(timeGates, ro);
    applyGateRegionsArg(gateRegions, *mesh, ro);
    fm::validateRunOptions(ro);

    std::vector<fm::MaterialSet> plain;
    for (const auto& s : sets) plain.push_back(*s);
    fm::BatchModel bm;
    {
        py::gil_scoped_release nogil;
        bm = fm::packBatch(*mesh, plain, sources, {ro.packets}, ro.params.seed, {}, {}, &packedModels());
    }
    issueWarnings(mesh->checkReport().warnings());
    issueWarnings(bm.warnings);

    fm::BatchOptions bo;
    bo.kernel = kernel;
    bo.params = ro.params;
    bo.threads = ro.threads;
    bo.devices = ro.devices;
    bo.tuning = ro.tuning;
    bo.outputs.volume = bo.outputs.surface = true;
    bo.outputs.directed = false;
    bo.outputs.gatedVolume = ro.outputs.gatedVolume;
    bo.outputs.gatedSurface = ro.outputs.gatedSurface;
    bo.gates = ro.gates;
    std::atomic<bool> cancel{false};
    std::atomic<size_t> done{0}, total{bm.runs.size()};
    bo.cancel = &cancel;
    bo.progress = [&](size_t d, size_t t) {
        done = d;
        total = t;
    };
    auto out = std::make_shared<BatchResult>();
    out->mesh = mesh;
    out->materialSets = sets;
    out->sources = sources.size();
    out->runs.resize(bm.runs.size());
    {
        std::vector<uint64_t> columnPackets;
        for (const fm::BatchRunSpec& r : bm.runs) columnPackets.push_back(r.packets);
        py::gil_scoped_release nogil;
        out->model = fm::modelFingerprint(*mesh, plain, sources, columnPackets, ro.params);
    }
    fm::BatchSummary summary;
    size_t shown = size_t(-1);
    auto tick = [&] {
        if (progress.is_none() || done == shown) return;
        shown = done;
        progress(shown, size_t(total));
    };
    runCancellable([&] {
        summary = fm::runBatch(bm.cells(), bm.runs, bo, [&](size_t i, fm::RunResult&& r) {
            auto res = std::make_shared<Result>();
            res->mesh = mesh;
            res->materials = sets[i / sources.size()];
            res->run = std::move(r);
            out->runs[i] = std::move(res);
        });
    }, cancel, tick);
    bool complete = !summary.cancelled;
    for (const auto& r : out->runs) complete = complete && r && !r->run.cancelled;
    if (!complete)
        throw fm::Error("run_batch: cancelled after " + std::to_string(summary.delivered) + " of " +
                        std::to_string(summary.runs) + " runs; no results kept");
    std::vector<std::string> abnormal;
    for (size_t j = 0; j < out->runs.size(); ++j)
        if (std::string w = fm::abnormalWarning(out->runs[j]->run.ledger); !w.empty())
            abnormal.push_back("run_batch run " + std::to_string(j) + ": " + w);
    issueWarnings(abnormal);
    out->seconds = summary.seconds;
    out->time = fm::batchTimeSplit(summary);
    out->kernel = summary.kernel;
    out->runsPerRank = summary.runsPerRank;
    return out;
}

void bindBatchResult(py::module_& m) {
    py::class_<BatchResult, std::shared_ptr<BatchResult>>(m, "BatchResult", R"doc(
The runs of a batch: run j is material set j // sources with source j % sources. Indexing gives
each run's Result (the same tallies a single run with that source, materials and seed gives);
fluence_matrix() the fluence per tetra per joule emitted (mm^-2), tetras x runs.)doc")
        .def("__len__", [](const BatchResult& b) { return b.runs.size(); })
        .def("__getitem__", [](const BatchResult& b, int64_t i) {
            int64_t n = int64_t(b.runs.size());
            if (i < -n || i >= n)
                throw py::index_error("BatchResult: run " + std::to_string(i) + " does not exist (" +
                                      std::to_string(n) + " runs)");
            return b.runs[size_t(i < 0 ? i + n : i)];
        }, py::arg("run"))
        .def("run", [](const BatchResult& b, int64_t materialSet, int64_t source) {
            if (materialSet < 0 || size_t(materialSet) >= b.materialSets.size() || source < 0 ||
                size_t(source) >= b.sources)
                throw py::index_error("BatchResult.run: no run for material set " + std::to_string(materialSet) +
                                      ", source " + std::to_string(source) + " (" +
                                      std::to_string(b.materialSets.size()) + " x " + std::to_string(b.sources) + ")");
            return b.runs[size_t(materialSet) * b.sources + size_t(source)];
        }, py::arg("material_set"), py::arg("source"), "The Result of one material set and source")
        .def_readonly("sources", &BatchResult::sources, "Sources (runs per material set)")
        .def_property_readonly("material_sets", [](const BatchResult& b) { return b.materialSets.size(); },
                               "Material sets of the sweep")
        .def_readonly("seconds", &BatchResult::seconds, "Wall-clock time of the batch")
        .def_property_readonly("time", [](const BatchResult& b) {
            py::dict d;
            for (const auto& [k, v] : b.time) d[py::str(k)] = v;
            return d;
        }, "Where the batch's seconds went (docs/USER_GUIDE.md, planning loops): setup_seconds (devices and mesh "
           "upload, up to the first kernel), kernel_busy_seconds, kernel_gap_seconds (between kernels, none "
           "running), tail_seconds, deliver_seconds, slot_idle_seconds, slot_held_seconds")
        .def_readonly("kernel", &BatchResult::kernel, "Where it ran, e.g. 'cpu', 'cuda x2'")
        .def_readonly("runs_per_rank", &BatchResult::runsPerRank, "Runs each MPI rank did (one rank: [runs])")
        .def("fluence_matrix", [](const BatchResult& b) {
            auto* heap = new std::vector<double>(b.matrix());
            py::capsule owner(heap, [](void* p) { delete static_cast<std::vector<double>*>(p); });
            return fortranView(heap->data(), b.mesh->tetraCount(), b.runs.size(), owner);
        }, "(tetras, runs) fluence per J emitted, mm^-2 (J/mm^2 per J; x100 for J/cm^2 per J); read-only. "
           "A plan with energies E (J per run) has dose matrix @ E * 100 in J/cm^2")
        .def_property_readonly("fingerprint", [](const BatchResult& b) { return fingerprintDict(b.model); },
                               "The model fingerprint its matrix files carry (docs/FLUENCE_MATRIX.md): "
                               "{'mesh', 'materials', 'sources', 'runs'}, 48-bit integers")
        .def("write_fluence_matrix", [](const BatchResult& b, const std::string& path) {
            auto values = b.matrix();
            py::gil_scoped_release nogil;
            writeMatrix(path, b.header(), values);
        }, py::arg("path"), "Writes the fluence matrix (docs/FLUENCE_MATRIX.md): .h5 as HDF5 where built, "
                            "anything else the binary format")
        .def("__repr__", [](const BatchResult& b) {
            return "<fullmonte.BatchResult " + std::to_string(b.runs.size()) + " runs (" +
                   std::to_string(b.materialSets.size()) + " material sets x " + std::to_string(b.sources) +
                   " sources), " + b.kernel + ">";
        });
}

void bindMatrixFiles(py::module_& m) {
    m.def("read_fluence_matrix", [](const std::string& path) {
        auto* fmx = new fm::FluenceMatrix();
        py::capsule owner(fmx, [](void* p) { delete static_cast<fm::FluenceMatrix*>(p); });
        {
            py::gil_scoped_release nogil;
            *fmx = fm::readFluenceMatrix(path);
        }
        const auto& h = fmx->header;
        py::dict d;
        d["rows"] = h.rows;
        d["cols"] = h.cols;
        d["sources"] = h.sources;
        d["material_sets"] = h.materialSets;
        d["quantity"] = h.quantity == fm::MatrixQuantity::Fluence ? "fluence" : "absorbed_energy";
        d["units"] = h.units;
        d["version"] = h.version;
        d["fingerprint"] = fingerprintDict(h.model);
        return py::make_tuple(fortranView(fmx->values.data(), h.rows, h.cols, owner), d);
    }, py::arg("path"), "A fluence-matrix file (binary format) as ((tetras, runs) read-only array, header dict)");
    m.def("write_fluence_matrix", [](const std::string& path, py::handle matrix, int64_t sources,
                                     py::handle fingerprint) {
        auto a = py::array_t<double, py::array::f_style | py::array::forcecast>::ensure(matrix);
        if (!a || a.ndim() != 2) throw py::value_error("write_fluence_matrix: matrix must be a 2-D array (tetras, runs)");
        fm::FluenceMatrixHeader h;
        h.rows = uint64_t(a.shape(0));
        h.cols = uint64_t(a.shape(1));
        if (sources < 0 || (sources == 0 ? false : h.cols % uint64_t(sources) != 0))
            throw py::value_error("write_fluence_matrix: sources must divide the runs (" + std::to_string(h.cols) + ")");
        h.sources = sources ? uint64_t(sources) : h.cols;
        h.materialSets = h.sources ? h.cols / h.sources : 0;
        h.model = fingerprintArg(fingerprint);
        std::vector<double> values(a.data(), a.data() + a.size());
        py::gil_scoped_release nogil;
        writeMatrix(path, h, values);
    }, py::arg("path"), py::arg("matrix"), py::arg("sources") = 0, py::kw_only(), py::arg("fingerprint") = py::none(),
       "Writes a (tetras, runs) array of fluence per J emitted (mm^-2) as a fluence-matrix file "
       "(sources: runs per material set, 0 = all runs); fingerprint: the model's, as read_fluence_matrix's "
       "header or BatchResult.fingerprint give it, or None (the file then has none and a plan cannot check it)");
}

// ---- traces ----

struct Traces {
    std::shared_ptr<Result> result;
    fm::TraceSet set;
};

py::dtype traceDtype() {
    static_assert(sizeof(fm::TraceStep) == 36, "TraceStep layout");
    py::dict d;
    d["names"] = py::make_tuple("pos", "weight", "step", "path", "time", "tetra_id", "material", "event");
    auto np = py::module_::import("numpy");
    d["formats"] = py::make_tuple(py::make_tuple("<f4", 3), "<f4", "<f4", "<f4", "<f4", "<u4", "<u2", "u1");
    d["offsets"] = py::make_tuple(offsetof(fm::TraceStep, pos), offsetof(fm::TraceStep, w),
                                  offsetof(fm::TraceStep, step), offsetof(fm::TraceStep, path),
                                  offsetof(fm::TraceStep, time), offsetof(fm::TraceStep, tetra),
                                  offsetof(fm::TraceStep, material), offsetof(fm::TraceStep, event));
    d["itemsize"] = sizeof(fm::TraceStep);
    return py::reinterpret_steal<py::dtype>(np.attr("dtype")(d).release());
}

py::array stepsView(py::object self, size_t begin, size_t end) {
    const auto& t = self.cast<const Traces&>();
    py::array a(traceDtype(), {py::ssize_t(end - begin)}, {py::ssize_t(sizeof(fm::TraceStep))},
                t.set.steps.data() + begin, self);
    py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
    return a;
}

// Runs the trace run of a packed model (GIL released, Ctrl-C cancels) into a Traces whose result
// belongs to mesh/mats (null for a layered model). opt is checked here; `what` names the call.
std::shared_ptr<Traces> runTraced(const fm::KernelInput& in, fm::RunOptions opt, py::handle maxPoints,
                                  MeshPtr mesh, MatsPtr mats, const std::string& what) {
    fm::validateRunOptions(opt);
    uint64_t limit = countArg(maxPoints, "max_points", 1);
    std::atomic<bool> cancel{false};
    opt.cancel = &cancel;
    fm::TracedRunResult r;
    runCancellable([&] { r = fm::runCpuTraced(in, opt, limit); }, cancel);
    if (r.run.cancelled) throw fm::Error(what + ": run cancelled; no traces kept");
    auto out = std::make_shared<Traces>();
    out->result = std::make_shared<Result>();
    out->result->mesh = std::move(mesh);
    out->result->materials = std::move(mats);
    out->result->run = std::move(r.run);
    out->set = std::move(r.traces);
    return out;
}

std::shared_ptr<Traces> trace(MeshPtr mesh, MatsPtr mats, const fm::SourcePtr& source, py::handle packets,
                              py::handle seed, unsigned threads, double wmin, double prwin, uint32_t maxSteps,
                              uint32_t maxHits, py::handle maxPoints) {
    if (!mesh || !mats || !source) throw py::value_error("trace: mesh, materials and source are required (None given)");
    fm::RunOptions opt = runOptions(packets, seed, threads, {}, wmin, prwin, maxSteps, maxHits);
    opt.outputs.volume = opt.outputs.surface = true;
    opt.outputs.directed = false;
    fm::validateRunOptions(opt);
    fm::KernelInput in;
    {
        py::gil_scoped_release nogil;
        in = fm::packModel(*mesh, *mats, *source);
    }
    issueWarnings(mesh->checkReport().warnings());
    issueWarnings(in.warnings);
    return runTraced(in, opt, maxPoints, mesh, mats, "trace");
}

// The packets of an MCML run (as run_mcml runs them: MCML's roulette, its photon count unless
// `packets` is given) traced over the layered model; only the traces and the ledger are kept.
std::shared_ptr<Traces> traceMcml(const MCMLRun& run, py::handle packets, py::handle seed, unsigned threads,
                                  py::handle maxPoints) {
    fm::RunOptions opt = fm::mcmlRunOptions(run);
    if (!packets.is_none()) opt.packets = countArg(packets, "packets", 1, fm::kMaxPackets);
    opt.params.seed = countArg(seed, "seed", 0);
    opt.threads = threads;
    opt.tuning = fm::tuningFromEnvironment();
    opt.outputs.volume = opt.outputs.surface = opt.outputs.directed = false;
    fm::validateRunOptions(opt);
    fm::KernelInput in;
    {
        py::gil_scoped_release nogil;
        in = fm::packLayered(fm::layeredFromMcml(run));
    }
    return runTraced(in, opt, maxPoints, nullptr, nullptr, "trace_mcml");  // no tetra mesh: layers
}

void bindTraces(py::module_& m) {
    py::class_<Traces, std::shared_ptr<Traces>> cls(m, "Traces", R"doc(
Packet traces of a trace run (TetraTraceKernel in Tcl): per packet, its state after each event.
steps is one read-only structured array (a view) with fields pos (3 float32, mm), weight, step
(segment length ending here, mm), path (mm from launch), time (ns from launch), tetra_id (the
C++ 1-based tetra id: tetra_id - 1 indexes per-tetra arrays, 0 = none), material and event (a
code; event_names[code] names it). traces[i] (or trace(i)) is packet i's slice of steps.)doc");
    py::list names;  // the event codes' names: launch cross reflect scatter roulettewin exit death abnormal
    for (uint8_t e = 0; e < 8; ++e) names.append(fm::traceEventName(e));
    cls.attr("event_names") = py::tuple(names);
    cls
        .def_property_readonly("result", [](const Traces& t) { return t.result; },
                               "The run's tallies (volume and surface), as any Result")
        .def_property_readonly("steps", [](py::object self) {
            return stepsView(self, 0, self.cast<const Traces&>().set.steps.size());
        }, "Every trace's steps back to back, packet order (read-only structured view)")
        .def_property_readonly("offsets", [](py::object self) {
            const auto& t = self.cast<const Traces&>();
            return view(t.set.first.data(), t.set.first.size(), self);
        }, "Trace i is steps[offsets[i]:offsets[i+1]] (read-only view)")
        .def("__len__", [](const Traces& t) { return t.set.traceCount(); })
        .def("trace", [](py::object self, int64_t i) {
            const auto& t = self.cast<const Traces&>();
            int64_t n = int64_t(t.set.traceCount());
            if (i < -n || i >= n)
                throw py::index_error("Traces: trace " + std::to_string(i) + " does not exist (" + std::to_string(n) +
                                      " traces)");
            size_t k = size_t(i < 0 ? i + n : i);
            return stepsView(self, size_t(t.set.first[k]), size_t(t.set.first[k + 1]));
        }, py::arg("i"), "Packet i's steps (a view)")
        .def("__getitem__", [](py::object self, int64_t i) { return self.attr("trace")(i); }, py::arg("i"))
        .def("write_vtk", [](const Traces& t, const std::string& path) {
#ifdef FM_PY_VTK
            fm::VTKTraceWriter w(path);
            w.traces(t.set);
            py::gil_scoped_release nogil;
            w.write();
#else
            (void)t;
            throw py::import_error("Traces.write_vtk(" + path + ") needs VTK: rebuild with -DFM_USE_VTK=ON (apt-get install libvtk9-dev)");
#endif
        }, py::arg("path"), "Writes the traces as VTK polylines (.vtp, or legacy .vtk) for ParaView, with every field");

    m.def("trace", &trace, py::arg("mesh"), py::arg("materials"), py::arg("source"), py::kw_only(),
          py::arg("packets") = 100, py::arg("seed") = 1, py::arg("threads") = 0, py::arg("wmin") = 1e-5,
          py::arg("prwin") = 0.1, py::arg("max_steps") = 100000, py::arg("max_hits") = 100000,
          py::arg("max_points") = py::int_(uint64_t(fm::kDefaultMaxTracePoints)),
          "Runs packets on the CPU recording every packet's path (Traces); the tallies equal an untraced "
          "run's with the same seed and threads. Meant for few packets: 36 bytes per event; a run passing "
          "max_points trace points raises ParameterError. GIL released; Ctrl-C cancels.");
    m.def("trace_mcml", &traceMcml, py::arg("run"), py::kw_only(), py::arg("packets") = py::none(),
          py::arg("seed") = 1, py::arg("threads") = 0,
          py::arg("max_points") = py::int_(uint64_t(fm::kDefaultMaxTracePoints)),
          "Traces the packets of an MCML run (Tcl MCMLKernelWithTraces) over its layers, in mm (material = "
          "layer, 1 = top; tetra_id = the layer's cell); packets: run.photons unless given. Traces.result has "
          "the ledger and events only (no tetra mesh). GIL released; Ctrl-C cancels.");
}

}  // namespace

void bindBatch(py::module_& m) {
    bindBatchResult(m);
    m.def("run_batch", &runBatch, py::arg("mesh"), py::arg("materials"), py::arg("sources"), py::kw_only(),
          py::arg("packets") = 1000000, py::arg("seed") = 1, py::arg("threads") = 0, py::arg("kernel") = "cpu",
          py::arg("devices") = std::vector<int>{}, py::arg("wmin") = 1e-5, py::arg("prwin") = 0.1,
          py::arg("max_steps") = 100000, py::arg("max_hits") = 100000, py::arg("progress") = py::none(),
          py::arg("time_gates") = py::none(), py::arg("time_gate_regions") = py::none(),
          R"doc(Runs a batch over one mesh (Tcl BatchRunner): one run per source and material set
(materials: a MaterialSet or a list for a sweep), every run with `packets` and `seed`, the mesh
packed once (uploaded once per GPU). Run j = material set j // len(sources), source j % len(sources);
each equals a single run of that source and materials with the same seed and threads. progress:
called as progress(runs_done, runs_total) while waiting. time_gates: (start, stop, step) in ns, each
run's Result then has gated_volume_energy / gated_surface_energy as a single run with time_gates
(one process; gated runs go one per GPU launch). time_gate_regions: region ids whose tetras alone
get the gated volume tally, as in run(); Result.gated_tetras lists them. GIL released; Ctrl-C
cancels.)doc");
    bindMatrixFiles(m);
    bindTraces(m);
}

}  // namespace fmpy
