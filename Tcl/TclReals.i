// SPDX-License-Identifier: GPL-3.0-or-later
// Real-number arguments: any Tcl number, and also nan (which Tcl's own conversion refuses, so it
// reached no method: SWIG answered with its list of prototypes). The value, finite or not, goes
// to the method, whose check names the command and the parameter and says what range is allowed
// (e.g. "Material absorptionCoeff must be finite and >= 0, got nan"): the adapters and the core
// they call hold the rules, here only the conversion. Text that is no number is refused here,
// naming the command and the parameter (fmTclCommand: Tcl/TclIntegers.i). %include'd by Tcl/FullMonte.i
// after Tcl/TclIntegers.i, before the classes.
%{
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

// The number in obj: Tcl's reading, else "nan" in any case and sign (strtod's reading).
static bool fmTclReal(Tcl_Obj* obj, double* x) {
    if (Tcl_GetDoubleFromObj(nullptr, obj, x) == TCL_OK) return true;
    const char* text = Tcl_GetString(obj);
    char* end = nullptr;
    const double v = std::strtod(text, &end);
    if (end == text || *end || !std::isnan(v)) return false;
    *x = v;
    return true;
}
%}
%typemap(in) double {
    if (!fmTclReal($input, &$1)) {
        std::string msg = fmTclCommand("$symname") + ": $1_name '" + Tcl_GetString($input) + "' is not a number";
        fmTclError(interp, "PARAMETER", msg.c_str());
        SWIG_fail;
    }
}
// Overloads differ by arity only (getter / setter): any word matches, so a bad value gets the
// message above rather than SWIG's list of prototypes.
%typecheck(SWIG_TYPECHECK_DOUBLE) double "$1 = 1;"
