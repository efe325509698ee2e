// SPDX-License-Identifier: Apache-2.0
// A span of the day on the wall clock (the policy's quiet hours). A time
// value like `Instant`, not part of the Current Time Service: the policy
// that holds one needs no protocol module, and the firmware asks it about
// the minute of the day that CTS's `PhoneClock` gives.

/// A daily window of local time, [start, end) in minutes since midnight;
/// it wraps past midnight when end < start (22:00-07:00).
public struct DailyWindow: Equatable, Sendable {
    public var startMinute: Int
    public var endMinute: Int

    /// nil when a bound is outside 0...1439 or the window is empty.
    public init?(startMinute: Int, endMinute: Int) {
        guard (0..<1_440).contains(startMinute), (0..<1_440).contains(endMinute), startMinute != endMinute else { return nil }
        self.startMinute = startMinute
        self.endMinute = endMinute
    }

    public func contains(minuteOfDay m: Int) -> Bool {
        startMinute < endMinute ? (startMinute <= m && m < endMinute) : (m >= startMinute || m < endMinute)
    }
}
