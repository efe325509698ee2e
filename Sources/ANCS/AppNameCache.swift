// SPDX-License-Identifier: Apache-2.0
// App display names for the session: a fixed-capacity, least-recently-used
// cache keyed by app identifier, so each app's name is asked for at most
// once per session while it stays among the `capacity` most recently used.
// An app with no display name is cached too (as empty), so it is not asked
// again. Cleared at session end: app identifiers are only valid in a session.

import Bounded

public struct AppNameCache: ~Copyable {
    struct Entry {
        var appIdentifier: AppIdentifier
        var displayName: AppDisplayName
        var lastUse: UInt64
    }

    private var entries: FixedArray<Entry>
    private var clock: UInt64 = 0
    public private(set) var evictionCount: UInt64 = 0

    public init(capacity: Int) {
        entries = FixedArray(capacity: capacity)
    }

    public var count: Int { entries.count }
    public var capacity: Int { entries.capacity }

    /// The cached name, marking the entry as recently used.
    public mutating func lookup(_ appIdentifier: AppIdentifier) -> AppDisplayName? {
        guard let index = entries.firstIndex(where: { $0.appIdentifier == appIdentifier }) else { return nil }
        clock &+= 1
        entries[index].lastUse = clock
        return entries[index].displayName
    }

    /// The cached name without touching recency.
    public func peek(_ appIdentifier: AppIdentifier) -> AppDisplayName? {
        entries.firstIndex { $0.appIdentifier == appIdentifier }.map { entries[$0].displayName }
    }

    /// Stores a name, evicting the least recently used entry when full.
    public mutating func insert(_ appIdentifier: AppIdentifier, displayName: AppDisplayName) {
        clock &+= 1
        if let index = entries.firstIndex(where: { $0.appIdentifier == appIdentifier }) {
            entries[index].displayName = displayName
            entries[index].lastUse = clock
            return
        }
        if entries.isFull {
            var victim = 0
            for i in 1..<entries.count where entries[i].lastUse < entries[victim].lastUse { victim = i }
            entries.remove(at: victim)
            evictionCount &+= 1
        }
        entries.append(Entry(appIdentifier: appIdentifier, displayName: displayName, lastUse: clock))
    }

    public mutating func removeAll() {
        entries.removeAll()
    }
}
