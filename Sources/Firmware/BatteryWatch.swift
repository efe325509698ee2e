// SPDX-License-Identifier: Apache-2.0
// The wearable's battery over time, sans-IO: a reading in at each poll
// (the runner reads the platform when `nextPollAt` comes: every
// `battery-poll-s`, 60 s by default, and at once at start), what changed
// out: the level or status to report, and the low/critical alarm to play.
//
// - A level is reported when its whole percent or its status changes (the
//   first reading included); a supply that stops reading is reported gone
//   once, never as a made-up level.
// - battery-low plays once per discharge at `PolicyConfig.batteryLowPercent`
//   (15%), battery-critical at `batteryCriticalPercent` (5%; it replaces
//   the low alarm when the level falls past both between two polls). Each
//   is armed again by charging (status Charging or Full) or by the level
//   climbing 5 points above its threshold (a gauge that never says
//   Charging), so a level wobbling around 15% does not buzz twice.
// - `isLow` (at or below the low level, not charging) is the status at a
//   glance's battery-low.
// Without a battery in the board (`battery none`) nothing is polled.

import Bounded
import Config
import Platform

/// What the events stream says of the battery.
public enum BatteryEvent: Equatable, Sendable {
    /// The first reading, and each change of the whole percent or status.
    case level(percent: Int, status: BatteryStatus, estimated: Bool)
    /// The battery-low feedback played (once per discharge).
    case low(percent: Int)
    /// The battery-critical feedback played.
    case critical(percent: Int)
    /// The supply stopped reading: no level is served any more.
    case gone
}

public struct BatteryWatch: Sendable {
    public static let rearmMarginPercent = 5
    public let pollMs: Int64
    /// When the runner reads the battery next; nil: the board has none.
    public private(set) var nextPollAt: Instant?
    /// The last reading reported (nil: none, or gone).
    public private(set) var last: BatteryReading? = nil
    private var lowArmed = true
    private var criticalArmed = true

    /// `pollMs`: nil, the board's `battery-poll-s`.
    public init(board: BoardConfig, pollMs: Int64? = nil) {
        self.pollMs = pollMs ?? board.batteryPollS * 1_000
        if case .none = board.battery { nextPollAt = nil } else { nextPollAt = .zero }
    }

    /// What one poll brought: a report and an alarm, each maybe.
    public struct Outcome: Equatable, Sendable {
        public var report: BatteryEvent? = nil
        public var alarm: BatteryEvent? = nil
    }

    public mutating func update(_ reading: BatteryReading?, now: Instant) -> Outcome {
        guard nextPollAt != nil else { return Outcome() }
        nextPollAt = now.advanced(byMs: pollMs)
        var outcome = Outcome()
        guard let reading else {
            if last != nil { outcome.report = .gone }
            last = nil
            return outcome
        }
        if last == nil || last!.percent != reading.percent || last!.status != reading.status || last!.estimated != reading.estimated {
            outcome.report = .level(percent: reading.percent, status: reading.status, estimated: reading.estimated)
        }
        last = reading
        let charging = Self.charging(reading.status)
        if charging || reading.percent >= PolicyConfig.batteryLowPercent + Self.rearmMarginPercent { lowArmed = true }
        if charging || reading.percent >= PolicyConfig.batteryCriticalPercent + Self.rearmMarginPercent { criticalArmed = true }
        guard !charging else { return outcome }
        if reading.percent <= PolicyConfig.batteryCriticalPercent, criticalArmed {
            criticalArmed = false
            lowArmed = false
            outcome.alarm = .critical(percent: reading.percent)
        } else if reading.percent <= PolicyConfig.batteryLowPercent, lowArmed {
            lowArmed = false
            outcome.alarm = .low(percent: reading.percent)
        }
        return outcome
    }

    /// At or below the low level and not charging.
    public var isLow: Bool {
        guard let last else { return false }
        return last.percent <= PolicyConfig.batteryLowPercent && !Self.charging(last.status)
    }

    static func charging(_ status: BatteryStatus) -> Bool { status == .charging || status == .full }
}
