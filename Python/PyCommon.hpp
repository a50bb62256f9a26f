// SPDX-License-Identifier: GPL-3.0-or-later
// Shared by the binding files: numpy conversions and the registration functions of each file.
// Conventions of the Python API: indices are 0-based (the C++ model's dummy entry 0 is hidden),
// per-tetra and per-face arrays are read-only numpy views of the C++ data they come from.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "Common/Errors.hpp"
#include "Geometry/MaterialSet.hpp"
#include "Geometry/TetraMesh.hpp"
#include "Kernels/KernelInput.hpp"

namespace fm {
class PackedModelCache;
}

namespace fmpy {

namespace py = pybind11;

void bindGeometry(py::module_& m);
void bindRun(py::module_& m);
void bindStorage(py::module_& m);
void bindBatch(py::module_& m);
void bindMeshing(py::module_& m);    // defines nothing unless the mesher is built
void bindPlanning(py::module_& m);   // defines nothing unless the planner is built
void bindDetected(py::module_& m);   // detected-packet files (issue 28)

// The tallies of one run with the model they belong to (Python class Result).
struct Result {
    std::shared_ptr<const fm::TetraMesh> mesh;
    std::shared_ptr<const fm::MaterialSet> materials;
    fm::RunResult run;
};

// A read-only numpy view of `n` values at `data`, kept alive by `owner` (a Python object that
// holds the C++ storage). No copy.
template <class T>
py::array_t<T> view(const T* data, size_t n, py::handle owner) {
    py::array_t<T> a({py::ssize_t(n)}, {py::ssize_t(sizeof(T))}, data, owner);
    py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
    return a;
}

// The same for an n x k row-major block.
template <class T>
py::array_t<T> view2(const T* data, size_t n, size_t k, py::handle owner) {
    py::array_t<T> a({py::ssize_t(n), py::ssize_t(k)},
                     {py::ssize_t(k * sizeof(T)), py::ssize_t(sizeof(T))}, data, owner);
    py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
    return a;
}

// An integer argument in lo..hi, compared as a Python int first so nothing wraps or rounds (no
// float, no bool); `what` names the argument in errors.
uint64_t countArg(py::handle h, const std::string& what, uint64_t lo, uint64_t hi = UINT64_MAX);

// A 3-vector from any sequence of three finite numbers; `what` names the argument in errors.
fm::Point3 point3(py::handle h, const std::string& what);

// A 1-D float64 array (any numeric sequence) with the dummy entry 0 put in front, as the C++
// per-tetra arrays are laid out; `expected` is the length required without the dummy.
std::vector<double> withDummy(py::handle values, size_t expected, const std::string& what);

// Runs work() on a worker thread with the GIL released while the calling thread waits: every
// 50 ms it checks for Ctrl-C (which sets `cancel`, waits for the worker to stop and raises
// KeyboardInterrupt) and calls tick() with the GIL held (progress callbacks). An exception of
// work() is rethrown here.
void runCancellable(const std::function<void()>& work, std::atomic<bool>& cancel,
                    const std::function<void()>& tick = {});

// The run options shared by Simulation, run_batch and trace, checked (ParameterError naming the
// option); integers as countArg takes them. The tuning knobs come from the FM_* environment
// variables as the command-line tools and Tcl take them (fm::tuningFromEnvironment: a bad value
// is a ParameterError naming the variable).
fm::RunOptions runOptions(py::handle packets, py::handle seed, unsigned threads, const std::vector<int>& devices,
                          double wmin, double prwin, uint32_t maxSteps, uint32_t maxHits);

// time_gates=(start, stop, step) in ns (None: off) into opt: the gated volume and exit tallies of
// the tallies opt keeps (opt.outputs.volume, surface); ValueError naming time_gates otherwise.
void applyTimeGatesArg(py::handle timeGates, fm::RunOptions& opt);

// time_gate_regions=[ids] (None: every tetra) into opt, after applyTimeGatesArg: the gated volume
// tally only over the tetras of those regions of `mesh`; ValueError naming time_gate_regions.
void applyGateRegionsArg(py::handle regions, const fm::TetraMesh& mesh, fm::RunOptions& opt);

// Issues each message as a RuntimeWarning (what the mesh checks and the source compiler found).
void issueWarnings(const std::vector<std::string>& messages);

// The packed cells of the last mesh a Simulation or run_batch packed (one mesh's at a time,
// PyRun.cpp), reused by the next on the same mesh: a loop over sources or material sets packs
// only those (Geometry/PackedModelCache.hpp).
fm::PackedModelCache& packedModels();

// A numpy array that owns a C++ vector moved into it (no copy), `skip` leading entries hidden.
py::array_t<double> owned(std::vector<double>&& v, size_t skip);

}  // namespace fmpy
