// SPDX-License-Identifier: Apache-2.0
// Current Time Service, client side, sans-IO: the phone is the wearable's
// clock. A Pi has no real-time clock and a worn one no network; the
// iPhone offers CTS (docs/cts.md) with its local time and time zone. This
// module decodes the two characteristics, does the calendar arithmetic, and
// keeps the phone's local time as an offset from the monotonic clock: the
// system clock is never set (no CAP_SYS_TIME).
// - Current Time (0x2A2B), 10 bytes: year (uint16 LE), month, day, hours,
//   minutes, seconds, day of week (1 Monday ... 7 Sunday, 0 unknown),
//   fractions of a second (1/256), adjust reason (bit 0 manual update,
//   bit 1 external reference, bit 2 time zone change, bit 3 DST change).
//   It is the phone's local time. Readable and notified.
// - Local Time Information (0x2A0F), 2 bytes: time zone (sint8, 15-minute
//   steps, -48...56; -128 unknown), DST offset (uint8: 0 standard, 2 +30
//   min, 4 +60 min, 8 +120 min; 255 unknown).

import Bounded

public enum CTSUUID {
    public static let service: UInt16 = 0x1805
    public static let currentTime: UInt16 = 0x2A2B
    public static let localTimeInformation: UInt16 = 0x2A0F
}

/// Why a CTS value was not taken.
public enum CTSError: Error, Equatable, Sendable {
    case wrongLength(Int)
    /// A date or time field outside its range, or "unknown" (0) where the
    /// wearable needs a value.
    case fieldOutOfRange
    case unknownTimeZone
}

/// A date and time without a zone, to the second (proleptic Gregorian).
public struct CivilDateTime: Equatable, Sendable {
    public var year: Int
    public var month: Int
    public var day: Int
    public var hour: Int
    public var minute: Int
    public var second: Int

    /// nil when a field is out of range (CTS's 1582...9999 years).
    public init?(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        guard (1582...9999).contains(year), (1...12).contains(month), (1...Self.daysIn(month, year)).contains(day),
            (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second)
        else { return nil }
        (self.year, self.month, self.day, self.hour, self.minute, self.second) = (year, month, day, hour, minute, second)
    }

    /// From seconds since 1970-01-01T00:00:00 (of the same zone).
    public init(secondsSinceEpoch seconds: Int64) {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = Int(seconds - days * 86_400)
        // Days to civil (after Howard Hinnant's algorithm).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        year = Int(yoe + era * 400 + (m <= 2 ? 1 : 0))
        month = Int(m)
        day = Int(d)
        hour = secondOfDay / 3_600
        minute = secondOfDay / 60 % 60
        second = secondOfDay % 60
    }

    public var secondsSinceEpoch: Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        return days * 86_400 + Int64(hour * 3_600 + minute * 60 + second)
    }

    /// Minutes since midnight.
    public var minuteOfDay: Int { hour * 60 + minute }

    /// CTS's day of week: 1 Monday ... 7 Sunday (1970-01-01 was a Thursday).
    public var dayOfWeek: Int {
        let seconds = secondsSinceEpoch
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        return Int(((days % 7) + 7 + 3) % 7) + 1
    }

    static func daysIn(_ month: Int, _ year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}

/// Current Time's adjust reason bits.
public struct AdjustReason: OptionSet, Equatable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let manualTimeUpdate = AdjustReason(rawValue: 1 << 0)
    public static let externalReferenceTimeUpdate = AdjustReason(rawValue: 1 << 1)
    public static let timeZoneChange = AdjustReason(rawValue: 1 << 2)
    public static let dstChange = AdjustReason(rawValue: 1 << 3)
}

/// A Current Time value: the phone's local time.
public struct CurrentTime: Equatable, Sendable {
    public var local: CivilDateTime
    /// 1 Monday ... 7 Sunday; 0 unknown.
    public var dayOfWeek: Int
    public var fractions256: UInt8
    public var adjustReason: AdjustReason

    public static let byteCount = 10

    public static func decode(_ value: Span<UInt8>) throws(CTSError) -> CurrentTime {
        guard value.count >= byteCount else { throw .wrongLength(value.count) }
        let year = Int(value[0]) | Int(value[1]) << 8
        guard let local = CivilDateTime(
            year: year, month: Int(value[2]), day: Int(value[3]), hour: Int(value[4]), minute: Int(value[5]), second: Int(value[6]))
        else { throw .fieldOutOfRange }
        guard value[7] <= 7 else { throw .fieldOutOfRange }
        return CurrentTime(local: local, dayOfWeek: Int(value[7]), fractions256: value[8], adjustReason: AdjustReason(rawValue: value[9]))
    }

    public init(local: CivilDateTime, dayOfWeek: Int, fractions256: UInt8, adjustReason: AdjustReason) {
        (self.local, self.dayOfWeek, self.fractions256, self.adjustReason) = (local, dayOfWeek, fractions256, adjustReason)
    }

    /// The phone's side: `local` with its day of week.
    public init(local: CivilDateTime, fractions256: UInt8 = 0, adjustReason: AdjustReason = []) {
        self.init(local: local, dayOfWeek: local.dayOfWeek, fractions256: fractions256, adjustReason: adjustReason)
    }

    /// The 10 bytes on the wire (what `decode` reads).
    public func encoded() -> InlineBytes<10> {
        var out = InlineBytes<10>()
        out.append(UInt8(truncatingIfNeeded: local.year))
        out.append(UInt8(truncatingIfNeeded: local.year >> 8))
        out.append(UInt8(local.month))
        out.append(UInt8(local.day))
        out.append(UInt8(local.hour))
        out.append(UInt8(local.minute))
        out.append(UInt8(local.second))
        out.append(UInt8(truncatingIfNeeded: dayOfWeek))
        out.append(fractions256)
        out.append(adjustReason.rawValue)
        return out
    }
}

/// Local Time Information: the zone's offset from UTC, DST included.
public struct LocalTimeInformation: Equatable, Sendable {
    /// Standard offset from UTC in minutes (15-minute steps).
    public var timeZoneMin: Int
    /// DST offset in minutes; nil when the phone says unknown.
    public var dstMin: Int?

    /// Local time minus UTC, in minutes.
    public var utcOffsetMin: Int { timeZoneMin + (dstMin ?? 0) }

    public init(timeZoneMin: Int, dstMin: Int?) {
        self.timeZoneMin = timeZoneMin
        self.dstMin = dstMin
    }

    /// The 2 bytes on the wire. The zone is in 15-minute steps (a zone
    /// between steps is a programmer error); a DST offset CTS cannot say
    /// is sent as unknown (255).
    public func encoded() -> InlineBytes<2> {
        precondition(timeZoneMin % 15 == 0 && (-48...56).contains(timeZoneMin / 15), "CTS time zones are 15-minute steps, -12 h...+14 h")
        var out = InlineBytes<2>()
        out.append(UInt8(bitPattern: Int8(timeZoneMin / 15)))
        switch dstMin {
        case 0: out.append(0)
        case 30: out.append(2)
        case 60: out.append(4)
        case 120: out.append(8)
        default: out.append(255)
        }
        return out
    }

    public static func decode(_ value: Span<UInt8>) throws(CTSError) -> LocalTimeInformation {
        guard value.count == 2 else { throw .wrongLength(value.count) }
        let zone = Int(Int8(bitPattern: value[0]))
        guard zone != -128 else { throw .unknownTimeZone }
        guard (-48...56).contains(zone) else { throw .fieldOutOfRange }
        let dst: Int?
        switch value[1] {
        case 0: dst = 0
        case 2: dst = 30
        case 4: dst = 60
        case 8: dst = 120
        case 255: dst = nil
        default: throw .fieldOutOfRange
        }
        return LocalTimeInformation(timeZoneMin: zone * 15, dstMin: dst)
    }
}

/// The phone's local time kept against the monotonic clock: learned from a
/// Current Time value at an instant, it runs on with the monotonic clock
/// until the phone says otherwise (a notification after a manual change,
/// a time zone or DST change). Unknown until the first value.
public struct PhoneClock: Equatable, Sendable {
    /// Local seconds since the epoch at `learnedAt`.
    private var localSeconds: Int64? = nil
    private var learnedAt = Instant.zero
    public private(set) var utcOffsetMin: Int? = nil

    public init() {}

    public var isKnown: Bool { localSeconds != nil }

    /// A Current Time value read or notified at `now`. Returns how far the
    /// new value is from the local time this clock kept, in seconds (nil
    /// the first time): a phone clock change shows here.
    @discardableResult
    public mutating func learn(_ time: CurrentTime, at now: Instant) -> Int64? {
        let seconds = time.local.secondsSinceEpoch
        let jump = local(at: now).map { seconds - $0.secondsSinceEpoch }
        localSeconds = seconds
        learnedAt = now
        return jump
    }

    public mutating func learn(_ info: LocalTimeInformation) { utcOffsetMin = info.utcOffsetMin }

    /// The phone's local time at `now`; nil while unknown.
    public func local(at now: Instant) -> CivilDateTime? {
        guard let localSeconds else { return nil }
        let elapsedMs = now.ms(since: learnedAt)
        let elapsed = elapsedMs >= 0 ? elapsedMs / 1_000 : -((-elapsedMs + 999) / 1_000)
        return CivilDateTime(secondsSinceEpoch: localSeconds + elapsed)
    }

    /// Forgets the time (the phone went away for good; a new phone).
    public mutating func reset() { self = PhoneClock() }
}

extension CivilDateTime {
    /// Appends `YYYY-MM-DDTHH:MM:SS` (ISO 8601, no zone); false when `out`
    /// is too full (nothing is appended then).
    @discardableResult
    public func appendISO8601(to out: inout ByteBuffer) -> Bool {
        var text = InlineBytes<19>()
        func digits(_ value: Int, _ count: Int) {
            var divisor = 1
            for _ in 1..<count { divisor *= 10 }
            while divisor > 0 {
                text.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            }
        }
        digits(year, 4)
        text.append(UInt8(ascii: "-"))
        digits(month, 2)
        text.append(UInt8(ascii: "-"))
        digits(day, 2)
        text.append(UInt8(ascii: "T"))
        digits(hour, 2)
        text.append(UInt8(ascii: ":"))
        digits(minute, 2)
        text.append(UInt8(ascii: ":"))
        digits(second, 2)
        return out.append(contentsOf: text.span)
    }
}
