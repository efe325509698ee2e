// SPDX-License-Identifier: Apache-2.0
// Flood: 10,000 Notification Source events per second for 10 s
// through the real loop (LinuxPlatform over a socketpair; the phone on its
// own thread, flow-controlled like a Bluetooth link). Every event is seen or
// counted, the loop allocates nothing, the notification table stays bounded
// (evictions counted), and an incoming call arriving halfway rings until
// the end. The driver is shared with `make bench` (Tests/Bench/Harness).

import ANCS
import AllocCounter
import BenchSupport
import PlatformLinux
import TestSupport
import Testing

private enum ControlError: Error { case odd(Int) }

@inline(never) private func controlThrow(_ n: Int) throws(ControlError) -> Int {
    if n != 0 { throw .odd(n) }
    return n
}

@Suite("Flood")
struct FloodTests {
    /// Swift Testing installs a `swift_willThrowTyped` hook that boxes every
    /// thrown error (the firmware has none): each loop step ends its link
    /// reads with one EAGAIN, a thrown `SystemError`, so here a step may
    /// cost what one throw costs the hook, measured with a plain throw.
    /// `make bench` runs the same flood without the hook: 0 allocations.
    static let hookAllocationsPerThrow: UInt64 = {
        _ = try? controlThrow(1)
        let before = wl_alloc_count()
        for n in 1...100 { _ = try? controlThrow(n) }
        return (wl_alloc_count() - before) / 100
    }()

    @Test("10 s at 10,000 NS events/s: every event seen or counted, no allocation, a call mid-flood lights led-call and rings to the end")
    func tenThousandPerSecond() throws {
        var rig = try BenchRig(config: try benchConfig(root: repositoryRoot))
        let problem = rig.bringUp()
        #expect(problem == nil)
        if problem != nil { return }
        let report = Flood.run(&rig, rate: 10_000, seconds: 10)
        print("flood: \(report)")

        #expect(report.eventsSent == 100_000)
        // Nothing lost silently: every PDU became a notification event, and
        // nothing on the way was dropped.
        #expect(report.notificationsSeen == UInt64(report.eventsSent))
        #expect(report.notificationSourceDropped == 0)
        // The table (64) filled: the oldest non-call entries were evicted, counted.
        #expect(report.tableEvictions > 0)
        // The call.
        #expect(report.callSeen)
        #expect(report.callLit)
        #expect(report.stepsWithoutRing == 0)
        #expect(report.ringAfterFlood)
        if isOptimizedBuild {
            #expect(report.loopAllocations <= UInt64(report.loopSteps) * Self.hookAllocationsPerThrow,
                    "steady-state allocations on the loop's thread beyond the test hook's one per step")
        }

        // The phone ends the call: its ring stops.
        let ledCall = rig.runner.core.board.outputIndex(named: "led-call")!
        rig.phone.sendNotification(.removed, [], .incomingCall, count: 0, uid: Flood.callUID)
        let ended = rig.run(withinMs: 2_000) { $0.core.phone.session.table.record(uid: Flood.callUID) == nil }
        #expect(ended)
        let stillRinging = rig.runner.core.isAlerting(uid: Flood.callUID, output: ledCall)
        #expect(!stillRinging)
    }
}
