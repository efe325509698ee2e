// SPDX-License-Identifier: Apache-2.0
// The link alone with a bonded phone's cached handles, byte by byte: the
// Database Hash check, a hash that changed, a cached handle refused, and
// the cache file's text.

import ANCS
import ATT
import Bounded
import Firmware
import GATT
import Mgmt
import Testing
import TestSupport

/// The simulated iPhone's layout (PhoneDatabase.swift), as a first link
/// would have found it, with a Database Hash at 0x000B.
func cachedIPhoneHandles(hash: [UInt8]? = Array(0x10...0x1F)) -> PhoneHandles {
    var h = PhoneHandles()
    var gatt = DiscoveredService(start: 0x0006, end: 0x000B)
    gatt.characteristics[0] = DiscoveredCharacteristic(
        uuid: .uuid16(GATTUUID.serviceChanged), declarationHandle: 0x0007, valueHandle: 0x0008, properties: .indicate, endHandle: 0x0009,
        cccdHandle: 0x0009)
    gatt.characteristics[1] = DiscoveredCharacteristic(
        uuid: .uuid16(GATTUUID.databaseHash), declarationHandle: 0x000A, valueHandle: 0x000B, properties: .read, endHandle: 0x000B,
        cccdHandle: 0)
    h.genericAttribute = gatt
    var ancs = DiscoveredService(start: 0x0010, end: 0x0018)
    ancs.characteristics[0] = DiscoveredCharacteristic(
        uuid: .uuid128(ANCSUUID.notificationSource), declarationHandle: 0x0011, valueHandle: 0x0012, properties: .notify,
        endHandle: 0x0013, cccdHandle: 0x0013)
    ancs.characteristics[1] = DiscoveredCharacteristic(
        uuid: .uuid128(ANCSUUID.controlPoint), declarationHandle: 0x0014, valueHandle: 0x0015, properties: .write, endHandle: 0x0015,
        cccdHandle: 0)
    ancs.characteristics[2] = DiscoveredCharacteristic(
        uuid: .uuid128(ANCSUUID.dataSource), declarationHandle: 0x0016, valueHandle: 0x0017, properties: .notify, endHandle: 0x0018,
        cccdHandle: 0x0018)
    h.ancs = ancs
    if let hash {
        var bytes = InlineBytes<16>()
        for b in hash { bytes.append(b) }
        h.databaseHash = bytes
    }
    return h
}

/// One PhoneLink, driven by hand.
struct LinkDriverRig: ~Copyable {
    var link: PhoneLink
    var recorder = LinkEventRecorder(capacity: 256)
    var effects = Effects(sink: NoSink())
    var now = Instant(ms: 1_000)
    var events: [LinkEvent] = []

    init() {
        link = PhoneLink(config: scriptedLinkConfig())
    }

    mutating func drain() { while let e = recorder.next() { events.append(e) } }

    /// The next PDU the wearable sends, as hex ("" when none).
    mutating func sent() -> String {
        var out = ByteBuffer(capacity: 600)
        return link.popOutgoing(into: &out) ? out.hexString : ""
    }

    mutating func phone(_ pdu: String) {
        let bytes = hex(pdu)
        link.receive(bytes.span, now: now, handler: &recorder, effects: &effects)
        drain()
    }

    mutating func bondedLinkUp(offering handles: PhoneHandles) {
        link.linkUp(now: now, bonded: true, handler: &recorder, effects: &effects)
        link.offerHandles(handles)
        drain()
    }

    mutating func encrypt() {
        link.securityChanged(encrypted: true, now: now, handler: &recorder, effects: &effects)
        drain()
    }
}

@Suite("A bonded reconnection from cached handles, byte by byte")
struct HandleCacheLinkTests {
    static let hashRead = "08 01 00 FF FF 2A 2B"
    static let hashAnswer = "09 12 0B 00 10 11 12 13 14 15 16 17 18 19 1A 1B 1C 1D 1E 1F"
    /// Find By Type Value for the Generic Attribute service: discovery from the start.
    static let gattDiscovery = "06 01 00 FF FF 00 28 01 18"

    @Test("the same Database Hash: one Read By Type, then (encrypted) the Data Source and Notification Source CCCDs: live in 4 requests")
    func sameHashGoesLive() {
        var rig = LinkDriverRig()
        rig.bondedLinkUp(offering: cachedIPhoneHandles())
        #expect(rig.sent().hasPrefix("02 "))
        rig.phone("03 B9 00")
        #expect(rig.sent() == Self.hashRead)
        rig.phone(Self.hashAnswer)
        #expect(rig.sent() == "", "nothing is subscribed before the link is encrypted")
        #expect(rig.link.state == .awaitingEncryption)
        rig.encrypt()
        #expect(rig.sent() == "12 18 00 01 00")
        rig.phone("13")
        #expect(rig.sent() == "12 13 00 01 00")
        rig.phone("13")
        #expect(rig.link.state == .live)
        #expect(rig.events.contains(.handles(.cached)))
        #expect(rig.events.contains(.discovered))
        // Notification Source at the cached handle reaches the session.
        rig.phone("1B 12 00 00 00 01 01 07 00 00 00")
        #expect(rig.events.contains { if case .notification(.added(let r, _)) = $0 { r.uid == 7 } else { false } })
    }

    @Test("another Database Hash: the cache is dropped and the phone discovered from the Generic Attribute service")
    func otherHashDiscoversAgain() {
        var rig = LinkDriverRig()
        rig.bondedLinkUp(offering: cachedIPhoneHandles())
        _ = rig.sent()
        rig.phone("03 B9 00")
        #expect(rig.sent() == Self.hashRead)
        rig.phone("09 12 0B 00 AA 11 12 13 14 15 16 17 18 19 1A 1B 1C 1D 1E 1F")
        #expect(rig.sent() == Self.gattDiscovery)
        #expect(rig.events.contains(.handles(.stale(.hashChanged))))
        #expect(rig.link.counters.handleCacheStale == 1)
    }

    @Test("no Database Hash kept: no validation; a cached CCCD answered Attribute Not Found sends the link back to discovery")
    func refusedHandleDiscoversAgain() {
        var rig = LinkDriverRig()
        rig.bondedLinkUp(offering: cachedIPhoneHandles(hash: nil))
        _ = rig.sent()
        rig.encrypt()
        rig.phone("03 B9 00")
        #expect(rig.sent() == "12 18 00 01 00", "straight to the subscriptions")
        rig.phone("01 12 18 00 0A")
        #expect(rig.sent() == Self.gattDiscovery)
        #expect(rig.events.contains(.handles(.stale(.handleRefused))))
        #expect(rig.link.state == .discoveringGATT)
    }

    @Test("a Service Changed before the MTU exchange ends: the offered handles are not used")
    func serviceChangedBeforeUse() {
        var rig = LinkDriverRig()
        rig.bondedLinkUp(offering: cachedIPhoneHandles(hash: nil))
        _ = rig.sent()
        rig.phone("1D 08 00 10 00 FF FF")
        #expect(rig.sent() == "1E", "the indication is confirmed")
        rig.phone("03 B9 00")
        #expect(rig.sent() == Self.gattDiscovery)
        #expect(!rig.events.contains(.handles(.cached)))
    }

    @Test("a first link reads the phone's Database Hash after the Service Changed subscription, to keep it with the handles")
    func firstLinkReadsDatabaseHash() {
        var rig = LinkDriverRig()
        rig.link.linkUp(now: rig.now, bonded: false, handler: &rig.recorder, effects: &rig.effects)
        _ = rig.sent()
        rig.phone("03 B9 00")
        #expect(rig.sent() == Self.gattDiscovery)
        rig.phone("07 06 00 0B 00")
        #expect(rig.sent() == "08 07 00 0B 00 03 28")
        rig.phone("09 07 07 00 20 08 00 05 2A 0A 00 02 0B 00 2A 2B")
        #expect(rig.sent() == "08 0B 00 0B 00 03 28")
        rig.phone("01 08 0B 00 0A")
        #expect(rig.sent() == "04 09 00 09 00")
        rig.phone("05 01 09 00 02 29")
        #expect(rig.sent() == "12 09 00 02 00")
        rig.phone("13")
        #expect(rig.sent() == "0A 0B 00", "the Database Hash is read")
        rig.phone("0B 10 11 12 13 14 15 16 17 18 19 1A 1B 1C 1D 1E 1F")
        #expect(rig.sent() == "06 01 00 FF FF 00 28 " + Wire.ancs, "then ANCS is discovered")
    }

    @Test("an unbonded link ignores offered handles")
    func unbondedIgnoresCache() {
        var rig = LinkDriverRig()
        rig.link.linkUp(now: rig.now, bonded: false, handler: &rig.recorder, effects: &rig.effects)
        _ = rig.sent()
        rig.link.offerHandles(cachedIPhoneHandles())
        rig.phone("03 B9 00")
        #expect(rig.sent() == Self.gattDiscovery)
    }

    @Test("cache file: what is written reads back the same, for a bonded address and the UNIX link's phone")
    func cacheFileRoundTrip() {
        var cache = GATTCache()
        let phone = DeviceAddress(BDAddress(0xC0, 0xFF, 0xEE, 0x12, 0x34, 0x56), .lePublic)
        var full = cachedIPhoneHandles()
        var cts = DiscoveredService(start: 0x0030, end: 0x0035)
        cts.characteristics[0] = DiscoveredCharacteristic(
            uuid: .uuid16(0x2A2B), declarationHandle: 0x0031, valueHandle: 0x0032, properties: [.read, .notify], endHandle: 0x0033, cccdHandle: 0x0033)
        full.cts = cts
        cache.store(full, for: phone)
        cache.store(cachedIPhoneHandles(hash: nil), for: GATTCache.unixLinkPhone)
        var out = ByteBuffer(capacity: GATTCache.maxSerializedByteCount)
        #expect(cache.serialize(into: &out) { _ in true })
        let text = String(decoding: out.toArray(), as: UTF8.self)
        #expect(text.hasPrefix("wristlink-gatt-cache 1\nhash c0ffee123456 01 101112131415161718191a1b1c1d1e1f\nsvc c0ffee123456 01 0 0006 000b 0007:0008:20:0009:0009 000a:000b:02:000b:0000 - -\n"), "\(text)")
        let bytes = out.toArray()
        guard let read = GATTCache.parse(bytes.span) else {
            Issue.record("the file written does not parse: \(text)")
            return
        }
        let readPhone = read.handles(for: phone)
        let readUnix = read.handles(for: GATTCache.unixLinkPhone)
        let needsSaving = read.needsSaving
        #expect(readPhone == full)
        #expect(readUnix == cachedIPhoneHandles(hash: nil))
        #expect(!needsSaving)
        // Only the addresses kept are written.
        #expect(cache.serialize(into: &out) { $0 == phone })
        #expect(!String(decoding: out.toArray(), as: UTF8.self).contains("000000000000"))
    }

    @Test("cache file: a damaged file is refused as a whole", arguments: [
        "", "wristlink-gatt-cache 2\n", "wristlink-gatt-cache 1", "wristlink-gatt-cache 1\nsvc c0ffee123456 01 0 0006 000b - - - -",
        "wristlink-gatt-cache 1\nsvc c0ffee123456 01 4 0006 000b - - - -\n", "wristlink-gatt-cache 1\nsvc c0ffee123456 01 0 0006 000B - - - -\n",
        "wristlink-gatt-cache 1\nsvc c0ffee123456 01 0 0006 000b - - -\n", "wristlink-gatt-cache 1\nhash c0ffee123456 01 1011\n",
        "wristlink-gatt-cache 1\nsvc c0ffee123456 01 0 000b 0006 - - - -\n", "wristlink-gatt-cache 1\nxyz c0ffee123456 01\n",
        "wristlink-gatt-cache 1\nsvc c0ffee123456 01 0 0006 000b - - - -\nsvc c0ffee123456 01 0 0006 000b - - - -\n",
    ])
    func damagedCacheFile(_ text: String) {
        let bytes = Array(text.utf8)
        var parsed = false
        if GATTCache.parse(bytes.span) != nil { parsed = true }
        #expect(!parsed, "\(text)")
    }
}
