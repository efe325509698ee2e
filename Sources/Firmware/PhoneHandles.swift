// SPDX-License-Identifier: Apache-2.0
// The handles a bonded phone's services had on the last link, kept so the
// next link need not discover them again (issue 30: a bonded phone back in
// four round trips). A bonded client may rely on the handles it learned
// until the server says otherwise (Core Vol 3 Part G 2.5.2): the phone
// indicates Service Changed to a bonded client whose subscription to it
// persists, at the reconnection when its database changed while the client
// was away; a phone with a Database Hash lets one read check the whole
// database. So a reconnection with cached handles costs the MTU exchange,
// at most one validation (the hash), and the two ANCS subscriptions.
//
// `PhoneHandles` is one phone's record; `GATTCache` the store, one record
// per bond (the bond's identity address; one unnamed record for the UNIX
// link, which has no addresses), in memory and in a state file beside the
// bonds (`gatt-cache`, written atomically by the platform). The file:
//
//   wristlink-gatt-cache 1
//   hash <address> <addr-type> <32 hex digits>
//   svc <address> <addr-type> <n> <start> <end> <c0> <c1> <c2> <c3>
//
// `n` is the service: 0 Generic Attribute, 1 ANCS, 2 AMS, 3 CTS; each `cK`
// is the K-th wanted characteristic as `decl:value:props:end:cccd` (4, 4,
// 2, 4, 4 hex digits) or `-` when the phone has none. Fields are
// lowercase hex of fixed width, one space apart, each line ends with "\n";
// addresses as in the bond file (12 digits, most significant byte first;
// `000000000000 00` is the UNIX link's phone). A file that does not parse
// is ignored as a whole (the handles are found again, nothing is lost);
// a record of an address that is not bonded is not written back.

import AMS
import ANCS
import ATT
import Bounded
import CTS
import GATT
import Mgmt

/// One phone's services as the last link found them (nil: not known).
public struct PhoneHandles: Equatable, Sendable {
    public static let serviceCount = 4
    /// Generic Attribute: Service Changed and Database Hash.
    public var genericAttribute: DiscoveredService? = nil
    public var ancs: DiscoveredService? = nil
    public var ams: DiscoveredService? = nil
    public var cts: DiscoveredService? = nil
    /// The phone's Database Hash when it was found (nil: it has none).
    public var databaseHash: InlineBytes<16>? = nil

    public init() {}

    /// The characteristics each service's discovery wants, in order: the
    /// K-th of a record's service is the K-th of these.
    static func wanted(service: Int) -> InlineArray<4, ATTUUID?> {
        switch service {
        case 0: [.uuid16(GATTUUID.serviceChanged), .uuid16(GATTUUID.databaseHash), nil, nil]
        case 1: [.uuid128(ANCSUUID.notificationSource), .uuid128(ANCSUUID.controlPoint), .uuid128(ANCSUUID.dataSource), nil]
        case 2: [.uuid128(AMSUUID.remoteCommand), .uuid128(AMSUUID.entityUpdate), nil, nil]
        default: [.uuid16(CTSUUID.currentTime), .uuid16(CTSUUID.localTimeInformation), nil, nil]
        }
    }

    /// Enough to bring ANCS up without discovery: Service Changed (its
    /// indications are how a stale cache is learned) and ANCS itself.
    public var isUsable: Bool {
        guard let gatt = genericAttribute, let ancs, ancs.isPresent else { return false }
        return (gatt.characteristics[0]?.valueHandle ?? 0) != 0 && (ancs.characteristics[0]?.cccdHandle ?? 0) != 0
    }

    subscript(service: Int) -> DiscoveredService? {
        get {
            switch service {
            case 0: genericAttribute
            case 1: ancs
            case 2: ams
            default: cts
            }
        }
        set {
            switch service {
            case 0: genericAttribute = newValue
            case 1: ancs = newValue
            case 2: ams = newValue
            default: cts = newValue
            }
        }
    }
}

/// The handle records of the bonded phones (and the UNIX link's one phone).
public struct GATTCache: ~Copyable {
    public static let capacity = BondStore.capacity + 1
    /// The UNIX link's phone: no address of its own.
    public static let unixLinkPhone = DeviceAddress(BDAddress(wire: InlineArray(repeating: 0)), .bredr)

    private var addresses: FixedArray<DeviceAddress>
    private var records: FixedArray<PhoneHandles>
    /// Changed since the file was last written.
    public private(set) var needsSaving = false

    public init() {
        addresses = FixedArray(capacity: Self.capacity)
        records = FixedArray(capacity: Self.capacity)
    }

    public var count: Int { addresses.count }

    public func handles(for address: DeviceAddress) -> PhoneHandles? {
        for i in 0..<addresses.count where addresses[i] == address { return records[i] }
        return nil
    }

    /// Keeps `handles` for `address` (the oldest record goes when full).
    public mutating func store(_ handles: PhoneHandles, for address: DeviceAddress) {
        for i in 0..<addresses.count where addresses[i] == address {
            if records[i] != handles {
                records[i] = handles
                needsSaving = true
            }
            return
        }
        if addresses.count == Self.capacity {
            addresses.remove(at: 0)
            records.remove(at: 0)
        }
        addresses.append(address)
        records.append(handles)
        needsSaving = true
    }

    /// Forgets a phone (its handles were refused, or its bond is gone).
    public mutating func remove(_ address: DeviceAddress) {
        for i in 0..<addresses.count where addresses[i] == address {
            addresses.remove(at: i)
            records.remove(at: i)
            needsSaving = true
            return
        }
    }

    public mutating func saved() { needsSaving = false }
}

// MARK: The file

enum GATTCacheFormat {
    static let header: StaticString = "wristlink-gatt-cache 1"
    /// "hash " + 12 + 3 + 33, "\n".
    static let hashLineByteCount = 53 + 1
    /// "svc " + 12 + 3 + 2 + 5 + 5, then 4 × (1 + 22), "\n".
    static let serviceLineByteCount = 31 + 4 * 23 + 1
    static let characteristicFieldByteCount = 22
}

extension GATTCache {
    /// The largest file the cache can make.
    public static let maxSerializedByteCount = 23
        + capacity * (GATTCacheFormat.hashLineByteCount + PhoneHandles.serviceCount * GATTCacheFormat.serviceLineByteCount)

    /// The file, with the records of the addresses `keep` accepts only.
    /// False (`out` cleared) if it does not fit.
    public func serialize(into out: inout ByteBuffer, keep: (DeviceAddress) -> Bool) -> Bool {
        out.removeAll()
        guard out.capacity >= Self.maxSerializedByteCount else { return false }
        _ = GATTCacheFormat.header.withUTF8Buffer { out.append(contentsOf: $0.span) }
        out.append(UInt8(ascii: "\n"))
        for i in 0..<addresses.count where keep(addresses[i]) {
            let record = records[i]
            if let hash = record.databaseHash {
                Self.appendLead("hash", addresses[i], to: &out)
                out.append(UInt8(ascii: " "))
                for b in 0..<16 { out.appendHexDigits(UInt64(hash[b]), digitCount: 2) }
                out.append(UInt8(ascii: "\n"))
            }
            for n in 0..<PhoneHandles.serviceCount {
                guard let service = record[n] else { continue }
                Self.appendLead("svc", addresses[i], to: &out)
                out.append(UInt8(ascii: " "))
                out.appendHexDigits(UInt64(n), digitCount: 1)
                out.append(UInt8(ascii: " "))
                out.appendHexDigits(UInt64(service.start), digitCount: 4)
                out.append(UInt8(ascii: " "))
                out.appendHexDigits(UInt64(service.end), digitCount: 4)
                for k in 0..<4 {
                    out.append(UInt8(ascii: " "))
                    guard let c = service.characteristics[k] else {
                        out.append(UInt8(ascii: "-"))
                        continue
                    }
                    out.appendHexDigits(UInt64(c.declarationHandle), digitCount: 4)
                    out.append(UInt8(ascii: ":"))
                    out.appendHexDigits(UInt64(c.valueHandle), digitCount: 4)
                    out.append(UInt8(ascii: ":"))
                    out.appendHexDigits(UInt64(c.properties.rawValue), digitCount: 2)
                    out.append(UInt8(ascii: ":"))
                    out.appendHexDigits(UInt64(c.endHandle), digitCount: 4)
                    out.append(UInt8(ascii: ":"))
                    out.appendHexDigits(UInt64(c.cccdHandle), digitCount: 4)
                }
                out.append(UInt8(ascii: "\n"))
            }
        }
        return true
    }

    private static func appendLead(_ keyword: StaticString, _ address: DeviceAddress, to out: inout ByteBuffer) {
        _ = keyword.withUTF8Buffer { out.append(contentsOf: $0.span) }
        out.append(UInt8(ascii: " "))
        for i in 0..<6 { out.appendHexDigits(UInt64(address.address.wire[5 - i]), digitCount: 2) }
        out.append(UInt8(ascii: " "))
        out.appendHexDigits(UInt64(address.type.rawValue), digitCount: 2)
    }

    /// Reads a cache file; nil when any line is not as written (the caller
    /// starts with an empty cache: the handles are found again).
    public static func parse(_ text: Span<UInt8>) -> GATTCache? {
        var cache = GATTCache()
        var start = 0
        var line = 0
        while start < text.count {
            line += 1
            var end = start
            while end < text.count && text[end] != UInt8(ascii: "\n") { end += 1 }
            guard end < text.count else { return nil }
            let content = text.extracting(start..<end)
            start = end + 1
            if line == 1 {
                guard Fields.equals(content, GATTCacheFormat.header) else { return nil }
                continue
            }
            guard cache.parseRecord(content) else { return nil }
        }
        guard line >= 1 else { return nil }
        cache.needsSaving = false
        return cache
    }

    private mutating func parseRecord(_ line: Span<UInt8>) -> Bool {
        var at = 0
        let isHash: Bool
        if Fields.keyword(line, &at, "hash") {
            isHash = true
        } else if Fields.keyword(line, &at, "svc") {
            isHash = false
        } else {
            return false
        }
        var wire = InlineArray<6, UInt8>(repeating: 0)
        for i in 0..<6 {
            guard let b = Fields.hex(line, &at, 2) else { return false }
            wire[5 - i] = UInt8(b)
        }
        guard Fields.space(line, &at), let type = Fields.hex(line, &at, 2), Fields.space(line, &at) else { return false }
        let key = DeviceAddress(BDAddress(wire: wire), AddressType(rawValue: UInt8(type)))
        var record = handles(for: key) ?? PhoneHandles()
        if isHash {
            guard record.databaseHash == nil else { return false }
            var hash = InlineBytes<16>()
            for _ in 0..<16 {
                guard let b = Fields.hex(line, &at, 2) else { return false }
                hash.append(UInt8(b))
            }
            record.databaseHash = hash
        } else {
            guard let n = Fields.hex(line, &at, 1), n < UInt64(PhoneHandles.serviceCount), record[Int(n)] == nil,
                Fields.space(line, &at), let serviceStart = Fields.hex(line, &at, 4), Fields.space(line, &at),
                let serviceEnd = Fields.hex(line, &at, 4), serviceEnd >= serviceStart
            else { return false }
            var service = DiscoveredService(start: UInt16(serviceStart), end: UInt16(serviceEnd))
            for k in 0..<4 {
                guard Fields.space(line, &at) else { return false }
                if Fields.keyword(line, &at, "-", spaceAfter: false) { continue }
                guard let decl = Fields.hex(line, &at, 4), Fields.colon(line, &at), let value = Fields.hex(line, &at, 4),
                    Fields.colon(line, &at), let props = Fields.hex(line, &at, 2), Fields.colon(line, &at),
                    let charEnd = Fields.hex(line, &at, 4), Fields.colon(line, &at), let cccd = Fields.hex(line, &at, 4),
                    let uuid = PhoneHandles.wanted(service: Int(n))[k]
                else { return false }
                service.characteristics[k] = DiscoveredCharacteristic(
                    uuid: uuid, declarationHandle: UInt16(decl), valueHandle: UInt16(value),
                    properties: CharacteristicProperties(rawValue: UInt8(props)), endHandle: UInt16(charEnd), cccdHandle: UInt16(cccd))
            }
            record[Int(n)] = service
        }
        guard at == line.count else { return false }
        store(record, for: key)
        return true
    }
}

/// Fixed-width fields, read at `at` (which moves past what matched).
private enum Fields {
    static func equals(_ bytes: Span<UInt8>, _ literal: StaticString) -> Bool {
        var at = 0
        return keyword(bytes, &at, literal, spaceAfter: false) && at == bytes.count
    }

    /// `literal`, then (with `spaceAfter`) one space.
    static func keyword(_ line: Span<UInt8>, _ at: inout Int, _ literal: StaticString, spaceAfter: Bool = true) -> Bool {
        var equal = true
        let start = at
        literal.withUTF8Buffer { expected in
            guard start + expected.count <= line.count else { equal = false; return }
            for i in 0..<expected.count where expected[i] != line[start + i] { equal = false; return }
        }
        guard equal else { return false }
        at += literal.utf8CodeUnitCount
        return !spaceAfter || space(line, &at)
    }

    static func space(_ line: Span<UInt8>, _ at: inout Int) -> Bool { expect(line, &at, UInt8(ascii: " ")) }
    static func colon(_ line: Span<UInt8>, _ at: inout Int) -> Bool { expect(line, &at, UInt8(ascii: ":")) }

    static func expect(_ line: Span<UInt8>, _ at: inout Int, _ byte: UInt8) -> Bool {
        guard at < line.count, line[at] == byte else { return false }
        at += 1
        return true
    }

    /// Exactly `digits` lowercase hex digits.
    static func hex(_ line: Span<UInt8>, _ at: inout Int, _ digits: Int) -> UInt64? {
        guard at + digits <= line.count else { return nil }
        var value: UInt64 = 0
        for i in 0..<digits {
            let c = line[at + i]
            let d: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = c - UInt8(ascii: "a") + 10
            default: return nil
            }
            value = value << 4 | UInt64(d)
        }
        at += digits
        return value
    }
}

extension ByteBuffer {
    /// `value`'s last `digitCount` hex digits, lowercase, most significant first.
    fileprivate mutating func appendHexDigits(_ value: UInt64, digitCount: Int) {
        var shift = 4 * (digitCount - 1)
        while shift >= 0 {
            let d = UInt8(truncatingIfNeeded: value >> UInt64(shift)) & 0x0F
            append(d < 10 ? UInt8(ascii: "0") + d : UInt8(ascii: "a") + d - 10)
            shift -= 4
        }
    }
}
