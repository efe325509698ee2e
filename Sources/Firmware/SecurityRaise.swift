// SPDX-License-Identifier: Apache-2.0
// At most one security raise at a time, and on a bonded link not before
// the phone has had its chance to encrypt by itself. A value type with the
// link's other timers' shape: inputs say what happened, `deadline` says
// when it next needs time, `advance` says what became due. Rationale:
// docs/decisions/link-procedures.md.

import Bounded

public struct SecurityRaise: Equatable, Sendable {
    public enum State: Equatable, Sendable {
        case idle
        /// Deferred on a bonded link: asked for at `at` unless the link is
        /// encrypted first.
        case due(at: Instant, attempt: Int)
        /// `raiseSecurity` was asked for and `securityChanged` has not answered.
        case outstanding
    }

    /// What a request for security comes to.
    public enum Decision: Equatable, Sendable {
        /// Ask the platform now, for this attempt.
        case askNow(attempt: Int)
        /// Waiting for the bonded phone to encrypt (`deadline` is set).
        case deferred
        /// A raise is outstanding or deferred already: not asked again.
        case coalesced
    }

    public let bondedEncryptionWaitMs: Int64
    public private(set) var state = State.idle

    public init(bondedEncryptionWaitMs: Int64) { self.bondedEncryptionWaitMs = bondedEncryptionWaitMs }

    public var isOutstanding: Bool { state == .outstanding }

    /// The bearer or discovery needs security. `bondedLinkUpAt`: when the
    /// link to a bonded phone that has not encrypted yet came up (nil: the
    /// phone is not bonded, or the link is encrypted).
    public mutating func request(attempt: Int, bondedLinkUpAt: Instant?, now: Instant) -> Decision {
        guard state == .idle else { return .coalesced }
        if let linkUpAt = bondedLinkUpAt {
            let until = linkUpAt.advanced(byMs: bondedEncryptionWaitMs)
            if now < until {
                state = .due(at: until, attempt: attempt)
                return .deferred
            }
        }
        state = .outstanding
        return .askNow(attempt: attempt)
    }

    /// The platform's answer (or an encryption change it saw). A deferred
    /// raise survives only a change to unencrypted.
    public mutating func securityChanged(encrypted: Bool) {
        if case .due = state, !encrypted { return }
        state = .idle
    }

    /// Nothing outstanding or deferred: a new link, or the bearer stopped
    /// waiting for security.
    public mutating func reset() { state = .idle }

    public var deadline: Instant? {
        if case .due(let at, _) = state { return at }
        return nil
    }

    /// The deferred raise, once due: ask the platform for this attempt.
    public mutating func advance(now: Instant) -> Int? {
        guard case .due(let at, let attempt) = state, now >= at else { return nil }
        state = .outstanding
        return attempt
    }
}
