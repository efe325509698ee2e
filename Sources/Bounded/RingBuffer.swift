// SPDX-License-Identifier: Apache-2.0
// A first-in first-out queue with a capacity fixed at initialisation.
//
// Storage is allocated once in `init`. `push` never allocates: when the ring
// is full it applies its `FullPolicy` and counts the element it lost in
// `droppedCount`.

public struct RingBuffer<Element>: ~Copyable {
    /// The result of adding an element.
    public enum PushOutcome {
        case stored
        /// The ring was full; the oldest element was discarded to make room.
        case droppedOldest(Element)
        /// The ring was full; the new element was not stored.
        case refused
    }

    private let storage: UnsafeMutablePointer<Element>
    public let capacity: Int
    public let policy: FullPolicy
    /// Index in `storage` of the oldest element.
    private var head = 0
    public private(set) var count = 0
    /// Elements lost to the full policy since initialisation.
    public private(set) var droppedCount: UInt64 = 0

    public init(capacity: Int, policy: FullPolicy) {
        precondition(capacity > 0, "a ring needs room for at least one element")
        storage = .allocate(capacity: capacity)
        self.capacity = capacity
        self.policy = policy
    }

    deinit {
        for i in 0..<count { (storage + slot(i)).deinitialize(count: 1) }
        storage.deallocate()
    }

    public var isEmpty: Bool { count == 0 }
    public var isFull: Bool { count == capacity }

    private func slot(_ offset: Int) -> Int {
        let s = head + offset
        return s >= capacity ? s - capacity : s
    }

    /// The element `offset` places after the oldest (0 is the oldest).
    public subscript(offset: Int) -> Element {
        get {
            precondition(offset >= 0 && offset < count, "ring index out of range")
            return storage[slot(offset)]
        }
        set {
            precondition(offset >= 0 && offset < count, "ring index out of range")
            storage[slot(offset)] = newValue
        }
    }

    public var first: Element? { count == 0 ? nil : storage[head] }
    public var last: Element? { count == 0 ? nil : storage[slot(count - 1)] }

    /// Adds `element` as the newest.
    @discardableResult
    public mutating func push(_ element: Element) -> PushOutcome {
        if count == capacity {
            droppedCount &+= 1
            switch policy {
            case .refuseNewest:
                return .refused
            case .dropOldest:
                let oldest = (storage + head).move()
                (storage + head).initialize(to: element)
                head = slot(1)
                return .droppedOldest(oldest)
            }
        }
        (storage + slot(count)).initialize(to: element)
        count += 1
        return .stored
    }

    /// Removes and returns the oldest element.
    public mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = (storage + head).move()
        head = slot(1)
        count -= 1
        return element
    }

    /// Removes every element matching `predicate`, keeping the others in
    /// order. Returns how many were removed. Not counted as drops: the caller
    /// chose to remove them.
    @discardableResult
    public mutating func removeAll(where predicate: (Element) -> Bool) -> Int {
        var kept = 0
        for i in 0..<count {
            let from = storage + slot(i)
            if predicate(from.pointee) {
                from.deinitialize(count: 1)
            } else {
                if kept != i { (storage + slot(kept)).moveInitialize(from: from, count: 1) }
                kept += 1
            }
        }
        let removed = count - kept
        count = kept
        return removed
    }

    /// Empties the ring; the drop counter is kept (it counts a lifetime).
    public mutating func removeAll() {
        for i in 0..<count { (storage + slot(i)).deinitialize(count: 1) }
        head = 0
        count = 0
    }

    /// The offset of the first element matching `predicate`, oldest first.
    public func firstIndex(where predicate: (Element) -> Bool) -> Int? {
        for i in 0..<count where predicate(storage[slot(i)]) { return i }
        return nil
    }
}
