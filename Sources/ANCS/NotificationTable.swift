// SPDX-License-Identifier: Apache-2.0
// The notifications of the current session, with a fixed capacity, and the
// phone's count of notifications per category.
//
// Order is arrival order (oldest first) and drives eviction; `sequence`
// (bumped on Added and Modified) says which is most recent for "act on the
// latest". When an Added arrives and the table is full, the oldest entry
// that is not an incoming call is evicted and counted: at session start an
// iPhone may replay hundreds of pre-existing notifications, and the recent
// ones matter to the wearer.
//
// Category counts are the phone's, not a tally of the records: every
// Notification Source event sets its category's count to the CategoryCount
// it carries (a Removed or Modified for a UID evicted long ago included),
// so a table that holds only 64 of the phone's notifications still says
// what the phone holds. A notification that leaves a category (a Modified
// or Removed naming another category than the one stored) takes one from
// the old category's count, since the phone's event gives only the new
// one's; so does a UID the phone says no longer exists (0xA2, `remove`).
// Reserved categories count as Other.

import Bounded

public struct NotificationRecord: Equatable, Sendable {
    public var uid: UInt32
    public var category: CategoryID
    public var flags: EventFlags
    public var categoryCount: UInt8
    public var lastEvent: EventID
    /// Arrival order of the last Added or Modified; larger is more recent.
    public var sequence: UInt64
    /// Attributes whose values arrived in this session.
    public var attributesKnown: NotificationAttributeSet
    /// The app it is from, as `AppHash` of its AppIdentifier; 0 until
    /// that attribute arrived (what tells a call replayed under a new UID
    /// from another app's call).
    public var appHash: UInt32

    public var isIncomingCall: Bool { category == .incomingCall }

    public func offers(_ action: ActionID) -> Bool { flags.contains(.offering(action)) }

    public init(
        uid: UInt32, category: CategoryID, flags: EventFlags, categoryCount: UInt8, lastEvent: EventID, sequence: UInt64,
        attributesKnown: NotificationAttributeSet, appHash: UInt32 = 0
    ) {
        self.uid = uid
        self.category = category
        self.flags = flags
        self.categoryCount = categoryCount
        self.lastEvent = lastEvent
        self.sequence = sequence
        self.attributesKnown = attributesKnown
        self.appHash = appHash
    }
}

/// How the table changed for one Notification Source event.
public enum TableChange: Equatable, Sendable {
    /// A new UID. `evicted` is the record pushed out to make room, if any.
    case added(NotificationRecord, evicted: NotificationRecord?)
    /// A known UID changed (or an Added repeated a known UID). `previous`
    /// is the record before.
    case modified(NotificationRecord, previous: NotificationRecord)
    case removed(NotificationRecord)
    /// Removed for a UID we do not hold (evicted earlier, or never seen):
    /// the phone's event, whose count the table took all the same.
    case removedUnknown(NotificationSourceEvent)
}

public struct NotificationTable: ~Copyable {
    /// A count per defined category (reserved ones count as Other).
    public typealias PerCategory = InlineArray<12, UInt8>

    private var records: FixedArray<NotificationRecord>
    private var nextSequence: UInt64 = 1
    private var counts: PerCategory = InlineArray(repeating: 0)
    /// Records pushed out because the table was full.
    public private(set) var evictionCount: UInt64 = 0

    public init(capacity: Int) {
        precondition(CategoryID.knownCount <= PerCategory.count, "a category without a count slot")
        records = FixedArray(capacity: capacity)
    }

    /// How many notifications of `category` the phone holds, as its latest
    /// event said (see the top of the file).
    public func categoryCount(_ category: CategoryID) -> UInt8 { counts[Int(category.effective.rawValue)] }

    private mutating func takeOne(from category: CategoryID) {
        let c = Int(category.effective.rawValue)
        if counts[c] > 0 { counts[c] -= 1 }
    }

    public var count: Int { records.count }
    public var capacity: Int { records.capacity }

    /// The record at `index` (0 is the oldest).
    public subscript(index: Int) -> NotificationRecord { records[index] }

    public func record(uid: UInt32) -> NotificationRecord? {
        records.firstIndex { $0.uid == uid }.map { records[$0] }
    }

    private mutating func takeSequence() -> UInt64 {
        let s = nextSequence
        nextSequence &+= 1
        return s
    }

    public mutating func apply(_ event: NotificationSourceEvent) -> TableChange {
        let index = records.firstIndex { $0.uid == event.uid }
        if let index, records[index].category.effective != event.category.effective { takeOne(from: records[index].category) }
        counts[Int(event.category.effective.rawValue)] = event.categoryCount
        switch event.eventID {
        case .removed:
            guard let index else { return .removedUnknown(event) }
            var record = records.remove(at: index)
            record.lastEvent = .removed
            record.category = event.category
            record.flags = event.flags
            record.categoryCount = event.categoryCount
            return .removed(record)
        case .added, .modified:
            if let index {
                let previous = records[index]
                var record = previous
                record.category = event.category
                record.flags = event.flags
                record.categoryCount = event.categoryCount
                record.lastEvent = event.eventID
                record.sequence = takeSequence()
                records[index] = record
                return .modified(record, previous: previous)
            }
            // A Modified for a UID we never held (evicted) is as good as new.
            var evicted: NotificationRecord? = nil
            if records.isFull {
                let victim = records.firstIndex { !$0.isIncomingCall } ?? 0
                evicted = records.remove(at: victim)
                evictionCount &+= 1
            }
            let record = NotificationRecord(
                uid: event.uid, category: event.category, flags: event.flags, categoryCount: event.categoryCount,
                lastEvent: event.eventID, sequence: takeSequence(), attributesKnown: [])
            records.append(record)
            return .added(record, evicted: evicted)
        }
    }

    /// Removes `uid` (the NP said it no longer exists), one fewer in its
    /// category, as the phone's own Removed would have said. Returns the
    /// record as removed: its count is the category's now.
    @discardableResult
    public mutating func remove(uid: UInt32) -> NotificationRecord? {
        guard let index = records.firstIndex(where: { $0.uid == uid }) else { return nil }
        var record = records.remove(at: index)
        takeOne(from: record.category)
        record.lastEvent = .removed
        record.categoryCount = categoryCount(record.category)
        return record
    }

    /// `appHash`: the app of the values that arrived, when AppIdentifier
    /// was among them (0 otherwise).
    public mutating func markAttributesKnown(uid: UInt32, _ attributes: NotificationAttributeSet, appHash: UInt32 = 0) {
        guard let index = records.firstIndex(where: { $0.uid == uid }) else { return }
        records[index].attributesKnown.formUnion(attributes)
        if appHash != 0 { records[index].appHash = appHash }
    }

    /// The most recent record satisfying `predicate`.
    public func mostRecent(where predicate: (NotificationRecord) -> Bool) -> NotificationRecord? {
        var best: NotificationRecord? = nil
        for i in 0..<records.count {
            let r = records[i]
            if predicate(r), r.sequence > best?.sequence ?? 0 { best = r }
        }
        return best
    }

    /// Forgets every UID and count (session end).
    public mutating func removeAll() {
        records.removeAll()
        counts = InlineArray(repeating: 0)
    }
}
