// SPDX-License-Identifier: Apache-2.0
// The link to the phone: ATT bearer, our GATT server, discovery of the
// phone's services, and the ANCS session, as one sans-IO state machine.
// `Phase` is the procedure under way with its data; the GATT client
// procedures (discovery, CCCD writes, long writes) share `ClientProcedure`;
// the security raise and the Notification Source clocks are value types of
// their own (SecurityRaise.swift, NotificationSourceWatch.swift). Once ANCS
// is live the phone's AMS and CTS are one more procedure on the link
// (CompanionServices.swift). Who may send on the bearer, and whom a
// response is for, is the arbiter's to say (ATTArbiter.swift): the
// bring-up, then on the live link the Control Point, the companion
// services and the keep-alive, in that order.
//
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
    private var phase = Phase.disconnected
    /// Where the link is, for observers (tests, figures).
    public var state: LinkState {
        switch phase {
        case .disconnected: .disconnected
        case .bringUp(.exchangingMTU): .exchangingMTU
        case .bringUp(.discoveringGATT): .discoveringGATT
        case .bringUp(.subscribingServiceChanged): .subscribingServiceChanged
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
    public private(set) var bearer: ATTBearer
    /// ANCS: discovery, subscription, the Control Point and Data Source,
    /// with the session they feed.
    private var ancs: ANCSClient
    /// The ANCS session, the client's (lent to it with each call).
    public private(set) var session: Session
    public private(set) var counters = PhoneLinkCounters()
    public private(set) var isEncrypted = false
    private var server: GATTServer
    private var gattDiscovery: ServiceDiscovery
    private var serviceChangedHandle: UInt16 = 0
    /// The actions waiting for the platform: a disconnection, and a raise
    /// (pointless once a disconnection is asked for).
    private var disconnectReason: EndReason? = nil
    private var raiseAttempt: Int? = nil
    private var scratch: ByteBuffer
    private var generation: UInt8 = 0
    private var watch: NotificationSourceWatch
    /// The Service Changed subscription's CCCD write.
    private var serviceChangedWrite = CCCDWrite(handle: 0, value: 0)
    /// The link is to a bonded phone (it is expected to encrypt by itself).
    public private(set) var isBonded = false
    private var linkUpAt = Instant.zero
    private var security: SecurityRaise
    public var isRaisingSecurity: Bool { security.isOutstanding }
    private var permissionBackoff: Backoff
    /// The link must be encrypted by then, or it is dropped (nil: it is
    /// encrypted, or no link).
    private var encryptionDueBy: Instant? = nil
    private var bringUpBackoff: Backoff
    private var bringUpFailures = 0
    /// AMS and CTS, run on the live link when the Control Point is idle.
    private var companion = CompanionServices()
    /// Who may use the ATT bearer now: read off the clients' state, so it
    /// never disagrees with them (ATTArbiter.swift has the rules). Inlined:
    /// a call copies the whole link (4 kB) first, on every input.
    @inline(__always)
    private var arbiter: ATTArbiter {
        ATTArbiter(
            live: phase == .live, controlPointBusy: ancs.isBusy(session),
            companionBusy: companion.outstanding != nil)
    }
    /// The phone's local time as its Current Time Service said (kept
    /// across links).
    public var phoneClock: PhoneClock { companion.clock }

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
        gattDiscovery = ServiceDiscovery(service: .uuid16(GATTUUID.genericAttribute), wanted: [.uuid16(GATTUUID.serviceChanged), nil, nil, nil])
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
    private mutating func emit<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(
        _ event: LinkEvent, now: Instant, handler: inout H, effects: inout Effects<S>
    ) {
        effects.record(.link(event), session: session, now: now)
        if let outcome = FirmwareEvent(actionEndedBy: event) { effects.record(outcome, session: session, now: now) }
        handler.linkEvent(event, session: &session, now: now)
    }

    private mutating func act(_ action: LinkAction) {
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
        server.reset()
        ancs.reset(&session)
        isEncrypted = false
        isBonded = bonded
        linkUpAt = now
        clearSecurityAndRetries()
        generation &+= 1
        serviceChangedHandle = 0
        companion.reset()
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
    private var bondedEncryptionDeadlineMs: Int64 { config.bondedEncryptionWaitMs + config.bondedEncryptionTimeoutMs }

    public mutating func linkDown<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(reason: EndReason, now: Instant, handler: inout H, effects: inout Effects<S>) {
        guard phase != .disconnected else { return }
        ancs.linkEnded(&session)
        bearer.reset()
        phase = .disconnected
        generation &+= 1
        encryptionDueBy = nil
        clearSecurityAndRetries()
        abandonCompanion(dropMedia: true, now: now, handler: &handler, effects: &effects)
        companion.reset()
        emit(.ended(reason: reason), now: now, handler: &handler, effects: &effects)
    }

    /// The companion request out will not be answered to it (the
    /// generation moved on); a media press it loses is reported.
    private mutating func abandonCompanion<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(dropMedia: Bool, now: Instant, handler: inout H, effects: inout Effects<S>) {
        if let lost = companion.abandonOutstanding(dropMedia: dropMedia) {
            emit(.media(.commandEnded(lost, .interrupted)), now: now, handler: &handler, effects: &effects)
        }
    }

    private mutating func clearSecurityAndRetries() {
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
    private mutating func encryptionFailed<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(_ why: EncryptionFailure, now: Instant, handler: inout H, effects: inout Effects<S>) {
        encryptionDueBy = nil
        counters.encryptionFailures &+= 1
        emit(.error(.encryptionFailed(why)), now: now, handler: &handler, effects: &effects)
        act(.disconnect(reason: .notSecured))
    }

    /// A bring-up step failed for a reason other than security or the
    /// user's permission: tried again after a back-off, a bounded number of
    /// times; then the link is ended, so no phase waits for ever.
    private mutating func bringUpStepFailed<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(_ step: RetryStep, now: Instant, handler: inout H, effects: inout Effects<S>) {
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
    private mutating func requestSecurity(attempt: Int, now: Instant) {
        switch security.request(attempt: attempt, bondedLinkUpAt: isBonded && !isEncrypted ? linkUpAt : nil, now: now) {
        case .askNow(let attempt): raiseSecurityNow(attempt: attempt)
        case .deferred: counters.raisesDeferred &+= 1
        case .coalesced: counters.raisesCoalesced &+= 1
        }
    }

    private mutating func raiseSecurityNow(attempt: Int) {
        counters.raiseSecurityRequests &+= 1
        act(.raiseSecurity(attempt: attempt))
    }

    /// Submits the request in `scratch`, tagged with the generation.
    private mutating func submit<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(now: Instant, handler: inout H, effects: inout Effects<S>) {
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

    private mutating func process<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(_ inbound: ATTBearer.Inbound, pdu: Span<UInt8>, now: Instant, handler: inout H, effects: inout Effects<S>) {
        switch inbound {
        case .request(let request):
            _ = server.respond(to: request, in: pdu, into: &scratch, mtu: bearer.mtu)
            bearer.respond(copyOf: scratch)
        case .command(let request):
            _ = server.respond(to: request, in: pdu, into: &scratch, mtu: bearer.mtu)
        case .handled:
            break
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

    private mutating func notification<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(handle: UInt16, value: Span<UInt8>, now: Instant, handler: inout H, effects: inout Effects<S>) {
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
            if case .handled(let event) = companion.notification(handle: handle, value: value, now: now) {
                if let event { emit(event, now: now, handler: &handler, effects: &effects) }
            } else {
                counters.unknownHandleNotifications &+= 1
                emit(.drop(.notificationOnUnknownHandle), now: now, handler: &handler, effects: &effects)
            }
        }
    }

    private mutating func indication<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(handle: UInt16, value: Span<UInt8>, now: Instant, handler: inout H, effects: inout Effects<S>) {
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
        case .disconnected, .bringUp(.exchangingMTU), .bringUp(.discoveringGATT), .bringUp(.subscribingServiceChanged):
            return  // ANCS discovery has not started; it will see the new database.
        default:
            break
        }
        // AMS and CTS are found again once ANCS is live again (or at once
        // when only they moved).
        if companion.step != .notStarted, companion.isAffected(by: range) {
            if !covers, arbiter.holder == .companion {
                // Its answer would come under the old database: skip it.
                generation &+= 1
            }
            abandonCompanion(dropMedia: true, now: now, handler: &handler, effects: &effects)
            companion.reset()
            if !covers, phase == .live, config.companionServices { companion.start() }
        }
        guard covers else { return }
        restartANCS(reason: .serviceChanged, now: now, handler: &handler, effects: &effects)
    }

    private mutating func restartANCS<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(reason: EndReason, now: Instant, handler: inout H, effects: inout Effects<S>) {
        if session.isActive || phase == .live { emit(.ended(reason: reason), now: now, handler: &handler, effects: &effects) }
        ancs.endSession(&session)
        generation &+= 1
        abandonCompanion(dropMedia: false, now: now, handler: &handler, effects: &effects)
        startANCSDiscovery(now: now, handler: &handler, effects: &effects)
    }

    // MARK: Bring-up

    /// A response of this generation goes to the client holding the bearer.
    private mutating func response<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(_ response: ATTPDU, pdu: Span<UInt8>, now: Instant, handler: inout H, effects: inout Effects<S>) {
        switch arbiter.holder {
        case .link:
            bringUpResponse(response, pdu: pdu, now: now, handler: &handler, effects: &effects)
        case .companion:
            if let event = companion.handle(response, in: pdu, now: now) { emit(event, now: now, handler: &handler, effects: &effects) }
        case .controlPoint, .keepAlive, nil:
            // The Control Point write (or a step of its long write): the
            // only other request made while live (the keep-alive's probe is
            // a Control Point command).
            controlPointResponse(response, pdu: pdu, now: now, handler: &handler, effects: &effects)
        }
    }

    private mutating func bringUpResponse<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(_ response: ATTPDU, pdu: Span<UInt8>, now: Instant, handler: inout H, effects: inout Effects<S>) {
        switch phase {
        case .disconnected, .ancsAbsent, .waitingForPermission, .retrying, .bringUp(.awaitingEncryption):
            // Nothing of this generation is outstanding in these phases.
            counters.staleResponses &+= 1
        case .bringUp(.exchangingMTU):
            if case .exchangeMTUResponse = response { emit(.mtu(bearer.mtu), now: now, handler: &handler, effects: &effects) }
            phase = .bringUp(.discoveringGATT)
            gattDiscovery.restart()
            continueGATTDiscovery(now: now, handler: &handler, effects: &effects)
        case .bringUp(.discoveringGATT):
            switch gattDiscovery.handle(response, in: pdu) {
            case .continuing:
                continueGATTDiscovery(now: now, handler: &handler, effects: &effects)
            case .done:
                if let sc = gattDiscovery.characteristic(.uuid16(GATTUUID.serviceChanged)), sc.cccdHandle != 0 {
                    serviceChangedHandle = sc.valueHandle
                    phase = .bringUp(.subscribingServiceChanged)
                    serviceChangedWrite = CCCDWrite(handle: sc.cccdHandle, value: CCCDValue.indications)
                    if serviceChangedWrite.nextRequest(into: &scratch, mtu: bearer.mtu) { submit(now: now, handler: &handler, effects: &effects) }
                } else {
                    emit(.error(.serviceChangedAbsent), now: now, handler: &handler, effects: &effects)
                    startANCSDiscovery(now: now, handler: &handler, effects: &effects)
                }
            case .serviceNotFound:
                emit(.error(.serviceChangedAbsent), now: now, handler: &handler, effects: &effects)
                startANCSDiscovery(now: now, handler: &handler, effects: &effects)
            case .failed:
                emit(.error(.gattDiscoveryFailed), now: now, handler: &handler, effects: &effects)
                startANCSDiscovery(now: now, handler: &handler, effects: &effects)
            }
        case .bringUp(.subscribingServiceChanged):
            if case .refused = serviceChangedWrite.handle(response, in: pdu) { emit(.error(.serviceChangedSubscribeFailed), now: now, handler: &handler, effects: &effects) }
            startANCSDiscovery(now: now, handler: &handler, effects: &effects)
        case .bringUp(.discoveringANCS):
            switch ancs.discoveryResponse(response, in: pdu) {
            case .continuing:
                continueANCS(now: now, handler: &handler, effects: &effects)
            case .done:
                ancsDiscovered(now: now, handler: &handler, effects: &effects)
            case .serviceNotFound:
                emit(.ancsAbsent, now: now, handler: &handler, effects: &effects)
                ancsUnusable(now: now, handler: &handler, effects: &effects)
            case .failed(let reason):
                if case .attError(_, let code) = reason, ATTErrorCode.isSecurity(code) {
                    phase = .ancsAbsent
                    emit(.error(.ancsDiscoveryNotSecured), now: now, handler: &handler, effects: &effects)
                    act(.disconnect(reason: .notSecured))
                } else {
                    emit(.error(.ancsDiscoveryFailed), now: now, handler: &handler, effects: &effects)
                    bringUpStepFailed(.discovery, now: now, handler: &handler, effects: &effects)
                }
            }
        case .bringUp(.subscribingDataSource):
            let progress = ancs.subscriptionResponse(response, in: pdu)
            guard progress == .written else { return subscribeFailed(.dataSource, progress, now: now, handler: &handler, effects: &effects) }
            subscribeNotificationSource(now: now, handler: &handler, effects: &effects)
        case .bringUp(.subscribingNotificationSource):
            let progress = ancs.subscriptionResponse(response, in: pdu)
            guard progress == .written else {
                ancs.endSession(&session)
                return subscribeFailed(.notificationSource, progress, now: now, handler: &handler, effects: &effects)
            }
            phase = .live
            watch.traffic(now: now)
            permissionBackoff.reset()
            bringUpBackoff.reset()
            bringUpFailures = 0
            if config.companionServices, companion.step == .notStarted { companion.start() }
            emit(.subscribed, now: now, handler: &handler, effects: &effects)
        case .resubscribing(.probeFailed):
            // Notification Source is off; Data Source again too: a phone
            // that forgot one subscription may have forgotten both.
            subscribeDataSource(now: now, handler: &handler, effects: &effects)
        case .resubscribing(.silence):
            subscribeNotificationSource(now: now, handler: &handler, effects: &effects)
        case .live:
            preconditionFailure("the live link's responses go to its clients")
        }
    }

    /// The answer to the Control Point write, reported in order: the
    /// phone's permission, a removal the phone's 0xA2 means, the command's end.
    private mutating func controlPointResponse<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(_ response: ATTPDU, pdu: Span<UInt8>, now: Instant, handler: inout H, effects: inout Effects<S>) {
        let answer = ancs.controlPointResponse(response, in: pdu, &session, now: now)
        if answer.continuing { return continueANCS(now: now, handler: &handler, effects: &effects) }
        if answer.refusedForPermission { counters.controlPointPermissionRefusals &+= 1 }
        if let inARow = answer.notPermittedInARow { emit(.controlPointNotPermitted(inARow: inARow), now: now, handler: &handler, effects: &effects) }
        if answer.permitted { emit(.controlPointPermitted, now: now, handler: &handler, effects: &effects) }
        if let record = answer.removed {
            counters.removedByInvalidUID &+= 1
            emit(.notification(.removed(record)), now: now, handler: &handler, effects: &effects)
        }
        if let result = answer.result { commandFinished(result, now: now, handler: &handler, effects: &effects) }
    }

    private mutating func subscribeFailed<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(_ what: SubscribedSource, _ progress: CCCDWrite.Progress, now: Instant, handler: inout H, effects: inout Effects<S>) {
        if case .refused(let code) = progress,
            code == ATTErrorCode.writeNotPermitted || code == ATTErrorCode.insufficientAuthorization
        {
            // Sharing not allowed (yet): keep the link, try again later.
            counters.permissionRefusals &+= 1
            let retryMs = permissionBackoff.fail()
            phase = .waitingForPermission(retry: what, at: now.advanced(byMs: retryMs))
            emit(.permissionWaiting(retryInMs: retryMs), now: now, handler: &handler, effects: &effects)
            return
        }
        emit(.error(.subscribeFailed(what)), now: now, handler: &handler, effects: &effects)
        bringUpStepFailed(.subscription(what), now: now, handler: &handler, effects: &effects)
    }

    private mutating func retrySubscription<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(_ source: SubscribedSource, now: Instant, handler: inout H, effects: inout Effects<S>) {
        switch source {
        case .dataSource: subscribeDataSource(now: now, handler: &handler, effects: &effects)
        case .notificationSource: subscribeNotificationSource(now: now, handler: &handler, effects: &effects)
        }
    }

    private mutating func continueGATTDiscovery<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(now: Instant, handler: inout H, effects: inout Effects<S>) {
        if gattDiscovery.nextRequest(into: &scratch, mtu: bearer.mtu) { submit(now: now, handler: &handler, effects: &effects) }
    }

    /// The ANCS client's next request (discovery, a subscription, a step of
    /// a long write).
    private mutating func continueANCS<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(now: Instant, handler: inout H, effects: inout Effects<S>) {
        if ancs.nextRequest(into: &scratch, mtu: bearer.mtu) { submit(now: now, handler: &handler, effects: &effects) }
    }

    private mutating func startANCSDiscovery<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(now: Instant, handler: inout H, effects: inout Effects<S>) {
        phase = .bringUp(.discoveringANCS)
        ancs.startDiscovery()
        continueANCS(now: now, handler: &handler, effects: &effects)
    }

    private mutating func ancsDiscovered<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(now: Instant, handler: inout H, effects: inout Effects<S>) {
        guard ancs.discovered() else {
            emit(.error(.noNotificationSource), now: now, handler: &handler, effects: &effects)
            emit(.ancsAbsent, now: now, handler: &handler, effects: &effects)
            return ancsUnusable(now: now, handler: &handler, effects: &effects)
        }
        emit(.discovered, now: now, handler: &handler, effects: &effects)
        guard isEncrypted else {
            // Trusted only once encrypted: subscribed from `securityChanged`.
            phase = .bringUp(.awaitingEncryption)
            requestSecurity(attempt: 1, now: now)
            return
        }
        subscribeDataSource(now: now, handler: &handler, effects: &effects)
    }

    /// No usable ANCS. Unencrypted, some iPhones show it only once the link
    /// is encrypted: ask, and `securityChanged` discovers again (the
    /// encryption deadline bounds the wait). Encrypted, discovery is tried
    /// again after a back-off, then the link ends.
    private mutating func ancsUnusable<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(now: Instant, handler: inout H, effects: inout Effects<S>) {
        if isEncrypted {
            bringUpStepFailed(.discovery, now: now, handler: &handler, effects: &effects)
        } else {
            phase = .ancsAbsent
            requestSecurity(attempt: 1, now: now)
        }
    }

    /// Data Source first (when the phone has it), then Notification Source.
    private mutating func subscribeDataSource<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(now: Instant, handler: inout H, effects: inout Effects<S>) {
        if ancs.subscribe(.dataSource, CCCDValue.notifications) {
            phase = .bringUp(.subscribingDataSource)
            continueANCS(now: now, handler: &handler, effects: &effects)
        } else {
            subscribeNotificationSource(now: now, handler: &handler, effects: &effects)
        }
    }

    private mutating func subscribeNotificationSource<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(now: Instant, handler: inout H, effects: inout Effects<S>) {
        // The session begins when the write is sent: the phone may notify
        // the moment it is written, before its Write Response.
        guard ancs.subscribe(.notificationSource, CCCDValue.notifications) else { return }
        phase = .bringUp(.subscribingNotificationSource)
        ancs.endSession(&session)
        session.begin()
        continueANCS(now: now, handler: &handler, effects: &effects)
    }

    // MARK: Commands

    private mutating func commandFinished<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(_ result: CommandResult, now: Instant, handler: inout H, effects: inout Effects<S>) {
        switch result {
        case .probeAnswered:
            watch.probeAnswered(now: now)
        case .probeFailed:
            resubscribe(.probeFailed, now: now, handler: &handler, effects: &effects)
        default:
            break
        }
        emit(.command(result), now: now, handler: &handler, effects: &effects)
    }

    /// Queues a fetch of a notification's attributes (sent at `flush`).
    public mutating func requestAttributes(uid: UInt32, _ attributes: NotificationAttributeSet) -> RequestOutcome {
        session.fetchAttributes(uid: uid, attributes)
    }

    /// Queues an app display-name fetch unless it is cached.
    public mutating func requestAppName(_ appIdentifier: AppIdentifier) -> RequestOutcome {
        session.fetchAppName(appIdentifier)
    }

    /// The notification a press's action `id` is for: the incoming call if
    /// one is present (whether or not it offers `id`), else the most recent
    /// notification offering it; nil when there is neither.
    public func actionTarget(for id: ActionID) -> NotificationRecord? {
        session.table.mostRecent { $0.isIncomingCall } ?? session.table.mostRecent { $0.offers(id) }
    }

    /// Queues Perform Notification Action, only if the notification offers it.
    public mutating func performAction(uid: UInt32, _ action: ActionID) -> RequestOutcome {
        guard phase == .live, ancs.controlPointHandle != 0 else { return .inactive }
        return session.performAction(uid: uid, action)
    }

    /// Queues an AMS Remote Command (a media press; written at `flush`),
    /// only when the phone lists it as available now.
    mutating func requestMedia(_ command: RemoteCommandID) -> CompanionServices.MediaRequest {
        guard phase == .live else { return .notAvailable }
        return companion.requestMedia(command)
    }

    /// Why the subscription is written again on a live link.
    enum Resubscription: Equatable {
        /// The keep-alive probe was not answered as ANCS answers: the phone
        /// may have forgotten both subscriptions.
        case probeFailed
        /// Notification Source was silent for `resubscribeQuietMs` though the
        /// probe is answered: cycle Notification Source alone.
        case silence
    }

    /// Subscribes again on the live link: Notification Source off, then on
    /// (Data Source in between after a failed probe). A new session: the
    /// phone replays what it holds, flagged PreExisting.
    private mutating func resubscribe<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(_ why: Resubscription, now: Instant, handler: inout H, effects: inout Effects<S>) {
        guard ancs.notificationSourceHandle != 0 else { return }
        counters.resubscriptions &+= 1
        switch why {
        case .probeFailed:
            emit(.ended(reason: .keepAlive), now: now, handler: &handler, effects: &effects)
        case .silence:
            counters.silenceResubscriptions &+= 1
            emit(.ended(reason: .notificationSourceSilent), now: now, handler: &handler, effects: &effects)
        }
        ancs.endSession(&session)
        phase = .resubscribing(why)
        _ = ancs.subscribe(.notificationSource, CCCDValue.none)
        continueANCS(now: now, handler: &handler, effects: &effects)
    }

    /// Sends queued Control Point commands. Call after reading the events of
    /// an input: a command sent here replaces the last attribute values.
    public mutating func flush<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(now: Instant, handler: inout H, effects: inout Effects<S>) {
        // The turns in the arbiter's order: the Control Point, then (with
        // the bearer still free) a media press or the next step of the
        // companion services' bring-up.
        guard arbiter.mayTakeTurn(.controlPoint) else { return }
        sendCommand(now: now, handler: &handler, effects: &effects)
        guard arbiter.mayTakeTurn(.companion), companion.wantsToSend else { return }
        if companion.nextRequest(into: &scratch, mtu: bearer.mtu) { submit(now: now, handler: &handler, effects: &effects) }
    }

    /// Sends the next queued Control Point command, if it may go.
    private mutating func sendCommand<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(now: Instant, handler: inout H, effects: inout Effects<S>) {
        guard ancs.canSendCommand(session) else { return }
        // Each pass sends one command or drops one. The queues hold at most
        // fetchQueueCapacity + actionQueueCapacity, and a reaction to a drop
        // may queue one more (an alert never fetches): twice that is the
        // loop's limit; whatever is left goes at the next flush.
        let maxPasses = 2 * (config.session.fetchQueueCapacity + config.session.actionQueueCapacity)
        for _ in 0..<maxPasses {
            switch ancs.nextCommand(&session, into: &scratch, mtu: bearer.mtu) {
            case nil:
                return
            case .send:
                return submit(now: now, handler: &handler, effects: &effects)
            case .dropped(let result):
                emit(.command(result), now: now, handler: &handler, effects: &effects)
            }
        }
    }

    // MARK: Time

    public var deadline: Instant? {
        var next = earliest(bearer.deadline, ancs.deadline(session))
        if arbiter.mayTakeTurn(.keepAlive) { next = earliest(next, watch.deadline) }
        next = earliest(next, security.deadline)
        if !isEncrypted { next = earliest(next, encryptionDueBy) }
        if case .waitingForPermission(_, let at?) = phase { next = earliest(next, at) }
        if case .retrying(_, let at) = phase { next = earliest(next, at) }
        return next
    }

    public mutating func advance<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(now: Instant, handler: inout H, effects: inout Effects<S>) {
        if let timeout = bearer.checkTimeout(now: now) {
            switch timeout {
            case .transactionTimedOut:
                emit(.error(.transactionTimeout), now: now, handler: &handler, effects: &effects)
                act(.disconnect(reason: .attTimeout))
                linkDown(reason: .attTimeout, now: now, handler: &handler, effects: &effects)
                return
            case .securityGaveUp(let error, let rawTag):
                security.reset()
                process(.response(error, tag: rawTag), pdu: Span<UInt8>(), now: now, handler: &handler, effects: &effects)
            }
        }
        if let due = encryptionDueBy, !isEncrypted, now >= due {
            encryptionFailed(.timeout, now: now, handler: &handler, effects: &effects)
            return
        }
        if let attempt = security.advance(now: now) { raiseSecurityNow(attempt: attempt) }
        if case .retrying(let step, let at) = phase, now >= at {
            switch step {
            case .discovery: startANCSDiscovery(now: now, handler: &handler, effects: &effects)
            case .subscription(let source): retrySubscription(source, now: now, handler: &handler, effects: &effects)
            }
        }
        if case .waitingForPermission(let retry, let at?) = phase, now >= at {
            phase = .waitingForPermission(retry: retry, at: nil)
            retrySubscription(retry, now: now, handler: &handler, effects: &effects)
        }
        if let result = ancs.advance(&session, now: now) { commandFinished(result, now: now, handler: &handler, effects: &effects) }
        if arbiter.mayTakeTurn(.keepAlive) {
            switch watch.advance(now: now) {
            case .resubscribe: resubscribe(.silence, now: now, handler: &handler, effects: &effects)
            case .probe: if session.probe() == .queued { counters.probesSent &+= 1 }
            case nil: break
            }
        }
    }
}
