// SPDX-License-Identifier: Apache-2.0
import Bounded
import Feedback
import Testing
import TestSupport

@Suite("Button gestures")
struct ButtonGestureTests {
    @Test("nothing is timed while no button is touched")
    func idleHasNoDeadline() {
        var rig = GestureRig()
        #expect(rig.gestures.nextDeadline == nil)
        #expect(rig.advance(100_000) == [])
    }

    @Test("a clean short press is reported when the double-press gap has passed (1 ms after it)")
    func cleanShort() {
        var rig = GestureRig()
        #expect(rig.press(0, at: 1_000) == [])
        #expect(rig.gestures.isPressed(0) == true)
        #expect(rig.release(0, at: 1_120) == [])
        #expect(rig.gestures.nextDeadline == t(1_421))
        #expect(rig.advance(1_420) == [])
        #expect(rig.advance(1_421) == [ev(.short(button: 0), 1_421)])
        #expect(rig.gestures.nextDeadline == nil)
    }

    @Test("a short press with 5 ms of bounce at press and at release is one short press; the bounces are counted")
    func shortWithBounce() {
        var rig = GestureRig()
        #expect(rig.press(1, at: 0) == [])
        #expect(rig.release(1, at: 5) == [])
        #expect(rig.press(1, at: 10) == [])
        #expect(rig.release(1, at: 200) == [])
        #expect(rig.press(1, at: 205) == [])
        #expect(rig.release(1, at: 210) == [])
        #expect(rig.follow(until: 10_000) == [ev(.short(button: 1), 501)])
        #expect(rig.gestures.counters.edgesIgnored == 4)
    }

    @Test("a bounce that leaves the line at the other level is accepted 1 ms after the debounce window closes")
    func bounceSettlesAtWindowEnd() {
        var rig = GestureRig()
        rig.gestures.setDoublePress(enabled: false, button: 0)
        #expect(rig.press(0, at: 0) == [])
        #expect(rig.release(0, at: 5) == [])
        #expect(rig.gestures.isPressed(0) == true)
        #expect(rig.gestures.nextDeadline == t(21))
        #expect(rig.advance(20) == [])
        #expect(rig.advance(21) == [ev(.short(button: 0), 21)])
        #expect(rig.gestures.isPressed(0) == false)
        #expect(rig.gestures.counters.edgesIgnored == 1)
    }

    @Test("the debounce window is inclusive: a release exactly at its close is a bounce, accepted by the settle 1 ms later")
    func releaseAtWindowCloseSettlesLater() {
        var rig = GestureRig()
        rig.gestures.setDoublePress(enabled: false, button: 0)
        #expect(rig.press(0, at: 0) == [])
        #expect(rig.release(0, at: 20) == [])
        #expect(rig.gestures.isPressed(0) == true)
        #expect(rig.gestures.counters.edgesIgnored == 1)
        #expect(rig.advance(21) == [ev(.short(button: 0), 21)])
        #expect(rig.gestures.isPressed(0) == false)
    }

    @Test("a bounce that returns to the pressed level exactly as the debounce window closes keeps the press")
    func bounceReturnsAtWindowEnd() {
        var rig = GestureRig()
        #expect(rig.press(0, at: 0) == [])
        #expect(rig.release(0, at: 5) == [])
        #expect(rig.press(0, at: 20) == [])
        #expect(rig.gestures.isPressed(0) == true)
        #expect(rig.follow(until: 10_000) == [ev(.long(button: 0), 800)])
        #expect(rig.gestures.counters.edgesIgnored == 2)
    }

    @Test("a long press fires at 800 ms while still held, and its release reports nothing")
    func longPress() {
        var rig = GestureRig()
        #expect(rig.press(0, at: 0) == [])
        #expect(rig.gestures.nextDeadline == t(800))
        #expect(rig.advance(799) == [])
        #expect(rig.advance(800) == [ev(.long(button: 0), 800)])
        #expect(rig.gestures.nextDeadline == nil)
        #expect(rig.release(0, at: 2_500) == [])
        #expect(rig.follow(until: 10_000) == [])
    }

    @Test("a long press noticed late carries the instant it reached 800 ms")
    func longPressLateWakeup() {
        var rig = GestureRig()
        #expect(rig.press(0, at: 0) == [])
        #expect(rig.release(0, at: 3_000) == [ev(.long(button: 0), 800)])
    }

    @Test("a release exactly at 800 ms is a long press")
    func releaseAtLongThreshold() {
        var rig = GestureRig()
        #expect(rig.press(0, at: 0) == [])
        #expect(rig.release(0, at: 800) == [ev(.long(button: 0), 800)])
        #expect(rig.gestures.nextDeadline == nil)
    }

    @Test("two short presses 150 ms apart are one double press, reported at the second release")
    func doublePress() {
        var rig = GestureRig()
        #expect(rig.press(0, at: 0) == [])
        #expect(rig.release(0, at: 100) == [])
        #expect(rig.press(0, at: 250) == [])
        #expect(rig.release(0, at: 350) == [ev(.double(button: 0), 350)])
        #expect(rig.gestures.nextDeadline == nil)
    }

    @Test("a second press exactly 300 ms after the release is a double; 301 ms is a short then a new press")
    func doublePressGapBoundary() {
        var rig = GestureRig()
        _ = rig.press(0, at: 0)
        _ = rig.release(0, at: 100)
        #expect(rig.press(0, at: 400) == [])
        #expect(rig.release(0, at: 450) == [ev(.double(button: 0), 450)])

        _ = rig.press(0, at: 1_000)
        _ = rig.release(0, at: 1_100)
        #expect(rig.press(0, at: 1_401) == [ev(.short(button: 0), 1_401)])
        #expect(rig.release(0, at: 1_450) == [])
        #expect(rig.follow(until: 10_000) == [ev(.short(button: 0), 1_751)])
    }

    @Test("a triple press is a double then a short")
    func triplePress() {
        var rig = GestureRig()
        var seen: [GestureEvent] = []
        for start: Int64 in [0, 200, 400] {
            seen += rig.press(0, at: start)
            seen += rig.release(0, at: start + 100)
        }
        seen += rig.follow(until: 10_000)
        #expect(seen == [ev(.double(button: 0), 300), ev(.short(button: 0), 801)])
    }

    @Test("a second press held to 800 ms is the first press's short, then a long")
    func secondPressHeldLong() {
        var rig = GestureRig()
        _ = rig.press(0, at: 0)
        _ = rig.release(0, at: 100)
        _ = rig.press(0, at: 200)
        #expect(rig.advance(1_000) == [ev(.short(button: 0), 1_000), ev(.long(button: 0), 1_000)])
        #expect(rig.release(0, at: 1_200) == [])
    }

    @Test("with double press disabled a short press is reported at its release, without waiting")
    func doubleDisabledShortAtRelease() {
        var rig = GestureRig()
        rig.gestures.setDoublePress(enabled: false, button: 1)
        #expect(rig.press(1, at: 0) == [])
        #expect(rig.release(1, at: 150) == [ev(.short(button: 1), 150)])
        #expect(rig.gestures.nextDeadline == nil)
        #expect(rig.press(1, at: 250) == [])
        #expect(rig.release(1, at: 300) == [ev(.short(button: 1), 300)])
    }

    @Test("both chord buttons held 800 ms from the later press are one long chord, and nothing else")
    func longChord() {
        var rig = GestureRig { $0.chord = ButtonChord(0, 1) }
        #expect(rig.press(0, at: 0) == [])
        #expect(rig.press(1, at: 100) == [])
        // Button 0's own long press (due at 800) is suppressed.
        #expect(rig.gestures.nextDeadline == t(900))
        #expect(rig.advance(899) == [])
        #expect(rig.advance(900) == [ev(.chordLong, 900)])
        #expect(rig.release(1, at: 1_500) == [])
        #expect(rig.release(0, at: 1_600) == [])
        #expect(rig.follow(until: 10_000) == [])
    }

    @Test("a chord released early reports nothing for either button")
    func abortedChord() {
        var rig = GestureRig { $0.chord = ButtonChord(0, 1) }
        #expect(rig.press(1, at: 0) == [])
        #expect(rig.press(0, at: 50) == [])
        #expect(rig.release(0, at: 400) == [])
        #expect(rig.release(1, at: 2_000) == [])
        #expect(rig.follow(until: 10_000) == [])
        #expect(rig.gestures.nextDeadline == nil)
    }

    @Test("a button pressed after its chord partner has already reported a long press acts alone")
    func noChordAfterLong() {
        var rig = GestureRig { $0.chord = ButtonChord(0, 1) }
        #expect(rig.press(0, at: 0) == [])
        #expect(rig.press(1, at: 900) == [ev(.long(button: 0), 800)])
        #expect(rig.follow(until: 10_000) == [ev(.long(button: 1), 1_700)])
    }

    @Test("buttons outside the chord keep their own gestures while it forms")
    func otherButtonDuringChord() {
        var rig = GestureRig(buttons: 3) { $0.chord = ButtonChord(0, 1) }
        rig.gestures.setDoublePress(enabled: false, button: 2)
        _ = rig.press(0, at: 0)
        _ = rig.press(1, at: 10)
        #expect(rig.press(2, at: 100) == [])
        #expect(rig.release(2, at: 200) == [ev(.short(button: 2), 200)])
        #expect(rig.follow(until: 10_000) == [ev(.chordLong, 810)])
    }
}
