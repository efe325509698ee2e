// SPDX-License-Identifier: Apache-2.0
// The phone's clock as a Current Time Service server (CTS v1.1; docs/cts.md):
// its local time and UTC offset, what Current Time (0x2A2B) and Local Time
// Information (0x2A0F) read, and the Current Time notification a change
// owes the wearable.
//
// The phone's local time starts at 2026-12-01T12:00:00, UTC+00:00, when the
// phone starts (`start`, its first input) and runs on with the monotonic
// clock, so a later read gives a later time (fractions of a second
// included, in 1/256 s). `time` (a scenario line) sets it, as the user does
// in Settings: the time runs on from the new value, and if the wearable has
// Current Time notifications on, one is owed with adjust reason Manual Time
// Update, plus Change of Time Zone when the offset changed. The offset is
// sent as the time zone with DST 0 (the phone does not say how much of it is
// summer time). Running on is never notified, as the specification has it.

import ATT
import Bounded
import CTS

struct PhoneClockServer {
    static let startTime = CivilDateTime(year: 2026, month: 12, day: 1, hour: 12, minute: 0, second: 0)!

    /// Local milliseconds since 1970 at `anchor`.
    private var localMsAtAnchor = startTime.secondsSinceEpoch * 1_000
    /// Nil until the phone's first input.
    private var anchor: Instant? = nil
    /// Local time minus UTC, in minutes (15-minute steps).
    private(set) var utcOffsetMin = 0
    /// The reason of the Current Time notification owed, if one is.
    private var owed: AdjustReason? = nil

    /// The phone started: its clock begins now (later calls do nothing).
    mutating func start(at now: Instant) {
        if anchor == nil { anchor = now }
    }

    private func localMs(at now: Instant) -> Int64 {
        localMsAtAnchor + max(0, now.ms(since: anchor ?? now))
    }

    /// Current Time at `now`, with `reason`.
    func currentTime(at now: Instant, reason: AdjustReason = []) -> CurrentTime {
        let ms = localMs(at: now)
        let seconds = ms >= 0 ? ms / 1_000 : (ms - 999) / 1_000
        let fraction = ms - seconds * 1_000
        return CurrentTime(local: CivilDateTime(secondsSinceEpoch: seconds), fractions256: UInt8(fraction * 256 / 1_000), adjustReason: reason)
    }

    var localTimeInformation: LocalTimeInformation { LocalTimeInformation(timeZoneMin: utcOffsetMin, dstMin: 0) }

    /// `time`: the user sets the local time (and the zone, when given). A
    /// notification is owed when the wearable has them on (`notify`).
    mutating func set(_ local: CivilDateTime, utcOffsetMin newOffset: Int?, now: Instant, notify: Bool) {
        var reason = AdjustReason.manualTimeUpdate
        if let newOffset, newOffset != utcOffsetMin {
            reason.insert(.timeZoneChange)
            utcOffsetMin = newOffset
        }
        localMsAtAnchor = local.secondsSinceEpoch * 1_000
        anchor = now
        owed = notify ? reason : nil
    }

    /// A new link, or notifications turned off: nothing is owed.
    mutating func dropOwed() { owed = nil }

    /// The Current Time notification owed, if any, written into `out`.
    mutating func pop(into out: inout ByteBuffer, now: Instant, subscribed: Bool, outputs: inout PhoneOutputs) -> Bool {
        guard let reason = owed else { return false }
        owed = nil
        guard subscribed else { return false }
        let time = currentTime(at: now, reason: reason)
        out.removeAll()
        out.append(ATTOpcode.handleValueNotification)
        out.appendLE16(PhoneDatabase.currentTimeValue)
        out.append(contentsOf: time.encoded().span)
        outputs.emit(.currentTimeSent(time))
        return true
    }
}
