// SPDX-License-Identifier: GPL-3.0-or-later
// TIM-OS text formats (.mesh .opt .source): 1-based indices, mm and 1/mm.
#pragma once
#include <istream>
#include <string>

#include "Geometry/MaterialSet.hpp"
#include "Geometry/Sources.hpp"

namespace fm {

TetraMesh readTIMOSMesh(const std::string& path, const MeshCheckOptions& check = {});
MaterialSet readTIMOSMaterials(const std::string& path);
// The same from a stream (text in memory); name stands for the file in error messages.
TetraMesh readTIMOSMesh(std::istream& in, const std::string& name, const MeshCheckOptions& check = {});
MaterialSet readTIMOSMaterials(std::istream& in, const std::string& name);

// The least sum of weights read as a packet count (filePacketCount).
constexpr double kMinFilePacketCount = 1000;
struct TIMOSSources {
    SourcePtr source;       // a CompositeSource when the file has several rows
    double totalPackets;    // sum of the rows' w (TIM-OS: photon counts)
    // The packet count a run without one given takes from the file: the weights' sum where every
    // weight is a whole number and they add up to at least kMinFilePacketCount (TIM-OS's photon
    // counts), else 0 (relative powers, as FullMonte's TIMOSSourceWriter writes them: the run's
    // default count applies). Each row's own count is then its weight.
    double packetCount = 0;
};
TIMOSSources readTIMOSSource(const std::string& path);
TIMOSSources readTIMOSSource(std::istream& in, const std::string& name);

void writeTIMOSMesh(const std::string& path, const TetraMesh& mesh);
void writeTIMOSMaterials(const std::string& path, const MaterialSet& mats);
// Points, volumes, pencil beams, triangle surfaces and composites of them.
void writeTIMOSSource(const std::string& path, const Source& src, const TetraMesh& mesh);

}  // namespace fm
