// SPDX-License-Identifier: Apache-2.0
// The debounce window's boundary on a second path (ButtonGestures.swift,
// "Windows are inclusive"): a press after an accepted release, with a
// window other than the default, on both sides of the boundary. An edge
// exactly `debounceMs` after the last accepted one is a bounce (ignored,
// counted, then taken by the settle 1 ms later if the line stays there);
// 1 ms later it is accepted at once.

import Bounded
import Feedback
import Testing
import TestSupport

@Suite("Debounce window boundary")
struct DebounceBoundaryTests {
    /// A 35 ms window, double press off so a short press reports at release.
    static func rig() -> GestureRig {
        var rig = GestureRig { $0.debounceMs = 35 }
        rig.gestures.setDoublePress(enabled: false, button: 1)
        return rig
    }

    @Test("a press exactly debounceMs after an accepted release is a bounce: ignored and counted, accepted by the settle 1 ms later")
    func pressAtWindowCloseIsBounce() {
        var rig = Self.rig()
        #expect(rig.press(1, at: 1_000) == [])
        #expect(rig.release(1, at: 1_100) == [ev(.short(button: 1), 1_100)])
        #expect(rig.press(1, at: 1_135) == [])
        #expect(rig.gestures.isPressed(1) == false, "still released: the press fell inside the window")
        #expect(rig.gestures.counters.edgesIgnored == 1)
        #expect(rig.gestures.nextDeadline == t(1_136), "the settle 1 ms after the window")
        #expect(rig.advance(1_136) == [])
        #expect(rig.gestures.isPressed(1) == true, "the line stayed pressed: accepted at the settle")
        // The press counts from the settle: long at 1_136 + 800.
        #expect(rig.follow(until: 1_935) == [])
        #expect(rig.follow(until: 1_936) == [ev(.long(button: 1), 1_936)])
    }

    @Test("a press 1 ms after the debounce window closes is accepted at once and counts from its edge")
    func pressAfterWindowIsAccepted() {
        var rig = Self.rig()
        #expect(rig.press(1, at: 1_000) == [])
        #expect(rig.release(1, at: 1_100) == [ev(.short(button: 1), 1_100)])
        #expect(rig.press(1, at: 1_136) == [])
        #expect(rig.gestures.isPressed(1) == true)
        #expect(rig.gestures.counters.edgesIgnored == 0)
        #expect(rig.release(1, at: 1_250) == [ev(.short(button: 1), 1_250)], "a second short press, not a bounce")
    }
}
