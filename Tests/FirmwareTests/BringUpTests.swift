// SPDX-License-Identifier: Apache-2.0
import ANCS
import ATT
import Bounded
import Firmware
import Glibc
import Platform
import PlatformLinux
import Testing
import TestSupport

@Suite("ANCS bring-up over a SOCK_SEQPACKET link through the poll loop")
struct BringUpTests {
    @Test("MTU 185: discovery, Data Source then Notification Source, then notifications decode")
    func bringUpAtMTU185() {
        var rig = Rig()
        rig.run(Script.bringUp)
        rig.settle()
        #expect(rig.state == .live)
        #expect(rig.runner.core.phone.bearer.mtu == 185)
        rig.phoneSends("1B 0D 00 00 0A 01 01 07 00 00 00")
        rig.settle()
        let added = rig.events.contains {
            if case .link(.notification(.added(let r, nil))) = $0 { return r.uid == 7 && r.category == .incomingCall && r.flags == [.important, .positiveAction] }
            return false
        }
        #expect(added)
        #expect(rig.events.contains(.link(.subscribed)))
        #expect(rig.events.contains(.link(.discovered)))
    }

    @Test("MTU 23: characteristics spread over several Read By Type responses")
    func bringUpAtMTU23() {
        var rig = Rig()
        rig.run([.firmware("02 05 02"), .phone("03 17 00")] + Script.gatt + [
            .firmware("06 01 00 FF FF 00 28 " + Wire.ancs), .phone("07 0B 00 14 00"),
            .firmware("08 0C 00 14 00 03 28"), .phone("09 15 0C 00 10 0D 00 " + Wire.ns),
            .firmware("08 0D 00 14 00 03 28"), .phone("09 15 0F 00 08 10 00 " + Wire.cp),
            .firmware("08 10 00 14 00 03 28"), .phone("09 15 11 00 10 12 00 " + Wire.ds),
            .firmware("08 12 00 14 00 03 28"), .phone("01 08 12 00 0A"),
            .firmware("04 0E 00 0E 00"), .phone("05 01 0E 00 02 29"),
            .firmware("04 13 00 14 00"), .phone("05 01 13 00 02 29"),
        ] + Script.subscribe)
        rig.settle()
        #expect(rig.state == .live)
        #expect(rig.runner.core.phone.bearer.mtu == 23)
    }

    @Test("Insufficient Authentication on the Data Source CCCD: security is raised and the same write is retried")
    func securityThenRetry() {
        var rig = Rig()
        rig.run([.firmware("02 05 02"), .phone("03 B9 00")] + Script.gatt + Script.ancsDiscovery + [
            .firmware("12 13 00 01 00"), .phone("01 12 13 00 05"),
            .firmware("12 13 00 01 00"), .phone("13"),
            .firmware("12 0E 00 01 00"), .phone("13"),
        ])
        rig.settle()
        #expect(rig.state == .live)
        #expect(rig.events.contains(.link(.secured)))
    }

    @Test("a phone that keeps answering Insufficient Authentication is disconnected after the retry bound")
    func securityGivesUp() {
        var rig = Rig()
        rig.run([.firmware("02 05 02"), .phone("03 B9 00")] + Script.gatt + [
            .firmware("06 01 00 FF FF 00 28 " + Wire.ancs), .phone("01 06 01 00 05"),
            .firmware("06 01 00 FF FF 00 28 " + Wire.ancs), .phone("01 06 01 00 05"),
            .firmware("06 01 00 FF FF 00 28 " + Wire.ancs), .phone("01 06 01 00 05"),
        ])
        #expect(rig.firmwareSent() == "EOF")
        #expect(rig.state == .disconnected)
        #expect(rig.events.contains(.link(.error(.ancsDiscoveryNotSecured))))
    }

    @Test("ANCS absent is a state: not found on an unencrypted link, the wearable asks for encryption and looks again; still absent, a Service Changed indication then finds it")
    func ancsAbsentThenAppears() {
        var rig = Rig()
        rig.run([.firmware("02 05 02"), .phone("03 B9 00")] + Script.gatt + [
            .firmware("06 01 00 FF FF 00 28 " + Wire.ancs), .phone("01 06 01 00 0A"),
            .firmware("06 01 00 FF FF 00 28 " + Wire.ancs), .phone("01 06 01 00 0A"),
        ])
        rig.settle()
        #expect(rig.events.contains(.link(.secured)), "the UNIX link's raise succeeds at once")
        #expect(rig.state == .ancsAbsent)
        rig.run([.phone("1D 03 00 0B 00 14 00"), .firmware("1E")] + Script.ancsDiscovery + Script.subscribe)
        rig.settle()
        #expect(rig.state == .live)
    }

    @Test("Service Changed covering ANCS mid-session ends the session and rediscovers")
    func serviceChangedMidSession() {
        var rig = Rig()
        rig.run(Script.bringUp)
        rig.phoneSends("1B 0D 00 00 00 06 01 2A 00 00 00")
        rig.settle()
        #expect(rig.runner.core.phone.session.table.count == 1)
        rig.run([.phone("1D 03 00 08 00 FF FF"), .firmware("1E")] + Script.ancsDiscovery + Script.subscribe)
        rig.settle()
        #expect(rig.events.contains(.link(.ended(reason: .serviceChanged))))
        #expect(rig.runner.core.phone.session.table.count == 0, "UIDs of the old session are forgotten")
        #expect(rig.state == .live)
    }

    @Test("Service Changed outside the ANCS handles leaves the session alone")
    func serviceChangedElsewhere() {
        var rig = Rig()
        rig.run(Script.bringUp)
        rig.run([.phone("1D 03 00 20 00 30 00"), .firmware("1E")])
        rig.settle()
        #expect(rig.state == .live)
        #expect(!rig.events.contains(.link(.ended(reason: .serviceChanged))))
    }

    @Test("unknown characteristics in the ANCS service are ignored")
    func unknownCharacteristics() {
        var rig = Rig()
        let other = String(repeating: "AB ", count: 16)
        rig.run([.firmware("02 05 02"), .phone("03 B9 00")] + Script.gatt + [
            .firmware("06 01 00 FF FF 00 28 " + Wire.ancs), .phone("07 0B 00 1A 00"),
            .firmware("08 0C 00 1A 00 03 28"),
            .phone("09 15 0C 00 10 0D 00 \(Wire.ns) 0F 00 02 10 00 \(other) 11 00 08 12 00 \(Wire.cp) 13 00 10 14 00 \(Wire.ds)"),
            .firmware("08 14 00 1A 00 03 28"), .phone("01 08 14 00 0A"),
            .firmware("04 0E 00 0E 00"), .phone("05 01 0E 00 02 29"),
            .firmware("04 15 00 1A 00"), .phone("05 01 15 00 02 29"),
            .firmware("12 15 00 01 00"), .phone("13"),
            .firmware("12 0E 00 01 00"), .phone("13"),
        ])
        rig.settle()
        #expect(rig.state == .live)
    }

    @Test("duplicate and out-of-order responses are rejected and counted")
    func strayResponses() {
        var rig = Rig()
        rig.run([.firmware("02 05 02"), .phone("03 B9 00"), .phone("03 B9 00"), .firmware("06 01 00 FF FF 00 28 01 18"), .phone("13")])
        rig.settle()
        #expect(rig.runner.core.phone.bearer.counters.unexpectedResponses == 2)
        #expect(rig.events.filter { if case .link(.drop(.attPDU(.unexpectedResponse))) = $0 { true } else { false } }.count == 2)
        rig.run([.phone("07 01 00 07 00"), .firmware("08 02 00 07 00 03 28")])
    }

    @Test("a phone that never answers: the 30 s ATT timeout (shortened here) ends the link")
    func peerNeverAnswers() {
        var rig = Rig { $0.link.bearer.transactionTimeoutMs = 300 }
        #expect(rig.firmwareSent() == "02 05 02")
        #expect(rig.firmwareSent(withinMs: 3_000) == "EOF")
        #expect(rig.state == .disconnected)
        #expect(rig.events.contains(.link(.error(.transactionTimeout))))
    }

    @Test("the phone hanging up at every step of bring-up leaves the firmware disconnected with the session ended", arguments: 0..<Script.bringUp.count)
    func disconnectAtEveryStep(step: Int) {
        var rig = Rig()
        rig.run(Array(Script.bringUp.prefix(step)))
        rig.hangUp()
        rig.settle(ms: 50)
        #expect(rig.state == .disconnected)
        #expect(rig.runner.core.phone.session.isActive == false)
        #expect(rig.runner.core.phone.session.table.count == 0)
        #expect(rig.events.last == .link(.ended(reason: .platform("peer-closed"))))
    }

    @Test("our own database answers the phone's discovery while bring-up runs")
    func phoneDiscoversUs() {
        var rig = Rig()
        #expect(rig.firmwareSent() == "02 05 02")
        rig.run([.phone("10 01 00 FF FF 00 28"), .firmware("11 06 01 00 05 00 00 18 06 00 09 00 01 18")])
        rig.run([.phone("02 05 02"), .firmware("03 05 02"), .phone("03 B9 00"), .firmware("06 01 00 FF FF 00 28 01 18")])
    }
}
