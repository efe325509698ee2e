// SPDX-License-Identifier: Apache-2.0
import ANCS
import Bounded
import Config
import Firmware
import Testing
import TestSupport

/// Each status on the motor with its own length (100 ms per state, in
/// `WearerStatus` order), nothing else: which state was chosen is read
/// from how long the motor runs.
let statusLengthPolicy = try! PolicyConfig.parse(
    """
    pattern connected on 100
    pattern waiting on 200
    pattern away on 300
    pattern pairing on 400
    pattern settings on 500
    feedback status-connected vibration=connected
    feedback status-waiting-permission vibration=waiting
    feedback status-not-connected vibration=away
    feedback status-pairing vibration=pairing
    feedback status-settings-error vibration=settings
    """, board: simBoard)

extension CoreRig {
    /// Two 80 ms presses of accept, 100 ms apart (within double-press-ms).
    mutating func doublePressAccept() {
        press(0, ms: 80)
        advance(ms: 100)
        press(0, ms: 80)
    }

    /// How long `name` stays on from now, in 10 ms steps (at most `maxMs`).
    mutating func onForMs(_ name: String, maxMs: Int64 = 3_000) -> Int64 {
        var ms: Int64 = 0
        while level(name), ms < maxMs {
            advance(ms: 10)
            ms += 10
        }
        return ms
    }
}

@Suite("Status at a glance: a double press of accept")
struct StatusTests {
    @Test("connected and subscribed: the shipped status-connected, one 800 ms glow on led-notify, nothing else lit")
    func connectedShipped() {
        var rig = CoreRig()
        #expect(rig.core.wearerStatus == .connected)
        rig.doublePressAccept()
        #expect(rig.events.contains(.button(index: 0, gesture: .double)))
        #expect(!rig.events.contains(.button(index: 0, gesture: .short)), "the two presses are one gesture, no action")
        #expect(rig.level("led-call") == false)
        #expect(rig.onForMs("led-notify") == 800)
        #expect(rig.everOn("led-call", forMs: 1_000) == false)
        #expect(rig.everOn("vibration", forMs: 1_000) == false)
        #expect(rig.takeSent().isEmpty, "nothing goes to the phone")
    }

    @Test("not connected: the shipped status-not-connected, one 800 ms glow on led-call")
    func notConnectedShipped() {
        var rig = CoreRig()
        rig.linkDown(.platform("peer-closed"))
        rig.settle()
        #expect(rig.core.wearerStatus == .notConnected)
        rig.doublePressAccept()
        #expect(rig.level("led-notify") == false)
        #expect(rig.onForMs("led-call") == 800)
    }

    @Test("each state plays its own pattern: connected 100 ms, not connected 300 ms")
    func connectedAndNot() {
        var rig = CoreRig(policy: statusLengthPolicy)
        rig.doublePressAccept()
        #expect(rig.onForMs("vibration") == 100)
        rig.linkDown(.platform("peer-closed"))
        rig.settle()
        rig.advance(ms: 1_000)
        rig.doublePressAccept()
        #expect(rig.onForMs("vibration") == 300)
    }

    @Test("connected but waiting for the phone's permission (subscription refused 0x08): 200 ms")
    func waitingPermission() {
        var rig = CoreRig(
            policy: statusLengthPolicy,
            script: [.firmware("02 05 02"), .phone("03 B9 00")] + Script.gatt + Script.ancsDiscovery + [.firmware("12 13 00 01 00")])
        rig.phone("01 12 13 00 08")
        #expect(rig.core.phone.state == .waitingForPermission)
        #expect(rig.core.wearerStatus == .waitingPermission)
        rig.doublePressAccept()
        #expect(rig.onForMs("vibration") == 200)
    }

    @Test("pairing mode (no bond yet): 400 ms")
    func pairing() {
        var rig = CoreRig(policy: statusLengthPolicy, controller: true)
        #expect(rig.core.wearerStatus == .pairing)
        rig.doublePressAccept()
        #expect(rig.onForMs("vibration") == 400)
    }

    @Test("a settings error (the shipped defaults run) comes first: 500 ms")
    func settingsError() {
        var rig = CoreRig(policy: statusLengthPolicy, settingsError: true)
        #expect(rig.core.wearerStatus == .settingsError)
        rig.doublePressAccept()
        #expect(rig.onForMs("vibration") == 500)
    }

    @Test("while a call is present a double press is two short presses, as before: the first answers at its release")
    func ringingDoublePressAnswers() {
        var rig = CoreRig(policy: statusLengthPolicy)
        rig.notify(.added, call, .incomingCall, uid: 5)
        _ = rig.takeSent()
        rig.press(0, ms: 80)
        #expect(rig.takeSent() == ["12 10 00 02 05 00 00 00 00"], "answered at the release, no wait for a second press")
        rig.advance(ms: 100)
        rig.press(0, ms: 80)
        #expect(!rig.events.contains(.button(index: 0, gesture: .double)))
        #expect(rig.events.filter { $0 == .button(index: 0, gesture: .short) }.count == 2)
        // This policy has no call alert: the motor would run only for a status.
        #expect(rig.everOn("vibration", forMs: 600) == false, "no status pattern")
    }

    @Test("STATUS= carries the same words as the states")
    func serviceStatusWords() {
        var out = ByteBuffer(capacity: 160)
        var words: [String] = []
        for status in WearerStatus.all {
            ServiceStatus.wearer(status).write(into: &out)
            words.append(String(decoding: out.toArray(), as: UTF8.self))
        }
        #expect(words == [
            "connected, notifications on", "connected, waiting for the phone's permission to share notifications",
            "advertising, no phone connected", "pairing mode", "settings error: the shipped defaults run",
            "battery low: charge the wearable",
        ])
    }
}
