// SPDX-License-Identifier: Apache-2.0
// A short byte string stored inline in a value (no heap): app identifiers,
// display names, line names. The capacity is part of the type; `count` says
// how much is used. Longer input is truncated and flagged, never grown.

public struct InlineBytes<let capacity: Int>: Equatable, Sendable {
    private var storage: InlineArray<capacity, UInt8>
    public private(set) var count: Int
    /// True when a longer value was cut to fit.
    public private(set) var wasTruncated: Bool

    public init() {
        storage = InlineArray(repeating: 0)
        count = 0
        wasTruncated = false
    }

    /// Copies `bytes`, cutting what does not fit.
    public init(_ bytes: Span<UInt8>) {
        self.init()
        append(bytes)
    }

    /// Copies the UTF-8 of `text`, cutting what does not fit (for tests and
    /// configuration; the protocol path uses the span initialiser).
    public init(_ text: String) {
        self.init()
        for byte in text.utf8 { append(byte) }
    }

    public var isEmpty: Bool { count == 0 }

    public subscript(index: Int) -> UInt8 {
        precondition(index >= 0 && index < count, "byte index out of range")
        return storage[index]
    }

    public mutating func append(_ byte: UInt8) {
        guard count < capacity else {
            wasTruncated = true
            return
        }
        storage[count] = byte
        count += 1
    }

    public mutating func append(_ bytes: Span<UInt8>) {
        for i in bytes.indices { append(bytes[i]) }
    }

    public mutating func removeAll() {
        count = 0
        wasTruncated = false
    }

    public var span: Span<UInt8> {
        @_lifetime(borrow self)
        borrowing get { storage.span.extracting(0..<count) }
    }

    public func elementsEqual(_ other: Span<UInt8>) -> Bool {
        guard other.count == count else { return false }
        for i in 0..<count where storage[i] != other[i] { return false }
        return true
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.count == b.count && a.wasTruncated == b.wasTruncated && a.elementsEqual(b.span)
    }

    /// The bytes as text; a multi-byte character cut by truncation is
    /// dropped rather than shown as a replacement character.
    public var text: String {
        var end = count
        if wasTruncated { end = UTF8Boundary.lastCompleteEnd(storage.span.extracting(0..<count)) }
        var result = ""
        result.reserveCapacity(end)
        storage.span.extracting(0..<end).withUnsafeBufferPointer { result = String(decoding: $0, as: UTF8.self) }
        return result
    }
}

/// UTF-8 helpers for values cut at a byte limit.
public enum UTF8Boundary {
    /// The length of the longest prefix of `bytes` that does not end inside
    /// a multi-byte sequence.
    public static func lastCompleteEnd(_ bytes: Span<UInt8>) -> Int {
        var i = bytes.count - 1
        var continuation = 0
        while i >= 0 && continuation < 4 {
            let byte = bytes[i]
            if byte & 0xC0 == 0x80 {
                continuation += 1
                i -= 1
                continue
            }
            let needed: Int
            if byte & 0x80 == 0 { needed = 0 } else if byte & 0xE0 == 0xC0 { needed = 1 } else if byte & 0xF0 == 0xE0 { needed = 2 } else { needed = 3 }
            return continuation >= needed ? bytes.count : i
        }
        return bytes.count
    }
}
