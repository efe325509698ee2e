// SPDX-License-Identifier: Apache-2.0
import ANCS
import Bounded
import Config
import Firmware
import Testing
import TestSupport

@Suite("Waiting for the user's permission to share notifications (default policy)")
struct PermissionTests {
    /// Brought up to the Data Source CCCD write, which the phone refuses
    /// with `code`.
    func refusedRig(code: String) -> CoreRig {
        var rig = CoreRig(script: [.firmware("02 05 02"), .phone("03 B9 00")] + Script.gatt + Script.ancsDiscovery + [.firmware("12 13 00 01 00")])
        rig.phone("01 12 13 00 " + code)
        return rig
    }

    @Test("a subscription refused with 0x08 plays the waiting-permission pattern on led-notify while the wearable waits; the retry 5 s later subscribes and the pattern stops")
    func waitingPatternUntilSubscribed() {
        var rig = refusedRig(code: "08")
        #expect(rig.core.phone.state == .waitingForPermission)
        #expect(rig.events.contains(.link(.permissionWaiting(retryInMs: 5_000))))
        #expect(rig.level("led-notify") == true, "permission-blink starts at once")
        rig.advance(ms: 150)
        #expect(rig.level("led-notify") == false, "on 150 off 150 on 150 off 1550")
        rig.advance(ms: 150)
        #expect(rig.level("led-notify") == true)
        #expect(rig.everOn("vibration", forMs: 1_000) == false, "no buzz")
        #expect(rig.takeSent().isEmpty, "nothing is retried before 5 s")
        rig.advance(ms: 5_000 - 1_300)
        #expect(rig.takeSent() == ["12 13 00 01 00"])
        #expect(rig.core.phone.state == .subscribingDataSource)
        rig.phone("13")
        #expect(rig.takeSent() == ["12 0E 00 01 00"])
        rig.phone("13")
        #expect(rig.core.phone.state == .live)
        #expect(rig.everOn("led-notify", forMs: 3_000) == false, "the pattern stopped")
    }

    @Test("a refusal with 0x03 waits the same way; the link ending stops the pattern")
    func linkEndStopsPattern() {
        var rig = refusedRig(code: "03")
        #expect(rig.core.phone.state == .waitingForPermission)
        #expect(rig.everOn("led-notify", forMs: 2_000) == true)
        rig.linkDown(.platform("peer-closed"))
        rig.settle()
        #expect(rig.everOn("led-notify", forMs: 3_000) == false)
        #expect(rig.core.phone.state == .disconnected)
    }

    @Test("a refusal the wearer cannot fix by allowing sharing (0x0E) still ends the link")
    func otherRefusalDisconnects() {
        let rig = refusedRig(code: "0E")
        #expect(rig.events.contains(.link(.error(.subscribeFailed(.dataSource)))))
        #expect(rig.core.phone.state != .waitingForPermission)
    }

    @Test("on a live link, two Control Point commands in a row refused with 0x03 (Share System Notifications off) play the waiting-permission pattern; a command that goes through stops it")
    func liveControlPointRefusalsWaitForPermission() {
        var rig = CoreRig()
        rig.notify(.added, call, .incomingCall, uid: 1)
        _ = rig.takeSent()
        rig.press(0)
        #expect(rig.takeSent() == ["12 10 00 02 01 00 00 00 00"])
        rig.phone("01 12 10 00 03")
        #expect(rig.everOn("led-notify", forMs: 2_000) == false, "one refusal fails its command, nothing more")
        rig.press(0)
        #expect(rig.takeSent() == ["12 10 00 02 01 00 00 00 00"])
        rig.phone("01 12 10 00 03")
        #expect(rig.level("led-notify") == true, "permission-blink starts at the second refusal")
        #expect(rig.events.contains(.link(.controlPointNotPermitted(inARow: 2))))
        #expect(rig.core.phone.counters.controlPointPermissionRefusals == 2)
        #expect(rig.everOn("led-notify", forMs: 3_000) == true)
        #expect(rig.core.phone.state == .live, "the link stays as it is")
        rig.press(0)
        #expect(rig.takeSent() == ["12 10 00 02 01 00 00 00 00"])
        rig.phone("13")
        #expect(rig.events.contains(.link(.controlPointPermitted)))
        #expect(rig.everOn("led-notify", forMs: 3_000) == false, "the phone took a command: the pattern stopped")
    }

    @Test("keep-alive probes refused with 0x08 while the phone accepts the resubscription: the second refusal plays the waiting-permission pattern, the next resubscription keeps it, Notification Source traffic stops it")
    func refusedProbesWaitForPermission() {
        var rig = CoreRig()
        _ = rig.takeSent()
        rig.advance(ms: 15 * 60_000)
        #expect(rig.takeSent() == ["12 10 00 00 FF FF FF FF 00"], "the keep-alive probe")
        rig.phone("01 12 10 00 08")
        let first = rig.play([.firmware("12 0E 00 00 00"), .phone("13")] + Script.subscribe)
        #expect(first, "the first refusal resubscribes, and the phone accepts")
        #expect(rig.everOn("led-notify", forMs: 2_000) == false)
        rig.advance(ms: 15 * 60_000)
        #expect(rig.takeSent() == ["12 10 00 00 FF FF FF FF 00"])
        rig.phone("01 12 10 00 08")
        #expect(rig.level("led-notify") == true, "permission-blink")
        let second = rig.play([.firmware("12 0E 00 00 00"), .phone("13")] + Script.subscribe)
        #expect(second)
        #expect(rig.everOn("led-notify", forMs: 3_000) == true, "a subscription the phone accepts does not prove it shares again")
        rig.notify(.added, [.preExisting], .other, count: 1, uid: 40)
        #expect(rig.events.filter { $0 == .link(.controlPointPermitted) }.count == 1)
        #expect(rig.everOn("led-notify", forMs: 3_000) == false, "notifications flow again: the pattern stopped")
    }

    @Test("an answer as ANCS gives (0xA3 Action Failed) between two refusals starts the count over: refusals must come in a row")
    func refusalsMustComeInARow() {
        var rig = CoreRig()
        rig.notify(.added, call, .incomingCall, uid: 1)
        _ = rig.takeSent()
        rig.press(0)
        rig.phone("01 12 10 00 03")
        rig.press(0)
        rig.phone("01 12 10 00 A3")
        rig.press(0)
        rig.phone("01 12 10 00 03")
        #expect(rig.everOn("led-notify", forMs: 2_000) == false)
        #expect(!rig.events.contains { if case .link(.controlPointNotPermitted) = $0 { true } else { false } })
    }

    @Test("the live link's wait for permission ends with the link")
    func liveWaitEndsWithTheLink() {
        var rig = CoreRig()
        rig.notify(.added, call, .incomingCall, uid: 1)
        _ = rig.takeSent()
        rig.press(0)
        rig.phone("01 12 10 00 08")
        rig.press(0)
        rig.phone("01 12 10 00 08")
        #expect(rig.level("led-notify") == true)
        rig.linkDown(.platform("peer-closed"))
        rig.settle()
        #expect(rig.everOn("led-notify", forMs: 3_000) == false)
    }
}
