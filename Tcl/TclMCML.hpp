// SPDX-License-Identifier: GPL-3.0-or-later
// Tcl-facing MCML mode, as FullMonte's: Layered/Layer geometry, MCMLInputReader/MCMLCase for
// .mci files, MCMLOutputReader for .mco files, and MCMLKernel, which runs the layered model
// through the MCML kernels (Kernels/McmlKernel.hpp: the slab photon loop, the common packet
// loop's physics written out for layers). Lengths are mm and coefficients 1/mm
// here (the .mci/.mco files are cm and are converted at the readers and writer); MCML's own
// outputs (Absorption_rz, ...) keep MCML's cm units.
#pragma once
#include <string>

#include "Tcl/TclKernels.hpp"
#include "Tcl/TclOutputs.hpp"
#include "Tcl/TclStorage.hpp"

#ifndef SWIG
#include <memory>
#include <vector>

#include "Kernels/DetectedPackets.hpp"
#include "Storage/MCML/MCMLTypes.hpp"
#endif

class MaterialSet;
class DetectedPackets;  // Tcl/TclDetected.hpp

class Layer {
public:
    Layer();
    Layer(double thickness);
    double thickness() const;  // mm
    void thickness(double thickness);
#ifndef SWIG
    explicit Layer(std::shared_ptr<double> t) : t_(std::move(t)) {}
    const std::shared_ptr<double>& data() const { return t_; }
private:
    std::shared_ptr<double> t_;
#endif
};

// Slabs stacked along +z from z = 0 (layer i, 1-based, takes material i of the MaterialSet; the
// exterior material is above, material layerCount+1 (if present) below), and the MCML grid.
class Layered {
public:
    Layered();
    void resolution(double dr, double dz);  // mm
    std::string resolution() const;         // "dr dz"
    void extent(double R, double Z);        // sets the resolution to R/Nr, Z/Nz
    std::string extent() const;
    void dims(unsigned nr, unsigned nz);
    std::string dims() const;
    void angularBins(unsigned bins);          // MCML's: exit angles 0..90 degrees in na bins
    unsigned angularBins() const;
    unsigned layerCount() const;
    Layer* layer(unsigned layer) const;         // 1-based, as FullMonte
    void addLayer(Layer* l);
#ifndef SWIG
    struct Data {
        std::vector<std::shared_ptr<double>> layers;  // thickness, mm
        double dr = 0.1, dz = 0.1;                    // mm
        unsigned nr = 50, nz = 40, na = 30;
    };
    explicit Layered(std::shared_ptr<Data> d) : d_(std::move(d)) {}
    const std::shared_ptr<Data>& data() const { return d_; }
private:
    std::shared_ptr<Data> d_;
#endif
};

// One run of a .mci file.
class MCMLCase {
public:
    unsigned long long packets() const;
    double rouletteThreshold() const;
    Layered* geometry() const;
    MaterialSet* materials() const;
    std::string outputFilename() const;  // as written in the .mci
#ifndef SWIG
    explicit MCMLCase(std::shared_ptr<const MCMLRun> r) : r_(std::move(r)) {}
private:
    std::shared_ptr<const MCMLRun> r_;
#endif
};

class MCMLInputReader : public FileIO {
public:
    void read();
    unsigned cases() const;
    MCMLCase* get(unsigned index) const;  // 0-based
    void start();
    void next();
    bool done() const;
    MCMLCase* current() const;
#ifndef SWIG
private:
    std::vector<std::shared_ptr<const MCMLRun>> runs_;
    unsigned cursor_ = 0;
#endif
};

// MCML's summary of a run (Rsp, Rd, A, Tt and the absorption per layer): an item of the results.
class MCMLOutput : public OutputData {
public:
    std::string name() const override;  // "MCMLOutput"
    std::string type() const override;
    double Rsp() const;
    double Rd() const;
    double A() const;
    double Tt() const;
    unsigned layerCount() const;
    double layerAbsorption(unsigned layer) const;  // 1-based
    // Beyond FullMonte: the batch-means standard error of Rd, A or Tt (an error with one batch).
    double standardError(const std::string& what) const;
    unsigned long long batchCount() const;  // 0: none
#ifndef SWIG
    explicit MCMLOutput(std::shared_ptr<const MCMLResult> r) : r_(std::move(r)) {}
    OutputData* clone() const override { return new MCMLOutput(r_); }
    const MCMLResult& result() const { return *r_; }
private:
    std::shared_ptr<const MCMLResult> r_;
#endif
};

class MCMLOutputReader : public FileIO {
public:
    void read();
    OutputDataCollection* result() const;
#ifndef SWIG
private:
    std::shared_ptr<const OutputDataCollection::Items> items_;
#endif
};

// Beyond FullMonte: writes an MCMLOutput as an ASCII .mco file (MCML's format).
class MCMLOutputWriter : public FileIO {
public:
    void source(OutputData* d);  // an MCMLOutput (e.g. [$ODC getByName MCMLOutput])
    void write();
#ifndef SWIG
private:
    std::shared_ptr<const MCMLResult> r_;
#endif
};

// Outputs: EventCounts 0, ConservationCounts 1, CylAbsorbedEnergy 2 (raw A(r,z), packet
// weight), MCMLOutput 3, then MCML's normalised arrays by name (Absorption_rz, Absorption_z,
// Absorption_l, DiffuseReflectance_ra, Reflectance_r, Reflectance_a, Transmission_ra,
// Transmission_r, Transmission_a). The source is MCML's: a normal pencil beam at the origin.
class MCMLKernel : public Kernel {
public:
    MCMLKernel();
    void geometry(Layered* l);
    Layered* geometry() const;
    // Beyond FullMonte: per-photon exit records (docs/DETECTORS.md "MCML"; CPU only), off by
    // default: detector 0 the top surface (Rd), 1 the bottom (Tt), the layers as regions.
    void keepRecords(bool enabled);
    bool keepRecords() const;
    void maxDetected(double records);      // records kept, the lowest photon indices (default 1e6)
    unsigned long long maxDetected() const;
    void recordsRadius(double mm);   // only exits within mm of the beam axis (0: whole surfaces)
    unsigned long long detectedRecords() const;  // kept by the last run
    unsigned long long detectedTotal() const;    // found (more than kept when truncated)
    void writeDetected(const std::string& path) const;  // a .fmd file
    void writeMch(const std::string& path) const;       // an MMC/MCX .mch file
    DetectedPackets* detected() const;  // the records, per record (Tcl/TclDetected.hpp)
#ifndef SWIG
protected:
    Job makeJob() const override;
    MCMLRun buildRun() const;  // protected: MCMLKernelWithTraces (Tcl/TclMCMLTraces.hpp) uses it
private:
    const fm::DetectedPackets& records(const char* what) const;
    std::shared_ptr<Layered::Data> layered_;
    bool keepRecords_ = false;
    uint64_t maxRecords_ = 1000000;
    double recordsRadius_ = 0;
    // The last run's records, set by its job (a slot the job shares, as makeJob is const).
    std::shared_ptr<std::shared_ptr<const fm::DetectedPackets>> detected_ =
        std::make_shared<std::shared_ptr<const fm::DetectedPackets>>();
#endif
};
