// SPDX-License-Identifier: Apache-2.0
// "Phone left behind": the bonded phone's link dropped and it did not come
// back within the policy's `phone-lost-ms`. Reported once when that time
// runs out, and once more ("back") when the phone connects again. A value
// type with `deadline`/`advance`, fed by the core.
// - Which links count: one to the phone the wearable knows (a bonded phone
//   on Bluetooth: the controller says so; on the UNIX link any phone that
//   once subscribed, since the simulated phone keeps its bond).
// - Not counted: a link ended while pairing mode is on (the wearer is
//   pairing a phone), or at shutdown, or a stranger's link (a phone
//   without a bond, turned away), or a link the wearable ended itself
//   (`EndReason.endedByWearable`: its ATT timeout, a failed subscription,
//   its controller reset): the phone was in reach, and a bonded iPhone
//   reconnects by itself.
// - A shaky link buzzes once: each drop starts `phone-lost-ms` afresh, so a
//   phone that is back within it is never lost; and once a loss has
//   buzzed, a loss that begins before the phone has been back for
//   `cooldownMs` (5 minutes) is reported but does not buzz (`Verdict`).

import Bounded

struct PhoneLostWatch: Equatable {
    /// What `advance` found.
    enum Verdict: Equatable {
        /// The phone stayed away past the timeout; `buzz` false: the loss
        /// began within the cooldown of an earlier one (report it, quietly).
        case lost(buzz: Bool)
    }

    let timeoutMs: Int64
    let cooldownMs: Int64
    /// The link up now is the known phone's.
    private(set) var linkIsPhone = false
    /// Declared lost; "back" is reported when it returns.
    private(set) var isLost = false
    /// When it is declared lost unless it comes back.
    private(set) var deadline: Instant? = nil
    /// When the phone came back after its last loss (nil: never lost, or
    /// the loss was long enough ago to be forgotten).
    private var backAt: Instant? = nil
    /// The absence being timed began within the cooldown.
    private var quiet = false

    init(timeoutMs: Int64, cooldownMs: Int64) {
        self.timeoutMs = timeoutMs
        self.cooldownMs = cooldownMs
    }

    /// The link up now is the known phone's (bonded, or it subscribed).
    /// True when it had been declared lost: it is back.
    mutating func phoneConnected(now: Instant) -> Bool {
        linkIsPhone = true
        deadline = nil
        guard isLost else { return false }
        isLost = false
        backAt = now
        return true
    }

    /// The phone on the link up now became known (it subscribed).
    mutating func markPhone() { linkIsPhone = true }

    /// The link went down. `excused`: pairing mode, shutdown, or the
    /// wearable ended the link itself.
    mutating func linkEnded(now: Instant, excused: Bool) {
        defer { linkIsPhone = false }
        guard linkIsPhone, !isLost, !excused, timeoutMs > 0 else { return }
        deadline = now.advanced(byMs: timeoutMs)
        quiet = backAt.map { now.ms(since: $0) < cooldownMs } ?? false
    }

    /// Stops waiting (pairing mode opened, shutdown).
    mutating func cancel() { deadline = nil }

    /// The verdict, once, when the phone stayed away past the timeout.
    mutating func advance(now: Instant) -> Verdict? {
        guard let due = deadline, now >= due else { return nil }
        deadline = nil
        isLost = true
        return .lost(buzz: !quiet)
    }
}
