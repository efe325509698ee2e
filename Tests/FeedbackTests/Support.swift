// SPDX-License-Identifier: Apache-2.0
import Bounded
import Feedback
import TestSupport

func t(_ ms: Int64) -> Instant { Instant(ms: ms) }

func pattern(_ steps: [PatternStep], _ repeats: PatternRepeat, finalLevel: OutputLevel? = nil) -> Pattern {
    do {
        return try Pattern(steps, repeats: repeats, finalLevel: finalLevel)
    } catch {
        preconditionFailure("test pattern is invalid: \(error)")
    }
}

/// A level change as seen on the lines: when, which output, which level.
struct Seen: Equatable, CustomStringConvertible {
    var ms: Int64
    var output: Int
    var level: OutputLevel

    init(_ ms: Int64, _ output: Int, _ level: OutputLevel) {
        self.ms = ms
        self.output = output
        self.level = level
    }

    var description: String { "\(ms)ms #\(output) \(level)" }
}

/// A player on a virtual clock, driven the way the firmware loop drives it.
struct PlayerRig: ~Copyable {
    var player: PatternPlayer
    var changes: RingBuffer<OutputChange>

    init(outputs: Int = 2, patternsPerOutput: Int = 4, ringCapacity: Int = 8) {
        player = PatternPlayer(outputCount: outputs, patternsPerOutput: patternsPerOutput)
        changes = RingBuffer(capacity: ringCapacity, policy: .refuseNewest)
    }

    /// Advances at `ms` and returns the changes it reported.
    mutating func advance(_ ms: Int64) -> [Seen] {
        player.advance(now: t(ms), into: &changes)
        var seen: [Seen] = []
        while let change = changes.popFirst() { seen.append(Seen(ms, change.output, change.level)) }
        return seen
    }

    /// Sleeps from deadline to deadline, as the loop does, until `endMs`
    /// (inclusive), recording every change and the instant it was reported.
    mutating func follow(until endMs: Int64) -> [Seen] {
        var seen: [Seen] = []
        while let deadline = player.nextDeadline, deadline.ms <= endMs {
            seen += advance(deadline.ms)
        }
        return seen
    }
}

/// Button gestures on a virtual clock.
struct GestureRig: ~Copyable {
    var gestures: ButtonGestures
    var events = RingBuffer<GestureEvent>(capacity: 16, policy: .refuseNewest)

    init(buttons: Int = 2, _ configure: (inout GestureConfig) -> Void = { _ in }) {
        var config = GestureConfig()
        configure(&config)
        gestures = ButtonGestures(buttonCount: buttons, config: config)
    }

    mutating func press(_ button: Int, at ms: Int64) -> [GestureEvent] {
        gestures.edge(button: button, pressed: true, at: t(ms), into: &events)
        return drain()
    }

    mutating func release(_ button: Int, at ms: Int64) -> [GestureEvent] {
        gestures.edge(button: button, pressed: false, at: t(ms), into: &events)
        return drain()
    }

    mutating func advance(_ ms: Int64) -> [GestureEvent] {
        gestures.advance(now: t(ms), into: &events)
        return drain()
    }

    /// Wakes at every deadline up to `endMs`, as the loop does.
    mutating func follow(until endMs: Int64) -> [GestureEvent] {
        var seen: [GestureEvent] = []
        while let deadline = gestures.nextDeadline, deadline.ms <= endMs {
            seen += advance(deadline.ms)
        }
        return seen
    }

    mutating func drain() -> [GestureEvent] {
        var seen: [GestureEvent] = []
        while let event = events.popFirst() { seen.append(event) }
        return seen
    }
}

func ev(_ gesture: Gesture, _ ms: Int64) -> GestureEvent { GestureEvent(gesture, at: t(ms)) }
