// SPDX-License-Identifier: Apache-2.0
import Config
import Feedback
import Platform
import Testing
import TestSupport

/// The system's notices on the wrist (`feedback update-done`, `feedback
/// update-failed`): like any feedback line when the policy has one; the
/// built-in patterns when it has none, since the policy on the card was
/// written for the version the card was made with.
@Suite("Policy: the system's notices (an update kept or sent back)")
struct NoticeFeedbackTests {
    static let patterns = "pattern blink on 150\npattern endless on 1 repeat forever\n"

    /// The steps of `list`'s pattern on `output` as (level, ms) pairs, with
    /// its repeat count; nil when it plays nothing there.
    static func steps(_ policy: PolicyConfig, _ list: [OutputPattern], output: Int) -> (steps: [String], repeats: PatternRepeat)? {
        guard let choice = list.first(where: { $0.output == output }) else { return nil }
        let pattern = policy.patterns[choice.pattern].pattern
        let steps = (0..<pattern.stepCount).map { i -> String in
            let step = pattern[step: i]
            return (step.level == .on ? "on " : "off ") + String(step.durationMs)
        }
        return (steps, pattern.repeats)
    }

    @Test("without the lines: update-done blinks led-notify three times (300 ms) and taps the motor twice; update-failed flickers led-call 2 s and buzzes the failure triple")
    func builtInDefaults() throws {
        let policy = try PolicyConfig.parse("", board: simBoard)
        let done = policy.feedback(for: .updateDone)
        #expect(done.map(\.output) == [0, 2], "led-notify and vibration")
        #expect(Self.steps(policy, done, output: 0)?.steps == ["on 300", "off 300", "on 300", "off 300", "on 300"])
        #expect(Self.steps(policy, done, output: 2)?.steps == ["on 120", "off 120", "on 120"])
        let failed = policy.feedback(for: .updateFailed)
        #expect(failed.map(\.output) == [1, 2], "led-call and vibration")
        let flicker = Self.steps(policy, failed, output: 1)
        #expect(flicker?.steps == ["on 100", "off 100"] && flicker?.repeats == .times(10), "2 s of flicker")
        #expect(Self.steps(policy, failed, output: 2)?.steps == ["on 100", "off 80", "on 100", "off 80", "on 100"])
        // Every built-in pattern ends by itself, as one-off feedback must.
        for choice in done + failed { #expect(policy.patterns[choice.pattern].pattern.totalMs != nil) }
    }

    @Test("a line replaces the built-in pattern; a line without outputs turns the notice off")
    func lines() throws {
        let policy = try PolicyConfig.parse(Self.patterns + "feedback update-done led-call=blink\nfeedback update-failed\n", board: simBoard)
        #expect(policy.feedback(for: .updateDone) == [OutputPattern(output: 1, pattern: 0)])
        #expect(policy.feedback(for: .updateFailed).isEmpty)
        #expect(policy.patterns.map(\.name) == ["blink", "endless"], "no built-in pattern is added for a notice the file sets")
    }

    @Test("the built-in patterns use only the outputs the board has")
    func boardWithoutMotor() throws {
        let board = try BoardConfig.parse("name tiny\nchip sim\noutput led-call\nbutton accept\n")
        let policy = try PolicyConfig.parse("", board: board)
        #expect(policy.feedback(for: .updateDone).isEmpty, "no led-notify, no vibration")
        #expect(policy.feedback(for: .updateFailed).map(\.output) == [0])
    }

    @Test("update-done and update-failed: once each, known outputs and patterns, patterns that end")
    func errors() {
        #expect(policyError(Self.patterns + "feedback update-done led-notify=blink\nfeedback update-done vibration=blink\n") == ConfigError(line: 4, .duplicate, "feedback update-done is already set on line 3"))
        #expect(policyError(Self.patterns + "feedback update-failed led-call=blnk\n")?.kind == .unknownPattern)
        #expect(policyError(Self.patterns + "feedback update-failed led-rgb=blink\n") == ConfigError(line: 3, .badLine, "'led-rgb' is neither an output of board sim (outputs: led-notify, led-call, vibration) nor a key here (no other keys)"))
        #expect(policyError(Self.patterns + "feedback update-done vibration=endless\n") == ConfigError(line: 3, .badLine, "pattern endless repeats forever, so the feedback would never stop: give it a repeat count"))
    }

    @Test("the shipped policy names both notices with its own patterns, the same steps as the built-in ones")
    func shippedPolicy() throws {
        let shipped = try PolicyConfig.parse(readRepositoryFile("board/policy.conf"), board: simBoard)
        let builtIn = try PolicyConfig.parse("", board: simBoard)
        for notice in SystemNotice.all {
            let list = shipped.feedback(for: notice)
            #expect(list.map(\.output) == builtIn.feedback(for: notice).map(\.output))
            for choice in list {
                #expect(!shipped.patterns[choice.pattern].name.contains(" "), "not a built-in pattern")
                let a = Self.steps(shipped, list, output: choice.output)
                let b = Self.steps(builtIn, builtIn.feedback(for: notice), output: choice.output)
                #expect(a?.steps == b?.steps && a?.repeats == b?.repeats, "\(notice.keyword) on output \(choice.output)")
            }
        }
    }
}
