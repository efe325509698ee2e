// The wearable as one sans-IO value: the phone link, and around it what the
// wearer sees, feels and presses (policy, patterns, buttons). Inputs come
// from the runner with its `Effects`: events go to the sink as they happen;
// PDUs, management commands, link actions and line changes wait in the
// bounded places that own them until the runner settles.
//
// Alert policy (configured by board/policy.conf, see docs/config.md):
// - Added, not PreExisting: the category's alert plays on its outputs, owned
//   by the notification's UID. Important swaps in the stronger patterns;
//   Silent removes every motor output. An incoming call's alert repeats
//   until the call is Removed (answered, declined or ended on the phone).
// - Alerts that last until removed ("sustained": calls) are a state of each
//   output, not one pattern per notification: every output plays the
//   strongest sustained pattern of the notifications still present (highest
//   priority, then newest) under one owner per output. So however many calls
//   are active, each output needs one pattern slot, and when the newest call
//   ends the older one's ring carries on.
// - PreExisting (the replay at session start) never flashes or buzzes: it
//   only updates the unread indicator. Real iPhones sometimes replay without
//   the flag for a few seconds, so every Added or Modified until
//   `replayWindowMs` (3 s) after Notification Source is subscribed counts as
//   replay too. Replay fetches no attributes; the table keeps the newest when
//   a replay of hundreds overflows it (counted, see NotificationTable).
// - Incoming calls are never replay: an IncomingCall notification exists
//   only while the call rings, so one in the replay (the wearable connected,
//   restarted or resubscribed mid-call) is a call ringing now, and rings.
// - A session that ends while the link stays up (Service Changed, a
//   resubscription) does not interrupt a ring: the lasting alerts are
//   carried over, and each call the new session's replay brings takes one
//   over in place (same UID, else the oldest carried), so the pattern plays
//   on without a gap. What the replay does not confirm stops
//   `replayWindowMs` after the new subscription, or `carriedRingMaxMs` after
//   the end if no subscription comes. A link that goes down stops
//   everything at once.
// - Modified re-alerts only when the policy says so; Removed stops the UID's
//   patterns everywhere.
// - App names: once a rule has fetched a notification's app identifier, the
//   app's display name is asked for (cached per session) for the events
//   stream; nothing waits for it.
// - Rules that need attributes (app identifier, title) fetch exactly those,
//   lazily, when a notification that could alert arrives. Its alert waits
//   for them (up to `ruleWaitMs`, default 1.5 s; the phone usually answers
//   in tens of ms) so that a rule that silences an app never lets it buzz
//   first. The first matching rule replaces the category's alert; with no
//   match, or no answer in time, the category's alert plays.
// - Unread indicator: an output held on while the CategoryCount of any chosen
//   category is above zero.
// Waiting for permission: while the phone refuses the subscription because
// the user has not allowed notification sharing yet, the policy's
// `waiting-permission` feedback plays (until subscribed or the link ends).
// Pairing (Controller): while a pairing request waits for consent, the
// accept button grants it and reject refuses it (one-button boards: short =
// grant, long = refuse); a long press of both buttons opens pairing mode; the
// pairing pattern plays while pairing mode is on.
// Buttons: a gesture maps to an action (positive/negative) on the target:
// the incoming call if one is present, else the most recent notification
// offering that action. No target, or the target does not offer it: no
// command, a short "nothing to do" buzz. 0xA2 and 0xA3 play the failure
// pattern; Perform Notification Action has no Data Source answer, so
// nothing waits for one.

import ANCS
import Bounded
import Config
import Feedback
import Mgmt
import Platform

/// Everything observable that happened, for the events stream and the log.
public enum FirmwareEvent: Equatable, Sendable {
    case link(LinkEvent)
    case controller(ControllerEvent)
    case line(index: Int, on: Bool)
    case button(index: Int, gesture: GestureKind)
    case action(uid: UInt32, action: ActionID, result: ActionResult)
    case rejected(what: Name, reason: Name)
    case stopping(reason: Name)
    /// The bond file could not be written (or the bonds not serialised);
    /// they stay marked unsaved and are written again in `retryInMs`.
    case bondsNotSaved(retryInMs: Int64)
}

/// A button gesture as the events report it (`index` -1: both buttons).
public enum GestureKind: Equatable, Sendable {
    case short, long, double, chordLong
}

/// What became of a press meant as a Perform Notification Action.
public enum ActionResult: Equatable, Sendable {
    /// Queued for the Control Point (or merged with the same queued action).
    case queued
    /// The phone acknowledged the write.
    case sent
    /// The action queue was full.
    case refused
    /// No target, or the target does not offer the action.
    case nothingToDo
    /// The phone refused it, or it timed out or could not be written.
    case failed(CommandFailure)
}

public struct WearableConfig: Sendable {
    public var link = PhoneLinkConfig()
    public var controller = ControllerConfig()
    public var board: BoardConfig
    public var policy: PolicyConfig
    /// How long an alert waits for the attributes its rules need.
    public var ruleWaitMs: Int64 = 1_500
    /// After subscribing, how long notifications without PreExisting are
    /// still taken as the phone's replay (incoming calls excepted).
    public var replayWindowMs: Int64 = 3_000
    /// How long a ring carried over a session restart on a live link lasts
    /// if no new subscription confirms it.
    public var carriedRingMaxMs: Int64 = 10_000
    public var pendingAlertCapacity = 8
    /// The board or policy file given had an error and the shipped
    /// defaults run instead: `start` plays the policy's settings-error
    /// feedback once, so a wearer who edited the card sees it.
    public var settingsError = false

    public init(board: BoardConfig, policy: PolicyConfig) {
        self.board = board
        self.policy = policy
    }
}

public struct WearableCounters: Equatable, Sendable {
    public var patternsRefused: UInt64 = 0
    public var nothingToDo: UInt64 = 0
    /// Alerts played without waiting because the pending table was full.
    public var pendingAlertsOverflowed: UInt64 = 0
    /// Alerts played with the category default because attributes came late.
    public var ruleWaitsExpired: UInt64 = 0
    /// Notifications without PreExisting taken as replay (no alert, no fetch)
    /// because they came within `replayWindowMs` of subscribing.
    public var unflaggedReplays: UInt64 = 0
    public init() {}
}

public struct WearableCore: ~Copyable {
    enum Priority {
        static let unread: UInt8 = 1
        static let pairing: UInt8 = 30
        static let feedback: UInt8 = 40
    }

    struct PendingAlert {
        var uid: UInt32
        var until: Instant
    }

    /// A notification whose alert lasts until it is removed.
    /// A value per output, for every output a board may have
    /// (`BoardConfig.maxOutputs`, checked at `init`).
    typealias PerOutput<T> = InlineArray<8, T>
    /// A value per defined category (reserved ones count as Other),
    /// checked at `init`.
    typealias PerCategory<T> = InlineArray<12, T>

    struct Sustained {
        var uid: UInt32
        var sequence: UInt64
        var priority: UInt8
        /// The pattern index per output (outputs 0..<8); -1: none. Kept
        /// small on purpose: `refreshSustained` scans every entry for every
        /// output after each call event, and an `OutputPattern?` per output
        /// made each entry ~200 bytes to copy.
        var patterns: PerOutput<Int16>
        /// Carried over from a session that ended on a live link, waiting
        /// for the new session's replay to confirm the call.
        var carried = false
    }

    /// What drives an output's sustained pattern now.
    struct SustainedChoice: Equatable {
        var pattern: Int
        var priority: UInt8
    }

    public let board: BoardConfig
    public let policy: PolicyConfig
    public let ruleWaitMs: Int64
    public let replayWindowMs: Int64
    public let carriedRingMaxMs: Int64
    /// Play the settings-error feedback at start (`WearableConfig.settingsError`).
    private let settingsErrorAtStart: Bool
    /// When carried lasting alerts that nothing confirmed stop.
    private var carriedUntil: Instant? = nil
    /// Until when a new notification is taken as replay; nil while the
    /// session is not subscribed (what arrives then is replay as well).
    private var replayUntil: Instant? = nil
    public private(set) var phone: PhoneLink
    public private(set) var controller: Controller
    private var pending: FixedArray<PendingAlert>
    private var sustained: FixedArray<Sustained>
    private var sustainedNow: PerOutput<SustainedChoice?> = InlineArray(repeating: nil)
    private var sustainSequence: UInt64 = 0
    public private(set) var counters = WearableCounters()
    private var controllerEventsDroppedSeen: UInt64 = 0
    private var player: PatternPlayer
    private var gestures: ButtonGestures
    private var changes: RingBuffer<OutputChange>
    private var gestureEvents: RingBuffer<GestureEvent>
    /// Each output's level as the policy drives it (what events report)...
    private var levels: FixedArray<Bool>
    /// ...and as the platform was last told: a difference is a line change
    /// still to apply, so none can be lost to a full queue.
    private var applied: FixedArray<Bool>
    private var categoryCounts: PerCategory<UInt8>
    private var unreadShown = false
    private var permissionShown = false
    /// A link was encrypted before (the bond, when there is no controller).
    private var peerWasEncrypted = false
    private let motorMask: UInt64
    /// The button named `reject` (its role), found once.
    private let rejectButton: Int?
    private let steadyOn: Pattern

    public init(config: WearableConfig, bonds: consuming BondStore = BondStore()) {
        // The fixed tables' sizes against what a board and the protocol allow.
        precondition(BoardConfig.maxOutputs <= PerOutput<Int16>.count, "per-output tables are smaller than a board may be")
        precondition(config.board.outputs.count <= BoardConfig.maxOutputs, "a board with more outputs than BoardConfig allows")
        precondition(CategoryID.knownCount <= PerCategory<UInt8>.count, "a category without a count slot")
        board = config.board
        policy = config.policy
        ruleWaitMs = config.ruleWaitMs
        replayWindowMs = config.replayWindowMs
        carriedRingMaxMs = config.carriedRingMaxMs
        settingsErrorAtStart = config.settingsError
        phone = PhoneLink(config: config.link)
        controller = Controller(config: config.controller, bonds: bonds)
        pending = FixedArray(capacity: config.pendingAlertCapacity)
        sustained = FixedArray(capacity: config.link.session.notificationCapacity)
        let outputs = max(1, config.board.outputs.count)
        player = PatternPlayer(outputCount: outputs, patternsPerOutput: 4)
        var gestureConfig = config.board.gestures
        if let a = config.board.buttonIndex(named: "accept"), let r = config.board.buttonIndex(named: "reject") {
            gestureConfig.chord = ButtonChord(a, r)
        }
        gestures = ButtonGestures(buttonCount: max(1, config.board.buttons.count), config: gestureConfig)
        // No double-press actions are configured, so a short press is
        // reported at release instead of after the double-press gap.
        for b in 0..<config.board.buttons.count { gestures.setDoublePress(enabled: false, button: b) }
        changes = RingBuffer(capacity: 2 * outputs, policy: .refuseNewest)
        gestureEvents = RingBuffer(capacity: 8, policy: .refuseNewest)
        levels = FixedArray(capacity: outputs)
        applied = FixedArray(capacity: outputs)
        for _ in 0..<outputs {
            levels.append(false)
            applied.append(false)
        }
        categoryCounts = InlineArray(repeating: 0)
        var mask: UInt64 = 0
        for (i, spec) in config.board.outputs.enumerated() where spec.kind == .motor { mask |= 1 << UInt64(i) }
        motorMask = mask
        rejectButton = config.board.buttonIndex(named: "reject")
        steadyOn = try! Pattern([.on(60_000)], repeats: .untilStopped)
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
        phone.linkUp(now: now, bonded: bonded)
        absorb(now: now, into: &effects)
    }

    public mutating func linkDown<S: EventSink & ~Copyable>(reason: EndReason, now: Instant, into effects: inout Effects<S>) {
        phone.linkDown(reason: reason)
        absorb(now: now, into: &effects)
    }

    public mutating func receive<S: EventSink & ~Copyable>(_ pdu: borrowing ByteBuffer, now: Instant, into effects: inout Effects<S>) {
        receive(pdu.span, now: now, into: &effects)
    }

    public mutating func receive<S: EventSink & ~Copyable>(_ pdu: Span<UInt8>, now: Instant, into effects: inout Effects<S>) {
        phone.receive(pdu, now: now)
        absorb(now: now, into: &effects)
    }

    public mutating func securityChanged<S: EventSink & ~Copyable>(encrypted: Bool, now: Instant, into effects: inout Effects<S>) {
        if encrypted { peerWasEncrypted = true }
        phone.securityChanged(encrypted: encrypted, now: now)
        absorb(now: now, into: &effects)
    }

    // MARK: Controller inputs

    /// Starts the controller's set-up (no-op without a controller).
    public mutating func start<S: EventSink & ~Copyable>(now: Instant, into effects: inout Effects<S>) {
        if settingsErrorAtStart { feedback(policy.settingsError, now: now) }
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
                if on {
                    feedback(policy.pairing, owner: .pairing, priority: Priority.pairing, untilStopped: true, now: now)
                } else {
                    player.stop(owner: .pairing, now: now)
                }
            case .consent, .controllerGone:
                if !controller.isPairingMode { player.stop(owner: .pairing, now: now) }
            case .connected(bonded: true, _):
                phone.peerBonded(now: now)
            default:
                break
            }
        }
        if controller.eventsDropped != controllerEventsDroppedSeen {
            controllerEventsDroppedSeen = controller.eventsDropped
            emit(.rejected(what: "controller-event", reason: "queue-full"), now: now, into: &effects)
        }
        // Whatever events were lost, the pairing pattern never outlives
        // pairing mode.
        if any, !controller.isPairingMode { player.stop(owner: .pairing, now: now) }
        applyPatterns(now: now, into: &effects)
    }

    // MARK: Button and console inputs

    public mutating func input<S: EventSink & ~Copyable>(_ input: InputEvent, now: Instant, into effects: inout Effects<S>) {
        switch input {
        case .edge(let button, let pressed, let at):
            guard button >= 0, button < board.buttons.count else { return }
            gestures.edge(button: button, pressed: pressed, at: at, into: &gestureEvents)
            handleGestures(now: now, into: &effects)
        case .stop(let reason):
            emit(.stopping(reason: reason), now: now, into: &effects)
        case .rejected(let what, let reason):
            emit(.rejected(what: what, reason: reason), now: now, into: &effects)
        }
        applyPatterns(now: now, into: &effects)
    }

    // MARK: Time

    public var deadline: Instant? {
        var next = earliest(earliest(phone.deadline, player.nextDeadline), gestures.nextDeadline)
        next = earliest(next, controller.deadline)
        for i in 0..<pending.count { next = earliest(next, pending[i].until) }
        return earliest(next, carriedUntil)
    }

    public mutating func advance<S: EventSink & ~Copyable>(now: Instant, into effects: inout Effects<S>) {
        phone.advance(now: now)
        absorb(now: now, into: &effects)
        controller.advance(now: now)
        absorbController(now: now, into: &effects)
        expirePending(now: now, into: &effects)
        if let until = carriedUntil, now >= until { dropCarried(now: now) }
        gestures.advance(now: now, into: &gestureEvents)
        handleGestures(now: now, into: &effects)
        applyPatterns(now: now, into: &effects)
    }

    // MARK: Policy

    /// The link's events since the last call: each to the sink, then to
    /// the policy. True if there were any.
    @discardableResult
    private mutating func absorb<S: EventSink & ~Copyable>(now: Instant, into effects: inout Effects<S>) -> Bool {
        var any = false
        while let event = phone.nextEvent() {
            any = true
            emit(.link(event), now: now, into: &effects)
            react(to: event, now: now, into: &effects)
        }
        applyPatterns(now: now, into: &effects)
        return any
    }

    private mutating func react<S: EventSink & ~Copyable>(to event: LinkEvent, now: Instant, into effects: inout Effects<S>) {
        switch event {
        case .notification(let change):
            switch change {
            case .added(let record, let evicted):
                if let evicted { forget(evicted.uid, now: now) }
                count(record)
                if !isReplay(record, now: now) { arrive(record, now: now) }
            case .modified(let record, _):
                count(record)
                if policy.realertOnModified, !isReplay(record, now: now) { arrive(record, now: now) }
            case .removed(let record):
                count(record)
                forget(record.uid, now: now)
            case .removedUnknown:
                break
            }
            updateUnread(now: now)
        case .command(let result):
            commandFinished(result, now: now, into: &effects)
        case .permissionWaiting:
            if !permissionShown {
                permissionShown = true
                feedback(policy.waitingPermission, owner: .permission, priority: Priority.pairing, untilStopped: true, now: now)
            }
        case .subscribed:
            permissionShown = false
            player.stop(owner: .permission, now: now)
            replayUntil = now.advanced(byMs: replayWindowMs)
            if carriedUntil != nil { carriedUntil = now.advanced(byMs: replayWindowMs) }
        case .ended:
            permissionShown = false
            replayUntil = nil
            pending.removeAll()
            categoryCounts = InlineArray(repeating: 0)
            unreadShown = false
            if phone.state != .disconnected {
                carryLastingAlerts(now: now)
                break
            }
            player.stopAll()
            clearSustained()
            if controller.isPairingMode {
                feedback(policy.pairing, owner: .pairing, priority: Priority.pairing, untilStopped: true, now: now)
            }
        default:
            break
        }
    }

    /// Whether `record` is part of the session-start replay: not a call (a
    /// call in the replay is ringing now), and flagged PreExisting or
    /// arriving before the replay window closed (counted in
    /// `unflaggedReplays`: only the window said so).
    private mutating func isReplay(_ record: NotificationRecord, now: Instant) -> Bool {
        if record.isIncomingCall { return false }
        if record.flags.contains(.preExisting) { return true }
        if let until = replayUntil, now >= until { return false }
        counters.unflaggedReplays &+= 1
        return true
    }

    private mutating func count(_ record: NotificationRecord) {
        let c = Int(record.category.effective.rawValue)
        categoryCounts[c] = record.categoryCount
    }

    /// A notification that may alert: now, or once the attributes its
    /// rules need have arrived.
    private mutating func arrive(_ record: NotificationRecord, now: Instant) {
        let needed = policy.attributesNeeded(for: record.category)
        if needed.isEmpty {
            if !applyRules(record, now: now) { alert(record, now: now) }
            return
        }
        switch phone.requestAttributes(uid: record.uid, needed) {
        case .queued, .coalesced:
            if let i = pending.firstIndex(where: { $0.uid == record.uid }) { pending.remove(at: i) }
            if pending.append(PendingAlert(uid: record.uid, until: now.advanced(byMs: ruleWaitMs))) { return }
            counters.pendingAlertsOverflowed &+= 1
        default:
            break
        }
        alert(record, now: now)
    }

    private mutating func forget(_ uid: UInt32, now: Instant) {
        if let i = pending.firstIndex(where: { $0.uid == uid }) { pending.remove(at: i) }
        player.stop(owner: .notification(uid), now: now)
        if let i = sustained.firstIndex(where: { $0.uid == uid }) {
            sustained.remove(at: i)
            refreshSustained(now: now)
        }
    }

    /// Registers `uid`'s lasting alert and lets each output play the
    /// strongest one.
    private mutating func sustain(_ uid: UInt32, _ choices: [OutputPattern], priority: UInt8, silent: Bool, now: Instant) {
        if let i = sustained.firstIndex(where: { $0.uid == uid }) {
            sustained.remove(at: i)
        } else if let i = sustained.firstIndex(where: { $0.carried }) {
            // The replay confirms a carried ring (the phone may number the
            // new session's UIDs anew): this call takes it over.
            sustained.remove(at: i)
        }
        if carriedUntil != nil, sustained.firstIndex(where: { $0.carried }) == nil { carriedUntil = nil }
        var entry = Sustained(uid: uid, sequence: sustainSequence, priority: priority, patterns: InlineArray(repeating: -1))
        sustainSequence &+= 1
        for choice in choices where choice.output < board.outputs.count && choice.pattern < policy.patterns.count {
            if silent && motorMask & (1 << UInt64(choice.output)) != 0 { continue }
            entry.patterns[choice.output] = Int16(choice.pattern)
        }
        if sustained.isFull { sustained.remove(at: 0) }
        sustained.append(entry)
        refreshSustained(now: now)
    }

    private mutating func refreshSustained(now: Instant) {
        for output in 0..<board.outputs.count {
            var best = -1
            for i in 0..<sustained.count where sustained[i].patterns[output] >= 0 {
                if best >= 0, (sustained[best].priority, sustained[best].sequence) > (sustained[i].priority, sustained[i].sequence) { continue }
                best = i
            }
            let choice = best < 0 ? nil : SustainedChoice(pattern: Int(sustained[best].patterns[output]), priority: sustained[best].priority)
            guard choice != sustainedNow[output] else { continue }
            sustainedNow[output] = choice
            if let choice {
                let outcome = player.play(
                    policy.patterns[choice.pattern].pattern, output: output, priority: choice.priority, owner: .lasting(output: output),
                    onPreempt: .resume, now: now)
                if outcome == .refusedFull { counters.patternsRefused &+= 1 }
            } else {
                player.stop(owner: .lasting(output: output), now: now)
            }
        }
    }

    private mutating func clearSustained() {
        sustained.removeAll()
        sustainedNow = InlineArray(repeating: nil)
        carriedUntil = nil
    }

    /// The session ended on a live link: every pattern of its notifications
    /// stops but the lasting alerts, which play on until the new session
    /// confirms or drops them.
    private mutating func carryLastingAlerts(now: Instant) {
        player.stop(ownersWhere: { $0.isNotification || $0 == .unread || $0 == .permission }, now: now)
        guard !sustained.isEmpty else { return }
        for i in 0..<sustained.count { sustained[i].carried = true }
        carriedUntil = now.advanced(byMs: carriedRingMaxMs)
    }

    /// Stops the carried lasting alerts no replayed call took over.
    private mutating func dropCarried(now: Instant) {
        carriedUntil = nil
        var i = 0
        while i < sustained.count {
            if sustained[i].carried { sustained.remove(at: i) } else { i += 1 }
        }
        refreshSustained(now: now)
    }

    private mutating func expirePending<S: EventSink & ~Copyable>(now: Instant, into effects: inout Effects<S>) {
        while let i = pending.firstIndex(where: { $0.until <= now }) {
            let uid = pending.remove(at: i).uid
            counters.ruleWaitsExpired &+= 1
            if let record = phone.session.table.record(uid: uid) {
                if !applyRules(record, now: now, attributesKnown: false) { alert(record, now: now) }
            }
        }
        applyPatterns(now: now, into: &effects)
    }

    private mutating func alert(_ record: NotificationRecord, now: Instant) {
        let alert = policy.alert(for: record.category)
        let outputs = record.flags.contains(.important) ? alert.importantOutputs : alert.outputs
        sound(record, outputs, priority: alert.priority, untilRemoved: alert.untilRemoved, now: now)
    }

    /// Plays `outputs` for `record`: as its lasting alert when the category
    /// alerts until removed, else once; Silent leaves out the motors.
    private mutating func sound(_ record: NotificationRecord, _ outputs: [OutputPattern], priority: UInt8, untilRemoved: Bool, now: Instant) {
        let silent = record.flags.contains(.silent)
        if untilRemoved {
            sustain(record.uid, outputs, priority: priority, silent: silent, now: now)
            return
        }
        for choice in outputs {
            play(choice, owner: .notification(record.uid), priority: priority, untilRemoved: false, silent: silent, now: now)
        }
    }

    private mutating func play(_ choice: OutputPattern, owner: PatternOwner, priority: UInt8, untilRemoved: Bool, silent: Bool, now: Instant) {
        guard choice.output < board.outputs.count, choice.pattern < policy.patterns.count else { return }
        if silent && motorMask & (1 << UInt64(choice.output)) != 0 { return }
        let outcome = player.play(
            policy.patterns[choice.pattern].pattern, output: choice.output, priority: priority, owner: owner,
            onPreempt: untilRemoved ? .resume : .end, now: now)
        if outcome == .refusedFull { counters.patternsRefused &+= 1 }
    }

    private mutating func feedback(
        _ list: [OutputPattern], owner: PatternOwner = .feedback, priority: UInt8 = Priority.feedback, untilStopped: Bool = false,
        now: Instant
    ) {
        for choice in list {
            play(choice, owner: owner, priority: priority, untilRemoved: untilStopped, silent: false, now: now)
        }
    }

    /// Plays the first matching rule instead of the category's alert;
    /// false when none matches. `attributesKnown` false: only rules that
    /// need no attributes can match.
    private mutating func applyRules(_ record: NotificationRecord, now: Instant, attributesKnown: Bool = true) -> Bool {
        let category = record.category.effective
        for rule in policy.rules {
            if let c = rule.category, c != category { continue }
            if rule.app != nil || rule.titleContains != nil {
                guard attributesKnown, phone.session.table.record(uid: record.uid)?.attributesKnown.isEmpty == false else { continue }
            }
            if let app = rule.app {
                let matches = phone.session.attributeValue(.appIdentifier).elementsEqual(utf8Of: app)
                if !matches { continue }
            }
            if let title = rule.titleContains {
                let matches = phone.session.attributeValue(.title).contains(utf8Of: title)
                if !matches { continue }
            }
            let alert = policy.alert(for: record.category)
            forget(record.uid, now: now)
            sound(record, rule.outputs, priority: rule.priority ?? alert.priority, untilRemoved: alert.untilRemoved, now: now)
            return true
        }
        return false
    }

    private mutating func updateUnread(now: Instant) {
        guard let unread = policy.unread else { return }
        var any = false
        for c in 0..<PerCategory<UInt8>.count where unread.categories & (1 << UInt16(c)) != 0 && categoryCounts[c] > 0 { any = true }
        guard any != unreadShown else { return }
        unreadShown = any
        if any {
            player.play(steadyOn, output: unread.output, priority: Priority.unread, owner: .unread, onPreempt: .resume, now: now)
        } else {
            player.stop(owner: .unread, now: now)
        }
    }

    private mutating func commandFinished<S: EventSink & ~Copyable>(_ result: CommandResult, now: Instant, into effects: inout Effects<S>) {
        switch result {
        case .actionDelivered(let uid, let action):
            emit(.action(uid: uid, action: action, result: .sent), now: now, into: &effects)
        case .attributesReceived(let uid):
            learnAppName()
            guard let i = pending.firstIndex(where: { $0.uid == uid }) else { break }
            pending.remove(at: i)
            if let record = phone.session.table.record(uid: uid), !applyRules(record, now: now) { alert(record, now: now) }
        case .failed(.getNotificationAttributes(let uid, _), _):
            guard let i = pending.firstIndex(where: { $0.uid == uid }) else { break }
            pending.remove(at: i)
            if let record = phone.session.table.record(uid: uid), !applyRules(record, now: now, attributesKnown: false) {
                alert(record, now: now)
            }
        case .failed(.performNotificationAction(let uid, let action), let failure):
            emit(.action(uid: uid, action: action, result: .failed(failure)), now: now, into: &effects)
            if case .ancs(.invalidParameter) = failure { forget(uid, now: now) }
            feedback(policy.actionFailed, now: now)
        default:
            break
        }
    }

    /// Once a notification's app identifier is known (a rule fetched it),
    /// asks the phone for the app's display name for the events stream: once
    /// per session (the session caches names), and no alert waits for it.
    /// At MTU 23 the command can exceed one write (`com.apple.mobilephone`
    /// makes 24 bytes); the link sends it as a long write.
    private mutating func learnAppName() {
        guard phone.session.attributeReceived(.appIdentifier), !phone.session.attributeTruncated(.appIdentifier) else { return }
        var app = AppIdentifier()
        app.append(phone.session.attributeValue(.appIdentifier))
        guard app.count > 0 else { return }
        _ = phone.requestAppName(app)
    }

    // MARK: Buttons

    private mutating func handleGestures<S: EventSink & ~Copyable>(now: Instant, into effects: inout Effects<S>) {
        while let event = gestureEvents.popFirst() {
            switch event.gesture {
            case .short(let b):
                emit(.button(index: b, gesture: .short), now: now, into: &effects)
                if controller.isAwaitingConsent {
                    controller.consent(granted: consentAnswer(button: b, long: false), now: now)
                    absorbController(now: now, into: &effects)
                } else {
                    act(b < policy.shortPress.count ? policy.shortPress[b] : .none, now: now, into: &effects)
                }
            case .long(let b):
                emit(.button(index: b, gesture: .long), now: now, into: &effects)
                if controller.isAwaitingConsent {
                    controller.consent(granted: consentAnswer(button: b, long: true), now: now)
                    absorbController(now: now, into: &effects)
                } else {
                    act(b < policy.longPress.count ? policy.longPress[b] : .none, now: now, into: &effects)
                }
            case .double(let b):
                emit(.button(index: b, gesture: .double), now: now, into: &effects)
            case .chordLong:
                emit(.button(index: -1, gesture: .chordLong), now: now, into: &effects)
                controller.enterPairingMode(now: now)
                absorbController(now: now, into: &effects)
            }
        }
    }

    /// Accept grants, reject refuses; on a one-button board short grants
    /// and long refuses.
    private func consentAnswer(button: Int, long: Bool) -> Bool {
        if board.buttons.count == 1 { return !long }
        return button != rejectButton && !long
    }

    private mutating func act<S: EventSink & ~Copyable>(_ action: ButtonAction, now: Instant, into effects: inout Effects<S>) {
        let id: ActionID
        switch action {
        case .positive: id = .positive
        case .negative: id = .negative
        case .none: return
        }
        let call = phone.session.table.mostRecent { $0.isIncomingCall }
        let target = call ?? phone.session.table.mostRecent { $0.offers(id) }
        guard let target, target.offers(id) else {
            counters.nothingToDo &+= 1
            emit(.action(uid: target?.uid ?? 0, action: id, result: .nothingToDo), now: now, into: &effects)
            feedback(policy.nothingToDo, now: now)
            return
        }
        switch phone.performAction(uid: target.uid, id) {
        case .queued, .coalesced:
            emit(.action(uid: target.uid, action: id, result: .queued), now: now, into: &effects)
        case .refusedQueueFull:
            emit(.action(uid: target.uid, action: id, result: .refused), now: now, into: &effects)
            feedback(policy.actionFailed, now: now)
        default:
            counters.nothingToDo &+= 1
            emit(.action(uid: target.uid, action: id, result: .nothingToDo), now: now, into: &effects)
            feedback(policy.nothingToDo, now: now)
        }
    }

    // MARK: Outputs

    private mutating func applyPatterns<S: EventSink & ~Copyable>(now: Instant, into effects: inout Effects<S>) {
        player.advance(now: now, into: &changes)
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

    /// Sends queued Control Point commands; call once the input's events
    /// are out (a command sent here replaces the last attribute values).
    /// Each round either sends a command or reports one dropped, whose
    /// reaction may queue another: four rounds at most.
    public mutating func flush<S: EventSink & ~Copyable>(now: Instant, into effects: inout Effects<S>) {
        for _ in 0..<4 {
            phone.flush(now: now)
            if !absorb(now: now, into: &effects) { break }
        }
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
        player.stopAll()
        clearSustained()
        applyPatterns(now: now, into: &effects)
    }

    public func level(of output: Int) -> Bool { levels[output] }

    /// The pattern player's refusals and evictions (for figures and tests).
    public var playerCounters: PlayerCounters { player.counters }

    /// Whether notification `uid` is alerting on `output`: its own pattern
    /// is stored there, or it has a lasting alert there and the output's
    /// sustained pattern is playing.
    public func isAlerting(uid: UInt32, output: Int) -> Bool {
        if player.holds(owner: .notification(uid), output: output) { return true }
        guard output < board.outputs.count, let i = sustained.firstIndex(where: { $0.uid == uid }), sustained[i].patterns[output] >= 0 else { return false }
        return player.holds(owner: .lasting(output: output), output: output)
    }
}
