// SPDX-License-Identifier: Apache-2.0
// The simulated iPhone as one sans-IO value: fed ATT PDUs from the wearable,
// time, and scenario lines; answering with PDUs (its bearer's outbox),
// `PhoneAction`s for the platform and `PhoneEvent`s for observers.
//
// Outgoing traffic is pulled: responses to the wearable's requests go
// straight into the bearer's outbox, while Data Source fragments, the
// PreExisting replay, Notification Source events and Service Changed
// indications are generated one PDU at a time when `popOutgoing` finds the
// outbox empty. So a replay of the whole store or a long response needs no
// large queue, every response precedes the notifications it causes (Write
// Response, then Data Source or Removed), and a runner whose link is
// congested simply stops pulling.
//
// Security: see PhoneSim.swift. While pairing runs the link carries no ATT
// traffic from the wearable (the kernel holds its socket until encryption
// is on), so PDUs arriving then wait in a small queue and are processed,
// in order, when pairing completes.
//
// Parts are kept apart: Control Point writes go to the Control Point
// server (ControlPointServer.swift), which answers them and queues Data
// Source responses for the pump; AMS writes go to the media player
// (MediaPlayer.swift) and the clock is the Current Time server's
// (PhoneClockServer.swift), each owing its notifications to the pump; the
// scenario runner (ScenarioRunner.swift) queues the lines and keeps the
// waits, and after every input the phone carries out the commands it hands
// over (`apply`).

import AMS
import ANCS
import ATT
import Bounded
import CTS
import GATT

public struct PhoneCore: ~Copyable {
    /// Scenario steps started per call before yielding (`deadline` is then now).
    public static let maxStepsPerCall = ScenarioRunner.maxStepsPerCall

    enum Security: Equatable {
        case open
        /// Bonded: the phone will start encryption itself at this time.
        case encryptPending(at: Instant)
        /// Pairing, or (`reencrypt`) encrypting with the bond's key.
        case pairing(until: Instant, reencrypt: Bool)
        case secured
    }

    struct Subscriptions: Equatable {
        var serviceChanged: UInt16
        var notificationSource: UInt16
        var dataSource: UInt16
        var remoteCommand: UInt16
        var entityUpdate: UInt16
        var currentTime: UInt16
    }

    public let config: PhoneConfig
    public private(set) var bearer: ATTBearer
    public private(set) var database: PhoneDatabase
    public private(set) var isConnected = false
    /// Paired once with this wearable: later connections encrypt at once.
    public private(set) var isBonded = false
    private var security = Security.open
    private var store: NotificationStore
    private var apps: AppTable
    private var browser = PeerBrowser()
    private var browseReported = false
    private var outputs: PhoneOutputs
    private var notificationQueue: RingBuffer<NotificationSourceEvent>
    private var replayActive = false
    private var replayCount = 0
    /// `replay-flag off` clears it: the replay then looks like new posts.
    private var replayFlagged = true
    private var dataSource: PacketQueue
    private var dataSourceOffset = 0
    private var dataSourceFragments = 0
    private var indications: RingBuffer<ServiceChangedRange>
    private var indicationSentAt: Instant? = nil
    private var held: PacketQueue
    private var scratch: ByteBuffer
    private var controlPoint: ControlPointServer
    private var media = MediaPlayer()
    private var clock = PhoneClockServer()
    private var scenario: ScenarioRunner
    private var lastNow = Instant.zero
    /// `share off`: the ATT error ANCS writes get (0: sharing allowed).
    private var shareRefusal: UInt8 = 0
    private var ancsHiding = ANCSHiding.never
    /// ANCS was taken out of the database by `hide-ancs` (not by a scenario).
    private var ancsHiddenByQuirk = false
    private var bondedAtConnection = false
    private var encryptDelayMs: Int64 = 0
    /// `drop-subscription`: the phone has no session for the wearable until
    /// it subscribes Notification Source again.
    private var sessionLost = false
    /// `ns-dead`: Notification Source sends nothing until its CCCD is
    /// written on again or the phone reconnects; the rest works.
    private var notificationSourceDead = false

    public init(config: PhoneConfig) {
        precondition(config.pairingDelayMs >= 0, "pairing cannot take negative time")
        self.config = config
        bearer = ATTBearer(config: config.bearer)
        database = PhoneDatabase(deviceName: config.deviceName)
        store = NotificationStore(capacity: config.notificationCapacity)
        apps = AppTable(capacity: config.appCapacity)
        outputs = PhoneOutputs(eventCapacity: config.eventCapacity, actionCapacity: config.actionCapacity)
        notificationQueue = RingBuffer(capacity: config.notificationQueueCapacity, policy: .refuseNewest)
        dataSource = PacketQueue(capacity: config.dataSourceQueueCapacity, slotBytes: ControlPointServer.maxResponseBytes)
        indications = RingBuffer(capacity: 4, policy: .refuseNewest)
        held = PacketQueue(capacity: config.pairingHoldCapacity, slotBytes: ATTMTU.maximum)
        scratch = ByteBuffer(capacity: config.bearer.maxMTU)
        controlPoint = ControlPointServer(config: config)
        scenario = ScenarioRunner(config: config)
        if config.preloadAppleApps {
            preload("com.apple.mobilephone", "Phone")
            preload("com.apple.MobileSMS", "Messages")
            preload("com.apple.mobilemail", "Mail")
        }
    }

    private mutating func preload(_ identifier: StaticString, _ displayName: StaticString) {
        var id = AppIdentifier()
        var name = AppDisplayName()
        ScenarioParser.assign(&id, identifier)
        ScenarioParser.assign(&name, displayName)
        _ = apps.set(id, name)
    }

    // MARK: State

    /// ANCS may be used on this link (secured, or security not required).
    public var isSecured: Bool { isConnected && security == .secured }
    public var isPairing: Bool { if case .pairing = security { true } else { false } }
    public var ancsPresent: Bool { database.ancsPresent }
    public var mediaState: MediaState { media.state }
    /// The phone's local time and UTC offset at `now`.
    public func localTime(at now: Instant) -> CurrentTime { clock.currentTime(at: now) }
    public var utcOffsetMin: Int { clock.utcOffsetMin }
    public var notificationCount: Int { store.count }
    /// Nothing queued or waiting in the scenario.
    public var isScenarioIdle: Bool { scenario.isIdle }
    public var counters: PhoneCounters { outputs.counters }

    /// Whether the wearable has enabled notifications (indications for
    /// Service Changed) on `characteristic`.
    public func isSubscribed(_ characteristic: PhoneCharacteristic) -> Bool {
        let bit = characteristic == .serviceChanged ? CCCDValue.indications : CCCDValue.notifications
        return isConnected && database.cccdValue(characteristic) & bit != 0
    }

    public func notification(uid: UInt32) -> PhoneNotification? { store.notification(uid: uid) }
    public func content(uid: UInt32) -> NotificationContent? { store.content(uid: uid) }
    public func categoryCount(_ category: CategoryID) -> UInt8 { store.categoryCount(category) }

    /// Forgets the bond: the next connection pairs again.
    public mutating func forgetBond() { isBonded = false }

    private var ancsAllowed: Bool { !config.requiresSecurity || security == .secured }

    // MARK: Outputs

    public mutating func nextEvent() -> PhoneEvent? { outputs.nextEvent() }
    public mutating func nextAction() -> PhoneAction? { outputs.nextAction() }

    /// Moves the next PDU to send into `out`; false when there is none now.
    public mutating func popOutgoing(into out: inout ByteBuffer) -> Bool {
        if bearer.popOutgoing(into: &out) { return true }
        guard pumpOne() else { return false }
        return bearer.popOutgoing(into: &out)
    }

    private mutating func emit(_ event: PhoneEvent) { outputs.emit(event) }
    private mutating func act(_ action: PhoneAction) { outputs.act(action) }

    // MARK: Link

    public mutating func linkUp(now: Instant) {
        lastNow = now
        if isConnected { takeDown(reason: "reconnected") }
        isConnected = true
        bearer.reset()
        controlPoint.resetLink()
        database.resetSubscriptions()
        media.resetLink()
        clock.dropOwed()
        sessionLost = false
        notificationSourceDead = false
        bondedAtConnection = isBonded
        if !config.requiresSecurity {
            security = .secured
        } else if isBonded {
            security = encryptDelayMs > 0 ? .encryptPending(at: now.advanced(byMs: encryptDelayMs)) : .secured
        } else {
            security = .open
        }
        emit(.connected(bonded: isBonded))
        if config.requiresSecurity && isBonded && security == .secured { emit(.secured(newlyPaired: false)) }
        applyANCSHiding()
        if config.browsePeer {
            browser.start(exchangeMTU: true)
            browseReported = false
            advanceBrowse(now: now)
        }
        runScenario(now: now)
    }

    public mutating func linkDown(reason: Name, now: Instant) {
        lastNow = now
        takeDown(reason: reason)
        runScenario(now: now)
    }

    /// The phone ends the link itself (a scenario step).
    private mutating func hangUp(reason: Name) {
        guard isConnected else { return }
        act(.disconnect(reason: reason))
        takeDown(reason: reason)
    }

    private mutating func takeDown(reason: Name) {
        guard isConnected else { return }
        isConnected = false
        if isPairing { emit(.dropped(what: "pairing", reason: "link-lost")) }
        security = .open
        bearer.reset()
        controlPoint.resetLink()
        database.resetSubscriptions()
        media.resetLink()
        clock.dropOwed()
        endNotificationSession()
        resetDataSource()
        indications.removeAll()
        indicationSentAt = nil
        held.removeAll()
        browser.stop()
        emit(.disconnected(reason: reason))
    }

    // MARK: Input

    public mutating func receive(_ pdu: borrowing ByteBuffer, now: Instant) {
        receive(pdu.span, now: now)
    }

    public mutating func receive(_ pdu: Span<UInt8>, now: Instant) {
        lastNow = now
        if !isConnected {
            outputs.counters.pdusWhileDisconnected &+= 1
        } else {
            updateSecurity(now: now)
            if isPairing {
                outputs.counters.pdusHeldDuringPairing &+= 1
                if pdu.count > held.slotBytes || !held.push(pdu) {
                    outputs.counters.heldPDUsDropped &+= 1
                    emit(.dropped(what: "att-pdu", reason: "held-during-pairing"))
                }
            } else {
                process(pdu, now: now)
            }
        }
        runScenario(now: now)
    }

    private mutating func process(_ pdu: Span<UInt8>, now: Instant) {
        if pdu.count == 1, pdu[0] == ATTOpcode.handleValueConfirmation, indicationSentAt != nil {
            indicationSentAt = nil
            emit(.indicationConfirmed)
            return
        }
        let mtuBefore = bearer.mtu
        let inbound = bearer.receive(pdu, now: now)
        if bearer.mtu != mtuBefore { emit(.mtu(bearer.mtu)) }
        switch inbound {
        case .request(let request):
            serve(request, pdu, now: now, isCommand: false)
        case .command(let request):
            serve(request, pdu, now: now, isCommand: true)
        case .response(let response, _):
            browse(response, pdu, now: now)
        case .notification, .indication:
            outputs.counters.peerValuesIgnored &+= 1
        case .securityRequired:
            // The phone is the central: it would encrypt the link and retry.
            _ = bearer.securityChanged(encrypted: true, now: now)
        case .handled:
            break
        case .dropped(let reason):
            outputs.counters.bearerDrops &+= 1
            switch reason {
            case .malformed: emit(.dropped(what: "att-pdu", reason: "malformed"))
            case .unexpectedResponse: emit(.dropped(what: "att-pdu", reason: "unexpected-response"))
            case .unexpectedConfirmation: emit(.dropped(what: "att-pdu", reason: "unexpected-confirmation"))
            case .bearerEnded: emit(.dropped(what: "att-pdu", reason: "bearer-ended"))
            }
        }
    }

    // MARK: Server

    private var subscriptions: Subscriptions {
        Subscriptions(
            serviceChanged: database.serviceChangedCCCDValue, notificationSource: database.notificationSourceCCCDValue,
            dataSource: database.dataSourceCCCDValue, remoteCommand: database.remoteCommandCCCDValue,
            entityUpdate: database.entityUpdateCCCDValue, currentTime: database.currentTimeCCCDValue)
    }

    private mutating func serve(_ request: ATTPDU, _ pdu: Span<UInt8>, now: Instant, isCommand: Bool) {
        if shareRefusal != 0, !isCommand, ancsAllowed, database.ancsPresent, let handle = Self.sharingWriteHandle(request) {
            // The user has not allowed notification sharing (yet).
            outputs.counters.writesRefusedNotShared &+= 1
            PDUWriter.errorResponse(
                &scratch, requestOpcode: request.opcode ?? ATTOpcode.writeRequest, handle: handle, code: shareRefusal)
            bearer.respond(copyOf: scratch)
            emit(.errorAnswered(handle: handle, code: shareRefusal, reason: "not-shared"))
            return
        }
        let before = subscriptions
        database.setValues(
            currentTime: clock.currentTime(at: now).encoded(), localTimeInformation: clock.localTimeInformation.encoded(),
            entityAttribute: media.chosenValue(at: now))
        switch database.respond(to: request, in: pdu, into: &scratch, mtu: bearer.mtu, secured: ancsAllowed) {
        case .answered:
            if !isCommand { bearer.respond(copyOf: scratch) }
            if case .readRequest(PhoneDatabase.currentTimeValue) = request, scratch.count > 0, scratch[0] == ATTOpcode.readResponse {
                emit(.currentTimeRead(clock.currentTime(at: now)))
            }
        case .insufficientAuthentication(let handle):
            guard !isCommand else { return }
            bearer.respond(copyOf: scratch)
            emit(.errorAnswered(handle: handle, code: ATTErrorCode.insufficientAuthentication, reason: "not-secured"))
            startPairing(now: now)
        case .subscription:
            if !isCommand { bearer.respond(copyOf: scratch) }
            subscriptionsChanged(from: before)
        case .controlPoint(let value):
            let session = controlPointSession
            let outcome = controlPoint.write(
                pdu.extracting(value), requestOpcode: request.opcode ?? ATTOpcode.writeRequest, isCommand: isCommand, session: session,
                store: store, apps: apps, dataSource: &dataSource, reply: &scratch, outputs: &outputs)
            controlPointAnswered(outcome)
        case .amsWrite(let characteristic, let value):
            guard !isCommand else {
                outputs.counters.amsWriteCommandsIgnored &+= 1
                emit(.dropped(what: Name(characteristic.name), reason: "write-command"))
                return
            }
            let handle: UInt16 =
                switch characteristic {
                case .remoteCommand: PhoneDatabase.remoteCommandValue
                case .entityUpdate: PhoneDatabase.entityUpdateValue
                default: PhoneDatabase.entityAttributeValue
                }
            let written = media.write(
                characteristic, pdu.extracting(value), handle: handle, now: now, subscribers: mediaSubscribers, reply: &scratch,
                outputs: &outputs)
            bearer.respond(copyOf: scratch)
            if let written { scenario.mediaCommandWritten(written) }
        case .controlPointPrepare(let offset, let value):
            controlPoint.prepare(offset: offset, pdu.extracting(value), mtu: bearer.mtu, reply: &scratch, outputs: &outputs)
            bearer.respond(copyOf: scratch)
        case .executeWrite(let flags):
            let session = controlPointSession
            let outcome = controlPoint.execute(
                flags: flags, session: session, store: store, apps: apps, dataSource: &dataSource, reply: &scratch, outputs: &outputs)
            controlPointAnswered(outcome)
        }
    }

    private var mediaSubscribers: MediaPlayer.Subscribers {
        MediaPlayer.Subscribers(remoteCommand: isSubscribed(.remoteCommand), entityUpdate: isSubscribed(.entityUpdate))
    }

    private var controlPointSession: ControlPointServer.Session {
        ControlPointServer.Session(exists: !sessionLost, dataSourceSubscribed: isSubscribed(.dataSource))
    }

    /// Sends the Control Point server's reply (in `scratch`); a performed
    /// action removes its notification, announced as Removed.
    private mutating func controlPointAnswered(_ outcome: ControlPointServer.Outcome) {
        switch outcome {
        case .unanswered:
            break
        case .answered:
            bearer.respond(copyOf: scratch)
        case .performed(let uid):
            bearer.respond(copyOf: scratch)
            scenario.actionPerformed(uid: uid)
            if let removed = store.remove(uid: uid) { announceRemoved(removed) }
        }
    }

    /// The handle of a write that needs the user's consent to share
    /// notifications: the ANCS CCCDs and the Control Point, written whole or
    /// in prepared parts. Nil for any other request.
    private static func sharingWriteHandle(_ request: ATTPDU) -> UInt16? {
        switch request {
        case .writeRequest(let handle, _), .prepareWriteRequest(let handle, _, _):
            let needsSharing =
                handle == PhoneDatabase.notificationSourceCCCD || handle == PhoneDatabase.dataSourceCCCD
                || handle == PhoneDatabase.controlPointValue
            return needsSharing ? handle : nil
        default:
            return nil
        }
    }

    private mutating func subscriptionsChanged(from before: Subscriptions) {
        let after = subscriptions
        let bit = CCCDValue.notifications
        if before.dataSource & bit == 0, after.dataSource & bit != 0 { emit(.subscribed(.dataSource)) }
        if before.dataSource & bit != 0, after.dataSource & bit == 0 {
            emit(.unsubscribed(.dataSource))
            resetDataSource()
        }
        if before.notificationSource & bit == 0, after.notificationSource & bit != 0 {
            sessionLost = false
            notificationSourceDead = false
            emit(.subscribed(.notificationSource))
            beginReplay()
        }
        if before.notificationSource & bit != 0, after.notificationSource & bit == 0 {
            emit(.unsubscribed(.notificationSource))
            endNotificationSession()
        }
        if before.remoteCommand & bit == 0, after.remoteCommand & bit != 0 {
            emit(.subscribed(.remoteCommand))
            media.remoteCommandSubscribed()
        }
        if before.remoteCommand & bit != 0, after.remoteCommand & bit == 0 { emit(.unsubscribed(.remoteCommand)) }
        if before.entityUpdate & bit == 0, after.entityUpdate & bit != 0 { emit(.subscribed(.entityUpdate)) }
        if before.entityUpdate & bit != 0, after.entityUpdate & bit == 0 { emit(.unsubscribed(.entityUpdate)) }
        if before.currentTime & bit == 0, after.currentTime & bit != 0 { emit(.subscribed(.currentTime)) }
        if before.currentTime & bit != 0, after.currentTime & bit == 0 {
            emit(.unsubscribed(.currentTime))
            clock.dropOwed()
        }
        let indicate = CCCDValue.indications
        if before.serviceChanged & indicate == 0, after.serviceChanged & indicate != 0 { emit(.subscribed(.serviceChanged)) }
        if before.serviceChanged & indicate != 0, after.serviceChanged & indicate == 0 {
            emit(.unsubscribed(.serviceChanged))
            indications.removeAll()
        }
    }

    // MARK: Security

    private mutating func startPairing(now: Instant) {
        guard security == .open else { return }
        emit(.pairingStarted)
        security = .pairing(until: now.advanced(byMs: config.pairingDelayMs), reencrypt: false)
        updateSecurity(now: now)
    }

    /// The wearable asked for security: on a real link an SMP Security
    /// Request (the loopback test rig calls this for `raiseSecurity`; the
    /// UNIX link carries none). An open link pairs. A request while the
    /// phone's own encryption of a bonded link is under way, or due within
    /// `encryptionCollisionWindowMs`, collides with it (counted, `dropped
    /// security-request collision`; the phone's encryption goes on); one
    /// earlier makes the phone encrypt at once.
    public mutating func securityRequested(now: Instant) {
        lastNow = now
        guard isConnected else { return }
        updateSecurity(now: now)
        outputs.counters.securityRequests &+= 1
        switch security {
        case .open:
            startPairing(now: now)
        case .encryptPending(let at) where now < at.advanced(byMs: -config.encryptionCollisionWindowMs):
            // Asked well before the phone meant to encrypt: it encrypts now.
            security = .pairing(until: now.advanced(byMs: config.pairingDelayMs), reencrypt: true)
        case .encryptPending, .pairing(_, reencrypt: true):
            outputs.counters.securityCollisions &+= 1
            emit(.dropped(what: "security-request", reason: "collision"))
        case .pairing, .secured:
            break
        }
        runScenario(now: now)
    }

    /// Shows or hides ANCS as `hide-ancs` says for this link now (no
    /// Service Changed: the wearable is expected to look again by itself).
    private mutating func applyANCSHiding() {
        let hidden: Bool
        switch ancsHiding {
        case .never: hidden = false
        case .untilEncrypted: hidden = security != .secured
        case .untilBonded: hidden = !bondedAtConnection
        }
        if hidden, database.ancsPresent {
            let before = subscriptions
            database.removeANCS()
            ancsHiddenByQuirk = true
            emit(.ancsRemoved)
            subscriptionsChanged(from: before)
        } else if !hidden, ancsHiddenByQuirk {
            ancsHiddenByQuirk = false
            if !database.ancsPresent {
                database.addANCS()
                emit(.ancsAdded)
            }
        }
    }

    private mutating func updateSecurity(now: Instant) {
        if case .encryptPending(let at) = security, now >= at {
            // A bonded phone encrypting the link by itself, as iOS does.
            security = .pairing(until: at.advanced(byMs: config.pairingDelayMs), reencrypt: true)
        }
        guard case .pairing(let until, let reencrypt) = security, now >= until else { return }
        security = .secured
        isBonded = true
        emit(.secured(newlyPaired: !reencrypt))
        applyANCSHiding()
        // A local copy: processing mutates self, which owns the queue.
        var pdu = InlineBytes<517>()
        while !held.isEmpty, isConnected, security == .secured {
            pdu.removeAll()
            _ = held.withFirst { pdu.append($0) }
            held.removeFirst()
            process(pdu.span, now: now)
        }
    }

    // MARK: Notifications

    private mutating func beginReplay() {
        store.beginReplay()
        replayCount = store.replayPendingCount
        replayActive = true
        checkReplayFinished()
    }

    private mutating func endNotificationSession() {
        store.cancelReplay()
        replayActive = false
        notificationQueue.removeAll()
    }

    /// Drops the queued Data Source responses and the one being sent.
    private mutating func resetDataSource() {
        dataSource.removeAll()
        dataSourceOffset = 0
        dataSourceFragments = 0
    }

    private mutating func checkReplayFinished() {
        guard replayActive, store.replayPendingCount == 0 else { return }
        replayActive = false
        emit(.replayFinished(count: replayCount))
    }

    private mutating func queueNotificationSource(_ eventID: EventID, _ n: PhoneNotification) {
        guard isSubscribed(.notificationSource) else { return }
        if notificationSourceDead {
            outputs.counters.notificationsWithheld &+= 1
            emit(.dropped(what: "notification-source", reason: "ns-dead"))
            return
        }
        let event = NotificationSourceEvent(
            eventID: eventID, flags: n.flags, category: n.category, categoryCount: store.categoryCount(n.category), uid: n.uid)
        if case .refused = notificationQueue.push(event) {
            outputs.counters.notificationQueueFull &+= 1
            emit(.dropped(what: "notification-source", reason: "queue-full"))
        }
    }

    /// Tells the wearable `n` is gone, unless it never heard of it (still
    /// waiting in the replay).
    private mutating func announceRemoved(_ n: PhoneNotification) {
        if n.replayPending {
            checkReplayFinished()
        } else {
            queueNotificationSource(.removed, n)
        }
    }

    private mutating func post(_ spec: NotificationSpec, announce: Bool) {
        for i in 0..<max(1, spec.count) {
            let uid = spec.uid.map { $0 &+ UInt32(truncatingIfNeeded: i) } ?? store.nextUID
            post(uid: uid, spec, announce: announce)
        }
    }

    private mutating func post(uid: UInt32, _ spec: NotificationSpec, announce: Bool) {
        scenario.forgetAction(uid: uid)
        switch store.post(uid: uid, category: spec.category, flags: spec.flags, content: spec.content) {
        case .added(let evicted):
            if let evicted {
                outputs.counters.notificationsEvicted &+= 1
                emit(.dropped(what: "notification", reason: "store-full-evicted-oldest"))
                announceRemoved(evicted)
            }
            if announce, let n = store.notification(uid: uid) { queueNotificationSource(.added, n) }
        case .modified(let previous):
            if announce, !previous.replayPending, let n = store.notification(uid: uid) { queueNotificationSource(.modified, n) }
        }
    }

    // MARK: Service Changed

    private mutating func changeANCS(remove: Bool, add: Bool) {
        var changed = false
        if remove, database.ancsPresent {
            let before = subscriptions
            database.removeANCS()
            emit(.ancsRemoved)
            subscriptionsChanged(from: before)
            changed = true
        }
        if add, !database.ancsPresent {
            database.addANCS()
            emit(.ancsAdded)
            changed = true
        }
        guard changed else { return }
        indicateChange(start: PhoneDatabase.ancsService, end: PhoneDatabase.ancsEnd)
    }

    /// `no-ams`, `no-cts`: the service goes for good, its subscriptions with
    /// it; a connected wearable is told with Service Changed.
    private mutating func removeService(ams: Bool) {
        guard ams ? database.amsPresent : database.ctsPresent else { return }
        let before = subscriptions
        if ams { database.removeAMS() } else { database.removeCTS() }
        emit(.serviceRemoved(ams ? "ams" : "cts"))
        subscriptionsChanged(from: before)
        if ams {
            indicateChange(start: PhoneDatabase.amsService, end: PhoneDatabase.amsEnd)
        } else {
            indicateChange(start: PhoneDatabase.ctsService, end: PhoneDatabase.ctsEnd)
        }
    }

    /// Queues a Service Changed indication for the range, if a wearable is
    /// connected and asked for them.
    private mutating func indicateChange(start: UInt16, end: UInt16) {
        guard isConnected else { return }
        guard isSubscribed(.serviceChanged) else {
            outputs.counters.indicationsNotSubscribed &+= 1
            emit(.dropped(what: "service-changed", reason: "not-subscribed"))
            return
        }
        if case .refused = indications.push(ServiceChangedRange(start: start, end: end)) {
            outputs.counters.indicationQueueFull &+= 1
            emit(.dropped(what: "service-changed", reason: "queue-full"))
        }
    }

    // MARK: Generating notifications

    /// Puts one generated PDU into the bearer's outbox; false when nothing waits.
    private mutating func pumpOne() -> Bool {
        guard isConnected, bearer.isOpen else { return false }
        if pumpDataSource() { return true }
        if pumpReplay() { return true }
        if let event = notificationQueue.popFirst() {
            sendNotificationSource(event)
            return true
        }
        if media.pop(into: &scratch, mtu: bearer.mtu, now: lastNow, subscribers: mediaSubscribers, outputs: &outputs)
            || clock.pop(into: &scratch, now: lastNow, subscribed: isSubscribed(.currentTime), outputs: &outputs)
        {
            bearer.send(copyOf: scratch)
            return true
        }
        return pumpIndication()
    }

    private mutating func pumpDataSource() -> Bool {
        guard !dataSource.isEmpty else { return false }
        let offset = dataSourceOffset
        let fragmentMax = bearer.mtu - 3
        var fragment = InlineBytes<517>()
        var total = 0
        _ = dataSource.withFirst { whole in
            total = whole.count
            fragment.append(whole.extracting(offset..<min(whole.count, offset + fragmentMax)))
        }
        do {
            try PDUWriter.notification(&scratch, handle: PhoneDatabase.dataSourceValue, value: fragment.span, mtu: bearer.mtu)
        } catch {
            preconditionFailure("a fragment is cut to MTU - 3")
        }
        bearer.send(copyOf: scratch)
        dataSourceOffset += fragment.count
        dataSourceFragments += 1
        if dataSourceOffset >= total {
            dataSource.removeFirst()
            emit(.dataSourceSent(byteCount: total, fragmentCount: dataSourceFragments))
            dataSourceOffset = 0
            dataSourceFragments = 0
        }
        return true
    }

    private mutating func pumpReplay() -> Bool {
        guard replayActive, isSubscribed(.notificationSource), let n = store.takeNextReplay() else { return false }
        sendNotificationSource(NotificationSourceEvent(
            eventID: .added, flags: replayFlagged ? n.flags.union(.preExisting) : n.flags, category: n.category,
            categoryCount: store.categoryCount(n.category), uid: n.uid))
        checkReplayFinished()
        return true
    }

    private mutating func sendNotificationSource(_ event: NotificationSourceEvent) {
        scratch.removeAll()
        scratch.append(ATTOpcode.handleValueNotification)
        scratch.appendLE16(PhoneDatabase.notificationSourceValue)
        event.encode(into: &scratch)
        bearer.send(copyOf: scratch)
        emit(.notificationSent(event))
    }

    private mutating func pumpIndication() -> Bool {
        guard indicationSentAt == nil, let range = indications.popFirst() else { return false }
        scratch.removeAll()
        scratch.append(ATTOpcode.handleValueIndication)
        scratch.appendLE16(PhoneDatabase.serviceChangedValue)
        scratch.appendLE16(range.start)
        scratch.appendLE16(range.end)
        bearer.send(copyOf: scratch)
        indicationSentAt = lastNow
        emit(.serviceChangedIndicated(start: range.start, end: range.end))
        return true
    }

    // MARK: Client

    private mutating func browse(_ response: ATTPDU, _ pdu: Span<UInt8>, now: Instant) {
        _ = browser.handle(response, in: pdu)
        advanceBrowse(now: now)
    }

    private mutating func advanceBrowse(now: Instant) {
        if browser.nextRequest(into: &scratch, mtu: bearer.mtu, clientMTU: bearer.mtuLimit) {
            if case .refused = bearer.submitRequest(copyOf: scratch, tag: 1, now: now) {
                emit(.dropped(what: "peer-discovery", reason: "request-refused"))
            }
        } else if browser.isFinished, !browseReported {
            browseReported = true
            emit(.peerDiscovered(name: browser.name, serviceCount: browser.serviceCount))
        }
    }

    // MARK: Time

    public var deadline: Instant? {
        var next: Instant? = nil
        if isConnected {
            next = bearer.deadline
            if case .pairing(let until, _) = security { next = earliest(next, until) }
            if case .encryptPending(let at) = security { next = earliest(next, at) }
            if let sentAt = indicationSentAt { next = earliest(next, sentAt.advanced(byMs: config.indicationTimeoutMs)) }
        }
        return earliest(next, scenario.deadline(lastNow: lastNow, subscribedAndReplayed: subscribedAndReplayed))
    }

    public mutating func advance(now: Instant) {
        lastNow = now
        if isConnected {
            updateSecurity(now: now)
            if let timeout = bearer.checkTimeout(now: now) {
                switch timeout {
                case .transactionTimedOut:
                    outputs.counters.transactionTimeouts &+= 1
                    emit(.dropped(what: "att", reason: "transaction-timeout"))
                    act(.disconnect(reason: "att-timeout"))
                    takeDown(reason: "att-timeout")
                case .securityGaveUp(let error, _):
                    browse(error, Span<UInt8>(), now: now)
                }
            }
            if isConnected, let sentAt = indicationSentAt, now >= sentAt.advanced(byMs: config.indicationTimeoutMs) {
                outputs.counters.indicationTimeouts &+= 1
                emit(.dropped(what: "service-changed", reason: "confirmation-timeout"))
                act(.disconnect(reason: "indication-timeout"))
                takeDown(reason: "indication-timeout")
            }
        }
        runScenario(now: now)
    }

    // MARK: Scenario

    /// Checks every line of `script` (UTF-8, lines separated by newlines),
    /// then queues them and starts running. Nothing is queued when a line
    /// is bad: the error names it.
    public mutating func load(script: Span<UInt8>, now: Instant) throws(ScenarioError) {
        lastNow = now
        try scenario.load(script: script)
        runScenario(now: now)
    }

    /// One typed command (without its newline). Typed lines are numbered
    /// from 1 in their own sequence; they run after what is already queued.
    public mutating func command(_ line: Span<UInt8>, now: Instant) throws(ScenarioError) {
        lastNow = now
        guard try scenario.command(line) else { return }
        runScenario(now: now)
    }

    /// (A dead Notification Source is not a subscription the wearable can
    /// use: `wait-subscribed` waits for the one that wakes it.)
    private var subscribedAndReplayed: Bool {
        isSubscribed(.notificationSource) && !notificationSourceDead && store.replayPendingCount == 0
    }

    /// Carries out the commands the runner hands over until it has none for now.
    private mutating func runScenario(now: Instant) {
        clock.start(at: now)
        scenario.beginRun()
        while let step = scenario.nextStep(now: now, subscribedAndReplayed: subscribedAndReplayed, outputs: &outputs) {
            let result = apply(step.command, line: step.line)
            scenario.finished(step.command, line: step.line, result, outputs: &outputs)
        }
    }

    /// What a command does to the phone (the runner keeps the waits and drops
    /// the queue after `quit`).
    private mutating func apply(_ command: ScenarioCommand, line: Int) -> ScenarioRunner.StepResult {
        switch command {
        case .existing(let spec):
            reportTruncation(spec.content, line: line)
            post(spec, announce: false)
        case .notify(let spec):
            reportTruncation(spec.content, line: line)
            post(spec, announce: true)
        case .replayFlag(let on):
            replayFlagged = on
        case .remove(let uid):
            guard let removed = store.remove(uid: uid) else { return .failed(reason: "unknown-uid") }
            announceRemoved(removed)
        case .app(let identifier, let displayName):
            if identifier.wasTruncated { emit(.valueTruncated(line: line, field: "app-id")) }
            if displayName.wasTruncated { emit(.valueTruncated(line: line, field: "display-name")) }
            guard apps.set(identifier, displayName) else { return .failed(reason: "app-table-full") }
        case .sleep, .waitSubscribed, .waitAction, .waitMedia:
            preconditionFailure("waits are the runner's")
        case .serviceChanged:
            changeANCS(remove: true, add: true)
        case .removeANCS:
            changeANCS(remove: true, add: false)
        case .addANCS:
            changeANCS(remove: false, add: true)
        case .error(let code, let count):
            controlPoint.forceErrors(code: code, count: count)
        case .mtu(let mtu):
            if mtu > config.bearer.maxMTU { emit(.valueTruncated(line: line, field: "mtu")) }
            bearer.limitMTU(min(mtu, config.bearer.maxMTU))
        case .share(let refusal):
            shareRefusal = refusal
        case .hideANCS(let hiding):
            ancsHiding = hiding
            if isConnected { applyANCSHiding() }
        case .encryptDelay(let ms):
            encryptDelayMs = ms
        case .loseResponses(let count):
            controlPoint.loseResponses(count: count)
        case .media(let state):
            media.set(state, now: lastNow)
        case .time(let local, let offset):
            clock.set(local, utcOffsetMin: offset, now: lastNow, notify: isSubscribed(.currentTime))
        case .noAMS:
            removeService(ams: true)
        case .noCTS:
            removeService(ams: false)
        case .notificationSourceDead:
            guard isConnected else { return .failed(reason: "not-connected") }
            notificationSourceDead = true
        case .dropSubscription:
            guard isConnected else { return .failed(reason: "not-connected") }
            let before = subscriptions
            database.dropANCSSubscriptions()
            sessionLost = true
            subscriptionsChanged(from: before)
        case .connect:
            if !isConnected { act(.connect) }
        case .disconnect:
            hangUp(reason: "scenario")
        case .forget:
            forgetBond()
            hangUp(reason: "forget")
        case .quit:
            act(.quit)
        }
        return .done
    }

    private mutating func reportTruncation(_ content: NotificationContent, line: Int) {
        let truncated = content.truncatedFields
        guard !truncated.isEmpty else { return }
        for raw in 0..<UInt8(8) {
            if let id = NotificationAttributeID(rawValue: raw), truncated.contains(id) {
                emit(.valueTruncated(line: line, field: Name(id.name)))
            }
        }
    }
}
