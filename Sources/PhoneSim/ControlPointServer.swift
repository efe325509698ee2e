// SPDX-License-Identifier: Apache-2.0
// The phone's Control Point server: every write to the ANCS Control Point,
// whole (Write Request, Write Command) or long (Prepare Writes, then Execute
// Write), answered as the phone answers it, with Data Source responses
// queued for the phone's pump.
//
// What it keeps is the Control Point's alone: the link's prepared-write
// queue (PrepareWriteQueue.swift), the response being built, and the
// scenario's faults (`error`: the next writes get a scripted ATT error;
// `lose-response`: fetches acknowledged and their responses never sent).
// What it needs of the phone comes with each request: the notifications
// and app names, whether the wearable has a session and Data Source is
// subscribed, the Data Source queue, the buffer for the reply and the
// outputs for events and counters. It answers into `reply` and returns
// what came of the request (`Outcome`); the phone sends the reply and,
// after a performed action, removes the notification. A write is judged in
// this order: a Write Command is ignored (the Control Point has no
// write-without-response property); a scripted error; no session (taken,
// nothing follows); then the command itself.
//
// The command's answer is a pure function of the command bytes, the
// notifications and the app table (docs/ancs.md, "Control Point commands",
// "Data Source responses"). Checks come in this order, so one answer is
// well defined: the command is read to its end first (too short, a missing
// MaxLen or a missing NUL is 0xA1 Invalid Command; a CommandID above 2 is
// 0xA0 Unknown Command), then its parameters (an unknown attribute or
// action ID, UID or app is 0xA2 Invalid Parameter; an action the
// notification does not offer is 0xA3 Action Failed). Attributes are
// answered in the order asked, repeats included; a missing one has length
// 0. Title, Subtitle and Message are cut to the requested maximum at a
// UTF-8 character boundary, unless `overlongValues` asks for the full value
// to test the wearable's bound. A response that would not fit the phone's
// Data Source buffer is refused with ATT 0x11 Insufficient Resources rather
// than cut.

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

struct ControlPointServer: ~Copyable {
    /// The longest response to one command asking each attribute once.
    static let maxResponseBytes =
        1 + 4 + 8 * 3 + AppIdentifier.capacity + TitleBytes.capacity + SubtitleBytes.capacity + MessageBytes.capacity
        + 5 + DateBytes.capacity + 2 * LabelBytes.capacity

    /// The wearable as the phone sees it when a command comes.
    struct Session {
        /// False after `drop-subscription` until Notification Source is
        /// subscribed again: writes are acknowledged and nothing follows.
        var exists: Bool
        var dataSourceSubscribed: Bool
    }

    /// What came of a request, besides its events.
    enum Outcome: Equatable {
        /// `reply` holds the PDU that answers the request.
        case answered
        /// Answered (`reply`), and the action was performed on `uid`.
        case performed(uid: UInt32)
        /// Nothing to send: a Write Command.
        case unanswered
    }

    private let overlongValues: Bool
    private var prepared: PrepareWriteQueue
    /// The Data Source response being built.
    private var response: ByteBuffer
    private var forcedErrorCode: UInt8 = 0
    private var forcedErrorsLeft = 0
    /// `lose-response`: fetches still to acknowledge without a response.
    private var responsesToLose = 0

    init(config: PhoneConfig) {
        precondition(config.prepareQueueCapacityBytes <= ATTValue.maximumBytes, "a prepared value is at most 512 bytes")
        overlongValues = config.overlongValues
        prepared = PrepareWriteQueue(partCapacity: config.prepareQueueCapacity, byteCapacity: config.prepareQueueCapacityBytes)
        response = ByteBuffer(capacity: Self.maxResponseBytes)
    }

    /// The link went down or came up: prepared writes are per link.
    mutating func resetLink() { prepared.removeAll() }

    /// `error <code> [count]`: the next `count` writes get ATT error `code`.
    mutating func forceErrors(code: UInt8, count: Int) {
        forcedErrorCode = code
        forcedErrorsLeft = count
    }

    /// `lose-response [count]`: the next `count` fetches are acknowledged
    /// and their responses never sent.
    mutating func loseResponses(count: Int) { responsesToLose = count }

    /// Prepare Write: queues one part of a long write and echoes it, or
    /// answers Prepare Queue Full. `reply` always holds the answer.
    mutating func prepare(offset: UInt16, _ value: Span<UInt8>, mtu: Int, reply: inout ByteBuffer, outputs: inout PhoneOutputs) {
        let handle = PhoneDatabase.controlPointValue
        guard prepared.push(handle: handle, offset: offset, value: value) else {
            _ = Self.refuse(
                code: ATTErrorCode.prepareQueueFull, reason: "prepare-queue-full", requestOpcode: ATTOpcode.prepareWriteRequest,
                reply: &reply, outputs: &outputs)
            return
        }
        do {
            try PDUWriter.prepareWriteResponse(&reply, handle: handle, offset: offset, value: value, mtu: mtu)
        } catch {
            preconditionFailure("the echo is as long as the request")
        }
        outputs.emit(.writePrepared(offset: Int(offset), byteCount: value.count))
    }

    /// Execute Write: the queued parts joined are one Control Point write
    /// (answered with Execute Write Response or an error to 0x18), or dropped.
    mutating func execute(
        flags: UInt8, session: Session, store: borrowing NotificationStore, apps: borrowing AppTable, dataSource: inout PacketQueue,
        reply: inout ByteBuffer, outputs: inout PhoneOutputs
    ) -> Outcome {
        let byteCount = prepared.byteCount
        let writing = flags == ExecuteWriteFlags.write
        outputs.emit(.writeExecuted(write: writing, byteCount: byteCount))
        guard writing, !prepared.isEmpty else {
            prepared.removeAll()
            PDUWriter.executeWriteResponse(&reply)
            return .answered
        }
        // A local copy: the write mutates self, which owns the queue.
        var value = InlineBytes<512>()
        if let refusal = prepared.execute(handle: PhoneDatabase.controlPointValue, into: &value) {
            let reason: Name =
                switch refusal.code {
                case ATTErrorCode.invalidOffset: "invalid-offset"
                case ATTErrorCode.invalidAttributeValueLength: "invalid-length"
                default: "write-not-permitted"
                }
            PDUWriter.errorResponse(&reply, requestOpcode: ATTOpcode.executeWriteRequest, handle: refusal.handle, code: refusal.code)
            outputs.emit(.errorAnswered(handle: refusal.handle, code: refusal.code, reason: reason))
            return .answered
        }
        return write(
            value.span, requestOpcode: ATTOpcode.executeWriteRequest, isCommand: false, session: session, store: store, apps: apps,
            dataSource: &dataSource, reply: &reply, outputs: &outputs)
    }

    /// One Control Point command from a Write Request (0x12), a Write
    /// Command (0x52) or an executed long write (0x18): answered with that
    /// request's response or an Error Response naming it.
    mutating func write(
        _ value: Span<UInt8>, requestOpcode: UInt8, isCommand: Bool, session: Session, store: borrowing NotificationStore,
        apps: borrowing AppTable, dataSource: inout PacketQueue, reply: inout ByteBuffer, outputs: inout PhoneOutputs
    ) -> Outcome {
        outputs.emit(.controlPointWrite(ControlPointBytes(value)))
        guard !isCommand else {
            // The Control Point has no write-without-response property.
            outputs.counters.controlPointCommandsIgnored &+= 1
            outputs.emit(.dropped(what: "control-point", reason: "write-command"))
            return .unanswered
        }
        if forcedErrorsLeft > 0 {
            forcedErrorsLeft -= 1
            return Self.refuse(code: forcedErrorCode, reason: "scripted", requestOpcode: requestOpcode, reply: &reply, outputs: &outputs)
        }
        guard session.exists else {
            // No session for this client: the write is taken, nothing follows.
            outputs.counters.controlPointWritesWithoutSession &+= 1
            outputs.emit(.dropped(what: "control-point", reason: "no-session"))
            return Self.acknowledge(requestOpcode: requestOpcode, reply: &reply)
        }
        switch Self.answer(value, store: store, apps: apps, overlongValues: overlongValues, into: &response) {
        case .dataSource:
            guard session.dataSourceSubscribed else {
                outputs.counters.dataSourceWithoutSubscription &+= 1
                outputs.emit(.dropped(what: "data-source", reason: "not-subscribed"))
                return Self.acknowledge(requestOpcode: requestOpcode, reply: &reply)
            }
            guard dataSource.count < dataSource.capacity else {
                outputs.counters.dataSourceQueueFull &+= 1
                return Self.refuse(
                    code: 0x11, reason: "data-source-queue-full", requestOpcode: requestOpcode, reply: &reply, outputs: &outputs)
            }
            if responsesToLose > 0 {
                responsesToLose -= 1
                outputs.counters.responsesLost &+= 1
                outputs.emit(.dropped(what: "data-source", reason: "lost"))
            } else {
                dataSource.push(copyOf: response)
            }
            return Self.acknowledge(requestOpcode: requestOpcode, reply: &reply)
        case .perform(let uid, let action):
            outputs.emit(.actionPerformed(uid: uid, action: action))
            _ = Self.acknowledge(requestOpcode: requestOpcode, reply: &reply)
            return .performed(uid: uid)
        case .error(let code, let reason):
            return Self.refuse(code: code, reason: reason, requestOpcode: requestOpcode, reply: &reply, outputs: &outputs)
        }
    }

    private static func acknowledge(requestOpcode: UInt8, reply: inout ByteBuffer) -> Outcome {
        if requestOpcode == ATTOpcode.executeWriteRequest {
            PDUWriter.executeWriteResponse(&reply)
        } else {
            PDUWriter.writeResponse(&reply)
        }
        return .answered
    }

    private static func refuse(
        code: UInt8, reason: Name, requestOpcode: UInt8, reply: inout ByteBuffer, outputs: inout PhoneOutputs
    ) -> Outcome {
        PDUWriter.errorResponse(&reply, requestOpcode: requestOpcode, handle: PhoneDatabase.controlPointValue, code: code)
        outputs.emit(.errorAnswered(handle: PhoneDatabase.controlPointValue, code: code, reason: reason))
        return .answered
    }

    // MARK: The answer to a command

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
