// SPDX-License-Identifier: Apache-2.0
// A 128-bit Bluetooth UUID held in wire order (little-endian: the reverse of
// the text form), so comparing with bytes off the air needs no conversion.

public struct UUID128: Equatable, Hashable, Sendable {
    /// The 16 bytes as they appear on the wire.
    public var wire: InlineArray<16, UInt8>

    public init(wire: InlineArray<16, UInt8>) { self.wire = wire }

    /// From the text form, e.g. "7905F431-B5CE-4E99-A40F-4B1E122D00D0".
    /// A malformed literal is a programmer error.
    public init(_ text: StaticString) {
        var nibbles = InlineArray<32, UInt8>(repeating: 0)
        var n = 0
        text.withUTF8Buffer { utf8 in
            for c in utf8 where c != UInt8(ascii: "-") {
                let v: UInt8
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - UInt8(ascii: "0")
                case UInt8(ascii: "A")...UInt8(ascii: "F"): v = c - UInt8(ascii: "A") + 10
                case UInt8(ascii: "a")...UInt8(ascii: "f"): v = c - UInt8(ascii: "a") + 10
                default: preconditionFailure("bad hex digit in UUID literal")
                }
                precondition(n < 32, "UUID literal too long")
                nibbles[n] = v
                n += 1
            }
        }
        precondition(n == 32, "UUID literal too short")
        wire = InlineArray(repeating: 0)
        for i in 0..<16 { wire[15 - i] = nibbles[2 * i] << 4 | nibbles[2 * i + 1] }
    }

    /// Reads 16 wire-order bytes at `offset`.
    public init(wireBytes bytes: Span<UInt8>, at offset: Int = 0) {
        wire = InlineArray(repeating: 0)
        for i in 0..<16 { wire[i] = bytes[offset + i] }
    }

    public func matches(_ bytes: Span<UInt8>, at offset: Int = 0) -> Bool {
        guard bytes.count - offset >= 16 else { return false }
        for i in 0..<16 where wire[i] != bytes[offset + i] { return false }
        return true
    }

    public static func == (a: UUID128, b: UUID128) -> Bool {
        for i in 0..<16 where a.wire[i] != b.wire[i] { return false }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        for i in 0..<16 { hasher.combine(wire[i]) }
    }
}
