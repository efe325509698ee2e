// SPDX-License-Identifier: Apache-2.0
// A feedback pattern: a short list of on/off steps, played a number of times
// or until stopped, optionally holding a final level afterwards.
//
// A pattern is validated once, when it is built (from the policy's
// configuration), so the player never meets a bad one. It is a small inline
// value (no heap): at most `maxSteps` steps, each 1...60 000 ms, stored as
// 16-bit durations and an on/off bit mask. Intensity cannot be expressed
// (the lines are on/off): a stronger pattern has longer or denser on-steps.

/// One step of a pattern: a level held for a duration.
public struct PatternStep: Equatable, Sendable {
    public var level: OutputLevel
    public var durationMs: Int64

    public init(_ level: OutputLevel, durationMs: Int64) {
        self.level = level
        self.durationMs = durationMs
    }

    public static func on(_ durationMs: Int64) -> PatternStep { PatternStep(.on, durationMs: durationMs) }
    public static func off(_ durationMs: Int64) -> PatternStep { PatternStep(.off, durationMs: durationMs) }
}

/// How often a pattern's steps are played.
public enum PatternRepeat: Equatable, Sendable {
    /// The steps are played `count` times, then the pattern ends (or holds
    /// its final level).
    case times(Int)
    /// The steps repeat until the pattern is stopped or pre-empted.
    case untilStopped
}

/// Why a pattern cannot be built.
public enum PatternError: Error, Equatable, Sendable {
    case empty
    case tooManySteps(count: Int)
    /// Steps must last `Pattern.durationRangeMs` (zero would be a step that
    /// never shows; the upper bound keeps every pattern's timing in range).
    case durationOutOfRange(stepIndex: Int, durationMs: Int64)
    case repeatCountOutOfRange(Int)
    /// A pattern that never ends can never reach its final level.
    case finalLevelWithoutEnd
}

public struct Pattern: Sendable {
    public static let maxSteps = 16
    public static let durationRangeMs: ClosedRange<Int64> = 1...60_000
    public static let repeatCountRange: ClosedRange<Int> = 1...10_000

    public let stepCount: Int
    public let repeats: PatternRepeat
    /// nil: the pattern ends after its last repeat and the output falls back
    /// to what it pre-empted, or off. A level: after its last repeat the
    /// pattern holds that level until it is stopped (a notification LED that
    /// blinks three times, then stays lit until the notification goes).
    public let finalLevel: OutputLevel?
    /// The duration of one pass over the steps.
    public let cycleMs: Int64

    private var durationsMs: InlineArray<16, UInt16>
    /// Bit i set: step i is on.
    private var onMask: UInt16

    public init(_ steps: Span<PatternStep>, repeats: PatternRepeat, finalLevel: OutputLevel? = nil) throws(PatternError) {
        guard !steps.isEmpty else { throw .empty }
        guard steps.count <= Pattern.maxSteps else { throw .tooManySteps(count: steps.count) }
        switch repeats {
        case .times(let count):
            guard Pattern.repeatCountRange.contains(count) else { throw .repeatCountOutOfRange(count) }
        case .untilStopped:
            guard finalLevel == nil else { throw .finalLevelWithoutEnd }
        }
        var durationsMs = InlineArray<16, UInt16>(repeating: 0)
        var onMask: UInt16 = 0
        var cycleMs: Int64 = 0
        for i in steps.indices {
            let step = steps[i]
            guard Pattern.durationRangeMs.contains(step.durationMs) else {
                throw .durationOutOfRange(stepIndex: i, durationMs: step.durationMs)
            }
            durationsMs[i] = UInt16(step.durationMs)
            if step.level == .on { onMask |= 1 << UInt16(i) }
            cycleMs += step.durationMs
        }
        self.stepCount = steps.count
        self.repeats = repeats
        self.finalLevel = finalLevel
        self.cycleMs = cycleMs
        self.durationsMs = durationsMs
        self.onMask = onMask
    }

    /// For literals in the policy and in tests.
    public init(_ steps: [PatternStep], repeats: PatternRepeat, finalLevel: OutputLevel? = nil) throws(PatternError) {
        try self.init(steps.span, repeats: repeats, finalLevel: finalLevel)
    }

    public subscript(step index: Int) -> PatternStep {
        precondition(index >= 0 && index < stepCount, "pattern step out of range")
        return PatternStep(stepLevel(index), durationMs: Int64(durationsMs[index]))
    }

    /// How long the steps play in all (nil: until stopped). A final level is
    /// held after this.
    public var totalMs: Int64? {
        switch repeats {
        case .times(let count): cycleMs * Int64(count)
        case .untilStopped: nil
        }
    }

    /// True when the pattern leaves its output by itself once `totalMs` has
    /// passed (a finite pattern without a final level).
    var endsByItself: Bool { totalMs != nil && finalLevel == nil }

    private func stepLevel(_ index: Int) -> OutputLevel { onMask & (1 << UInt16(index)) != 0 ? .on : .off }

    /// The level `elapsedMs` after the start (0 ≤ elapsedMs). From `totalMs`
    /// on it is the final level (off for a pattern that has ended).
    func level(atElapsedMs elapsedMs: Int64) -> OutputLevel {
        if let totalMs, elapsedMs >= totalMs { return finalLevel ?? .off }
        return stepLevel(step(atElapsedMs: elapsedMs).index)
    }

    /// The step playing at `elapsedMs` and the elapsed time at which it ends.
    private func step(atElapsedMs elapsedMs: Int64) -> (index: Int, endMs: Int64) {
        let phaseMs = elapsedMs % cycleMs
        var endMs = elapsedMs - phaseMs
        for i in 0..<stepCount {
            endMs += Int64(durationsMs[i])
            if elapsedMs < endMs { return (i, endMs) }
        }
        preconditionFailure("the steps add up to the cycle")
    }

    /// The first elapsed time after `elapsedMs` at which the level changes or
    /// the steps run out; nil when nothing will ever change again. Steps
    /// that repeat the current level are looked through (at most one cycle),
    /// so a steady level does not cost wakeups.
    func nextEventMs(afterElapsedMs elapsedMs: Int64) -> Int64? {
        let totalMs = totalMs
        if let totalMs, elapsedMs >= totalMs { return nil }
        let (current, currentEndMs) = step(atElapsedMs: elapsedMs)
        let level = stepLevel(current)
        var boundaryMs = currentEndMs
        var change: Int64? = nil
        for k in 1..<stepCount {
            let next = (current + k) % stepCount
            if stepLevel(next) != level {
                change = boundaryMs
                break
            }
            boundaryMs += Int64(durationsMs[next])
        }
        guard let totalMs else { return change }
        return min(change ?? totalMs, totalMs)
    }
}
