// SPDX-License-Identifier: Apache-2.0
// Notification Source: exactly 8 bytes,
// EventID(1) EventFlags(1) CategoryID(1) CategoryCount(1) NotificationUID(4).

import Bounded

public struct NotificationSourceEvent: Equatable, Sendable {
    public static let byteCount = 8

    public var eventID: EventID
    public var flags: EventFlags
    public var category: CategoryID
    public var categoryCount: UInt8
    public var uid: UInt32

    public init(eventID: EventID, flags: EventFlags, category: CategoryID, categoryCount: UInt8, uid: UInt32) {
        self.eventID = eventID
        self.flags = flags
        self.category = category
        self.categoryCount = categoryCount
        self.uid = uid
    }

    /// Decodes one Notification Source value. Anything but exactly 8 bytes,
    /// or a reserved EventID, is an error for the caller to count and drop.
    public static func decode(_ bytes: Span<UInt8>) throws(NotificationSourceError) -> NotificationSourceEvent {
        guard bytes.count == byteCount else { throw .wrongLength(bytes.count) }
        guard let eventID = EventID(rawValue: bytes[0]) else { throw .reservedEventID(bytes[0]) }
        return NotificationSourceEvent(
            eventID: eventID, flags: EventFlags(rawValue: bytes[1]), category: CategoryID(rawValue: bytes[2]),
            categoryCount: bytes[3], uid: bytes.le32(at: 4))
    }

    /// Writes the 8 bytes (the simulated phone's side). Returns false when
    /// `out` has no room.
    @discardableResult
    public func encode(into out: inout ByteBuffer) -> Bool {
        guard out.freeCount >= Self.byteCount else { return false }
        out.append(eventID.rawValue)
        out.append(flags.rawValue)
        out.append(category.rawValue)
        out.append(categoryCount)
        out.appendLE32(uid)
        return true
    }
}

public enum NotificationSourceError: Error, Equatable, Sendable {
    case wrongLength(Int)
    case reservedEventID(UInt8)

    public var name: StaticString {
        switch self {
        case .wrongLength: "notification-source-length"
        case .reservedEventID: "notification-source-reserved-event"
        }
    }
}
