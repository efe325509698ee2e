// SPDX-License-Identifier: Apache-2.0
// The link to the phone: ATT bearer, our GATT server, discovery of the
// phone's services, and the ANCS session, as one sans-IO state machine.
// `Phase` is the procedure under way with its data; the GATT client
// procedures (discovery, CCCD writes, long writes) share `ClientProcedure`;
// the security raise and the Notification Source clocks are value types of
// their own (SecurityRaise.swift, NotificationSourceWatch.swift). Once ANCS
// is live the phone's AMS and CTS have a client each (AMSClient.swift,
// CTSClient.swift; PhoneLinkCompanions.swift starts and routes them). Who
// may send on the bearer, and whom a response is for, is the arbiter's to
// say (ATTArbiter.swift): the bring-up, then on the live link the Control
// Point, AMS, CTS and the keep-alive, in that order.
//
// A bonded phone's cached handles (PhoneHandles.swift) stand in for
// discovery until one proves stale (PhoneLinkBringUp.swift).
// Outputs: PDUs in the bearer's outbox, `LinkAction`s for the platform
// (raise security, disconnect: one slot each, so none is lost), and each
// `LinkEvent` as it happens: to the sink in the caller's `Effects`, then
// to the handler (the policy), both lent the session. Control Point
// commands are encoded only in `flush`.
//
// The inputs and their helpers pass `now`, the event handler and the
// runner's `Effects` on, as parameters, not as one context value: the
// handler (the AlertPolicy, a stored property of WearableCore) and the
// effects (the runner's) are ~Copyable values lent `inout`, and a struct
// cannot hold an inout borrow in the Swift we build with, so a context
// would mean moving the policy out of the core and back on every input,
// or unsafe pointers. The triple stays on the link's own dispatch instead,
// and the service clients take none of it: they return what happened
// (ANCSClient.swift) and the link reports it.
//
// Why each procedure is shaped as it is (bring-up order, Service Changed,
// the keep-alive, long writes, and the real-iPhone quirks: permission
// waits, ANCS shown only when encrypted, bonded phones encrypting by
// themselves, silent subscription loss, a dead Notification Source):
// docs/decisions/ (link-procedures.md and the records it links).
//
// The value is spread over three files: this one holds its state, its
// outputs, the link's lifetime and the inbound dispatch;
// PhoneLinkBringUp.swift the bring-up (responses while the link is not
// live, discovery, subscription, retries); PhoneLinkCommands.swift the
// Control Point commands, the flush and time. Its members are internal,
// not private, so the parts share them; outside Firmware only the public
// API is seen.

import AMS
import ANCS
import ATT
import Bounded
import CTS
import GATT

public struct PhoneLink: ~Copyable {
    /// A step of bring-up; each has one request outstanding.
    enum BringUpStep: Equatable {
        case exchangingMTU
        case discoveringGATT
        case subscribingServiceChanged
        /// Reading the phone's Database Hash, to be kept with its handles.
        case readingDatabaseHash
        /// A bonded phone's handles are taken from its last link: its
        /// Database Hash is read to check they still hold.
        case validatingCache
        case discoveringANCS
        /// ANCS is found; nothing is subscribed until the link is
        /// encrypted with a bond's key (or a pairing the wearer allowed).
        case awaitingEncryption
        case subscribingDataSource
        case subscribingNotificationSource
    }

    /// The procedure under way, with its data. ATT allows one request at a
    /// time, so the one outstanding belongs to the phase and a response is
    /// dispatched by it; a response to a request made before a restart
    /// carries an older generation in its tag and is ignored.
    enum Phase: Equatable {
        case disconnected
        case bringUp(BringUpStep)
        /// No ANCS on an unencrypted link: waits for encryption (bounded
        /// by the link's encryption deadline) or Service Changed.
        case ancsAbsent
        /// A bring-up step failed for a reason other than security or
        /// permission; it is tried again at `at` (`bringUpRetries` times,
        /// then the link ends).
        case retrying(RetryStep, at: Instant)
        /// A subscription refused for want of the user's permission; the
        /// write for `retry` goes again at `at` (nil: it was due and could
        /// not be written, so nothing is timed until Service Changed).
        case waitingForPermission(retry: SubscribedSource, at: Instant?)
        /// Subscribed; Control Point commands go out.
        case live
        /// Writing the subscription again on the live link.
        case resubscribing(Resubscription)
    }

    /// What a retry does again.
    enum RetryStep: Equatable {
        /// ANCS discovery (failed, malformed, or no usable ANCS).
        case discovery
        case subscription(SubscribedSource)
    }

    public let config: PhoneLinkConfig
    var phase = Phase.disconnected
    /// Where the link is, for observers (tests, figures).
    public var state: LinkState {
        switch phase {
        case .disconnected: .disconnected
        case .bringUp(.exchangingMTU): .exchangingMTU
        case .bringUp(.discoveringGATT): .discoveringGATT
        case .bringUp(.subscribingServiceChanged): .subscribingServiceChanged
        case .bringUp(.readingDatabaseHash), .bringUp(.validatingCache): .discoveringGATT
        case .bringUp(.discoveringANCS): .discoveringANCS
        case .bringUp(.awaitingEncryption): .awaitingEncryption
        case .bringUp(.subscribingDataSource): .subscribingDataSource
        case .bringUp(.subscribingNotificationSource): .subscribingNotificationSource
        case .ancsAbsent, .retrying(.discovery, _): .ancsAbsent
        case .retrying(.subscription(.dataSource), _): .subscribingDataSource
        case .retrying(.subscription(.notificationSource), _): .subscribingNotificationSource
        case .waitingForPermission: .waitingForPermission
        case .live: .live
        case .resubscribing: .resubscribing
        }
    }
    public internal(set) var bearer: ATTBearer
    /// ANCS: discovery, subscription, the Control Point and Data Source,
    /// with the session they feed.
    var ancs: ANCSClient
    /// The ANCS session, the client's (lent to it with each call).
    public internal(set) var session: Session
    public internal(set) var counters = PhoneLinkCounters()
    public internal(set) var isEncrypted = false
    var server: GATTServer
    /// The phone wrote one of our CCCDs on this link.
    var serverSubscribedOnLink = false
    var gattDiscovery: ServiceDiscovery
    var serviceChangedHandle: UInt16 = 0
    /// The actions waiting for the platform: a disconnection, and a raise
    /// (pointless once a disconnection is asked for).
    var disconnectReason: EndReason? = nil
    var raiseAttempt: Int? = nil
    var scratch: ByteBuffer
    var generation: UInt8 = 0
    var watch: NotificationSourceWatch
    /// The Service Changed subscription's CCCD write.
    var serviceChangedWrite = CCCDWrite(handle: 0, value: 0)
    /// The link is to a bonded phone (it is expected to encrypt by itself).
    public internal(set) var isBonded = false
    /// The bonded phone's handles from its last link, offered before the
    /// MTU exchange ends (then used instead of discovery).
    var offeredHandles: PhoneHandles? = nil
    /// This link's handles came from the cache and none has proved stale.
    var handlesFromCache = false
    /// The phone's Database Hash on this link (read, or checked).
    var databaseHash: InlineBytes<16>? = nil
    /// Moves when what this link knows of the phone's handles is worth
    /// keeping (ANCS live, AMS and CTS done) or was found stale.
    public internal(set) var handlesRevision: UInt32 = 0
    var companionDoneSeen = false
    var linkUpAt = Instant.zero
    var security: SecurityRaise
    public var isRaisingSecurity: Bool { security.isOutstanding }
    var permissionBackoff: Backoff
    /// The link must be encrypted by then, or it is dropped (nil: it is
    /// encrypted, or no link).
    var encryptionDueBy: Instant? = nil
    var bringUpBackoff: Backoff
    var bringUpFailures = 0
    /// AMS and CTS, run on the live link when the Control Point is idle.
    var ams = AMSClient()
    var cts = CTSClient()
    /// Who may use the ATT bearer now: read off the clients' state, so it
    /// never disagrees with them (ATTArbiter.swift has the rules). Inlined:
    /// a call copies the whole link (4 kB) first, on every input.
    @inline(__always)
    var arbiter: ATTArbiter {
        ATTArbiter(
            live: phase == .live, controlPointBusy: ancs.isBusy(session),
            amsBusy: ams.outstanding != nil, ctsBusy: cts.isOutstanding)
    }
    /// The phone's local time as its Current Time Service said (kept
    /// across links).
    public var phoneClock: PhoneClock { cts.clock }

    public init(config: PhoneLinkConfig) {
        self.config = config
        permissionBackoff = Backoff(firstMs: config.permissionRetryFirstMs, maxMs: config.permissionRetryMaxMs)
        bringUpBackoff = Backoff(firstMs: config.bringUpRetryFirstMs, maxMs: config.bringUpRetryFirstMs << 4)
        security = SecurityRaise(bondedEncryptionWaitMs: config.bondedEncryptionWaitMs)
        watch = NotificationSourceWatch(keepAliveQuietMs: config.keepAliveQuietMs, resubscribeQuietMs: config.resubscribeQuietMs)
        bearer = ATTBearer(config: config.bearer)
        session = Session(config: config.session)
        ancs = ANCSClient(controlPointRefusalsForPermission: config.controlPointRefusalsForPermission)
        server = GATTServer(deviceName: config.deviceName)
        gattDiscovery = ServiceDiscovery(service: .uuid16(GATTUUID.genericAttribute), wanted: PhoneHandles.wanted(service: 0))
        scratch = ByteBuffer(capacity: config.bearer.maxMTU)
    }

    // MARK: Outputs

    public mutating func nextAction() -> LinkAction? {
        if let reason = disconnectReason {
            disconnectReason = nil
            raiseAttempt = nil
            return .disconnect(reason: reason)
        }
        if let attempt = raiseAttempt {
            raiseAttempt = nil
            return .raiseSecurity(attempt: attempt)
        }
        return nil
    }
    public mutating func popOutgoing(into out: inout ByteBuffer) -> Bool { bearer.popOutgoing(into: &out) }

    /// To the sink, then to the handler, at once, with the session lent: the
    /// sink reads a completed response's attribute values from it, the
    /// policy may queue commands on it. The end of a press's action is
    /// reported right after the link event that ended it.
    mutating func emit<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(
        _ event: LinkEvent, now: Instant, handler: inout H, effects: inout Effects<S>
    ) {
        effects.record(.link(event), session: session, now: now)
        if let outcome = FirmwareEvent(actionEndedBy: event) { effects.record(outcome, session: session, now: now) }
        handler.linkEvent(event, session: &session, now: now)
    }

    mutating func act(_ action: LinkAction) {
        switch action {
        case .disconnect(let reason): if disconnectReason == nil { disconnectReason = reason }
        case .raiseSecurity(let attempt): raiseAttempt = attempt
        }
    }

    // MARK: Link lifetime

    /// A phone connected. `bonded`: the platform knows it as a bonded peer,
    /// which will encrypt the link by itself.
    public mutating func linkUp<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(now: Instant, bonded: Bool = false, handler: inout H, effects: inout Effects<S>) {
        bearer.reset()
        // A bonded phone's subscriptions to our server carry over.
        server.reset(keepSubscriptions: bonded)
        serverSubscribedOnLink = false
        ancs.reset(&session)
        isEncrypted = false
        isBonded = bonded
        linkUpAt = now
        clearSecurityAndRetries()
        generation &+= 1
        serviceChangedHandle = 0
        resetCompanions()
        offeredHandles = nil
        handlesFromCache = false
        databaseHash = nil
        companionDoneSeen = false
        encryptionDueBy = now.advanced(byMs: bonded ? bondedEncryptionDeadlineMs : config.pairingTimeoutMs)
        emit(.connected, now: now, handler: &handler, effects: &effects)
        phase = .bringUp(.exchangingMTU)
        // A bonded phone is asked for encryption if it has not encrypted
        // by itself within the wait; nothing is subscribed before.
        if bonded { requestSecurity(attempt: 1, now: now) }
        PDUWriter.exchangeMTURequest(&scratch, clientMTU: UInt16(config.bearer.maxMTU))
        submit(now: now, handler: &handler, effects: &effects)
    }

    /// From the connection: the wait for the phone's own encryption, then
    /// the raise's own time.
    var bondedEncryptionDeadlineMs: Int64 { config.bondedEncryptionWaitMs + config.bondedEncryptionTimeoutMs }

    public mutating func linkDown<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(reason: EndReason, now: Instant, handler: inout H, effects: inout Effects<S>) {
        guard phase != .disconnected else { return }
        ancs.linkEnded(&session)
        bearer.reset()
        phase = .disconnected
        generation &+= 1
        encryptionDueBy = nil
        clearSecurityAndRetries()
        abandonCompanion(dropMedia: true, now: now, handler: &handler, effects: &effects)
        resetCompanions()
        emit(.ended(reason: reason), now: now, handler: &handler, effects: &effects)
    }

    mutating func clearSecurityAndRetries() {
        security.reset()
        permissionBackoff.reset()
        bringUpBackoff.reset()
        bringUpFailures = 0
    }

    /// The platform learned after `linkUp` that the phone is bonded: it
    /// must encrypt within the bonded link's bound, and is asked to once
    /// the wait is over.
    public mutating func peerBonded(now: Instant) {
        guard phase != .disconnected else { return }
        isBonded = true
        guard !isEncrypted else { return }
        let due = linkUpAt.advanced(byMs: bondedEncryptionDeadlineMs)
        if encryptionDueBy.map({ due < $0 }) ?? true { encryptionDueBy = due }
        if security.state == .idle { requestSecurity(attempt: 1, now: now) }
    }

    /// The platform's answer to `raiseSecurity` (or an encryption change it saw).
    public mutating func securityChanged<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(encrypted: Bool, now: Instant, handler: inout H, effects: inout Effects<S>) {
        let becameEncrypted = encrypted && !isEncrypted
        if becameEncrypted { emit(.secured, now: now, handler: &handler, effects: &effects) }
        // An LE link stays encrypted until it ends: "not encrypted" after
        // that is a raise for more that failed, not a link gone clear.
        isEncrypted = isEncrypted || encrypted
        if encrypted { encryptionDueBy = nil }
        // The answer to an outstanding raise; a deferred one is no longer
        // needed once the phone has encrypted by itself.
        security.securityChanged(encrypted: encrypted)
        if let inbound = bearer.securityChanged(encrypted: encrypted, now: now) {
            process(inbound, pdu: Span<UInt8>(), now: now, handler: &handler, effects: &effects)
        }
        if becameEncrypted { indicateOwedServiceChange() }
        if becameEncrypted, phase == .ancsAbsent {
            // Some iPhones show ANCS only on an encrypted link.
            counters.rediscoveriesAfterEncryption &+= 1
            restartANCS(reason: .encrypted, now: now, handler: &handler, effects: &effects)
        }
        guard phase == .bringUp(.awaitingEncryption) else { return }
        if encrypted {
            subscribeDataSource(now: now, handler: &handler, effects: &effects)
        } else {
            // The raise failed (no key, pairing refused): this link is
            // never trusted.
            encryptionFailed(.refused, now: now, handler: &handler, effects: &effects)
        }
    }

    /// The link could not be encrypted: dropped, counted, nothing of ANCS
    /// (or AMS, CTS) having been used on it.
    mutating func encryptionFailed<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(_ why: EncryptionFailure, now: Instant, handler: inout H, effects: inout Effects<S>) {
        encryptionDueBy = nil
        counters.encryptionFailures &+= 1
        emit(.error(.encryptionFailed(why)), now: now, handler: &handler, effects: &effects)
        act(.disconnect(reason: .notSecured))
    }

    /// A bring-up step failed for a reason other than security or the
    /// user's permission: tried again after a back-off, a bounded number of
    /// times; then the link is ended, so no phase waits for ever.
    mutating func bringUpStepFailed<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(_ step: RetryStep, now: Instant, handler: inout H, effects: inout Effects<S>) {
        guard bringUpFailures < config.bringUpRetries else {
            phase = .ancsAbsent
            act(.disconnect(reason: step == .discovery ? .ancsUnavailable : .subscribeFailed))
            return
        }
        bringUpFailures += 1
        counters.bringUpRetries &+= 1
        phase = .retrying(step, at: now.advanced(byMs: bringUpBackoff.fail()))
    }

    /// Asks the platform for security once: not while a raise is
    /// outstanding, and on a bonded link not before the phone has had
    /// `bondedEncryptionWaitMs` to encrypt by itself.
    mutating func requestSecurity(attempt: Int, now: Instant) {
        switch security.request(attempt: attempt, bondedLinkUpAt: isBonded && !isEncrypted ? linkUpAt : nil, now: now) {
        case .askNow(let attempt): raiseSecurityNow(attempt: attempt)
        case .deferred: counters.raisesDeferred &+= 1
        case .coalesced: counters.raisesCoalesced &+= 1
        }
    }

    mutating func raiseSecurityNow(attempt: Int) {
        counters.raiseSecurityRequests &+= 1
        act(.raiseSecurity(attempt: attempt))
    }

    /// Submits the request in `scratch`, tagged with the generation.
    mutating func submit<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(now: Instant, handler: inout H, effects: inout Effects<S>) {
        if case .refused = bearer.submitRequest(copyOf: scratch, tag: UInt16(generation) << 8, now: now) {
            // Nothing is outstanding for this step, so nothing would ever
            // time out and bring-up would stall: end the link instead (the
            // phone reconnects and starts over).
            emit(.error(.requestRefused), now: now, handler: &handler, effects: &effects)
            act(.disconnect(reason: .attRefused))
        }
    }

    // MARK: Input

    public mutating func receive<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(_ pdu: Span<UInt8>, now: Instant, handler: inout H, effects: inout Effects<S>) {
        let inbound = bearer.receive(pdu, now: now)
        process(inbound, pdu: pdu, now: now, handler: &handler, effects: &effects)
    }

    mutating func process<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(_ inbound: ATTBearer.Inbound, pdu: Span<UInt8>, now: Instant, handler: inout H, effects: inout Effects<S>) {
        switch inbound {
        case .request(let request):
            _ = server.respond(to: request, in: pdu, into: &scratch, mtu: bearer.mtu)
            bearer.respond(copyOf: scratch)
            if Self.wroteCCCD(request, answer: scratch) { serverSubscriptionWritten() }
        case .command(let request):
            _ = server.respond(to: request, in: pdu, into: &scratch, mtu: bearer.mtu)
            if Self.wroteCCCD(request, answer: scratch) { serverSubscriptionWritten() }
        case .handled:
            break
        case .confirmed:
            serverIndicationConfirmed()
        case .notification(let handle, let value):
            notification(handle: handle, value: pdu.extracting(value), now: now, handler: &handler, effects: &effects)
        case .indication(let handle, let value):
            indication(handle: handle, value: pdu.extracting(value), now: now, handler: &handler, effects: &effects)
        case .securityRequired(_, let attempt):
            requestSecurity(attempt: attempt, now: now)
        case .response(let response, let rawTag):
            guard UInt8(truncatingIfNeeded: rawTag >> 8) == generation else {
                counters.staleResponses &+= 1
                return
            }
            self.response(response, pdu: pdu, now: now, handler: &handler, effects: &effects)
        case .dropped(let reason):
            switch reason {
            case .malformed, .unexpectedResponse, .unexpectedConfirmation: emit(.drop(.attPDU(reason)), now: now, handler: &handler, effects: &effects)
            case .bearerEnded: break
            }
        }
    }

    mutating func notification<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(handle: UInt16, value: Span<UInt8>, now: Instant, handler: inout H, effects: inout Effects<S>) {
        switch ancs.notification(handle: handle, value: value, &session) {
        case .notificationSource(let result, let permitted):
            watch.traffic(now: now)
            if permitted { emit(.controlPointPermitted, now: now, handler: &handler, effects: &effects) }
            switch result {
            case .applied(let change): emit(.notification(change), now: now, handler: &handler, effects: &effects)
            case .dropped(let error): emit(.drop(.notificationSource(error)), now: now, handler: &handler, effects: &effects)
            case .outsideSession: emit(.drop(.notificationSourceOutsideSession), now: now, handler: &handler, effects: &effects)
            }
        case .dataSource(let result):
            switch result {
            case .needMore: break
            case .completed(let result): emit(.command(result), now: now, handler: &handler, effects: &effects)
            case .dropped(_, let reason): emit(.drop(.dataSource(reason)), now: now, handler: &handler, effects: &effects)
            }
        case .notMine:
            if case .handled(let event) = companionNotification(handle: handle, value: value, now: now) {
                if let event { emit(event, now: now, handler: &handler, effects: &effects) }
            } else {
                counters.unknownHandleNotifications &+= 1
                emit(.drop(.notificationOnUnknownHandle), now: now, handler: &handler, effects: &effects)
            }
        }
    }

    mutating func indication<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(handle: UInt16, value: Span<UInt8>, now: Instant, handler: inout H, effects: inout Effects<S>) {
        guard handle != 0, handle == serviceChangedHandle else {
            counters.unknownHandleNotifications &+= 1
            emit(.drop(.indicationOnUnknownHandle), now: now, handler: &handler, effects: &effects)
            return
        }
        guard let range = ServiceChangedRange(value) else {
            emit(.drop(.serviceChangedMalformed), now: now, handler: &handler, effects: &effects)
            return
        }
        let covers = ancs.isAffected(by: range)
        switch phase {
        case .disconnected, .bringUp(.exchangingMTU), .bringUp(.discoveringGATT), .bringUp(.subscribingServiceChanged),
            .bringUp(.readingDatabaseHash):
            // ANCS discovery has not started; it will see the new
            // database. Handles offered from the cache are not used.
            offeredHandles = nil
            return
        default:
            break
        }
        if handlesFromCache, covers || companionsAffected(by: range) {
            handlesStale(.serviceChanged, now: now, handler: &handler, effects: &effects)
        }
        // AMS and CTS are found again once ANCS is live again (or at once
        // when only they moved).
        if companionsStarted, companionsAffected(by: range) {
            if !covers, arbiter.holder == .ams || arbiter.holder == .cts {
                // Its answer would come under the old database: skip it.
                generation &+= 1
            }
            abandonCompanion(dropMedia: true, now: now, handler: &handler, effects: &effects)
            resetCompanions()
            if !covers, phase == .live, config.companionServices { startCompanions() }
        }
        guard covers else { return }
        restartANCS(reason: .serviceChanged, now: now, handler: &handler, effects: &effects)
    }

    mutating func restartANCS<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(reason: EndReason, now: Instant, handler: inout H, effects: inout Effects<S>) {
        if session.isActive || phase == .live { emit(.ended(reason: reason), now: now, handler: &handler, effects: &effects) }
        ancs.endSession(&session)
        generation &+= 1
        abandonCompanion(dropMedia: false, now: now, handler: &handler, effects: &effects)
        startANCSDiscovery(now: now, handler: &handler, effects: &effects)
    }
}
