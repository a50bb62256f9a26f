// SPDX-License-Identifier: GPL-3.0-or-later
#include "Tcl/TclDetectors.hpp"

#include <cmath>
#include <limits>
#include <sstream>

#include "Common/Errors.hpp"
#include "Common/WholeNumber.hpp"
#include "Kernels/Dispatch.hpp"
#include "Storage/Detected/DetectedFile.hpp"
#include "Storage/Detected/MchFile.hpp"
#include "Tcl/TclDetected.hpp"
#include "Tcl/TclUtil.hpp"

using fm::ParameterError;

namespace {

std::string tclList(const std::vector<double>& v, size_t from = 0) {
    std::ostringstream o;
    o.precision(9);
    for (size_t i = from; i < v.size(); ++i) o << (i > from ? " " : "") << v[i];
    return o.str();
}

}  // namespace

TetraDetectorKernel::TetraDetectorKernel() : TetraDetectorKernel("TetraDetectorKernel", "cpu") {}
TetraDetectorKernel::TetraDetectorKernel(const std::string& className, const std::string& device)
    : Kernel(className, device, fm::OutputSelection{true, true, false}) {}
TetraCUDADetectorKernel::TetraCUDADetectorKernel() : TetraDetectorKernel("TetraCUDADetectorKernel", "cuda") {}

void TetraDetectorKernel::addDisk(double x, double y, double z, double radius) {
    notRunning("addDisk");
    fm::Detector d;
    d.centre = {x, y, z};
    d.radius = radius;
    fm::checkDisk(d, className_ + " addDisk");
    detectors_.push_back(d);
}

void TetraDetectorKernel::addDetectorFaces(const std::string& faceIds) {
    notRunning("addDetectorFaces");
    fm::Detector d;
    std::istringstream in(faceIds);
    for (std::string t; in >> t;) {
        const auto id = fm::parseWholeNumber(t);
        if (!id || *id > 0xffffffffu) throw ParameterError(className_ + " addDetectorFaces: '" + t + "' is not a face id");
        d.faces.push_back(uint32_t(*id));
    }
    if (d.faces.empty()) throw ParameterError(className_ + " addDetectorFaces: no face ids given");
    detectors_.push_back(d);
}

void TetraDetectorKernel::clearDetectors() {
    notRunning("clearDetectors");
    detectors_.clear();
}
unsigned TetraDetectorKernel::detectorCount() const { return unsigned(detectors_.size()); }

void TetraDetectorKernel::maxDetected(double n) {
    notRunning("maxDetected");
    if (!(n >= 1 && n <= 1e12) || n != std::floor(n))
        throw ParameterError(className_ + " maxDetected: must be a whole number in [1, 1e12], got " + std::to_string(n));
    maxRecords_ = uint64_t(n);
}
unsigned long long TetraDetectorKernel::maxDetected() const { return maxRecords_; }

Kernel::Job TetraDetectorKernel::makeJob() const {
    if (detectors_.empty()) throw ParameterError(className_ + ": no detectors (call addDisk or addDetectorFaces first)");
    std::shared_ptr<Prepared> p = prepare();
    auto spec = std::make_shared<const fm::DetectionSpec>(fm::compileDetectors(*p->mesh, detectors_, maxRecords_));
    p->opt.detection = spec.get();
    return [this, p, spec](const fm::RunOptions& o) {
        fm::RunOptions opt = p->opt;
        opt.progress = o.progress;
        opt.cancel = o.cancel;
        auto r = std::make_shared<fm::RunResult>(fm::runKernel(device_, *p->in, opt));
        Outcome out;
        out.cancelled = r->cancelled;
        out.done = r->packetsDone;
        out.requested = r->packetsRequested;
        out.seconds = r->seconds;
        out.collect = [this, p, r, spec] {
            auto items = std::make_shared<OutputDataCollection::Items>();
            items->push_back(std::make_shared<MCEventCounts>(r->events));
            items->push_back(std::make_shared<ConservationCounts>(r->ledger, r->standardError));
            addMaps(*items, *r, *p);
            detected_ = std::make_shared<const fm::DetectedPackets>(std::move(r->detected));
            lastRun_ = p;
            lastSpec_ = spec;
            return std::shared_ptr<const OutputDataCollection::Items>(items);
        };
        return out;
    };
}

const fm::DetectedPackets& TetraDetectorKernel::records(const char* what) const {
    if (!detected_) throw ParameterError(className_ + " " + what + ": no detected packets yet (run the kernel first)");
    return *detected_;
}

unsigned long long TetraDetectorKernel::detectedRecords() const { return records("detectedRecords").records.size(); }
unsigned long long TetraDetectorKernel::detectedTotal() const { return records("detectedTotal").detected; }
void TetraDetectorKernel::writeDetected(const std::string& path) const { fm::writeDetected(path, records("writeDetected")); }
DetectedPackets* TetraDetectorKernel::detected() const {
    records("detected");
    return new DetectedPackets(detected_);
}

double TetraDetectorKernel::detectedSignal(unsigned detector) const {
    const fm::DetectedPackets& dp = records("detectedSignal");
    const std::vector<double> s = fm::detectedSignal(dp);
    if (detector >= s.size()) throw ParameterError(className_ + " detectedSignal: no detector " + std::to_string(detector));
    return s[detector] / double(dp.packets);
}

double TetraDetectorKernel::detectedSignalError(unsigned detector) const {
    const fm::DetectedPackets& dp = records("detectedSignalError");
    if (detector >= dp.detectors.size())
        throw ParameterError(className_ + " detectedSignalError: no detector " + std::to_string(detector));
    if (dp.detectedWeightError.empty()) return std::numeric_limits<double>::quiet_NaN();
    return dp.detectedWeightError[detector] / double(dp.packets);
}

void TetraDetectorKernel::writeMch(const std::string& path) const { fm::writeMch(path, records("writeMch")); }

double TetraDetectorKernel::reweightedSignal(unsigned detector, const std::string& mua) const {
    const fm::DetectedPackets& dp = records("reweightedSignal");
    const std::vector<double> w = fm::reweightedWeights(dp, fmtcl::parseNumberList(mua, className_ + " reweightedSignal"));
    const std::vector<double> s = fm::detectedSignal(dp, &w);
    if (detector >= s.size()) throw ParameterError(className_ + " reweightedSignal: no detector " + std::to_string(detector));
    return s[detector] / double(dp.packets);
}

std::string TetraDetectorKernel::tpsf(unsigned detector, double start, double stop, double step) const {
    const fm::DetectedPackets& dp = records("tpsf");
    std::vector<double> h = fm::detectorTpsf(dp, detector, fm::makeTimeGates(start, stop, step, "tpsf"));
    for (double& x : h) x /= double(dp.packets);
    return tclList(h);
}

void TetraDetectorKernel::replay() {
    notRunning("replay");
    const fm::DetectedPackets& dp = records("replay");
    replay_ = std::make_shared<const fm::ReplayResult>(fm::replayKernel(dp.kernel, *lastRun_->in, lastRun_->opt, *lastSpec_, dp));
    if (replay_->mismatched)
        throw fm::Error(className_ + " replay: " + std::to_string(replay_->mismatched) + " packets did not reproduce");
}

std::string TetraDetectorKernel::jacobian(unsigned detector) const {
    if (!replay_) throw ParameterError(className_ + " jacobian: call replay first");
    if (detector >= replay_->jacobian.size())
        throw ParameterError(className_ + " jacobian: no detector " + std::to_string(detector));
    std::vector<double> j = replay_->jacobian[detector];
    for (double& x : j) x /= double(detected_->packets);
    return tclList(j, 1);
}
