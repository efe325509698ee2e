// SPDX-License-Identifier: Apache-2.0
import ANCS
import Bounded
import TestSupport

func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }

/// A Get Notification Attributes response: 00 UID {ID Len Bytes}...
func notificationResponse(uid: UInt32, _ tuples: [(NotificationAttributeID, [UInt8])]) -> [UInt8] {
    var out: [UInt8] = [0] + le32(uid)
    for (id, value) in tuples { out += [id.rawValue] + le16(value.count) + value }
    return out
}

/// A Get App Attributes response: 01 AppIdentifier NUL {ID Len Bytes}...
func appResponse(_ app: String, displayName: [UInt8]) -> [UInt8] {
    [1] + Array(app.utf8) + [0, 0] + le16(displayName.count) + displayName
}

func ns(_ event: EventID, _ flags: EventFlags, _ category: CategoryID, count: UInt8 = 1, uid: UInt32) -> [UInt8] {
    [event.rawValue, flags.rawValue, category.rawValue, count] + le32(uid)
}

extension DataSourceReassembler {
    /// The value of `id` copied out, for comparisons in tests.
    func bytes(_ id: NotificationAttributeID) -> [UInt8] {
        let v = value(id)
        return (0..<v.count).map { v[$0] }
    }

    var displayNameBytes: [UInt8] {
        let v = displayName
        return (0..<v.count).map { v[$0] }
    }
}
