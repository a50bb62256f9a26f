// SPDX-License-Identifier: GPL-3.0-or-later
#include "Tcl/TclDetected.hpp"

#include <cmath>
#include <sstream>

#include "Common/Errors.hpp"
#include "Kernels/Detection.hpp"
#include "Storage/Detected/DetectedFile.hpp"
#include "Storage/Detected/MchFile.hpp"
#include "Tcl/TclUtil.hpp"

using fm::ParameterError;

namespace {

// Numbers as a Tcl list (fmtcl::formatList: each reads back as the same double, a record's
// float fields included, so scripts may compare them exactly).
template <class T>
std::string listOf(const T* v, size_t n) {
    return fmtcl::formatList(std::vector<double>(v, v + n));
}

std::vector<double> perPacket(std::vector<double> s, const fm::DetectedPackets& dp) {
    for (double& x : s) x /= double(dp.packets);
    return s;
}

}  // namespace

DetectedPackets::DetectedPackets() = default;
DetectedPackets::DetectedPackets(std::shared_ptr<const fm::DetectedPackets> records) : d_(std::move(records)) {}

void DetectedPackets::read(const std::string& path) {
    d_ = std::make_shared<const fm::DetectedPackets>(fm::readDetected(path));
}

const fm::DetectedPackets& DetectedPackets::records(const char* what) const {
    if (!d_) throw ParameterError(std::string("DetectedPackets ") + what + ": no records (read a .fmd file first)");
    return *d_;
}

size_t DetectedPackets::record(double k, const char* what) const {
    const size_t n = records(what).records.size();
    if (!(k >= 0 && k < double(n)) || k != std::floor(k))
        throw ParameterError(std::string("DetectedPackets ") + what + ": no record " + fmtcl::formatList({k}) +
                             " (records 0.." + std::to_string(n) + "-1)");
    return size_t(k);
}

uint32_t DetectedPackets::checkedDetector(unsigned d, const char* what) const {
    const size_t n = records(what).detectors.size();
    if (d >= n)
        throw ParameterError(std::string("DetectedPackets ") + what + ": no detector " + std::to_string(d) + " (the run had " +
                             std::to_string(n) + ")");
    return d;
}

void DetectedPackets::write(const std::string& path) const { fm::writeDetected(path, records("write")); }
void DetectedPackets::writeMch(const std::string& path) const { fm::writeMch(path, records("writeMch")); }

unsigned long long DetectedPackets::count() const { return records("count").records.size(); }
unsigned long long DetectedPackets::detectedTotal() const { return records("detectedTotal").detected; }
bool DetectedPackets::truncated() const { return records("truncated").truncated(); }
unsigned long long DetectedPackets::packets() const { return records("packets").packets; }
unsigned long long DetectedPackets::seed() const { return records("seed").seed; }
unsigned DetectedPackets::regions() const { return records("regions").regions; }
unsigned DetectedPackets::detectorCount() const { return unsigned(records("detectorCount").detectors.size()); }
std::string DetectedPackets::kernel() const { return records("kernel").kernel; }
std::string DetectedPackets::cells() const { return records("cells").cells; }
std::string DetectedPackets::model() const { return records("model").model; }
std::string DetectedPackets::mua() const {
    const fm::DetectedPackets& dp = records("mua");
    return listOf(dp.mua.data(), dp.mua.size());
}

unsigned long long DetectedPackets::index(double k) const { return d_->records[record(k, "index")].index; }
unsigned DetectedPackets::detector(double k) const { return d_->records[record(k, "detector")].detector; }
unsigned DetectedPackets::scatters(double k) const { return d_->records[record(k, "scatters")].scatters; }
double DetectedPackets::weight(double k) const { return d_->records[record(k, "weight")].weight; }
double DetectedPackets::time(double k) const { return d_->records[record(k, "time")].time; }
std::string DetectedPackets::position(double k) const {
    return listOf(d_->records[record(k, "position")].pos, 3);
}
std::string DetectedPackets::direction(double k) const {
    return listOf(d_->records[record(k, "direction")].dir, 3);
}
std::string DetectedPackets::pathLengths(double k) const {
    const size_t i = record(k, "pathLengths");
    return listOf(d_->path(i), d_->regions);
}
double DetectedPackets::pathLength(double k, unsigned region) const {
    const size_t i = record(k, "pathLength");
    if (region < 1 || region > d_->regions)
        throw ParameterError("DetectedPackets pathLength: no region " + std::to_string(region) + " (regions 1.." +
                             std::to_string(d_->regions) + ")");
    return d_->path(i)[region - 1];
}
std::string DetectedPackets::scatterCounts(double k) const {
    const size_t i = record(k, "scatterCounts");
    if (d_->scatterCounts.empty())
        throw ParameterError("DetectedPackets scatterCounts: the records have none (a version 1 .fmd file)");
    return listOf(d_->scatterCount(i), d_->regions);
}

std::string DetectedPackets::column(const std::string& field) const {
    const fm::DetectedPackets& dp = records("column");
    std::vector<double> v;
    v.reserve(dp.records.size());
    for (const fm::DetectedRecord& r : dp.records) {
        if (field == "index") v.push_back(double(r.index));
        else if (field == "detector") v.push_back(r.detector);
        else if (field == "scatters") v.push_back(r.scatters);
        else if (field == "weight") v.push_back(r.weight);
        else if (field == "time") v.push_back(r.time);
        else throw ParameterError("DetectedPackets column: no field '" + field + "' (index, detector, scatters, weight, time)");
    }
    if (field == "index") {  // packet indices exceed a double's integers only past 2^53: print them whole
        std::ostringstream o;
        for (size_t k = 0; k < dp.records.size(); ++k) o << (k ? " " : "") << dp.records[k].index;
        return o.str();
    }
    return listOf(v.data(), v.size());
}

double DetectedPackets::signal(unsigned detector) const {
    const fm::DetectedPackets& dp = records("signal");
    return perPacket(fm::detectedSignal(dp), dp)[checkedDetector(detector, "signal")];
}

std::string DetectedPackets::reweightedWeights(const std::string& mua) const {
    const fm::DetectedPackets& dp = records("reweightedWeights");
    const std::vector<double> w = fm::reweightedWeights(dp, fmtcl::parseNumberList(mua, "DetectedPackets reweightedWeights"));
    return listOf(w.data(), w.size());
}

double DetectedPackets::reweightedSignal(unsigned detector, const std::string& mua) const {
    const fm::DetectedPackets& dp = records("reweightedSignal");
    const uint32_t d = checkedDetector(detector, "reweightedSignal");
    const std::vector<double> w = fm::reweightedWeights(dp, fmtcl::parseNumberList(mua, "DetectedPackets reweightedSignal"));
    return perPacket(fm::detectedSignal(dp, &w), dp)[d];
}

std::string DetectedPackets::regionJacobian(unsigned detector) const {
    const fm::DetectedPackets& dp = records("regionJacobian");
    const uint32_t d = checkedDetector(detector, "regionJacobian");
    const std::vector<double> j = perPacket(fm::regionJacobian(dp), dp);
    return listOf(j.data() + size_t(d) * dp.regions, dp.regions);
}

std::string DetectedPackets::tpsf(unsigned detector, double start, double stop, double step) const {
    const fm::DetectedPackets& dp = records("tpsf");
    const uint32_t d = checkedDetector(detector, "tpsf");
    const std::vector<double> h = perPacket(fm::detectorTpsf(dp, d, fm::makeTimeGates(start, stop, step, "tpsf")), dp);
    return listOf(h.data(), h.size());
}
