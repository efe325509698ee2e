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
        rig.core.linkDown(reason: .platform("peer-closed"), now: rig.now, into: &rig.effects)
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
}
