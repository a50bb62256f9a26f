// SPDX-License-Identifier: GPL-3.0-or-later
// Time gates of the time-resolved tallies (time of flight, TPSF): gates of equal width from a
// start to a stop time in ns, checked when given, and GateBins, the device-side lookup of a
// packet's gate from its clock (the optical path length since launch, n * length summed, in mm).
//
// Every gated tally has count + 2 bins per element: the gates 0..count-1, then bin `count` for
// what arrives before the first gate opens (t < start) and bin count + 1 for what arrives at or
// after the last gate closes (t >= stop, the late bin). Nothing is dropped, so the sum over the
// bins of an element is its continuous-wave (CW) tally.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "Kernels/Core/Config.hpp"

namespace fm {

// Speed of light in vacuum, mm per ns: a packet's time of flight is its optical path / this.
constexpr double kLightMmPerNs = 299.792458;

// At most this many gates (each gate is a copy of the tallies it applies to).
constexpr uint32_t kMaxTimeGates = 100000;

// The bytes one gated array may take (per-tetra or per-face values x bins, doubles); above it
// a run is refused with the size and what to change (checkGatedSize).
constexpr double kMaxGatedArrayBytes = 8e9;

// Per-region gating (--time-gate-regions): the tetras whose volume tally is gated, as a compact
// map, so that the gated volume array takes bins x (tetras in the regions + 1) values.
struct GatedTetras {
    std::vector<uint32_t> regions;  // the chosen region (material) ids, ascending
    std::vector<int32_t> slot;      // [cell]: the element of the gated volume array, -1 outside the regions
    std::vector<uint32_t> cells;    // [element]: its cell (tetra id); element 0 is a dummy (cell 0), as in full arrays
};

// The gated exit tally's elements: the model's exit faces (faces with the exterior on one side,
// the only ones a packet leaves through), in ascending face id, so that the gated exit array
// takes bins x (exit faces + 1) values instead of bins x face ids (most faces of a tetra mesh
// are interior). Derived from the packed cells (gatedExitFaces).
struct GatedFaces {
    std::vector<int32_t> slot;    // [face id]: the element of the gated exit array, -1 for an interior face
    std::vector<uint32_t> faces;  // [element]: its face id; element 0 is a dummy (face 0)
    uint64_t cellsIdentity = 0;   // KernelInput::cellsIdentity of the cells it was made from (0: unknown)
};

struct TimeGates {
    double startNs = 0, stopNs = 0, stepNs = 0;
    uint32_t count = 0;  // 0: no gates (a continuous-wave run)
    std::shared_ptr<const GatedTetras> tetras;  // null: the gated volume tally covers every tetra
    // The gated exit tally's elements. A run's result always has them where it keeps the gated
    // exit tally; in the options they may be null (each kernel then derives them from its cells,
    // withExitFaces) or given by a caller running many runs over one model.
    std::shared_ptr<const GatedFaces> faces;

    bool on() const { return count > 0; }
    uint32_t bins() const { return count + 2; }  // the gates, the early bin, the late bin
    uint32_t earlyBin() const { return count; }
    uint32_t lateBin() const { return count + 1; }
    double gateStart(uint32_t k) const { return startNs + k * stepNs; }
    double gateStop(uint32_t k) const { return k + 1 == count ? stopNs : startNs + (k + 1) * stepNs; }
};

// The gates from start to stop (ns) by step: start >= 0, stop > start, step > 0, all finite,
// (stop - start) / step a whole number (within 1e-9 of one) of at most kMaxTimeGates. `what`
// names the parameter in the ParameterError thrown otherwise ("--time-gates", "timeGates").
TimeGates makeTimeGates(double startNs, double stopNs, double stepNs, const std::string& what);

// "START,STOP,STEP" (commas or spaces between the three numbers, ns) through makeTimeGates.
TimeGates parseTimeGates(const std::string& text, const std::string& what);

// "0:5:0.1 ns (50 gates)", or "off".
std::string describeTimeGates(const TimeGates& g);

// Bytes of one gated array of `elements` values per bin.
double gatedArrayBytes(const TimeGates& g, uint64_t elements);

// Values per bin of the gated volume array of a model of `cells` cells (dummy included): every
// cell, or the chosen regions' tetras plus the dummy.
inline uint64_t gatedVolumeStride(const TimeGates& g, uint64_t cells) {
    return g.tetras ? g.tetras->cells.size() : cells;
}
// The cell -> element map the kernels gate through (null: the identity).
inline const int32_t* gatedVolumeSlots(const TimeGates& g) { return g.tetras ? g.tetras->slot.data() : nullptr; }

struct KernelInput;
// The exit faces of a packed model's cells (every face of a cell whose neighbour across it is
// the exterior), as the gated exit tally's elements.
std::shared_ptr<const GatedFaces> gatedExitFaces(const KernelInput& in);
// g with its exit faces for the model `in`: g's own where they were made from the same cells
// (equal non-zero cellsIdentity and face count), else derived from in's cells.
TimeGates withExitFaces(const KernelInput& in, TimeGates g);
// Values per bin of the gated exit array of g (with its faces: exit faces + the dummy).
inline uint64_t gatedSurfaceStride(const TimeGates& g) { return g.faces ? g.faces->faces.size() : 0; }
// Values per bin of the gated exit array of a mesh with `exitFaces` boundary faces: the front
// ends' memory estimates before the model is packed.
inline uint64_t gatedSurfaceStride(uint64_t exitFaces) { return exitFaces + 1; }

// The map of the tetras of `regions` (material ids of cellRegion: cellRegion[c] for c = 1..cells-1)
// for per-region gating. ParameterError naming `what` for an empty list, an id no tetra has (with
// the ids the model has), or a duplicate.
std::shared_ptr<const GatedTetras> gatedTetras(const std::vector<uint32_t>& cellRegion, std::vector<uint32_t> regions,
                                               const std::string& what);

struct KernelInput;
// The same over a packed model's cells (their material ids are the mesh's regions).
std::shared_ptr<const GatedTetras> gatedTetras(const KernelInput& in, std::vector<uint32_t> regions, const std::string& what);

// "1,3 4": region ids, commas or spaces between them; ParameterError naming `what` otherwise.
std::vector<uint32_t> parseRegionList(const std::string& text, const std::string& what);

// Throws ParameterError when a gated array of `elements` values per bin (`what`: "the gated
// volume tally over 1200000 tetras") exceeds kMaxGatedArrayBytes, with its size and `advice`.
void checkGatedSize(const TimeGates& g, uint64_t elements, const std::string& what, const std::string& advice);

// The sums over the elements of each bin of a bin-major gated array (empty for an empty array).
std::vector<double> gateBinTotals(const TimeGates& g, const std::vector<double>& gated);

struct KernelInput;
struct RunOptions;
// The gated outputs a run selects (opt.outputs.gatedVolume, gatedSurface) against its gates
// (opt.gates, which they need) and the model's size (checkGatedSize): ParameterError otherwise.
void checkGatedRun(const KernelInput& in, const RunOptions& opt);

// A packet's bin from its clock, in the kernels (CPU and GPU): the gate edges as optical path
// lengths (mm), compared in float as the clock is kept.
struct GateBins {
    float start = 0.f;    // start * c (mm)
    float invStep = 0.f;  // 1 / (step * c) (1/mm)
    uint32_t count = 0;   // gates; bins count and count + 1: early and late

    // The bin of a packet whose optical path since launch is opl (mm); NaN goes late.
    FM_HD uint32_t bin(float opl) const {
        const float x = (opl - start) * invStep;
        if (x < 0.f) return count;
        if (!(x < float(count))) return count + 1;
        const uint32_t k = uint32_t(x);
        return k < count ? k : count - 1;
    }
};

inline GateBins gateBins(const TimeGates& g) {
    GateBins b;
    b.start = float(g.startNs * kLightMmPerNs);
    b.invStep = g.on() ? float(1.0 / (g.stepNs * kLightMmPerNs)) : 0.f;
    b.count = g.count;
    return b;
}

}  // namespace fm
