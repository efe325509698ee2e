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
//
// The value is split over three files: this one holds its state, the link
// and the server; PhoneCoreSecurity.swift pairing and encryption;
// PhoneCoreGeneration.swift the notifications, the Service Changed
// changes, the pumps that generate outgoing PDUs, the client, time and the
// scenario. Its members are internal, not private, so the parts share
// them; nothing outside PhoneSim sees them.

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
    public internal(set) var bearer: ATTBearer
    public internal(set) var database: PhoneDatabase
    public internal(set) var isConnected = false
    /// Paired once with this wearable: later connections encrypt at once.
    public internal(set) var isBonded = false
    var security = Security.open
    var store: NotificationStore
    var apps: AppTable
    var browser = PeerBrowser()
    var browseReported = false
    var outputs: PhoneOutputs
    var notificationQueue: RingBuffer<NotificationSourceEvent>
    var replayActive = false
    var replayCount = 0
    /// `replay-flag off` clears it: the replay then looks like new posts.
    var replayFlagged = true
    var dataSource: PacketQueue
    var dataSourceOffset = 0
    var dataSourceFragments = 0
    var indications: RingBuffer<ServiceChangedRange>
    var indicationSentAt: Instant? = nil
    var held: PacketQueue
    var scratch: ByteBuffer
    var controlPoint: ControlPointServer
    var media = MediaPlayer()
    var clock = PhoneClockServer()
    var scenario: ScenarioRunner
    var lastNow = Instant.zero
    /// `share off`: the ATT error ANCS writes get (0: sharing allowed).
    var shareRefusal: UInt8 = 0
    var ancsHiding = ANCSHiding.never
    /// ANCS was taken out of the database by `hide-ancs` (not by a scenario).
    var ancsHiddenByQuirk = false
    var bondedAtConnection = false
    /// The bonded wearable's Service Changed subscription, kept while it is
    /// away, and the range that changed meanwhile (indicated once the link
    /// is encrypted again), as iOS does for a bonded client.
    var bondedServiceChangedCCCD: UInt16 = 0
    var changedWhileAway: ServiceChangedRange? = nil
    var encryptDelayMs: Int64 = 0
    /// `drop-subscription`: the phone has no session for the wearable until
    /// it subscribes Notification Source again.
    var sessionLost = false
    /// `ns-dead`: Notification Source sends nothing until its CCCD is
    /// written on again or the phone reconnects; the rest works.
    var notificationSourceDead = false

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

    mutating func preload(_ identifier: StaticString, _ displayName: StaticString) {
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
    public mutating func forgetBond() {
        isBonded = false
        bondedServiceChangedCCCD = 0
        changedWhileAway = nil
    }

    var ancsAllowed: Bool { !config.requiresSecurity || security == .secured }

    // MARK: Outputs

    public mutating func nextEvent() -> PhoneEvent? { outputs.nextEvent() }
    public mutating func nextAction() -> PhoneAction? { outputs.nextAction() }

    /// Moves the next PDU to send into `out`; false when there is none now.
    public mutating func popOutgoing(into out: inout ByteBuffer) -> Bool {
        if bearer.popOutgoing(into: &out) { return true }
        guard pumpOne() else { return false }
        return bearer.popOutgoing(into: &out)
    }

    mutating func emit(_ event: PhoneEvent) { outputs.emit(event) }
    mutating func act(_ action: PhoneAction) { outputs.act(action) }

    // MARK: Link

    public mutating func linkUp(now: Instant) {
        lastNow = now
        if isConnected { takeDown(reason: "reconnected") }
        isConnected = true
        bearer.reset()
        controlPoint.resetLink()
        database.resetSubscriptions()
        if isBonded { database.restoreServiceChangedSubscription(bondedServiceChangedCCCD) }
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
        if security == .secured { indicateChangeWhileAway() }
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
    mutating func hangUp(reason: Name) {
        guard isConnected else { return }
        act(.disconnect(reason: reason))
        takeDown(reason: reason)
    }

    mutating func takeDown(reason: Name) {
        guard isConnected else { return }
        isConnected = false
        if isPairing { emit(.dropped(what: "pairing", reason: "link-lost")) }
        bondedServiceChangedCCCD = isBonded ? database.serviceChangedCCCDValue : 0
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

    mutating func process(_ pdu: Span<UInt8>, now: Instant) {
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
        case .handled, .confirmed:
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

    var subscriptions: Subscriptions {
        Subscriptions(
            serviceChanged: database.serviceChangedCCCDValue, notificationSource: database.notificationSourceCCCDValue,
            dataSource: database.dataSourceCCCDValue, remoteCommand: database.remoteCommandCCCDValue,
            entityUpdate: database.entityUpdateCCCDValue, currentTime: database.currentTimeCCCDValue)
    }

    mutating func serve(_ request: ATTPDU, _ pdu: Span<UInt8>, now: Instant, isCommand: Bool) {
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

    var mediaSubscribers: MediaPlayer.Subscribers {
        MediaPlayer.Subscribers(remoteCommand: isSubscribed(.remoteCommand), entityUpdate: isSubscribed(.entityUpdate))
    }

    var controlPointSession: ControlPointServer.Session {
        ControlPointServer.Session(exists: !sessionLost, dataSourceSubscribed: isSubscribed(.dataSource))
    }

    /// Sends the Control Point server's reply (in `scratch`); a performed
    /// action removes its notification, announced as Removed.
    mutating func controlPointAnswered(_ outcome: ControlPointServer.Outcome) {
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
    static func sharingWriteHandle(_ request: ATTPDU) -> UInt16? {
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

    mutating func subscriptionsChanged(from before: Subscriptions) {
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
}
