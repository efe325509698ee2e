// SPDX-License-Identifier: Apache-2.0
// board/scenarios/silence-call.scn and ring-limit.scn played by the
// simulated iPhone against the whole wearable core.

import ANCS
import Bounded
import Firmware
import MemoryPlatform
import PhoneSim
import Testing
import TestSupport

extension WearableLoopback {
    /// Holds `button` down for `ms`, then releases it.
    mutating func hold(_ button: String, ms: Int64) {
        guard let b = simBoard.buttonIndex(named: button) else { preconditionFailure("no button \(button)") }
        runner.platform.queue(.edge(button: b, pressed: true, at: now))
        run(forMs: ms)
        runner.platform.queue(.edge(button: b, pressed: false, at: now))
        run(forMs: 50)
    }

    /// Whether `output` was on at any 10 ms sample over the next `ms`.
    mutating func everOn(_ output: String, forMs ms: Int64) -> Bool {
        let o = self.output(output)
        var seen = core.level(of: o)
        for _ in 0..<(ms / 10) {
            run(forMs: 10)
            seen = seen || core.level(of: o)
        }
        return seen
    }
}

@Suite("Ring control scenarios: silence-call.scn, ring-limit.scn")
struct RingControlScenarioTests {
    @Test("silence-call.scn: a long reject stops Bob's ring with nothing sent; a short accept answers him; Carol's call rings again")
    func silenceCall() {
        var rig = WearableLoopback(scenario: "silence-call.scn")
        rig.connect()
        #expect(rig.run(untilMs: 10_000) { $0.sawAdded(2) }, "Bob's call arrives")
        let ringing = rig.everOn("vibration", forMs: 1_000)
        #expect(ringing, "Bob's call rings")
        let writesBefore = rig.trace.filter { $0.hasPrefix("W> 12") }.count
        rig.hold("reject", ms: 1_000)
        #expect(rig.events.contains(.silenced(uid: 2)))
        #expect(rig.trace.filter { $0.hasPrefix("W> 12") }.count == writesBefore, "silence writes nothing to the phone")
        #expect(rig.everOn("vibration", forMs: 2_000) == false)
        #expect(rig.everOn("led-call", forMs: 500) == false)
        rig.hold("accept", ms: 100)
        #expect(rig.events.contains(.action(uid: 2, action: .positive, result: .sent)), "accept still answers the silenced call")
        #expect(rig.run(untilMs: 5_000) { $0.sawAdded(3) }, "Carol calls")
        let ringsAgain = rig.everOn("vibration", forMs: 1_500)
        #expect(ringsAgain, "a new call rings again")
    }

    @Test("ring-limit.scn: with no Removed, the ring stops after 60 s, reported once; the call stays and accept answers it")
    func ringLimit() {
        var rig = WearableLoopback(scenario: "ring-limit.scn")
        rig.connect()
        #expect(rig.run(untilMs: 10_000) { $0.sawAdded(2) })
        rig.run(forMs: 58_000)
        let stillRinging = rig.everOn("vibration", forMs: 1_500)
        #expect(stillRinging, "still ringing at 58 s")
        rig.run(forMs: 1_000)
        #expect(rig.events.filter { $0 == .ringLimited(uid: 2) }.count == 1)
        #expect(rig.everOn("vibration", forMs: 5_000) == false)
        #expect(rig.core.phone.session.table.record(uid: 2) != nil, "the notification stays")
        rig.hold("accept", ms: 100)
        #expect(rig.events.contains(.action(uid: 2, action: .positive, result: .sent)))
        #expect(rig.events.filter { $0 == .ringLimited(uid: 2) }.count == 1, "reported once")
    }
}
