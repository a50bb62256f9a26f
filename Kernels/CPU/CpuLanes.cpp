// SPDX-License-Identifier: GPL-3.0-or-later
// Chooses the lane loop for the CPU this runs on (Kernels/CPU/CpuLanes.hpp).
#include "Kernels/CPU/CpuLanes.hpp"

#include <mutex>

#include "Kernels/CPU/McmlLanes.hpp"

namespace fm {

#define FM_LANES_DECLARE(NS)                                                                   \
    namespace NS {                                                                             \
    template <class Scorer>                                                                    \
    void runLanes(const ArrayModel& m, const KernelParams& kp, PacketChunks& chunks,          \
                  Scorer& sc, uint32_t materialCount, const uint8_t* crossing);                \
    void runSlabLanes(const SlabModel& m, const KernelParams& kp, PacketChunks& chunks,       \
                      HostSlabSink& sk);                                                       \
    }
FM_LANES_DECLARE(lanes_generic)
#if FM_HAVE_AVX2_LANES
FM_LANES_DECLARE(lanes_avx2)
#endif
#undef FM_LANES_DECLARE

namespace {

bool useAvx2(CpuIsa requested) {
#if FM_HAVE_AVX2_LANES
    static const bool cpuHasAvx2 = [] {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") != 0;
    }();
    return requested == CpuIsa::Best && cpuHasAvx2;
#else
    (void)requested;
    return false;
#endif
}

}  // namespace

const char* cpuLaneIsa(CpuIsa requested) { return useAvx2(requested) ? "avx2" : "generic"; }

std::vector<uint8_t> plainCrossingBits(const KernelInput& in) {
    const ArrayModel m = in.view();
    std::vector<uint8_t> bits(in.cells.size(), 0);
    for (uint32_t i = 1; i < bits.size(); ++i) {
        const uint32_t mat = m.cellMaterial(i);
        const float n = m.material(mat).n;
        for (int f = 0; f < 4; ++f) {
            uint32_t nextMat = mat;
            if (plainCrossing<true>(m, i, f, n, m.adjacent(i, f), nextMat))
                bits[i] |= uint8_t((1u << f) | ((nextMat != mat ? 1u : 0u) << (4 + f)));
        }
    }
    return bits;
}

std::shared_ptr<const std::vector<uint8_t>> keptPlainCrossingBits(const KernelInput& in) {
    using Bits = std::shared_ptr<const std::vector<uint8_t>>;
    if (in.cellsIdentity == 0) return std::make_shared<const std::vector<uint8_t>>(plainCrossingBits(in));
    std::vector<float> n(in.materials.size());
    for (size_t i = 0; i < n.size(); ++i) n[i] = in.materials[i].n;
    struct Kept {
        std::mutex m;
        uint64_t identity = 0;
        size_t cells = 0;
        std::vector<float> n;
        Bits bits;
    };
    static Kept kept;
    {
        std::lock_guard<std::mutex> g(kept.m);
        if (kept.bits && kept.identity == in.cellsIdentity && kept.cells == in.cells.size() && kept.n == n)
            return kept.bits;
    }
    Bits bits = std::make_shared<const std::vector<uint8_t>>(plainCrossingBits(in));
    std::lock_guard<std::mutex> g(kept.m);
    kept.identity = in.cellsIdentity;
    kept.cells = in.cells.size();
    kept.n = std::move(n);
    kept.bits = bits;
    return bits;
}

template <class Scorer>
void runPacketLanes(const ArrayModel& m, const KernelParams& kp, PacketChunks& chunks, Scorer& sc,
                    uint32_t materialCount, const uint8_t* crossing, CpuIsa isa) {
#if FM_HAVE_AVX2_LANES
    if (useAvx2(isa)) return lanes_avx2::runLanes(m, kp, chunks, sc, materialCount, crossing);
#endif
    lanes_generic::runLanes(m, kp, chunks, sc, materialCount, crossing);
}

void runSlabLanes(const SlabModel& m, const KernelParams& kp, PacketChunks& chunks, HostSlabSink& sk, CpuIsa isa) {
#if FM_HAVE_AVX2_LANES
    if (useAvx2(isa)) return lanes_avx2::runSlabLanes(m, kp, chunks, sk);
#endif
    lanes_generic::runSlabLanes(m, kp, chunks, sk);
}

namespace {
struct OneRange final : PacketChunks {
    uint64_t b, e;
    bool given = false;
    OneRange(uint64_t begin, uint64_t end) : b(begin), e(end) {}
    bool next(uint64_t& begin, uint64_t& end) override {
        if (given || b >= e) return false;
        given = true;
        begin = b;
        end = e;
        return true;
    }
};
}  // namespace

template <class Scorer>
void runPacketLanes(const ArrayModel& m, const KernelParams& kp, uint64_t begin, uint64_t end, Scorer& sc,
                    uint32_t materialCount) {
    OneRange r(begin, end);
    runPacketLanes(m, kp, r, sc, materialCount);
}

#define FM_LANES_INSTANTIATE(V, S, D)                                                          \
    template void runPacketLanes(const ArrayModel&, const KernelParams&, uint64_t, uint64_t,  \
                                 HostTallyScorer<V, S, D>&, uint32_t);                         \
    template void runPacketLanes(const ArrayModel&, const KernelParams&, PacketChunks&,       \
                                 HostTallyScorer<V, S, D>&, uint32_t, const uint8_t*, CpuIsa);
FM_FOR_EACH_HOST_OUTPUTS(FM_LANES_INSTANTIATE)
#undef FM_LANES_INSTANTIATE
#define FM_LANES_INSTANTIATE_SCORER(Scorer)                                                    \
    template void runPacketLanes(const ArrayModel&, const KernelParams&, uint64_t, uint64_t, Scorer&, uint32_t); \
    template void runPacketLanes(const ArrayModel&, const KernelParams&, PacketChunks&, Scorer&, uint32_t, \
                                 const uint8_t*, CpuIsa);
FM_FOR_EACH_EXTRA_LANE_SCORER(FM_LANES_INSTANTIATE_SCORER)
#undef FM_LANES_INSTANTIATE_SCORER

}  // namespace fm
