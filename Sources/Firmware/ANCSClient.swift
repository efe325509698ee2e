// SPDX-License-Identifier: Apache-2.0
// The ANCS client (docs/ancs.md), the shape of Nordic's ancs_client: the
// service's discovery and its three characteristics, the subscriptions
// (Data Source, then Notification Source), the Control Point's commands
// (a Write Request, or a long write past MTU − 3 bytes) with the answers
// to them, and the Notification Source and Data Source notifications,
// with the session they feed. Sans-IO: `nextRequest` writes the request of
// the procedure under way into the caller's buffer and `nextCommand` the
// Control Point's next command; `discoveryResponse`, `subscriptionResponse`
// and `controlPointResponse` consume the answer and say how far it got;
// `notification` takes the phone's notifications; `deadline`/`advance` is
// the session's response timeout. The session itself is the link's, lent
// to these calls: the link lends it to its event handler with every event
// and observers read it (a session stored here and yielded through the
// link crashes the 6.3 optimizer in callers that keep a value's span).
// It sends nothing and reports nothing:
// PhoneLink asks the arbiter when it may send (ATTArbiter.swift) and turns
// what these return into events. When to discover, subscribe or subscribe
// again (encryption, permission waits, retries, Service Changed) is the
// link's phase, not this client's.

import ANCS
import ATT
import Bounded
import GATT

struct ANCSClient: ~Copyable {
    /// The procedure whose requests `nextRequest` writes.
    private enum Procedure: Equatable {
        case none
        case discovery
        case subscription
        case longWrite
    }

    /// The Control Point's turn (`nextCommand`).
    enum CommandTurn: Equatable {
        /// A command's request is in the buffer: submit it.
        case send
        /// A command the session dropped instead (report it).
        case dropped(CommandResult)
    }

    /// What an answer to a Control Point write means, in the order the
    /// link reports it.
    struct ControlPointAnswer {
        /// A long write goes on: submit `nextRequest`.
        var continuing = false
        /// Refused for want of the user's permission (0x03/0x08).
        var refusedForPermission = false
        /// Refused so, this many times in a row: at or past the threshold,
        /// the phone is taken not to share.
        var notPermittedInARow: Int? = nil
        /// A wait for permission the refusals had begun is over.
        var permitted = false
        /// The phone no longer has the notification (0xA2): the session
        /// removed it, and this is the removal as the phone's own Removed
        /// would have said it (the count its category now holds).
        var removed: NotificationRecord? = nil
        /// The command's end, if this answer ended it.
        var result: CommandResult? = nil
    }

    /// What a notification was.
    enum Notified {
        case notMine
        /// `permitted`: a wait for permission the Control Point's refusals
        /// had begun is over (the phone shares notifications after all).
        case notificationSource(NotificationSourceResult, permitted: Bool)
        case dataSource(DataSourceResult)
    }

    private var discovery: ServiceDiscovery
    private var procedure = Procedure.none
    private var subscription = CCCDWrite(handle: 0, value: 0)
    private var command: ByteBuffer
    private var longWrite: LongWrite
    private(set) var notificationSourceHandle: UInt16 = 0
    private(set) var dataSourceHandle: UInt16 = 0
    private(set) var controlPointHandle: UInt16 = 0
    /// Control Point writes refused with 0x03/0x08 in a row on this link
    /// (not reset by a resubscription: the phone may accept the CCCD and
    /// still refuse the Control Point).
    private var refusals = 0
    private let refusalsForPermission: Int

    init(controlPointRefusalsForPermission: Int) {
        discovery = ServiceDiscovery(service: .uuid128(ANCSUUID.service), wanted: PhoneHandles.wanted(service: 1))
        command = ByteBuffer(capacity: ATTValue.maximumBytes)
        longWrite = LongWrite(capacityBytes: ATTValue.maximumBytes)
        refusalsForPermission = controlPointRefusalsForPermission
    }

    /// A new link: nothing of the last one is known.
    mutating func reset(_ session: inout Session) {
        linkEnded(&session)
        clearHandles()
    }

    /// The link ended: no session, nothing under way, no refusals. The
    /// handles stay until the next link (a late notification still reaches
    /// the ended session and is dropped there).
    mutating func linkEnded(_ session: inout Session) {
        session.end()
        longWrite.reset()
        refusals = 0
    }

    /// Ends the session on a link that stays up. A long write under way is
    /// abandoned: its responses are no longer awaited, and the next one
    /// cancels whatever the phone queued.
    mutating func endSession(_ session: inout Session) {
        session.end()
        longWrite.abandon()
    }

    /// The Control Point holds the bearer: a command is in flight (its
    /// write, or a fetch's Data Source response).
    func isBusy(_ session: borrowing Session) -> Bool { session.hasCommandInFlight || longWrite.isActive }

    /// Writes the next request of the procedure under way into `out`.
    mutating func nextRequest(into out: inout ByteBuffer, mtu: Int) -> Bool {
        switch procedure {
        case .none: false
        case .discovery: discovery.nextRequest(into: &out, mtu: mtu)
        case .subscription: subscription.nextRequest(into: &out, mtu: mtu)
        case .longWrite: longWrite.nextRequest(into: &out, mtu: mtu)
        }
    }

    // MARK: Discovery

    /// Starts finding ANCS again: its handles are forgotten until found.
    mutating func startDiscovery() {
        clearHandles()
        discovery.restart()
        procedure = .discovery
    }

    mutating func discoveryResponse(_ response: ATTPDU, in pdu: Span<UInt8>) -> ServiceDiscovery.Progress {
        discovery.handle(response, in: pdu)
    }

    /// Takes the handles discovery found; false when there is no usable
    /// ANCS (no Notification Source with its CCCD).
    mutating func discovered() -> Bool {
        guard let ns = discovery.characteristic(.uuid128(ANCSUUID.notificationSource)), ns.cccdHandle != 0 else { return false }
        notificationSourceHandle = ns.valueHandle
        controlPointHandle = discovery.characteristic(.uuid128(ANCSUUID.controlPoint))?.valueHandle ?? 0
        return true
    }

    /// What discovery found (nil: it has not ended with an answer).
    var discoverySnapshot: DiscoveredService? { discovery.snapshot }

    /// Takes an earlier link's ANCS as found (a bonded phone's cache);
    /// `discovered()` then takes its handles.
    mutating func restoreDiscovery(_ cached: DiscoveredService) {
        clearHandles()
        discovery.restore(cached)
        procedure = .none
    }

    /// Whether a Service Changed range touches ANCS (not found yet counts:
    /// it may have appeared).
    func isAffected(by range: ServiceChangedRange) -> Bool {
        discovery.serviceStart == 0 || range.overlaps(start: discovery.serviceStart, end: discovery.serviceEnd)
    }

    private mutating func clearHandles() {
        notificationSourceHandle = 0
        dataSourceHandle = 0
        controlPointHandle = 0
    }

    // MARK: Subscription

    /// Prepares the CCCD write of `source` (send `nextRequest`); false when
    /// the phone has no such characteristic with a CCCD. Data Source's
    /// value handle is taken here: its notifications count from now.
    mutating func subscribe(_ source: SubscribedSource, _ value: UInt16) -> Bool {
        let uuid = source == .dataSource ? ANCSUUID.dataSource : ANCSUUID.notificationSource
        guard let characteristic = discovery.characteristic(.uuid128(uuid)), characteristic.cccdHandle != 0 else { return false }
        if source == .dataSource { dataSourceHandle = characteristic.valueHandle }
        subscription = CCCDWrite(handle: characteristic.cccdHandle, value: value)
        procedure = .subscription
        return true
    }

    func subscriptionResponse(_ response: ATTPDU, in pdu: Span<UInt8>) -> CCCDWrite.Progress {
        subscription.handle(response, in: pdu)
    }

    // MARK: Control Point

    /// Whether a queued command may be written now.
    func canSendCommand(_ session: borrowing Session) -> Bool { controlPointHandle != 0 && session.canSend }

    /// The Control Point's turn: the next queued command's request into
    /// `out` (a Write Request, or the first of a long write), or a command
    /// the session dropped instead; nil when none is queued.
    mutating func nextCommand(_ session: inout Session, into out: inout ByteBuffer, mtu: Int) -> CommandTurn? {
        guard let outcome = session.encodeNextCommand(into: &command, maxLength: longWrite.capacityBytes) else { return nil }
        switch outcome {
        case .send:
            if command.count <= mtu - 3 {
                do {
                    try PDUWriter.writeRequest(&out, handle: controlPointHandle, valueOf: command, mtu: mtu)
                } catch {
                    preconditionFailure("checked against MTU - 3")
                }
            } else {
                longWrite.start(handle: controlPointHandle, valueOf: command)
                procedure = .longWrite
                _ = longWrite.nextRequest(into: &out, mtu: mtu)
            }
            return .send
        case .dropped(let result):
            return .dropped(result)
        }
    }

    /// The answer to the Control Point write out (or a step of its long
    /// write). A failure reaches the session with the ATT error code, a
    /// long write's as a single write's would.
    mutating func controlPointResponse(_ response: ATTPDU, in pdu: Span<UInt8>, _ session: inout Session, now: Instant) -> ControlPointAnswer {
        var answer = ControlPointAnswer()
        if longWrite.isActive {
            switch longWrite.handle(response, in: pdu) {
            case .continuing: answer.continuing = true
            case .written: writeAcknowledged(&session, now: now, &answer)
            case .failed(let code): writeFailed(attErrorCode: code, &session, &answer)
            }
        } else if case .errorResponse(_, _, let code) = response {
            writeFailed(attErrorCode: code, &session, &answer)
        } else {
            writeAcknowledged(&session, now: now, &answer)
        }
        return answer
    }

    private mutating func writeAcknowledged(_ session: inout Session, now: Instant, _ answer: inout ControlPointAnswer) {
        answer.permitted = permitted()
        answer.result = session.controlPointWriteAcknowledged(now: now)
    }

    /// Refusals for want of permission (0x03/0x08) are counted in a row; an
    /// ANCS error is an answer from a phone that shares.
    private mutating func writeFailed(attErrorCode code: UInt8, _ session: inout Session, _ answer: inout ControlPointAnswer) {
        answer.result = session.controlPointWriteFailed(attErrorCode: code)
        if code == ATTErrorCode.writeNotPermitted || code == ATTErrorCode.insufficientAuthorization {
            answer.refusedForPermission = true
            if refusals < Int.max { refusals += 1 }
            if refusals >= refusalsForPermission { answer.notPermittedInARow = refusals }
        } else if ANCSErrorCode(rawValue: code) != nil {
            answer.permitted = permitted()
        }
        answer.removed = session.removedByLastWriteFailure
    }

    /// The phone shares notifications: refusals in a row start over; true
    /// when they had begun a wait for permission.
    private mutating func permitted() -> Bool {
        guard refusals > 0 else { return false }
        let wasWaiting = refusals >= refusalsForPermission
        refusals = 0
        return wasWaiting
    }

    // MARK: Notifications

    mutating func notification(handle: UInt16, value: Span<UInt8>, _ session: inout Session) -> Notified {
        guard handle != 0 else { return .notMine }
        if handle == notificationSourceHandle {
            let wasWaiting = permitted()
            return .notificationSource(session.receiveNotificationSource(value), permitted: wasWaiting)
        }
        if handle == dataSourceHandle { return .dataSource(session.receiveDataSource(value)) }
        return .notMine
    }

    // MARK: Time

    /// When the command awaiting its Data Source response times out.
    func deadline(_ session: borrowing Session) -> Instant? { session.deadline }

    func advance(_ session: inout Session, now: Instant) -> CommandResult? { session.checkTimeout(now: now) }
}
