// SPDX-License-Identifier: GPL-3.0-or-later
// Tcl-facing run outputs: FullMonte's OutputDataCollection and the items in it (event counts,
// conservation ledger, spatial maps), plus what FullMonte's Tcl could not do: read single values,
// sums, region sums and point/line probes of a map.
#pragma once
#include <string>
#include <vector>

#ifndef SWIG
#include <memory>

#include "Geometry/MaterialSet.hpp"
#include "Geometry/TetraMesh.hpp"
#include "Kernels/KernelInput.hpp"
#endif

class TetraMesh;

class OutputData {
public:
    virtual ~OutputData();
    virtual std::string name() const = 0;
    virtual std::string type() const = 0;
#ifndef SWIG
    // Same object, new handle (a fresh wrapper is returned each time so handles never dangle).
    virtual OutputData* clone() const = 0;
    // Type strings getByType also accepts (besides type()).
    virtual bool isType(const std::string& t) const;
#endif
};

// FullMonte's MCEventCounts. Ntime and Nnohit are always 0 (no time gate, no missed launches).
class MCEventCounts : public OutputData {
public:
    std::string name() const override;
    std::string type() const override;
    unsigned long long Nlaunch() const;
    unsigned long long Nabsorb() const;
    unsigned long long Nscatter() const;
    unsigned long long Nbound() const;
    unsigned long long Ntir() const;
    unsigned long long Nfresnel() const;
    unsigned long long Nrefr() const;
    unsigned long long Ninterface() const;
    unsigned long long Nexit() const;
    unsigned long long Ndie() const;
    unsigned long long Nwin() const;
    unsigned long long Nabnormal() const;
    unsigned long long Ntime() const;
    unsigned long long Nnohit() const;
#ifndef SWIG
    explicit MCEventCounts(const fm::Events& e) : e_(e) {}
    OutputData* clone() const override { return new MCEventCounts(e_); }
    bool isType(const std::string& t) const override;
private:
    fm::Events e_;
#endif
};

// FullMonte's ConservationCounts, in units of launched packet weight. Ours closes exactly as
// w_launch + w_roulette = w_absorb + w_exit + w_specular + w_die + w_abnormal (+ rounding).
class ConservationCounts : public OutputData {
public:
    std::string name() const override;
    std::string type() const override;
    double w_launch() const;
    double w_absorb() const;
    double w_die() const;       // lost in roulette
    double w_exit() const;      // left through the boundary after entering
    double w_roulette() const;  // gained by roulette winners
    double w_abnormal() const;
    double w_time() const;
    double w_nohit() const;
    double w_specular() const;  // beyond FullMonte: reflected where a beam enters from outside
    double imbalance() const;   // (launch + roulette) - (absorb + exit + specular + die + abnormal)
    // Beyond FullMonte: the batch-means standard error of a field ("w_absorb", "w_exit", ...);
    // an error when the run had one batch (Kernel batchCount). batchCount: 0 then.
    double standardError(const std::string& field) const;
    unsigned long long batchCount() const;
#ifndef SWIG
    explicit ConservationCounts(const fm::Ledger& l, const fm::TallyErrors& se = {}) : l_(l), se_(se) {}
    OutputData* clone() const override { return new ConservationCounts(l_, se_); }
private:
    fm::Ledger l_;
    fm::TallyErrors se_;  // its ledger and batches only
#endif
};

#ifndef SWIG
// A per-element array and what it means. The mesh and materials it was computed on travel with it
// so that queries (fluence, region sums, probes) need no further arguments.
struct MapData {
    std::string name;         // "VolumeEnergy", "Fluence", ...
    std::string spatialType;  // "Volume" | "Surface" | "DirectedSurface"
    std::string quantity;     // "PhotonWeight" | "Energy" | "Fluence" | "EnergyPerVolume"
    std::string unit;         // "packet", "J/mm^2", ...
    std::vector<double> values;
    std::shared_ptr<const fm::TetraMesh> mesh;
    std::shared_ptr<const fm::MaterialSet> materials;  // in the mesh's length unit
    uint64_t packets = 0;     // packets launched in the run behind it
    std::vector<unsigned> dims;  // e.g. {nr, nz} for MCML's 2-D arrays; empty: 1-D
    unsigned region = 0;      // DirectedSurface maps of one scored boundary: its region (0: none)
    // Batch-means standard error of each value (Kernels/BatchMeans.hpp), in `unit`; empty when
    // the run had one batch. Maps derived element by element (EnergyToFluence) carry it along.
    std::vector<double> standardError;
    uint64_t batches = 0;     // batches behind standardError
};
using MapPtr = std::shared_ptr<const MapData>;
#endif

class SpatialMap : public OutputData {
public:
    std::string name() const override;
    std::string type() const override;  // "AbstractSpatialMap", as FullMonte 2018
    unsigned dim() const;
    std::string dims() const;  // "nr nz" for 2-D arrays (row-major, first index outermost)
    std::string spatialType() const;
    std::string quantity() const;
    std::string unit() const;
    unsigned long long packetCount() const;
    TetraMesh* mesh() const;
    // Beyond FullMonte: values and summaries in Tcl.
    double get(unsigned index) const;
    unsigned size() const;
    double sum() const;                     // NaN entries skipped
    double regionSum(unsigned region) const;     // volume maps: sum over tetras of region r (0 = all)
    double regionMean(unsigned region) const;    // volume-weighted mean over region r (0 = all)
    double regionMax(unsigned region) const;
    double min() const;
    double max() const;
    unsigned argmax() const;
    std::string values() const;                              // Tcl list of all entries
    std::string values(unsigned first, unsigned count) const;
    double valueAt(const std::string& xyz) const;            // volume maps: NaN outside
    std::string valuesAlong(const std::string& a, const std::string& b, unsigned samples) const;
    // Beyond FullMonte: batch-means standard errors (Kernel batchCount, docs/TCL_API.md).
    bool hasStandardError() const;
    unsigned long long batchCount() const;   // batches behind them (0: none)
    SpatialMap* standardError() const;       // the errors as a map "<name>_stderr"; error if none
    double relativeError(unsigned region) const;  // volume maps: sum SE / sum value over region r (0 = all)
#ifndef SWIG
    explicit SpatialMap(MapPtr d) : d_(std::move(d)) {}
    OutputData* clone() const override { return new SpatialMap(d_); }
    bool isType(const std::string& t) const override;
    const MapPtr& data() const { return d_; }
private:
    const fm::TetraMesh& needMesh(const char* what) const;
    MapPtr d_;
#endif
};

// Beyond FullMonte's DirectedSurface: per face of one scored region boundary, the weight that
// crossed into and out of the region. Index i runs over the boundary's faces.
class DirectedSurface : public OutputData {
public:
    std::string name() const override;
    std::string type() const override;  // "DirectedSurface"
    unsigned dim() const;
    unsigned region() const;
    unsigned faceID(unsigned index) const;
    double entering(unsigned index) const;
    double exiting(unsigned index) const;
    double totalEntering() const;
    double totalExiting() const;
#ifndef SWIG
    struct Data {
        unsigned region = 0;
        std::vector<uint32_t> faces;
        std::vector<double> in, out;
        // The same tally as a DirectedSurface spatial map (index 2*face+side, region set), which
        // EnergyToFluence and VTKSurfaceWriter take, as FullMonte's did.
        MapPtr map;
    };
    explicit DirectedSurface(std::shared_ptr<const Data> d) : d_(std::move(d)) {}
    const Data& data() const { return *d_; }
    OutputData* clone() const override { return new DirectedSurface(d_); }
private:
    std::shared_ptr<const Data> d_;
#endif
};

#ifndef SWIG
// Index in a directed map (2*face + side, side 0 = leaving the face's owner tetra) of the weight
// that crossed face f into the tetra `inside` (so out of the tetra on the other side).
inline size_t enteringIndex(const fm::TetraMesh& m, uint32_t f, uint32_t inside) {
    return 2 * size_t(f) + (inside == m.face(f).owner ? 1 : 0);
}

// The spatial map an output carries: a SpatialMap's data or a DirectedSurface's map; null for
// anything else (event counts, histograms, ...).
MapPtr mapDataOf(OutputData& d);
#endif

class OutputDataCollection {
public:
    OutputDataCollection();
    OutputData* getByName(const std::string& n) const;
    OutputData* getByName(const std::string& name, unsigned index) const;
    OutputData* getByType(const std::string& t) const;
    OutputData* getByType(const std::string& type, unsigned index) const;
    OutputData* getByIndex(unsigned index) const;
    unsigned size() const;
    void start();
    void next();
    bool done() const;
    OutputData* current() const;
    void clear();
    void add(OutputData* d);
    std::string names() const;  // beyond FullMonte: Tcl list of item names
#ifndef SWIG
    using Items = std::vector<std::shared_ptr<OutputData>>;
    explicit OutputDataCollection(std::shared_ptr<const Items> items);
private:
    std::shared_ptr<const Items> items_;
    unsigned cursor_ = 0;
#endif
};
