// SPDX-License-Identifier: GPL-3.0-or-later
// Surface detectors and detected-packet records: the data a detecting run takes and returns
// (Kernels/Detection.hpp has what uses them). Standard C++ only: RunResult carries the records.
//
// A packet is detected when it leaves the mesh through a boundary face of a detector and its
// exit point lies within the detector's radius of its centre (face-set detectors: any exit point
// on their faces). Each detected packet gives one record per detector that detects it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace fm {

// Detectors one run may have (a face holds their membership as bits of a 64-bit mask).
constexpr size_t kMaxDetectors = 64;

// A detector as the kernels test exits against it: exit points within sqrt(radius2) of the
// centre (radius2 = +inf for a set of faces).
struct DetectorZone {
    double centre[3] = {0, 0, 0};
    double radius2 = 0;
};

// What a run detects (Geometry/Detectors.hpp compiles it from disks or face sets).
struct DetectionSpec {
    std::vector<DetectorZone> detectors;   // at most kMaxDetectors
    std::vector<uint64_t> faceDetectors;   // [face id]: bit d set when detector d covers the face
    uint64_t maxRecords = 1000000;          // records kept; more detections are counted, not kept
    bool active() const { return !detectors.empty(); }
};

// One detected packet at one detector. Weights are in launched packet weight (a packet starts
// at 1); positions in mm; the time of flight in ns.
struct DetectedRecord {
    uint64_t index = 0;      // packet index: with the run's seed, the packet's random stream
    uint32_t detector = 0;
    uint32_t scatters = 0;   // interactions the packet survived (each one a scattering)
    float weight = 0;        // exit weight
    float time = 0;          // time of flight, ns
    float pos[3] = {0, 0, 0};  // exit point
    float dir[3] = {0, 0, 0};  // direction after leaving the mesh
};

// The detected packets of a run, in packet-index order (then detector order): record k's path
// lengths (mm) per material 1..regions are pathLengths[k*regions .. (k+1)*regions).
struct DetectedPackets {
    uint32_t regions = 0;                 // materials, not counting the exterior
    std::vector<DetectedRecord> records;
    std::vector<float> pathLengths;
    // Record k's scattering events per material 1..regions at scatterCounts[k*regions ..): they
    // sum to its `scatters`. Empty when the records have none (.fmd version 1 files).
    std::vector<uint32_t> scatterCounts;
    std::vector<double> mua, mus, g, n;   // [material 1..regions at index 0..regions-1] of the run
    std::vector<DetectorZone> detectors;
    uint64_t detected = 0;                // records the run found; > records.size() when truncated
    uint64_t packets = 0;                 // packets the run launched
    uint64_t seed = 0;
    // The kernel that detected them ("cpu" or "cuda"): a packet's history reproduces only on
    // the kernel that ran it (GPU and CPU math functions round differently), so replays check it.
    std::string kernel = "cpu";
    // The cell planes the GPU mesh kernel read ("record": the 112-byte records' planes, which the
    // split layout holds bit for bit; "compact": the compact layout's encoded planes; Kernels/Core/
    // CellLayout.hpp). Histories differ in the last bits between the two, so a GPU replay reads
    // the cells in the layout its records name. CPU records and layered models: "record".
    std::string cells = "record";
    // The file the records were read from (empty: made in this process), for error messages.
    std::string file;
    // The geometry: "mesh" (regions are the mesh's materials) or "layered" (fullmonte-mcml's
    // records: regions are the layers 1..L, detector 0 the top surface (reflectance), 1 the
    // bottom (transmittance); docs/DETECTORS.md "MCML").
    std::string model = "mesh";
    // Packets a truncated GPU run ran again to fill its records up to the room (not saved).
    uint64_t refilledPackets = 0;

    // Per detector, over all its detections (kept or not): the detected weight (launched packet
    // weight) and its standard error by batch means (empty when the run had no estimate).
    std::vector<double> detectedWeight, detectedWeightError;
    bool truncated() const { return detected > records.size(); }
    const float* path(size_t k) const { return pathLengths.data() + k * regions; }
    const uint32_t* scatterCount(size_t k) const { return scatterCounts.data() + k * regions; }
};

}  // namespace fm
