// SPDX-License-Identifier: Apache-2.0
// The policy: named patterns, what each notification category plays on which
// output, rules that override it for an app, a title or a category, the
// unread indicator, what the buttons do (ANCS actions, silencing a ring,
// asking the phone's media player), quiet hours (daily windows of the phone's local time
// in which only some notifications alert), how long the phone may be gone
// before the wearer is told it was left behind, and the feedback for the
// wearer's own actions. Everything refers to board outputs and policy
// patterns by index. Syntax: docs/config.md; parser: PolicyParser.swift.

import ANCS
import Bounded
import Feedback
import Platform

/// One output playing one pattern: indices into `BoardConfig.outputs` and
/// `PolicyConfig.patterns`.
public struct OutputPattern: Equatable, Sendable {
    public var output: Int
    public var pattern: Int

    public init(output: Int, pattern: Int) {
        self.output = output
        self.pattern = pattern
    }
}

public struct NamedPattern: Equatable, Sendable {
    public var name: String
    public var pattern: Pattern

    public init(name: String, pattern: Pattern) {
        self.name = name
        self.pattern = pattern
    }

    /// Same name (bytes) and the same steps, repeats and final level
    /// (`Pattern` itself does not compare).
    public static func == (a: NamedPattern, b: NamedPattern) -> Bool {
        guard a.name.utf8Equals(b.name), a.pattern.stepCount == b.pattern.stepCount, a.pattern.repeats == b.pattern.repeats,
            a.pattern.finalLevel == b.pattern.finalLevel
        else { return false }
        for i in 0..<a.pattern.stepCount where a.pattern[step: i] != b.pattern[step: i] { return false }
        return true
    }
}

/// What a notification category plays.
public struct Alert: Equatable, Sendable {
    public static let defaultPriority: UInt8 = 1

    public var outputs: [OutputPattern] {
        didSet { importantOutputs = Self.merge(outputs, important) }
    }
    /// For an Important notification: replaces the pattern on these outputs
    /// (outputs not listed keep `outputs`' pattern).
    public var important: [OutputPattern] {
        didSet { importantOutputs = Self.merge(outputs, important) }
    }
    /// Higher pre-empts lower on the same output (`PatternPlayer`).
    public var priority: UInt8
    /// The patterns play until the notification is removed (an incoming
    /// call rings until answered, declined or missed); otherwise they play
    /// out by themselves.
    public var untilRemoved: Bool
    /// `outputs` with `important`'s replacements applied (and its extra
    /// outputs added). Stored, not computed on each Important notification:
    /// building it allocated an array at every one, in the steady state.
    public private(set) var importantOutputs: [OutputPattern]

    public init(outputs: [OutputPattern], important: [OutputPattern] = [], priority: UInt8 = Alert.defaultPriority, untilRemoved: Bool = false) {
        self.outputs = outputs
        self.important = important
        self.priority = priority
        self.untilRemoved = untilRemoved
        importantOutputs = Self.merge(outputs, important)
    }

    private static func merge(_ outputs: [OutputPattern], _ important: [OutputPattern]) -> [OutputPattern] {
        var result = outputs
        for override in important {
            if let i = result.firstIndex(where: { $0.output == override.output }) {
                result[i] = override
            } else {
                result.append(override)
            }
        }
        return result
    }
}

/// Overrides the category's alert for notifications it matches. Rules are
/// tried in file order; the first match wins. Every criterion given must
/// match.
public struct Rule: Equatable, Sendable {
    /// The app identifier, exactly (`com.apple.MobileSMS`).
    public var app: String?
    /// Text the title must contain (case-sensitive, bytes).
    public var titleContains: String?
    public var category: CategoryID?
    /// Empty: the rule silences what it matches.
    public var outputs: [OutputPattern]
    /// nil: the category alert's priority.
    public var priority: UInt8?

    public init(app: String? = nil, titleContains: String? = nil, category: CategoryID? = nil, outputs: [OutputPattern], priority: UInt8? = nil) {
        self.app = app
        self.titleContains = titleContains
        self.category = category
        self.outputs = outputs
        self.priority = priority
    }
}

public enum ButtonAction: Equatable, Sendable {
    /// Perform the notification's positive action (accept a call).
    case positive
    /// Perform the negative action (decline, clear).
    case negative
    /// Stop the ringing call's lasting alert on the wrist; nothing is sent
    /// to the phone and the call stays the target of accept.
    case silence
    /// Ask the phone's media player (media-toggle, media-next,
    /// media-previous, volume-up, volume-down in the file).
    case media(MediaAction)
    case none
}

/// What a media button asks of the phone's player, in the policy's words;
/// the firmware sends each as the Apple Media Service remote command of the
/// same name (`RemoteCommandID`), so the policy needs no AMS.
public enum MediaAction: Equatable, Sendable {
    case togglePlayPause
    case nextTrack
    case previousTrack
    case volumeUp
    case volumeDown
}

/// A daily window in which only some notifications alert. It applies only
/// while the phone's local time is known (CTS): without it, none does.
public struct QuietHours: Equatable, Sendable {
    /// Local time, [start, end); may wrap midnight (22:30-07:00).
    public var window: DailyWindow
    /// Bit `CategoryID.rawValue` set: that category still alerts.
    public var allowedCategories: UInt16
    /// Important notifications still alert.
    public var allowsImportant: Bool

    /// Without `allow=`: only incoming calls.
    public static let defaultAllowedCategories: UInt16 = 1 << UInt16(CategoryID.incomingCall.rawValue)

    public init(window: DailyWindow, allowedCategories: UInt16, allowsImportant: Bool) {
        self.window = window
        self.allowedCategories = allowedCategories
        self.allowsImportant = allowsImportant
    }

    /// Whether a notification of `category` (Important or not) may alert
    /// during this window. Reserved categories count as Other.
    public func allows(_ category: CategoryID, important: Bool) -> Bool {
        if important && allowsImportant { return true }
        return allowedCategories & (1 << UInt16(category.effective.rawValue)) != 0
    }
}

/// An output held on while any notification of `categories` is present.
public struct UnreadIndicator: Equatable, Sendable {
    public var output: Int
    /// Bit `CategoryID.rawValue` set: that category counts.
    public var categories: UInt16

    public init(output: Int, categories: UInt16) {
        self.output = output
        self.categories = categories
    }

    public func counts(_ category: CategoryID) -> Bool { categories & (1 << UInt16(category.effective.rawValue)) != 0 }
}

/// The wearer's state at a glance: what a double press of accept plays
/// (`feedback status-…`) and systemd's STATUS= says. One state at a time,
/// the most pressing first: a settings error, then pairing mode, then a
/// low battery (charge it before anything else), then the phone's
/// connection.
public enum WearerStatus: Int, Equatable, Sendable {
    /// Connected and subscribed: notifications arrive.
    case connected = 0
    /// Connected, but the phone refuses notification sharing until its user
    /// allows it.
    case waitingPermission
    /// No phone connected (or one still being set up).
    case notConnected
    case pairing
    /// The board or policy file had an error; the shipped defaults run.
    case settingsError
    /// The battery is at or below the battery-low level and not charging.
    case batteryLow

    public static let all: [WearerStatus] = [.connected, .waitingPermission, .notConnected, .pairing, .settingsError, .batteryLow]

    /// The policy's name for its feedback, `feedback status-<keyword>`.
    public var keyword: StaticString {
        switch self {
        case .connected: "status-connected"
        case .waitingPermission: "status-waiting-permission"
        case .notConnected: "status-not-connected"
        case .pairing: "status-pairing"
        case .settingsError: "status-settings-error"
        case .batteryLow: "status-battery-low"
        }
    }

    /// Its words for systemd's STATUS= and the log.
    public var words: StaticString {
        switch self {
        case .connected: "connected, notifications on"
        case .waitingPermission: "connected, waiting for the phone's permission to share notifications"
        case .notConnected: "advertising, no phone connected"
        case .pairing: "pairing mode"
        case .settingsError: "settings error: the shipped defaults run"
        case .batteryLow: "battery low: charge the wearable"
        }
    }
}

public struct PolicyConfig: Equatable, Sendable {
    public static let maxPatterns = 64
    public static let maxRules = 32
    public static let maxQuietHours = 8

    public var patterns: [NamedPattern]
    /// `CategoryID.knownCount` entries by raw value; nil: use Other's.
    /// Other's (entry 0) is never nil: without an `alert Other` line it is
    /// an alert that plays nothing.
    public var alerts: [Alert?]
    public var rules: [Rule]
    public var unread: UnreadIndicator?
    /// Per board button.
    public var shortPress: [ButtonAction]
    public var longPress: [ButtonAction]
    /// Per board button, while an incoming call rings on the wrist; nil:
    /// as `shortPress`/`longPress`.
    public var ringingShortPress: [ButtonAction?]
    public var ringingLongPress: [ButtonAction?]
    /// How long a lasting alert (a ringing call) may play; past it the ring
    /// stops on the wrist and the notification stays. 0: no limit.
    public var ringLimitMs: Int64
    public static let defaultRingLimitMs: Int64 = 60_000
    public static let ringLimitRangeMs: ClosedRange<Int64> = 0...3_600_000
    /// In file order; at a given minute the first window containing it
    /// decides (`quietHoursAt`). At most `maxQuietHours`.
    public var quietHours: [QuietHours]
    /// How long the phone may be out of reach before `phoneLost` plays. 0:
    /// never.
    public var phoneLostMs: Int64
    public static let defaultPhoneLostMs: Int64 = 30_000
    public static let phoneLostRangeMs: ClosedRange<Int64> = 0...3_600_000
    /// Played once when the phone has been out of reach for `phoneLostMs`.
    public var phoneLost: [OutputPattern]
    /// Played once when the phone is back after `phoneLost` played.
    public var phoneBack: [OutputPattern]
    public var actionFailed: [OutputPattern]
    public var nothingToDo: [OutputPattern]
    public var pairing: [OutputPattern]
    /// While the phone refuses the subscription until the user allows
    /// notification sharing.
    public var waitingPermission: [OutputPattern]
    /// Played once at start when the board or policy file given could not
    /// be used and the shipped defaults run instead (`--fallback-policy`).
    public var settingsError: [OutputPattern]
    /// The status patterns a double press of accept plays, by
    /// `WearerStatus.rawValue` (`feedback status-…`; none: nothing plays).
    public var status: [[OutputPattern]] = [[OutputPattern]](repeating: [], count: WearerStatus.all.count)
    /// Played once per discharge when the battery falls to
    /// `batteryLowPercent` (`feedback battery-low`), and to
    /// `batteryCriticalPercent` (`feedback battery-critical`).
    public var batteryLow: [OutputPattern] = []
    public var batteryCritical: [OutputPattern] = []
    /// What each system notice plays, by index in `SystemNotice.all`
    /// (`feedback update-done`, `feedback update-failed`; built-in
    /// patterns when the policy has no line for one).
    public var notices: [[OutputPattern]] = [[OutputPattern]](repeating: [], count: SystemNotice.all.count)
    /// The outputs `notice` plays.
    public func feedback(for notice: SystemNotice) -> [OutputPattern] {
        notices[notice.rawValue]
    }
    public static let batteryLowPercent = 15
    public static let batteryCriticalPercent = 5
    /// A Modified notification plays its alert again.
    public var realertOnModified: Bool

    public init(
        patterns: [NamedPattern], alerts: [Alert?], rules: [Rule], unread: UnreadIndicator?, shortPress: [ButtonAction],
        longPress: [ButtonAction], actionFailed: [OutputPattern], nothingToDo: [OutputPattern],
        pairing: [OutputPattern], realertOnModified: Bool, waitingPermission: [OutputPattern] = [],
        settingsError: [OutputPattern] = [], ringingShortPress: [ButtonAction?] = [], ringingLongPress: [ButtonAction?] = [],
        ringLimitMs: Int64 = PolicyConfig.defaultRingLimitMs, quietHours: [QuietHours] = [],
        phoneLostMs: Int64 = PolicyConfig.defaultPhoneLostMs, phoneLost: [OutputPattern] = [], phoneBack: [OutputPattern] = []
    ) {
        precondition(alerts.count == CategoryID.knownCount, "one alert entry per known category")
        precondition(quietHours.count <= PolicyConfig.maxQuietHours, "at most maxQuietHours quiet windows")
        self.patterns = patterns
        self.alerts = alerts
        self.rules = rules
        self.unread = unread
        self.shortPress = shortPress
        self.longPress = longPress
        self.ringingShortPress = ringingShortPress
        self.ringingLongPress = ringingLongPress
        self.ringLimitMs = ringLimitMs
        self.quietHours = quietHours
        self.phoneLostMs = phoneLostMs
        self.phoneLost = phoneLost
        self.phoneBack = phoneBack
        self.actionFailed = actionFailed
        self.nothingToDo = nothingToDo
        self.pairing = pairing
        self.waitingPermission = waitingPermission
        self.settingsError = settingsError
        self.realertOnModified = realertOnModified
    }

    /// The alert for `category`: its own, else Other's. Reserved categories
    /// get Other's.
    public func alert(for category: CategoryID) -> Alert {
        alerts[Int(category.effective.rawValue)] ?? alerts[0] ?? Alert(outputs: [])
    }

    /// The quiet-hours line that applies at `minuteOfDay` (0...1439, the
    /// phone's local time): the index in `quietHours` of the first window
    /// containing it, or nil when none does.
    public func quietHoursAt(minuteOfDay: Int) -> Int? {
        precondition((0..<1_440).contains(minuteOfDay), "a minute of the day is 0...1439")
        return quietHours.firstIndex { $0.window.contains(minuteOfDay: minuteOfDay) }
    }

    /// Whether a notification may alert at `minuteOfDay`; nil (the phone's
    /// time unknown) or outside every window: always.
    public func quietAllows(_ category: CategoryID, important: Bool, minuteOfDay: Int?) -> Bool {
        guard let minuteOfDay, let i = quietHoursAt(minuteOfDay: minuteOfDay) else { return true }
        return quietHours[i].allows(category, important: important)
    }

    /// By the name's bytes (pattern names are ASCII, checked by `parse`).
    public func patternIndex(named name: String) -> Int? { patterns.firstIndex { $0.name.utf8Equals(name) } }

    /// The attributes the rules that could apply to `category` need
    /// fetched: AppIdentifier if one matches on app, Title if one matches on
    /// title.
    public func attributesNeeded(for category: CategoryID) -> NotificationAttributeSet {
        var set: NotificationAttributeSet = []
        for rule in rules where rule.category == nil || rule.category == category.effective {
            if rule.app != nil { set.insert(.appIdentifier) }
            if rule.titleContains != nil { set.insert(.title) }
        }
        return set
    }

    /// The policy file against `board`, or its first mistake.
    public static func parse(_ text: String, board: BoardConfig) throws(ConfigError) -> PolicyConfig {
        do throws(ConfigErrors) { return try parseReportingAll(text, board: board) } catch { throw error.first }
    }

    /// The policy file against `board`, or every mistake in it (up to
    /// `ConfigErrors.capacity`, in file order).
    public static func parseReportingAll(_ text: String, board: BoardConfig) throws(ConfigErrors) -> PolicyConfig {
        var errors = ConfigErrors()
        var parser = PolicyParser(board: board)
        let lines = Lexer.lines(text, errors: &errors)
        // Patterns first, so the other lines may use a pattern defined
        // further down.
        for line in lines where line.verb.matches("pattern") {
            do throws(ConfigError) { try parser.takePattern(line) } catch { errors.add(error) }
        }
        for line in lines where !line.verb.matches("pattern") {
            do throws(ConfigError) { try parser.take(line) } catch { errors.add(error) }
        }
        let policy = parser.finish(errors: &errors)
        guard errors.isEmpty else { throw errors }
        return policy
    }
}
