// SPDX-License-Identifier: Apache-2.0
// The Current Time Service values on real bytes, the calendar arithmetic,
// the phone's clock kept against the monotonic clock, and daily windows
// across midnight.

import Bounded
import CTS
import Testing
import TestSupport

func currentTime(_ bytes: [UInt8]) throws(CTSError) -> CurrentTime { try CurrentTime.decode(bytes.span) }
func localTimeInformation(_ bytes: [UInt8]) throws(CTSError) -> LocalTimeInformation { try LocalTimeInformation.decode(bytes.span) }

@Suite("CTS: Current Time and Local Time Information, the phone's clock, daily windows")
struct CTSTests {
    @Test("Current Time EA 07 0C 01 16 0F 03 02 00 00 is Tuesday 2026-12-01 22:15:03, no adjustment")
    func currentTimeDecodes() throws {
        let time = try currentTime(hex("EA 07 0C 01 16 0F 03 02 00 00"))
        #expect(time.local == CivilDateTime(year: 2026, month: 12, day: 1, hour: 22, minute: 15, second: 3))
        #expect(time.dayOfWeek == 2)
        #expect(time.adjustReason.isEmpty)
    }

    @Test("the adjust reason says why the phone notified: a manual change, a time zone change, a DST change")
    func adjustReasonBits() throws {
        let time = try currentTime(hex("EA 07 03 1D 03 00 00 07 80 0D"))
        #expect(time.adjustReason == [.manualTimeUpdate, .timeZoneChange, .dstChange])
        #expect(time.fractions256 == 0x80)
    }

    @Test("a short value, a month 13, a 30 February or an unknown year (0) is an error value, not a guess")
    func badCurrentTimeIsAnError() {
        #expect(throws: CTSError.wrongLength(9)) { try currentTime(hex("EA 07 0C 01 16 0F 03 02 00")) }
        #expect(throws: CTSError.fieldOutOfRange) { try currentTime(hex("EA 07 0D 01 16 0F 03 02 00 00")) }
        #expect(throws: CTSError.fieldOutOfRange) { try currentTime(hex("EA 07 02 1E 16 0F 03 02 00 00")) }
        #expect(throws: CTSError.fieldOutOfRange) { try currentTime(hex("00 00 0C 01 16 0F 03 02 00 00")) }
        #expect(throws: CTSError.fieldOutOfRange) { try currentTime(hex("EA 07 0C 01 18 00 00 02 00 00")) }
    }

    @Test("Local Time Information 04 00 is UTC+1 standard time; 04 04 is UTC+2 (summer); 00 FF is UTC, DST unknown")
    func localTimeInformationDecodes() throws {
        #expect(try localTimeInformation(hex("04 00")).utcOffsetMin == 60)
        #expect(try localTimeInformation(hex("04 04")).utcOffsetMin == 120)
        let unknownDST = try localTimeInformation(hex("00 FF"))
        #expect(unknownDST.dstMin == nil && unknownDST.utcOffsetMin == 0)
        #expect(try localTimeInformation(hex("EC 00")).utcOffsetMin == -300, "-20 × 15 min: New York, standard time")
        #expect(try localTimeInformation(hex("16 00")).utcOffsetMin == 330, "22 × 15 min: India")
    }

    @Test("an unknown time zone (-128), one outside -48...56 or a DST code other than 0, 2, 4, 8, 255 is an error value")
    func badLocalTimeInformationIsAnError() {
        #expect(throws: CTSError.unknownTimeZone) { try localTimeInformation(hex("80 00")) }
        #expect(throws: CTSError.fieldOutOfRange) { try localTimeInformation(hex("39 00")) }
        #expect(throws: CTSError.fieldOutOfRange) { try localTimeInformation(hex("04 03")) }
        #expect(throws: CTSError.wrongLength(3)) { try localTimeInformation(hex("04 00 00")) }
    }

    @Test("civil dates and seconds since 1970 convert both ways, leap days and the century rules included")
    func calendarArithmetic() throws {
        let epoch = try #require(CivilDateTime(year: 1970, month: 1, day: 1, hour: 0, minute: 0, second: 0))
        #expect(epoch.secondsSinceEpoch == 0)
        let leap = try #require(CivilDateTime(year: 2024, month: 2, day: 29, hour: 12, minute: 0, second: 0))
        #expect(leap.secondsSinceEpoch == 1_709_208_000)
        #expect(CivilDateTime(secondsSinceEpoch: 1_709_208_000) == leap)
        #expect(CivilDateTime(year: 2100, month: 2, day: 29, hour: 0, minute: 0, second: 0) == nil, "2100 is not a leap year")
        #expect(CivilDateTime(year: 2000, month: 2, day: 29, hour: 0, minute: 0, second: 0) != nil, "2000 is")
        for seconds: Int64 in [-86_401, -1, 0, 951_782_400, 4_102_444_799, 253_402_300_799] {
            #expect(CivilDateTime(secondsSinceEpoch: seconds).secondsSinceEpoch == seconds)
        }
    }

    @Test("the phone's clock runs on with the monotonic clock: 22:15:03 learned, 50 min later it is 23:05:03, and across midnight the date turns")
    func phoneClockRunsOnTheMonotonicClock() throws {
        var clock = PhoneClock()
        #expect(clock.local(at: Instant(ms: 5_000)) == nil, "unknown until the phone says")
        let t0 = Instant(ms: 1_000_000)
        #expect(clock.learn(try currentTime(hex("EA 07 0C 01 16 0F 03 02 00 00")), at: t0) == nil)
        #expect(clock.local(at: t0.advanced(byMs: 50 * 60_000)) == CivilDateTime(year: 2026, month: 12, day: 1, hour: 23, minute: 5, second: 3))
        #expect(clock.local(at: t0.advanced(byMs: 2 * 3_600_000)) == CivilDateTime(year: 2026, month: 12, day: 2, hour: 0, minute: 15, second: 3))
        #expect(clock.local(at: t0.advanced(byMs: 999))?.second == 3, "whole seconds only")
    }

    @Test("a DST change or a manual change notified by the phone moves the clock; the jump is reported in seconds")
    func phoneClockFollowsChanges() throws {
        var clock = PhoneClock()
        let t0 = Instant(ms: 1_000_000)
        clock.learn(try currentTime(hex("EA 07 03 1D 01 3B 3B 07 00 00")), at: t0)  // 2026-03-29 01:59:59
        clock.learn(try localTimeInformation(hex("04 00")))
        #expect(clock.utcOffsetMin == 60)
        // One second later the phone springs forward: 03:00:00, DST on.
        let jump = clock.learn(try currentTime(hex("EA 07 03 1D 03 00 00 07 00 08")), at: t0.advanced(byMs: 1_000))
        clock.learn(try localTimeInformation(hex("04 04")))
        #expect(jump == 3_600, "the hour skipped")
        #expect(clock.utcOffsetMin == 120)
        #expect(clock.local(at: t0.advanced(byMs: 61_000))?.minuteOfDay == 3 * 60 + 1)
        // The user sets the phone 10 minutes back.
        let back = clock.learn(try currentTime(hex("EA 07 03 1D 02 3B 00 07 00 01")), at: t0.advanced(byMs: 61_000))
        #expect(back == -120, "03:01:00 -> 02:59:00")
    }

    @Test("the phone's side: Tuesday 2026-12-01 22:15:03 with a manual update and a zone change encodes as EA 07 0C 01 16 0F 03 02 00 05 and decodes back")
    func currentTimeEncodes() throws {
        let local = try #require(CivilDateTime(year: 2026, month: 12, day: 1, hour: 22, minute: 15, second: 3))
        let time = CurrentTime(local: local, adjustReason: [.manualTimeUpdate, .timeZoneChange])
        let wire = time.encoded()
        #expect(toHex((0..<wire.count).map { wire[$0] }) == "EA 07 0C 01 16 0F 03 02 00 05")
        #expect(try CurrentTime.decode(wire.span) == time)
    }

    @Test("the day of week is CTS's: 1970-01-01 a Thursday (4), 2026-12-01 a Tuesday (2), 2026-12-06 a Sunday (7), 1600-03-01 a Wednesday (3)")
    func dayOfWeek() throws {
        #expect(try #require(CivilDateTime(year: 1970, month: 1, day: 1, hour: 0, minute: 0, second: 0)).dayOfWeek == 4)
        #expect(try #require(CivilDateTime(year: 2026, month: 12, day: 1, hour: 23, minute: 59, second: 59)).dayOfWeek == 2)
        #expect(try #require(CivilDateTime(year: 2026, month: 12, day: 6, hour: 0, minute: 0, second: 0)).dayOfWeek == 7)
        #expect(try #require(CivilDateTime(year: 1600, month: 3, day: 1, hour: 12, minute: 0, second: 0)).dayOfWeek == 3)
    }

    @Test("Local Time Information encodes UTC+1 as 04 00, UTC-3:45 as F1 00, summer time UTC+2 as 04 04, an unknown DST as FF")
    func localTimeInformationEncodes() throws {
        func wire(_ info: LocalTimeInformation) -> String {
            let bytes = info.encoded()
            return toHex((0..<bytes.count).map { bytes[$0] })
        }
        #expect(wire(LocalTimeInformation(timeZoneMin: 60, dstMin: 0)) == "04 00")
        #expect(wire(LocalTimeInformation(timeZoneMin: -225, dstMin: 0)) == "F1 00")
        #expect(wire(LocalTimeInformation(timeZoneMin: 60, dstMin: 60)) == "04 04")
        #expect(wire(LocalTimeInformation(timeZoneMin: 0, dstMin: nil)) == "00 FF")
        let back = LocalTimeInformation(timeZoneMin: -225, dstMin: 30).encoded()
        #expect(try LocalTimeInformation.decode(back.span) == LocalTimeInformation(timeZoneMin: -225, dstMin: 30))
    }
}
