// SPDX-License-Identifier: GPL-3.0-or-later
// 64-bit integer arguments (randSeed, ...): parsed from the argument's text as an integer
// (Common/WholeNumber.hpp), so -1 is an error rather than 2^64-1 and nothing is rounded.
// %include'd by Tcl/FullMonte.i before the classes.
%{
#include "Common/WholeNumber.hpp"
%}
%typemap(in) unsigned long long {
    const char* text = Tcl_GetString($input);
    std::optional<uint64_t> v = fm::parseWholeNumber(text);
    if (!v) {
        std::string msg = std::string("$symname: '") + text + "' is not a whole number in [0, 2^64-1]";
        fmTclError(interp, "PARAMETER", msg.c_str());
        SWIG_fail;
    }
    $1 = *v;
}
// Overloads differ by arity only (randSeed / randSeed s): any word matches, so a bad value gets
// the message above rather than SWIG's list of prototypes.
%typecheck(SWIG_TYPECHECK_UINT64) unsigned long long "$1 = 1;"
