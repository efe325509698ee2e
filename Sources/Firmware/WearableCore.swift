// SPDX-License-Identifier: Apache-2.0
// The wearable as one sans-IO value: the phone link, and around it what the
// wearer sees, feels and presses (policy, patterns, buttons). Inputs come
// from the runner with its `Effects`: events go to the sink as they happen
// (the link's straight from PhoneLink, which then hands them to the alert
// policy); PDUs, management commands, link actions and line changes wait
// in the bounded places that own them until the runner settles.
//
// Who does what (docs/architecture.md has the picture):
// - AlertPolicy: what plays for each notification (replay, lasting alerts,
//   rule waits, the unread indicator) and the wearable's own indications,
//   on the pattern player it owns;
// - ButtonRouter: what a press means (consent, pairing mode, an action);
// - Controller: the management interface (set-up, pairing, bonds);
// - PhoneLink: the ATT link and the ANCS session (and the phone's AMS and
//   CTS: media presses, the phone's clock);
// - QuietHoursWatch, PhoneLostWatch: quiet hours by the phone's clock, and
//   the phone left behind, each reported when it changes.
// This facade feeds them, carries out a press (the target of an action is
// the incoming call if one is present, else the most recent notification
// offering it; no target, or one that does not offer it, is "nothing to
// do": no command, a short buzz) and reports every event once, in order.

import AMS
import ANCS
import Bounded
import Config
import Feedback
import GATT
import Mgmt
import Platform

public struct WearableCore: ~Copyable {
    public let board: BoardConfig
    public let policy: PolicyConfig
    /// Play the settings-error feedback at start (`WearableConfig.settingsError`).
    private let settingsErrorAtStart: Bool
    public private(set) var phone: PhoneLink
    public private(set) var controller: Controller
    private var alerts: AlertPolicy
    private var controllerEventsDroppedSeen: UInt64 = 0
    private var buttons: ButtonRouter
    private var changes: RingBuffer<OutputChange>
    /// Each output's level as the policy drives it (what events report)...
    private var levels: FixedArray<Bool>
    /// ...and as the platform was last told: a difference is a line change
    /// still to apply, so none can be lost to a full queue.
    private var applied: FixedArray<Bool>
    /// A link was encrypted before (the bond, when there is no controller).
    private var peerWasEncrypted = false
    private var quiet = QuietHoursWatch()
    private var battery: BatteryWatch
    private var phoneWatch: PhoneLostWatch
    /// Stopping (shutdown): a link that ends now does not mean the phone left.
    private var stopping = false
    /// A phone subscribed on some link (the UNIX link's "bonded phone").
    private var phoneKnown = false
    /// The link up now is from the known phone's address (the controller
    /// says it is bonded; on the UNIX link, once a phone subscribed). It
    /// counts as the phone only once it is encrypted: an address is easy
    /// to take, the bond's key is not.
    private var linkFromKnownPhone = false
    /// The bonded phones' handles from their last links (PhoneHandles.swift).
    private var gattCache: GATTCache
    /// The bonded phone on this link as the controller named it (nil: not
    /// known yet, or not bonded).
    private var peerAddress: DeviceAddress? = nil
    /// A pairing stored a bond on this link: its handles go to that bond.
    private var bondStoredOnLink = false
    private var handlesRevisionSeen: UInt32 = 0

    public init(config: WearableConfig, bonds: consuming BondStore = BondStore(), gattCache: consuming GATTCache = GATTCache()) {
        self.gattCache = gattCache
        board = config.board
        policy = config.policy
        settingsErrorAtStart = config.settingsError
        phone = PhoneLink(config: config.link)
        controller = Controller(config: config.controller, bonds: bonds)
        alerts = AlertPolicy(config: config)
        alerts.pairingMode = controller.isPairingMode
        battery = BatteryWatch(board: config.board, pollMs: config.batteryPollMs)
        phoneWatch = PhoneLostWatch(timeoutMs: config.policy.phoneLostMs, cooldownMs: config.phoneLostCooldownMs)
        let outputs = max(1, config.board.outputs.count)
        buttons = ButtonRouter(board: config.board, policy: config.policy)
        changes = RingBuffer(capacity: 2 * outputs, policy: .refuseNewest)
        levels = FixedArray(capacity: outputs)
        applied = FixedArray(capacity: outputs)
        for _ in 0..<outputs {
            levels.append(false)
            applied.append(false)
        }
    }

    // MARK: Link inputs

    public mutating func linkUp<S: EventSink & ~Copyable>(now: Instant, into effects: inout Effects<S>) {
        // Outside pairing mode a phone without a bond is turned away, so a
        // link that stays is to a bonded phone (the controller confirms it
        // with `connected(bonded:address:)`). Without a controller (the UNIX link:
        // no SMP, no bonds of ours) a phone whose link was encrypted before
        // counts as bonded, as the simulated phone keeps its bond.
        let bonded = controller.config.enabled
            ? !controller.bonds.isEmpty && !controller.isPairingMode : peerWasEncrypted
        phone.linkUp(now: now, bonded: bonded, handler: &alerts, effects: &effects)
        handlesRevisionSeen = phone.handlesRevision
        bondStoredOnLink = false
        // Without a controller the simulated phone is the only phone: once
        // one has subscribed, every link is its (Bluetooth waits for the
        // controller to say the peer is bonded).
        if !controller.config.enabled {
            linkFromKnownPhone = phoneKnown
            peerAddress = bonded ? GATTCache.unixLinkPhone : nil
        }
        offerCachedHandles()
        applyPatterns(now: now, into: &effects)
    }

    /// The known phone is back: its address, and the link encrypted.
    private mutating func phoneConnected<S: EventSink & ~Copyable>(now: Instant, into effects: inout Effects<S>) {
        guard linkFromKnownPhone, phone.isEncrypted, phoneWatch.phoneConnected(now: now) else { return }
        emit(.phoneLost(false), now: now, into: &effects)
        alerts.feedback(policy.phoneBack, now: now)
    }

    /// The bonded phone's handles from its last link, if kept: the link
    /// takes them while its MTU exchange is out (the controller may name
    /// the phone before or after the link comes up).
    private mutating func offerCachedHandles() {
        guard let address = peerAddress, let handles = gattCache.handles(for: address) else { return }
        phone.offerHandles(handles)
    }

    /// What the link learned of the phone's handles goes to its bond's
    /// record (a record proved stale is dropped).
    private mutating func keepHandles() {
        guard phone.handlesRevision != handlesRevisionSeen else { return }
        handlesRevisionSeen = phone.handlesRevision
        guard let key = cacheKey else { return }
        let learned = phone.learnedHandles
        if learned.isUsable { gattCache.store(learned, for: key) } else { gattCache.remove(key) }
    }

    /// Whose record this link's handles are: the bonded phone's identity,
    /// or the bond a pairing on this link stored (the newest).
    private var cacheKey: DeviceAddress? {
        if !controller.config.enabled { return phone.isEncrypted ? GATTCache.unixLinkPhone : nil }
        if let address = peerAddress, controller.bonds.firstIndex(of: address) != nil { return address }
        guard bondStoredOnLink, controller.bonds.count > 0 else { return nil }
        return controller.bonds[controller.bonds.count - 1].address
    }

    public var gattCacheNeedsSaving: Bool { gattCache.needsSaving }

    /// The cache file, with the bonded phones' records only.
    public func serializeGATTCache(into out: inout ByteBuffer) -> Bool {
        let unix = !controller.config.enabled
        return gattCache.serialize(into: &out) { address in
            unix ? address == GATTCache.unixLinkPhone : controller.bonds.firstIndex(of: address) != nil
        }
    }

    /// Written, or could not be: either way not tried again until the
    /// cache changes (the platform logs a failure).
    public mutating func gattCacheSaveAttempted() { gattCache.saved() }

    public mutating func linkDown<S: EventSink & ~Copyable>(reason: EndReason, now: Instant, into effects: inout Effects<S>) {
        linkFromKnownPhone = false
        if controller.config.enabled { peerAddress = nil }
        phone.linkDown(reason: reason, now: now, handler: &alerts, effects: &effects)
        if reason == .notSecured || reason == .ancsUnavailable { controller.dropConnection() }
        phoneWatch.linkEnded(now: now, excused: controller.isPairingMode || stopping || reason.endedByWearable)
        applyPatterns(now: now, into: &effects)
    }

    public mutating func receive<S: EventSink & ~Copyable>(_ pdu: borrowing ByteBuffer, now: Instant, into effects: inout Effects<S>) {
        receive(pdu.span, now: now, into: &effects)
    }

    public mutating func receive<S: EventSink & ~Copyable>(_ pdu: Span<UInt8>, now: Instant, into effects: inout Effects<S>) {
        phone.receive(pdu, now: now, handler: &alerts, effects: &effects)
        applyPatterns(now: now, into: &effects)
    }

    public mutating func securityChanged<S: EventSink & ~Copyable>(encrypted: Bool, now: Instant, into effects: inout Effects<S>) {
        if encrypted { peerWasEncrypted = true }
        phone.securityChanged(encrypted: encrypted, now: now, handler: &alerts, effects: &effects)
        phoneConnected(now: now, into: &effects)
        applyPatterns(now: now, into: &effects)
    }

    // MARK: Controller inputs

    /// Starts the controller's set-up (no-op without a controller).
    public mutating func start<S: EventSink & ~Copyable>(now: Instant, into effects: inout Effects<S>) {
        if settingsErrorAtStart { alerts.feedback(policy.settingsError, now: now) }
        controller.start(now: now)
        absorbController(now: now, into: &effects)
    }

    /// One management event from the kernel.
    public mutating func controllerPacket<S: EventSink & ~Copyable>(_ packet: borrowing ByteBuffer, now: Instant, into effects: inout Effects<S>) {
        controller.receive(packet.span, now: now)
        absorbController(now: now, into: &effects)
    }

    private mutating func absorbController<S: EventSink & ~Copyable>(now: Instant, into effects: inout Effects<S>) {
        var any = false
        while let event = controller.nextEvent() {
            any = true
            emit(.controller(event), now: now, into: &effects)
            switch event {
            case .pairingMode(let on, _):
                if on { alerts.showPairing(now: now) } else { alerts.stopPairing(now: now) }
                if on { phoneWatch.cancel() }
            case .consent, .controllerGone:
                if !controller.isPairingMode { alerts.stopPairing(now: now) }
            case .connected(bonded: true, let address):
                linkFromKnownPhone = true
                peerAddress = address
                phone.peerBonded(now: now)
                offerCachedHandles()
                phoneConnected(now: now, into: &effects)
            case .connected(bonded: false, let address):
                linkFromKnownPhone = false
                peerAddress = address
            case .bondStored:
                bondStoredOnLink = true
            default:
                break
            }
        }
        if controller.eventsDropped != controllerEventsDroppedSeen {
            controllerEventsDroppedSeen = controller.eventsDropped
            emit(.rejected(what: "controller-event", reason: "queue-full"), now: now, into: &effects)
        }
        // The one place the policy learns the controller's pairing mode
        // (it gives the pairing pattern back when a link ends): the mode
        // changes only in the controller's inputs, each absorbed here.
        alerts.pairingMode = controller.isPairingMode
        // Whatever events were lost, the pairing pattern never outlives
        // pairing mode.
        if any, !controller.isPairingMode { alerts.stopPairing(now: now) }
        applyPatterns(now: now, into: &effects)
    }

    // MARK: Button and console inputs

    public mutating func input<S: EventSink & ~Copyable>(_ input: InputEvent, now: Instant, into effects: inout Effects<S>) {
        switch input {
        case .edge(let button, let pressed, let at):
            // While a call is present (ringing, or silenced on the wrist:
            // accept still answers it) or consent is asked, a press acts at
            // its release, as it always did.
            buttons.allowStatus(phone.incomingCall == nil && !alerts.isRinging && !controller.isAwaitingConsent)
            buttons.edge(button: button, pressed: pressed, at: at)
            handleGestures(now: now, into: &effects)
        case .stop(let reason):
            stopping = true
            phoneWatch.cancel()
            emit(.stopping(reason: reason), now: now, into: &effects)
        case .rejected(let what, let reason):
            emit(.rejected(what: what, reason: reason), now: now, into: &effects)
        case .notice(let notice):
            emit(.notice(notice), now: now, into: &effects)
            alerts.feedback(policy.feedback(for: notice), now: now)
        }
        applyPatterns(now: now, into: &effects)
    }

    // MARK: Battery

    /// When the runner reads the battery next (nil: the board has none);
    /// not part of `deadline`: reading is the runner's (platform) work.
    public var batteryPollAt: Instant? { battery.nextPollAt }

    /// The battery as the platform read it at `batteryPollAt` (nil: none
    /// reads): reported, served to the phone, and its alarm played.
    public mutating func batteryRead<S: EventSink & ~Copyable>(_ reading: BatteryReading?, now: Instant, into effects: inout Effects<S>) {
        let outcome = battery.update(reading, now: now)
        if let report = outcome.report { emit(.battery(report), now: now, into: &effects) }
        if let alarm = outcome.alarm {
            emit(.battery(alarm), now: now, into: &effects)
            if case .critical = alarm { alerts.feedback(policy.batteryCritical, now: now) } else { alerts.feedback(policy.batteryLow, now: now) }
        }
        phone.battery(battery.last.map { UInt8(clamping: $0.percent) })
        applyPatterns(now: now, into: &effects)
    }

    // MARK: Time

    public var deadline: Instant? {
        let next = earliest(earliest(earliest(phone.deadline, alerts.deadline), buttons.deadline), controller.deadline)
        return earliest(earliest(next, quiet.deadline), phoneWatch.deadline)
    }

    /// `deadline`, for the loop: the same value, asked through `inout` so
    /// the 8 kB core is read in place (through the getter, the generic
    /// runner copied the whole core to a temporary on every step: about
    /// 9,000 instructions of memcpy per step, 2026-12-03).
    public mutating func nextDeadline() -> Instant? {
        let next = earliest(earliest(earliest(phone.deadline, alerts.deadline), buttons.deadline), controller.deadline)
        return earliest(earliest(next, quiet.deadline), phoneWatch.deadline)
    }

    public mutating func advance<S: EventSink & ~Copyable>(now: Instant, into effects: inout Effects<S>) {
        phone.advance(now: now, handler: &alerts, effects: &effects)
        applyPatterns(now: now, into: &effects)
        controller.advance(now: now)
        absorbController(now: now, into: &effects)
        alerts.expireRuleWaits(session: phone.session, now: now)
        applyPatterns(now: now, into: &effects)
        alerts.expireCarried(now: now)
        for _ in 0..<alerts.lastingAlertCount {
            guard let uid = alerts.nextRingLimit(now: now) else { break }
            emit(.ringLimited(uid: uid), now: now, into: &effects)
        }
        if case .lost(let buzz) = phoneWatch.advance(now: now) {
            emit(.phoneLost(true), now: now, into: &effects)
            if buzz { alerts.feedback(policy.phoneLost, now: now) }
        }
        buttons.advance(now: now)
        handleGestures(now: now, into: &effects)
        applyPatterns(now: now, into: &effects)
    }

    // MARK: Policy

    /// The wearer's state at a glance, the most pressing first: the
    /// double press plays its pattern, STATUS= says its words. A link
    /// still being brought up counts as not connected: no notification
    /// arrives yet.
    public var wearerStatus: WearerStatus {
        if settingsErrorAtStart { return .settingsError }
        if controller.isPairingMode { return .pairing }
        if battery.isLow { return .batteryLow }
        switch phone.state {
        case .live, .resubscribing: return alerts.permissionShown ? .waitingPermission : .connected
        case .waitingForPermission: return .waitingPermission
        default: return .notConnected
        }
    }

    /// Carries out what each recognised press means (ButtonRouter).
    private mutating func handleGestures<S: EventSink & ~Copyable>(now: Instant, into effects: inout Effects<S>) {
        while let press = buttons.next(awaitingConsent: controller.isAwaitingConsent, ringing: alerts.isRinging) {
            emit(.button(index: press.index, gesture: press.gesture), now: now, into: &effects)
            switch press.route {
            case .consent(let granted):
                controller.consent(granted: granted, now: now)
                absorbController(now: now, into: &effects)
            case .action(let id):
                act(id, now: now, into: &effects)
            case .silence:
                let uid = alerts.silence(now: now)
                emit(.silenced(uid: uid), now: now, into: &effects)
                if uid == nil { alerts.nothingToDo(now: now) }
            case .media(let command):
                // Queued: its end (sent, or the phone's error) is reported
                // when the phone answers.
                switch phone.requestMedia(command) {
                case .queued:
                    break
                case .notAvailable:
                    emit(.media(command: command, result: .notAvailable), now: now, into: &effects)
                    alerts.nothingToDo(now: now)
                case .busy:
                    emit(.media(command: command, result: .refused), now: now, into: &effects)
                    alerts.actionRefused(now: now)
                }
            case .pairingMode:
                controller.enterPairingMode(now: now)
                absorbController(now: now, into: &effects)
            case .status:
                alerts.feedback(policy.status[wearerStatus.rawValue], now: now)
            case .nothing:
                break
            }
        }
    }

    /// Perform Notification Action `id` on the target: the incoming call
    /// if one is present, else the most recent notification offering it.
    private mutating func act<S: EventSink & ~Copyable>(_ id: ActionID, now: Instant, into effects: inout Effects<S>) {
        let target = phone.actionTarget(for: id)
        guard let target, target.offers(id) else {
            emit(.action(uid: target?.uid ?? 0, action: id, result: .nothingToDo), now: now, into: &effects)
            alerts.nothingToDo(now: now)
            return
        }
        switch phone.performAction(uid: target.uid, id) {
        case .queued, .coalesced:
            emit(.action(uid: target.uid, action: id, result: .queued), now: now, into: &effects)
        case .refusedQueueFull:
            emit(.action(uid: target.uid, action: id, result: .refused), now: now, into: &effects)
            alerts.actionRefused(now: now)
        default:
            emit(.action(uid: target.uid, action: id, result: .nothingToDo), now: now, into: &effects)
            alerts.nothingToDo(now: now)
        }
    }

    // MARK: Outputs

    private mutating func applyPatterns<S: EventSink & ~Copyable>(now: Instant, into effects: inout Effects<S>) {
        keepHandles()
        if !phoneKnown, phone.state == .live {
            phoneKnown = true
            phoneWatch.markPhone()
        }
        if !policy.quietHours.isEmpty, let state = quiet.update(policy: policy, clock: alerts.clock, now: now) {
            emit(.quietHours(state), now: now, into: &effects)
        }
        alerts.levels(now: now, into: &changes)
        while let change = changes.popFirst() {
            let on = change.level == .on
            guard change.output < levels.count, levels[change.output] != on else { continue }
            levels[change.output] = on
            emit(.line(index: change.output, on: on), now: now, into: &effects)
        }
    }

    /// To the sink at once, with the session lent for the attribute values.
    private mutating func emit<S: EventSink & ~Copyable>(_ event: FirmwareEvent, now: Instant, into effects: inout Effects<S>) {
        effects.record(event, session: phone.session, now: now)
    }

    /// Sends the next queued Control Point command. Commands the session
    /// drops instead (reported as they go, and a reaction may queue
    /// another) are bounded inside `PhoneLink.flush`.
    public mutating func flush<S: EventSink & ~Copyable>(now: Instant, into effects: inout Effects<S>) {
        phone.flush(now: now, handler: &alerts, effects: &effects)
        applyPatterns(now: now, into: &effects)
    }

    public mutating func popOutgoing(into out: inout ByteBuffer) -> Bool { phone.popOutgoing(into: &out) }
    public mutating func popControllerCommand(into out: inout ByteBuffer) -> Bool { controller.popCommand(into: &out) }
    public var bondsNeedSaving: Bool { controller.bondsNeedSaving }
    public func serializeBonds(into out: inout ByteBuffer) -> Bool { controller.serializeBonds(into: &out) }
    public mutating func bondsSaved() { controller.bondsSaved() }
    public mutating func nextAction() -> LinkAction? { phone.nextAction() }

    /// The next output whose line differs from its level (lowest index
    /// first); nil when every line is as the policy wants it.
    public mutating func nextLineChange() -> (line: Int, on: Bool)? {
        for output in 0..<levels.count where applied[output] != levels[output] {
            applied[output] = levels[output]
            return (output, levels[output])
        }
        return nil
    }

    /// Every output off, now (shutdown): stops all patterns.
    public mutating func allOff<S: EventSink & ~Copyable>(now: Instant, into effects: inout Effects<S>) {
        alerts.allOff()
        applyPatterns(now: now, into: &effects)
    }

    public func level(of output: Int) -> Bool { levels[output] }

    /// The pattern player's refusals and evictions (for figures and tests).
    public var playerCounters: PlayerCounters { alerts.player.counters }

    /// The alert policy's counts.
    public var counters: WearableCounters { alerts.counters }

    /// Whether notification `uid` is alerting on `output`: its own pattern
    /// is stored there, or it has a lasting alert there and the output's
    /// sustained pattern is playing.
    public func isAlerting(uid: UInt32, output: Int) -> Bool { alerts.isAlerting(uid: uid, output: output) }
}
