// SPDX-License-Identifier: GPL-3.0-or-later
// Packet traces (FullMonte's TetraTraceKernel / PacketPositionTraceSet): the path of a packet as
// the sequence of its states after each event of the common packet loop. The loop itself is not
// touched: tracePacket drives launchPacket/advance from Packet.hpp and records the packet after
// every call, reading what happened from the scorer's event counters and the time from the
// packet clock (PacketState::opl, kept because the scorer says kNeedsClock). So a traced packet
// follows exactly the physics (and random stream) of an untraced one, and the ordinary kernels,
// which never include this header, pay nothing for it.
#pragma once
#include "Kernels/Core/Packet.hpp"
#include "Kernels/Core/TraceSet.hpp"

namespace fm {

// Runs packet `index` like runPacket, calling sink(const TraceStep&) at launch and after every
// event. Scorer is any scorer of the packet loop that keeps the packet clock (a pack with
// PacketClock, Core/Tally.hpp); its tallies are filled as usual.
template <class Model, class Scorer, class Sink>
void tracePacket(const Model& m, const KernelParams& kp, uint64_t index, Scorer& sc, Sink&& sink) {
    static_assert(NeedsClock<Scorer>::value, "traces read the packet clock: add PacketClock to the scorer's pack");
    PacketState st;
    const bool live = launchPacket(m, kp, index, st, sc);
    TraceStep s{};
    auto record = [&](uint8_t event, float w) {
        const Packet& pk = st.pk;
        float dx = pk.pos.x - s.pos[0], dy = pk.pos.y - s.pos[1], dz = pk.pos.z - s.pos[2];
        float len = event == kTraceLaunch ? 0.f : fm_sqrt(dx * dx + dy * dy + dz * dz);
        s.step = len;
        s.path += len;
        s.time = float(st.opl / kLightSpeedMmPerNs);
        s.pos[0] = pk.pos.x;
        s.pos[1] = pk.pos.y;
        s.pos[2] = pk.pos.z;
        s.w = w;
        s.tetra = pk.tetra;
        s.material = uint16_t(pk.tetra ? m.cellMaterial(pk.tetra) : 0);
        s.event = event;
        sink(s);
    };
    if (!live) {
        record(kTraceAbnormal, 0.f);
        return;
    }
    record(kTraceLaunch, st.pk.w);
    for (;;) {
        const auto before = sc.events;
        const bool more = advance(m, kp, st, sc);
        const auto& after = sc.events;
        uint8_t ev;
        float w = st.pk.w;
        if (after.abnormal != before.abnormal) ev = kTraceAbnormal, w = 0.f;
        else if (after.exit != before.exit) ev = kTraceExit;
        else if (after.die != before.die) ev = kTraceRouletteDeath, w = 0.f;
        else if (after.win != before.win) ev = kTraceRouletteWin;
        else if (after.scatter != before.scatter) ev = kTraceScatter;
        else if (after.tir != before.tir || after.fresnel != before.fresnel) ev = kTraceReflect;
        else ev = kTraceCross;
        record(ev, w);
        if (!more) return;
    }
}

}  // namespace fm
