// SPDX-License-Identifier: Apache-2.0
// The phone's notifications: a fixed number, in posting order, each a small
// header (what Notification Source carries) plus its content in a slot of a
// pool allocated once. Headers are scanned; contents (about 1 KB each) are
// only touched when a Control Point command asks for them.
//
// Policies: posting a UID that exists modifies it in place (its place in the
// order is kept); posting when full evicts the oldest notification, which
// the caller announces as Removed. CategoryCount is maintained per category
// value (all 256, so a reserved category a scenario names numerically is
// counted too) and saturates at 255 on the wire.
//
// The PreExisting replay is a mark on each header taken when Notification
// Source is subscribed: the replay walks the marked headers in UID order,
// one per outgoing notification, so it needs no queue and never repeats a
// notification posted during it.

import ANCS
import Bounded

/// What the phone tells the wearable about one notification.
public struct PhoneNotification: Equatable, Sendable {
    public var uid: UInt32
    public var category: CategoryID
    public var flags: EventFlags
    /// Still to be sent in the current PreExisting replay.
    public var replayPending: Bool
    var slot: Int
}

@usableFromInline
struct NotificationStore: ~Copyable {
    enum Posted {
        /// A new UID; `evicted` was removed to make room.
        case added(evicted: PhoneNotification?)
        case modified(previous: PhoneNotification)
    }

    private var headers: FixedArray<PhoneNotification>
    private let contents: UnsafeMutablePointer<NotificationContent>
    private var freeSlots: RingBuffer<Int>
    private var counts: InlineArray<256, UInt16>
    let capacity: Int
    /// One above the highest UID ever posted: the next automatic UID.
    private(set) var nextUID: UInt32 = 0
    private(set) var replayPendingCount = 0
    private(set) var evictionCount: UInt64 = 0

    init(capacity: Int) {
        precondition(capacity > 0 && capacity <= Int(UInt16.max), "store capacity out of range (counts are 16-bit)")
        self.capacity = capacity
        headers = FixedArray(capacity: capacity)
        contents = .allocate(capacity: capacity)
        contents.initialize(repeating: NotificationContent(), count: capacity)
        freeSlots = RingBuffer(capacity: capacity, policy: .refuseNewest)
        for slot in 0..<capacity { freeSlots.push(slot) }
        counts = InlineArray(repeating: 0)
    }

    deinit {
        contents.deinitialize(count: capacity)
        contents.deallocate()
    }

    var count: Int { headers.count }

    subscript(index: Int) -> PhoneNotification { headers[index] }

    func notification(uid: UInt32) -> PhoneNotification? {
        headers.firstIndex { $0.uid == uid }.map { headers[$0] }
    }

    func content(uid: UInt32) -> NotificationContent? {
        guard let index = headers.firstIndex(where: { $0.uid == uid }) else { return nil }
        return contents[headers[index].slot]
    }

    /// The Notification Source CategoryCount for `category` now.
    func categoryCount(_ category: CategoryID) -> UInt8 {
        UInt8(min(Int(counts[Int(category.rawValue)]), 255))
    }

    mutating func post(uid: UInt32, category: CategoryID, flags: EventFlags, content: NotificationContent) -> Posted {
        let ownFlags = flags.subtracting(.preExisting)
        if uid >= nextUID { nextUID = uid == UInt32.max ? uid : uid + 1 }
        if let index = headers.firstIndex(where: { $0.uid == uid }) {
            let previous = headers[index]
            counts[Int(previous.category.rawValue)] -= 1
            counts[Int(category.rawValue)] += 1
            headers[index].category = category
            headers[index].flags = ownFlags
            contents[previous.slot] = content
            return .modified(previous: previous)
        }
        var evicted: PhoneNotification? = nil
        if headers.isFull {
            evicted = remove(at: 0)
            evictionCount &+= 1
        }
        guard let slot = freeSlots.popFirst() else { preconditionFailure("a free slot exists when the store is not full") }
        contents[slot] = content
        headers.append(PhoneNotification(uid: uid, category: category, flags: ownFlags, replayPending: false, slot: slot))
        counts[Int(category.rawValue)] += 1
        return .added(evicted: evicted)
    }

    @discardableResult
    mutating func remove(uid: UInt32) -> PhoneNotification? {
        guard let index = headers.firstIndex(where: { $0.uid == uid }) else { return nil }
        return remove(at: index)
    }

    private mutating func remove(at index: Int) -> PhoneNotification {
        let removed = headers.remove(at: index)
        counts[Int(removed.category.rawValue)] -= 1
        if removed.replayPending { replayPendingCount -= 1 }
        freeSlots.push(removed.slot)
        return removed
    }

    // MARK: PreExisting replay

    /// Marks every notification for the replay of a new subscription.
    mutating func beginReplay() {
        for i in 0..<headers.count { headers[i].replayPending = true }
        replayPendingCount = headers.count
    }

    mutating func cancelReplay() {
        for i in 0..<headers.count { headers[i].replayPending = false }
        replayPendingCount = 0
    }

    /// The marked notification with the lowest UID, unmarked.
    mutating func takeNextReplay() -> PhoneNotification? {
        guard replayPendingCount > 0 else { return nil }
        var best: Int? = nil
        for i in 0..<headers.count where headers[i].replayPending {
            if best == nil || headers[i].uid < headers[best!].uid { best = i }
        }
        guard let index = best else { return nil }
        headers[index].replayPending = false
        replayPendingCount -= 1
        return headers[index]
    }
}

/// App identifier → display name, for Get App Attributes. Fixed capacity;
/// a full table refuses new apps (the scenario step fails and says so).
struct AppTable: ~Copyable {
    struct Entry {
        var identifier: AppIdentifier
        var displayName: AppDisplayName
    }

    private var entries: FixedArray<Entry>

    init(capacity: Int) {
        entries = FixedArray(capacity: capacity)
    }

    var count: Int { entries.count }

    /// Adds or renames; false when the table is full.
    mutating func set(_ identifier: AppIdentifier, _ displayName: AppDisplayName) -> Bool {
        if let index = entries.firstIndex(where: { $0.identifier == identifier }) {
            entries[index].displayName = displayName
            return true
        }
        return entries.append(Entry(identifier: identifier, displayName: displayName))
    }

    func displayName(for identifier: Span<UInt8>) -> AppDisplayName? {
        for i in 0..<entries.count {
            let entry = entries[i]
            if !entry.identifier.wasTruncated, entry.identifier.elementsEqual(identifier) { return entry.displayName }
        }
        return nil
    }
}
