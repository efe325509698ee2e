// SPDX-License-Identifier: Apache-2.0
// Which attributes a request asks for, and how many bytes of each we keep.
//
// A request is a set, not a list: there are only eight notification
// attributes, so a bit set makes coalescing two requests a union. Attributes
// are always requested in ascending ID order.

import Bounded

public struct NotificationAttributeSet: OptionSet, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public init(_ id: NotificationAttributeID) { rawValue = 1 << id.rawValue }

    public static let appIdentifier = Self(.appIdentifier)
    public static let title = Self(.title)
    public static let subtitle = Self(.subtitle)
    public static let message = Self(.message)
    public static let messageSize = Self(.messageSize)
    public static let date = Self(.date)
    public static let positiveActionLabel = Self(.positiveActionLabel)
    public static let negativeActionLabel = Self(.negativeActionLabel)
    public static let all = Self(rawValue: 0xFF)

    public func contains(_ id: NotificationAttributeID) -> Bool { rawValue & (1 << id.rawValue) != 0 }

    public var count: Int { rawValue.nonzeroBitCount }
}

public struct AppAttributeSet: OptionSet, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let displayName = AppAttributeSet(rawValue: 1 << AppAttributeID.displayName.rawValue)

    public func contains(_ id: AppAttributeID) -> Bool { rawValue & (1 << id.rawValue) != 0 }
}

/// The most bytes kept of each attribute value. Title, Subtitle and Message
/// are also requested with these as their maximum length; every value is
/// bounded here regardless, because the NP may send more than asked.
public struct AttributeLimits: Sendable, Equatable {
    /// Indexed by NotificationAttributeID.rawValue.
    private var notificationBytes: InlineArray<8, UInt16>
    public var displayNameBytes: Int

    /// The largest value any one attribute may keep.
    public static let maxValueBytes = 1024

    public init() {
        notificationBytes = [
            UInt16(AppIdentifier.capacity), // AppIdentifier
            64, // Title
            64, // Subtitle
            256, // Message
            8, // MessageSize: a decimal string
            15, // Date: yyyyMMdd'T'HHmmSS
            32, // PositiveActionLabel
            32, // NegativeActionLabel
        ]
        displayNameBytes = AppDisplayName.capacity
    }

    public subscript(id: NotificationAttributeID) -> Int {
        get { Int(notificationBytes[Int(id.rawValue)]) }
        set {
            precondition(newValue > 0 && newValue <= Self.maxValueBytes, "attribute limit out of range")
            if id == .appIdentifier { precondition(newValue <= AppIdentifier.capacity, "app identifier limit above its storage") }
            notificationBytes[Int(id.rawValue)] = UInt16(newValue)
        }
    }

    /// Bytes of storage needed to hold one response of each kind.
    public var totalBytes: Int {
        var sum = displayNameBytes
        for id in NotificationAttributeID.allCases { sum += self[id] }
        return sum
    }

    public static func == (a: Self, b: Self) -> Bool {
        guard a.displayNameBytes == b.displayNameBytes else { return false }
        for id in NotificationAttributeID.allCases where a[id] != b[id] { return false }
        return true
    }
}
