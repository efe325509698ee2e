// SPDX-License-Identifier: Apache-2.0
// An ordered array with a capacity fixed at initialisation.
//
// For tables that need removal from the middle (the notification table, the
// app-name cache). Storage is allocated once; `append` reports failure
// instead of growing, and the owner decides what to evict.

public struct FixedArray<Element>: ~Copyable {
    private let storage: UnsafeMutablePointer<Element>
    public let capacity: Int
    public private(set) var count = 0

    public init(capacity: Int) {
        precondition(capacity > 0, "a fixed array needs room for at least one element")
        storage = .allocate(capacity: capacity)
        self.capacity = capacity
    }

    deinit {
        storage.deinitialize(count: count)
        storage.deallocate()
    }

    public var isEmpty: Bool { count == 0 }
    public var isFull: Bool { count == capacity }

    /// Read and changed in place (no copy of the element in or out), so a
    /// table of large elements costs what the field touched costs.
    public subscript(index: Int) -> Element {
        _read {
            precondition(index >= 0 && index < count, "fixed array index out of range")
            yield storage[index]
        }
        _modify {
            precondition(index >= 0 && index < count, "fixed array index out of range")
            yield &storage[index]
        }
    }

    /// Appends `element` and returns true, or returns false when full.
    @discardableResult
    public mutating func append(_ element: Element) -> Bool {
        guard count < capacity else { return false }
        (storage + count).initialize(to: element)
        count += 1
        return true
    }

    /// Removes the element at `index`, keeping the order of the rest.
    @discardableResult
    public mutating func remove(at index: Int) -> Element {
        precondition(index >= 0 && index < count, "fixed array index out of range")
        let element = (storage + index).move()
        let tail = count - index - 1
        if tail > 0 { (storage + index).moveInitialize(from: storage + index + 1, count: tail) }
        count -= 1
        return element
    }

    public mutating func removeAll() {
        storage.deinitialize(count: count)
        count = 0
    }

    public func firstIndex(where predicate: (Element) -> Bool) -> Int? {
        for i in 0..<count where predicate(storage[i]) { return i }
        return nil
    }

    public func lastIndex(where predicate: (Element) -> Bool) -> Int? {
        var i = count - 1
        while i >= 0 {
            if predicate(storage[i]) { return i }
            i -= 1
        }
        return nil
    }
}
