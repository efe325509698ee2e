// SPDX-License-Identifier: Apache-2.0
import Bounded
import Feedback
import Testing
import TestSupport

@Suite("Pattern player")
struct PatternPlayerTests {
    @Test("nextDeadline is nil for a new player and again once its pattern has finished")
    func idleHasNoDeadline() {
        var rig = PlayerRig()
        #expect(rig.player.nextDeadline == nil)
        #expect(rig.advance(5_000) == [])
        rig.player.play(pattern([.on(100)], .times(1)), output: 0, priority: 1, owner: 1, now: t(5_000))
        #expect(rig.follow(until: 100_000) == [Seen(5_000, 0, .on), Seen(5_100, 0, .off)])
        #expect(rig.player.nextDeadline == nil)
        #expect(rig.player.patternCount(output: 0) == 0)
    }

    @Test("levels change exactly at each step boundary, and not 1 ms before")
    func exactBoundaries() {
        var rig = PlayerRig()
        let p = pattern([.on(100), .off(50), .on(200), .off(150)], .times(1))
        #expect(rig.player.play(p, output: 1, priority: 1, owner: 9, now: t(1_000)) == .playing)
        #expect(rig.player.nextDeadline == t(1_000))
        #expect(rig.advance(1_000) == [Seen(1_000, 1, .on)])
        #expect(rig.player.nextDeadline == t(1_100))
        #expect(rig.advance(1_099) == [])
        #expect(rig.advance(1_100) == [Seen(1_100, 1, .off)])
        #expect(rig.player.nextDeadline == t(1_150))
        #expect(rig.advance(1_149) == [])
        #expect(rig.advance(1_150) == [Seen(1_150, 1, .on)])
        #expect(rig.player.nextDeadline == t(1_350))
        #expect(rig.advance(1_350) == [Seen(1_350, 1, .off)])
        // The last step is off, so the end changes nothing: the only wakeup
        // left is the end itself, which frees the slot.
        #expect(rig.player.nextDeadline == t(1_500))
        #expect(rig.advance(1_500) == [])
        #expect(rig.player.patternCount(output: 1) == 0)
        #expect(rig.player.nextDeadline == nil)
    }

    @Test("a pattern played three times ends, and the end reports the final off")
    func repeatCountEndsWithOff() {
        var rig = PlayerRig()
        rig.player.play(pattern([.off(100), .on(200)], .times(3)), output: 0, priority: 1, owner: 1, now: t(0))
        #expect(rig.follow(until: 10_000) == [
            Seen(100, 0, .on), Seen(300, 0, .off),
            Seen(400, 0, .on), Seen(600, 0, .off),
            Seen(700, 0, .on), Seen(900, 0, .off),
        ])
        #expect(rig.player.level(of: 0) == .off)
        #expect(rig.player.nextDeadline == nil)
    }

    @Test("a level is reported only when it changes: a steady on over three repeats is one on and one off")
    func steadyLevelCostsNoWakeups() {
        var rig = PlayerRig()
        rig.player.play(pattern([.on(100)], .times(3)), output: 0, priority: 1, owner: 1, now: t(0))
        #expect(rig.advance(0) == [Seen(0, 0, .on)])
        #expect(rig.player.nextDeadline == t(300))
        #expect(rig.follow(until: 10_000) == [Seen(300, 0, .off)])
    }

    @Test("a final level is held after the last repeat until the owner is stopped")
    func finalLevelHeldUntilStopped() {
        var rig = PlayerRig()
        rig.player.play(pattern([.on(100), .off(100)], .times(2), finalLevel: .on), output: 0, priority: 1, owner: 4, now: t(0))
        #expect(rig.follow(until: 60_000) == [
            Seen(0, 0, .on), Seen(100, 0, .off), Seen(200, 0, .on), Seen(300, 0, .off), Seen(400, 0, .on),
        ])
        #expect(rig.player.nextDeadline == nil)
        #expect(rig.player.patternCount(output: 0) == 1)
        #expect(rig.player.stop(owner: 4, now: t(60_000)) == 1)
        #expect(rig.advance(60_000) == [Seen(60_000, 0, .off)])
        #expect(rig.player.nextDeadline == nil)
    }

    @Test("an until-stopped pattern runs until its owner is stopped, then turns off")
    func untilStopped() {
        var rig = PlayerRig()
        rig.player.play(pattern([.on(50), .off(50)], .untilStopped), output: 0, priority: 1, owner: 0xABCD, now: t(0))
        let seen = rig.follow(until: 9_999)
        #expect(seen.count == 200)
        #expect(seen.last == Seen(9_950, 0, .off))
        #expect(rig.player.nextDeadline == t(10_000))
        #expect(rig.advance(10_020) == [Seen(10_020, 0, .on)])
        #expect(rig.player.stop(owner: 0xABCD, now: t(10_030)) == 1)
        #expect(rig.player.nextDeadline == t(10_030))
        #expect(rig.advance(10_030) == [Seen(10_030, 0, .off)])
        #expect(rig.player.nextDeadline == nil)
        #expect(rig.follow(until: 100_000) == [])
    }

    @Test("a higher priority pre-empts, and the lower resumes at the phase where it was paused")
    func preemptThenResumeAtPhase() {
        var rig = PlayerRig()
        let low = pattern([.on(300), .off(300)], .untilStopped)
        let high = pattern([.on(200)], .times(1))
        rig.player.play(low, output: 0, priority: 1, owner: 1, onPreempt: .resume, now: t(0))
        #expect(rig.follow(until: 399) == [Seen(0, 0, .on), Seen(300, 0, .off)])
        // 100 ms into the low pattern's off step.
        #expect(rig.player.play(high, output: 0, priority: 5, owner: 2, now: t(400)) == .playing)
        // High ends at 600; low continues with the 200 ms left of its off
        // step (a restart would have turned on at 600).
        #expect(rig.follow(until: 1_500) == [
            Seen(400, 0, .on), Seen(600, 0, .off), Seen(800, 0, .on), Seen(1_100, 0, .off), Seen(1_400, 0, .on),
        ])
        #expect(rig.player.patternCount(output: 0) == 1)
    }

    @Test("stopping the higher pattern resumes the lower from the stop, at its paused phase")
    func stopResumesLower() {
        var rig = PlayerRig()
        rig.player.play(pattern([.on(300), .off(300)], .untilStopped), output: 0, priority: 1, owner: 1, now: t(0))
        #expect(rig.advance(0) == [Seen(0, 0, .on)])
        // Paused 250 ms into its on step.
        rig.player.play(pattern([.off(40), .on(40)], .untilStopped), output: 0, priority: 3, owner: 2, now: t(250))
        // The higher one's last boundary before 5 000 is 4 970 (an off step).
        #expect(rig.follow(until: 5_000).last == Seen(4_970, 0, .off))
        #expect(rig.player.stop(owner: 2, now: t(5_010)) == 1)
        #expect(rig.advance(5_010) == [Seen(5_010, 0, .on)])
        // 50 ms of the on step were left.
        #expect(rig.player.nextDeadline == t(5_060))
        #expect(rig.advance(5_060) == [Seen(5_060, 0, .off)])
    }

    @Test("a pattern started with onPreempt .end ends when pre-empted and does not come back")
    func preemptEnds() {
        var rig = PlayerRig()
        rig.player.play(pattern([.on(1_000)], .untilStopped), output: 0, priority: 1, owner: 1, onPreempt: .end, now: t(0))
        #expect(rig.advance(0) == [Seen(0, 0, .on)])
        rig.player.play(pattern([.off(100), .on(100)], .times(1)), output: 0, priority: 2, owner: 2, now: t(500))
        #expect(rig.player.patternCount(output: 0) == 1)
        #expect(rig.follow(until: 10_000) == [Seen(500, 0, .off), Seen(600, 0, .on), Seen(700, 0, .off)])
        #expect(rig.player.patternCount(output: 0) == 0)
        #expect(rig.player.nextDeadline == nil)
    }

    @Test("a lower play waits and starts from its beginning when the higher ends; with .end it is not kept")
    func lowerPlayWaitsOrIsOutranked() {
        var rig = PlayerRig()
        rig.player.play(pattern([.on(500)], .times(1)), output: 0, priority: 5, owner: 1, now: t(0))
        #expect(rig.advance(0) == [Seen(0, 0, .on)])
        #expect(rig.player.play(pattern([.off(100), .on(100)], .times(1)), output: 0, priority: 1, owner: 2, now: t(100)) == .waiting)
        #expect(rig.player.play(pattern([.on(100)], .times(1)), output: 0, priority: 1, owner: 3, onPreempt: .end, now: t(100)) == .outranked)
        #expect(rig.player.patternCount(output: 0) == 2)
        #expect(rig.follow(until: 10_000) == [Seen(500, 0, .off), Seen(600, 0, .on), Seen(700, 0, .off)])
    }

    @Test("at equal priority the newest plays, and the older resumes after it")
    func equalPriorityNewestWins() {
        var rig = PlayerRig()
        rig.player.play(pattern([.on(100), .off(100)], .times(2)), output: 0, priority: 2, owner: 1, now: t(0))
        #expect(rig.advance(0) == [Seen(0, 0, .on)])
        #expect(rig.player.play(pattern([.off(300)], .times(1)), output: 0, priority: 2, owner: 2, now: t(50)) == .playing)
        // Older paused 50 ms into its first on step; resumes at 350.
        #expect(rig.follow(until: 10_000) == [
            Seen(50, 0, .off), Seen(350, 0, .on), Seen(400, 0, .off), Seen(500, 0, .on), Seen(600, 0, .off),
        ])
    }

    @Test("playing again for the same owner replaces its pattern instead of stacking a copy")
    func sameOwnerReplaces() {
        var rig = PlayerRig()
        let p = pattern([.on(100), .off(100)], .times(3))
        rig.player.play(p, output: 0, priority: 1, owner: 7, now: t(0))
        rig.player.play(p, output: 0, priority: 1, owner: 7, now: t(150))
        #expect(rig.player.patternCount(output: 0) == 1)
        // Restarted at 150: on 150-250, off 250-350, ... ends at 750.
        #expect(rig.follow(until: 10_000) == [
            Seen(150, 0, .on), Seen(250, 0, .off), Seen(350, 0, .on), Seen(450, 0, .off), Seen(550, 0, .on), Seen(650, 0, .off),
        ])
    }

    @Test("when an output's slots are full a weaker play is refused and a stronger one evicts the weakest, both counted")
    func fullPolicy() {
        var rig = PlayerRig(outputs: 1, patternsPerOutput: 2)
        let p = pattern([.on(100), .off(100)], .untilStopped)
        #expect(rig.player.play(p, output: 0, priority: 3, owner: 1, now: t(0)) == .playing)
        #expect(rig.player.play(p, output: 0, priority: 4, owner: 2, now: t(0)) == .playing)
        #expect(rig.player.play(p, output: 0, priority: 2, owner: 3, now: t(0)) == .refusedFull)
        #expect(rig.player.counters.refusedFull == 1)
        // Equal to the weakest: newest wins, so the weakest (owner 1) goes.
        #expect(rig.player.play(p, output: 0, priority: 3, owner: 4, now: t(10)) == .waiting)
        #expect(rig.player.counters.evicted == 1)
        #expect(rig.player.stop(owner: 1, now: t(20)) == 0)
        #expect(rig.player.stop(owner: 2, now: t(20)) == 1)
        #expect(rig.player.stop(owner: 4, now: t(20)) == 1)
        #expect(rig.player.patternCount(output: 0) == 0)
    }

    @Test("stop(owner:) stops that owner's patterns on every output and leaves the others")
    func stopOwnerEverywhere() {
        var rig = PlayerRig(outputs: 3)
        let p = pattern([.on(1_000)], .untilStopped)
        rig.player.play(p, output: 0, priority: 1, owner: 42, now: t(0))
        rig.player.play(p, output: 2, priority: 1, owner: 42, now: t(0))
        rig.player.play(p, output: 1, priority: 1, owner: 43, now: t(0))
        #expect(rig.advance(0) == [Seen(0, 0, .on), Seen(0, 1, .on), Seen(0, 2, .on)])
        #expect(rig.player.stop(owner: 42, now: t(300)) == 2)
        #expect(rig.advance(300) == [Seen(300, 0, .off), Seen(300, 2, .off)])
        #expect(rig.player.level(of: 1) == .on)
    }

    @Test("stopAll turns every line off and leaves the player idle")
    func stopAllTurnsEverythingOff() {
        var rig = PlayerRig(outputs: 3)
        rig.player.play(pattern([.on(1_000)], .untilStopped), output: 0, priority: 1, owner: 1, now: t(0))
        rig.player.play(pattern([.off(10), .on(1_000)], .untilStopped), output: 1, priority: 1, owner: 2, now: t(0))
        rig.player.play(pattern([.on(100), .off(900)], .untilStopped), output: 2, priority: 9, owner: 3, now: t(0))
        #expect(rig.follow(until: 200) == [Seen(0, 0, .on), Seen(0, 2, .on), Seen(10, 1, .on), Seen(100, 2, .off)])
        rig.player.stopAll()
        #expect(rig.player.nextDeadline == t(100))
        #expect(rig.advance(250) == [Seen(250, 0, .off), Seen(250, 1, .off)])
        #expect(rig.player.nextDeadline == nil)
        for o in 0..<3 { #expect(rig.player.patternCount(output: o) == 0) }
    }

    @Test("a late wakeup jumps to the level at now without the changes in between, and the next boundary does not drift")
    func lateWakeupNoDrift() {
        var rig = PlayerRig()
        rig.player.play(pattern([.on(100), .off(100)], .untilStopped), output: 0, priority: 1, owner: 1, now: t(0))
        #expect(rig.advance(0) == [Seen(0, 0, .on)])
        #expect(rig.player.nextDeadline == t(100))
        // Due at 100, woken at 1 150: ten boundaries passed, one change shown.
        #expect(rig.advance(1_150) == [Seen(1_150, 0, .off)])
        #expect(rig.player.nextDeadline == t(1_200))
        // Waking 37 ms late every time never moves the boundaries.
        for _ in 0..<50 {
            guard let due = rig.player.nextDeadline else {
                Issue.record("deadline lost")
                return
            }
            #expect(due.ms % 100 == 0)
            #expect(rig.advance(due.ms + 37).count == 1)
            #expect(rig.player.nextDeadline == due.advanced(byMs: 100))
        }
    }

    @Test("a pattern that ended while asleep hands over to the one below at its end instant, not at the wakeup")
    func handoverWhileAsleep() {
        var rig = PlayerRig()
        rig.player.play(pattern([.on(100), .off(100)], .untilStopped), output: 0, priority: 1, owner: 1, now: t(0))
        #expect(rig.advance(0) == [Seen(0, 0, .on)])
        // Pre-empted 50 ms in; the higher one ends at 550 and the lower
        // resumes from elapsed 50 there.
        rig.player.play(pattern([.off(500)], .times(1)), output: 0, priority: 2, owner: 2, now: t(50))
        #expect(rig.advance(50) == [Seen(50, 0, .off)])
        // At 2 000 the lower has run 50 + 1 450 = 1 500 ms: the start of an off step.
        #expect(rig.advance(2_000) == [])
        #expect(rig.player.level(of: 0) == .off)
        #expect(rig.player.patternCount(output: 0) == 1)
        #expect(rig.player.nextDeadline == t(2_100))
    }

    @Test("a clock jump of years forward is handled in one step")
    func clockJump() {
        var rig = PlayerRig()
        rig.player.play(pattern([.on(1), .off(1)], .untilStopped), output: 0, priority: 1, owner: 1, now: t(0))
        rig.player.play(pattern([.on(7)], .times(10_000)), output: 1, priority: 1, owner: 1, now: t(0))
        #expect(rig.advance(0) == [Seen(0, 0, .on), Seen(0, 1, .on)])
        let years: Int64 = 100 * 365 * 24 * 3_600 * 1_000
        #expect(rig.advance(years + 1) == [Seen(years + 1, 0, .off), Seen(years + 1, 1, .off)])
        #expect(rig.player.nextDeadline == t(years + 2))
        #expect(rig.player.patternCount(output: 1) == 0)
    }

    @Test("a change that does not fit in the caller's ring is reported by the next advance, and counted")
    func fullRingDefers() {
        var rig = PlayerRig(outputs: 2, ringCapacity: 1)
        rig.player.play(pattern([.on(500)], .times(1)), output: 0, priority: 1, owner: 1, now: t(0))
        rig.player.play(pattern([.on(500)], .times(1)), output: 1, priority: 1, owner: 1, now: t(0))
        #expect(rig.advance(0) == [Seen(0, 0, .on)])
        #expect(rig.player.counters.changesDeferred == 1)
        #expect(rig.player.nextDeadline == t(0))
        #expect(rig.advance(1) == [Seen(1, 1, .on)])
        // Both end at 500: one is reported, the other stays due at 500.
        #expect(rig.follow(until: 1_000) == [Seen(500, 0, .off), Seen(500, 1, .off)])
        #expect(rig.player.counters.changesDeferred == 2)
    }
}
