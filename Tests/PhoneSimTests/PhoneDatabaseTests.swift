// SPDX-License-Identifier: Apache-2.0
import ANCS
import ATT
import Bounded
import PhoneSim
import Testing
import TestSupport

@Suite("The phone's GATT database: byte-exact answers to every discovery request")
struct PhoneDatabaseTests {
    /// A connected phone that only answers (no browsing), secured unless asked.
    func phone(requiresSecurity: Bool = false, pairingDelayMs: Int64 = 100) -> PhoneCore {
        var config = PhoneConfig.serverOnly(requiresSecurity: requiresSecurity)
        config.pairingDelayMs = pairingDelayMs
        var p = PhoneCore(config: config)
        p.linkUp(now: Instant(ms: 0))
        _ = p.takeEvents()
        return p
    }

    @Test("primary services: GAP and GATT (16-bit), then ANCS and AMS (128-bit) each in its own response, CTS, then Attribute Not Found")
    func primaryServices() {
        var p = phone()
        #expect(p.exchange("10 01 00 FF FF 00 28") == ["11 06 01 00 05 00 00 18 06 00 09 00 01 18"])
        #expect(p.exchange("10 0A 00 FF FF 00 28") == ["11 14 10 00 18 00 " + Wire.ancs])
        #expect(p.exchange("10 19 00 FF FF 00 28") == ["11 14 20 00 28 00 " + Wire.ams])
        #expect(p.exchange("10 29 00 FF FF 00 28") == ["11 06 30 00 35 00 05 18"])
        #expect(p.exchange("10 36 00 FF FF 00 28") == ["01 10 36 00 0A"])
        #expect(p.exchange("10 01 00 FF FF 01 28") == ["01 10 01 00 0A"], "no secondary services")
    }

    @Test("Find By Type Value finds ANCS and GATT by UUID; an absent one is Attribute Not Found")
    func findByTypeValue() {
        var p = phone()
        #expect(p.exchange("06 01 00 FF FF 00 28 " + Wire.ancs) == ["07 10 00 18 00"])
        #expect(p.exchange("06 01 00 FF FF 00 28 01 18") == ["07 06 00 09 00"])
        #expect(p.exchange("06 01 00 FF FF 00 28 0F 18") == ["01 06 01 00 0A"])
    }

    @Test("characteristic declarations: 16-bit ones together, 128-bit ones apart; at MTU 23 one ANCS characteristic per response")
    func characteristicsAtMTU23() {
        var p = phone()
        #expect(p.exchange("08 01 00 FF FF 03 28") == ["09 07 02 00 02 03 00 00 2A 04 00 02 05 00 01 2A 07 00 20 08 00 05 2A"])
        #expect(p.exchange("08 08 00 18 00 03 28") == ["09 15 11 00 10 12 00 " + Wire.ns])
        #expect(p.exchange("08 12 00 18 00 03 28") == ["09 15 14 00 08 15 00 " + Wire.cp])
        #expect(p.exchange("08 15 00 18 00 03 28") == ["09 15 16 00 10 17 00 " + Wire.ds])
        #expect(p.exchange("08 17 00 18 00 03 28") == ["01 08 17 00 0A"])
    }

    @Test("after an MTU exchange at 185 all three ANCS characteristics come in one response")
    func characteristicsAtMTU185() {
        var p = phone()
        #expect(p.exchange("02 05 02") == ["03 B9 00"])
        #expect(p.bearer.mtu == 185)
        #expect(p.exchange("08 11 00 18 00 03 28") == [
            "09 15 11 00 10 12 00 \(Wire.ns) 14 00 08 15 00 \(Wire.cp) 16 00 10 17 00 \(Wire.ds)"
        ])
    }

    @Test("Find Information: format 1 for 16-bit types, format 2 for 128-bit, never mixed")
    func findInformation() {
        var p = phone()
        #expect(p.exchange("04 09 00 09 00") == ["05 01 09 00 02 29"])
        #expect(p.exchange("04 11 00 13 00") == ["05 01 11 00 03 28"])
        #expect(p.exchange("04 12 00 13 00") == ["05 02 12 00 " + Wire.ns])
        #expect(p.exchange("04 13 00 13 00") == ["05 01 13 00 02 29"])
        #expect(p.exchange("04 0A 00 0F 00") == ["01 04 0A 00 0A"], "the unused handles hold nothing")
    }

    @Test("reads: Device Name \"iPhone\", Appearance Generic Phone, blob offsets; notify- and write-only values are Read Not Permitted")
    func reads() {
        var p = phone()
        #expect(p.exchange("0A 03 00") == ["0B " + toHex(text: "iPhone")])
        #expect(p.exchange("08 01 00 FF FF 00 2A") == ["09 08 03 00 " + toHex(text: "iPhone")])
        #expect(p.exchange("0A 05 00") == ["0B 40 00"])
        #expect(p.exchange("0C 03 00 02 00") == ["0D " + toHex(text: "hone")])
        #expect(p.exchange("0C 03 00 06 00") == ["0D"])
        #expect(p.exchange("0C 03 00 07 00") == ["01 0C 03 00 07"])
        #expect(p.exchange("0A 08 00") == ["01 0A 08 00 02"])
        #expect(p.exchange("0A 12 00") == ["01 0A 12 00 02"])
        #expect(p.exchange("0A 15 00") == ["01 0A 15 00 02"])
        #expect(p.exchange("0A 09 00") == ["0B 00 00"])
        #expect(p.exchange("0A 0B 00") == ["01 0A 0B 00 01"])
    }

    @Test("errors: invalid range, unsupported group type, write not permitted, CCCD length, unsupported request")
    func errors() {
        var p = phone()
        #expect(p.exchange("10 00 00 FF FF 00 28") == ["01 10 00 00 01"])
        #expect(p.exchange("08 05 00 01 00 03 28") == ["01 08 05 00 01"])
        #expect(p.exchange("10 01 00 FF FF 03 28") == ["01 10 01 00 10"])
        #expect(p.exchange("12 03 00 41") == ["01 12 03 00 03"])
        #expect(p.exchange("12 12 00 01 00") == ["01 12 12 00 03"])
        #expect(p.exchange("12 09 00 02") == ["01 12 09 00 0D"])
        #expect(p.exchange("12 40 00 01 00") == ["01 12 40 00 01"])
        #expect(p.exchange("0E 03 00 05 00") == ["01 0E 00 00 06"], "Read Multiple is not supported")
        #expect(p.exchange("0A 03") == ["01 0A 00 00 04"], "a malformed request is Invalid PDU")
    }

    @Test("CCCD writes report subscriptions; a Write Command to a CCCD subscribes without an answer")
    func subscriptions() {
        var p = phone()
        #expect(p.exchange("12 09 00 02 00") == ["13"])
        #expect(p.exchange("52 18 00 01 00") == [])
        #expect(p.exchange("12 13 00 01 00") == ["13"])
        #expect(p.takeEvents() == [
            .subscribed(.serviceChanged), .subscribed(.dataSource), .subscribed(.notificationSource), .replayFinished(count: 0),
        ])
        #expect(p.exchange("12 13 00 00 00") == ["13"])
        #expect(p.takeEvents() == [.unsubscribed(.notificationSource)])
        #expect(p.isSubscribed(.dataSource) == true)
    }

    @Test("security: ANCS CCCDs and the Control Point get 0x05 until pairing completes; PDUs during pairing are held, then answered")
    func securityHoldsUntilPaired() {
        var p = phone(requiresSecurity: true, pairingDelayMs: 150)
        #expect(p.exchange("12 09 00 02 00") == ["13"], "Service Changed needs no security")
        #expect(p.exchange("0A 13 00") == ["01 0A 13 00 05"])
        #expect(p.takeEvents() == [
            .subscribed(.serviceChanged), .errorAnswered(handle: 0x13, code: 0x05, reason: "not-secured"), .pairingStarted,
        ])
        #expect(p.exchange("12 13 00 01 00", now: Instant(ms: 10)) == [], "held while pairing")
        #expect(p.deadline == Instant(ms: 150))
        p.advance(now: Instant(ms: 149))
        #expect(p.drain() == [])
        p.advance(now: Instant(ms: 150))
        #expect(p.drain() == ["13"])
        #expect(p.takeEvents() == [.secured(newlyPaired: true), .subscribed(.notificationSource), .replayFinished(count: 0)])
        #expect(p.isBonded == true)
        #expect(p.exchange("12 15 00 07", now: Instant(ms: 200)) == ["01 12 15 00 A0"], "the Control Point answers now")
    }

    @Test("a bonded phone is secured at the next connection; forgetting the bond pairs again")
    func bondSurvivesReconnection() {
        var p = phone(requiresSecurity: true, pairingDelayMs: 0)
        #expect(p.exchange("12 18 00 01 00") == ["01 12 18 00 05"])
        #expect(p.exchange("12 18 00 01 00") == ["13"], "pairing of 0 ms is done at once")
        p.linkDown(reason: "test", now: Instant(ms: 1))
        p.linkUp(now: Instant(ms: 2))
        #expect(p.takeEvents().suffix(2) == [.connected(bonded: true), .secured(newlyPaired: false)])
        #expect(p.exchange("12 18 00 01 00") == ["13"])
        p.forgetBond()
        p.linkUp(now: Instant(ms: 3))
        #expect(p.exchange("12 18 00 01 00") == ["01 12 18 00 05"])
    }

    @Test("ANCS removed: its handles do not exist and discovery finds nothing")
    func ancsRemoved() throws {
        var p = phone()
        try p.run("remove-ancs")
        #expect(p.ancsPresent == false)
        #expect(p.exchange("06 01 00 FF FF 00 28 " + Wire.ancs) == ["01 06 01 00 0A"])
        #expect(p.exchange("10 0A 00 1F 00 00 28") == ["01 10 0A 00 0A"])
        #expect(p.exchange("0A 12 00") == ["01 0A 12 00 01"])
        #expect(p.exchange("04 0A 00 1F 00") == ["01 04 0A 00 0A"])
        try p.run("add-ancs")
        #expect(p.exchange("06 01 00 FF FF 00 28 " + Wire.ancs) == ["07 10 00 18 00"])
    }

    @Test("removing ANCS ends both subscriptions: the Data Source response not yet sent is dropped, Service Changed is indicated")
    func ancsRemovedWhileSubscribed() throws {
        var p = phone()
        try p.run("existing Social uid=1 title=\"Hello\"")
        #expect(p.exchange("12 09 00 02 00") == ["13"])
        _ = p.subscribeANCS()
        _ = p.takeEvents()
        p.receive(hex("12 15 00 00 01 00 00 00 01 10 00").span, now: Instant(ms: 0))
        try p.run("remove-ancs")
        #expect(p.drain() == ["13", "1D 08 00 10 00 18 00"])
        #expect(p.takeEvents() == [
            .controlPointWrite(ControlPointBytes(hex("00 01 00 00 00 01 10 00").span)),
            .ancsRemoved, .unsubscribed(.dataSource), .unsubscribed(.notificationSource),
            .stepDone(line: 2, command: "remove-ancs"), .serviceChangedIndicated(start: 0x10, end: 0x18),
        ])
        #expect(p.isSubscribed(.dataSource) == false && p.isSubscribed(.notificationSource) == false)
    }

    @Test("Service Changed is indicated only to a subscriber, one indication at a time until confirmed")
    func serviceChangedIndications() throws {
        var p = phone()
        try p.run("service-changed")
        #expect(p.drain() == [])
        #expect(p.takeEvents().contains(.dropped(what: "service-changed", reason: "not-subscribed")))
        #expect(p.exchange("12 09 00 02 00") == ["13"])
        try p.run("service-changed")
        try p.run("service-changed")
        #expect(p.drain() == ["1D 08 00 10 00 18 00"])
        #expect(p.exchange("1E") == ["1D 08 00 10 00 18 00"], "the second waits for the first confirmation")
        #expect(p.exchange("1E") == [])
        #expect(p.takeEvents().filter { $0 == .indicationConfirmed }.count == 2)
    }

    @Test("an indication never confirmed ends the link after 30 s, as ATT requires")
    func indicationTimeout() throws {
        var p = phone()
        #expect(p.exchange("12 09 00 02 00") == ["13"])
        try p.run("remove-ancs")
        #expect(p.drain() == ["1D 08 00 10 00 18 00"])
        #expect(p.deadline == Instant(ms: 30_000))
        p.advance(now: Instant(ms: 30_000))
        #expect(p.takeActions() == [.disconnect(reason: "indication-timeout")])
        #expect(p.isConnected == false)
    }
}
