// SPDX-License-Identifier: GPL-3.0-or-later
// The CPU lane loop (generic) compiled for the toy DepthScorer (Tests/Kernels/DepthTally.hpp).
#include "Tests/Kernels/DepthTally.hpp"
#define FM_LANES_NS depth_lanes_generic
#define FM_LANES_OWN_SCORERS 1
#define FM_LANES_SCALAR 1
#include "Kernels/CPU/CpuLanesImpl.hpp"

namespace fm {
namespace depth_lanes_generic {
void runLanes(const ArrayModel& m, const KernelParams& kp, PacketChunks& chunks, DepthScorer& sc,
              uint32_t materialCount, const uint8_t* crossing) {
    runLanes<DepthScorer>(m, kp, chunks, sc, materialCount, crossing);
}
}  // namespace depth_lanes_generic
}  // namespace fm
