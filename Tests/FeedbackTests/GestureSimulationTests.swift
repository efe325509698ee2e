// SPDX-License-Identifier: Apache-2.0
import Bounded
import Feedback
import Testing
import TestSupport

@Suite("Button gesture simulation")
struct GestureSimulationTests {
    /// Random presses of random length with random bounce on two chorded
    /// buttons and one plain one, fed to two recognisers: one woken every
    /// millisecond, one only at edges and its deadlines, a random time late.
    /// They must report the same gestures at the same instants.
    @Test("gestures do not depend on when the loop wakes", arguments: [11, 12, 13, 14, 15] as [UInt64])
    func wakeupIndependence(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var config = GestureConfig()
        config.chord = ButtonChord(0, 1)
        var every = ButtonGestures(buttonCount: 3, config: config)
        var lazy = ButtonGestures(buttonCount: 3, config: config)
        every.setDoublePress(enabled: false, button: 2)
        lazy.setDoublePress(enabled: false, button: 2)
        var everyRing = RingBuffer<GestureEvent>(capacity: 16, policy: .refuseNewest)
        var lazyRing = RingBuffer<GestureEvent>(capacity: 16, policy: .refuseNewest)
        var everySeen: [GestureEvent] = []
        var lazySeen: [GestureEvent] = []

        // Raw edges: (ms, button, pressed), with a bounce burst at each transition.
        var edges: [(ms: Int64, button: Int, pressed: Bool)] = []
        var clock: Int64 = 0
        var pressed = [false, false, false]
        for _ in 0..<400 {
            clock += Int64(1 + rng.below(400))
            let button = rng.below(3)
            let level = !pressed[button]
            pressed[button] = level
            edges.append((clock, button, level))
            // Bounce pairs 1...12 ms apart: some end inside the debounce
            // window, some exactly at its close, some after it.
            for _ in 0..<rng.below(3) {
                clock += Int64(1 + rng.below(12))
                edges.append((clock, button, !level))
                clock += Int64(1 + rng.below(12))
                edges.append((clock, button, level))
            }
        }
        edges.sort { $0.ms < $1.ms }

        var next = 0
        var lazyWakeMs: Int64? = nil
        var ms: Int64 = 0
        while next < edges.count || ms <= clock + 2_000 {
            every.advance(now: t(ms), into: &everyRing)
            while next < edges.count && edges[next].ms == ms {
                let e = edges[next]
                every.edge(button: e.button, pressed: e.pressed, at: t(ms), into: &everyRing)
                lazy.edge(button: e.button, pressed: e.pressed, at: t(ms), into: &lazyRing)
                lazyWakeMs = nil
                next += 1
            }
            if lazyWakeMs == nil, let due = lazy.nextDeadline {
                lazyWakeMs = max(due.ms, ms) + Int64(rng.below(50))
            }
            if let wake = lazyWakeMs, wake <= ms {
                lazy.advance(now: t(ms), into: &lazyRing)
                lazyWakeMs = nil
            }
            while let e = everyRing.popFirst() { everySeen.append(e) }
            while let e = lazyRing.popFirst() { lazySeen.append(e) }
            ms += 1
        }
        lazy.advance(now: t(ms), into: &lazyRing)
        while let e = lazyRing.popFirst() { lazySeen.append(e) }

        #expect(everySeen.count > 100)
        #expect(everySeen == lazySeen)
        #expect(every.counters == lazy.counters)
        #expect(every.nextDeadline == nil)
    }
}
