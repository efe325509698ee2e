// Silencing a ringing call on the wrist, and the ring limit: the call's
// lasting alert stops, the notification stays and stays the target of
// accept, nothing goes to the phone.

import ANCS
import Bounded
import Config
import Firmware
import Testing
import TestSupport

@Suite("Ring control: silence on the wrist, ring-limit-ms")
struct RingControlTests {
    @Test("a long reject while a call rings stops the ring on every output and sends nothing to the phone")
    func longRejectSilencesWithoutDeclining() {
        var rig = CoreRig()
        rig.notify(.added, call, .incomingCall, uid: 0x21)
        #expect(rig.level("vibration") && rig.level("led-call"))
        _ = rig.takeSent()
        rig.press(1, ms: 1_000)
        #expect(rig.takeSent() == [], "silence is local: no Perform Notification Action")
        #expect(rig.events.contains(.silenced(uid: 0x21)))
        #expect(rig.everOn("vibration", forMs: 3_000) == false)
        #expect(rig.everOn("led-call", forMs: 1_000) == false)
        #expect(rig.core.isAlerting(uid: 0x21, output: simBoard.outputIndex(named: "vibration")!) == false)
    }

    @Test("after silencing, a short accept still answers the call: 02 UID 00")
    func silencedCallStaysTheTargetOfAccept() {
        var rig = CoreRig()
        rig.notify(.added, call, .incomingCall, uid: 0x21)
        rig.press(1, ms: 1_000)
        _ = rig.takeSent()
        rig.press(0)
        #expect(rig.takeSent() == ["12 10 00 02 21 00 00 00 00"])
        #expect(rig.events.contains(.action(uid: 0x21, action: .positive, result: .queued)))
    }

    @Test("a new call after a silenced one rings again")
    func newCallRingsAgain() {
        var rig = CoreRig()
        rig.notify(.added, call, .incomingCall, uid: 1)
        rig.press(1, ms: 1_000)
        #expect(rig.everOn("vibration", forMs: 1_000) == false)
        rig.notify(.added, call, .incomingCall, count: 2, uid: 2)
        #expect(rig.level("vibration") == true)
        #expect(rig.everOn("vibration", forMs: 3_000) == true)
    }

    @Test("a long reject with no call ringing does what long= says (none): no command, no silence event")
    func longRejectWithoutRingIsTheUsualLongPress() {
        var rig = CoreRig()
        rig.notify(.added, [.negativeAction], .email, uid: 4)
        rig.advance(ms: 2_000)
        _ = rig.takeSent()
        rig.press(1, ms: 1_000)
        #expect(rig.takeSent() == [])
        #expect(!rig.events.contains { if case .silenced = $0 { true } else { false } })
    }

    @Test("a ring stops by itself after ring-limit-ms (60 s by default), reported once; the call stays answerable")
    func ringStopsAtTheLimit() {
        var rig = CoreRig()
        rig.notify(.added, call, .incomingCall, uid: 9)
        rig.advance(ms: 59_000)
        #expect(rig.everOn("vibration", forMs: 900) == true, "still ringing just before the limit")
        rig.advance(ms: 100)
        #expect(rig.events.filter { $0 == .ringLimited(uid: 9) }.count == 1)
        #expect(rig.everOn("vibration", forMs: 3_000) == false)
        #expect(rig.level("led-call") == false)
        _ = rig.takeSent()
        rig.press(0)
        #expect(rig.takeSent() == ["12 10 00 02 09 00 00 00 00"], "the notification stays: accept answers it")
        #expect(rig.events.filter { $0 == .ringLimited(uid: 9) }.count == 1, "reported once")
    }

    @Test("ring-limit-ms 0: a call rings until the phone removes it, however long")
    func noLimit() throws {
        let lines = readRepositoryFile("board/policy.conf").split(separator: "\n", omittingEmptySubsequences: false)
        let text = lines.map { $0 == "ring-limit-ms 60000" ? "ring-limit-ms 0" : String($0) }.joined(separator: "\n")
        let policy = try PolicyConfig.parse(text, board: simBoard)
        #expect(policy.ringLimitMs == 0)
        var rig = CoreRig(policy: policy)
        rig.notify(.added, call, .incomingCall, uid: 3)
        rig.advance(ms: 300_000)
        #expect(rig.everOn("vibration", forMs: 1_000) == true)
        #expect(!rig.events.contains(.ringLimited(uid: 3)))
    }

    @Test("a second call keeps its own limit: the first stopping does not stop the second")
    func eachCallHasItsOwnLimit() {
        var rig = CoreRig()
        rig.notify(.added, call, .incomingCall, uid: 1)
        rig.advance(ms: 30_000)
        rig.notify(.added, call, .incomingCall, count: 2, uid: 2)
        rig.advance(ms: 30_100)
        #expect(rig.events.contains(.ringLimited(uid: 1)))
        #expect(!rig.events.contains(.ringLimited(uid: 2)))
        #expect(rig.everOn("vibration", forMs: 2_000) == true, "call 2 still rings")
        rig.advance(ms: 30_000)
        #expect(rig.events.contains(.ringLimited(uid: 2)))
        #expect(rig.everOn("vibration", forMs: 2_000) == false)
    }
}
