// SPDX-License-Identifier: GPL-3.0-or-later
// Chooses the detecting lane loop for the CPU this runs on, as runPacketLanes does
// (Kernels/CPU/CpuLanes.cpp): AVX2 where built and the CPU has it.
#include <cstring>

#include "Kernels/DetectorTally.hpp"

namespace fm {

#define FM_DETECTING_LANES_DECLARE(NS)                                                         \
    namespace NS {                                                                             \
    template <class Scorer>                                                                    \
    void runLanes(const ArrayModel& m, const KernelParams& kp, PacketChunks& chunks,          \
                  Scorer& sc, uint32_t materialCount, const uint8_t* crossing);                \
    }
FM_DETECTING_LANES_DECLARE(detecting_lanes_generic)
#if FM_HAVE_AVX2_LANES
FM_DETECTING_LANES_DECLARE(detecting_lanes_avx2)
#endif
#undef FM_DETECTING_LANES_DECLARE

template <class Scorer>
void runDetectingLanes(const ArrayModel& m, const KernelParams& kp, PacketChunks& chunks, Scorer& sc,
                       uint32_t materialCount, const uint8_t* crossing, CpuIsa isa) {
#if FM_HAVE_AVX2_LANES
    if (std::strcmp(cpuLaneIsa(isa), "avx2") == 0)
        return detecting_lanes_avx2::runLanes(m, kp, chunks, sc, materialCount, crossing);
#endif
    detecting_lanes_generic::runLanes(m, kp, chunks, sc, materialCount, crossing);
}

#define FM_DETECTING_INSTANTIATE(V, S, D)                                                      \
    template void runDetectingLanes(const ArrayModel&, const KernelParams&, PacketChunks&,    \
                                    DetectingHostScorer<V, S, D>&, uint32_t, const uint8_t*, CpuIsa);
FM_FOR_EACH_HOST_OUTPUTS(FM_DETECTING_INSTANTIATE)
#undef FM_DETECTING_INSTANTIATE

}  // namespace fm
