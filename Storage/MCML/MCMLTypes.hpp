// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Plain data for the MCML 1.2 file formats (.mci input, ASCII .mco output).
//
// Everything here is in the units the files use: lengths in cm, coefficients in 1/cm.
// Conversion to the simulator's internal mm / 1/mm happens where these structs are turned into
// a layered model, not here, so that a file read and written back is unchanged.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

// One slab: refractive index, absorption and scattering coefficients (1/cm), HG anisotropy and
// thickness (cm), in the column order of the .mci layer line "n mua mus g d".
struct MCMLLayer
{
    double n = 1.0;
    double mua = 0.0;
    double mus = 0.0;
    double g = 0.0;
    double d = 0.0;
};

// One run block of a .mci file (also echoed as the InParm block of an .mco file).
struct MCMLRun
{
    std::string outName;        // output file name as written in the .mci (relative to it)
    char outFormat = 'A';       // 'A' (ASCII) or 'B' (binary; MCML never implemented it)
    std::uint64_t photons = 0;
    double dz = 0.0, dr = 0.0;  // grid spacing, cm
    unsigned nz = 0, nr = 0, na = 0;
    double nAbove = 1.0, nBelow = 1.0;
    std::vector<MCMLLayer> layers;

    // MCML's roulette constants. They are compiled into MCML, never read from a file; kept here so
    // a simulation set up from an MCMLRun matches MCML without looking them up elsewhere.
    double wth = 1e-4;
    double chance = 0.1;
};

// A whole .mci file.
struct MCMLInput
{
    double version = 1.0;
    std::vector<MCMLRun> runs;
    std::string path;  // the file (or stream name) it was read from, for messages
};

// Everything an ASCII .mco file carries. Units are MCML's (see the section headings in the file).
// 2-D arrays are row-major with r outermost, the order MCML writes them:
//   A_rz[ir*nz + iz], Rd_ra[ir*na + ia], Tt_ra[ir*na + ia].
struct MCMLResult
{
    MCMLRun run;            // echoed input parameters (the InParm block)
    double userTime = 0.0;  // seconds, from the "# User time:" comment; 0 when absent

    double Rsp = 0.0;  // specular reflectance
    double Rd = 0.0;   // diffuse reflectance
    double A = 0.0;    // absorbed fraction
    double Tt = 0.0;   // total transmittance

    std::vector<double> A_l;   // per layer, size layers.size()
    std::vector<double> A_z;   // size nz, 1/cm
    std::vector<double> Rd_r;  // size nr, 1/cm2
    std::vector<double> Rd_a;  // size na, 1/sr
    std::vector<double> Tt_r;  // size nr, 1/cm2
    std::vector<double> Tt_a;  // size na, 1/sr
    std::vector<double> A_rz;  // size nr*nz, 1/cm3
    std::vector<double> Rd_ra; // size nr*na, 1/(cm2 sr)
    std::vector<double> Tt_ra; // size nr*na, 1/(cm2 sr)

    // Batch-means standard error of every value above (Rsp: 0, it is analytic), in the same
    // layout and units; null when the run had one batch (Kernels/BatchMeans.hpp).
    std::shared_ptr<const MCMLResult> standardError;
    uint64_t batches = 0;  // batches behind standardError
};
