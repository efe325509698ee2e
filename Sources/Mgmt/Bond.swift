// SPDX-License-Identifier: Apache-2.0
// Bonds: what the kernel must be given back at start-up so a paired iPhone
// can reconnect without pairing again (mgmt-api.txt, "New Long Term Key
// Event", "New Identity Resolving Key Event", "Load Long Term Keys Command",
// "Load Identity Resolving Keys Command"). With bluetoothd not running,
// nobody else keeps them.
//
// A bond is one peer identity (public or static random address) with up to
// two long-term keys, one per value of the Central flag (legacy pairing can
// leave a key for each role; Secure Connections leaves one, Central 0), and
// its identity resolving key. Keys are kept only when the kernel's Store_Hint
// says so and the address is an identity: the kernel clears the hint for
// resolvable or non-resolvable addresses without an IRK, and Load commands
// reject such addresses anyway. Debug keys (type 0x04) are never kept.
//
// Storage is inline: `capacity` bonds, no heap. When a new peer bonds and the
// store is full, the bond updated longest ago is dropped (the wearer pairing
// a new phone expects it to work) and reported, so the caller can also
// forget it in the kernel (Unpair Device) and count it.

import Bounded

/// The fields of an LE long-term key that Load Long Term Keys needs.
public struct LongTermKey: Equatable, Sendable {
    /// Address (7) Key_Type (1) Central (1) Encryption_Size (1)
    /// Encryption_Diversifier (2) Random_Number (8) Value (16).
    static let recordByteCount = 36

    public var type: LongTermKeyType
    /// The document's "Central" (formerly "Master"): true for the key used
    /// when the local device is central. Secure Connections keys have false.
    public var central: Bool
    public var encryptionSizeBytes: UInt8
    /// EDIV; zero for Secure Connections keys.
    public var ediv: UInt16
    /// Rand; zero for Secure Connections keys.
    public var rand: UInt64
    /// Bytes past `encryptionSizeBytes` are zero (the kernel clears them).
    public var value: Key128

    public init(type: LongTermKeyType, central: Bool, encryptionSizeBytes: UInt8, ediv: UInt16, rand: UInt64, value: Key128) {
        self.type = type
        self.central = central
        self.encryptionSizeBytes = encryptionSizeBytes
        self.ediv = ediv
        self.rand = rand
        self.value = value
    }

    static func decodeRecord(_ p: Span<UInt8>, at o: Int) -> (DeviceAddress, LongTermKey) {
        let key = LongTermKey(type: LongTermKeyType(rawValue: p[o + 7]), central: p[o + 8] != 0,
                              encryptionSizeBytes: p[o + 9], ediv: p.le16(at: o + 10), rand: p.le64(at: o + 12),
                              value: Key128(wireBytes: p, at: o + 20))
        return (DeviceAddress(wireBytes: p, at: o), key)
    }

    func appendRecord(for address: DeviceAddress, to out: inout ByteBuffer) {
        out.append(address)
        out.append(type.rawValue)
        out.append(central ? 1 : 0)
        out.append(encryptionSizeBytes)
        out.appendLE16(ediv)
        out.appendLE64(rand)
        out.append(value)
    }

    /// The key sizes SMP allows.
    public static let encryptionSizeRange: ClosedRange<UInt8> = 7...16
}

/// One bonded peer.
public struct Bond: Equatable, Sendable {
    /// The peer's identity address.
    public let address: DeviceAddress
    /// Slot 0: Central false; slot 1: Central true.
    var keys: InlineArray<2, LongTermKey?>
    public var identityResolvingKey: Key128?

    public init(address: DeviceAddress) {
        self.address = address
        keys = InlineArray(repeating: nil)
        identityResolvingKey = nil
    }

    public func longTermKey(central: Bool) -> LongTermKey? { keys[central ? 1 : 0] }

    public mutating func setLongTermKey(_ key: LongTermKey) { keys[key.central ? 1 : 0] = key }

    public var longTermKeyCount: Int { (keys[0] == nil ? 0 : 1) + (keys[1] == nil ? 0 : 1) }

    public static func == (a: Bond, b: Bond) -> Bool {
        a.address == b.address && a.keys[0] == b.keys[0] && a.keys[1] == b.keys[1]
            && a.identityResolvingKey == b.identityResolvingKey
    }
}

/// What applying a key event did to the store.
public enum BondUpdate: Equatable, Sendable {
    /// A new or changed key: write the bond file.
    case stored
    /// The same key was already kept: nothing to write.
    case unchanged
    /// Stored, and the store was full: this peer's bond was dropped (the one
    /// updated longest ago). Write the file; forget the peer in the kernel.
    case storedEvicting(DeviceAddress)
    case ignored(BondIgnoredReason)
}

/// What `apply` would do with a key event, told before it is applied (the
/// caller decides whether the key may be kept at all).
public enum KeyNovelty: Equatable, Sendable {
    /// Not kept, whoever sent it.
    case ignored(BondIgnoredReason)
    /// Kept already: the same key for the same bond.
    case same
    /// A key for a peer without a bond.
    case newPeer
    /// A different key for a bonded peer: applying it changes that bond.
    case changesBond
}

public enum BondIgnoredReason: Equatable, Sendable {
    /// Store_Hint was 0 (no bonding, or the kernel has no identity).
    case notPersistent
    /// Not an LE public or static random address.
    case notIdentity
    /// A Secure Connections debug key.
    case debugKey
    /// No pairing the wearer allowed for that address (see `Controller`).
    case noConsent
}

/// Every bond the wearable keeps, in order of last update (oldest first).
public struct BondStore: ~Copyable {
    public static let capacity = 8
    /// Load Long Term Keys with every slot used: header, Key_Count, 2 keys a bond.
    public static let maxLoadLongTermKeysByteCount = MgmtPacket.headerByteCount + 2 + capacity * 2 * LongTermKey.recordByteCount
    static let identityResolvingKeyRecordByteCount = 7 + 16

    private var bonds: InlineArray<8, Bond>
    public private(set) var count = 0
    /// Bonds dropped to make room since this store was built.
    public private(set) var evictedCount: UInt64 = 0

    public init() {
        bonds = InlineArray(repeating: Bond(address: DeviceAddress(.any, .lePublic)))
    }

    public var isEmpty: Bool { count == 0 }

    /// The bond at `index`, 0 being the least recently updated.
    public subscript(index: Int) -> Bond {
        precondition(index >= 0 && index < count, "bond index out of range")
        return bonds[index]
    }

    public func firstIndex(of address: DeviceAddress) -> Int? {
        for i in 0..<count where bonds[i].address == address { return i }
        return nil
    }

    public var longTermKeyCount: Int {
        var n = 0
        for i in 0..<count { n += bonds[i].longTermKeyCount }
        return n
    }

    public var identityResolvingKeyCount: Int {
        var n = 0
        for i in 0..<count where bonds[i].identityResolvingKey != nil { n += 1 }
        return n
    }

    public func novelty(of event: NewLongTermKey) -> KeyNovelty {
        guard event.storeHint else { return .ignored(.notPersistent) }
        guard event.address.isLEIdentity else { return .ignored(.notIdentity) }
        guard event.key.type.isStorable else { return .ignored(.debugKey) }
        guard let i = firstIndex(of: event.address) else { return .newPeer }
        return bonds[i].longTermKey(central: event.key.central) == event.key ? .same : .changesBond
    }

    public func novelty(of event: NewIdentityResolvingKey) -> KeyNovelty {
        guard event.storeHint else { return .ignored(.notPersistent) }
        guard event.identity.isLEIdentity else { return .ignored(.notIdentity) }
        guard let i = firstIndex(of: event.identity) else { return .newPeer }
        return bonds[i].identityResolvingKey == event.key ? .same : .changesBond
    }

    public mutating func apply(_ event: NewLongTermKey) -> BondUpdate {
        if case .ignored(let reason) = novelty(of: event) { return .ignored(reason) }
        return update(event.address) { bond in
            guard bond.longTermKey(central: event.key.central) != event.key else { return false }
            bond.setLongTermKey(event.key)
            return true
        }
    }

    public mutating func apply(_ event: NewIdentityResolvingKey) -> BondUpdate {
        if case .ignored(let reason) = novelty(of: event) { return .ignored(reason) }
        return update(event.identity) { bond in
            guard bond.identityResolvingKey != event.key else { return false }
            bond.identityResolvingKey = event.key
            return true
        }
    }

    /// Forgets `address` (after Unpair Device, say). Returns false if unknown.
    @discardableResult
    public mutating func remove(_ address: DeviceAddress) -> Bool {
        guard let i = firstIndex(of: address) else { return false }
        removeBond(at: i)
        return true
    }

    public mutating func removeAll() { count = 0 }

    /// Finds or makes the bond for `address`, lets `change` edit it, and if
    /// it changed moves it to the most recent end.
    private mutating func update(_ address: DeviceAddress, _ change: (inout Bond) -> Bool) -> BondUpdate {
        if let i = firstIndex(of: address) {
            var bond = bonds[i]
            guard change(&bond) else { return .unchanged }
            removeBond(at: i)
            bonds[count] = bond
            count += 1
            return .stored
        }
        var bond = Bond(address: address)
        _ = change(&bond)
        var evicted: DeviceAddress? = nil
        if count == Self.capacity {
            evicted = bonds[0].address
            removeBond(at: 0)
            evictedCount &+= 1
        }
        bonds[count] = bond
        count += 1
        return evicted.map { .storedEvicting($0) } ?? .stored
    }

    private mutating func removeBond(at index: Int) {
        for j in index..<(count - 1) { bonds[j] = bonds[j + 1] }
        count -= 1
    }

    /// Adds a bond read from the bond file, refusing a second bond for the
    /// same address or one past the capacity (the parser reports both).
    mutating func insertParsed(_ bond: Bond) -> Bool {
        guard count < Self.capacity else { return false }
        bonds[count] = bond
        count += 1
        return true
    }

    mutating func modifyParsed(at index: Int, _ change: (inout Bond) -> Void) {
        change(&bonds[index])
    }

    /// Load Long Term Keys with every key kept (Key_Count 0 clears the
    /// kernel's list, which is what an empty store means).
    public func encodeLoadLongTermKeys(index: ControllerIndex, into out: inout ByteBuffer) throws(MgmtEncodeError) {
        let keyCount = longTermKeyCount
        try MgmtCommandWriter.begin(.loadLongTermKeys, index: index,
                                    parameterByteCount: 2 + keyCount * LongTermKey.recordByteCount, into: &out)
        out.appendLE16(UInt16(keyCount))
        for i in 0..<count {
            for slot in 0..<2 {
                if let key = bonds[i].keys[slot] { key.appendRecord(for: bonds[i].address, to: &out) }
            }
        }
    }

    /// Load Identity Resolving Keys. Sent even when empty: loading (any
    /// number of) IRKs is what turns on address resolution in the kernel,
    /// and only then does SMP ask the peer for its IRK. Without it an iPhone
    /// that pairs from a resolvable private address leaves no identity, and
    /// its long-term key arrives with Store_Hint 0.
    public func encodeLoadIdentityResolvingKeys(index: ControllerIndex, into out: inout ByteBuffer) throws(MgmtEncodeError) {
        let keyCount = identityResolvingKeyCount
        try MgmtCommandWriter.begin(.loadIdentityResolvingKeys, index: index,
                                    parameterByteCount: 2 + keyCount * Self.identityResolvingKeyRecordByteCount, into: &out)
        out.appendLE16(UInt16(keyCount))
        for i in 0..<count {
            if let irk = bonds[i].identityResolvingKey {
                out.append(bonds[i].address)
                out.append(irk)
            }
        }
    }
}
