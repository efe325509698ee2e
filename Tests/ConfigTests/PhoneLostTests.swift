// SPDX-License-Identifier: Apache-2.0
import Config
import Testing
import TestSupport

/// The phone left behind: `phone-lost-ms` and the phone-lost and phone-back
/// feedback.
@Suite("Policy: phone left behind")
struct PhoneLostTests {
    static let patterns = "pattern long-buzz on 1200 off 300 on 1200\npattern blink on 150\npattern endless on 1 repeat forever\n"

    @Test("without the lines: 30 s, and nothing plays")
    func defaults() throws {
        let policy = try PolicyConfig.parse("", board: simBoard)
        #expect(policy.phoneLostMs == 30_000 && PolicyConfig.defaultPhoneLostMs == 30_000)
        #expect(policy.phoneLost.isEmpty && policy.phoneBack.isEmpty)
        #expect(PolicyConfig.phoneLostRangeMs == 0...3_600_000)
    }

    @Test("phone-lost-ms takes 0 (off) up to an hour, also as key=value")
    func values() throws {
        #expect(try PolicyConfig.parse("phone-lost-ms 0\n", board: simBoard).phoneLostMs == 0)
        #expect(try PolicyConfig.parse("phone-lost-ms=3600000\n", board: simBoard).phoneLostMs == 3_600_000)
        #expect(try PolicyConfig.parse("phone-lost-ms 45000\n", board: simBoard).phoneLostMs == 45_000)
    }

    @Test("phone-lost-ms: a whole number of ms in 0...3600000, once; anything else names the line")
    func errors() {
        #expect(policyError("\nphone-lost-ms -1\n") == ConfigError(line: 2, .outOfRange, "phone-lost-ms -1 is out of range: use 0...3600000 ms (0: off)"))
        #expect(policyError("phone-lost-ms 3600001\n") == ConfigError(line: 1, .outOfRange, "phone-lost-ms 3600001 is out of range: use 0...3600000 ms (0: off)"))
        #expect(policyError("phone-lost-ms soon\n") == ConfigError(line: 1, .badLine, "phone-lost-ms needs a whole number, not 'soon'"))
        #expect(policyError("phone-lost-ms\n") == ConfigError(line: 1, .badLine, "phone-lost-ms takes one value: e.g. `phone-lost-ms 30000` (0: off)"))
        #expect(policyError("phone-lost-ms 30 s\n") == ConfigError(line: 1, .badLine, "phone-lost-ms takes one value: e.g. `phone-lost-ms 30000` (0: off)"))
        #expect(policyError("phone-lost-ms 1000\n\nphone-lost-ms 2000\n") == ConfigError(line: 3, .duplicate, "phone-lost-ms is already set on line 1"))
    }

    @Test("feedback phone-lost and phone-back take output=pattern like the other feedback lines")
    func feedback() throws {
        let policy = try PolicyConfig.parse(
            Self.patterns + "feedback phone-lost vibration=long-buzz led-call=blink\nfeedback phone-back led-notify=blink\n", board: simBoard)
        #expect(policy.phoneLost == [OutputPattern(output: 2, pattern: 0), OutputPattern(output: 1, pattern: 1)])
        #expect(policy.phoneBack == [OutputPattern(output: 0, pattern: 1)])
    }

    @Test("phone-lost and phone-back: once each, known outputs and patterns, patterns that end")
    func feedbackErrors() {
        #expect(policyError(Self.patterns + "feedback phone-lost vibration=long-buzz\nfeedback phone-lost led-notify=blink\n") == ConfigError(line: 5, .duplicate, "feedback phone-lost is already set on line 4"))
        #expect(policyError(Self.patterns + "feedback phone-back led-notify=blnk\n")?.kind == .unknownPattern)
        #expect(policyError(Self.patterns + "feedback phone-back led-rgb=blink\n") == ConfigError(line: 4, .badLine, "'led-rgb' is neither an output of board sim (outputs: led-notify, led-call, vibration) nor a key here (no other keys)"))
        #expect(policyError(Self.patterns + "feedback phone-lost vibration=endless\n") == ConfigError(line: 4, .badLine, "pattern endless repeats forever, so the feedback would never stop: give it a repeat count"))
        #expect(policyError(Self.patterns + "\nfeedback phone-back led-notify=endless\n")?.line == 5)
    }
}
