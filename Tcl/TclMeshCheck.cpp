// SPDX-License-Identifier: GPL-3.0-or-later
#include "Tcl/TclMeshCheck.hpp"

#include <iostream>
#include <mutex>

#include "Tcl/TclGeometry.hpp"
#include "Tcl/TclUtil.hpp"

namespace {

// One list per process: the Tcl package is one interpreter's model-building log.
std::mutex gMutex;
std::vector<std::string> gWarnings;

// A Tcl list element: every character Tcl would read specially is backslash-escaped.
std::string listElement(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '\n') out += "\\n";
        else if (std::string(" \t{}[]$\";\\").find(c) != std::string::npos) out += std::string("\\") + c;
        else out += c;
    }
    return out.empty() ? "{}" : out;
}

}  // namespace

namespace fmtcl {
void reportWarnings(const std::vector<std::string>& lines) {
    std::lock_guard<std::mutex> lock(gMutex);
    for (const std::string& w : lines) {
        std::cerr << "FullMonte warning: " << w << "\n";
        gWarnings.push_back(w);
    }
}
}  // namespace fmtcl

namespace fmtcl {
std::string tclList(const std::vector<std::string>& items) {
    std::string s;
    for (const std::string& w : items) s += (s.empty() ? "" : " ") + listElement(w);
    return s;
}
}  // namespace fmtcl

std::string FullMonte_warnings() {
    std::lock_guard<std::mutex> lock(gMutex);
    return fmtcl::tclList(gWarnings);
}

void FullMonte_clearWarnings() {
    std::lock_guard<std::mutex> lock(gMutex);
    gWarnings.clear();
}

void MeshRepair::mesh(TetraMesh* m) { in_ = fmtcl::need(m, "MeshRepair mesh").ptr(); }
void MeshRepair::tolerance(double t) { tolerance_ = fmtcl::nonNegative(t, "MeshRepair tolerance"); }
double MeshRepair::tolerance() const { return tolerance_; }
void MeshRepair::allowDefects(bool on) { allow_ = on; }
void MeshRepair::update() {
    if (!in_) throw fm::ParameterError("MeshRepair update: call mesh first");
    fm::MeshCheckOptions opt;
    opt.allowDefects = allow_;
    out_ = std::make_shared<fm::TetraMesh>(fm::mergeCoincidentVertices(*in_, tolerance_, &report_, opt));
    fmtcl::reportWarnings(out_->checkReport().warnings());
}
TetraMesh* MeshRepair::result() const {
    if (!out_) throw fm::ParameterError("MeshRepair result: call update first");
    return new TetraMesh(out_);
}
unsigned MeshRepair::pointsMerged() const { return unsigned(report_.pointsMerged); }
unsigned MeshRepair::facesJoined() const { return unsigned(report_.facesJoined); }
std::string MeshRepair::summary() const { return out_ ? report_.summary() : std::string(); }
