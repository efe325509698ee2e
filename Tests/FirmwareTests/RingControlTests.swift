// SPDX-License-Identifier: Apache-2.0
// Silencing a ringing call on the wrist, and the ring limit: the call's
// lasting alert stops, the notification stays and stays the target of
// accept, nothing goes to the phone.

import ANCS
import Bounded
import Config
import Firmware
import Testing
import TestSupport

/// The shipped policy with one line replaced (lines compared whole).
func shippedPolicy(replacing line: String, with replacement: String, adding extra: String = "") throws -> PolicyConfig {
    let text = readRepositoryFile("board/policy.conf").split(separator: "\n", omittingEmptySubsequences: false)
        .map { $0 == line ? replacement : String($0) }.joined(separator: "\n")
    return try PolicyConfig.parse(text + extra, board: simBoard)
}

extension CoreRig {
    /// Plays a scripted exchange after bring-up; false if the firmware sent
    /// something else.
    mutating func play(_ script: [Step], sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        for step in script {
            switch step {
            case .firmware(let expected):
                guard sent.first == expected else {
                    Issue.record("expected \(expected), got \(sent)", sourceLocation: sourceLocation)
                    return false
                }
                sent.removeFirst()
            case .phone(let text):
                phone(text)
            }
        }
        return true
    }

    /// Service Changed over the whole database, and the rediscovery and
    /// subscription it leads to.
    mutating func serviceChangedAndResubscribe(sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        phone("1D 03 00 08 00 FF FF")
        return play([.firmware("1E")] + Script.ancsDiscovery + Script.subscribe, sourceLocation: sourceLocation)
    }
}

let callRule = "\nrule category=IncomingCall led-call=call-flash vibration=ring\n"

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

    @Test("a long reject with no call ringing does what long= says (media-next), not silence: no Control Point command; without AMS it is not-available")
    func longRejectWithoutRingIsTheUsualLongPress() {
        var rig = CoreRig()
        rig.notify(.added, [.negativeAction], .email, uid: 4)
        rig.advance(ms: 2_000)
        _ = rig.takeSent()
        rig.press(1, ms: 1_000)
        #expect(rig.takeSent() == [])
        #expect(!rig.events.contains { if case .silenced = $0 { true } else { false } })
        #expect(rig.events.contains(.media(command: .nextTrack, result: .notAvailable)))
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
        let policy = try shippedPolicy(replacing: "ring-limit-ms 60000", with: "ring-limit-ms 0")
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

    @Test("a silenced call stays silent when the phone modifies it (realert-on-modified yes), with or without a rule for calls")
    func silenceSurvivesModified() throws {
        for extra in ["", callRule] {
            let policy = try shippedPolicy(replacing: "realert-on-modified no", with: "realert-on-modified yes", adding: extra)
            var rig = CoreRig(policy: policy)
            rig.notify(.added, call, .incomingCall, uid: 0x21)
            #expect(rig.everOn("vibration", forMs: 1_000) == true)
            rig.press(1, ms: 1_000)
            #expect(rig.everOn("vibration", forMs: 1_000) == false)
            rig.notify(.modified, call, .incomingCall, uid: 0x21)
            #expect(rig.everOn("vibration", forMs: 2_000) == false, "rule: \(extra.isEmpty ? "none" : "calls")")
        }
    }

    @Test("a silenced call the phone replays (PreExisting) after Service Changed stays silent, with or without a rule for calls")
    func silenceSurvivesTheReplay() throws {
        for extra in ["", callRule] {
            // A replay window of its own (the rig's is 0): the runner drops
            // the carried alerts when the window after the subscription ends.
            var rig = CoreRig(policy: try shippedPolicy(replacing: "", with: "", adding: extra), replayWindowMs: 2_000)
            rig.notify(.added, call, .incomingCall, uid: 0x21)
            rig.press(1, ms: 1_000)
            #expect(rig.everOn("vibration", forMs: 1_000) == false)
            let resubscribed = rig.serviceChangedAndResubscribe()
            #expect(resubscribed && rig.core.phone.state == .live)
            rig.notify(.added, call.union(.preExisting), .incomingCall, uid: 0x21)
            #expect(rig.everOn("vibration", forMs: 2_000) == false, "rule: \(extra.isEmpty ? "none" : "calls")")
        }
    }

    @Test("a new call (not flagged PreExisting) right after a restart rings, though a silenced call was carried over")
    func newCallAfterRestartDoesNotInheritSilence() {
        var rig = CoreRig(replayWindowMs: 3_000)
        rig.notify(.added, call, .incomingCall, uid: 0x21)
        rig.press(1, ms: 1_000)
        let resubscribed = rig.serviceChangedAndResubscribe()
        #expect(resubscribed)
        // Call 0x21 ended meanwhile: not replayed. A new call comes.
        rig.advance(ms: 500)
        rig.notify(.added, call, .incomingCall, uid: 0x40)
        #expect(rig.everOn("vibration", forMs: 2_000) == true, "a new call rings")
    }

    @Test("a new call right after a restart gets a ring limit of its own, not the carried call's nearly spent one")
    func newCallAfterRestartHasItsOwnLimit() {
        var rig = CoreRig(replayWindowMs: 3_000)
        rig.notify(.added, call, .incomingCall, uid: 0x21)
        rig.advance(ms: 55_000)
        let resubscribed = rig.serviceChangedAndResubscribe()
        #expect(resubscribed)
        rig.advance(ms: 500)
        rig.notify(.added, call, .incomingCall, uid: 0x40)
        rig.advance(ms: 10_000)
        #expect(!rig.events.contains(.ringLimited(uid: 0x40)), "a new call gets its own 60 s")
        #expect(rig.everOn("vibration", forMs: 1_000) == true)
    }

    @Test("`button reject long=negative` (no ringing-long=) declines a ringing call on a long press: the built-in silence gives way")
    func explicitLongOverridesTheRingingDefault() throws {
        let policy = try shippedPolicy(
            replacing: "button reject short=negative long=media-next ringing-long=silence", with: "button reject short=negative long=negative")
        var rig = CoreRig(policy: policy)
        rig.notify(.added, call, .incomingCall, uid: 0x21)
        _ = rig.takeSent()
        rig.press(1, ms: 1_000)
        #expect(rig.takeSent() == ["12 10 00 02 21 00 00 00 01"], "long=negative declines")
        #expect(!rig.events.contains(.silenced(uid: 0x21)))
    }

    // MARK: A call replayed under a new UID (PebbleOS FIRM-2190)

    /// Rules that fetch each call's AppIdentifier, so the wearable knows
    /// which app rings.
    static let appRules = """

        rule category=IncomingCall app=com.apple.mobilephone led-call=ring vibration=ring
        rule category=IncomingCall app=net.whatsapp.WhatsApp led-call=ring vibration=ring

        """

    /// The phone answers the AppIdentifier fetch for `uid` with `app`, and
    /// the display-name fetch that follows a new app.
    static func answerAppFetch(_ rig: inout CoreRig, uid: UInt8, app: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(rig.takeSent() == ["12 10 00 00 \(toHex([uid])) 00 00 00 00"], "AppIdentifier fetch for \(uid)", sourceLocation: sourceLocation)
        rig.phone("13")
        rig.phone(RuleTests.response(uid: uid, [(0, app)]))
        if !rig.takeSent().isEmpty {
            rig.phone("13")
            rig.phone("1B 12 00 01 \(toHex(Array(app.utf8))) 00 00 03 00 41 70 70")
        }
    }

    @Test("a call from com.apple.mobilephone replayed as UID 9 after a resubscription takes over the ring of UID 5: one ring plays on, accept answers UID 9")
    func replayUnderANewUIDTakesOverTheRing() throws {
        var rig = CoreRig(policy: try shippedPolicy(replacing: "", with: "", adding: Self.appRules), replayWindowMs: 3_000)
        let vibration = simBoard.outputIndex(named: "vibration")!
        rig.notify(.added, call, .incomingCall, uid: 5)
        Self.answerAppFetch(&rig, uid: 5, app: "com.apple.mobilephone")
        rig.advance(ms: 1_000)
        let resubscribed = rig.serviceChangedAndResubscribe()
        #expect(resubscribed)
        rig.notify(.added, call.union(.preExisting), .incomingCall, uid: 9)
        Self.answerAppFetch(&rig, uid: 9, app: "com.apple.mobilephone")
        let nine = rig.core.isAlerting(uid: 9, output: vibration)
        let five = rig.core.isAlerting(uid: 5, output: vibration)
        #expect(nine == true && five == false, "one ring, now UID 9's")
        rig.advance(ms: 4_000)
        #expect(rig.everOn("vibration", forMs: 1_000) == true, "confirmed: it outlives the replay window")
        _ = rig.takeSent()
        rig.press(0)
        #expect(rig.takeSent() == ["12 10 00 02 09 00 00 00 00"])
        rig.phone("13")
        // The call's own limit: 60 s from its first ring, not from the replay.
        rig.advance(ms: 55_000)
        #expect(rig.events.contains(.ringLimited(uid: 9)))
    }

    @Test("two ringing calls carried over a resubscription and replayed under new UIDs in the other order: each takes over its own ring by app (the silenced phone call stays silent, WhatsApp rings on)")
    func twoCallsReplayedInTheOtherOrderKeepTheirOwnState() throws {
        var rig = CoreRig(policy: try shippedPolicy(replacing: "", with: "", adding: Self.appRules), replayWindowMs: 3_000)
        let vibration = simBoard.outputIndex(named: "vibration")!
        rig.notify(.added, call, .incomingCall, uid: 5)
        Self.answerAppFetch(&rig, uid: 5, app: "com.apple.mobilephone")
        rig.press(1, ms: 1_000)
        #expect(rig.events.contains(.silenced(uid: 5)))
        rig.notify(.added, call, .incomingCall, count: 2, uid: 6)
        Self.answerAppFetch(&rig, uid: 6, app: "net.whatsapp.WhatsApp")
        let resubscribed = rig.serviceChangedAndResubscribe()
        #expect(resubscribed)
        rig.notify(.added, call.union(.preExisting), .incomingCall, count: 1, uid: 10)
        Self.answerAppFetch(&rig, uid: 10, app: "net.whatsapp.WhatsApp")
        rig.notify(.added, call.union(.preExisting), .incomingCall, count: 2, uid: 9)
        Self.answerAppFetch(&rig, uid: 9, app: "com.apple.mobilephone")
        let whatsApp = rig.core.isAlerting(uid: 10, output: vibration)
        let phoneCall = rig.core.isAlerting(uid: 9, output: vibration)
        #expect(whatsApp == true, "WhatsApp's call rings on")
        #expect(phoneCall == false, "the phone call the wearer silenced stays silent")
    }

    @Test("a new call from another app in the new session does not take over the carried ring of the silenced call: the replayed call stays silent")
    func anotherAppsCallDoesNotTakeOverTheCarriedRing() throws {
        var rig = CoreRig(policy: try shippedPolicy(replacing: "", with: "", adding: Self.appRules), replayWindowMs: 3_000)
        let vibration = simBoard.outputIndex(named: "vibration")!
        rig.notify(.added, call, .incomingCall, uid: 5)
        Self.answerAppFetch(&rig, uid: 5, app: "com.apple.mobilephone")
        rig.press(1, ms: 1_000)
        let resubscribed = rig.serviceChangedAndResubscribe()
        #expect(resubscribed)
        rig.notify(.added, call, .incomingCall, count: 1, uid: 12)
        Self.answerAppFetch(&rig, uid: 12, app: "net.whatsapp.WhatsApp")
        rig.notify(.added, call.union(.preExisting), .incomingCall, count: 2, uid: 9)
        Self.answerAppFetch(&rig, uid: 9, app: "com.apple.mobilephone")
        let whatsApp = rig.core.isAlerting(uid: 12, output: vibration)
        let phoneCall = rig.core.isAlerting(uid: 9, output: vibration)
        #expect(whatsApp == true, "the new call rings")
        #expect(phoneCall == false, "the silenced call stays silent")
    }

    @Test("a call replayed last, after 3.5 s of other replayed notifications, still takes over its ring: the carried ring waits while the replay goes on")
    func aLongReplayKeepsTheCarriedRing() {
        var rig = CoreRig(replayWindowMs: 3_000)
        let ledCall = simBoard.outputIndex(named: "led-call")!
        rig.notify(.added, call, .incomingCall, uid: 5)
        rig.advance(ms: 1_000)
        let resubscribed = rig.serviceChangedAndResubscribe()
        #expect(resubscribed)
        var alwaysRinging = true
        for uid in UInt32(100)..<135 {
            rig.notify(.added, [.preExisting], .social, count: UInt8(uid - 99), uid: uid)
            rig.advance(ms: 100)
            if !rig.core.isAlerting(uid: 5, output: ledCall) { alwaysRinging = false }
        }
        #expect(alwaysRinging == true, "carried while the replay goes on")
        rig.notify(.added, call.union(.preExisting), .incomingCall, uid: 9)
        let nine = rig.core.isAlerting(uid: 9, output: ledCall)
        #expect(nine == true)
        rig.advance(ms: 5_000)
        let five = rig.core.isAlerting(uid: 5, output: ledCall)
        #expect(five == false, "taken over, not left to ring beside it")
    }
}
