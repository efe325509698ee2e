// SPDX-License-Identifier: Apache-2.0
import Bounded
import Feedback
import Testing
import TestSupport

@Suite("Pattern player simulation")
struct PlayerSimulationTests {
    /// Random plays and stops on three outputs, fed to three players woken
    /// differently: every millisecond, exactly at their deadlines, and up to
    /// 60 ms late. Whenever the lazier ones wake, their lines must show what
    /// the every-millisecond player shows.
    @Test("the levels do not depend on when the loop wakes: every millisecond, at each deadline, or late", arguments: [1, 2, 3, 4, 5] as [UInt64])
    func wakeupIndependence(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let outputs = 3
        var every = PatternPlayer(outputCount: outputs, patternsPerOutput: 3)
        var onTime = PatternPlayer(outputCount: outputs, patternsPerOutput: 3)
        var late = PatternPlayer(outputCount: outputs, patternsPerOutput: 3)
        var ring = RingBuffer<OutputChange>(capacity: outputs, policy: .refuseNewest)
        var lateWakeMs: Int64? = nil
        var mismatches = 0
        var lateWakeups = 0

        var ms: Int64 = 0
        var nextCommandMs: Int64 = 0
        while ms <= 60_000 {
            every.advance(now: t(ms), into: &ring)
            ring.removeAll()
            if ms == nextCommandMs {
                let owner = PatternOwner.notification(UInt32(1 + rng.below(4)))
                if rng.below(4) == 0 {
                    every.stop(owner: owner, now: t(ms))
                    onTime.stop(owner: owner, now: t(ms))
                    late.stop(owner: owner, now: t(ms))
                } else {
                    var steps: [PatternStep] = []
                    for _ in 0..<(1 + rng.below(4)) {
                        steps.append(PatternStep(rng.below(2) == 0 ? .on : .off, durationMs: Int64(1 + rng.below(200))))
                    }
                    let finite = rng.below(3) != 0
                    let p = pattern(
                        steps, finite ? .times(1 + rng.below(3)) : .untilStopped,
                        finalLevel: finite && rng.below(4) == 0 ? .on : nil)
                    let output = rng.below(outputs)
                    let priority = UInt8(rng.below(4))
                    let policy: PreemptPolicy = rng.below(3) == 0 ? .end : .resume
                    let a = every.play(p, output: output, priority: priority, owner: owner, onPreempt: policy, now: t(ms))
                    let b = onTime.play(p, output: output, priority: priority, owner: owner, onPreempt: policy, now: t(ms))
                    let c = late.play(p, output: output, priority: priority, owner: owner, onPreempt: policy, now: t(ms))
                    #expect(a == b && b == c)
                }
                every.advance(now: t(ms), into: &ring)
                ring.removeAll()
                nextCommandMs = ms + Int64(rng.below(400))
                if nextCommandMs == ms { nextCommandMs += 1 }
            }
            if let due = onTime.nextDeadline, due.ms <= ms {
                onTime.advance(now: t(ms), into: &ring)
                ring.removeAll()
                for o in 0..<outputs where onTime.level(of: o) != every.level(of: o) { mismatches += 1 }
            }
            if lateWakeMs == nil, let due = late.nextDeadline {
                lateWakeMs = max(due.ms, ms) + Int64(rng.below(61))
            }
            if let wake = lateWakeMs, wake <= ms {
                late.advance(now: t(ms), into: &ring)
                ring.removeAll()
                lateWakeMs = nil
                lateWakeups += 1
                for o in 0..<outputs where late.level(of: o) != every.level(of: o) { mismatches += 1 }
            }
            ms += 1
        }
        #expect(mismatches == 0)
        #expect(lateWakeups > 100)

        every.stopAll()
        every.advance(now: t(ms), into: &ring)
        ring.removeAll()
        for o in 0..<outputs { #expect(every.level(of: o) == .off) }
        #expect(every.nextDeadline == nil)
    }
}
