// SPDX-License-Identifier: Apache-2.0
// Byte helpers the management encoders and the bond file share: 64-bit
// little-endian fields, fixed-width fields, lowercase hex.

import Bounded

extension Span where Element == UInt8 {
    func le64(at offset: Int) -> UInt64 {
        UInt64(le32(at: offset)) | UInt64(le32(at: offset + 4)) << 32
    }

    func le24(at offset: Int) -> UInt32 {
        UInt32(self[offset]) | UInt32(self[offset + 1]) << 8 | UInt32(self[offset + 2]) << 16
    }
}

extension ByteBuffer {
    /// Callers check the room first; these only write.
    mutating func appendLE64(_ value: UInt64) {
        appendLE32(UInt32(truncatingIfNeeded: value))
        appendLE32(UInt32(truncatingIfNeeded: value >> 32))
    }

    mutating func append(_ address: DeviceAddress) {
        for i in 0..<6 { append(address.address.wire[i]) }
        append(address.type.rawValue)
    }

    mutating func append(_ key: Key128) {
        for i in 0..<16 { append(key.wire[i]) }
    }

    /// `bytes` followed by zeros up to `fieldByteCount` (a NUL-padded name field).
    mutating func appendPadded(_ bytes: Span<UInt8>, fieldByteCount: Int) {
        append(contentsOf: bytes)
        for _ in bytes.count..<fieldByteCount { append(0) }
    }

    /// `value` as `digitCount` lowercase hex digits, most significant first.
    mutating func appendHex(_ value: UInt64, digitCount: Int) {
        var shift = (digitCount - 1) * 4
        while shift >= 0 {
            append(Hex.digit(UInt8(truncatingIfNeeded: value >> UInt64(shift)) & 0x0F))
            shift -= 4
        }
    }
}

enum Hex {
    static func digit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    /// The value of one hex digit (either case), or nil.
    static func value(_ ascii: UInt8) -> UInt8? {
        switch ascii {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): ascii - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): ascii - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): ascii - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// `count` hex digits at `offset` as a number, or nil if any is not hex.
    static func number(_ bytes: Span<UInt8>, at offset: Int, count: Int) -> UInt64? {
        var result: UInt64 = 0
        for i in 0..<count {
            guard let v = value(bytes[offset + i]) else { return nil }
            result = result << 4 | UInt64(v)
        }
        return result
    }
}
