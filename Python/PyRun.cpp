// SPDX-License-Identifier: GPL-3.0-or-later
// Runs: a Simulation packs the model once (Geometry/ModelPacker, as the Tcl kernels do; the
// cells of the last Simulation's mesh are reused, Geometry/PackedModelCache) and runs it on a
// worker thread through Kernels/Dispatch runKernel, so Python keeps its GIL free while packets
// fly; waiting checks for Ctrl-C and cancels the run. Results are numpy views.
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "Geometry/MaterialSet.hpp"
#include "Geometry/PackedModelCache.hpp"
#include "Geometry/Queries.hpp"
#include "Geometry/Sources.hpp"
#include "Kernels/Dispatch.hpp"
#include "Kernels/RunWarnings.hpp"
#include "Kernels/Tuning.hpp"
#include "Python/PyCommon.hpp"

namespace fmpy {
namespace {

py::dict ledgerDict(const fm::Ledger& l) {
    py::dict d;
    d["launched"] = l.launched;
    d["specular"] = l.specular;
    d["absorbed"] = l.absorbed;
    d["exited"] = l.exited;
    d["roulette_gained"] = l.rouletteGained;
    d["roulette_lost"] = l.rouletteLost;
    d["abnormal"] = l.abnormal;
    d["imbalance"] = l.imbalance();
    return d;
}

py::dict eventsDict(const fm::Events& e) {
    py::dict d;
    d["launch"] = e.launch;
    d["absorb"] = e.absorb;
    d["scatter"] = e.scatter;
    d["boundary"] = e.boundary;
    d["tir"] = e.tir;
    d["fresnel"] = e.fresnel;
    d["refract"] = e.refract;
    d["interface"] = e.interface;
    d["exit"] = e.exit;
    d["die"] = e.die;
    d["win"] = e.win;
    d["abnormal"] = e.abnormal;
    return d;
}

// A bin-major gated array ([bin * stride + index], index 0 a dummy) as a read-only (bins,
// stride - 1) view without the dummies; None when empty.
py::object gatedView(const fm::TimeGates& g, const std::vector<double>& v, py::handle owner) {
    if (v.empty() || !g.on()) return py::none();
    const size_t stride = v.size() / g.bins();
    py::array_t<double> a({py::ssize_t(g.bins()), py::ssize_t(stride - 1)},
                          {py::ssize_t(stride * sizeof(double)), py::ssize_t(sizeof(double))}, v.data() + 1, owner);
    py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
    return std::move(a);
}

// Energy (or power) per unit packet weight for a run normalised to `total` J (or W).
double scaleFor(const Result& r, double total) {
    if (!r.mesh) throw py::value_error("fluence: this Result has no tetra mesh (a trace of a layered MCML model)");
    if (!(total > 0) || !std::isfinite(total)) throw py::value_error("energy must be a positive finite number");
    if (r.run.packetsDone == 0) throw py::value_error("the run launched no packets");
    return total / double(r.run.packetsDone);
}

class Simulation {
public:
    Simulation(std::shared_ptr<const fm::TetraMesh> mesh, std::shared_ptr<const fm::MaterialSet> mats,
               const fm::SourcePtr& source, const fm::RunOptions& opt, const std::string& kernel,
               const std::vector<uint32_t>& directed)
        : mesh_(std::move(mesh)), mats_(std::move(mats)), opt_(opt), kernel_(kernel) {
        if (!source) throw py::value_error("Simulation: source is None");
        if (kernel_ != "cpu" && kernel_ != "cuda" && kernel_ != "hybrid")
            throw py::value_error("Simulation: kernel must be 'cpu', 'cuda' or 'hybrid', got '" + kernel_ + "'");
        std::string why;
        if (kernel_ != "cpu" && !fm::cudaAvailable(&why))
            throw fm::ParameterError("Simulation: CUDA is not available: " + why);
        opt_.outputs.directed = !directed.empty();
        fm::validateRunOptions(opt_);
        {
            py::gil_scoped_release nogil;
            in_ = packedModels().pack(*mesh_, *mats_, *source, directed);
        }
        fm::checkGatedRun(*in_, opt_);
        // What the mesh checks and the source compiler found, shown as fullmonte-run shows them.
        warnings_ = mesh_->checkReport().warnings();
        warnings_.insert(warnings_.end(), in_->warnings.begin(), in_->warnings.end());
        issueWarnings(warnings_);
    }
    const std::vector<std::string>& warnings() const { return warnings_; }
    ~Simulation() {
        cancel_ = true;
        if (worker_.joinable()) {
            py::gil_scoped_release nogil;
            worker_.join();
        }
    }

    void start() {
        if (worker_.joinable()) throw py::value_error("Simulation.start: already started (make a new Simulation)");
        fm::RunOptions o = opt_;
        o.progress = [this](uint64_t d, uint64_t t) {
            done_ = d;
            total_ = t;
        };
        o.cancel = &cancel_;
        total_ = opt_.packets;
        worker_ = std::thread([this, o] {
            auto r = std::make_shared<Result>();
            r->mesh = mesh_;
            r->materials = mats_;
            std::exception_ptr err;
            try {
                r->run = fm::runKernel(kernel_, *in_, o);
            } catch (...) {
                err = std::current_exception();
            }
            std::lock_guard<std::mutex> lock(m_);
            result_ = err ? nullptr : r;
            error_ = err;
            finished_ = true;
            cv_.notify_all();
        });
    }

    // Waits for the run (timeout < 0: until it ends); True when finished. Ctrl-C while waiting
    // cancels the run and raises KeyboardInterrupt once the workers have stopped.
    bool wait(double timeout) {
        if (!worker_.joinable()) throw py::value_error("Simulation.wait: not started");
        auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout < 0 ? 1e9 : timeout);
        for (;;) {
            {
                py::gil_scoped_release nogil;
                std::unique_lock<std::mutex> lock(m_);
                cv_.wait_for(lock, std::chrono::milliseconds(50), [this] { return finished_; });
                if (finished_) break;
            }
            if (PyErr_CheckSignals() != 0) {
                cancel_ = true;
                {
                    py::gil_scoped_release nogil;
                    worker_.join();
                }
                throw py::error_already_set();
            }
            if (std::chrono::steady_clock::now() >= until) return false;
        }
        return true;
    }

    std::shared_ptr<Result> result() {
        wait(-1);
        {
            py::gil_scoped_release nogil;
            worker_.join();
        }
        if (error_) std::rethrow_exception(error_);
        if (result_->run.cancelled)
            throw fm::Error("Simulation: run cancelled after " + std::to_string(result_->run.packetsDone) + " of " +
                            std::to_string(result_->run.packetsRequested) + " packets; no results kept");
        if (std::string w = fm::abnormalWarning(result_->run.ledger); !w.empty()) {  // a result is taken once
            warnings_.push_back(w);
            issueWarnings({w});
        }
        return result_;
    }

    void cancel() { cancel_ = true; }
    double progress() const {
        if (finished_) return 1.0;
        uint64_t t = total_;
        return t ? double(done_.load()) / double(t) : 0.0;
    }
    bool running() const { return worker_.joinable() && !finished_; }
    bool done() const { return finished_; }

private:
    std::shared_ptr<const fm::TetraMesh> mesh_;
    std::shared_ptr<const fm::MaterialSet> mats_;
    fm::RunOptions opt_;
    std::string kernel_;
    std::shared_ptr<const fm::KernelInput> in_;
    std::thread worker_;
    std::atomic<bool> cancel_{false};
    std::atomic<uint64_t> done_{0}, total_{0};
    std::mutex m_;
    std::condition_variable cv_;
    bool finished_ = false;
    std::shared_ptr<Result> result_;
    std::exception_ptr error_;
    std::vector<std::string> warnings_;
};

std::unique_ptr<Simulation> makeSimulation(std::shared_ptr<const fm::TetraMesh> mesh,
                                           std::shared_ptr<const fm::MaterialSet> mats, const fm::SourcePtr& src,
                                           py::handle packets, py::handle seed, unsigned threads,
                                           const std::string& kernel, const std::vector<int>& devices, double wmin,
                                           double prwin, uint32_t maxSteps, uint32_t maxHits, bool volume,
                                           bool surface, const std::vector<int64_t>& directedFaces,
                                           py::handle batches, py::handle timeGates, py::handle gateRegions) {
    if (!mesh) throw py::value_error("Simulation: mesh is None");
    if (!mats) throw py::value_error("Simulation: materials is None");
    fm::RunOptions opt = runOptions(packets, seed, threads, devices, wmin, prwin, maxSteps, maxHits);
    opt.outputs.volume = volume;
    opt.outputs.surface = surface;
    opt.batches = countArg(batches, "batches", 0);
    applyTimeGatesArg(timeGates, opt);
    applyGateRegionsArg(gateRegions, *mesh, opt);
    std::vector<uint32_t> directed;
    for (int64_t f : directedFaces) {
        if (f < 0 || uint64_t(f) + 1 >= mesh->faceCount() + 1)
            throw py::value_error("directed_faces: " + std::to_string(f) + " is not a face index (0.." +
                                  std::to_string(mesh->faceCount() - 1) + ")");
        directed.push_back(uint32_t(f + 1));
    }
    return std::make_unique<Simulation>(mesh, mats, src, opt, kernel, directed);
}

void bindResult(py::module_& m) {
    py::class_<Result, std::shared_ptr<Result>>(m, "Result", R"doc(
Raw tallies of a run, in units of launched packet weight (each packet launches weight 1), as
read-only numpy views. Normalise with fluence(energy=...) or scale = energy / packets.)doc")
        .def_property_readonly("volume_energy", [](py::object self) {
            const auto& r = self.cast<const Result&>();
            const auto& v = r.run.volume;
            return view(v.empty() ? nullptr : v.data() + 1, v.empty() ? 0 : v.size() - 1, self);
        }, "Absorbed packet weight per tetra")
        .def_property_readonly("surface_energy", [](py::object self) {
            const auto& r = self.cast<const Result&>();
            const auto& v = r.run.surface;
            return view(v.empty() ? nullptr : v.data() + 1, v.empty() ? 0 : v.size() - 1, self);
        }, "Exiting packet weight per face (non-zero on boundary faces)")
        .def_property_readonly("directed_energy", [](py::object self) {
            const auto& r = self.cast<const Result&>();
            const auto& v = r.run.directed;
            return view2(v.empty() ? nullptr : v.data() + 2, v.empty() ? 0 : v.size() / 2 - 1, 2, self);
        }, "(faces, 2) packet weight crossing each face, per side")
        .def_property_readonly("volume_energy_stderr", [](py::object self) -> py::object {
            const auto& se = self.cast<const Result&>().run.standardError;
            if (!se.available() || se.volume.empty()) return py::none();
            return view(se.volume.data() + 1, se.volume.size() - 1, self);
        }, "Batch-means standard error of volume_energy (None when the run had one batch)")
        .def_property_readonly("surface_energy_stderr", [](py::object self) -> py::object {
            const auto& se = self.cast<const Result&>().run.standardError;
            if (!se.available() || se.surface.empty()) return py::none();
            return view(se.surface.data() + 1, se.surface.size() - 1, self);
        }, "Batch-means standard error of surface_energy (None when the run had one batch)")
        .def_property_readonly("time_gates", [](const Result& r) -> py::object {
            const fm::TimeGates& g = r.run.gates;
            if (!g.on()) return py::none();
            return py::make_tuple(g.startNs, g.stopNs, g.stepNs, g.count);
        }, "(start_ns, stop_ns, step_ns, gates) of a time-resolved run, else None")
        .def_property_readonly("gated_volume_energy", [](py::object self) -> py::object {
            const auto& r = self.cast<const Result&>();
            return gatedView(r.run.gates, r.run.gatedVolume, self);
        }, "(gates + 2, tetras) absorbed packet weight per time gate, then before the first gate and after "
           "the last (None without time_gates); the rows sum to volume_energy")
        .def_property_readonly("gated_tetras", [](const Result& r) -> py::object {
            if (!r.run.gates.tetras) return py::none();
            const auto& c = r.run.gates.tetras->cells;
            return py::array_t<uint32_t>(py::ssize_t(c.size() - 1), c.data() + 1);
        }, "The tetra ids (1-based) of gated_volume_energy's columns with time_gate_regions, else None")
        .def_property_readonly("gated_surface_energy", [](py::object self) -> py::object {
            const auto& r = self.cast<const Result&>();
            return gatedView(r.run.gates, r.run.gatedSurface, self);
        }, "(gates + 2, exit faces) exiting packet weight per time gate, early and late bins last (None "
           "without time_gates); columns are the faces gated_faces names, the rows sum to "
           "surface_energy[gated_faces - 1]")
        .def_property_readonly("gated_faces", [](const Result& r) -> py::object {
            if (!r.run.gates.faces || r.run.gatedSurface.empty()) return py::none();
            const auto& f = r.run.gates.faces->faces;
            return py::array_t<uint32_t>(py::ssize_t(f.size() - 1), f.data() + 1);
        }, "The face ids (1-based, as surface_energy's index + 1) of gated_surface_energy's columns: the "
           "mesh's boundary faces, ascending (None without the gated exit tally)")
        .def_property_readonly("gated_volume_energy_stderr", [](py::object self) -> py::object {
            const auto& r = self.cast<const Result&>();
            return gatedView(r.run.gates, r.run.standardError.gatedVolume, self);
        }, "Batch-means standard error of gated_volume_energy (None with one batch)")
        .def_property_readonly("gated_surface_energy_stderr", [](py::object self) -> py::object {
            const auto& r = self.cast<const Result&>();
            return gatedView(r.run.gates, r.run.standardError.gatedSurface, self);
        }, "Batch-means standard error of gated_surface_energy (None with one batch)")
        .def_property_readonly("ledger_stderr", [](const Result& r) -> py::object {
            const auto& se = r.run.standardError;
            if (!se.available()) return py::none();
            py::dict d = ledgerDict(se.ledger);
            if (d.contains("imbalance")) PyDict_DelItemString(d.ptr(), "imbalance");  // no error of its own
            return std::move(d);
        }, "Batch-means standard error of each ledger field (None when the run had one batch)")
        .def_property_readonly("batches", [](const Result& r) { return r.run.standardError.batches; },
                               "Batches behind the standard errors (0: none)")
        .def_property_readonly("ledger", [](const Result& r) { return ledgerDict(r.run.ledger); },
                               "Conservation of packet weight: launched, specular, absorbed, exited, roulette "
                               "gained/lost, abnormal, imbalance (should be ~0)")
        .def_property_readonly("events", [](const Result& r) { return eventsDict(r.run.events); },
                               "Event counts of the packet loop (launch, absorb, scatter, boundary, tir, ...)")
        .def_property_readonly("packets", [](const Result& r) { return r.run.packetsDone; }, "Packets run")
        .def_property_readonly("seconds", [](const Result& r) { return r.run.seconds; }, "Wall-clock time of the run")
        .def_property_readonly("kernel", [](const Result& r) { return r.run.kernel; }, "'cpu', 'cuda' or 'hybrid (...)'")
        .def_property_readonly("gpu_blocks_per_sm", [](const Result& r) { return r.run.gpuBlocksPerSm; },
                               "GPU runs: thread blocks per SM of the packet kernel (FM_CUDA_BLOCKS_PER_SM caps it); 0 on the CPU")
        .def_property_readonly("cpu_packets", [](const Result& r) { return r.run.cpuPackets; },
                               "kernel='hybrid': packets the CPU's threads ran (the GPUs ran the rest)")
        .def_property_readonly("mesh", [](const Result& r) { return std::const_pointer_cast<fm::TetraMesh>(r.mesh); },
                               "The mesh the tallies belong to (None for an MCML trace run)")
        .def("fluence", [](const Result& r, double energy) {
            double scale = scaleFor(r, energy);
            if (r.mesh && r.run.volume.empty())
                throw py::value_error("fluence: the run kept no volume tally (it ran with volume=False)");
            return owned(fm::volumeFluence(*r.mesh, *r.materials, r.run.volume, scale), 1);
        }, py::arg("energy") = 1.0,
           "Fluence per tetra in J/mm^2 for a run delivering `energy` J (W/mm^2 for W); x100 gives J/cm^2. "
           "NaN where mu_a = 0")
        .def("__repr__", [](const Result& r) {
            return "<fullmonte.Result " + r.run.kernel + ", " + std::to_string(r.run.packetsDone) + " packets, absorbed " +
                   std::to_string(r.run.ledger.absorbed / std::max(1.0, r.run.ledger.launched)) + ">";
        });
}

}  // namespace

fm::PackedModelCache& packedModels() {
    static fm::PackedModelCache cache;
    return cache;
}

void runCancellable(const std::function<void()>& work, std::atomic<bool>& cancel, const std::function<void()>& tick) {
    std::mutex mu;
    std::condition_variable cv;
    bool finished = false;
    std::exception_ptr error;
    std::thread worker([&] {
        try {
            work();
        } catch (...) {
            error = std::current_exception();
        }
        std::lock_guard<std::mutex> lock(mu);
        finished = true;
        cv.notify_all();
    });
    bool interrupted = false;
    for (;;) {
        {
            py::gil_scoped_release nogil;
            std::unique_lock<std::mutex> lock(mu);
            cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return finished; });
            if (finished) break;
        }
        if (!interrupted && PyErr_CheckSignals() != 0) {
            interrupted = true;  // the KeyboardInterrupt stays pending until the worker stops
            cancel = true;
            continue;
        }
        if (tick && !interrupted) try {
                tick();
            } catch (...) {
                cancel = true;  // a failing callback stops the work; its error is raised below
                {
                    py::gil_scoped_release nogil;
                    worker.join();
                }
                throw;
            }
    }
    {
        py::gil_scoped_release nogil;
        worker.join();
    }
    if (interrupted) throw py::error_already_set();
    if (error) std::rethrow_exception(error);
    if (tick) tick();
}

void applyTimeGatesArg(py::handle timeGates, fm::RunOptions& opt) {
    if (timeGates.is_none()) return;
    const auto g = timeGates.cast<std::vector<double>>();
    if (g.size() != 3) throw py::value_error("time_gates: needs (start, stop, step) in ns");
    opt.gates = fm::makeTimeGates(g[0], g[1], g[2], "time_gates");
    opt.outputs.gatedVolume = opt.outputs.volume;
    opt.outputs.gatedSurface = opt.outputs.surface;
    if (!opt.outputs.gated()) throw py::value_error("time_gates: volume and surface are both off, nothing to gate");
}

void applyGateRegionsArg(py::handle regions, const fm::TetraMesh& mesh, fm::RunOptions& opt) {
    if (regions.is_none()) return;
    if (!opt.outputs.gatedVolume)
        throw py::value_error("time_gate_regions: needs time_gates and the volume tally (volume=True)");
    std::vector<uint32_t> region(mesh.tetraCount() + 1, 0);
    for (uint32_t t = 1; t <= mesh.tetraCount(); ++t) region[t] = mesh.region(t);
    opt.gates.tetras = fm::gatedTetras(region, regions.cast<std::vector<uint32_t>>(), "time_gate_regions");
}

fm::RunOptions runOptions(py::handle packets, py::handle seed, unsigned threads, const std::vector<int>& devices,
                          double wmin, double prwin, uint32_t maxSteps, uint32_t maxHits) {
    fm::RunOptions opt;
    opt.packets = countArg(packets, "packets", 1, fm::kMaxPackets);
    opt.params.seed = countArg(seed, "seed", 0);
    opt.threads = threads;
    opt.devices = devices;
    opt.params.wmin = float(wmin);
    opt.params.prwin = float(prwin);
    opt.params.maxSteps = maxSteps;
    opt.params.maxHits = maxHits;
    opt.tuning = fm::tuningFromEnvironment();
    return opt;
}

void bindRun(py::module_& m) {
    bindResult(m);
    py::class_<Simulation>(m, "Simulation", R"doc(
One run of a model: Simulation(mesh, materials, source, packets=1000000, seed=1, threads=0,
kernel='cpu', devices=[], wmin=1e-5, prwin=0.1, max_steps=100000, max_hits=100000,
volume=True, surface=True, directed_faces=[], batches=0, time_gates=None).

time_gates: (start, stop, step) in ns: also keep the kept tallies per time gate
(Result.gated_volume_energy, gated_surface_energy; docs/TIME_DOMAIN.md).
time_gate_regions: region ids: gate the volume tally only in their tetras (its columns are then
Result.gated_tetras, 1-based tetra ids); exit and CW tallies unchanged.

batches: contiguous packet batches behind the standard errors (Result.*_stderr); 0 = the
default (10; on the GPU 10 from 1e8 packets, else 1), 1 = no standard errors.

kernel='hybrid' runs on the GPUs (devices) and `threads` CPU threads at once (0: all cores but
one per GPU); the CPU joins only where it pays. Result.cpu_packets says what it ran.

The model is checked and packed at construction (errors raise there). start() runs it on a
worker thread without holding the GIL; progress, running, done, cancel() and wait(timeout)
follow it; result() waits and returns the Result. Ctrl-C while waiting cancels the run.
As a context manager, leaving the block cancels a run still going.)doc")
        .def(py::init(&makeSimulation), py::arg("mesh"), py::arg("materials"), py::arg("source"),
             py::kw_only(), py::arg("packets") = 1000000, py::arg("seed") = 1, py::arg("threads") = 0,
             py::arg("kernel") = "cpu", py::arg("devices") = std::vector<int>{}, py::arg("wmin") = 1e-5,
             py::arg("prwin") = 0.1, py::arg("max_steps") = 100000, py::arg("max_hits") = 100000,
             py::arg("volume") = true, py::arg("surface") = true,
             py::arg("directed_faces") = std::vector<int64_t>{}, py::arg("batches") = 0,
             py::arg("time_gates") = py::none(), py::arg("time_gate_regions") = py::none())
        .def("start", &Simulation::start, "Starts the run on a worker thread (once per Simulation)")
        .def("wait", &Simulation::wait, py::arg("timeout") = -1.0,
             "Waits up to timeout seconds (< 0: until done); True when the run has ended")
        .def("result", &Simulation::result,
             "Waits for the run and returns its Result; raises Error if it was cancelled, KeyboardInterrupt on Ctrl-C")
        .def("cancel", &Simulation::cancel, "Asks the run to stop (result() then raises Error)")
        .def_property_readonly("progress", &Simulation::progress, "Fraction of packets done, 0..1")
        .def_property_readonly("warnings", &Simulation::warnings,
                               "Mesh-check and source warnings (also issued as RuntimeWarning at construction), and the "
                               "finished run's abnormal-weight warning (issued by result())")
        .def_property_readonly("running", &Simulation::running, "Started and not yet ended")
        .def_property_readonly("done", &Simulation::done, "The run has ended (finished, cancelled or failed)")
        .def("__enter__", [](Simulation& s) -> Simulation& { return s; }, py::return_value_policy::reference)
        .def("__exit__", [](Simulation& s, py::handle, py::handle, py::handle) {
            if (s.running()) {
                s.cancel();
                s.wait(-1);
            }
            return false;
        });

    m.def("cuda_available", [] {
        std::string why;
        bool ok = fm::cudaAvailable(&why);
        return py::make_tuple(ok, why);
    }, "(available, reason): whether CUDA runs can start here, and why not");
    m.def("mesh_packs", [] { return py::make_tuple(packedModels().cellPacks(), packedModels().cellReuses()); },
          "(packs, reuses): Simulations and run_batch calls that packed a mesh's cells, and those that reused "
          "the cells kept from the last one on the same mesh");
}

}  // namespace fmpy
