// SPDX-License-Identifier: Apache-2.0
// The ATT bearer's rules, sans-IO (Core Vol 3 Part F 3.3).
//
// Outgoing: one request outstanding; later requests wait in a fixed queue
// (refused and counted when it is full). A response must match the
// outstanding request (its opcode + 1, or an Error Response naming it);
// anything else is a stray, dropped and counted. A request unanswered for
// `transactionTimeoutMs` (30 s) ends the bearer: the caller must drop the
// link, as the spec requires.
//
// Security: an Error Response with Insufficient Authentication, Encryption
// or Encryption Key Size does not reach the request's owner at first. The
// bearer keeps the request's bytes, reports `securityRequired`, and when the
// link reports encryption it sends the same request again. After
// `securityRetryLimit` attempts, a failed pairing, or `securityTimeoutMs`
// waiting for it, the owner gets the original error.
//
// Incoming: MTU requests, malformed requests (0x04 Invalid PDU) and
// unsupported requests (0x06 Request Not Supported) are answered here;
// other requests go to the caller, which must answer before feeding the
// next PDU. Indications are confirmed at once.
//
// Our own indications (the server's Service Changed): one at a time
// (`indicate` refuses a second before the phone's confirmation, which
// comes back as `confirmed`); a confirmation with none outstanding is a
// counted drop.
//
// Output: every PDU to send goes into `outbox`; the platform drains it.

import Bounded

public struct ATTBearer: ~Copyable {
    public struct Config: Sendable {
        /// The largest MTU we offer (what the link allows).
        public var maxMTU = ATTMTU.maximum
        public var transactionTimeoutMs: Int64 = 30_000
        public var securityRetryLimit = 2
        /// How long a request may wait for the link to become encrypted
        /// (pairing, including the wearer's consent).
        public var securityTimeoutMs: Int64 = 60_000
        public var requestQueueCapacity = 4
        public var outboxCapacity = 8

        public init() {}
    }

    /// What one incoming PDU meant.
    public enum Inbound: Equatable, Sendable {
        /// The answer to the outstanding request tagged `tag`.
        case response(ATTPDU, tag: UInt16)
        /// A request for the local server; answer it with `respond`.
        case request(ATTPDU)
        /// A Write Command for the local server (no answer).
        case command(ATTPDU)
        case notification(handle: UInt16, value: Range<Int>)
        /// Already confirmed.
        case indication(handle: UInt16, value: Range<Int>)
        /// The outstanding request needs a more secure link: raise security,
        /// then call `securityChanged`.
        case securityRequired(code: UInt8, attempt: Int)
        /// Answered or ignored by the bearer itself.
        case handled
        /// The phone confirmed our indication.
        case confirmed
        case dropped(DropReason)
    }

    public enum DropReason: Equatable, Sendable {
        case malformed(ATTDecodeError)
        /// A response with no matching outstanding request.
        case unexpectedResponse(opcode: UInt8)
        case unexpectedConfirmation
        case bearerEnded
    }

    public enum TimeoutResult: Equatable, Sendable {
        /// No response in 30 s: the bearer is over; drop the link.
        case transactionTimedOut(tag: UInt16)
        /// Gave up waiting for encryption; the owner gets this error.
        case securityGaveUp(ATTPDU, tag: UInt16)
    }

    public enum SubmitResult: Equatable, Sendable {
        case sent
        case queued
        /// The request queue is full (counted).
        case refused
    }

    public struct Counters: Equatable, Sendable {
        public var malformedDropped: UInt64 = 0
        public var unexpectedResponses: UInt64 = 0
        public var unexpectedConfirmations: UInt64 = 0
        public var ignoredCommands: UInt64 = 0
        public var malformedRequestsAnswered: UInt64 = 0
        public var unsupportedRequestsAnswered: UInt64 = 0
        public var requestsRefused: UInt64 = 0
        public var outboxRefused: UInt64 = 0
        public var transactionTimeouts: UInt64 = 0
        public var securityRetries: UInt64 = 0
        public init() {}
    }

    struct Outstanding {
        enum State {
            case awaitingResponse(sentAt: Instant)
            case awaitingSecurity(since: Instant, handle: UInt16, code: UInt8)
        }
        var opcode: UInt8
        var tag: UInt16
        var state: State
        var securityAttempts: Int
    }

    public let config: Config
    /// The ATT MTU in use: 23 until an exchange agrees on more.
    public private(set) var mtu = ATTMTU.minimum
    /// The largest MTU this side agrees to now: `config.maxMTU` unless
    /// `limitMTU` lowered it (a phone that only does 23).
    public private(set) var mtuLimit: Int
    /// False after a transaction timeout, until `reset`.
    public private(set) var isOpen = true
    public private(set) var counters = Counters()
    private var outbox: PacketQueue
    private var waiting: PacketQueue
    private var outstandingBytes: ByteBuffer
    private var scratch: ByteBuffer
    private var outstanding: Outstanding? = nil
    private var answering = false
    /// Our indication waits for the phone's confirmation.
    public private(set) var indicationOutstanding = false

    public init(config: Config) {
        precondition(config.maxMTU >= ATTMTU.minimum && config.maxMTU <= ATTMTU.maximum, "MTU out of range")
        self.config = config
        mtuLimit = config.maxMTU
        outbox = PacketQueue(capacity: config.outboxCapacity, slotBytes: config.maxMTU)
        waiting = PacketQueue(capacity: config.requestQueueCapacity, slotBytes: config.maxMTU)
        outstandingBytes = ByteBuffer(capacity: config.maxMTU)
        scratch = ByteBuffer(capacity: config.maxMTU)
    }

    /// Lowers (or restores) the largest MTU offered and accepted, at most
    /// `config.maxMTU`. It takes effect at the next MTU exchange; `reset`
    /// keeps it.
    public mutating func limitMTU(_ limit: Int) {
        precondition(limit >= ATTMTU.minimum && limit <= config.maxMTU, "MTU limit out of range")
        mtuLimit = limit
    }

    /// Forgets everything for a new link.
    public mutating func reset() {
        mtu = ATTMTU.minimum
        isOpen = true
        outbox.removeAll()
        waiting.removeAll()
        outstanding = nil
        answering = false
        indicationOutstanding = false
    }

    public var hasOutstandingRequest: Bool { outstanding != nil }
    public var outstandingTag: UInt16? { outstanding?.tag }
    public var queuedRequestCount: Int { waiting.count }
    public var outboxCount: Int { outbox.count }

    // MARK: Sending

    /// Sends a request now, or queues it behind the outstanding one.
    public mutating func submitRequest(_ pdu: Span<UInt8>, tag: UInt16, now: Instant) -> SubmitResult {
        precondition(pdu.count > 0 && pdu.count <= mtu, "request encoded for a larger MTU")
        guard isOpen else { return .refused }
        if outstanding == nil {
            start(pdu, tag: tag, now: now)
            return .sent
        }
        if waiting.push(pdu, tag: tag) { return .queued }
        counters.requestsRefused &+= 1
        return .refused
    }

    private mutating func start(_ pdu: Span<UInt8>, tag: UInt16, now: Instant) {
        outstandingBytes.removeAll()
        outstandingBytes.append(contentsOf: pdu)
        outstanding = Outstanding(opcode: pdu[0], tag: tag, state: .awaitingResponse(sentAt: now), securityAttempts: 0)
        enqueueOutgoing(pdu)
    }

    private mutating func startNextWaiting(now: Instant) {
        guard let tag = waiting.pop(into: &outstandingBytes) else { return }
        outstanding = Outstanding(opcode: outstandingBytes[0], tag: tag, state: .awaitingResponse(sentAt: now), securityAttempts: 0)
        sendOutstandingBytes()
    }

    private mutating func sendOutstandingBytes() {
        if !outbox.push(copyOf: outstandingBytes) { counters.outboxRefused &+= 1 }
    }

    private mutating func sendScratch() {
        if !outbox.push(copyOf: scratch) { counters.outboxRefused &+= 1 }
    }

    private mutating func enqueueOutgoing(_ pdu: Span<UInt8>) {
        if !outbox.push(pdu) { counters.outboxRefused &+= 1 }
    }

    /// Sends a PDU that expects no answer (notification, Write Command).
    public mutating func send(_ pdu: Span<UInt8>) {
        precondition(pdu.count > 0 && pdu.count <= mtu, "PDU encoded for a larger MTU")
        guard isOpen else { return }
        enqueueOutgoing(pdu)
    }

    /// Sends a Handle Value Indication; false (nothing sent) while the
    /// previous one waits for its confirmation, or the bearer is over.
    public mutating func indicate(_ pdu: Span<UInt8>) -> Bool {
        precondition(pdu.count > 0 && pdu.count <= mtu, "PDU encoded for a larger MTU")
        guard isOpen, !indicationOutstanding else { return false }
        indicationOutstanding = true
        enqueueOutgoing(pdu)
        return true
    }

    /// `indicate` for a PDU built in a sibling buffer.
    public mutating func indicate(copyOf pdu: borrowing ByteBuffer) -> Bool { indicate(pdu.span) }

    /// Answers the request last returned by `receive`.
    public mutating func respond(_ pdu: Span<UInt8>) {
        precondition(answering, "respond without a request to answer")
        answering = false
        enqueueOutgoing(pdu)
    }

    /// `submitRequest` for a PDU built in a sibling buffer.
    public mutating func submitRequest(copyOf pdu: borrowing ByteBuffer, tag: UInt16, now: Instant) -> SubmitResult {
        submitRequest(pdu.span, tag: tag, now: now)
    }

    /// `send` for a PDU built in a sibling buffer.
    public mutating func send(copyOf pdu: borrowing ByteBuffer) { send(pdu.span) }

    /// `respond` for a PDU built in a sibling buffer.
    public mutating func respond(copyOf pdu: borrowing ByteBuffer) { respond(pdu.span) }

    /// Moves the next PDU to send into `out`; false when there is none.
    public mutating func popOutgoing(into out: inout ByteBuffer) -> Bool {
        outbox.pop(into: &out) != nil
    }

    // MARK: Receiving

    public mutating func receive(_ pdu: Span<UInt8>, now: Instant) -> Inbound {
        precondition(!answering, "the previous request was not answered")
        guard isOpen else { return .dropped(.bearerEnded) }
        let decoded: ATTPDU
        do {
            decoded = try ATTPDU.decode(pdu)
        } catch {
            if let op = error.opcode, ATTPDU.kind(of: op) == .request {
                counters.malformedRequestsAnswered &+= 1
                PDUWriter.errorResponse(&scratch, requestOpcode: op, handle: 0, code: ATTErrorCode.invalidPDU)
                sendScratch()
                return .handled
            }
            counters.malformedDropped &+= 1
            return .dropped(.malformed(error))
        }
        switch decoded {
        case .exchangeMTURequest(let clientMTU):
            mtu = max(ATTMTU.minimum, min(Int(clientMTU), mtuLimit))
            PDUWriter.exchangeMTUResponse(&scratch, serverMTU: UInt16(mtuLimit))
            sendScratch()
            return .handled
        case .unsupportedRequest(let op):
            counters.unsupportedRequestsAnswered &+= 1
            PDUWriter.errorResponse(&scratch, requestOpcode: op, handle: 0, code: ATTErrorCode.requestNotSupported)
            sendScratch()
            return .handled
        case .unknownCommand:
            counters.ignoredCommands &+= 1
            return .handled
        case .findInformationRequest, .findByTypeValueRequest, .readByTypeRequest, .readRequest, .readBlobRequest,
            .readByGroupTypeRequest, .writeRequest, .prepareWriteRequest, .executeWriteRequest:
            answering = true
            return .request(decoded)
        case .writeCommand:
            return .command(decoded)
        case .notification(let handle, let value):
            return .notification(handle: handle, value: value)
        case .indication(let handle, let value):
            PDUWriter.confirmation(&scratch)
            sendScratch()
            return .indication(handle: handle, value: value)
        case .confirmation:
            if indicationOutstanding {
                indicationOutstanding = false
                return .confirmed
            }
            counters.unexpectedConfirmations &+= 1
            return .dropped(.unexpectedConfirmation)
        case .errorResponse(let requestOpcode, let handle, let code):
            guard let current = outstanding, case .awaitingResponse = current.state, current.opcode == requestOpcode else {
                return unexpected(ATTOpcode.errorResponse)
            }
            if ATTErrorCode.isSecurity(code), current.securityAttempts < config.securityRetryLimit {
                counters.securityRetries &+= 1
                outstanding?.securityAttempts += 1
                outstanding?.state = .awaitingSecurity(since: now, handle: handle, code: code)
                return .securityRequired(code: code, attempt: current.securityAttempts + 1)
            }
            return finish(decoded, now: now)
        case .exchangeMTUResponse, .findInformationResponse, .findByTypeValueResponse, .readByTypeResponse,
            .readResponse, .readBlobResponse, .readByGroupTypeResponse, .writeResponse, .prepareWriteResponse,
            .executeWriteResponse:
            let op = decoded.opcode ?? 0
            guard let current = outstanding, case .awaitingResponse = current.state,
                ATTOpcode.response(to: current.opcode) == op
            else { return unexpected(op) }
            if case .exchangeMTUResponse(let serverMTU) = decoded {
                mtu = max(ATTMTU.minimum, min(Int(serverMTU), mtuLimit))
            }
            return finish(decoded, now: now)
        }
    }

    private mutating func unexpected(_ opcode: UInt8) -> Inbound {
        counters.unexpectedResponses &+= 1
        return .dropped(.unexpectedResponse(opcode: opcode))
    }

    private mutating func finish(_ response: ATTPDU, now: Instant) -> Inbound {
        let tag = outstanding?.tag ?? 0
        outstanding = nil
        startNextWaiting(now: now)
        return .response(response, tag: tag)
    }

    // MARK: Security

    /// The link's encryption changed. On success the waiting request is sent
    /// again; on failure its owner gets the original error (returned).
    public mutating func securityChanged(encrypted: Bool, now: Instant) -> Inbound? {
        guard let current = outstanding, case .awaitingSecurity(_, let handle, let code) = current.state else { return nil }
        if encrypted {
            outstanding?.state = .awaitingResponse(sentAt: now)
            sendOutstandingBytes()
            return nil
        }
        return finish(.errorResponse(requestOpcode: current.opcode, handle: handle, code: code), now: now)
    }

    // MARK: Time

    public var deadline: Instant? {
        guard let current = outstanding else { return nil }
        switch current.state {
        case .awaitingResponse(let sentAt): return sentAt.advanced(byMs: config.transactionTimeoutMs)
        case .awaitingSecurity(let since, _, _): return since.advanced(byMs: config.securityTimeoutMs)
        }
    }

    public mutating func checkTimeout(now: Instant) -> TimeoutResult? {
        guard let current = outstanding, let deadline, now >= deadline else { return nil }
        switch current.state {
        case .awaitingResponse:
            counters.transactionTimeouts &+= 1
            isOpen = false
            outstanding = nil
            waiting.removeAll()
            return .transactionTimedOut(tag: current.tag)
        case .awaitingSecurity(_, let handle, let code):
            let error = ATTPDU.errorResponse(requestOpcode: current.opcode, handle: handle, code: code)
            guard case .response(_, let tag) = finish(error, now: now) else { return nil }
            return .securityGaveUp(error, tag: tag)
        }
    }
}
