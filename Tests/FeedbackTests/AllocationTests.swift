// SPDX-License-Identifier: Apache-2.0
import AllocCounter
import Bounded
import Feedback
import Testing
import TestSupport

@Suite("Feedback steady state allocates nothing", .enabled(if: isOptimizedBuild, "allocation counts are measured on the optimized build that ships (swift test -c release)"))
struct FeedbackAllocationTests {
    @Test("the allocation counter sees allocations (control)")
    func counterWorks() {
        final class Box { var value = 0 }
        var boxes: [Box] = []
        let perRound = allocationsPerRound(rounds: 10) { boxes.append(Box()) }
        #expect(perRound >= 1)
        #expect(boxes.count == 11)
    }

    @Test("play, pre-emption, advance at every deadline and stop allocate nothing")
    func playerCycle() throws {
        var player = PatternPlayer(outputCount: 2)
        var changes = RingBuffer<OutputChange>(capacity: 8, policy: .refuseNewest)
        let blink = try Pattern([.on(100), .off(100)], repeats: .untilStopped)
        let buzz = try Pattern([.on(300), .off(100), .on(300)], repeats: .times(2))
        var now = Instant.zero
        var changeCount = 0
        let perRound = allocationsPerRound {
            player.play(blink, output: 0, priority: 1, owner: 1, now: now)
            player.play(blink, output: 1, priority: 1, owner: 1, now: now)
            player.play(buzz, output: 1, priority: 5, owner: 2, now: now.advanced(byMs: 50))
            for _ in 0..<30 {
                guard let deadline = player.nextDeadline else { break }
                now = deadline
                player.advance(now: now, into: &changes)
                while changes.popFirst() != nil { changeCount += 1 }
            }
            player.stop(owner: 1, now: now)
            player.stop(owner: 2, now: now)
            player.advance(now: now, into: &changes)
            while changes.popFirst() != nil { changeCount += 1 }
            now = now.advanced(byMs: 1_000)
        }
        #expect(perRound == 0)
        #expect(changeCount > 501 * 10)
        #expect(player.nextDeadline == nil)
    }

    @Test("bouncy edges, a double press, a long press and a chord allocate nothing")
    func gestureCycle() {
        var config = GestureConfig()
        config.chord = ButtonChord(0, 1)
        var gestures = ButtonGestures(buttonCount: 2, config: config)
        var events = RingBuffer<GestureEvent>(capacity: 8, policy: .refuseNewest)
        var base: Int64 = 0
        var eventCount = 0
        func at(_ ms: Int64) -> Instant { Instant(ms: base + ms) }
        let perRound = allocationsPerRound {
            gestures.edge(button: 0, pressed: true, at: at(0), into: &events)
            gestures.edge(button: 0, pressed: false, at: at(4), into: &events)
            gestures.edge(button: 0, pressed: true, at: at(8), into: &events)
            gestures.edge(button: 0, pressed: false, at: at(100), into: &events)
            gestures.edge(button: 0, pressed: true, at: at(200), into: &events)
            gestures.edge(button: 0, pressed: false, at: at(300), into: &events)
            gestures.edge(button: 1, pressed: true, at: at(1_000), into: &events)
            gestures.advance(now: at(2_000), into: &events)
            gestures.edge(button: 1, pressed: false, at: at(2_100), into: &events)
            gestures.edge(button: 0, pressed: true, at: at(3_000), into: &events)
            gestures.edge(button: 1, pressed: true, at: at(3_050), into: &events)
            gestures.advance(now: at(4_000), into: &events)
            gestures.edge(button: 0, pressed: false, at: at(4_100), into: &events)
            gestures.edge(button: 1, pressed: false, at: at(4_100), into: &events)
            while events.popFirst() != nil { eventCount += 1 }
            base += 10_000
        }
        #expect(perRound == 0)
        #expect(eventCount == 501 * 3)
    }
}
