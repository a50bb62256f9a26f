// SPDX-License-Identifier: GPL-3.0-or-later
// The lane loop of Kernels/CPU/CpuLanes.hpp, included once per instruction set with
// FM_LANES_NS naming a namespace of its own (so the two compilations never share a symbol).
#pragma once
#include <cstddef>
#include <type_traits>
#include <utility>

#include "Kernels/CPU/CpuLanes.hpp"

#ifndef FM_LANES_NS
#error "define FM_LANES_NS before including CpuLanesImpl.hpp"
#endif

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#define FM_LANE_INLINE inline __attribute__((always_inline))

namespace fm {
namespace FM_LANES_NS {

// Packets in flight per thread: four AVX2 registers' worth of each value, so that the
// out-of-order core has four independent dependency chains (a spin's square root and divisions,
// the next step's log) to overlap instead of one (32 lanes against 8: docs/PERFORMANCE.md).
constexpr int kLanes = 32;
static_assert(kLanes % 8 == 0 && kLanes <= 32, "whole AVX2 registers, lane masks in 32 bits");

// Packet state of the lanes, one array per field: lane l of every array is one packet.
struct LaneState {
    alignas(32) float px[kLanes], py[kLanes], pz[kLanes];
    alignas(32) float dx[kLanes], dy[kLanes], dz[kLanes];
    alignas(32) float w[kLanes], s[kLanes];
    alignas(32) uint32_t tetra[kLanes], steps[kLanes], hits[kLanes];
    alignas(32) uint32_t r0[kLanes], r1[kLanes], r2[kLanes], r3[kLanes];
    alignas(32) float opl[kLanes];  // the packet clock (PacketState::opl)

    // kClock false: the clock is left out (a lane loop whose scorer does not need it).
    template <bool kClock = true>
    FM_LANE_INLINE PacketState get(int l) const {
        return PacketState{Packet{Vec3{px[l], py[l], pz[l]}, Vec3{dx[l], dy[l], dz[l]}, tetra[l], w[l]},
                           PacketRng(PacketRng::State{r0[l], r1[l], r2[l], r3[l]}), s[l], steps[l], hits[l],
                           kClock ? opl[l] : 0.f};
    }
    template <bool kClock = true>
    FM_LANE_INLINE void put(int l, const PacketState& st) {
        px[l] = st.pk.pos.x; py[l] = st.pk.pos.y; pz[l] = st.pk.pos.z;
        dx[l] = st.pk.dir.x; dy[l] = st.pk.dir.y; dz[l] = st.pk.dir.z;
        w[l] = st.pk.w; s[l] = st.s;
        tetra[l] = st.pk.tetra; steps[l] = st.steps; hits[l] = st.hits;
        const PacketRng::State r = st.rng.state();
        r0[l] = r.s0; r1[l] = r.s1; r2[l] = r.s2; r3[l] = r.s3;
        if constexpr (kClock) opl[l] = st.opl;
    }
};

// The event each lane's packet had in the vector phase, for the scalar bookkeeping. The face
// normal a hop crosses is read back from the cell (the vector phase does not keep it: fewer
// live registers).
struct LaneEvents {
    alignas(32) uint32_t kind[kLanes];
    alignas(32) int32_t face[kLanes];
    alignas(32) float w0[kLanes], w1[kLanes];
    alignas(32) uint32_t adj[kLanes];  // hops: the neighbour across the face (stepLanes)
    alignas(32) float dist[kLanes];    // the length moved (scorers that need moves only)

    FM_LANE_INLINE void put(int l, const Event& e) {
        kind[l] = e.kind; face[l] = e.h.face;
        w0[l] = e.w0; w1[l] = e.w1;
    }
    FM_LANE_INLINE Event get(int l) const {
        Event e;
        e.h = FaceHit{0.f, face[l], Vec3{0.f, 0.f, 0.f}};
        e.w0 = w0[l]; e.w1 = w1[l]; e.kind = kind[l];
        return e;
    }
};

// MaterialRecord as the lanes hold it, derived from the type: one row per float of the record,
// in the record's order (laneMaterial rebuilds a record from its rows by aggregate
// initialisation, so a field that is not a float, or padding, is a compile error there).
constexpr int kMaterialFloats = int(sizeof(MaterialRecord) / sizeof(float));
static_assert(sizeof(MaterialRecord) % sizeof(float) == 0 && std::is_trivially_copyable_v<MaterialRecord> &&
                  std::is_standard_layout_v<MaterialRecord>,
              "the CPU lanes read MaterialRecord as a row of floats");
// The row of the refractive index (plain crossings compare it).
constexpr int kMaterialRowN = int(offsetof(MaterialRecord, n) / sizeof(float));

// The cell records of the lanes' packets, one array per field: the face planes and the
// material's fields. Filled before the vector phase with 16-byte loads and in-register
// transposes where AVX2 is there: the compiler would otherwise gather each field with 8 scalar
// loads.
struct LaneCells {
    alignas(32) float nx[4][kLanes], ny[4][kLanes], nz[4][kLanes], C[4][kLanes];
    alignas(32) float mat[kMaterialFloats][kLanes];
    alignas(32) uint32_t material[kLanes];
};

#if defined(__AVX2__)
// out[i][c + lane] = field i of the 4-float group at byte offset 16*g of lane c+lane's record,
// for the eight lanes from c.
FM_LANE_INLINE void transpose4(const float* const* rec, int g, float (*out)[kLanes], int c) {
    __m256 a[4];
    for (int l = 0; l < 4; ++l)
        a[l] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_load_ps(rec[l] + 4 * g)),
                                    _mm_load_ps(rec[l + 4] + 4 * g), 1);
    const __m256 t0 = _mm256_unpacklo_ps(a[0], a[1]), t1 = _mm256_unpackhi_ps(a[0], a[1]);
    const __m256 t2 = _mm256_unpacklo_ps(a[2], a[3]), t3 = _mm256_unpackhi_ps(a[2], a[3]);
    _mm256_store_ps(out[0] + c, _mm256_shuffle_ps(t0, t2, 0x44));
    _mm256_store_ps(out[1] + c, _mm256_shuffle_ps(t0, t2, 0xEE));
    _mm256_store_ps(out[2] + c, _mm256_shuffle_ps(t1, t3, 0x44));
    _mm256_store_ps(out[3] + c, _mm256_shuffle_ps(t1, t3, 0xEE));
}

// out[i][c + lane] = rec[lane][i] for eight records of eight floats.
FM_LANE_INLINE void transpose8(const float* const* rec, float (*out)[kLanes], int c) {
    __m256 r[8], t[8], u[8];
    for (int l = 0; l < 8; ++l) r[l] = _mm256_loadu_ps(rec[l]);
    for (int l = 0; l < 8; l += 2) {
        t[l] = _mm256_unpacklo_ps(r[l], r[l + 1]);
        t[l + 1] = _mm256_unpackhi_ps(r[l], r[l + 1]);
    }
    for (int h = 0; h < 8; h += 4) {
        u[h] = _mm256_shuffle_ps(t[h], t[h + 2], 0x44);
        u[h + 1] = _mm256_shuffle_ps(t[h], t[h + 2], 0xEE);
        u[h + 2] = _mm256_shuffle_ps(t[h + 1], t[h + 3], 0x44);
        u[h + 3] = _mm256_shuffle_ps(t[h + 1], t[h + 3], 0xEE);
    }
    for (int i = 0; i < 4; ++i) {
        _mm256_store_ps(out[i] + c, _mm256_permute2f128_ps(u[i], u[i + 4], 0x20));
        _mm256_store_ps(out[i + 4] + c, _mm256_permute2f128_ps(u[i], u[i + 4], 0x31));
    }
}
#endif

// Up to 8 materials, one row per MaterialRecord field: a lane's fields are then one permute of
// a row by its material index, instead of a load and a transpose.
constexpr uint32_t kMaterialTable = 8;
struct MaterialTable {
    alignas(32) float field[kMaterialFloats][kMaterialTable];
};

FM_LANE_INLINE void loadCells(const ArrayModel& m, const MaterialTable* table, const LaneState& L, LaneCells& C) {
    const float* planes[kLanes];
    const float* mats[kLanes];
    for (int l = 0; l < kLanes; ++l) {
        const TetraRecord& T = m.cells[L.tetra[l]];
        C.material[l] = T.material;
        planes[l] = T.nx;
        mats[l] = reinterpret_cast<const float*>(&m.materials[T.material]);
    }
#if defined(__AVX2__)
    for (int c = 0; c < kLanes; c += 8) {
        transpose4(planes + c, 0, C.nx, c);
        transpose4(planes + c, 1, C.ny, c);
        transpose4(planes + c, 2, C.nz, c);
        transpose4(planes + c, 3, C.C, c);
        if (table) {
            const __m256i idx = _mm256_load_si256(reinterpret_cast<const __m256i*>(C.material + c));
            for (int k = 0; k < kMaterialFloats; ++k)
                _mm256_store_ps(C.mat[k] + c, _mm256_permutevar8x32_ps(_mm256_load_ps(table->field[k]), idx));
        } else if constexpr (kMaterialFloats == 8) {  // a record is one AVX2 register
            transpose8(mats + c, C.mat, c);
        } else {
            for (int l = c; l < c + 8; ++l)
                for (int i = 0; i < kMaterialFloats; ++i) C.mat[i][l] = mats[l][i];
        }
    }
#else
    (void)table;
    for (int l = 0; l < kLanes; ++l) {
        for (int i = 0; i < 4; ++i) {
            C.nx[i][l] = planes[l][i];
            C.ny[i][l] = planes[l][4 + i];
            C.nz[i][l] = planes[l][8 + i];
            C.C[i][l] = planes[l][12 + i];
        }
        for (int i = 0; i < kMaterialFloats; ++i) C.mat[i][l] = mats[l][i];
    }
#endif
}

// Bit l set where lane l's event has any of the kEvent* bits `bits`.
FM_LANE_INLINE unsigned kindMask(const LaneEvents& E, uint32_t bits) {
#if defined(__AVX2__)
    const __m256i b = _mm256_set1_epi32(int(bits)), zero = _mm256_setzero_si256();
    unsigned m = 0;
    for (int c = 0; c < kLanes; c += 8) {
        const __m256i k = _mm256_load_si256(reinterpret_cast<const __m256i*>(E.kind + c));
        const __m256i none = _mm256_cmpeq_epi32(_mm256_and_si256(k, b), zero);
        m |= (~unsigned(_mm256_movemask_ps(_mm256_castsi256_ps(none))) & 0xffu) << c;
    }
    return m;
#else
    unsigned m = 0;
    for (int l = 0; l < kLanes; ++l) m |= ((E.kind[l] & bits) ? 1u : 0u) << l;
    return m;
#endif
}

// The model as one lane's moveEvent sees it: the planes of its packet's cell, loaded already.
struct LaneCell {
    CellPlanes P;
    FM_LANE_INLINE const CellPlanes& planes(uint32_t) const { return P; }
};

template <size_t... I>
FM_LANE_INLINE MaterialRecord laneMaterial(const LaneCells& C, int l, std::index_sequence<I...>) {
    return MaterialRecord{C.mat[I][l]...};
}
// Lane l's material record, from its rows.
FM_LANE_INLINE MaterialRecord laneMaterial(const LaneCells& C, int l) {
    return laneMaterial(C, l, std::make_index_sequence<kMaterialFloats>{});
}

// One lane's event (Core moveEvent, then interactEvent), in two vector loops to keep fewer
// values live at once: moveEvent for every lane, then interactEvent for the lanes that interact. Each is a
// function of its own, not the loop body: omp simd would otherwise privatise the packet state
// as per-lane arrays in memory.
template <bool kClock, bool kMoves>
FM_LANE_INLINE void moveLane(const LaneCells& C, const KernelParams& kp, LaneState& L, LaneEvents& E, int l) {
    PacketState st = L.get<kClock>(l);
    LaneCell cell;
    for (int i = 0; i < 4; ++i) {
        cell.P.nx[i] = C.nx[i][l];
        cell.P.ny[i] = C.ny[i][l];
        cell.P.nz[i] = C.nz[i][l];
        cell.P.C[i] = C.C[i][l];
    }
    const Event e = moveEvent<kClock>(cell, kp, laneMaterial(C, l), st);
    L.put<kClock>(l, st);
    E.put(l, e);
    if constexpr (kMoves) E.dist[l] = e.dist;
}

FM_LANE_INLINE void interactLane(const LaneCells& C, const KernelParams& kp, LaneState& L, LaneEvents& E, int l) {
    // Only what an interaction reads or changes: direction, weight, stream, next step, step count.
    PacketState st{Packet{Vec3{0.f, 0.f, 0.f}, Vec3{L.dx[l], L.dy[l], L.dz[l]}, 0u, L.w[l]},
                   PacketRng(PacketRng::State{L.r0[l], L.r1[l], L.r2[l], L.r3[l]}), L.s[l], L.steps[l], 0u};
    Event e;
    e.kind = E.kind[l];
    e.w0 = e.w1 = st.pk.w;
    if (e.kind & kEventInteract) interactEvent(kp, laneMaterial(C, l), st, e);
    L.dx[l] = st.pk.dir.x; L.dy[l] = st.pk.dir.y; L.dz[l] = st.pk.dir.z;
    L.w[l] = st.pk.w;
    const PacketRng::State r = st.rng.state();
    L.r0[l] = r.s0; L.r1[l] = r.s1; L.r2[l] = r.s2; L.r3[l] = r.s3;
    L.s[l] = st.s;
    L.steps[l] = st.steps;
    E.kind[l] = e.kind; E.w0[l] = e.w0; E.w1[l] = e.w1;
}

// Fetch the volume-tally entry of a cell ahead of its update (the per-thread volume array of
// a large mesh does not stay in L2 beside the cells). Other scorers: nothing.
template <class Scorer>
FM_LANE_INLINE void prefetchTally(const Scorer&, uint32_t) {}
template <bool S, bool D>
FM_LANE_INLINE void prefetchTally(const HostTallyScorer<true, S, D>& sc, uint32_t cell) {
    __builtin_prefetch(sc.volume + cell, 1);
}

// Whether a scorer's absorb(st, 0.0) changes nothing, costs one add and reads only the cell and
// position of st: then the drops are booked for all lanes, 0 where a lane did not interact,
// with no branch on which did (a loop over the set bits of a random mask mispredicts its exit
// about once per call).
template <class Scorer>
struct AbsorbsUnmasked : std::false_type {};
template <bool V, bool S, bool D>
struct AbsorbsUnmasked<HostTallyScorer<V, S, D>> : std::true_type {};

// Whether a scorer books crossings of scored faces (TallyScorer::cross: the directed tally).
// Unknown scorers are assumed to.
template <class Scorer>
struct BooksCrossings : std::true_type {};
template <bool V, bool S, bool D>
struct BooksCrossings<HostTallyScorer<V, S, D>> : std::bool_constant<D> {};

// The vector phase: one event of every lane's packet (idle lanes compute on stale state,
// which is harmless: their cell index stays valid and their results are never booked). The
// parameters are copied so that no load in the loops is conditional (GCC if-converts the
// branches only then). Scorers that need moves get them between the move and the interaction
// (lanes in `live`, each into its own scorer scs[l]).
template <class Scorer>
FM_LANE_INLINE void stepLanes(const ArrayModel& m, const MaterialTable* table, const uint8_t* crossing,
                              const KernelParams& kp, Scorer* scs, unsigned live, LaneState& L, LaneCells& C,
                              LaneEvents& E) {
    constexpr bool kClock = NeedsClock<Scorer>::value, kMoves = NeedsMoves<Scorer>::value;
    const Scorer& sc = scs[0];
    loadCells(m, table, L, C);
    const KernelParams k = kp;
#pragma omp simd
    for (int l = 0; l < kLanes; ++l) moveLane<kClock, kMoves>(C, k, L, E, l);
    if constexpr (kMoves) {
        for (unsigned b = live & kindMask(E, kEventInteract | kEventHop); b; b &= b - 1) {
            const int l = __builtin_ctz(b);
            scs[l].move(L.get(l), C.material[l], E.dist[l]);
        }
    }
    // The cell a hop enters (its planes are read by the next loadCells, its material by the
    // bookkeeping when there are no plainCrossingBits) and its volume-tally entry are rarely in
    // L2 on a large mesh: fetch them now, so that the interaction loop's arithmetic covers the
    // latency of these loads. Likewise the cell's plainCrossingBits byte, read when the packet
    // hops on from there.
    for (unsigned h = kindMask(E, kEventHop); h; h &= h - 1) {
        const int l = __builtin_ctz(h);
        const uint32_t adj = m.cells[L.tetra[l]].adj[E.face[l]];
        E.adj[l] = adj;
        const uint32_t next = isExterior(adj) ? 0u : adj;
        const char* p = reinterpret_cast<const char*>(m.cells + next);
        __builtin_prefetch(p);
        __builtin_prefetch(p + 64);
        __builtin_prefetch(p + sizeof(TetraRecord) - 1);
        prefetchTally(sc, next);
        if (crossing) __builtin_prefetch(crossing + next);  // read when the packet leaves that cell
    }
#pragma omp simd
    for (int l = 0; l < kLanes; ++l) interactLane(C, k, L, E, l);
}

template <class Scorer>
struct LaneRun {
    LaneRun(const ArrayModel& model, const KernelParams& params, PacketChunks& source, uint32_t materialCount,
            const uint8_t* crossingBits)
        : m(model), kp(params), packets(source), crossing(crossingBits) {
        if (materialCount >= 1 && materialCount <= kMaterialTable) {
            for (uint32_t i = 0; i < materialCount; ++i) {
                const float* f = reinterpret_cast<const float*>(&m.materials[i]);
                for (int k = 0; k < kMaterialFloats; ++k) matTable.field[k][i] = f[k];
            }
            table = &matTable;
        }
    }

    const ArrayModel& m;
    const KernelParams& kp;
    PacketCursor packets;     // the worker's chunks, a packet at a time
    const uint8_t* crossing;  // plainCrossingBits, or null
    LaneState L{};
    LaneCells C{};
    LaneEvents E{};
    MaterialTable matTable{};
    const MaterialTable* table = nullptr;  // &matTable when the model has at most 8 materials
    unsigned liveMask = 0;  // bit l: lane l has a packet
    Scorer sc[kLanes];  // one per lane: its own ledger and counts
    alignas(32) double absorbed[kLanes];  // sc[l].ledger.absorbed, kept here (bookInteractions)

    // Start the next packet in lane l: from the current chunk, else from the next one (so that
    // lanes stay busy across chunks); false when none is left.
    bool launch(int l) {
        for (uint64_t i; packets.next(i);) {
            PacketState st;
            if (launchPacket(m, kp, i, st, sc[l])) {
                L.put(l, st);
                return true;
            }
        }
        return false;
    }

    // Lane l's packet has ended: start the next one there, or leave the lane idle.
    void finish(int l) {
        if (!launch(l)) liveMask &= ~(1u << l);
    }

    // The drops of the lanes in mask `in` (interactions): bookInteraction for all lanes at once.
    // Each lane's absorbed sum stays its own (absorbed[l], in the same order of additions as
    // sc[l].ledger.absorbed would get), the counts are added as popcounts, and only the lanes
    // whose interaction was more than a scatter go through bookInteractionOutcome.
    void bookInteractions(unsigned in) {
        alignas(32) double dw[kLanes];
#pragma omp simd
        for (int l = 0; l < kLanes; ++l) dw[l] = double(E.w0[l]) - double(E.w1[l]);
#pragma omp simd
        for (int l = 0; l < kLanes; ++l) {
            dw[l] = ((in >> l) & 1u) ? dw[l] : 0.0;  // x + 0.0 == x: no sum changes
            absorbed[l] += dw[l];
        }
        if constexpr (AbsorbsUnmasked<Scorer>::value) {
            for (int l = 0; l < kLanes; ++l) {
                PacketState st;  // the cell and position: all that the standard tallies read
                st.pk.tetra = L.tetra[l];
                st.pk.pos = Vec3{L.px[l], L.py[l], L.pz[l]};
                sc[l].absorb(st, dw[l]);
            }
        } else {
            for (unsigned b = in; b; b &= b - 1) {
                const int l = __builtin_ctz(b);
                sc[l].absorb(L.get(l), dw[l]);
            }
        }
        const unsigned special = kindMask(E, kEventLost | kEventWon | kEventTooLong) & in;
        sc[0].events.absorb += uint32_t(__builtin_popcount(in));
        sc[0].events.scatter += uint32_t(__builtin_popcount(in & ~special));
        for (unsigned b = special; b; b &= b - 1) {
            const int l = __builtin_ctz(b);
            if (!bookInteractionOutcome(E.get(l), L.get(l), sc[l])) finish(l);
        }
    }

    // The hops and guards of the lanes in mask `other`. A plain crossing (Core plainCrossing:
    // same refractive index, no exit, no scored face) only moves the packet to the neighbour;
    // the others go through bookEvent (crossFace: Fresnel, exits, face tallies) with the
    // packet's whole state. Scalar on purpose: the branch on the (usually plain) outcome lets
    // the CPU go on before the neighbour's material arrives from memory; the same decision in
    // vector form (gathers, a blend of the cell index) would make the next event wait for it,
    // which is slower despite fewer instructions.
    void bookHops(unsigned other) {
        const unsigned hops = kindMask(E, kEventHop) & other;
        unsigned slow = other & ~hops;
        for (unsigned b = hops; b; b &= b - 1) {
            const int l = __builtin_ctz(b);
            bool plain, newMaterial;
            if (crossing) {  // from the cell the packet leaves
                const uint32_t bits = crossing[L.tetra[l]] >> E.face[l];
                plain = bits & 1u;
                newMaterial = (bits >> 4) & 1u;
            } else {  // from the neighbour's record
                uint32_t nextMat;
                plain = plainCrossing<BooksCrossings<Scorer>::value>(m, L.tetra[l], E.face[l], C.mat[kMaterialRowN][l],
                                                                    E.adj[l], nextMat);
                newMaterial = plain && nextMat != C.material[l];
            }
            if (plain) {
                L.tetra[l] = E.adj[l];
                ++sc[0].events.boundary;
                sc[0].events.interface += newMaterial ? 1u : 0u;
            } else {
                slow |= 1u << l;
            }
        }
        for (; slow; slow &= slow - 1) {
            const int l = __builtin_ctz(slow);
            Event e = E.get(l);
            PacketState st = L.get(l);
            const uint32_t mat = C.material[l];
            if (e.h.face >= 0) {  // the normal of the face crossed, from the cell
                const TetraRecord& T = m.cells[L.tetra[l]];
                e.h.normal = Vec3{T.nx[e.h.face], T.ny[e.h.face], T.nz[e.h.face]};
            }
            if (bookEvent(m, mat, m.material(mat), e, st, sc[l])) L.put(l, st);  // crossed
            else finish(l);
        }
    }

    // A cancelled run: the packets in flight end here, their weight booked abnormal (the
    // ledger still closes).
    void abandonLanes() {
        packets.abandon(uint64_t(__builtin_popcount(liveMask)));
        for (unsigned b = liveMask; b; b &= b - 1) {
            const int l = __builtin_ctz(b);
            endAbnormal(L.get(l), sc[l]);
        }
        liveMask = 0;
    }

    void run(Scorer& out) {
        for (int l = 0; l < kLanes; ++l) {
            sc[l] = out;
            if (l > 0) {
                sc[l].ledger = Ledger{};
                sc[l].events = decltype(out.events){};
            }
            absorbed[l] = sc[l].ledger.absorbed;
        }
        for (int l = 0; l < kLanes; ++l)
            if (launch(l)) liveMask |= 1u << l;
        for (uint32_t tick = 1; liveMask; ++tick) {
            if (tick % kStopCheckEvents == 0 && packets.stopping()) {
                abandonLanes();
                break;
            }
            stepLanes(m, table, crossing, kp, sc, liveMask, L, C, E);
            // Interactions first, then hops and guards, each over a bit mask of lanes: no
            // branch on the (random) kind of each lane's event.
            const unsigned in = kindMask(E, kEventInteract) & liveMask;
            bookInteractions(in);
            bookHops(~in & liveMask);
        }
        for (int l = 0; l < kLanes; ++l) {
            sc[l].flush();
            sc[l].ledger.absorbed = absorbed[l];
            if (l > 0) {
                sc[0].ledger.add(sc[l].ledger);
                sc[0].events.add(sc[l].events);
            }
        }
        out = sc[0];
    }
};

template <class Scorer>
void runLanes(const ArrayModel& m, const KernelParams& kp, PacketChunks& chunks, Scorer& sc, uint32_t materialCount,
              const uint8_t* crossing) {
#if FM_LANES_SCALAR
    (void)materialCount;
    (void)crossing;
    // One packet at a time through advance(): without AVX2 (no gathers, no blends) the lane
    // loop is slower than this. Each packet's history is the same either way.
    PacketState st;
    KeptMaterial km;
    runOneByOne(
        chunks,
        [&](uint64_t i) {
            if (!launchPacket(m, kp, i, st, sc)) return false;
            km = keptMaterial(m, st.pk.tetra);
            return true;
        },
        [&] { return advance(m, kp, st, km, sc); }, [&] { endAbnormal(st, sc); });
    sc.flush();
#else
    LaneRun<Scorer> r(m, kp, chunks, materialCount, crossing);
    r.run(sc);
#endif
}

// The scorers the CPU kernel uses: the eight output choices of runCpu. (A translation unit that
// compiles the lane loop for scorers of its own, with the lane flags, defines
// FM_LANES_OWN_SCORERS and instantiates runLanes for them: Tests/Kernels/DepthTally.hpp.)
#ifndef FM_LANES_OWN_SCORERS
#define FM_LANES_INSTANTIATE(V, S, D)                                                        \
    template void runLanes(const ArrayModel&, const KernelParams&, PacketChunks&,             \
                           HostTallyScorer<V, S, D>&, uint32_t, const uint8_t*);
FM_FOR_EACH_HOST_OUTPUTS(FM_LANES_INSTANTIATE)
#undef FM_LANES_INSTANTIATE
#define FM_LANES_INSTANTIATE_SCORER(Scorer)                                                  \
    template void runLanes(const ArrayModel&, const KernelParams&, PacketChunks&, Scorer&, uint32_t, const uint8_t*);
FM_FOR_EACH_EXTRA_LANE_SCORER(FM_LANES_INSTANTIATE_SCORER)
#undef FM_LANES_INSTANTIATE_SCORER
#endif

}  // namespace FM_LANES_NS
}  // namespace fm
