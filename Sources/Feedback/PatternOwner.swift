// SPDX-License-Identifier: Apache-2.0
// Who a pattern plays for. A notification's patterns are owned by its UID;
// the wearable's own indications each have their own case. Separate cases,
// not reserved numbers in the UID space: a phone may send any 32-bit UID, and
// the Removed of a notification numbered like an indication must not stop
// that indication.

public enum PatternOwner: Hashable, Sendable {
    /// The notification with this UID (stopped by its Removed).
    case notification(UInt32)
    /// The unread indicator (steady while something is unread).
    case unread
    /// Short feedback: an action sent or failed, a press acknowledged.
    case feedback
    /// Pairing mode and the wait for the wearer's consent.
    case pairing
    /// The phone asks the wearer to allow notifications.
    case permission
    /// The lasting alert held on this output (a ringing call), whichever
    /// notification holds it now.
    case lasting(output: Int)

    /// A notification's own pattern (not one of the wearable's indications).
    public var isNotification: Bool {
        if case .notification = self { return true }
        return false
    }
}

/// `owner: 7` in a test means the notification with UID 7.
extension PatternOwner: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: UInt32) { self = .notification(value) }
}
