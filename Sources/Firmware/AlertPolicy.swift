// SPDX-License-Identifier: Apache-2.0
// The alert policy: what the wearer sees and feels for each notification,
// and the wearable's own indications, on the pattern player it owns. Fed
// the link's events by WearableCore (which reports them first); reads the
// session lent with each call and asks the link for attributes. The rules
// (docs/config.md for the syntax, docs/decisions/lasting-alerts.md and
// replay-and-rule-waits.md for the reasons):
// - Added, not PreExisting: the category's alert plays on its outputs, owned
//   by the notification's UID. Important swaps in the stronger patterns;
//   Silent removes every motor output. An incoming call's alert repeats
//   until the call is Removed (answered, declined or ended on the phone).
// - Alerts that last until removed (calls) are a state of each output, not
//   one pattern per notification: every output plays the strongest lasting
//   pattern of the notifications still present (highest priority, then
//   newest) under one owner per output.
// - PreExisting never flashes or buzzes: it only updates the unread
//   indicator; every Added or Modified until `replayWindowMs` after
//   Notification Source is subscribed counts as replay too. Incoming calls
//   are never replay (one in the replay is ringing now).
// - A session that ends while the link stays up carries the lasting alerts
//   over until the new session's replay confirms them, `replayWindowMs`
//   after the new subscription (pushed on while PreExisting notifications
//   keep coming, up to `carriedRingMaxMs` after the session ended), or
//   `carriedRingMaxMs` if no subscription comes. The phone may replay a
//   call under a new UID: a replayed lasting alert takes over the carried
//   one of the same category and app (the app when both are known, from a
//   fetched AppIdentifier; the same UID, then the oldest, between equals),
//   never another app's. A link that goes down stops everything at once.
// - A lasting alert stops on the wrist, the notification staying (accept
//   still answers the call), when the wearer silences it (`silence`) or
//   after the policy's `ring-limit-ms` (60 s by default), in case the
//   phone's Removed never comes. A new call rings again.
// - Modified re-alerts only when the policy says so; Removed stops the UID's
//   patterns everywhere.
// - Rules that need attributes fetch exactly those, lazily; the alert waits
//   for them up to `ruleWaitMs`, then the category's alert plays. Once an
//   app identifier is known, the app's display name is asked for once per
//   session (events stream only).
// - Unread indicator: an output held on while the phone's count of any
//   chosen category is above zero (the session's table keeps the counts
//   from every Notification Source event, evicted UIDs included).
// - Waiting for permission: the policy's `waiting-permission` feedback plays
//   while the phone refuses a subscription for want of permission (until
//   subscribed or the link ends), and while it refuses Control Point writes
//   for it on a live link (`controlPointNotPermitted`: until
//   `controlPointPermitted` or the link ends; a resubscription on the live
//   link does not end it, since the phone may accept the CCCD and still
//   refuse the Control Point).
// - Quiet hours (`quiet` lines, by the phone's clock from CTS): an alert
//   whose category (and Important flag) the window does not allow neither
//   flashes nor buzzes, from its category's alert or a rule alike; the
//   unread indicator still shows. While the phone's time is unknown quiet
//   hours do not apply. The wearable's own feedback is not quieted.

import ANCS
import Bounded
import CTS
import Config
import Feedback
import Platform

struct AlertPolicy: LinkEventHandler, ~Copyable {
    enum Priority {
        static let unread: UInt8 = 1
        static let pairing: UInt8 = 30
        static let feedback: UInt8 = 40
    }

    struct PendingAlert {
        var uid: UInt32
        var until: Instant
    }

    /// A value per output, for every output a board may have
    /// (`BoardConfig.maxOutputs`, checked at `init`).
    typealias PerOutput<T> = InlineArray<8, T>

    /// A notification whose alert lasts until it is removed.
    struct Sustained {
        var uid: UInt32
        /// What a replay under a new UID is matched by: the category
        /// (effective) and the app (`NotificationRecord.appHash`, 0: unknown).
        var category: CategoryID
        var appHash: UInt32
        var sequence: UInt64
        var priority: UInt8
        /// The pattern index per output; -1: none. Kept small on purpose:
        /// `refreshSustained` scans every entry for every output after each
        /// call event, and an `OutputPattern?` per output made each entry
        /// ~200 bytes to copy.
        var patterns: PerOutput<Int16>
        /// Carried over from a session that ended on a live link, waiting
        /// for the new session's replay to confirm the call.
        var carried = false
        /// When the ring stops by itself (`ring-limit-ms`); nil: no limit.
        var limitAt: Instant? = nil
        /// Silenced by the wearer or past its limit: present, not playing.
        var muted = false
    }

    /// What drives an output's sustained pattern now.
    struct SustainedChoice: Equatable {
        var pattern: Int
        var priority: UInt8
    }

    let board: BoardConfig
    let policy: PolicyConfig
    let ruleWaitMs: Int64
    let replayWindowMs: Int64
    let carriedRingMaxMs: Int64
    var player: PatternPlayer
    var counters = WearableCounters()
    /// When carried lasting alerts that nothing confirmed stop...
    var carriedUntil: Instant? = nil
    /// ...and the latest a replay still under way may push that to.
    var carriedLimit = Instant.zero
    /// Until when a new notification is taken as replay; nil while the
    /// session is not subscribed (what arrives then is replay as well).
    var replayUntil: Instant? = nil
    var pending: FixedArray<PendingAlert>
    var sustained: FixedArray<Sustained>
    var sustainedNow: PerOutput<SustainedChoice?> = InlineArray(repeating: nil)
    var sustainSequence: UInt64 = 0
    var unreadShown = false
    /// The waiting-permission pattern plays, for either or both reasons:
    var permissionShown = false
    /// a subscription refused (bring-up waits for permission)...
    var subscriptionRefused = false
    /// ...or the Control Point refused on a live link.
    var controlPointRefused = false
    let motorMask: UInt64
    let steadyOn: Pattern
    /// The phone's local time, as its latest time event said.
    var clock = PhoneClock()

    init(config: WearableConfig) {
        // The fixed tables' sizes against what a board and the protocol allow.
        precondition(BoardConfig.maxOutputs <= PerOutput<Int16>.count, "per-output tables are smaller than a board may be")
        precondition(config.board.outputs.count <= BoardConfig.maxOutputs, "a board with more outputs than BoardConfig allows")
        board = config.board
        policy = config.policy
        ruleWaitMs = config.ruleWaitMs
        replayWindowMs = config.replayWindowMs
        carriedRingMaxMs = config.carriedRingMaxMs
        player = PatternPlayer(outputCount: max(1, config.board.outputs.count), patternsPerOutput: 4)
        pending = FixedArray(capacity: config.pendingAlertCapacity)
        sustained = FixedArray(capacity: config.link.session.notificationCapacity)
        var mask: UInt64 = 0
        for (i, spec) in config.board.outputs.enumerated() where spec.kind == .motor { mask |= 1 << UInt64(i) }
        motorMask = mask
        steadyOn = try! Pattern([.on(60_000)], repeats: .untilStopped)
    }

    var deadline: Instant? {
        var next = player.nextDeadline
        for i in 0..<pending.count { next = earliest(next, pending[i].until) }
        for i in 0..<sustained.count where !sustained[i].muted { next = earliest(next, sustained[i].limitAt) }
        return earliest(next, carriedUntil)
    }

    /// The controller's pairing mode, set by the core when it is built and
    /// after each controller input: a link that goes down gives the
    /// pairing pattern back.
    var pairingMode = false

    // MARK: Inputs

    /// One event of the link, in the call that caused it (the link has
    /// reported it to the sink already).
    mutating func linkEvent(_ event: LinkEvent, session: inout Session, now: Instant) {
        switch event {
        case .notification(let change):
            if case .added(let record, _) = change { replayContinues(record, now: now) }
            if case .modified(let record, _) = change { replayContinues(record, now: now) }
            switch change {
            case .added(let record, let evicted):
                if let evicted { forget(evicted.uid, now: now) }
                if !isReplay(record, now: now) { arrive(record, session: &session, now: now) }
            case .modified(let record, _):
                if policy.realertOnModified, !isReplay(record, now: now) { arrive(record, session: &session, now: now) }
            case .removed(let record):
                forget(record.uid, now: now)
            case .removedUnknown:
                break
            }
            updateUnread(session: session, now: now)
        case .command(let result):
            commandFinished(result, session: &session, now: now)
        case .time(.learned(let clock, _)):
            self.clock = clock
        case .media(.commandEnded(_, let result)):
            switch result {
            case .phoneError, .interrupted: feedback(policy.actionFailed, now: now)
            case .sent, .notAvailable, .refused: break
            }
        case .permissionWaiting:
            subscriptionRefused = true
            updatePermission(now: now)
        case .controlPointNotPermitted:
            controlPointRefused = true
            updatePermission(now: now)
        case .controlPointPermitted:
            controlPointRefused = false
            updatePermission(now: now)
        case .subscribed:
            subscriptionRefused = false
            updatePermission(now: now)
            replayUntil = now.advanced(byMs: replayWindowMs)
            if carriedUntil != nil { carriedUntil = now.advanced(byMs: replayWindowMs) }
        case .ended(let reason):
            subscriptionRefused = false
            replayUntil = nil
            pending.removeAll()
            unreadShown = false
            if reason.linkStaysUp {
                carryLastingAlerts(now: now)
                updatePermission(now: now)
                break
            }
            controlPointRefused = false
            permissionShown = false
            player.stopAll()
            clearSustained()
            if pairingMode { showPairing(now: now) }
        default:
            break
        }
    }

    mutating func commandFinished(_ result: CommandResult, session: inout Session, now: Instant) {
        switch result {
        case .attributesReceived(let uid):
            learnAppName(session: &session)
            guard let i = pending.firstIndex(where: { $0.uid == uid }) else { break }
            pending.remove(at: i)
            if let record = session.table.record(uid: uid), !applyRules(record, session: session, now: now) { alert(record, now: now) }
        case .failed(.getNotificationAttributes(let uid, _), _):
            guard let i = pending.firstIndex(where: { $0.uid == uid }) else { break }
            pending.remove(at: i)
            if let record = session.table.record(uid: uid), !applyRules(record, session: session, now: now, attributesKnown: false) {
                alert(record, now: now)
            }
        case .failed(.performNotificationAction(let uid, _), let failure):
            if case .ancs(.invalidParameter) = failure { forget(uid, now: now) }
            feedback(policy.actionFailed, now: now)
        default:
            break
        }
    }

    /// A lasting alert plays now (a call rings on the wrist): what the
    /// buttons' `ringing-` actions wait for.
    var isRinging: Bool {
        sustained.firstIndex(where: { entry in !entry.muted && (0..<board.outputs.count).contains { entry.patterns[$0] >= 0 } }) != nil
    }

    /// Silences every lasting alert playing now; the notifications stay.
    /// Returns the newest one's UID, nil if none was playing.
    mutating func silence(now: Instant) -> UInt32? {
        var newest: Int? = nil
        for i in 0..<sustained.count where !sustained[i].muted {
            sustained[i].muted = true
            if newest.map({ sustained[i].sequence > sustained[$0].sequence }) ?? true { newest = i }
        }
        guard let newest else { return nil }
        let uid = sustained[newest].uid
        refreshSustained(now: now)
        return uid
    }

    /// The next lasting alert past its `ring-limit-ms`, stopped on the
    /// wrist: its UID, nil when none is due. Each call stops one.
    mutating func nextRingLimit(now: Instant) -> UInt32? {
        guard let i = sustained.firstIndex(where: { !$0.muted && ($0.limitAt.map { $0 <= now } ?? false) }) else { return nil }
        sustained[i].muted = true
        let uid = sustained[i].uid
        refreshSustained(now: now)
        return uid
    }

    /// How many lasting alerts are held (the bound of a `nextRingLimit` loop).
    var lastingAlertCount: Int { sustained.count }

    /// Carried rings nothing confirmed stop.
    mutating func expireCarried(now: Instant) {
        if let until = carriedUntil, now >= until { dropCarried(now: now) }
    }

    /// A press found nothing to do (counted).
    mutating func nothingToDo(now: Instant) {
        counters.nothingToDo &+= 1
        feedback(policy.nothingToDo, now: now)
    }

    /// The action queue was full.
    mutating func actionRefused(now: Instant) { feedback(policy.actionFailed, now: now) }

    /// The pairing pattern, while pairing mode is on.
    mutating func showPairing(now: Instant) {
        feedback(policy.pairing, owner: .pairing, priority: Priority.pairing, untilStopped: true, now: now)
    }

    mutating func stopPairing(now: Instant) { player.stop(owner: .pairing, now: now) }

    /// Each output's level changes due by `now`.
    mutating func levels(now: Instant, into changes: inout RingBuffer<OutputChange>) {
        player.advance(now: now, into: &changes)
    }

    /// Every pattern stopped (shutdown).
    mutating func allOff() {
        player.stopAll()
        clearSustained()
    }

    /// Whether notification `uid` is alerting on `output`: its own pattern
    /// is stored there, or it has a lasting alert there and the output's
    /// sustained pattern is playing.
    func isAlerting(uid: UInt32, output: Int) -> Bool {
        if player.holds(owner: .notification(uid), output: output) { return true }
        guard output < board.outputs.count, let i = sustained.firstIndex(where: { $0.uid == uid }), sustained[i].patterns[output] >= 0,
            !sustained[i].muted
        else { return false }
        return player.holds(owner: .lasting(output: output), output: output)
    }

}
