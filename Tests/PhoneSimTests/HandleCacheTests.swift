// SPDX-License-Identifier: Apache-2.0
// A bonded phone's reconnection with the handles of its last link (issue
// 30): the simulated iPhone and the whole core back to back, the wearable's
// ATT requests counted from the PDUs it sent.

import Bounded
import Firmware
import PhoneSim
import Testing
import TestSupport

extension WearableLoopback {
    /// A scenario line, as the phone's console takes it.
    mutating func command(_ line: String) {
        do { try phone.run(line, now: now) } catch { preconditionFailure("test command does not parse: \(error.kind)") }
        settle()
    }
}

@Suite("The bonded phone's handle cache, against the simulated iPhone")
struct HandleCacheTests {
    /// ATT request opcodes (Core Vol 3 Part F 3.4.8): what costs a round trip.
    static let requestOpcodes: Set<UInt8> = [0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x20]

    /// The wearable's requests in `trace[from...]`, up to and including the
    /// first PDU starting with `until` (all of them when nil).
    static func requests(_ trace: [String], from: Int, until: String? = nil) -> [String] {
        var out: [String] = []
        for line in trace[from...] where line.hasPrefix("W> ") {
            let pdu = String(line.dropFirst(3))
            guard let first = hex(pdu).first, requestOpcodes.contains(first) else { continue }
            out.append(pdu)
            if let until, pdu.hasPrefix(until) { break }
        }
        return out
    }

    static let nsSubscribe = "12 13 00 01 00"
    static let currentTimeSubscribe = "12 33 00 01 00"

    /// A first link to the end of AMS and CTS, then a reconnection.
    static func reconnect(_ rig: inout WearableLoopback, _ between: (inout WearableLoopback) -> Void = { _ in }) -> (first: [String], mark: Int) {
        rig.connect()
        rig.run(forMs: 2_000)
        let first = requests(rig.trace, from: 0)
        rig.command("disconnect")
        between(&rig)
        let mark = rig.trace.count
        rig.command("connect")
        rig.run(forMs: 2_000)
        return (first, mark)
    }

    @Test("bonded reconnection: ANCS is live after the MTU exchange and the two CCCD writes (3 requests, 13 on the first link)")
    func bondedReconnectionSkipsDiscovery() {
        var rig = WearableLoopback()
        let (first, mark) = Self.reconnect(&rig)
        let firstToLive = Self.requests(rig.trace, from: 0, until: Self.nsSubscribe)
        #expect(firstToLive.count == 13, "the first link discovers: \(firstToLive)")
        let toLive = Self.requests(rig.trace, from: mark, until: Self.nsSubscribe)
        #expect(toLive == ["02 05 02", "12 18 00 01 00", Self.nsSubscribe], "\(toLive)")
        #expect(rig.core.phone.state == .live)
        #expect(rig.events.contains(.link(.handles(.cached))))
        #expect(rig.core.phone.counters.handleCacheUses == 1)
        #expect(!rig.events.contains { if case .link(.handles(.stale)) = $0 { true } else { false } })
        _ = first
    }

    @Test("bonded reconnection: AMS and CTS from the cache, no discovery (6 requests after ANCS, 22 on the first link)")
    func companionServicesFromCache() {
        var rig = WearableLoopback()
        let (first, mark) = Self.reconnect(&rig)
        let afterLive = Self.requests(rig.trace, from: mark)
        let nsIndex = afterLive.firstIndex(of: Self.nsSubscribe) ?? 0
        let companion = Array(afterLive[(nsIndex + 1)...])
        #expect(companion == ["12 23 00 01 00", "12 26 00 01 00", "12 25 00 00 01", "0A 32 00", "0A 35 00", Self.currentTimeSubscribe],
                "Remote Command and Entity Update subscribed, Entity Update registered, the time read and subscribed: \(companion)")
        let firstCompanion = first.count - (first.firstIndex(of: Self.nsSubscribe) ?? 0) - 1
        #expect(firstCompanion > companion.count, "the first link discovered AMS and CTS: \(first)")
        #expect(!companion.contains { $0.hasPrefix("06") || $0.hasPrefix("08") || $0.hasPrefix("04") }, "no discovery request")
        #expect(rig.events.contains { if case .link(.time(.learned)) = $0 { true } else { false } })
        #expect(!rig.events.contains(.link(.media(.absent))))
    }

    @Test("changed while away: the phone removed AMS; the cached Remote Command is refused and the phone's Service Changed at the encrypted reconnection covers AMS: AMS is looked for again and reported absent")
    func amsRemovedWhileAway() {
        var rig = WearableLoopback()
        let (_, mark) = Self.reconnect(&rig) { rig in rig.command("no-ams") }
        #expect(rig.phoneEvents.contains(.serviceChangedIndicated(start: PhoneDatabase.amsService, end: PhoneDatabase.amsEnd)))
        #expect(rig.events.contains(.link(.handles(.stale(.serviceChanged)))))
        #expect(rig.core.phone.state == .live)
        let after = Self.requests(rig.trace, from: mark)
        let amsLookup = "06 01 00 FF FF 00 28 " + Wire.ams
        #expect(after.contains(amsLookup), "AMS is looked for again: \(after)")
        #expect(after.filter { $0 == "12 23 00 01 00" }.count <= 1, "the gone Remote Command is not written again")
        #expect(rig.events.contains(.link(.media(.absent))))
    }

    @Test("changed while away: ANCS removed and added back; the Service Changed over its handles makes the wearable discover ANCS again, and notifications still arrive")
    func ancsChangedWhileAway() {
        var rig = WearableLoopback()
        let (_, mark) = Self.reconnect(&rig) { rig in
            rig.command("remove-ancs")
            rig.command("add-ancs")
        }
        #expect(rig.events.contains(.link(.handles(.stale(.serviceChanged)))))
        let after = Self.requests(rig.trace, from: mark)
        #expect(after.filter { $0.hasPrefix("06") }.count >= 1, "ANCS discovered again: \(after)")
        #expect(rig.core.phone.state == .live)
        rig.command("message \"Ann\" \"hello\" uid=40")
        rig.run(forMs: 500)
        #expect(!rig.added.isEmpty)
    }

    @Test("a phone the wearable never saw encrypted is not given cached handles")
    func firstLinkDiscovers() {
        var rig = WearableLoopback()
        rig.connect()
        rig.run(forMs: 2_000)
        #expect(!rig.events.contains(.link(.handles(.cached))))
        #expect(Self.requests(rig.trace, from: 0, until: Self.nsSubscribe).count == 13)
    }
}
