// SPDX-License-Identifier: Apache-2.0
import ANCS
import ATT
import Bounded
import PhoneSim
import Testing
import TestSupport

/// The Data Source notifications that carry `response` at MTU 23.
func dataSourceFragments(_ response: [UInt8], mtu: Int = 23) -> [String] {
    stride(from: 0, to: response.count, by: mtu - 3).map { start in
        "1B 17 00 " + toHex(Array(response[start..<min(response.count, start + mtu - 3)]))
    }
}

func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }

@Suite("Control Point: commands answered on Data Source or with the right error")
struct ControlPointTests {
    /// A phone with Data Source and Notification Source subscribed at MTU 23.
    func phone(_ script: String) -> PhoneCore {
        var p = PhoneCore(config: .serverOnly())
        p.linkUp(now: Instant(ms: 0))
        do {
            try p.load(script)
        } catch {
            preconditionFailure("script: \(error.kind)")
        }
        _ = p.subscribeANCS()
        _ = p.takeEvents()
        return p
    }

    @Test("Get Notification Attributes: Write Response, then the tuples in the order asked, split at MTU − 3")
    func notificationAttributes() {
        var p = phone("existing Social uid=1 app=com.x title=\"Hello\" message=\"World!\"")
        let sent = p.exchange("12 15 00 00 01 00 00 00 03 10 00 01 10 00 00 05 04")
        let response: [UInt8] = [0x00, 0x01, 0, 0, 0]
            + [3] + le16(6) + Array("World!".utf8)
            + [1] + le16(5) + Array("Hello".utf8)
            + [0] + le16(5) + Array("com.x".utf8)
            + [5] + le16(15) + Array("20260101T120000".utf8)
            + [4] + le16(1) + Array("6".utf8)
        #expect(sent == ["13"] + dataSourceFragments(response))
        #expect(p.takeEvents() == [
            .controlPointWrite(ControlPointBytes(hex("00 01 00 00 00 03 10 00 01 10 00 00 05 04").span)),
            .dataSourceSent(byteCount: response.count, fragmentCount: 3),
        ])
    }

    @Test("missing attributes have length 0 and repeats are answered as asked")
    func missingAndRepeated() {
        var p = phone("existing Other uid=2 title=\"T\"")
        #expect(p.exchange("12 15 00 00 02 00 00 00 02 05 00 06 01 05 00 01 05 00") == [
            "13", "1B 17 00 00 02 00 00 00 02 00 00 06 00 00 01 01 00 54 01 01 00 54",
        ])
    }

    @Test("values are cut to the requested maximum without splitting a UTF-8 character")
    func cutAtCharacterBoundary() {
        var p = phone("existing Social uid=1 title=\"héllo\"")
        #expect(p.exchange("12 15 00 00 01 00 00 00 01 02 00") == ["13", "1B 17 00 00 01 00 00 00 01 01 00 68"])
        #expect(p.exchange("12 15 00 00 01 00 00 00 01 03 00") == ["13", "1B 17 00 00 01 00 00 00 01 03 00 68 C3 A9"])
    }

    @Test("Get App Attributes answers the display name from the app table")
    func appAttributes() {
        var p = phone("app com.example.chat \"Chat\"")
        let id = Array("com.example.chat".utf8)
        let sent = p.exchange("12 15 00 01 " + toHex(id) + " 00 00")
        #expect(sent == ["13"] + dataSourceFragments([1] + id + [0, 0] + le16(4) + Array("Chat".utf8)))
        #expect(p.exchange("12 15 00 01 " + toHex(text: "com.apple.mobilephone") + " 00 00").count == 3, "Phone is preloaded")
    }

    @Test("Perform Notification Action: Write Response, then Removed on Notification Source with the new CategoryCount")
    func performAction() {
        var p = phone("""
            existing Social uid=1 flags=negative
            existing Social uid=2
            """)
        #expect(p.exchange("12 15 00 02 01 00 00 00 01") == ["13", "1B 12 00 02 10 04 01 01 00 00 00"])
        #expect(p.takeEvents().contains(.actionPerformed(uid: 1, action: .negative)))
        #expect(p.notificationCount == 1)
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        var write: String
        var code: UInt8
        var why: String
        var testDescription: String { why }
    }

    @Test("refusals: 0xA0 unknown command, 0xA1 malformed, 0xA2 invalid parameter, 0xA3 action not offered; nothing on Data Source", arguments: [
        Refusal(write: "07", code: 0xA0, why: "unknown CommandID"),
        Refusal(write: "", code: 0xA1, why: "empty write"),
        Refusal(write: "00 01 00 00", code: 0xA1, why: "Get Notification Attributes too short"),
        Refusal(write: "00 01 00 00 00 01 40", code: 0xA1, why: "MaxLen cut short"),
        Refusal(write: "00 01 00 00 00 09", code: 0xA2, why: "unknown attribute ID"),
        Refusal(write: "00 63 00 00 00 00", code: 0xA2, why: "unknown UID"),
        Refusal(write: "01 78 79 7A", code: 0xA1, why: "app identifier without NUL"),
        Refusal(write: "01 78 79 7A 00", code: 0xA1, why: "Get App Attributes without attributes"),
        Refusal(write: "01 78 79 7A 00 00", code: 0xA2, why: "unknown app"),
        Refusal(write: "01 " + toHex(text: "com.apple.mobilemail") + " 00 05", code: 0xA2, why: "unknown app attribute"),
        Refusal(write: "02 01 00 00 00", code: 0xA1, why: "action too short"),
        Refusal(write: "02 01 00 00 00 07", code: 0xA2, why: "unknown ActionID"),
        Refusal(write: "02 63 00 00 00 00", code: 0xA2, why: "action on an unknown UID"),
        Refusal(write: "02 01 00 00 00 00", code: 0xA3, why: "positive action not offered"),
    ])
    func refusals(_ refusal: Refusal) {
        var p = phone("existing Social uid=1 flags=negative")
        #expect(p.exchange("12 15 00 " + refusal.write) == ["01 12 15 00 " + toHex([refusal.code])])
        let events = p.takeEvents()
        #expect(events.count == 2)
        #expect(events.last.map { if case .errorAnswered(0x15, refusal.code, _) = $0 { true } else { false } } == true)
        #expect(p.notificationCount == 1)
    }

    @Test("error <code> <count> answers the next writes with that code, then the phone answers normally again")
    func scriptedErrors() throws {
        var p = phone("existing Social uid=1 flags=negative")
        try p.run("error 0x0E 2")
        #expect(p.exchange("12 15 00 02 01 00 00 00 01") == ["01 12 15 00 0E"])
        #expect(p.exchange("12 15 00 02 01 00 00 00 01") == ["01 12 15 00 0E"])
        #expect(p.exchange("12 15 00 02 01 00 00 00 01") == ["13", "1B 12 00 02 10 04 00 01 00 00 00"])
    }

    @Test("a response with no Data Source subscription is acknowledged and dropped")
    func noDataSourceSubscription() {
        var p = phone("existing Social uid=1 title=\"T\"")
        #expect(p.exchange("12 18 00 00 00") == ["13"])
        #expect(p.exchange("12 15 00 00 01 00 00 00 00") == ["13"])
        #expect(p.takeEvents().contains(.dropped(what: "data-source", reason: "not-subscribed")))
    }

    @Test("a Control Point Write Command is logged and ignored: the characteristic is write-with-response only")
    func writeCommandIgnored() {
        var p = phone("existing Social uid=1 flags=negative")
        #expect(p.exchange("52 15 00 02 01 00 00 00 01") == [])
        #expect(p.notificationCount == 1)
        #expect(p.counters.controlPointCommandsIgnored == 1)
    }
}

@Suite("Notification Source: replay, Added/Modified/Removed and category counts")
struct NotificationSourceTests {
    func phone(capacity: Int = 128) -> PhoneCore {
        var config = PhoneConfig.serverOnly()
        config.notificationCapacity = capacity
        var p = PhoneCore(config: config)
        p.linkUp(now: Instant(ms: 0))
        _ = p.takeEvents()
        return p
    }

    @Test("subscribing replays the existing notifications in UID order with PreExisting and counts at send time")
    func replayInUIDOrder() throws {
        var p = phone()
        try p.load("""
            existing Social uid=3
            existing Email uid=1
            existing Social uid=2 flags=important
            """)
        #expect(p.subscribeANCS() == [
            "13", "13",
            "1B 12 00 00 04 06 01 01 00 00 00",
            "1B 12 00 00 06 04 02 02 00 00 00",
            "1B 12 00 00 04 04 02 03 00 00 00",
        ])
        #expect(p.takeEvents().last == .replayFinished(count: 3))
    }

    @Test("nothing is sent before Notification Source is subscribed; what was posted is replayed at subscription")
    func notSentBeforeSubscription() throws {
        var p = phone()
        try p.run("notify Social uid=1")
        #expect(p.drain() == [])
        #expect(p.subscribeANCS() == ["13", "13", "1B 12 00 00 04 04 01 01 00 00 00"])
    }

    @Test("Added, then Modified for the same UID (with the new category's count), then Removed with the count after removal")
    func addedModifiedRemoved() throws {
        var p = phone()
        _ = p.subscribeANCS()
        try p.run("notify Social uid=1 flags=silent")
        #expect(p.drain() == ["1B 12 00 00 01 04 01 01 00 00 00"])
        try p.run("notify Email uid=1")
        #expect(p.drain() == ["1B 12 00 01 00 06 01 01 00 00 00"])
        #expect(p.categoryCount(.social) == 0)
        try p.run("remove 1")
        #expect(p.drain() == ["1B 12 00 02 00 06 00 01 00 00 00"])
    }

    @Test("a notification posted during the replay comes after it, exactly once")
    func postedDuringReplay() throws {
        var p = phone()
        try p.load("existing Social uid=1\nexisting Social uid=2")
        #expect(p.exchange("12 18 00 01 00") == ["13"])
        p.receive(hex("12 13 00 01 00").span, now: Instant(ms: 0))
        var out = ByteBuffer(capacity: 600)
        #expect(p.popOutgoing(into: &out) == true)
        #expect(p.popOutgoing(into: &out) == true)
        #expect(toHex(out.toArray()) == "1B 12 00 00 04 04 02 01 00 00 00")
        try p.run("notify Social uid=3")
        #expect(p.drain() == ["1B 12 00 00 04 04 03 02 00 00 00", "1B 12 00 00 00 04 03 03 00 00 00"])
    }

    @Test("unsubscribing ends the session: queued events go, the next subscription replays")
    func unsubscribeEndsSession() throws {
        var p = phone()
        _ = p.subscribeANCS()
        try p.run("notify Social uid=1")
        #expect(p.exchange("12 13 00 00 00") == ["13"], "the Added queued behind the answer is dropped")
        #expect(p.exchange("12 13 00 01 00") == ["13", "1B 12 00 00 04 04 01 01 00 00 00"])
    }

    @Test("a full store evicts the oldest notification and announces it Removed")
    func storeFullEvictsOldest() throws {
        var p = phone(capacity: 2)
        _ = p.subscribeANCS()
        try p.run("notify Social uid=1")
        try p.run("notify Social uid=2")
        _ = p.drain()
        try p.run("notify Email uid=3")
        #expect(p.drain() == ["1B 12 00 02 00 04 01 01 00 00 00", "1B 12 00 00 00 06 01 03 00 00 00"])
        #expect(p.notification(uid: 1) == nil)
        #expect(p.counters.notificationsEvicted == 1)
    }

    @Test("a UID from a scenario without uid= is one above the highest posted")
    func automaticUIDs() throws {
        var p = phone()
        _ = p.subscribeANCS()
        try p.run("notify Social uid=41")
        try p.run("call \"Bob\"")
        try p.run("message \"Alice\" \"hi\"")
        #expect(p.drain() == [
            "1B 12 00 00 00 04 01 29 00 00 00",
            "1B 12 00 00 18 01 01 2A 00 00 00",
            "1B 12 00 00 10 04 02 2B 00 00 00",
        ])
    }
}
