// SPDX-License-Identifier: Apache-2.0
// Attribute types: 16-bit UUIDs (SIG-assigned) and 128-bit UUIDs. A 128-bit
// UUID built on the Bluetooth Base UUID equals its 16-bit form.

import Bounded

public enum ATTUUID: Equatable, Sendable {
    case uuid16(UInt16)
    case uuid128(UUID128)

    /// 0000xxxx-0000-1000-8000-00805F9B34FB in wire order, xxxx zeroed.
    static let base = UUID128("00000000-0000-1000-8000-00805F9B34FB")

    /// Reads a 2- or 16-byte UUID at `offset`; nil for any other width.
    public init?(_ bytes: Span<UInt8>, at offset: Int, width: Int) {
        guard offset >= 0, bytes.count - offset >= width else { return nil }
        switch width {
        case 2: self = .uuid16(bytes.le16(at: offset))
        case 16: self = ATTUUID.normalized(UUID128(wireBytes: bytes, at: offset))
        default: return nil
        }
    }

    /// A 128-bit UUID on the Base UUID becomes its 16-bit form.
    public static func normalized(_ uuid: UUID128) -> ATTUUID {
        var onBase = true
        for i in 0..<16 where i != 12 && i != 13 && uuid.wire[i] != base.wire[i] { onBase = false }
        if onBase, uuid.wire[14] == 0, uuid.wire[15] == 0 {
            return .uuid16(UInt16(uuid.wire[12]) | UInt16(uuid.wire[13]) << 8)
        }
        return .uuid128(uuid)
    }

    /// Bytes on the wire: 2 or 16.
    public var width: Int {
        switch self {
        case .uuid16: 2
        case .uuid128: 16
        }
    }

    @discardableResult
    public func append(to out: inout ByteBuffer) -> Bool {
        switch self {
        case .uuid16(let v):
            return out.appendLE16(v)
        case .uuid128(let u):
            guard out.freeCount >= 16 else { return false }
            for i in 0..<16 { out.append(u.wire[i]) }
            return true
        }
    }
}
