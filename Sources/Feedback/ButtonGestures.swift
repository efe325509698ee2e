// SPDX-License-Identifier: Apache-2.0
// Button gestures from raw GPIO edges: debounce, then short, long and double
// presses per button, and one long press of two buttons together (the chord
// that enters pairing mode).
//
// Debounce: an edge is accepted at once (so press timing starts at the
// press), and edges that reverse it within `debounceMs` are ignored and
// counted. If the line is left at the other level when the window closes
// (the last bounce was the real transition), that level is accepted then,
// so a lost edge can never leave a button stuck. An edge that repeats the
// accepted level (the tail of a bounce) is ignored too.
//
// Windows are inclusive. Timers that wait for nothing to happen within a
// window (the debounce settle, the double-press gap) fire 1 ms after it, so
// an edge exactly at its close still counts: a bounce back at the close is
// a bounce, a second press exactly at the gap is a double. Timers that wait
// for a hold to last (long press, chord) fire at the instant it is reached,
// so a release exactly then comes after the `.long`. An edge is always
// applied after the timers due at its instant, so the outcome does not
// depend on whether the loop advanced the clock before reading the edge.
//
// Gestures, on accepted edges:
// - `.long` fires when a press has been held `longPressMs` (inclusive), while
//   still held; its release reports nothing.
// - With double press enabled for the button, a short press is reported only
//   when `doublePressGapMs` has passed after its release without a second
//   press. A second press within the gap, released before `longPressMs`,
//   is `.double`; held to `longPressMs` it is `.short` (the first press)
//   then `.long`.
// - A third press starts a new sequence: a triple press is `.double` then
//   `.short`, a quadruple two `.double`s. The wearer gets what they did,
//   nothing is dropped, and no gesture waits on more than one gap.
// - With double press disabled a short press is reported at its release.
// - Chord: when both chord buttons are down on fresh presses (neither is a
//   second press or has reported `.long`), they act as one: their own
//   gestures are suppressed for these presses, and `.chordLong` fires when
//   both have been held `longPressMs` since the later press. Releasing
//   either before that reports nothing.
//
// Events carry the instant the gesture was complete (the release, or the
// timer's instant even if we woke late); due timers fire in time order.
// Events go to the caller's ring; when it is full the ring's own policy
// applies and counts the loss: size it for a loop turn (a handful is plenty
// for human fingers).

import Bounded

/// Two buttons whose long press together is a gesture of its own.
public struct ButtonChord: Equatable, Sendable {
    public var first: Int
    public var second: Int

    public init(_ first: Int, _ second: Int) {
        self.first = first
        self.second = second
    }

    func partner(of button: Int) -> Int? {
        if button == first { return second }
        if button == second { return first }
        return nil
    }
}

public struct GestureConfig: Equatable, Sendable {
    public var debounceMs: Int64 = 20
    public var longPressMs: Int64 = 800
    public var doublePressGapMs: Int64 = 300
    public var chord: ButtonChord? = nil

    public init() {}
}

public enum Gesture: Equatable, Sendable {
    case short(button: Int)
    case long(button: Int)
    case double(button: Int)
    /// Both chord buttons held `longPressMs` together.
    case chordLong
}

public struct GestureEvent: Equatable, Sendable {
    public var gesture: Gesture
    /// When the gesture was complete.
    public var at: Instant

    public init(_ gesture: Gesture, at: Instant) {
        self.gesture = gesture
        self.at = at
    }
}

public struct GestureCounters: Equatable, Sendable {
    /// Edges that reversed the accepted level within `debounceMs`, or
    /// repeated it.
    public var edgesIgnored: UInt64 = 0

    public init() {}
}

public struct ButtonGestures: ~Copyable {
    struct Button {
        enum Phase {
            case idle
            /// Down and counting towards `.long`; `isSecond`: the second
            /// press of a possible double.
            case held(since: Instant, isSecond: Bool)
            /// Released after a short press, waiting to see whether a second
            /// press follows.
            case awaitingSecond(releasedAt: Instant)
            /// Down, and its release reports nothing (after `.long`, or as
            /// part of a chord).
            case silent
        }

        /// The debounced level.
        var isPressed = false
        /// The level of the last raw edge.
        var rawPressed = false
        var lastAcceptedAt: Instant? = nil
        var phase = Phase.idle
        var doublePressEnabled = true
    }

    enum Timer {
        case long(button: Int)
        case gapExpired(button: Int)
        /// The debounce window closed with the line at the other level.
        case settle(button: Int)
        case chord

        /// Gesture timers fire before a debounce settle at the same instant:
        /// a hold that reaches `longPressMs` as the line settles released is
        /// a long press.
        var rank: Int {
            if case .settle = self { return 1 }
            return 0
        }
    }

    public let config: GestureConfig
    public let buttonCount: Int
    private var buttons: FixedArray<Button>
    /// The later press of a forming chord; nil when no chord is forming.
    private var chordSince: Instant? = nil
    private var latest = Instant.zero
    public private(set) var counters = GestureCounters()

    public init(buttonCount: Int, config: GestureConfig = GestureConfig()) {
        precondition(buttonCount > 0, "gestures need at least one button")
        precondition(config.debounceMs >= 0 && config.doublePressGapMs >= 0, "durations cannot be negative")
        precondition(config.longPressMs > config.debounceMs, "a long press must outlast the debounce window")
        if let chord = config.chord {
            precondition(chord.first != chord.second, "a chord needs two different buttons")
            precondition((0..<buttonCount).contains(chord.first) && (0..<buttonCount).contains(chord.second), "chord button out of range")
        }
        self.config = config
        self.buttonCount = buttonCount
        buttons = FixedArray(capacity: buttonCount)
        for _ in 0..<buttonCount { buttons.append(Button()) }
    }

    /// Double press is enabled on every button at start. Disabling it makes
    /// that button's short press report at release, without waiting.
    public mutating func setDoublePress(enabled: Bool, button: Int) {
        checkButton(button)
        buttons[button].doublePressEnabled = enabled
    }

    /// The debounced level of `button`.
    public func isPressed(_ button: Int) -> Bool {
        checkButton(button)
        return buttons[button].isPressed
    }

    /// When `advance` must next run; nil while no press, gap or bounce is
    /// being timed.
    public var nextDeadline: Instant? { earliestTimer()?.at }

    /// A raw edge from the line of `button`: `pressed` is its new level.
    /// Timers due up to `at` fire first, exactly as if the loop had called
    /// `advance(now: at)` before reading the edge.
    public mutating func edge(button: Int, pressed: Bool, at: Instant, into events: inout RingBuffer<GestureEvent>) {
        checkButton(button)
        advance(now: at, into: &events)
        let at = latest
        buttons[button].rawPressed = pressed
        let state = buttons[button]
        if pressed == state.isPressed {
            counters.edgesIgnored &+= 1
            return
        }
        // Inclusive: a reversal exactly at the window's close is a bounce;
        // the settle timer 1 ms later accepts it if the line stays there.
        if let last = state.lastAcceptedAt, at.ms(since: last) <= config.debounceMs {
            counters.edgesIgnored &+= 1
            return
        }
        accept(button, pressed: pressed, at: at, into: &events)
    }

    /// Fires every timer due by `now`, in time order.
    public mutating func advance(now: Instant, into events: inout RingBuffer<GestureEvent>) {
        let now = observe(now)
        // Each firing retires its timer; only a settle can start another (a
        // press's long timer, later in time), so this ends within a few
        // rounds per button however far `now` jumped.
        while let (timer, at) = earliestTimer(), at <= now {
            fire(timer, at: at, into: &events)
        }
    }

    // MARK: Internals

    private func checkButton(_ button: Int) {
        precondition(button >= 0 && button < buttonCount, "button index out of range")
    }

    private mutating func observe(_ now: Instant) -> Instant {
        if now > latest { latest = now }
        return latest
    }

    private func earliestTimer() -> (timer: Timer, at: Instant)? {
        var best: (timer: Timer, at: Instant)? = nil
        func consider(_ timer: Timer, _ at: Instant) {
            if let b = best, b.at < at || (b.at == at && b.timer.rank <= timer.rank) { return }
            best = (timer, at)
        }
        if let chordSince { consider(.chord, chordSince.advanced(byMs: config.longPressMs)) }
        for i in 0..<buttonCount {
            let state = buttons[i]
            switch state.phase {
            case .held(let since, _): consider(.long(button: i), since.advanced(byMs: config.longPressMs))
            case .awaitingSecond(let releasedAt): consider(.gapExpired(button: i), releasedAt.advanced(byMs: config.doublePressGapMs + 1))
            case .idle, .silent: break
            }
            if state.rawPressed != state.isPressed, let last = state.lastAcceptedAt {
                consider(.settle(button: i), last.advanced(byMs: config.debounceMs + 1))
            }
        }
        return best
    }

    private mutating func fire(_ timer: Timer, at: Instant, into events: inout RingBuffer<GestureEvent>) {
        switch timer {
        case .chord:
            chordSince = nil
            events.push(GestureEvent(.chordLong, at: at))
        case .long(let button):
            guard case .held(_, let isSecond) = buttons[button].phase else { preconditionFailure("long timer without a held press") }
            if isSecond { events.push(GestureEvent(.short(button: button), at: at)) }
            events.push(GestureEvent(.long(button: button), at: at))
            buttons[button].phase = .silent
        case .gapExpired(let button):
            buttons[button].phase = .idle
            events.push(GestureEvent(.short(button: button), at: at))
        case .settle(let button):
            accept(button, pressed: buttons[button].rawPressed, at: at, into: &events)
        }
    }

    /// A debounced edge. Pressed buttons are `held` or `silent`, released
    /// ones `idle` or `awaitingSecond`, and accepted edges alternate.
    private mutating func accept(_ button: Int, pressed: Bool, at: Instant, into events: inout RingBuffer<GestureEvent>) {
        var state = buttons[button]
        state.isPressed = pressed
        state.lastAcceptedAt = at
        let phase = state.phase
        if pressed {
            switch phase {
            case .idle: state.phase = .held(since: at, isSecond: false)
            case .awaitingSecond: state.phase = .held(since: at, isSecond: true)
            case .held, .silent: preconditionFailure("press accepted while pressed")
            }
            buttons[button] = state
            formChord(button, at: at)
            return
        }
        switch phase {
        case .held(_, isSecond: true):
            state.phase = .idle
            events.push(GestureEvent(.double(button: button), at: at))
        case .held(_, isSecond: false):
            if state.doublePressEnabled {
                state.phase = .awaitingSecond(releasedAt: at)
            } else {
                state.phase = .idle
                events.push(GestureEvent(.short(button: button), at: at))
            }
        case .silent:
            state.phase = .idle
            if chordSince != nil, config.chord?.partner(of: button) != nil { chordSince = nil }
        case .idle, .awaitingSecond:
            preconditionFailure("release accepted while released")
        }
        buttons[button] = state
    }

    /// Joins `button`, just pressed, and its chord partner into a chord when
    /// both are on fresh presses.
    private mutating func formChord(_ button: Int, at: Instant) {
        guard let partner = config.chord?.partner(of: button) else { return }
        guard case .held(_, isSecond: false) = buttons[button].phase,
            case .held(_, isSecond: false) = buttons[partner].phase
        else { return }
        buttons[button].phase = .silent
        buttons[partner].phase = .silent
        chordSince = at
    }
}
