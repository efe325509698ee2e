// SPDX-License-Identifier: Apache-2.0
import ANCS
import Bounded
import Config
import Testing
import TestSupport

/// `quiet HH:MM-HH:MM [allow=CATEGORY,...|none] [important=yes|no]`: daily
/// windows of the phone's local time in which only some notifications alert.
@Suite("Policy: quiet hours")
struct QuietHoursTests {
    private func window(_ start: Int, _ end: Int) -> DailyWindow { DailyWindow(startMinute: start, endMinute: end)! }
    private static let call: UInt16 = 1 << 1

    @Test("a bare window lets only incoming calls and Important notifications through")
    func bareWindow() throws {
        let policy = try PolicyConfig.parse("quiet 22:30-07:00\n", board: simBoard)
        #expect(policy.quietHours == [QuietHours(window: window(1_350, 420), allowedCategories: Self.call, allowsImportant: true)])
    }

    @Test("allow= lists exactly the categories that alert, calls included only if listed; important=no; one-digit hours")
    func allowListAndImportantNo() throws {
        let policy = try PolicyConfig.parse("quiet 9:00-17:30 important=no allow=Social,Email\n", board: simBoard)
        let bits: UInt16 = 1 << 4 | 1 << 6
        #expect(policy.quietHours == [QuietHours(window: window(540, 1_050), allowedCategories: bits, allowsImportant: false)])
    }

    @Test("allow=none lets no category through; the window may be written quiet=HH:MM-HH:MM")
    func allowNone() throws {
        let policy = try PolicyConfig.parse("quiet=00:00-06:15 allow=none important=yes\n", board: simBoard)
        #expect(policy.quietHours == [QuietHours(window: window(0, 375), allowedCategories: 0, allowsImportant: true)])
    }

    @Test("several quiet lines are kept in file order; without any, none applies")
    func severalLines() throws {
        let policy = try PolicyConfig.parse("quiet 22:00-07:00\n# lunch\nquiet 12:00-13:00 allow=none\n", board: simBoard)
        #expect(policy.quietHours.map(\.window) == [window(1_320, 420), window(720, 780)])
        #expect(try PolicyConfig.parse("", board: simBoard).quietHours.isEmpty)
    }

    @Test("allows: by default an incoming call alerts and other categories do not, unless Important")
    func allowsByDefault() {
        let quiet = QuietHours(window: window(1_350, 420), allowedCategories: Self.call, allowsImportant: true)
        #expect(quiet.allows(.incomingCall, important: false))
        #expect(!quiet.allows(.social, important: false))
        #expect(!quiet.allows(.missedCall, important: false))
        #expect(quiet.allows(.social, important: true))
    }

    @Test("allows: important=no holds back an Important notification of a category not allowed, not an allowed one")
    func allowsImportantNo() {
        let quiet = QuietHours(window: window(1_350, 420), allowedCategories: Self.call, allowsImportant: false)
        #expect(!quiet.allows(.schedule, important: true))
        #expect(quiet.allows(.incomingCall, important: true))
    }

    @Test("allows: an allow= list without IncomingCall holds back calls too; reserved categories count as Other")
    func allowsList() throws {
        let policy = try PolicyConfig.parse("quiet 22:00-07:00 allow=Social,Other important=no\n", board: simBoard)
        let quiet = policy.quietHours[0]
        #expect(quiet.allows(.social, important: false))
        #expect(!quiet.allows(.incomingCall, important: false))
        #expect(!quiet.allows(.email, important: true))
        #expect(quiet.allows(CategoryID(rawValue: 200), important: false))
    }

    @Test("a window across midnight holds from its start to just before its end, both sides of midnight")
    func acrossMidnight() throws {
        let policy = try PolicyConfig.parse("quiet 22:30-07:00\n", board: simBoard)
        for minute in [1_350, 1_439, 0, 419] { #expect(policy.quietHoursAt(minuteOfDay: minute) == 0, "minute \(minute)") }
        for minute in [420, 720, 1_349] { #expect(policy.quietHoursAt(minuteOfDay: minute) == nil, "minute \(minute)") }
    }

    @Test("a window ending at 00:00 ends at midnight; one starting at 00:00 starts there")
    func midnightBounds() throws {
        let policy = try PolicyConfig.parse("quiet 23:00-00:00\nquiet 00:00-01:00 allow=none\n", board: simBoard)
        #expect(policy.quietHoursAt(minuteOfDay: 1_439) == 0)
        #expect(policy.quietHoursAt(minuteOfDay: 0) == 1)
        #expect(policy.quietHoursAt(minuteOfDay: 60) == nil)
    }

    @Test("where windows overlap the first line decides")
    func firstWindowWins() throws {
        let policy = try PolicyConfig.parse("quiet 22:00-07:00 allow=none important=no\nquiet 06:00-08:00\n", board: simBoard)
        #expect(policy.quietHoursAt(minuteOfDay: 390) == 0)
        #expect(policy.quietHoursAt(minuteOfDay: 450) == 1)
        #expect(!policy.quietAllows(.incomingCall, important: true, minuteOfDay: 390))
        #expect(policy.quietAllows(.incomingCall, important: false, minuteOfDay: 450))
        #expect(!policy.quietAllows(.social, important: false, minuteOfDay: 450))
    }

    @Test("without the phone's time, and outside every window, everything may alert")
    func noClockNoQuiet() throws {
        let policy = try PolicyConfig.parse("quiet 00:00-23:59 allow=none important=no\n", board: simBoard)
        #expect(policy.quietAllows(.social, important: false, minuteOfDay: nil))
        #expect(policy.quietAllows(.social, important: false, minuteOfDay: 1_439))
        #expect(!policy.quietAllows(.social, important: false, minuteOfDay: 0))
    }
}

@Suite("Policy: quiet hours errors")
struct QuietHoursErrorTests {
    private static let all = "Other, IncomingCall, MissedCall, Voicemail, Social, Schedule, Email, News, HealthAndFitness, BusinessAndFinance, Location, Entertainment"

    @Test("a missing range says how to write one")
    func missingRange() {
        #expect(policyError("\nquiet\n") == ConfigError(line: 2, .badLine, "quiet needs a time range: e.g. `quiet 22:30-07:00 allow=IncomingCall important=yes`"))
        #expect(policyError("quiet allow=Social\n") == ConfigError(line: 1, .badLine, "the time range comes first, before any key=value: found 'allow=...'"))
    }

    @Test("a malformed range is a bad line quoting it", arguments: ["22:30", "22-07", "22:3-07:00", "22:30-7", "22:30-07:00-08:00", "22h30-07:00", "123:00-07:00", "-07:00", "22:30-", "ab:cd-07:00", "22:30–07:00"])
    func malformedRange(range: String) {
        #expect(policyError("pattern p on 1\nquiet \(range)\n") == ConfigError(line: 2, .badLine, "quiet needs a time range HH:MM-HH:MM, e.g. 22:30-07:00, not '\(range)'"))
    }

    @Test("hours past 23 and minutes past 59 are out of range")
    func outOfRange() {
        #expect(policyError("quiet 24:00-07:00\n") == ConfigError(line: 1, .outOfRange, "hour 24 in 24:00-07:00 is out of range: use 00...23 (midnight is 00:00)"))
        #expect(policyError("\n\nquiet 22:00-24:00\n") == ConfigError(line: 3, .outOfRange, "hour 24 in 22:00-24:00 is out of range: use 00...23 (midnight is 00:00)"))
        #expect(policyError("quiet 22:00-07:60\n") == ConfigError(line: 1, .outOfRange, "minute 60 in 22:00-07:60 is out of range: use 00...59"))
        #expect(policyError("quiet 99:99-07:00\n") == ConfigError(line: 1, .outOfRange, "hour 99 in 99:99-07:00 is out of range: use 00...23 (midnight is 00:00)"))
    }

    @Test("a window that starts where it ends is a bad line")
    func emptyWindow() {
        #expect(policyError("quiet 07:00-07:00\n") == ConfigError(line: 1, .badLine, "quiet 07:00-07:00 starts and ends at the same time: give two different times"))
        #expect(policyError("\nquiet 7:00-07:00\n") == ConfigError(line: 2, .badLine, "quiet 7:00-07:00 starts and ends at the same time: give two different times"))
    }

    @Test("unknown and bare options are unknown keys; a key given twice is a duplicate")
    func options() {
        #expect(policyError("quiet 22:00-07:00 mode=dnd\n") == ConfigError(line: 1, .unknownKey, "unknown quiet option 'mode': use allow= or important="))
        #expect(policyError("quiet 22:00-07:00 Social\n") == ConfigError(line: 1, .unknownKey, "unknown quiet option 'Social': use allow= or important="))
        #expect(policyError("quiet 22:00-07:00 allow\n") == ConfigError(line: 1, .badLine, "allow needs a value: write allow=..."))
        #expect(policyError("quiet 22:00-07:00 allow=Social allow=Email\n") == ConfigError(line: 1, .duplicate, "allow= is given twice"))
        #expect(policyError("\nquiet 22:00-07:00 important=yes important=no\n") == ConfigError(line: 2, .duplicate, "important= is given twice"))
        #expect(policyError("quiet 22:00-07:00 important=maybe\n") == ConfigError(line: 1, .badLine, "important takes yes or no, not 'maybe'"))
    }

    @Test("allow= takes the spec's category names, or none alone")
    func badCategories() {
        #expect(policyError("quiet 22:00-07:00 allow=Calls\n") == ConfigError(line: 1, .badCategory, "unknown category 'Calls': use one of \(Self.all)"))
        #expect(policyError("\nquiet 22:00-07:00 allow=Social,,Email\n") == ConfigError(line: 2, .badCategory, "unknown category '': use one of \(Self.all)"))
        #expect(policyError("quiet 22:00-07:00 allow=incomingcall\n")?.kind == .badCategory)
        #expect(policyError("quiet 22:00-07:00 allow=none,Social\n") == ConfigError(line: 1, .badLine, "allow=none stands alone: write allow=none, or list the categories that may alert"))
    }

    @Test("at most 8 quiet lines: the ninth is a bad line")
    func tooMany() {
        let eight = (0..<8).map { "quiet \($0):00-\($0):30\n" }.joined()
        #expect(policyError(eight) == nil)
        #expect(policyError(eight + "quiet 9:00-9:30\n") == ConfigError(line: 9, .badLine, "a policy has at most 8 quiet lines"))
        #expect(PolicyConfig.maxQuietHours == 8)
    }

    @Test("a second line with the same window could never apply: a duplicate pointing at the first")
    func sameWindowTwice() {
        #expect(policyError("quiet 22:00-07:00\n\nquiet 22:00-7:00 allow=none\n") == ConfigError(line: 3, .duplicate, "this quiet line has the same hours as the one on line 1, which comes first and wins: merge them"))
    }
}
