// SPDX-License-Identifier: GPL-3.0-or-later
// Surface detectors in Tcl (docs/DETECTORS.md): TetraDetectorKernel runs like TetraSurfaceKernel
// on the CPU (TetraCUDADetectorKernel: on a GPU) and also records the packets its detectors detect; the records give the detected
// signal, its reweighting to other mu_a, the TPSF, and (replay) the mu_a Jacobian per tetra.
#pragma once
#include <string>

#include "Tcl/TclKernels.hpp"

class DetectedPackets;  // Tcl/TclDetected.hpp

#ifndef SWIG
#include <memory>

#include "Geometry/Detectors.hpp"
#include "Kernels/Detection.hpp"
#endif

// Results: 0 EventCounts, 1 ConservationCounts, 2 VolumeEnergy, 3 SurfaceExitEnergy; the
// detected packets through the methods below. Signals are detected weight per launched packet.
class TetraDetectorKernel : public Kernel {
public:
    TetraDetectorKernel();
    void addDisk(double x, double y, double z, double radius);  // mm
    void addDetectorFaces(const std::string& faceIds);          // a Tcl list of boundary face ids
    void clearDetectors();
    unsigned detectorCount() const;
    void maxDetected(double records);  // records kept (default 1e6); more are counted, not kept
    unsigned long long maxDetected() const;

    unsigned long long detectedRecords() const;  // kept
    unsigned long long detectedTotal() const;    // found (more than kept when truncated)
    void writeDetected(const std::string& path) const;  // a .fmd file
    DetectedPackets* detected() const;  // the records, per record (Tcl/TclDetected.hpp)
    double detectedSignal(unsigned detector) const;
    // Standard error of the signal over all detections (batch means; NaN with one batch).
    double detectedSignalError(unsigned detector) const;
    void writeMch(const std::string& path) const;  // an MMC/MCX .mch file (docs/DETECTORS.md)
    // The signal at other mu_a (a Tcl list, 1/mm, one per region 1..R), mu_s held.
    double reweightedSignal(unsigned detector, const std::string& mua) const;
    // Detected signal per time gate from start to stop by step (ns), as a Tcl list.
    std::string tpsf(unsigned detector, double start, double stop, double step) const;
    // Replays the last run's detected packets; then jacobian(d) is d(signal)/d(mu_a) per tetra
    // 1..N (mm), as a Tcl list.
    void replay();
    std::string jacobian(unsigned detector) const;
#ifndef SWIG
protected:
    TetraDetectorKernel(const std::string& className, const std::string& device);
    Job makeJob() const override;
private:
    const fm::DetectedPackets& records(const char* what) const;
    std::vector<fm::Detector> detectors_;
    uint64_t maxRecords_ = 1000000;
    mutable std::shared_ptr<const fm::DetectedPackets> detected_;
    mutable std::shared_ptr<const Prepared> lastRun_;
    mutable std::shared_ptr<const fm::DetectionSpec> lastSpec_;
    std::shared_ptr<const fm::ReplayResult> replay_;
#endif
};

// TetraDetectorKernel on one GPU (`devices` names it); replay runs there too (GPU records
// reproduce on the GPU only).
class TetraCUDADetectorKernel : public TetraDetectorKernel {
public:
    TetraCUDADetectorKernel();
};
