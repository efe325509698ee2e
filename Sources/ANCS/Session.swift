// SPDX-License-Identifier: Apache-2.0
// One ANCS session as the Notification Consumer sees it (docs/ancs.md,
// "Sessions" and "Control Point commands").
//
// A session starts when the transport has subscribed to Notification Source
// and ends on unsubscribe or disconnect; `end()` forgets every UID and cached
// app name because they mean nothing in the next session.
//
// Control Point discipline: one Control Point write at a time, and at most
// one attribute fetch unfinished. User actions wait in their own small queue
// and always go before attribute fetches (a call must be answerable while
// pre-existing notifications are being fetched). Both queues refuse the
// newest request when full and count it; duplicates are coalesced. A fetch
// is finished when its write is acknowledged and its Data Source response is
// complete, in either order. The per-command watchdog starts at the
// acknowledgement: before it, the ATT transaction timeout (30 s, which ends
// the bearer) is in charge, so a late acknowledgement can never be taken for
// the next command's.
//
// An action never waits behind a fetch's response: once the fetch's write is
// acknowledged the ATT bearer is free, and Perform Notification Action has
// no Data Source response, so it may be written while the reassembler still
// waits for the fetch's (real phones lose responses in reconnect churn; the
// wearer's answer press must not wait for the watchdog). Fetches and the
// keep-alive probe still wait until the fetch is finished.
//
// Errors on the Control Point write (docs/ancs.md): 0xA2 means the UID no longer
// exists: its record and queued work go, one fewer in its category's count. 0xA0/0xA1 mean we sent something
// wrong: the command is dropped and counted as our bug. 0xA3 is reported so
// the wearer can be told. Perform Notification Action never has a Data
// Source response, so nothing waits for one.

import Bounded

public struct SessionConfig: Sendable, Equatable {
    public var notificationCapacity = 64
    public var fetchQueueCapacity = 8
    public var actionQueueCapacity = 4
    public var appNameCacheCapacity = 16
    public var attributeLimits = AttributeLimits()
    /// How long a Data Source response may take after its command's write
    /// was acknowledged.
    public var responseTimeoutMs: Int64 = 10_000

    public init() {}
}

/// What happened to a request for Control Point work.
public enum RequestOutcome: Equatable, Sendable {
    case queued
    /// Merged into a command already queued or in flight.
    case coalesced
    /// The display name is already cached for this session.
    case cached
    /// The queue is full; nothing was queued (counted).
    case refusedQueueFull
    /// The UID is not in this session.
    case unknownUID
    /// The notification does not offer that action (no flag, no command).
    case actionNotOffered
    /// The request could never be expressed on the wire.
    case invalid(ControlPointError)
    /// No session is active.
    case inactive
}

/// Why a command failed.
public enum CommandFailure: Equatable, Sendable {
    case ancs(ANCSErrorCode)
    /// An ATT error code outside the ANCS range.
    case att(UInt8)
    /// The Data Source response did not complete in time.
    case timedOut
    /// It could not be encoded (for example longer than the transport can
    /// write).
    case unsendable(ControlPointError)
}

/// The end of a Control Point command, as the caller needs to hear it.
public enum CommandResult: Equatable, Sendable {
    /// The NP acknowledged the action write.
    case actionDelivered(uid: UInt32, action: ActionID)
    /// The attributes' values are readable through `attributes` until the
    /// next command is sent.
    case attributesReceived(uid: UInt32)
    /// The display name is now cached (`appName(for:)`).
    case appNameReceived(AppIdentifier)
    /// The keep-alive probe got the 0xA2 a live NP gives for a UID that
    /// cannot exist.
    case probeAnswered
    /// The probe got anything else: the subscription is likely dead.
    case probeFailed(CommandFailure)
    case failed(ControlPointCommand, CommandFailure)
}

public enum DataSourceResult: Equatable, Sendable {
    case needMore
    case completed(CommandResult)
    case dropped(byteCount: Int, reason: DataSourceReassembler.DropReason)
}

public enum NotificationSourceResult: Equatable, Sendable {
    case applied(TableChange)
    case dropped(NotificationSourceError)
    /// Arrived while no session is active (counted).
    case outsideSession
}

/// Counters of everything the session turned away or gave up on.
public struct SessionCounters: Equatable, Sendable {
    public var notificationSourceDropped: UInt64 = 0
    public var notificationsOutsideSession: UInt64 = 0
    public var dataSourceFragmentsDropped: UInt64 = 0
    public var dataSourceBytesDropped: UInt64 = 0
    public var dataSourceTuplesSkipped: UInt64 = 0
    public var valuesTruncated: UInt64 = 0
    public var tableEvictions: UInt64 = 0
    public var appNameEvictions: UInt64 = 0
    public var requestsRefused: UInt64 = 0
    public var commandsUnsendable: UInt64 = 0
    public var commandsTimedOut: UInt64 = 0
    /// 0xA0 and 0xA1: we sent something the NP did not understand.
    public var commandsRejectedAsInvalid: UInt64 = 0
    public var invalidParameterErrors: UInt64 = 0
    public var actionFailedErrors: UInt64 = 0
    public var otherATTErrors: UInt64 = 0
    public var acknowledgementsUnexpected: UInt64 = 0

    public init() {}
}

public struct Session: ~Copyable {
    struct Pending: Equatable {
        var command: ControlPointCommand
        var isProbe: Bool
        var isAction: Bool {
            if case .performNotificationAction = command { return true }
            return false
        }
    }

    /// The Control Point write whose Write Response has not come yet.
    struct Writing {
        var pending: Pending
        /// A fetch's Data Source response completed before its
        /// acknowledgement.
        var responseComplete: Bool
    }

    /// A fetch whose write was acknowledged and whose Data Source response
    /// is not complete yet.
    struct Awaiting {
        var pending: Pending
        var acknowledgedAt: Instant
    }

    public let config: SessionConfig
    public private(set) var isActive = false
    public private(set) var table: NotificationTable
    private var actions: RingBuffer<Pending>
    private var fetches: RingBuffer<Pending>
    private var writing: Writing? = nil
    private var awaiting: Awaiting? = nil
    private var reassembler: DataSourceReassembler
    private var appNames: AppNameCache
    private var counts = SessionCounters()

    public init(config: SessionConfig) {
        self.config = config
        table = NotificationTable(capacity: config.notificationCapacity)
        actions = RingBuffer(capacity: config.actionQueueCapacity, policy: .refuseNewest)
        fetches = RingBuffer(capacity: config.fetchQueueCapacity, policy: .refuseNewest)
        reassembler = DataSourceReassembler(limits: config.attributeLimits)
        appNames = AppNameCache(capacity: config.appNameCacheCapacity)
    }

    public var counters: SessionCounters {
        var c = counts
        c.dataSourceBytesDropped = reassembler.droppedByteCount
        c.dataSourceTuplesSkipped = reassembler.skippedTupleCount
        c.valuesTruncated = reassembler.truncatedValueCount
        c.tableEvictions = table.evictionCount
        c.appNameEvictions = appNames.evictionCount
        return c
    }

    /// Commands waiting (not counting those in flight).
    public var queuedCount: Int { actions.count + fetches.count }
    /// (`if case`, not `!= nil`: comparing the ~150-byte optionals with nil
    /// copied them, and this is asked on every loop step.)
    public var hasCommandInFlight: Bool {
        if case .some = writing { return true }
        if case .some = awaiting { return true }
        return false
    }
    private var isWriting: Bool {
        if case .some = writing { return true }
        return false
    }
    private var isAwaitingResponse: Bool {
        if case .some = awaiting { return true }
        return false
    }
    /// The command whose write is outstanding, else the fetch whose
    /// response is awaited.
    public var commandInFlight: ControlPointCommand? { writing?.pending.command ?? awaiting?.pending.command }
    /// True when a command may be written now: no write is outstanding, and
    /// a fetch still awaiting its response lets only actions past.
    public var canSend: Bool {
        guard isActive, !isWriting else { return false }
        return isAwaitingResponse ? !actions.isEmpty : queuedCount > 0
    }

    /// A value of the last completed notification-attributes response
    /// (empty when missing), valid until the next command is sent.
    @_lifetime(borrow self)
    public borrowing func attributeValue(_ id: NotificationAttributeID) -> Span<UInt8> {
        let span = Span(_unsafeElements: reassembler.valueBuffer(id))
        return _overrideLifetime(span, borrowing: self)
    }

    /// Whether the last response carried `id` (a missing attribute has length 0).
    public func attributeReceived(_ id: NotificationAttributeID) -> Bool { reassembler.received(id) }

    /// Whether the NP sent more of `id` than the configured limit kept.
    public func attributeTruncated(_ id: NotificationAttributeID) -> Bool { reassembler.isTruncated(id) }

    public func appName(for appIdentifier: AppIdentifier) -> AppDisplayName? {
        appNames.peek(appIdentifier)
    }

    // MARK: Lifetime

    public mutating func begin() {
        if isActive { end() }
        isActive = true
    }

    /// Forgets every UID, queued command and cached name.
    /// What the last `controlPointWriteFailed` removed (0xA2: the phone no
    /// longer has the UID), as the phone's own Removed would say it; or nil.
    public private(set) var removedByLastWriteFailure: NotificationRecord? = nil

    public mutating func end() {
        isActive = false
        table.removeAll()
        actions.removeAll()
        fetches.removeAll()
        writing = nil
        awaiting = nil
        reassembler.abort()
        appNames.removeAll()
    }

    // MARK: Notification Source

    public mutating func receiveNotificationSource(_ pdu: Span<UInt8>) -> NotificationSourceResult {
        let event: NotificationSourceEvent
        do {
            event = try NotificationSourceEvent.decode(pdu)
        } catch {
            counts.notificationSourceDropped &+= 1
            return .dropped(error)
        }
        guard isActive else {
            counts.notificationsOutsideSession &+= 1
            return .outsideSession
        }
        let change = table.apply(event)
        switch change {
        case .removed(let record): forgetQueuedWork(uid: record.uid)
        case .added(_, let evicted?): forgetQueuedWork(uid: evicted.uid)
        default: break
        }
        return .applied(change)
    }

    private mutating func forgetQueuedWork(uid: UInt32) {
        actions.removeAll { $0.command.uid == uid }
        fetches.removeAll { $0.command.uid == uid }
    }

    // MARK: Requests

    /// Asks for attributes of a notification of this session.
    public mutating func fetchAttributes(uid: UInt32, _ attributes: NotificationAttributeSet) -> RequestOutcome {
        guard isActive else { return .inactive }
        guard !attributes.isEmpty else { return .invalid(.noAttributes) }
        guard table.record(uid: uid) != nil else { return .unknownUID }
        if let pending = fetchInFlight, !pending.isProbe,
            case .getNotificationAttributes(uid, let asked) = pending.command, asked.isSuperset(of: attributes)
        {
            return .coalesced
        }
        if let index = fetches.firstIndex(where: { if case .getNotificationAttributes(uid, _) = $0.command { !$0.isProbe } else { false } }) {
            if case .getNotificationAttributes(_, let asked) = fetches[index].command {
                fetches[index].command = .getNotificationAttributes(uid: uid, attributes: asked.union(attributes))
            }
            return .coalesced
        }
        return enqueue(Pending(command: .getNotificationAttributes(uid: uid, attributes: attributes), isProbe: false))
    }

    /// Asks for an app's display name unless it is cached or already asked.
    public mutating func fetchAppName(_ appIdentifier: AppIdentifier) -> RequestOutcome {
        guard isActive else { return .inactive }
        if appNames.lookup(appIdentifier) != nil { return .cached }
        let command = ControlPointCommand.getAppAttributes(appIdentifier: appIdentifier, attributes: .displayName)
        do { try command.validate() } catch { return .invalid(error) }
        if fetchInFlight?.command == command || fetches.firstIndex(where: { $0.command == command }) != nil {
            return .coalesced
        }
        return enqueue(Pending(command: command, isProbe: false))
    }

    /// Asks the NP to perform `action` on `uid`, only if it offers it.
    public mutating func performAction(uid: UInt32, _ action: ActionID) -> RequestOutcome {
        guard isActive else { return .inactive }
        guard let record = table.record(uid: uid) else { return .unknownUID }
        guard record.offers(action) else { return .actionNotOffered }
        let command = ControlPointCommand.performNotificationAction(uid: uid, action: action)
        if writing?.pending.command == command || actions.firstIndex(where: { $0.command == command }) != nil {
            return .coalesced
        }
        return enqueue(Pending(command: command, isProbe: false), isAction: true)
    }

    /// Queues a keep-alive probe: Get Notification Attributes on a UID not in
    /// the table, which a live NP answers with 0xA2.
    public mutating func probe() -> RequestOutcome {
        guard isActive else { return .inactive }
        if fetchInFlight?.isProbe == true || fetches.firstIndex(where: { $0.isProbe }) != nil { return .coalesced }
        var uid = UInt32.max
        while table.record(uid: uid) != nil { uid &-= 1 }
        return enqueue(Pending(command: .getNotificationAttributes(uid: uid, attributes: .appIdentifier), isProbe: true))
    }

    /// The fetch (or probe) written and not finished, if any.
    private var fetchInFlight: Pending? {
        if let awaiting { return awaiting.pending }
        if let writing, !writing.pending.isAction { return writing.pending }
        return nil
    }

    private mutating func enqueue(_ pending: Pending, isAction: Bool = false) -> RequestOutcome {
        let outcome = isAction ? actions.push(pending) : fetches.push(pending)
        switch outcome {
        case .stored: return .queued
        case .refused, .droppedOldest:
            counts.requestsRefused &+= 1
            return .refusedQueueFull
        }
    }

    // MARK: Transport

    public enum SendOutcome: Equatable, Sendable {
        /// `out` holds the command; write it to the Control Point.
        case send(ControlPointCommand)
        /// The command could not be encoded and was dropped (counted); call
        /// again for the next one.
        case dropped(CommandResult)
    }

    /// Takes the next command (actions first), encodes it into `out` if it
    /// has at most `maxLength` bytes (what the transport can write: MTU − 3
    /// for one Write Request, 512 with a long write) and marks it in flight.
    /// Nil when nothing may be sent now.
    public mutating func encodeNextCommand(into out: inout ByteBuffer, maxLength: Int) -> SendOutcome? {
        guard canSend else { return nil }
        let pending = actions.popFirst() ?? fetches.popFirst()!
        do {
            try pending.command.encode(into: &out, limits: config.attributeLimits, maxLength: maxLength)
        } catch {
            counts.commandsUnsendable &+= 1
            if case .getAppAttributes(let appIdentifier, _) = pending.command {
                // Cache the app as nameless so it is not asked for again.
                appNames.insert(appIdentifier, displayName: AppDisplayName())
            }
            return .dropped(pending.isProbe ? .probeFailed(.unsendable(error)) : .failed(pending.command, .unsendable(error)))
        }
        writing = Writing(pending: pending, responseComplete: false)
        switch pending.command {
        case .getNotificationAttributes(let uid, let attributes) where !pending.isProbe:
            reassembler.expect(.notificationAttributes(uid: uid, attributes: attributes))
        case .getAppAttributes(let appIdentifier, let attributes):
            reassembler.expect(.appAttributes(appIdentifier: appIdentifier, attributes: attributes))
        case .getNotificationAttributes:
            reassembler.abort()
        case .performNotificationAction:
            // No Data Source response; a fetch's may still be on its way.
            break
        }
        return .send(pending.command)
    }

    /// The NP acknowledged the Control Point write (ATT Write Response).
    public mutating func controlPointWriteAcknowledged(now: Instant) -> CommandResult? {
        guard let current = writing else {
            counts.acknowledgementsUnexpected &+= 1
            return nil
        }
        writing = nil
        if current.pending.isProbe { return .probeFailed(.att(0)) }
        switch current.pending.command {
        case .performNotificationAction(let uid, let action):
            return .actionDelivered(uid: uid, action: action)
        case .getNotificationAttributes, .getAppAttributes:
            if !current.responseComplete { awaiting = Awaiting(pending: current.pending, acknowledgedAt: now) }
            return nil
        }
    }

    /// The NP answered the Control Point write with ATT error `code`.
    public mutating func controlPointWriteFailed(attErrorCode code: UInt8) -> CommandResult? {
        removedByLastWriteFailure = nil
        guard let current = writing else {
            counts.acknowledgementsUnexpected &+= 1
            return nil
        }
        writing = nil
        // A failed action leaves an awaited fetch's response alone.
        if !current.pending.isAction { reassembler.abort() }
        let command = current.pending.command
        guard let ancs = ANCSErrorCode(rawValue: code) else {
            counts.otherATTErrors &+= 1
            return current.pending.isProbe ? .probeFailed(.att(code)) : .failed(command, .att(code))
        }
        if current.pending.isProbe {
            return ancs == .invalidParameter ? .probeAnswered : .probeFailed(.ancs(ancs))
        }
        switch ancs {
        case .invalidParameter:
            counts.invalidParameterErrors &+= 1
            if let uid = command.uid {
                forgetQueuedWork(uid: uid)
                removedByLastWriteFailure = table.remove(uid: uid)
            }
        case .unknownCommand, .invalidCommand:
            counts.commandsRejectedAsInvalid &+= 1
        case .actionFailed:
            counts.actionFailedErrors &+= 1
        }
        return .failed(command, .ancs(ancs))
    }

    /// Feeds one Data Source notification value.
    public mutating func receiveDataSource(_ fragment: Span<UInt8>) -> DataSourceResult {
        switch reassembler.feed(fragment) {
        case .needMore:
            return .needMore
        case .dropped(let byteCount, let reason):
            counts.dataSourceFragmentsDropped &+= 1
            return .dropped(byteCount: byteCount, reason: reason)
        case .complete(let trailing):
            if trailing > 0 { counts.dataSourceFragmentsDropped &+= 1 }
            let command: ControlPointCommand
            if let current = awaiting {
                awaiting = nil
                command = current.pending.command
            } else if var current = writing, !current.pending.isAction {
                current.responseComplete = true
                writing = current
                command = current.pending.command
            } else {
                return .needMore
            }
            switch command {
            case .getNotificationAttributes(let uid, let attributes):
                let app = reassembler.received(.appIdentifier) ? AppHash.of(reassembler.valueBuffer(.appIdentifier)) : 0
                table.markAttributesKnown(uid: uid, attributes, appHash: app)
                return .completed(.attributesReceived(uid: uid))
            case .getAppAttributes(let appIdentifier, _):
                appNames.insert(appIdentifier, displayName: AppDisplayName(reassembler.displayName))
                return .completed(.appNameReceived(appIdentifier))
            case .performNotificationAction:
                preconditionFailure("actions never expect a Data Source response")
            }
        }
    }

    // MARK: Time

    /// When `checkTimeout` next needs to run; nil when nothing is timed.
    public var deadline: Instant? {
        guard let awaiting else { return nil }
        return awaiting.acknowledgedAt.advanced(byMs: config.responseTimeoutMs)
    }

    /// Gives up on a response that is overdue.
    public mutating func checkTimeout(now: Instant) -> CommandResult? {
        guard let deadline, now >= deadline, let current = awaiting else { return nil }
        awaiting = nil
        reassembler.abort()
        counts.commandsTimedOut &+= 1
        return .failed(current.pending.command, .timedOut)
    }
}
