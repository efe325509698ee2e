// SPDX-License-Identifier: Apache-2.0
// Every ANCS constant as a type. Reserved values that the spec says to keep
// (EventFlags bits, CategoryID values) are preserved, not rejected.

import Bounded

public enum ANCSUUID {
    public static let service = UUID128("7905F431-B5CE-4E99-A40F-4B1E122D00D0")
    public static let notificationSource = UUID128("9FBF120D-6301-42D9-8C58-25E699A21DBD")
    public static let controlPoint = UUID128("69D1D8F3-45E1-49A8-9821-9BBDFDAAD9D9")
    public static let dataSource = UUID128("22EAC6E9-24D6-4BB5-BE44-B36ACE7C7BFB")
}

/// What happened to a notification. 3–255 are reserved: such an event is
/// dropped and counted.
public enum EventID: UInt8, Sendable {
    case added = 0
    case modified = 1
    case removed = 2

    public var name: StaticString {
        switch self {
        case .added: "added"
        case .modified: "modified"
        case .removed: "removed"
        }
    }
}

/// EventFlags. Reserved bits (5–7) are kept in `rawValue` and ignored.
public struct EventFlags: OptionSet, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let silent = EventFlags(rawValue: 1 << 0)
    public static let important = EventFlags(rawValue: 1 << 1)
    public static let preExisting = EventFlags(rawValue: 1 << 2)
    public static let positiveAction = EventFlags(rawValue: 1 << 3)
    public static let negativeAction = EventFlags(rawValue: 1 << 4)

    /// The spec's names, in bit order, for the events stream.
    public static let named: [(EventFlags, StaticString)] = [
        (.silent, "Silent"), (.important, "Important"), (.preExisting, "PreExisting"),
        (.positiveAction, "PositiveAction"), (.negativeAction, "NegativeAction"),
    ]

    /// The flag that must be set for the NP to accept `action`.
    public static func offering(_ action: ActionID) -> EventFlags {
        action == .positive ? .positiveAction : .negativeAction
    }
}

/// CategoryID. Values 12–255 are reserved: kept as received, treated as
/// `other` wherever behaviour depends on the category.
public struct CategoryID: RawRepresentable, Sendable, Hashable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let other = CategoryID(rawValue: 0)
    public static let incomingCall = CategoryID(rawValue: 1)
    public static let missedCall = CategoryID(rawValue: 2)
    public static let voicemail = CategoryID(rawValue: 3)
    public static let social = CategoryID(rawValue: 4)
    public static let schedule = CategoryID(rawValue: 5)
    public static let email = CategoryID(rawValue: 6)
    public static let news = CategoryID(rawValue: 7)
    public static let healthAndFitness = CategoryID(rawValue: 8)
    public static let businessAndFinance = CategoryID(rawValue: 9)
    public static let location = CategoryID(rawValue: 10)
    public static let entertainment = CategoryID(rawValue: 11)

    public static let knownCount = 12

    public var isReserved: Bool { Int(rawValue) >= CategoryID.knownCount }

    /// The category behaviour is based on: reserved values count as `other`.
    public var effective: CategoryID { isReserved ? .other : self }

    /// The spec's name ("IncomingCall"); reserved values are named "Other".
    public var name: StaticString {
        switch effective.rawValue {
        case 1: "IncomingCall"
        case 2: "MissedCall"
        case 3: "Voicemail"
        case 4: "Social"
        case 5: "Schedule"
        case 6: "Email"
        case 7: "News"
        case 8: "HealthAndFitness"
        case 9: "BusinessAndFinance"
        case 10: "Location"
        case 11: "Entertainment"
        default: "Other"
        }
    }

    /// The category with the spec name `name`, for configuration files.
    public init?(name: Span<UInt8>) {
        for raw in 0..<UInt8(CategoryID.knownCount) {
            let candidate = CategoryID(rawValue: raw)
            var equal = true
            candidate.name.withUTF8Buffer { spec in
                if spec.count != name.count { equal = false; return }
                for i in 0..<spec.count where spec[i] != name[i] { equal = false; return }
            }
            if equal { self = candidate; return }
        }
        return nil
    }
}

public enum CommandID: UInt8, Sendable {
    case getNotificationAttributes = 0
    case getAppAttributes = 1
    case performNotificationAction = 2
}

public enum NotificationAttributeID: UInt8, Sendable, CaseIterable {
    case appIdentifier = 0
    case title = 1
    case subtitle = 2
    case message = 3
    case messageSize = 4
    case date = 5
    case positiveActionLabel = 6
    case negativeActionLabel = 7

    /// Title, Subtitle and Message are requested with a 2-byte maximum length.
    public var takesMaxLength: Bool { self == .title || self == .subtitle || self == .message }

    public var name: StaticString {
        switch self {
        case .appIdentifier: "AppIdentifier"
        case .title: "Title"
        case .subtitle: "Subtitle"
        case .message: "Message"
        case .messageSize: "MessageSize"
        case .date: "Date"
        case .positiveActionLabel: "PositiveActionLabel"
        case .negativeActionLabel: "NegativeActionLabel"
        }
    }
}

public enum AppAttributeID: UInt8, Sendable {
    case displayName = 0
}

public enum ActionID: UInt8, Sendable {
    case positive = 0
    case negative = 1

    public var name: StaticString { self == .positive ? "positive" : "negative" }
}

/// The errors an NP answers a Control Point write with (as ATT error codes).
public enum ANCSErrorCode: UInt8, Sendable {
    case unknownCommand = 0xA0
    case invalidCommand = 0xA1
    case invalidParameter = 0xA2
    case actionFailed = 0xA3

    public var name: StaticString {
        switch self {
        case .unknownCommand: "unknown-command"
        case .invalidCommand: "invalid-command"
        case .invalidParameter: "invalid-parameter"
        case .actionFailed: "action-failed"
        }
    }
}

/// App identifiers longer than this are cut (and then never used to ask for
/// app attributes: a cut identifier names no app).
public typealias AppIdentifier = InlineBytes<128>
/// An app's display name as cached for the session.
public typealias AppDisplayName = InlineBytes<64>

/// A 32-bit FNV-1a hash of an app identifier, never 0 (0 means "app not
/// known"): what a notification record keeps to tell one app from another
/// without holding 128 bytes per notification.
public enum AppHash {
    public static func of(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        guard !bytes.isEmpty else { return 0 }
        var hash: UInt32 = 2_166_136_261
        for byte in bytes {
            hash ^= UInt32(byte)
            hash = hash &* 16_777_619
        }
        return hash == 0 ? 1 : hash
    }
}
