// SPDX-License-Identifier: GPL-3.0-or-later
// Detected-packet records in Tcl (docs/DETECTORS.md): a DetectedPackets object holds the records
// of a .fmd file (`read`) or of a detecting kernel's last run (`$kernel detected`), and gives
// each record's fields, the detected signal, its reweighting to other mu_a, the mu_a Jacobian per
// region and the TPSF, as Python's fullmonte.DetectedPackets does. Record numbers k run from 0
// to count-1, in the records' order (packet index, then detector); regions from 1 to `regions`.
#pragma once
#include <string>

#ifndef SWIG
#include <memory>

#include "Kernels/DetectedPackets.hpp"
#endif

class DetectedPackets {
public:
    DetectedPackets();                          // no records until `read`
    void read(const std::string& path);         // a .fmd file (fullmonte-run --detectors, writeDetected)
    void write(const std::string& path) const;  // as a .fmd file
    void writeMch(const std::string& path) const;  // as an MMC/MCX .mch file

    unsigned long long count() const;           // records
    unsigned long long detectedTotal() const;   // detections the run found (more than count when truncated)
    bool truncated() const;
    unsigned long long packets() const;         // packets the run launched
    unsigned long long seed() const;
    unsigned regions() const;                   // materials (layers) 1..regions with a path length each
    unsigned detectorCount() const;
    std::string kernel() const;                 // cpu or cuda: the kernel that detected the packets
    std::string cells() const;                  // record or compact: the GPU cell layout the records were made in
    std::string model() const;                  // mesh, or layered (fullmonte-mcml records)
    std::string mua() const;                    // the run's mu_a per region 1..R (1/mm), a list

    // Record k.
    unsigned long long index(double k) const;   // packet index
    unsigned detector(double k) const;
    unsigned scatters(double k) const;          // interactions the packet survived
    double weight(double k) const;              // exit weight (launched packet weight)
    double time(double k) const;                // time of flight (ns)
    std::string position(double k) const;       // exit point, a list x y z (mm)
    std::string direction(double k) const;      // direction after leaving, a list x y z
    std::string pathLengths(double k) const;    // per region 1..R (mm), a list
    double pathLength(double k, unsigned region) const;
    std::string scatterCounts(double k) const;  // scattering events per region 1..R (sum: scatters)
    // One field of every record, a list in record order: index, detector, scatters, weight, time.
    std::string column(const std::string& field) const;

    // Per launched packet, for detector d.
    double signal(unsigned detector) const;
    double reweightedSignal(unsigned detector, const std::string& mua) const;  // mu_a per region (1/mm), mu_s held
    std::string reweightedWeights(const std::string& mua) const;  // each record's weight at those mu_a
    std::string regionJacobian(unsigned detector) const;  // d(signal)/d(mu_a) per region 1..R (mm)
    std::string tpsf(unsigned detector, double start, double stop, double step) const;  // per gate (ns)
#ifndef SWIG
    explicit DetectedPackets(std::shared_ptr<const fm::DetectedPackets> records);
private:
    const fm::DetectedPackets& records(const char* what) const;
    size_t record(double k, const char* what) const;
    uint32_t checkedDetector(unsigned d, const char* what) const;
    std::shared_ptr<const fm::DetectedPackets> d_;
#endif
};
