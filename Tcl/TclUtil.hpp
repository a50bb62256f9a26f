// SPDX-License-Identifier: GPL-3.0-or-later
// Helpers shared by the Tcl adapter classes: the one-word vectors and option strings FullMonte
// scripts pass, the "x y z " strings its getters return, and argument checks that raise errors
// naming the method and the value (SWIG turns them into Tcl errors).
#pragma once
#ifndef SWIG
#include <cstdint>
#include <string>
#include <vector>

#include "Common/Errors.hpp"
#include "Geometry/TetraMesh.hpp"
#include "Kernels/TimeGates.hpp"

namespace fmtcl {

// "x y z" (whitespace, commas or braces between numbers) -> point; throws ParameterError.
fm::Point3 parseVec3(const std::string& s, const std::string& what);
// As FullMonte's SWIG array typemap printed them: "x y z " (trailing space).
std::string formatVec3(const fm::Point3& p);
std::string formatList(const std::vector<double>& v);
// A whitespace-separated list of numbers; throws ParameterError("<what>: 'x' is not a number").
std::vector<double> parseNumberList(const std::string& list, const std::string& what);

// Checks that throw ParameterError("<what> ...") for values no run can use.
uint64_t wholeNumber(double x, const std::string& what, double lo, double hi);
double nonNegative(double x, const std::string& what);
double positive(double x, const std::string& what);
double finite(double x, const std::string& what);

std::string lower(std::string s);
// Length unit -> millimetres per unit ("mm" 1, "cm" 10, "m" 1000, "um" 0.001).
double unitLengthMM(const std::string& unit);
std::string checkUnit(const std::string& unit, const std::string& what);

// Object arguments arrive as pointers that may be NULL (the Tcl word "NULL").
template <class T>
T& need(T* p, const std::string& what) {
    if (!p) throw fm::ParameterError(what + ": expected an object, got NULL");
    return *p;
}

// ---- device lists (issue 9): "0 1", "0,1", "all" (every GPU), "" (device 0) ----
std::vector<int> parseDeviceList(const std::string& s, const std::string& what);
std::string formatDeviceList(const std::vector<int>& d);

// Bin b of a gated tally ([bin * elements + k]) as one value per cell or face id: a volume tally
// gated over chosen tetras (TimeGates::tetras) spread over every cell, 0 outside them; the exit
// tally over the exit faces (TimeGates::faces) spread over every face id, 0 on interior faces.
// Empty for an empty tally.
std::vector<double> gatedBin(const std::vector<double>& v, const fm::TimeGates& g, uint32_t b, bool volume);

}  // namespace fmtcl
#endif
