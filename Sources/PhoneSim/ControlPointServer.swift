// What the phone answers to one Control Point write (docs/ancs.md, "Control
// Point commands", "Data Source responses"), as a pure function of the
// command bytes, the notifications and the app table.
//
// Checks come in this order, so one answer is well defined: the command is
// read to its end first (too short, a missing MaxLen or a missing NUL is
// 0xA1 Invalid Command; a CommandID above 2 is 0xA0 Unknown Command), then
// its parameters (an unknown attribute or action ID, UID or app is 0xA2
// Invalid Parameter; an action the notification does not offer is 0xA3
// Action Failed). Attributes are answered in the order asked, repeats
// included; a missing one has length 0. Title, Subtitle and Message are cut
// to the requested maximum at a UTF-8 character boundary, unless
// `overlongValues` asks for the full value to test the wearable's bound. A
// response that would not fit the phone's Data Source buffer is refused
// with ATT 0x11 Insufficient Resources rather than cut.

import ANCS
import ATT
import Bounded

enum ControlPointAnswer: Equatable {
    /// Acknowledge the write, then send `out` on Data Source.
    case dataSource
    /// Acknowledge the write and perform the action.
    case perform(uid: UInt32, action: ActionID)
    /// Answer the write with ATT error `code`.
    case error(code: UInt8, reason: Name)
}

enum ControlPointServer {
    /// The longest response to one command asking each attribute once.
    static let maxResponseBytes =
        1 + 4 + 8 * 3 + AppIdentifier.capacity + TitleBytes.capacity + SubtitleBytes.capacity + MessageBytes.capacity
        + 5 + DateBytes.capacity + 2 * LabelBytes.capacity

    static func answer(
        _ command: Span<UInt8>, store: borrowing NotificationStore, apps: borrowing AppTable, overlongValues: Bool,
        into out: inout ByteBuffer
    ) -> ControlPointAnswer {
        guard command.count > 0 else { return .error(code: ANCSErrorCode.invalidCommand.rawValue, reason: "empty") }
        switch command[0] {
        case CommandID.getNotificationAttributes.rawValue:
            return notificationAttributes(command, store: store, overlongValues: overlongValues, into: &out)
        case CommandID.getAppAttributes.rawValue:
            return appAttributes(command, apps: apps, into: &out)
        case CommandID.performNotificationAction.rawValue:
            return performAction(command, store: store)
        default:
            return .error(code: ANCSErrorCode.unknownCommand.rawValue, reason: "unknown-command")
        }
    }

    private static func invalidCommand(_ reason: Name) -> ControlPointAnswer {
        .error(code: ANCSErrorCode.invalidCommand.rawValue, reason: reason)
    }

    private static func invalidParameter(_ reason: Name) -> ControlPointAnswer {
        .error(code: ANCSErrorCode.invalidParameter.rawValue, reason: reason)
    }

    private static let noRoom = ControlPointAnswer.error(code: 0x11, reason: "response-too-long")

    private static func notificationAttributes(
        _ command: Span<UInt8>, store: borrowing NotificationStore, overlongValues: Bool, into out: inout ByteBuffer
    ) -> ControlPointAnswer {
        guard command.count >= 6 else { return invalidCommand("too-short") }
        var i = 5
        while i < command.count {
            guard let id = NotificationAttributeID(rawValue: command[i]) else { return invalidParameter("unknown-attribute") }
            i += id.takesMaxLength ? 3 : 1
            guard i <= command.count else { return invalidCommand("missing-max-length") }
        }
        let uid = command.le32(at: 1)
        guard let content = store.content(uid: uid) else { return invalidParameter("unknown-uid") }
        out.removeAll()
        out.append(contentsOf: command.extracting(0..<5))
        i = 5
        while i < command.count {
            let id = NotificationAttributeID(rawValue: command[i])!
            var maxLength = Int.max
            if id.takesMaxLength {
                if !overlongValues { maxLength = Int(command.le16(at: i + 1)) }
                i += 3
            } else {
                i += 1
            }
            let fits: Bool
            switch id {
            case .appIdentifier: fits = tuple(id, content.appIdentifier.span, maxLength, &out)
            case .title: fits = tuple(id, content.title.span, maxLength, &out)
            case .subtitle: fits = tuple(id, content.subtitle.span, maxLength, &out)
            case .message: fits = tuple(id, content.message.span, maxLength, &out)
            case .messageSize:
                let size = decimal(content.message.count)
                fits = tuple(id, size.span, maxLength, &out)
            case .date: fits = tuple(id, content.date.span, maxLength, &out)
            case .positiveActionLabel: fits = tuple(id, content.positiveLabel.span, maxLength, &out)
            case .negativeActionLabel: fits = tuple(id, content.negativeLabel.span, maxLength, &out)
            }
            guard fits else { return noRoom }
        }
        return .dataSource
    }

    /// Appends `ID Length(2) bytes`, the value cut to `maxLength` at a
    /// character boundary. False when `out` is full.
    private static func tuple(_ id: NotificationAttributeID, _ value: Span<UInt8>, _ maxLength: Int, _ out: inout ByteBuffer) -> Bool {
        var length = value.count
        if length > maxLength { length = UTF8Boundary.lastCompleteEnd(value.extracting(0..<maxLength)) }
        guard out.freeCount >= 3 + length else { return false }
        out.append(id.rawValue)
        out.appendLE16(UInt16(length))
        return out.append(contentsOf: value.extracting(0..<length))
    }

    private static func decimal(_ n: Int) -> InlineBytes<20> {
        var digits = InlineBytes<20>()
        var divisor = 1
        while n / divisor >= 10 { divisor *= 10 }
        while divisor > 0 {
            digits.append(UInt8(ascii: "0") + UInt8((n / divisor) % 10))
            divisor /= 10
        }
        return digits
    }

    private static func appAttributes(_ command: Span<UInt8>, apps: borrowing AppTable, into out: inout ByteBuffer) -> ControlPointAnswer {
        var nul = 1
        while nul < command.count, command[nul] != 0 { nul += 1 }
        guard nul < command.count else { return invalidCommand("no-nul") }
        guard nul + 1 < command.count else { return invalidCommand("no-attributes") }
        for i in nul + 1..<command.count where AppAttributeID(rawValue: command[i]) == nil {
            return invalidParameter("unknown-app-attribute")
        }
        guard let name = apps.displayName(for: command.extracting(1..<nul)) else { return invalidParameter("unknown-app") }
        out.removeAll()
        guard out.append(contentsOf: command.extracting(0..<nul + 1)) else { return noRoom }
        for _ in nul + 1..<command.count {
            guard out.freeCount >= 3 + name.count else { return noRoom }
            out.append(AppAttributeID.displayName.rawValue)
            out.appendLE16(UInt16(name.count))
            out.append(contentsOf: name.span)
        }
        return .dataSource
    }

    private static func performAction(_ command: Span<UInt8>, store: borrowing NotificationStore) -> ControlPointAnswer {
        guard command.count == 6 else { return invalidCommand("bad-length") }
        guard let action = ActionID(rawValue: command[5]) else { return invalidParameter("unknown-action") }
        let uid = command.le32(at: 1)
        guard let notification = store.notification(uid: uid) else { return invalidParameter("unknown-uid") }
        guard notification.flags.contains(.offering(action)) else {
            return .error(code: ANCSErrorCode.actionFailed.rawValue, reason: "action-not-offered")
        }
        return .perform(uid: uid, action: action)
    }
}
