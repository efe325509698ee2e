// SPDX-License-Identifier: Apache-2.0
// The policy parser's checks that need the whole file (a pattern that never
// ends where nothing would stop it), run once every line is read: each
// mistake collected, each pointing at the line to change.

import ANCS
import Bounded
import Feedback
import Platform

extension PolicyParser {
    // MARK: Whole-file checks

    /// The checks that need the whole file, their mistakes added to
    /// `errors`.
    func finish(errors: inout ConfigErrors) -> PolicyConfig {
        var alerts = alerts
        if alerts[0] == nil { alerts[0] = Alert(outputs: []) }
        // A category with only an important line plays Other's alert (as a
        // category without alert lines does), with its override on top.
        for c in 1..<CategoryID.knownCount where alertLines[c] == 0 {
            guard let important = alerts[c]?.important else { continue }
            var inherited = alerts[0]!
            inherited.important = important
            alerts[c] = inherited
        }
        let resolved = alerts
        func alert(for category: CategoryID) -> Alert { resolved[Int(category.rawValue)] ?? resolved[0]! }

        for c in 0..<CategoryID.knownCount {
            guard let alert = alerts[c], !alert.untilRemoved else { continue }
            let name = Words.string(CategoryID(rawValue: UInt8(c)).name)
            let remedy = "add until=removed to `alert \(name)` or give it a repeat count"
            checkEnds(alert.outputs, line: alertLines[c], what: "this alert would never stop", remedy: remedy, errors: &errors)
            checkEnds(alert.important, line: importantLines[c], what: "this alert would never stop", remedy: remedy, errors: &errors)
        }
        for (i, rule) in rules.enumerated() {
            if let category = rule.category, alert(for: category).untilRemoved { continue }
            checkEnds(
                rule.outputs, line: ruleLines[i], what: "nothing would stop it",
                remedy: "give it a repeat count, or add category= naming a category whose alert has until=removed", errors: &errors)
        }
        // The one-off feedback is played under an owner nothing stops (the
        // next feedback on the same output replaces it, if one comes), so
        // it must end by itself: no `repeat forever`, and no `then`, whose
        // level is held until the owner stops it (pairing and
        // waiting-permission have owners that do).
        for (list, line) in [
            (actionFailed, feedbackLines[0]), (nothingToDo, feedbackLines[1]), (settingsError, feedbackLines[4]),
            (phoneLost, feedbackLines[5]), (phoneBack, feedbackLines[6]),
            (batteryLow, feedbackLines[Self.batteryFeedbackBase]), (batteryCritical, feedbackLines[Self.batteryFeedbackBase + 1]),
        ] + status.enumerated().map({ ($1, feedbackLines[Self.statusFeedbackBase + $0]) })
            + notices.enumerated().map({ ($1, feedbackLines[Self.noticeFeedbackBase + $0]) }) {
            checkEnds(list, line: line, what: "the feedback would never stop", remedy: "give it a repeat count", holdStopped: false, errors: &errors)
        }
        // A notice the policy has no line for plays the built-in pattern:
        // the policy on the card is the wearer's, written for the version
        // the card was made with, and an update's outcome must show
        // whatever that version's file said (`feedback update-done` with no
        // outputs turns it off).
        var patterns = patterns
        var notices = notices
        for notice in SystemNotice.all where feedbackLines[Self.noticeFeedbackBase + notice.rawValue] == 0 {
            notices[notice.rawValue] = Self.builtInFeedback(notice, board: board, patterns: &patterns)
        }
        var config = PolicyConfig(
            patterns: patterns, alerts: alerts, rules: rules, unread: unread, shortPress: shortPress,
            longPress: longPress, actionFailed: actionFailed, nothingToDo: nothingToDo, pairing: pairing,
            realertOnModified: realertOnModified, waitingPermission: waitingPermission,
            settingsError: settingsError, ringingShortPress: ringingShortPress, ringingLongPress: ringingLongPress,
            ringLimitMs: ringLimitMs, quietHours: quietHours, phoneLostMs: phoneLostMs, phoneLost: phoneLost, phoneBack: phoneBack)
        config.status = status
        config.batteryLow = batteryLow
        config.batteryCritical = batteryCritical
        config.notices = notices
        return config
    }

    /// The built-in outputs of `notice` on the board's outputs of those
    /// names (none: that part is left out), their patterns appended to
    /// `patterns` (names with a space, which no policy line can write).
    /// update-done: led-notify three 300 ms blinks, the motor a double tap;
    /// update-failed: led-call flickers 2 s, 100 ms on and off (as a
    /// refused installation's, board/image/update-install), the motor the
    /// failure triple. The same steps as board/policy.conf's lines
    /// (NoticeFeedbackTests).
    static func builtInFeedback(_ notice: SystemNotice, board: BoardConfig, patterns: inout [NamedPattern]) -> [OutputPattern] {
        typealias Part = (output: String, name: String, steps: [Int64], repeats: Int)
        let parts: [Part] = switch notice {
        case .updateDone: [
            ("led-notify", "update-done led (built in)", [300, 300, 300, 300, 300], 1),
            ("vibration", "update-done motor (built in)", [120, 120, 120], 1),
        ]
        case .updateFailed: [
            ("led-call", "update-failed led (built in)", [100, 100], 10),
            ("vibration", "update-failed motor (built in)", [100, 80, 100, 80, 100], 1),
        ]
        }
        var outputs: [OutputPattern] = []
        for part in parts {
            guard let output = board.outputIndex(named: part.output) else { continue }
            let steps = part.steps.enumerated().map { PatternStep($0.offset % 2 == 0 ? .on : .off, durationMs: $0.element) }
            guard let pattern = try? Pattern(steps, repeats: .times(part.repeats)) else { continue }
            patterns.append(NamedPattern(name: part.name, pattern: pattern))
            outputs.append(OutputPattern(output: output, pattern: patterns.count - 1))
        }
        return outputs
    }

    /// A pattern on `outputs` that would not end by itself: one that
    /// repeats forever, and, unless its owner stops the level it holds
    /// (`holdStopped`: a notification's patterns stop at its Removed), one
    /// that ends `then on|off`.
    private func checkEnds(
        _ outputs: [OutputPattern], line: Int, what: String, remedy: String, holdStopped: Bool = true, errors: inout ConfigErrors
    ) {
        for output in outputs {
            let named = patterns[output.pattern]
            if named.pattern.repeats == .untilStopped {
                errors.add(ConfigError(line: line, .badLine, "pattern \(named.name) repeats forever, so \(what): \(remedy)"))
            } else if !holdStopped, let level = named.pattern.finalLevel {
                let then = level == .on ? "then on" : "then off"
                errors.add(ConfigError(
                    line: line, .badLine,
                    "pattern \(named.name) ends `\(then)`, which holds \(board.outputs[output.output].name) \(level == .on ? "on" : "off") until stopped, so \(what): drop `\(then)`"
                ))
            }
        }
    }
}
