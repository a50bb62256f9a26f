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
// Refused with a message naming the file and line (.inp) or JSON path: element labels 0/-1/-2
// (MMC's background, wide-field source and detector elements), source types other than pencil
// and isotropic, DoMismatch 0 with media of different refractive indices.
#pragma once
#include <cstdint>
#include <string>

#include "Geometry/MaterialSet.hpp"
#include "Geometry/Sources.hpp"
#include "Geometry/TetraMesh.hpp"

namespace fm {

struct MMCSimulation {
    TetraMesh mesh;
    MaterialSet materials;
    SourcePtr source;
    uint64_t photons = 0;  // Session.Photons / line 1; 0 when not given
    int64_t seed = -1;     // Session.RNGSeed / line 2; < 0: not given (MMC: pick one at random)
    std::string id;        // Session.ID, else the mesh id
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
// The mesh and media of mesh id `id` in `dir` (node_/elem_/prop_<id>.dat).
TetraMesh meshFiles(const std::string& dir, const std::string& id);
MaterialSet propFile(const std::string& dir, const std::string& id, double exteriorN);
// MMC's pencil (or isotropic) source at pos along dir, in element initElem when it holds pos.
SourcePtr source(const std::string& type, const Point3& pos, const Point3& dir, long long initElem,
                 const TetraMesh& mesh, const std::string& where);
std::string folderOf(const std::string& path);
}  // namespace mmcdetail

}  // namespace fm
