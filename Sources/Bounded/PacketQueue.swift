// SPDX-License-Identifier: Apache-2.0
// A first-in first-out queue of whole packets (ATT PDUs, mgmt commands) in
// fixed slots: `capacity` slots of `slotBytes` each, allocated once. Pushing
// into a full queue is refused and counted; the caller decides what that
// means.

public struct PacketQueue: ~Copyable {
    private let arena: UnsafeMutablePointer<UInt8>
    private var lengths: RingBuffer<Entry>
    private var nextSlot = 0
    public let slotBytes: Int
    public var capacity: Int { lengths.capacity }
    public var count: Int { lengths.count }
    public var isEmpty: Bool { lengths.isEmpty }
    /// PDUs refused because the queue was full.
    public private(set) var refusedCount: UInt64 = 0

    struct Entry {
        var slot: Int
        var length: Int
        var tag: UInt16
    }

    public init(capacity: Int, slotBytes: Int) {
        arena = .allocate(capacity: capacity * slotBytes)
        arena.initialize(repeating: 0, count: capacity * slotBytes)
        lengths = RingBuffer(capacity: capacity, policy: .refuseNewest)
        self.slotBytes = slotBytes
    }

    deinit { arena.deallocate() }

    /// Copies `pdu` into a free slot. False when full (counted) or too long.
    @discardableResult
    public mutating func push(_ pdu: Span<UInt8>, tag: UInt16 = 0) -> Bool {
        precondition(pdu.count <= slotBytes, "packet longer than a queue slot")
        // Slots are used round-robin; with FIFO removal the next slot is
        // free whenever the queue is not full.
        guard !lengths.isFull else {
            refusedCount &+= 1
            return false
        }
        let slot = nextSlot
        pdu.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { (arena + slot * slotBytes).update(from: base, count: source.count) }
        }
        lengths.push(Entry(slot: slot, length: pdu.count, tag: tag))
        nextSlot = (nextSlot + 1) % lengths.capacity
        return true
    }

    /// Copies the bytes of `buffer` into a free slot (see `push(_:tag:)`).
    @discardableResult
    public mutating func push(copyOf buffer: borrowing ByteBuffer, tag: UInt16 = 0) -> Bool {
        push(buffer.span, tag: tag)
    }

    /// Calls `body` with the oldest packet's bytes without removing it.
    public func withFirst<R>(_ body: (Span<UInt8>) -> R) -> R? {
        guard let entry = lengths.first else { return nil }
        return body(Span(_unsafeStart: UnsafePointer(arena + entry.slot * slotBytes), count: entry.length))
    }

    /// Drops the oldest packet.
    public mutating func removeFirst() {
        _ = lengths.popFirst()
    }

    /// Moves the oldest PDU into `out`; returns its tag, or nil when empty.
    public mutating func pop(into out: inout ByteBuffer) -> UInt16? {
        guard let entry = lengths.popFirst() else { return nil }
        precondition(out.capacity >= entry.length, "packet buffer smaller than the queue's packets")
        out.removeAll()
        let bytes = Span(_unsafeStart: UnsafePointer(arena + entry.slot * slotBytes), count: entry.length)
        out.append(contentsOf: bytes)
        return entry.tag
    }

    public mutating func removeAll() {
        lengths.removeAll()
        nextSlot = 0
    }
}
