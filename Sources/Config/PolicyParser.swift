// SPDX-License-Identifier: Apache-2.0
// The policy file parser. Lines are taken one at a time (patterns first, so
// any line may use a pattern defined further down), each throwing its own
// mistake (the caller collects them and goes on); checks that need the
// whole file (a pattern that never ends where nothing would stop it) run in
// `finish`, collect every mistake and still point at the line to change. Keywords and names are
// matched as bytes (`Text`, Lexer.swift), times of day read from digits
// (Words.dailyWindow); Strings are made for what the policy keeps (pattern
// names, a rule's app and title) and for messages.

import ANCS
import Bounded
import Feedback
import Platform

struct PolicyParser {
    let board: BoardConfig
    var patterns: [NamedPattern] = []
    var patternLines: [Int] = []
    var alerts = [Alert?](repeating: nil, count: CategoryID.knownCount)
    var alertLines = [Int](repeating: 0, count: CategoryID.knownCount)
    var importantLines = [Int](repeating: 0, count: CategoryID.knownCount)
    var rules: [Rule] = []
    var ruleLines: [Int] = []
    var unread: UnreadIndicator? = nil
    var unreadLine = 0
    var shortPress: [ButtonAction]
    var longPress: [ButtonAction]
    var ringingShortPress: [ButtonAction?]
    var ringingLongPress: [ButtonAction?]
    var buttonLines: [Int]
    var ringLimitMs = PolicyConfig.defaultRingLimitMs
    var ringLimitLine = 0
    var quietHours: [QuietHours] = []
    var quietLines: [Int] = []
    var phoneLostMs = PolicyConfig.defaultPhoneLostMs
    var phoneLostLine = 0
    var actionFailed: [OutputPattern] = []
    var nothingToDo: [OutputPattern] = []
    var pairing: [OutputPattern] = []
    var waitingPermission: [OutputPattern] = []
    var settingsError: [OutputPattern] = []
    var phoneLost: [OutputPattern] = []
    var phoneBack: [OutputPattern] = []
    /// By `WearerStatus.rawValue`.
    var status = [[OutputPattern]](repeating: [], count: WearerStatus.all.count)
    /// action-failed, nothing-to-do, pairing, waiting-permission,
    /// settings-error, phone-lost, phone-back, then the status patterns
    /// (`statusFeedbackBase` + `WearerStatus.rawValue`), then battery-low
    /// and battery-critical (`batteryFeedbackBase` + 0, 1), then the
    /// system's notices (`noticeFeedbackBase` + index in `SystemNotice.all`).
    var feedbackLines = [Int](repeating: 0, count: 7 + WearerStatus.all.count + 2 + SystemNotice.all.count)
    static let statusFeedbackBase = 7
    static let batteryFeedbackBase = 7 + WearerStatus.all.count
    static let noticeFeedbackBase = batteryFeedbackBase + 2
    var batteryLow: [OutputPattern] = []
    var batteryCritical: [OutputPattern] = []
    /// By index in `SystemNotice.all`.
    var notices = [[OutputPattern]](repeating: [], count: SystemNotice.all.count)
    var realertOnModified = false
    var realertLine = 0

    init(board: BoardConfig) {
        self.board = board
        let count = board.buttons.count
        shortPress = [ButtonAction](repeating: .none, count: count)
        longPress = [ButtonAction](repeating: .none, count: count)
        ringingShortPress = [ButtonAction?](repeating: nil, count: count)
        ringingLongPress = [ButtonAction?](repeating: nil, count: count)
        buttonLines = [Int](repeating: 0, count: count)
        // Defaults a wearer expects without writing `button` lines.
        if count == 1 {
            shortPress[0] = .positive
            longPress[0] = .negative
        } else {
            if let accept = board.buttonIndex(named: "accept") { shortPress[accept] = .positive }
            if let reject = board.buttonIndex(named: "reject") {
                shortPress[reject] = .negative
                // A long reject while a call rings silences it on the wrist.
                ringingLongPress[reject] = .silence
            }
        }
    }

    // MARK: Other lines

    mutating func take(_ line: ConfigLine) throws(ConfigError) {
        switch line.verb {
        case "alert": try takeAlert(line)
        case "rule": try takeRule(line)
        case "unread": try takeUnread(line)
        case "button": try takeButton(line)
        case "feedback": try takeFeedback(line)
        case "quiet": try takeQuiet(line)
        case "realert-on-modified":
            guard realertLine == 0 else {
                throw ConfigError(line: line.number, .duplicate, "realert-on-modified is already set on line \(realertLine)")
            }
            let args = line.arguments
            guard args.count == 1, args[0].value == nil else {
                throw ConfigError(line: line.number, .badLine, "realert-on-modified takes yes or no")
            }
            realertOnModified = try Words.yesNo(args[0].key, what: "realert-on-modified", line: line.number)
            realertLine = line.number
        case "ring-limit-ms":
            ringLimitMs = try milliseconds(
                line, setOn: &ringLimitLine, in: PolicyConfig.ringLimitRangeMs, example: "60000", zero: "no limit")
        case "phone-lost-ms":
            phoneLostMs = try milliseconds(line, setOn: &phoneLostLine, in: PolicyConfig.phoneLostRangeMs, example: "30000", zero: "off")
        default:
            throw ConfigError(
                line: line.number, .unknownKey,
                "unknown setting '\(line.verb)': a policy file has pattern, alert, rule, unread, button, feedback, quiet, realert-on-modified, ring-limit-ms and phone-lost-ms"
            )
        }
    }

    /// A setting that takes one duration in ms, once (`ring-limit-ms`,
    /// `phone-lost-ms`); `zero` says what 0 means.
    private func milliseconds(
        _ line: ConfigLine, setOn setLine: inout Int, in range: ClosedRange<Int64>, example: String, zero: String
    ) throws(ConfigError) -> Int64 {
        let name = line.verb.description
        guard setLine == 0 else {
            throw ConfigError(line: line.number, .duplicate, "\(name) is already set on line \(setLine)")
        }
        let args = line.arguments
        guard args.count == 1, args[0].value == nil, !args[0].key.isEmpty else {
            throw ConfigError(line: line.number, .badLine, "\(name) takes one value: e.g. `\(name) \(example)` (0: \(zero))")
        }
        let ms = try Words.integer(args[0].key, in: range, what: name, unit: " ms (0: \(zero))", line: line.number)
        setLine = line.number
        return ms
    }

    private mutating func takeAlert(_ line: ConfigLine) throws(ConfigError) {
        let number = line.number
        let args = line.arguments
        guard let first = args.first else {
            throw ConfigError(line: number, .badLine, "alert needs a category: e.g. `alert Social led-notify=blink`")
        }
        let category = try Self.category(try Words.bare(first, what: "the category", line: number), line: number)
        let c = Int(category.rawValue)
        let isImportant = args.dropFirst().contains { $0.key.matches("important") && $0.value == nil }
        var outputs: [OutputPattern] = []
        var priority: UInt8? = nil
        var until: Bool? = nil
        for word in args.dropFirst() {
            switch word.key {
            case "important" where word.value == nil:
                continue
            case "priority", "until":
                guard !isImportant else {
                    throw ConfigError(
                        line: number, .badLine,
                        "\(word.key)= goes on the `alert \(first.key)` line; the important line lists only output=pattern")
                }
                let value = try Words.value(word, line: number)
                if word.key.matches("priority") {
                    guard priority == nil else { throw ConfigError(line: number, .duplicate, "priority= is given twice") }
                    priority = UInt8(try Words.integer(value, in: 0...255, what: "priority", line: number))
                } else {
                    guard until == nil else { throw ConfigError(line: number, .duplicate, "until= is given twice") }
                    switch value {
                    case "removed": until = true
                    case "end": until = false
                    default: throw ConfigError(line: number, .badLine, "until takes removed or end, not '\(value)'")
                    }
                }
            default:
                try append(outputPattern(word, keys: "important, priority=, until=", line: number), to: &outputs, line: number)
            }
        }
        var alert = alerts[c] ?? Alert(outputs: [])
        if isImportant {
            guard importantLines[c] == 0 else {
                throw ConfigError(line: number, .duplicate, "alert \(first.key) important is already set on line \(importantLines[c])")
            }
            guard !outputs.isEmpty else {
                throw ConfigError(line: number, .badLine, "alert \(first.key) important needs output=pattern: e.g. vibration=ring-strong")
            }
            alert.important = outputs
            importantLines[c] = number
        } else {
            guard alertLines[c] == 0 else {
                throw ConfigError(line: number, .duplicate, "alert \(first.key) is already set on line \(alertLines[c])")
            }
            alert.outputs = outputs
            alert.priority = priority ?? Alert.defaultPriority
            alert.untilRemoved = until ?? false
            alertLines[c] = number
        }
        alerts[c] = alert
    }

    private mutating func takeRule(_ line: ConfigLine) throws(ConfigError) {
        let number = line.number
        guard rules.count < PolicyConfig.maxRules else {
            throw ConfigError(line: number, .badLine, "a policy has at most \(PolicyConfig.maxRules) rules")
        }
        var rule = Rule(outputs: [])
        var seen: [Text] = []
        for word in line.arguments {
            switch word.key {
            case "app", "title", "category", "priority":
                guard !seen.contains(word.key) else {
                    throw ConfigError(line: number, .duplicate, "\(word.key)= is given twice")
                }
                seen.append(word.key)
                let value = try Words.value(word, line: number)
                switch word.key {
                case "app": rule.app = value.description
                case "title": rule.titleContains = value.description
                case "category": rule.category = try Self.category(value, line: number)
                default: rule.priority = UInt8(try Words.integer(value, in: 0...255, what: "priority", line: number))
                }
            default:
                try append(outputPattern(word, keys: "app=, title=, category=, priority=", line: number), to: &rule.outputs, line: number)
            }
        }
        guard rule.app != nil || rule.titleContains != nil || rule.category != nil else {
            throw ConfigError(
                line: number, .badLine, "a rule needs app=, title= or category= to say what it matches")
        }
        // By bytes, as the rules match (AlertPolicy.applyRules).
        if let i = rules.firstIndex(where: {
            Self.sameBytes($0.app, rule.app) && Self.sameBytes($0.titleContains, rule.titleContains)
                && $0.category == rule.category
        }) {
            throw ConfigError(
                line: number, .duplicate,
                "this rule matches the same notifications as the rule on line \(ruleLines[i]), which comes first and wins: merge them")
        }
        rules.append(rule)
        ruleLines.append(number)
    }

    private mutating func takeUnread(_ line: ConfigLine) throws(ConfigError) {
        let number = line.number
        guard unreadLine == 0 else {
            throw ConfigError(line: number, .duplicate, "unread is already set on line \(unreadLine)")
        }
        let args = line.arguments
        guard let first = args.first else {
            throw ConfigError(line: number, .badLine, "unread needs an output: e.g. `unread led-notify categories=Social,Email`")
        }
        let name = try Words.bare(first, what: "the unread output", line: number)
        guard let output = board.outputIndex(of: name) else {
            throw ConfigError(line: number, .badLine, "\(name) is not an output of board \(board.name) (outputs: \(outputNames))")
        }
        var categories: UInt16? = nil
        for word in args.dropFirst() {
            guard word.key.matches("categories") else {
                throw ConfigError(line: number, .unknownKey, "unknown unread option '\(word.key)': use categories=")
            }
            guard categories == nil else { throw ConfigError(line: number, .duplicate, "categories= is given twice") }
            var bits: UInt16 = 0
            for name in try Words.value(word, line: number).bytes.split(separator: Byte.comma, omittingEmptySubsequences: false) {
                bits |= 1 << UInt16(try Self.category(Text(name), line: number).rawValue)
            }
            categories = bits
        }
        guard let categories else {
            throw ConfigError(line: number, .badLine, "unread needs categories=: e.g. categories=Social,Email,MissedCall")
        }
        unread = UnreadIndicator(output: output, categories: categories)
        unreadLine = number
    }

    private mutating func takeButton(_ line: ConfigLine) throws(ConfigError) {
        let number = line.number
        let args = line.arguments
        guard let first = args.first else {
            throw ConfigError(line: number, .badLine, "button needs a name: e.g. `button accept short=positive long=none`")
        }
        let name = try Words.bare(first, what: "the button's name", line: number)
        guard let button = board.buttonIndex(of: name) else {
            throw ConfigError(
                line: number, .badLine,
                "\(name) is not a button of board \(board.name) (buttons: \(Words.list(board.buttons.map { $0.name })))")
        }
        guard buttonLines[button] == 0 else {
            throw ConfigError(line: number, .duplicate, "button \(name) is already set on line \(buttonLines[button])")
        }
        guard args.count > 1 else {
            throw ConfigError(line: number, .badLine, "button \(name) needs short=, long=, ringing-short= and/or ringing-long=")
        }
        var seen: [Text] = []
        for word in args.dropFirst() {
            switch word.key {
            case "short", "long", "ringing-short", "ringing-long": break
            default:
                throw ConfigError(
                    line: number, .unknownKey, "unknown button option '\(word.key)': use short=, long=, ringing-short= or ringing-long=")
            }
            guard !seen.contains(word.key) else { throw ConfigError(line: number, .duplicate, "\(word.key)= is given twice") }
            seen.append(word.key)
            let action: ButtonAction
            switch try Words.value(word, line: number) {
            case "positive": action = .positive
            case "negative": action = .negative
            case "silence": action = .silence
            case "media-toggle": action = .media(.togglePlayPause)
            case "media-next": action = .media(.nextTrack)
            case "media-previous": action = .media(.previousTrack)
            case "volume-up": action = .media(.volumeUp)
            case "volume-down": action = .media(.volumeDown)
            case "none": action = .none
            case let other:
                throw ConfigError(
                    line: number, .badLine,
                    "\(word.key) takes positive, negative, silence, media-toggle, media-next, media-previous, volume-up, volume-down or none, not '\(other)'"
                )
            }
            switch word.key {
            case "short": shortPress[button] = action
            case "long": longPress[button] = action
            case "ringing-short": ringingShortPress[button] = action
            default: ringingLongPress[button] = action
            }
        }
        // A press the line sets without its ringing- option does the same
        // while a call rings: the built-in ringing default gives way to it.
        if seen.contains(where: { $0.matches("short") }), !seen.contains(where: { $0.matches("ringing-short") }) { ringingShortPress[button] = nil }
        if seen.contains(where: { $0.matches("long") }), !seen.contains(where: { $0.matches("ringing-long") }) { ringingLongPress[button] = nil }
        buttonLines[button] = number
    }

    private mutating func takeFeedback(_ line: ConfigLine) throws(ConfigError) {
        let number = line.number
        let args = line.arguments
        let events: [StaticString] = [
            "action-failed", "nothing-to-do", "pairing", "waiting-permission", "settings-error", "phone-lost", "phone-back",
        ] + WearerStatus.all.map { $0.keyword } + ["battery-low", "battery-critical"] + SystemNotice.all.map { $0.keyword }
        guard let first = args.first, first.value == nil, let event = events.firstIndex(where: { first.key.matches($0) }) else {
            throw ConfigError(
                line: number, .unknownKey,
                "feedback is for action-failed, nothing-to-do, pairing, waiting-permission, settings-error, phone-lost, phone-back, status-connected, status-waiting-permission, status-not-connected, status-pairing, status-settings-error, status-battery-low, battery-low, battery-critical, update-done or update-failed: e.g. `feedback action-failed vibration=failure`"
            )
        }
        guard feedbackLines[event] == 0 else {
            throw ConfigError(line: number, .duplicate, "feedback \(first.key) is already set on line \(feedbackLines[event])")
        }
        var outputs: [OutputPattern] = []
        for word in args.dropFirst() {
            try append(outputPattern(word, keys: "no other keys", line: number), to: &outputs, line: number)
        }
        switch event {
        case 0: actionFailed = outputs
        case 1: nothingToDo = outputs
        case 2: pairing = outputs
        case 3: waitingPermission = outputs
        case 4: settingsError = outputs
        case 5: phoneLost = outputs
        case 6: phoneBack = outputs
        case Self.batteryFeedbackBase: batteryLow = outputs
        case Self.batteryFeedbackBase + 1: batteryCritical = outputs
        case Self.noticeFeedbackBase...: notices[event - Self.noticeFeedbackBase] = outputs
        default: status[event - Self.statusFeedbackBase] = outputs
        }
        feedbackLines[event] = number
    }

    /// `quiet HH:MM-HH:MM [allow=CATEGORY,...|none] [important=yes|no]`.
    private mutating func takeQuiet(_ line: ConfigLine) throws(ConfigError) {
        let number = line.number
        guard quietHours.count < PolicyConfig.maxQuietHours else {
            throw ConfigError(line: number, .badLine, "a policy has at most \(PolicyConfig.maxQuietHours) quiet lines")
        }
        let args = line.arguments
        guard let first = args.first else {
            throw ConfigError(line: number, .badLine, "quiet needs a time range: e.g. `quiet 22:30-07:00 allow=IncomingCall important=yes`")
        }
        let window = try Words.dailyWindow(try Words.bare(first, what: "the time range", line: number), what: "quiet", line: number)
        var allowed: UInt16? = nil
        var important: Bool? = nil
        for word in args.dropFirst() {
            switch word.key {
            case "allow":
                guard allowed == nil else { throw ConfigError(line: number, .duplicate, "allow= is given twice") }
                let value = try Words.value(word, line: number)
                if value.matches("none") {
                    allowed = 0
                    continue
                }
                var bits: UInt16 = 0
                for name in value.bytes.split(separator: Byte.comma, omittingEmptySubsequences: false) {
                    let text = Text(name)
                    guard !text.matches("none") else {
                        throw ConfigError(line: number, .badLine, "allow=none stands alone: write allow=none, or list the categories that may alert")
                    }
                    bits |= 1 << UInt16(try Self.category(text, line: number).rawValue)
                }
                allowed = bits
            case "important":
                guard important == nil else { throw ConfigError(line: number, .duplicate, "important= is given twice") }
                important = try Words.yesNo(try Words.value(word, line: number), what: "important", line: number)
            default:
                throw ConfigError(line: number, .unknownKey, "unknown quiet option '\(word.key)': use allow= or important=")
            }
        }
        // The first window containing a minute decides, so a second line
        // with the same window would never apply (as a rule's duplicate).
        if let i = quietHours.firstIndex(where: { $0.window == window }) {
            throw ConfigError(
                line: number, .duplicate,
                "this quiet line has the same hours as the one on line \(quietLines[i]), which comes first and wins: merge them")
        }
        quietHours.append(
            QuietHours(window: window, allowedCategories: allowed ?? QuietHours.defaultAllowedCategories, allowsImportant: important ?? true))
        quietLines.append(number)
    }

    // MARK: Helpers

    private var outputNames: String { Words.list(board.outputs.map { $0.name }) }

    /// `output=pattern`; `keys` names the line's other keys for the message
    /// when the word is neither.
    private func outputPattern(_ word: Word, keys: String, line: Int) throws(ConfigError) -> OutputPattern {
        guard let output = board.outputIndex(of: word.key) else {
            throw ConfigError(
                line: line, .badLine,
                "'\(word.key)' is neither an output of board \(board.name) (outputs: \(outputNames)) nor a key here (\(keys))")
        }
        guard let name = word.value, !name.isEmpty else {
            throw ConfigError(line: line, .badLine, "\(word.key) needs a pattern: write \(word.key)=<pattern>")
        }
        guard let pattern = patterns.firstIndex(where: { name.matches($0.name) }) else {
            throw ConfigError(
                line: line, .unknownPattern,
                "no pattern named '\(name)': define it with a line like `pattern \(name) on 200 off 800` (patterns: \(Words.list(patterns.map { $0.name })))"
            )
        }
        return OutputPattern(output: output, pattern: pattern)
    }

    private func append(_ pair: OutputPattern, to list: inout [OutputPattern], line: Int) throws(ConfigError) {
        guard !list.contains(where: { $0.output == pair.output }) else {
            throw ConfigError(line: line, .duplicate, "output \(board.outputs[pair.output].name) is given twice on this line")
        }
        list.append(pair)
    }

    /// Both absent, or the same UTF-8 bytes.
    private static func sameBytes(_ a: String?, _ b: String?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case (.some(let x), .some(let y)): x.utf8Equals(y)
        default: false
        }
    }

    static func category(_ name: Text, line: Int) throws(ConfigError) -> CategoryID {
        if let category = CategoryID(name: name.bytes.span) { return category }
        var names: [String] = []
        for raw in 0..<UInt8(CategoryID.knownCount) { names.append(Words.string(CategoryID(rawValue: raw).name)) }
        throw ConfigError(line: line, .badCategory, "unknown category '\(name)': use one of \(Words.list(names))")
    }
}
