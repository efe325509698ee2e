// SPDX-License-Identifier: Apache-2.0
// A byte buffer with a capacity fixed at initialisation: the place encoders
// write PDUs and commands into. Writing past the capacity is refused (the
// caller gets `false` and decides); it never grows.

public struct ByteBuffer: ~Copyable {
    private let base: UnsafeMutablePointer<UInt8>
    public let capacity: Int
    public private(set) var count = 0

    public init(capacity: Int) {
        precondition(capacity > 0, "a byte buffer needs room for at least one byte")
        base = .allocate(capacity: capacity)
        base.initialize(repeating: 0, count: capacity)
        self.capacity = capacity
    }

    deinit { base.deallocate() }

    public var isEmpty: Bool { count == 0 }
    public var freeCount: Int { capacity - count }

    /// The bytes written so far.
    public var span: Span<UInt8> {
        @_lifetime(borrow self)
        borrowing get {
            let bytes = Span(_unsafeStart: UnsafePointer(base), count: count)
            return _overrideLifetime(bytes, borrowing: self)
        }
    }

    public subscript(index: Int) -> UInt8 {
        get {
            precondition(index >= 0 && index < count, "byte index out of range")
            return base[index]
        }
        set {
            precondition(index >= 0 && index < count, "byte index out of range")
            base[index] = newValue
        }
    }

    public mutating func removeAll() { count = 0 }

    /// Keeps the first `length` bytes.
    public mutating func truncate(to length: Int) {
        precondition(length >= 0 && length <= count, "truncate past the end")
        count = length
    }

    @discardableResult
    public mutating func append(_ byte: UInt8) -> Bool {
        guard count < capacity else { return false }
        base[count] = byte
        count += 1
        return true
    }

    @discardableResult
    public mutating func appendLE16(_ value: UInt16) -> Bool {
        guard freeCount >= 2 else { return false }
        base[count] = UInt8(truncatingIfNeeded: value)
        base[count + 1] = UInt8(truncatingIfNeeded: value >> 8)
        count += 2
        return true
    }

    @discardableResult
    public mutating func appendLE32(_ value: UInt32) -> Bool {
        guard freeCount >= 4 else { return false }
        for i in 0..<4 { base[count + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(i))) }
        count += 4
        return true
    }

    /// Appends all of `bytes`, or nothing and returns false when they do not fit.
    @discardableResult
    public mutating func append(contentsOf bytes: Span<UInt8>) -> Bool {
        guard freeCount >= bytes.count else { return false }
        bytes.withUnsafeBufferPointer { source in
            if let start = source.baseAddress { (base + count).update(from: start, count: source.count) }
        }
        count += bytes.count
        return true
    }

    /// Lets `body` fill up to `freeCount` bytes after the current end in
    /// place; `body` returns how many it wrote. For receiving from a socket
    /// without an intermediate copy.
    public mutating func appendInPlace<E: Error>(
        _ body: (UnsafeMutableRawBufferPointer) throws(E) -> Int
    ) throws(E) {
        let written = try body(UnsafeMutableRawBufferPointer(start: base + count, count: freeCount))
        precondition(written >= 0 && written <= freeCount, "wrote outside the buffer")
        count += written
    }

    /// Copies the bytes into a fresh array. For tests and diagnostics only:
    /// it allocates.
    public func toArray() -> [UInt8] {
        Array(UnsafeBufferPointer(start: base, count: count))
    }
}
