// SPDX-License-Identifier: GPL-3.0-or-later
// MMC (mesh-based Monte Carlo, Fang 2010) simulation inputs: the classic .inp text file and the
// JSON input (Mesh/Domain, Session, Forward, Optode), with the mesh in MMC's node_<id>.dat,
// elem_<id>.dat, prop_<id>.dat files (MeshID) or inline (MeshNode, MeshElem, Domain.Media).
//
// What a FullMonte run takes from them: mesh, media, source, photon count and seed. MMC's time
// gates, detectors and output options are read past (FullMonte's outputs are continuous-wave).
// MMC's conventions kept: media 1..N in 1/mm, medium 0 (JSON Media[0], or Forward.N0, or the
// exteriorN argument for .inp files) is the exterior and gives its refractive index; g = 1 is a
// non-scattering medium; a pencil beam starts at Pos in InitElem with weight 1 and no specular
// reflection (MMC launches inside the mesh); LengthUnit scales coordinates to mm.
// MMC's background elements (labels 0 and -1) are left out of the mesh (Storage/MMC/MMC.hpp): a
// photon crossing into them leaves, as in MMC. A pencil whose InitElem is a background element
// starts in that background and enters the tissue through the surface its ray meets, reflected
// and refracted there as MMC's photon (booked specular), none with DoMismatch 0.
// Refused with a message naming the file and line (.inp) or JSON path: element label -2 (MMC's
// external detector elements), source types FullMonte does not have (docs/COMPATIBILITY.md),
// DoMismatch 0 with media of different refractive indices.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "Geometry/MaterialSet.hpp"
#include "Geometry/Sources.hpp"
#include "Geometry/TetraMesh.hpp"

namespace fm {

struct MMCSimulation {
    TetraMesh mesh;
    MaterialSet materials;
    SourcePtr source;
    uint64_t photons = 0;  // Session.Photons / line 1; 0 when not given
    int64_t seed = -1;     // Session.RNGSeed / line 2; -1: not given
    // Set when the file's seed is negative, MMC's "seed from the clock": `seed` is then one drawn
    // here, and the note names it so that the user can repeat the run.
    std::string seedNote;
    std::string id;        // Session.ID, else the mesh id
    uint64_t backgroundElements = 0;    // MMC elements of labels 0 and -1, left out of the mesh
    std::vector<std::string> warnings;  // for the user (what was read differently from MMC's files)
};

// .inp: photons, seed, source position, direction, time gates, mesh id, initial element,
// detectors (and an optional source type line); mesh files beside the .inp. exteriorN: MMC's
// -n/nout (1 by default), which the .inp does not hold.
MMCSimulation readMMCInp(const std::string& path, double exteriorN = 1.0);

// JSON input. Throws ParameterError when FullMonte was built without nlohmann-json.
MMCSimulation readMMCJson(const std::string& path);

// By extension: .json or .inp.
MMCSimulation readMMCInput(const std::string& path, double exteriorN = 1.0);

namespace mmcdetail {
// The mesh and media of mesh id `id` in `dir` (node_/elem_/prop_<id>.dat); tetraOfElement as
// readMMCMesh's.
TetraMesh meshFiles(const std::string& dir, const std::string& id, std::vector<uint32_t>& tetraOfElement);
MaterialSet propFile(const std::string& dir, const std::string& id, double exteriorN);
// MMC's source as the input gives it (Type, Pos, Dir, Param1, Param2, InitElem in MMC's numbering).
struct SourceSpec {
    std::string type = "pencil";
    Point3 pos{}, dir{0, 0, 1};
    double param1[4]{}, param2[4]{};
    long long initElem = 0;
};
// The FullMonte source for spec; tetraOfElement maps MMC element ids to tetras (0: background).
// Errors name `where` (file and line, or JSON path).
SourcePtr source(const SourceSpec& spec, const TetraMesh& mesh, const MaterialSet& mats,
                 const std::vector<uint32_t>& tetraOfElement,
                 const std::string& where);
// The warning that says how many background elements were left out; "" when none.
std::string backgroundNote(const std::vector<uint32_t>& tetraOfElement, uint64_t& count);
std::string folderOf(const std::string& path);
// Sets s.seed from MMC's seed as written (the .inp's line 2, Session.RNGSeed): a whole number in
// [0, 2^63-1] is the seed; a negative whole number asks for a seed from the clock, as MMC reads it:
// one is drawn (drawSeed) and s.seedNote says which, naming `where` (file:line or key). False when
// the text is neither (the caller refuses it, naming its line or key).
bool setSeed(MMCSimulation& s, const std::string& text, const std::string& where);
// A seed from std::random_device mixed with the clock, in [1, 2^31-1]: MMC's seeds are 32-bit, so
// the file stays an MMC input when the user writes the seed into it.
int64_t drawSeed();
}  // namespace mmcdetail

}  // namespace fm
