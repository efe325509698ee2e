// SPDX-License-Identifier: Apache-2.0
// A battery as the kernel's power-supply class describes it
// (Documentation/ABI/testing/sysfs-class-power): each supply is a directory
// /sys/class/power_supply/NAME whose `type` is `Battery` for a battery
// (`Mains`, `USB`… otherwise), with `capacity` (percent, 0...100),
// `status` (`Charging`, `Discharging`, `Not charging`, `Full`, `Unknown`)
// and, on most fuel gauges, `voltage_now` (microvolts). Every fuel-gauge
// driver (max17040 for the MAX17048 among them) exposes these. Sans-IO:
// the attribute files' bytes in, a reading out (read at start and at a
// slow poll, not per event, so arrays are fine here); PlatformLinux reads the
// files. Real formats: an integer and a newline (the kernel's sysfs_emit),
// or the bare integer; anything else is not a value. The parsers take
// spans (the runtime reads into fixed buffers); the array forms are for
// `doctor` and tests.

/// Which power supply is the wearable's battery (the board file's
/// `battery`).
public enum BatteryChoice: Equatable, Sendable {
    /// The first supply of type Battery, by name; none if there is none.
    case auto
    /// No battery: none is read or served.
    case none
    /// The supply of that name (/sys/class/power_supply/NAME).
    case named(String)
}

/// What the supply's `status` says.
public enum BatteryStatus: Equatable, Sendable {
    case charging, discharging, notCharging, full, unknown

    /// Its name in the events stream and `doctor`.
    public var name: StaticString {
        switch self {
        case .charging: "charging"
        case .discharging: "discharging"
        case .notCharging: "not-charging"
        case .full: "full"
        case .unknown: "unknown"
        }
    }
}

/// One reading of a battery.
public struct BatteryReading: Equatable, Sendable {
    /// 0...100.
    public var percent: Int
    /// `percent` was estimated from `voltage_now` (no `capacity`).
    public var estimated: Bool
    public var status: BatteryStatus
    public var voltageMicrovolts: Int64?

    public init(percent: Int, estimated: Bool, status: BatteryStatus, voltageMicrovolts: Int64?) {
        self.percent = percent
        self.estimated = estimated
        self.status = status
        self.voltageMicrovolts = voltageMicrovolts
    }
}

public enum PowerSupplyText {
    /// An integer attribute: an optional `-`, 1 to 18 digits, an optional
    /// newline; nil for anything else (an empty file, text, a second line).
    public static func integer(_ bytes: [UInt8]) -> Int64? { integer(bytes.span) }

    public static func integer(_ bytes: Span<UInt8>) -> Int64? {
        var end = bytes.count
        if end > 0, bytes[end - 1] == 0x0A { end -= 1 }
        var i = 0
        var negative = false
        if i < end, bytes[i] == 0x2D {
            negative = true
            i += 1
        }
        guard end - i >= 1, end - i <= 18 else { return nil }
        var value: Int64 = 0
        while i < end {
            let byte = bytes[i]
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            value = value * 10 + Int64(byte - 0x30)
            i += 1
        }
        return negative ? -value : value
    }

    /// Whether `type` says Battery.
    public static func isBattery(type bytes: [UInt8]) -> Bool { matches(bytes.span, "Battery") }
    public static func isBattery(type bytes: Span<UInt8>) -> Bool { matches(bytes, "Battery") }

    /// `status`; what it does not name is `.unknown`.
    public static func status(_ bytes: [UInt8]) -> BatteryStatus { status(bytes.span) }

    public static func status(_ bytes: Span<UInt8>) -> BatteryStatus {
        if matches(bytes, "Charging") { return .charging }
        if matches(bytes, "Discharging") { return .discharging }
        if matches(bytes, "Not charging") { return .notCharging }
        if matches(bytes, "Full") { return .full }
        return .unknown
    }

    /// A single-cell lithium battery's charge from its voltage at rest, in
    /// percent: a coarse table (a fuel gauge's `capacity` is better; this is
    /// for a supply that reports only `voltage_now`).
    /// (Inline arrays: no allocation at the poll.)
    public static func percent(microvolts: Int64) -> Int {
        let millivolts: InlineArray<11, Int64> = [3_300, 3_500, 3_600, 3_700, 3_750, 3_800, 3_850, 3_900, 4_000, 4_100, 4_200]
        let percents: InlineArray<11, Int64> = [0, 5, 10, 30, 45, 55, 65, 72, 85, 95, 100]
        let mv = microvolts / 1_000
        if mv <= millivolts[0] { return 0 }
        for k in 1..<millivolts.count where mv <= millivolts[k] {
            let (lowMv, highMv) = (millivolts[k - 1], millivolts[k])
            return Int(percents[k - 1] + (percents[k] - percents[k - 1]) * (mv - lowMv) / (highMv - lowMv))
        }
        return 100
    }

    /// A reading from a battery's files (nil: the file is absent):
    /// `capacity` when it is a value (clamped to 0...100), else an estimate
    /// from `voltage_now`; nil when neither is usable.
    public static func reading(capacity: [UInt8]?, status: [UInt8]?, voltage: [UInt8]?) -> BatteryReading? {
        reading(
            capacity: capacity.flatMap { integer($0) }, status: status.map { Self.status($0) },
            microvolts: voltage.flatMap { integer($0) })
    }

    /// The same from the files' parsed values (nil: absent or not a value).
    public static func reading(capacity: Int64?, status: BatteryStatus?, microvolts voltage: Int64?) -> BatteryReading? {
        let microvolts = voltage.flatMap { $0 > 0 ? $0 : nil }
        let state = status ?? .unknown
        if let percent = capacity {
            return BatteryReading(percent: Int(min(max(percent, 0), 100)), estimated: false, status: state, voltageMicrovolts: microvolts)
        }
        guard let microvolts else { return nil }
        return BatteryReading(percent: percent(microvolts: microvolts), estimated: true, status: state, voltageMicrovolts: microvolts)
    }

    /// The bytes are `word`, with or without a trailing newline.
    static func matches(_ bytes: Span<UInt8>, _ word: StaticString) -> Bool {
        var end = bytes.count
        if end > 0, bytes[end - 1] == 0x0A { end -= 1 }
        return word.withUTF8Buffer { w in
            guard w.count == end else { return false }
            for k in 0..<end where bytes[k] != w[k] { return false }
            return true
        }
    }
}
