// SPDX-License-Identifier: GPL-3.0-or-later
// The lane loop compiled for the detecting scorers (Kernels/DetectorTally.hpp), once per
// instruction set: included by CpuLanesDetectingAvx2.cpp / CpuLanesDetectingGeneric.cpp after
// CpuLanesImpl.hpp with FM_LANES_NS and FM_LANES_OWN_SCORERS defined.
#pragma once
#include "Kernels/DetectorTally.hpp"

namespace fm {
namespace FM_LANES_NS {
#define FM_DETECTING_LANES_INSTANTIATE(V, S, D)                                               \
    template void runLanes(const ArrayModel&, const KernelParams&, PacketChunks&,             \
                           DetectingHostScorer<V, S, D>&, uint32_t, const uint8_t*);
FM_FOR_EACH_HOST_OUTPUTS(FM_DETECTING_LANES_INSTANTIATE)
#undef FM_DETECTING_LANES_INSTANTIATE
}  // namespace FM_LANES_NS
}  // namespace fm
