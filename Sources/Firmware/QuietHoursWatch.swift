// SPDX-License-Identifier: Apache-2.0
// Whether quiet hours are on, by the phone's clock (CTS), and when that
// next changes. The policy's `quiet` lines are daily windows of the
// phone's local time; the wearable has no clock of its own, so while the
// phone's time is unknown quiet hours do not apply and the events say so.
// A value type with `deadline`/`update`: the core asks it after each input
// and at its deadline, which is the next window edge (never a periodic
// tick). Which alerts a window lets through is the policy's
// (`PolicyConfig.quietAllows`), asked by AlertPolicy per alert.

import Bounded
import CTS
import Config

/// Quiet hours now, as the events report them.
public enum QuietHoursState: Equatable, Sendable {
    /// Quiet hours are configured but the phone's time is unknown: they do
    /// not apply.
    case timeUnknown
    case on
    case off
}

struct QuietHoursWatch: Equatable {
    typealias State = QuietHoursState

    /// The state last reported; nil before the first report.
    private(set) var reported: State? = nil
    /// When the state may change next (a window's start or end).
    private(set) var deadline: Instant? = nil

    /// The state at `now`, when it differs from the one last reported
    /// (which it becomes); nil when unchanged or no quiet lines exist.
    mutating func update(policy: PolicyConfig, clock: PhoneClock, now: Instant) -> State? {
        guard !policy.quietHours.isEmpty else { return nil }
        let state: State
        if let local = clock.local(at: now) {
            let minute = local.minuteOfDay
            state = policy.quietHoursAt(minuteOfDay: minute) == nil ? .off : .on
            deadline = now.advanced(byMs: Self.msToNextEdge(policy.quietHours, minute: minute, second: local.second))
        } else {
            state = .timeUnknown
            deadline = nil
        }
        guard state != reported else { return nil }
        reported = state
        return state
    }

    /// Milliseconds from `minute:second` of the day to the next start or
    /// end of any window (at most a day).
    static func msToNextEdge(_ windows: [QuietHours], minute: Int, second: Int) -> Int64 {
        func ahead(_ edge: Int) -> Int {
            let minutes = (edge - minute + 1_440) % 1_440
            return minutes == 0 ? 1_440 : minutes
        }
        var minutes = 1_440
        for i in 0..<windows.count {
            minutes = min(minutes, ahead(windows[i].window.startMinute), ahead(windows[i].window.endMinute))
        }
        return Int64(minutes * 60 - second) * 1_000
    }
}
