// SPDX-License-Identifier: Apache-2.0
// Device addresses and 128-bit keys, held in wire order (least significant
// byte first) so reading and writing packets needs no conversion. Text forms
// print the address the way people read it, most significant byte first.

/// A 48-bit Bluetooth device address.
public struct BDAddress: Hashable, Sendable {
    /// The 6 bytes as on the wire: `wire[5]` is the most significant.
    public var wire: InlineArray<6, UInt8>

    public init(wire: InlineArray<6, UInt8>) { self.wire = wire }

    /// From the bytes most significant first, as written "C0:FF:EE:12:34:56".
    public init(_ b5: UInt8, _ b4: UInt8, _ b3: UInt8, _ b2: UInt8, _ b1: UInt8, _ b0: UInt8) {
        wire = [b0, b1, b2, b3, b4, b5]
    }

    /// Reads 6 wire-order bytes at `offset`.
    public init(wireBytes bytes: Span<UInt8>, at offset: Int) {
        wire = InlineArray(repeating: 0)
        for i in 0..<6 { wire[i] = bytes[offset + i] }
    }

    public static let any = BDAddress(wire: InlineArray(repeating: 0))

    /// A random address whose two most significant bits are 1: the only kind
    /// of random address that can be an identity (Core Vol 6 Part B 1.3.2.1).
    public var isStaticRandom: Bool { wire[5] & 0xC0 == 0xC0 }

    public static func == (a: BDAddress, b: BDAddress) -> Bool {
        for i in 0..<6 where a.wire[i] != b.wire[i] { return false }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        for i in 0..<6 { hasher.combine(wire[i]) }
    }
}

/// Address + Address_Type, the 7 bytes most commands and events carry.
public struct DeviceAddress: Hashable, Sendable {
    public var address: BDAddress
    public var type: AddressType

    public init(_ address: BDAddress, _ type: AddressType) {
        self.address = address
        self.type = type
    }

    public static let byteCount = 7

    init(wireBytes bytes: Span<UInt8>, at offset: Int) {
        address = BDAddress(wireBytes: bytes, at: offset)
        type = AddressType(rawValue: bytes[offset + 6])
    }

    /// True for the addresses key commands accept: LE public, or LE random
    /// and static. Resolvable and non-resolvable private addresses are not
    /// identities and the kernel rejects keys for them.
    public var isLEIdentity: Bool {
        type == .lePublic || (type == .leRandom && address.isStaticRandom)
    }
}

/// A 128-bit key (long-term key, identity resolving key) in wire order.
public struct Key128: Equatable, Sendable {
    public var wire: InlineArray<16, UInt8>

    public init(wire: InlineArray<16, UInt8>) { self.wire = wire }

    public init(wireBytes bytes: Span<UInt8>, at offset: Int) {
        wire = InlineArray(repeating: 0)
        for i in 0..<16 { wire[i] = bytes[offset + i] }
    }

    public static let zero = Key128(wire: InlineArray(repeating: 0))

    public static func == (a: Key128, b: Key128) -> Bool {
        for i in 0..<16 where a.wire[i] != b.wire[i] { return false }
        return true
    }
}
