// SPDX-License-Identifier: Apache-2.0
import ANCS
import Bounded
import Config
import Firmware
import Platform
import Testing
import TestSupport

/// The system's notices on the wrist (an update kept or sent back), through
/// the runner as the platform delivers them: reported, played once with the
/// policy's feedback, and never in the way of a call.
@Suite("The system's notice: an update kept or sent back, shown on the wrist")
struct NoticeTests {
    @Test("update-done: reported, led-notify blinks three times (300 ms) and the motor taps twice, led-call stays dark")
    func updateDone() {
        var rig = CoreRig()
        rig.input(.notice(.updateDone))
        #expect(rig.events.contains(.notice(.updateDone)))
        #expect(rig.level("led-notify") && rig.level("vibration"))
        #expect(rig.onForMs("led-notify") == 300)
        var blinks = 1
        var ms: Int64 = 0
        var was = false
        while ms < 3_000 {
            rig.advance(ms: 10)
            ms += 10
            let on = rig.level("led-notify")
            if on && !was { blinks += 1 }
            was = on
            let call = rig.level("led-call")
            #expect(!call)
        }
        #expect(blinks == 3)
        #expect(rig.takeSent().isEmpty, "nothing goes to the phone")
    }

    @Test("update-failed: reported, led-call flickers 2 s (ten 100 ms flashes) and the motor buzzes the failure triple, then everything is off")
    func updateFailed() {
        var rig = CoreRig()
        rig.input(.notice(.updateFailed))
        #expect(rig.events.contains(.notice(.updateFailed)))
        var flashes = 0
        var was = false
        var ms: Int64 = 0
        var notifyLit = false
        while ms < 3_000 {
            let on = rig.level("led-call")
            if on && !was { flashes += 1 }
            was = on
            notifyLit = notifyLit || rig.level("led-notify")
            rig.advance(ms: 10)
            ms += 10
        }
        #expect(flashes == 10)
        #expect(!notifyLit)
        #expect(!rig.level("led-call") && !rig.level("vibration"), "it ends by itself")
    }

    @Test("a policy line without outputs turns the notice off: reported, nothing lit")
    func turnedOff() throws {
        let policy = try PolicyConfig.parse("feedback update-done\nfeedback update-failed\n", board: simBoard)
        var rig = CoreRig(policy: policy)
        rig.input(.notice(.updateFailed))
        #expect(rig.events.contains(.notice(.updateFailed)))
        for name in ["led-notify", "led-call", "vibration"] { #expect(rig.everOn(name, forMs: 500) == false, "\(name)") }
    }

    @Test("a notice while a call rings does not end the call's ring: update-failed's flicker on led-call passes, the ring comes back, accept still answers")
    func callRingsOn() {
        var rig = CoreRig()
        rig.notify(.added, call, .incomingCall, uid: 7)
        let ringing = rig.everOn("led-call", forMs: 200)
        #expect(ringing)
        rig.input(.notice(.updateFailed))
        rig.advance(ms: 3_000)
        let stillRinging = rig.everOn("led-call", forMs: 1_500)
        #expect(stillRinging, "still ringing")
        _ = rig.takeSent()
        rig.press(0, ms: 80)
        #expect(rig.takeSent() == ["12 10 00 02 07 00 00 00 00"], "accept still answers it")
    }

    @Test("a notice file that is not a notice is reported as rejected and plays nothing")
    func rejected() {
        var rig = CoreRig()
        rig.input(.rejected(what: "notice", reason: "unknown"))
        #expect(rig.events.contains(.rejected(what: "notice", reason: "unknown")))
        for name in ["led-notify", "led-call", "vibration"] { #expect(rig.everOn(name, forMs: 500) == false, "\(name)") }
    }
}
