// SPDX-License-Identifier: GPL-3.0-or-later
// Whole-number and boolean arguments (threadCount, maxSteps, elementHint, indices, randSeed,
// progress, ...). SWIG's own conversion answers a bad value with its list of prototypes ("Wrong
// number or type of arguments for overloaded function ...") or "OverflowError in method ...",
// which names neither the parameter nor the rule; here every such argument is converted in one
// place and a bad one is a PARAMETER error naming the command, the parameter and what it takes
// ("Kernel threadCount: threads must be a whole number in [0, 4294967295], got '-1'"). Whole
// numbers are parsed as integers (Common/WholeNumber.hpp: "1e6" and "2.0" are accepted, nothing
// is rounded), or in Tcl's integer syntax (0x1f, +5); a range narrower than the type's is the
// method's to check. %include'd by Tcl/FullMonte.i before the classes and Tcl/TclReals.i.
%{
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "Common/WholeNumber.hpp"

// "Material_absorptionCoeff" -> "Material absorptionCoeff", "new_Material" -> "Material": the
// command as the script wrote it.
static std::string fmTclCommand(const char* symname) {
    std::string s = symname;
    if (s.rfind("new_", 0) == 0) return s.substr(4);
    const size_t u = s.find('_');
    if (u != std::string::npos) s[u] = ' ';
    return s;
}

// The whole number in obj if it is one in [0, max].
static bool fmTclWholeNumber(Tcl_Obj* obj, uint64_t max, uint64_t* v) {
    std::optional<uint64_t> n = fm::parseWholeNumber(Tcl_GetString(obj));
    if (!n) {
        Tcl_WideInt w = 0;
        if (Tcl_GetWideIntFromObj(nullptr, obj, &w) != TCL_OK || w < 0) return false;
        n = uint64_t(w);
    }
    if (*n > max) return false;
    *v = *n;
    return true;
}

// Converts a whole-number argument of type T; false (the interpreter's result set) when it is none.
template <class T>
static bool fmTclWholeArg(Tcl_Interp* interp, Tcl_Obj* obj, const char* symname, const char* param, T* out) {
    const uint64_t max = std::numeric_limits<T>::max();
    uint64_t v = 0;
    if (fmTclWholeNumber(obj, max, &v)) {
        *out = T(v);
        return true;
    }
    const std::string msg = fmTclCommand(symname) + ": " + param + " must be a whole number in [0, " +
                            std::to_string(max) + "], got '" + Tcl_GetString(obj) + "'";
    fmTclError(interp, "PARAMETER", msg.c_str());
    return false;
}

// Converts a boolean argument (any Tcl boolean: 1/0, true/false, yes/no, on/off, a number).
static bool fmTclBoolArg(Tcl_Interp* interp, Tcl_Obj* obj, const char* symname, const char* param, bool* out) {
    int b = 0;
    if (Tcl_GetBooleanFromObj(nullptr, obj, &b) == TCL_OK) {
        *out = b != 0;
        return true;
    }
    const std::string msg = fmTclCommand(symname) + ": " + param +
                            " must be a boolean (1 or 0, true or false, yes or no, on or off), got '" +
                            Tcl_GetString(obj) + "'";
    fmTclError(interp, "PARAMETER", msg.c_str());
    return false;
}
%}

%define %fm_whole_number(TYPE, PRECEDENCE)
%typemap(in) TYPE {
    if (!fmTclWholeArg<$1_ltype>(interp, $input, "$symname", "$1_name", &$1)) SWIG_fail;
}
// Overloads of one arity differ by a handle at most (getter / setter, setRegion predicate /
// number): any word matches, so a bad value gets the message above rather than SWIG's list of
// prototypes.
%typecheck(PRECEDENCE) TYPE "$1 = 1;"
%enddef
%fm_whole_number(unsigned short, SWIG_TYPECHECK_UINT16)
%fm_whole_number(unsigned int, SWIG_TYPECHECK_UINT32)
%fm_whole_number(unsigned long, SWIG_TYPECHECK_UINT64)
%fm_whole_number(unsigned long long, SWIG_TYPECHECK_UINT64)

%typemap(in) bool {
    if (!fmTclBoolArg(interp, $input, "$symname", "$1_name", &$1)) SWIG_fail;
}
%typecheck(SWIG_TYPECHECK_BOOL) bool "$1 = 1;"
