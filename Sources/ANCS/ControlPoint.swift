// SPDX-License-Identifier: Apache-2.0
// Control Point commands and their encoding.
//
// The caller passes `maxLength`, the most its transport can write: ATT
// MTU − 3 in one Write Request, or an attribute's 512 bytes with a long
// write. A command that would not fit is an error, never a truncation: a
// truncated command would ask the phone for something else.

import Bounded

public enum ControlPointCommand: Equatable, Sendable {
    case getNotificationAttributes(uid: UInt32, attributes: NotificationAttributeSet)
    case getAppAttributes(appIdentifier: AppIdentifier, attributes: AppAttributeSet)
    case performNotificationAction(uid: UInt32, action: ActionID)

    public var commandID: CommandID {
        switch self {
        case .getNotificationAttributes: .getNotificationAttributes
        case .getAppAttributes: .getAppAttributes
        case .performNotificationAction: .performNotificationAction
        }
    }

    /// The notification this command is about, if any.
    public var uid: UInt32? {
        switch self {
        case .getNotificationAttributes(let uid, _), .performNotificationAction(let uid, _): uid
        case .getAppAttributes: nil
        }
    }

    /// The encoded size in bytes.
    public func encodedCount(limits: AttributeLimits) -> Int {
        switch self {
        case .getNotificationAttributes(_, let attributes):
            var n = 1 + 4
            for id in NotificationAttributeID.allCases where attributes.contains(id) { n += id.takesMaxLength ? 3 : 1 }
            return n
        case .getAppAttributes(let appIdentifier, let attributes):
            return 1 + appIdentifier.count + 1 + attributes.rawValue.nonzeroBitCount
        case .performNotificationAction:
            return 1 + 4 + 1
        }
    }

    /// Checks what the wire format cannot express, before any byte is written.
    public func validate() throws(ControlPointError) {
        switch self {
        case .getNotificationAttributes(_, let attributes):
            guard !attributes.isEmpty else { throw .noAttributes }
        case .getAppAttributes(let appIdentifier, let attributes):
            guard !attributes.isEmpty else { throw .noAttributes }
            guard !appIdentifier.isEmpty else { throw .emptyAppIdentifier }
            guard !appIdentifier.wasTruncated else { throw .truncatedAppIdentifier }
            for i in 0..<appIdentifier.count where appIdentifier[i] == 0 { throw .nulInAppIdentifier }
        case .performNotificationAction:
            break
        }
    }

    /// Replaces the contents of `out` with the command's bytes. On error
    /// `out` is left unchanged.
    public func encode(into out: inout ByteBuffer, limits: AttributeLimits, maxLength: Int) throws(ControlPointError) {
        try validate()
        let needed = encodedCount(limits: limits)
        guard needed <= maxLength else { throw .doesNotFit(neededBytes: needed, maxBytes: maxLength) }
        guard needed <= out.capacity else { throw .doesNotFit(neededBytes: needed, maxBytes: out.capacity) }
        out.removeAll()
        out.append(commandID.rawValue)
        switch self {
        case .getNotificationAttributes(let uid, let attributes):
            out.appendLE32(uid)
            for id in NotificationAttributeID.allCases where attributes.contains(id) {
                out.append(id.rawValue)
                if id.takesMaxLength { out.appendLE16(UInt16(limits[id])) }
            }
        case .getAppAttributes(let appIdentifier, let attributes):
            out.append(contentsOf: appIdentifier.span)
            out.append(0)
            if attributes.contains(.displayName) { out.append(AppAttributeID.displayName.rawValue) }
        case .performNotificationAction(let uid, let action):
            out.appendLE32(uid)
            out.append(action.rawValue)
        }
    }
}

public enum ControlPointError: Error, Equatable, Sendable {
    /// The command is longer than the caller can write (`maxLength`).
    case doesNotFit(neededBytes: Int, maxBytes: Int)
    case noAttributes
    case emptyAppIdentifier
    /// An identifier cut to fit our storage names no app; asking would be wrong.
    case truncatedAppIdentifier
    /// A NUL would end the identifier early on the wire.
    case nulInAppIdentifier

    public var name: StaticString {
        switch self {
        case .doesNotFit: "command-does-not-fit-mtu"
        case .noAttributes: "no-attributes"
        case .emptyAppIdentifier: "empty-app-identifier"
        case .truncatedAppIdentifier: "truncated-app-identifier"
        case .nulInAppIdentifier: "nul-in-app-identifier"
        }
    }
}
