// SPDX-License-Identifier: GPL-3.0-or-later
// Tcl-facing queries on run outputs: EnergyToFluence (FullMonte's 2018 and later forms), dose-
// volume histograms, directed-surface sums, and a weighted sum of maps (beyond FullMonte: lets a
// plan combine per-source runs in a Tcl loop without re-running the kernel).
#pragma once
#include <string>
#include <vector>

#include "Tcl/TclOutputs.hpp"

#ifndef SWIG
#include <memory>

#include "Geometry/Queries.hpp"
#endif

class TetraMesh;
class MaterialSet;
class Kernel;

class EnergyToFluence {
public:
    EnergyToFluence();
    void mesh(TetraMesh* m);
    void geometry(TetraMesh* m);  // later name of mesh
    void materials(MaterialSet* ms);
    void source(OutputData* d);   // 2018 name of data
    void data(OutputData* d);
    void kernel(Kernel* k);       // normalise to k's energyPowerValue / packets (read now)
    void energy(double energy);        // normalise to e (J) / packets
    void inputPhotonWeight();
    void inputEnergy();
    void inputFluence();
    void inputEnergyPerVolume();
    void outputPhotonWeight();
    void outputEnergy();
    void outputFluence();
    void outputEnergyPerVolume();
    void update();
    SpatialMap* result() const;
#ifndef SWIG
private:
    struct Norm {
        double scale;      // energy per unit packet weight
        std::string unit;  // "J", "W" or "packet"
    };
    Norm normalisation(const MapData& in) const;
    std::shared_ptr<const fm::TetraMesh> pickMesh(const MapData& in) const;
    std::shared_ptr<const fm::MaterialSet> pickMaterials(const MapData& in, const fm::TetraMesh& m) const;
    std::shared_ptr<fm::TetraMesh> mesh_;
    std::shared_ptr<MaterialSet> mats_;
    MapPtr data_;
    // What `kernel k` captured (k's settings at that call; no pointer to k is kept).
    bool haveKernel_ = false;
    std::shared_ptr<fm::TetraMesh> kernelMesh_;
    std::shared_ptr<MaterialSet> kernelMats_;
    double kernelEnergy_ = 1;
    std::string kernelUnit_ = "J";
    double energy_ = 0;
    double convert(double x, const std::string& inQ, double meas, double mu, bool volume, double scale) const;
    std::string in_, out_ = "Fluence";  // in_ empty: the map's own quantity
    MapPtr result_;
#endif
};

class DoseHistogram : public OutputData {
public:
    std::string name() const override;  // "DoseHistogram"
    std::string type() const override;
    unsigned dim() const;
    unsigned region() const;
    double totalMeasure() const;
    double dose(unsigned bin) const;      // ascending
    double measure(unsigned bin) const;
    double cmeasure(unsigned bin) const;  // volume receiving >= dose(i)
    double cdf(unsigned bin) const;       // cmeasure / totalMeasure, 1 at i = 0
    // Beyond FullMonte
    double doseAtFraction(double fraction) const;       // D90 = doseAtFraction 0.9
    double volumeFractionAbove(double dose) const;  // V_d: fraction of the region with dose >= d
    double minDose() const;
    double maxDose() const;
    double meanDose() const;  // volume-weighted
    unsigned undefinedCount() const;  // tetras with undefined (NaN) dose, left out
#ifndef SWIG
    explicit DoseHistogram(std::shared_ptr<const fm::DoseHistogram> h) : h_(std::move(h)) {}
    OutputData* clone() const override { return new DoseHistogram(h_); }
    const fm::DoseHistogram& hist() const { return *h_; }
private:
    std::shared_ptr<const fm::DoseHistogram> h_;
#endif
};

class DoseHistogramCollection {
public:
    DoseHistogram* get(unsigned index) const;
    unsigned count() const;
    DoseHistogram* forRegion(unsigned region) const;  // beyond FullMonte: index != region
    std::string regions() const;
#ifndef SWIG
    using List = std::vector<std::shared_ptr<const fm::DoseHistogram>>;
    explicit DoseHistogramCollection(std::shared_ptr<const List> l) : l_(std::move(l)) {}
    const List& list() const { return *l_; }
private:
    std::shared_ptr<const List> l_;
#endif
};

// Per-tetra doses: one histogram per non-empty region (volume-weighted). Per-face doses (a Surface
// map, a DirectedSurface map or output, e.g. a detector's EnergyToFluence result): one histogram
// per region over the faces of its surface, area-weighted; a directed map counts what enters the
// region, and one of a single scored boundary gives that region's histogram alone.
class DoseVolumeHistogramGenerator {
public:
    virtual ~DoseVolumeHistogramGenerator() = default;
    void mesh(TetraMesh* m);
    void dose(OutputData* d);
    void update();
    DoseHistogramCollection* result() const;
#ifndef SWIG
private:
    void updateSurface(const fm::TetraMesh& m, DoseHistogramCollection::List& out) const;
    std::shared_ptr<fm::TetraMesh> mesh_;
    MapPtr dose_;
    std::shared_ptr<const DoseHistogramCollection::List> result_;
#endif
};

// FullMonte's name for the surface form (the same class).
class DoseSurfaceHistogramGenerator : public DoseVolumeHistogramGenerator {};

class DirectedSurfaceSum {
public:
    void input(OutputDataCollection* c);
    void update();
    unsigned count() const;
    double totalEnteringWeight(unsigned index) const;  // i-th DirectedSurface output
    double totalExitingWeight(unsigned index) const;   // beyond FullMonte
#ifndef SWIG
private:
    std::vector<std::shared_ptr<DirectedSurface>> in_;
    std::vector<double> entering_, exiting_;
#endif
};

// sum_i w_i * map_i over maps of the same kind and size.
class WeightedMapSum {
public:
    void add(OutputData* map, double weight);
    void clear();
    unsigned count() const;
    void update();
    SpatialMap* result() const;
#ifndef SWIG
private:
    std::vector<std::pair<MapPtr, double>> terms_;
    MapPtr result_;
#endif
};
