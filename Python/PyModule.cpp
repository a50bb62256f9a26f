// SPDX-License-Identifier: GPL-3.0-or-later
// The extension module `fullmonte._fullmonte`: error translation, build facts, and the
// registration of each binding file. The package `fullmonte` (__init__.py) re-exports it.
#include <cmath>

#include "Python/PyCommon.hpp"
#include "Storage/MCML/MCMLFormatError.hpp"
#include "fm_config.h"

namespace fmpy {

fm::Point3 point3(py::handle h, const std::string& what) {
    std::vector<double> v;
    try {
        v = h.cast<std::vector<double>>();
    } catch (const py::cast_error&) {
        throw py::type_error(what + ": expected three numbers (x, y, z), got " +
                             std::string(py::str(py::type::of(h).attr("__name__"))));
    }
    if (v.size() != 3)
        throw py::value_error(what + ": expected three numbers (x, y, z), got " + std::to_string(v.size()));
    for (double x : v)
        if (!std::isfinite(x)) throw py::value_error(what + ": coordinates must be finite");
    return {v[0], v[1], v[2]};
}

uint64_t countArg(py::handle h, const std::string& what, uint64_t lo, uint64_t hi) {
    // Python ints and other integers (numpy's int64, which arrays of counts give) by __index__;
    // not bool, not float.
    const bool integral = py::isinstance<py::int_>(h) || (!PyFloat_Check(h.ptr()) && PyIndex_Check(h.ptr()));
    if (!integral || py::isinstance<py::bool_>(h))
        throw py::type_error(what + ": expected an integer, got " +
                             std::string(py::str(py::type::of(h).attr("__name__"))));
    auto v = py::reinterpret_steal<py::int_>(PyNumber_Index(h.ptr()));
    if (!v) throw py::error_already_set();
    if (v < py::int_(lo) || v > py::int_(hi))
        throw py::value_error(what + ": must be in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " +
                              std::string(py::str(v)));
    return v.cast<uint64_t>();
}

void issueWarnings(const std::vector<std::string>& messages) {
    if (messages.empty()) return;
    auto warn = py::module_::import("warnings").attr("warn");
    auto category = py::module_::import("builtins").attr("RuntimeWarning");
    for (const std::string& w : messages) warn(w, category, 2);
}

py::array_t<double> owned(std::vector<double>&& v, size_t skip) {
    auto* heap = new std::vector<double>(std::move(v));
    py::capsule owner(heap, [](void* p) { delete static_cast<std::vector<double>*>(p); });
    return view(heap->data() + skip, heap->size() - skip, owner);
}

std::vector<double> withDummy(py::handle values, size_t expected, const std::string& what) {
    py::array_t<double, py::array::c_style | py::array::forcecast> a;
    try {
        a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(values);
    } catch (const py::error_already_set&) {
        a = {};
    }
    if (!a) throw py::type_error(what + ": expected a 1-D array of numbers");
    if (a.ndim() != 1 || size_t(a.shape(0)) != expected)
        throw py::value_error(what + ": expected " + std::to_string(expected) + " values (one per tetra), got shape " +
                              std::string(py::str(py::tuple(py::cast(std::vector<py::ssize_t>(
                                  a.shape(), a.shape() + a.ndim()))))));
    std::vector<double> out(expected + 1, 0.0);
    std::copy(a.data(), a.data() + expected, out.begin() + 1);
    return out;
}

}  // namespace fmpy

PYBIND11_MODULE(_fullmonte, m) {
    namespace py = pybind11;
    m.doc() = "FullMonte: Monte Carlo simulation of light in tissue on tetrahedral meshes";
    m.attr("__version__") = FM_VERSION;
    m.attr("has_cuda") = bool(FM_HAVE_CUDA);
#ifdef FM_PY_VTK
    m.attr("has_vtk") = true;
#else
    m.attr("has_vtk") = false;
#endif

    // The C++ errors as Python exceptions: FormatError (bad file, message "file:line: ...") and
    // the model and parameter errors are ValueErrors, so `except ValueError` catches every
    // input problem; any other fm::Error is a RuntimeError carrying the message.
    static py::exception<fm::Error> error(m, "Error", PyExc_RuntimeError);
    static py::exception<fm::FormatError> formatError(m, "FormatError", PyExc_ValueError);
    static py::exception<fm::ModelError> modelError(m, "ModelError", PyExc_ValueError);
    static py::exception<fm::ParameterError> parameterError(m, "ParameterError", PyExc_ValueError);
    error.doc() = "A FullMonte failure that is not a bad input (a RuntimeError): the C++ message";
    formatError.doc() = "A bad input file (a ValueError); the message starts with file:line";
    modelError.doc() = "A model that cannot be simulated (a ValueError): degenerate tetra, source outside, ...";
    parameterError.doc() = "An option out of range (a ValueError); the message names the parameter";
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const fm::FormatError& e) {
            formatError(e.what());
        } catch (const MCMLFormatError& e) {
            formatError(e.what());
        } catch (const fm::ModelError& e) {
            modelError(e.what());
        } catch (const fm::ParameterError& e) {
            parameterError(e.what());
        } catch (const fm::Error& e) {
            error(e.what());
        }
    });

    fmpy::bindGeometry(m);
    fmpy::bindRun(m);
    fmpy::bindStorage(m);
    fmpy::bindBatch(m);
    fmpy::bindMeshing(m);
    fmpy::bindPlanning(m);
    fmpy::bindDetected(m);
}
