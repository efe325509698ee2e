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
        ] + status.enumerated().map({ ($1, feedbackLines[Self.statusFeedbackBase + $0]) }) {
            checkEnds(list, line: line, what: "the feedback would never stop", remedy: "give it a repeat count", holdStopped: false, errors: &errors)
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
        return config
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
