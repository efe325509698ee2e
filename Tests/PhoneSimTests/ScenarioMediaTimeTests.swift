// SPDX-License-Identifier: Apache-2.0
// The scenario lines for media and time: media, wait-media, time, no-ams,
// no-cts; accepted as documented, refused with line and column.

import AMS
import CTS
import PhoneSim
import Testing

func civil(_ y: Int, _ mo: Int, _ d: Int, _ h: Int, _ mi: Int, _ s: Int) -> CivilDateTime {
    CivilDateTime(year: y, month: mo, day: d, hour: h, minute: mi, second: s)!
}

@Suite("Scenario language: media and time")
struct ScenarioMediaTimeTests {
    @Test("media play|pause|unavailable, case-insensitive")
    func media() throws {
        #expect(try parse("media play") == .media(.playing))
        #expect(try parse("MEDIA Pause") == .media(.paused))
        #expect(try parse("media unavailable") == .media(.unavailable))
    }

    @Test("wait-media takes a command by its specification name and an optional timeout")
    func waitMedia() throws {
        #expect(try parse("wait-media toggle-play-pause") == .waitMedia(command: .togglePlayPause, timeoutMs: nil))
        #expect(try parse("wait-media next-track 5000") == .waitMedia(command: .nextTrack, timeoutMs: 5_000))
        #expect(try parse("wait-media volume-down 0x10") == .waitMedia(command: .volumeDown, timeoutMs: 16))
    }

    @Test("time takes a local time and an optional UTC offset in 15-minute steps")
    func time() throws {
        #expect(try parse("time 2026-12-01T22:15:03") == .time(civil(2026, 12, 1, 22, 15, 3), utcOffsetMin: nil))
        #expect(try parse("time 2026-12-01T22:15:03+05:30") == .time(civil(2026, 12, 1, 22, 15, 3), utcOffsetMin: 330))
        #expect(try parse("time 2027-03-28T01:59:59-03:45") == .time(civil(2027, 3, 28, 1, 59, 59), utcOffsetMin: -225))
        #expect(try parse("time 2028-02-29T00:00:00+14:00") == .time(civil(2028, 2, 29, 0, 0, 0), utcOffsetMin: 840))
    }

    @Test("no-ams and no-cts take nothing")
    func noServices() throws {
        #expect(try parse("no-ams") == .noAMS)
        #expect(try parse("No-CTS") == .noCTS)
    }

    @Test("a bad media or time line is refused with its column and the reason", arguments: [
        (line: "media stop", column: 7, kind: ScenarioError.Kind.unknownWord),
        (line: "media", column: 1, kind: .missingArgument(what: "play|pause|unavailable")),
        (line: "media play now", column: 12, kind: .unexpectedArgument),
        (line: "wait-media shuffle", column: 12, kind: .unknownWord),
        (line: "wait-media", column: 1, kind: .missingArgument(what: "command")),
        (line: "wait-media play soon", column: 17, kind: .badNumber),
        (line: "time", column: 1, kind: .missingArgument(what: "YYYY-MM-DDTHH:MM:SS")),
        (line: "time 2026-13-01T00:00:00", column: 6, kind: .badTime),
        (line: "time 2026-02-30T00:00:00", column: 6, kind: .badTime),
        (line: "time 2026-12-01 22:15:03", column: 17, kind: .unexpectedArgument),
        (line: "time 2026-12-01T22:15", column: 22, kind: .badTime),
        (line: "time 2026-12-01T2x:15:03", column: 17, kind: .badTime),
        (line: "time 2026-12-01T22:15:03Z", column: 25, kind: .badTime),
        (line: "time 2026-12-01T22:15:03+05:10", column: 25, kind: .badTime),
        (line: "time 2026-12-01T22:15:03+15:00", column: 25, kind: .badTime),
        (line: "time 2026-12-01T22:15:03+05:00:00", column: 31, kind: .badTime),
        (line: "no-ams now", column: 8, kind: .unexpectedArgument),
    ])
    func refusals(bad: (line: String, column: Int, kind: ScenarioError.Kind)) {
        #expect(parseError(bad.line) == ScenarioError(line: 1, column: bad.column, kind: bad.kind))
    }

    @Test("a loaded script with a bad time names its line")
    func badTimeInScript() {
        var p = PhoneCore(config: .serverOnly())
        #expect(throws: ScenarioError(line: 2, column: 6, kind: .badTime)) { try p.load("media play\ntime yesterday\nquit") }
    }
}
