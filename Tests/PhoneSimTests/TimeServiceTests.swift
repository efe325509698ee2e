// SPDX-License-Identifier: Apache-2.0
// The phone as a Current Time Service server, driven alone with ATT PDUs:
// the service as discovered, security, Current Time and Local Time
// Information read on real bytes, the notification after `time`
// (CTS v1.1; docs/cts.md).

import ATT
import Bounded
import CTS
import PhoneSim
import Testing
import TestSupport

@Suite("CTS: the phone's clock as Current Time server")
struct TimeServiceTests {
    func phone(requiresSecurity: Bool = false) -> PhoneCore {
        var p = PhoneCore(config: .serverOnly(requiresSecurity: requiresSecurity))
        p.linkUp(now: Instant(ms: 0))
        _ = p.takeEvents()
        return p
    }

    @Test("discovery: CTS (0x1805) at 0x0030–0x0035 with Current Time (read, notify, CCCD) and Local Time Information (read)")
    func ctsService() {
        var p = phone()
        #expect(p.exchange("10 29 00 FF FF 00 28") == ["11 06 30 00 35 00 05 18"])
        #expect(p.exchange("10 36 00 FF FF 00 28") == ["01 10 36 00 0A"])
        #expect(p.exchange("06 01 00 FF FF 00 28 05 18") == ["07 30 00 35 00"])
        #expect(p.exchange("08 30 00 35 00 03 28") == ["09 07 31 00 12 32 00 2B 2A 34 00 02 35 00 0F 2A"])
        #expect(p.exchange("04 33 00 33 00") == ["05 01 33 00 02 29"])
    }

    @Test("security: Current Time, its CCCD and Local Time Information get 0x05 until the link is secured (an iPhone serves a bonded accessory)",
          arguments: ["0A 32 00", "0A 35 00", "0A 33 00", "12 33 00 01 00"])
    func securityRequired(request: String) {
        var p = phone(requiresSecurity: true)
        let opcode = String(request.prefix(2))
        let handle = String(request.dropFirst(3).prefix(5))
        #expect(p.exchange(request) == ["01 \(opcode) \(handle) 05"])
    }

    @Test("Current Time reads the phone's local time running on from 2026-12-01 12:00:00: 3.25 s later, Tuesday 12:00:03 and 64/256 s")
    func currentTimeRead() {
        var p = phone()
        #expect(p.exchange("0A 32 00", now: Instant(ms: 3_250)) == ["0B EA 07 0C 01 0C 00 03 02 40 00"])
        #expect(p.takeEvents().last.map(\.text) == "cts-read 2026-12-01T12:00:03 day=2")
        #expect(p.exchange("0A 32 00", now: Instant(ms: 3_600_000)) == ["0B EA 07 0C 01 0D 00 00 02 00 00"], "an hour later")
    }

    @Test("Local Time Information: UTC+00:00 standard time (00 00); after `time ...+01:00` it is 04 00")
    func localTimeInformationRead() throws {
        var p = phone()
        #expect(p.exchange("0A 35 00") == ["0B 00 00"])
        try p.run("time 2026-12-01T22:15:03+01:00")
        #expect(p.exchange("0A 35 00") == ["0B 04 00"])
        #expect(p.utcOffsetMin == 60)
    }

    @Test("`time` notifies Current Time to a subscriber: manual update, plus time zone change when the offset changed")
    func notificationAfterTime() throws {
        var p = phone()
        #expect(p.exchange("12 33 00 01 00") == ["13"])
        try p.run("time 2026-12-01T22:15:03+01:00", now: Instant(ms: 500))
        #expect(p.drain() == ["1B 32 00 EA 07 0C 01 16 0F 03 02 00 05"])
        try p.run("time 2026-12-02T08:00:00", now: Instant(ms: 600))
        #expect(p.drain() == ["1B 32 00 EA 07 0C 02 08 00 00 03 00 01"], "same offset: a manual update only")
        #expect(p.takeEvents().contains { $0.text == "cts-sent 2026-12-02T08:00:00 day=3 adjust=0x01" })
        #expect(p.exchange("0A 32 00", now: Instant(ms: 2_600)) == ["0B EA 07 0C 02 08 00 02 03 00 00"], "and it runs on from there")
    }

    @Test("without a subscription `time` sets the clock and notifies nothing; running on is never notified")
    func noNotificationWithoutSubscription() throws {
        var p = phone()
        try p.run("time 2026-12-01T22:15:03")
        #expect(p.drain() == [])
        #expect(p.exchange("12 33 00 01 00") == ["13"], "nothing owed from before")
        p.advance(now: Instant(ms: 60_000))
        #expect(p.drain() == [])
    }

    @Test("no-cts: the phone has no Current Time Service")
    func noCTS() throws {
        var p = PhoneCore(config: .serverOnly())
        try p.load("no-cts")
        p.linkUp(now: Instant(ms: 0))
        #expect(p.exchange("06 01 00 FF FF 00 28 05 18") == ["01 06 01 00 0A"])
        #expect(p.exchange("0A 32 00") == ["01 0A 32 00 01"])
        #expect(p.exchange("06 01 00 FF FF 00 28 " + Wire.ams) == ["07 20 00 28 00"], "AMS stays")
    }
}
