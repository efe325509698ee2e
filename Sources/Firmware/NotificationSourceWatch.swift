// SPDX-License-Identifier: Apache-2.0
// The two clocks on a live link's Notification Source: the keep-alive
// probe after `keepAliveQuietMs` without traffic or a probe's answer, and
// the resubscription after `resubscribeQuietMs` without traffic (a probe's
// answer does not count: real iPhones can stop notifying while the Control
// Point still answers). Both run only while the link is live and no command
// is in flight; the owner says so in `deadline`/`advance`. Rationale:
// docs/decisions/keep-alive-and-resubscription.md.

import Bounded

public struct NotificationSourceWatch: Equatable, Sendable {
    public enum Due: Equatable, Sendable {
        /// Subscribe again: Notification Source was silent too long.
        case resubscribe
        /// Send the keep-alive probe.
        case probe
    }

    public let keepAliveQuietMs: Int64
    public let resubscribeQuietMs: Int64
    /// Traffic or a keep-alive answer: what the probe waits for.
    public private(set) var lastSignOfLifeAt = Instant.zero
    /// Traffic only (or the subscription): what the resubscription waits for.
    public private(set) var lastTrafficAt = Instant.zero

    public init(keepAliveQuietMs: Int64, resubscribeQuietMs: Int64) {
        self.keepAliveQuietMs = keepAliveQuietMs
        self.resubscribeQuietMs = resubscribeQuietMs
    }

    /// Subscribed, or a Notification Source notification arrived.
    public mutating func traffic(now: Instant) {
        lastSignOfLifeAt = now
        lastTrafficAt = now
    }

    /// The phone answered the probe as ANCS answers.
    public mutating func probeAnswered(now: Instant) { lastSignOfLifeAt = now }

    public var deadline: Instant? {
        earliest(lastSignOfLifeAt.advanced(byMs: keepAliveQuietMs), lastTrafficAt.advanced(byMs: resubscribeQuietMs))
    }

    /// What is due at `now`, the resubscription first. A probe counts as a
    /// sign of life for its own clock, so it is sent once per quiet period.
    public mutating func advance(now: Instant) -> Due? {
        if now >= lastTrafficAt.advanced(byMs: resubscribeQuietMs) { return .resubscribe }
        if now >= lastSignOfLifeAt.advanced(byMs: keepAliveQuietMs) {
            lastSignOfLifeAt = now
            return .probe
        }
        return nil
    }
}
