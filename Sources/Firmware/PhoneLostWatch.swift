// "Phone left behind": the bonded phone's link dropped and it did not come
// back within the policy's `phone-lost-ms`. Reported once when that time
// runs out, and once more ("back") when the phone connects again. A value
// type with `deadline`/`advance`, fed by the core.
// - Which links count: one to the phone the wearable knows (a bonded phone
//   on Bluetooth: the controller says so; on the UNIX link any phone that
//   once subscribed, since the simulated phone keeps its bond).
// - Not counted: a link ended while pairing mode is on (the wearer is
//   pairing a phone), or at shutdown, or a stranger's link (a phone
//   without a bond, turned away).

import Bounded

struct PhoneLostWatch: Equatable {
    let timeoutMs: Int64
    /// The link up now is the known phone's.
    private(set) var linkIsPhone = false
    /// Declared lost; "back" is reported when it returns.
    private(set) var isLost = false
    /// When it is declared lost unless it comes back.
    private(set) var deadline: Instant? = nil

    init(timeoutMs: Int64) { self.timeoutMs = timeoutMs }

    /// The link up now is the known phone's (bonded, or it subscribed).
    /// True when it had been declared lost: it is back.
    mutating func phoneConnected() -> Bool {
        linkIsPhone = true
        deadline = nil
        defer { isLost = false }
        return isLost
    }

    /// The phone on the link up now became known (it subscribed).
    mutating func markPhone() { linkIsPhone = true }

    /// The link went down. `excused`: pairing mode or shutdown.
    mutating func linkEnded(now: Instant, excused: Bool) {
        defer { linkIsPhone = false }
        guard linkIsPhone, !isLost, !excused, timeoutMs > 0 else { return }
        deadline = now.advanced(byMs: timeoutMs)
    }

    /// Stops waiting (pairing mode opened, shutdown).
    mutating func cancel() { deadline = nil }

    /// True once, when the phone stayed away past the timeout.
    mutating func advance(now: Instant) -> Bool {
        guard let due = deadline, now >= due else { return false }
        deadline = nil
        isLost = true
        return true
    }
}
