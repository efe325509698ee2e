// SPDX-License-Identifier: Apache-2.0
// Little-endian reads from byte spans: every multi-byte number in ATT, GATT,
// ANCS and the Bluetooth management interface is little-endian.

extension Span where Element == UInt8 {
    @inlinable
    public func le16(at offset: Int) -> UInt16 {
        UInt16(self[offset]) | UInt16(self[offset + 1]) << 8
    }

    @inlinable
    public func le32(at offset: Int) -> UInt32 {
        UInt32(self[offset]) | UInt32(self[offset + 1]) << 8
            | UInt32(self[offset + 2]) << 16 | UInt32(self[offset + 3]) << 24
    }
}
