// SPDX-License-Identifier: Apache-2.0
// Plays patterns on N on/off outputs (LEDs, the vibration motor), several
// owners competing for each output by priority.
//
// Each output has a fixed number of pattern slots (`patternsPerOutput`). The
// pattern on top (highest priority; equal priority: the newest) drives the
// line; the others wait. Rules:
// - Pre-emption: what happens to a pattern pushed down was chosen when it
//   was started (`onPreempt`). `.resume` pauses it where it was; when it is
//   on top again (the higher one finished or was stopped) it resumes at
//   that phase, from the instant the higher one ended. Resume rather than
//   restart: a pattern interrupted often would otherwise replay its
//   beginning forever and never finish its repeats. `.end` ends it at once
//   and frees its slot.
// - A pattern started below a higher one waits (`.waiting`) and starts from
//   its beginning when it reaches the top; with `.end` it is not kept
//   (`.outranked`): it would be pre-empted at once.
// - One pattern per owner and output: playing again for the same owner
//   replaces its pattern (a Modified notification restarts its pattern
//   instead of stacking a copy). A notification's patterns are owned by
//   `.notification(UID)` (PatternOwner.swift), so `stop(owner:)` on Removed
//   ends its patterns everywhere.
// - Full: the weakest of the stored patterns and the newcomer goes. If that
//   is the newcomer it is refused (`.refusedFull`); otherwise the stored
//   pattern with the lowest priority (the oldest among equals) is evicted.
//   Both are counted.
//
// Timing: a running pattern keeps the (virtual) instant it started, and
// every step boundary is computed from it, so a late wakeup neither drifts
// nor replays: `advance` jumps to the level at `now`. A pattern that ended
// while we slept hands over at its exact end instant. Work per call is
// bounded by outputs × slots × steps whatever the clock did.
//
// Output: level changes come out of `advance` only, one per output at most
// and only when the level differs from the last one reported. `play`,
// `stop` and `stopAll` change state and make the output due at once
// (`nextDeadline` ≤ now), so the loop calls `advance` in the same turn. A
// change that does not fit in the caller's ring stays due and is reported
// by the next `advance` (counted in `changesDeferred`).

import Bounded

/// What happens to a pattern when a higher one takes its output.
public enum PreemptPolicy: Equatable, Sendable {
    /// Pause it; continue from the same phase when the output is free again.
    case resume
    /// End it.
    case end
}

public enum PlayOutcome: Equatable, Sendable {
    /// The pattern drives its output from now.
    case playing
    /// A higher pattern holds the output; this one starts when it is on top.
    case waiting
    /// A higher pattern holds the output and this one was started with
    /// `.end`: it was not kept.
    case outranked
    /// Every slot of the output holds a pattern of higher priority; nothing
    /// was stored (counted).
    case refusedFull
}

/// An output line must change to `level`.
public struct OutputChange: Equatable, Sendable {
    public var output: Int
    public var level: OutputLevel

    public init(output: Int, level: OutputLevel) {
        self.output = output
        self.level = level
    }
}

public struct PlayerCounters: Equatable, Sendable {
    /// Plays refused because the output's slots were full of stronger patterns.
    public var refusedFull: UInt64 = 0
    /// Stored patterns evicted to make room for a stronger newcomer (higher
    /// priority, or equal and newer).
    public var evicted: UInt64 = 0
    /// Level changes that did not fit in the caller's ring and were reported
    /// by a later `advance`.
    public var changesDeferred: UInt64 = 0

    public init() {}
}

public struct PatternPlayer: ~Copyable {
    struct Slot {
        enum Phase {
            /// On top; `startedAt` is the instant its elapsed time counts
            /// from (moved forward by the time it spent paused).
            case running(startedAt: Instant)
            case paused(elapsedMs: Int64)
        }

        /// Its priority, play order and owner are in `ranks` at the same
        /// index.
        var pattern: Pattern
        var onPreempt: PreemptPolicy
        var phase: Phase

        /// Elapsed time at `instant`, reduced to what fixes the phase: a
        /// finished pattern holding its final level stays at its end, an
        /// endless one keeps only its position in the cycle.
        func elapsedMs(at instant: Instant) -> Int64 {
            switch phase {
            case .paused(let elapsedMs):
                return elapsedMs
            case .running(let startedAt):
                let elapsedMs = instant.ms(since: startedAt)
                if let totalMs = pattern.totalMs { return min(elapsedMs, totalMs) }
                return elapsedMs % pattern.cycleMs
            }
        }
    }

    /// What ranks a slot and whose it is, kept beside `slots` (and only
    /// here) so the searches (top, weakest, an owner's) read 24 bytes per
    /// slot instead of copying the slot with its pattern. `sequence` is the
    /// play order, which decides between equal priorities (newest wins); 0:
    /// the slot is empty (play numbers start at 1).
    struct Rank {
        var priority: UInt8 = 0
        var sequence: UInt64 = 0
        var owner: PatternOwner = .feedback

        var isEmpty: Bool { sequence == 0 }

        func outranks(_ other: Rank) -> Bool {
            priority != other.priority ? priority > other.priority : sequence > other.sequence
        }
    }

    struct Output {
        /// The level last handed out through `advance`.
        var reported: OutputLevel = .off
        /// When `advance` next has something to do for this output.
        var deadline: Instant? = nil
        /// The slot on top (highest rank), kept by `put` and `clear`: every
        /// step reads it, only a change of the stored patterns moves it.
        var top: Int? = nil
    }

    public let outputCount: Int
    public let patternsPerOutput: Int
    /// `patternsPerOutput` slots per output, output after output.
    private var slots: FixedArray<Slot?>
    /// `slots`' ranks, index for index; written only through `put`.
    private var ranks: FixedArray<Rank>
    private var outputs: FixedArray<Output>
    private var sequence: UInt64 = 0
    /// The earliest output deadline, recomputed whenever an output's
    /// deadline changes (`play`, `stop`, `stopAll`, `advance`), so `advance`
    /// with nothing due and `nextDeadline` cost O(1): the core calls
    /// `advance` after every input and asks for the deadline every step.
    private var earliestDeadline: Instant? = nil
    /// The latest instant any call has given; an earlier one is taken as this.
    private var latest = Instant.zero
    public private(set) var counters = PlayerCounters()

    public init(outputCount: Int, patternsPerOutput: Int = 4) {
        precondition(outputCount > 0, "a player needs at least one output")
        precondition(patternsPerOutput > 0, "an output needs at least one pattern slot")
        self.outputCount = outputCount
        self.patternsPerOutput = patternsPerOutput
        slots = FixedArray(capacity: outputCount * patternsPerOutput)
        for _ in 0..<outputCount * patternsPerOutput { slots.append(nil) }
        ranks = FixedArray(capacity: outputCount * patternsPerOutput)
        for _ in 0..<outputCount * patternsPerOutput { ranks.append(Rank()) }
        outputs = FixedArray(capacity: outputCount)
        for _ in 0..<outputCount { outputs.append(Output()) }
    }

    /// The instant `advance` must next run; nil when no output has anything
    /// left to do (idle: no pattern plays, or every level is steady).
    public var nextDeadline: Instant? { earliestDeadline }

    private mutating func recomputeEarliestDeadline() {
        var deadline: Instant? = nil
        for o in 0..<outputCount { deadline = earliest(deadline, outputs[o].deadline) }
        earliestDeadline = deadline
    }

    /// The level last reported for `output` (what its line shows).
    public func level(of output: Int) -> OutputLevel {
        checkOutput(output)
        return outputs[output].reported
    }

    /// Patterns stored for `output`, playing or waiting.
    public func patternCount(output: Int) -> Int {
        checkOutput(output)
        var count = 0
        for i in slotRange(output) where !ranks[i].isEmpty { count += 1 }
        return count
    }

    /// Whether `owner` has a pattern stored on `output` (playing, waiting
    /// or paused; a finite pattern that has ended is no longer stored).
    public func holds(owner: PatternOwner, output: Int) -> Bool {
        checkOutput(output)
        for i in slotRange(output) where !ranks[i].isEmpty && ranks[i].owner == owner { return true }
        return false
    }

    // MARK: Commands

    /// Starts `pattern` on `output` for `owner`, replacing that owner's
    /// pattern on this output if it has one.
    @discardableResult
    public mutating func play(
        _ pattern: Pattern, output: Int, priority: UInt8, owner: PatternOwner, onPreempt: PreemptPolicy = .resume, now: Instant
    ) -> PlayOutcome {
        checkOutput(output)
        let now = observe(now)
        settle(output, now: now)
        var changed = false
        for i in slotRange(output) where !ranks[i].isEmpty && ranks[i].owner == owner {
            clear(at: i)
            changed = true
        }
        sequence &+= 1
        let newcomer = Slot(pattern: pattern, onPreempt: onPreempt, phase: .paused(elapsedMs: 0))
        let rank = Rank(priority: priority, sequence: sequence, owner: owner)
        let onTop = topIndex(output).map { rank.outranks(ranks[$0]) } ?? true
        let outcome: PlayOutcome
        if !onTop && onPreempt == .end {
            outcome = .outranked
        } else if let free = slotRange(output).first(where: { ranks[$0].isEmpty }) {
            put(newcomer, rank, at: free)
            outcome = onTop ? .playing : .waiting
            changed = true
        } else if let weakest = weakestIndex(output), rank.outranks(ranks[weakest]) {
            put(newcomer, rank, at: weakest)
            counters.evicted &+= 1
            outcome = onTop ? .playing : .waiting
            changed = true
        } else {
            counters.refusedFull &+= 1
            outcome = .refusedFull
        }
        if changed {
            reconcile(output, at: now)
            outputs[output].deadline = now
            recomputeEarliestDeadline()
        }
        return outcome
    }

    /// Stops every pattern of `owner` on every output; what they pre-empted
    /// resumes from `now`. Returns how many patterns were stopped.
    @discardableResult
    public mutating func stop(owner: PatternOwner, now: Instant) -> Int {
        stop(ownersWhere: { $0 == owner }, now: now)
    }

    /// Stops every pattern whose owner satisfies `predicate`, on every
    /// output; what they pre-empted resumes from `now`.
    @discardableResult
    public mutating func stop(ownersWhere predicate: (PatternOwner) -> Bool, now: Instant) -> Int {
        let now = observe(now)
        var stopped = 0
        for o in 0..<outputCount {
            guard slotRange(o).contains(where: { !ranks[$0].isEmpty && predicate(ranks[$0].owner) }) else { continue }
            settle(o, now: now)
            var stoppedHere = 0
            for i in slotRange(o) where !ranks[i].isEmpty && predicate(ranks[i].owner) {
                clear(at: i)
                stoppedHere += 1
            }
            if stoppedHere > 0 {
                reconcile(o, at: now)
                outputs[o].deadline = now
                recomputeEarliestDeadline()
                stopped += stoppedHere
            }
        }
        return stopped
    }

    /// Forgets every pattern; the next `advance` turns every line that is on
    /// off (shutdown, session end).
    public mutating func stopAll() {
        for i in 0..<slots.count { clear(at: i) }
        for o in 0..<outputCount {
            outputs[o].deadline = outputs[o].reported == .on ? latest : nil
        }
        recomputeEarliestDeadline()
    }

    /// Brings every due output to its level at `now` and appends the levels
    /// that changed to `changes`.
    public mutating func advance(now: Instant, into changes: inout RingBuffer<OutputChange>) {
        let now = observe(now)
        guard let due = earliestDeadline, due <= now else { return }
        defer { recomputeEarliestDeadline() }
        for o in 0..<outputCount {
            guard let deadline = outputs[o].deadline, deadline <= now else { continue }
            settle(o, now: now)
            let level = currentLevel(o, now: now)
            if level != outputs[o].reported {
                guard !changes.isFull else {
                    counters.changesDeferred &+= 1
                    continue
                }
                changes.push(OutputChange(output: o, level: level))
                outputs[o].reported = level
            }
            outputs[o].deadline = nextEvent(o, after: now)
        }
    }

    // MARK: Internals

    private func checkOutput(_ output: Int) {
        precondition(output >= 0 && output < outputCount, "output index out of range")
    }

    private mutating func observe(_ now: Instant) -> Instant {
        if now > latest { latest = now }
        return latest
    }

    private func slotRange(_ output: Int) -> Range<Int> {
        output * patternsPerOutput..<(output + 1) * patternsPerOutput
    }

    /// Stores `slot` and its rank at `i`.
    private mutating func put(_ slot: Slot, _ rank: Rank, at i: Int) {
        slots[i] = slot
        ranks[i] = rank
        let output = i / patternsPerOutput
        switch outputs[output].top {
        case nil: outputs[output].top = i
        case i?: outputs[output].top = findTop(output)
        case let top?: if rank.outranks(ranks[top]) { outputs[output].top = i }
        }
    }

    /// Empties slot `i`.
    private mutating func clear(at i: Int) {
        slots[i] = nil
        ranks[i] = Rank()
        let output = i / patternsPerOutput
        if outputs[output].top == i { outputs[output].top = findTop(output) }
    }

    private func topIndex(_ output: Int) -> Int? { outputs[output].top }

    private func findTop(_ output: Int) -> Int? {
        var top: Int? = nil
        for i in slotRange(output) {
            let rank = ranks[i]
            guard !rank.isEmpty else { continue }
            if let t = top, !rank.outranks(ranks[t]) { continue }
            top = i
        }
        return top
    }

    private func weakestIndex(_ output: Int) -> Int? {
        var weakest: Int? = nil
        for i in slotRange(output) {
            let rank = ranks[i]
            guard !rank.isEmpty else { continue }
            if let w = weakest, rank.outranks(ranks[w]) { continue }
            weakest = i
        }
        return weakest
    }

    /// Makes the top pattern the only one running, from `instant`: whatever
    /// else was running was pre-empted then.
    private mutating func reconcile(_ output: Int, at instant: Instant) {
        guard let top = topIndex(output) else { return }
        for i in slotRange(output) where i != top && !ranks[i].isEmpty {
            guard let running = slots[i].map({ if case .running = $0.phase { true } else { false } }), running else { continue }
            if slots[i]?.onPreempt == .end {
                clear(at: i)
            } else if let elapsedMs = slots[i]?.elapsedMs(at: instant) {
                slots[i]?.phase = .paused(elapsedMs: elapsedMs)
            }
        }
        if case .paused(let elapsedMs)? = slots[top]?.phase {
            slots[top]?.phase = .running(startedAt: instant.advanced(byMs: -elapsedMs))
        }
    }

    /// Removes the patterns on `output` that ended by `now`, each handing
    /// the output to the next at its exact end instant. At most one pass per
    /// slot, however far `now` has jumped.
    private mutating func settle(_ output: Int, now: Instant) {
        while let top = topIndex(output), case .running(let startedAt)? = slots[top]?.phase,
            slots[top]?.pattern.endsByItself == true, let totalMs = slots[top]?.pattern.totalMs
        {
            let endedAt = startedAt.advanced(byMs: totalMs)
            guard endedAt <= now else { return }
            clear(at: top)
            reconcile(output, at: endedAt)
        }
    }

    private func currentLevel(_ output: Int, now: Instant) -> OutputLevel {
        guard let top = topIndex(output), case .running(let startedAt)? = slots[top]?.phase else { return .off }
        return slots[top]?.pattern.level(atElapsedMs: now.ms(since: startedAt)) ?? .off
    }

    private func nextEvent(_ output: Int, after now: Instant) -> Instant? {
        guard let top = topIndex(output), case .running(let startedAt)? = slots[top]?.phase else { return nil }
        return slots[top]?.pattern.nextEventMs(afterElapsedMs: now.ms(since: startedAt)).map { startedAt.advanced(byMs: $0) }
    }
}
