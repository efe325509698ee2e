// SPDX-License-Identifier: Apache-2.0
// The alert policy: what the wearer sees and feels for each notification,
// and the wearable's own indications, on the pattern player it owns. Fed
// the link's events by WearableCore (which reports them first); reads the
// session lent with each call and asks the link for attributes. The rules
// (docs/config.md for the syntax, docs/architecture.md "Alerts" for the
// reasons):
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
    private(set) var player: PatternPlayer
    private(set) var counters = WearableCounters()
    /// When carried lasting alerts that nothing confirmed stop...
    private var carriedUntil: Instant? = nil
    /// ...and the latest a replay still under way may push that to.
    private var carriedLimit = Instant.zero
    /// Until when a new notification is taken as replay; nil while the
    /// session is not subscribed (what arrives then is replay as well).
    private var replayUntil: Instant? = nil
    private var pending: FixedArray<PendingAlert>
    private var sustained: FixedArray<Sustained>
    private var sustainedNow: PerOutput<SustainedChoice?> = InlineArray(repeating: nil)
    private var sustainSequence: UInt64 = 0
    private var unreadShown = false
    /// The waiting-permission pattern plays, for either or both reasons:
    private var permissionShown = false
    /// a subscription refused (bring-up waits for permission)...
    private var subscriptionRefused = false
    /// ...or the Control Point refused on a live link.
    private var controlPointRefused = false
    private let motorMask: UInt64
    private let steadyOn: Pattern
    /// The phone's local time, as its latest time event said.
    private(set) var clock = PhoneClock()

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

    private mutating func commandFinished(_ result: CommandResult, session: inout Session, now: Instant) {
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

    // MARK: Policy

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

    /// A notification that may alert: now, or once the attributes its
    /// rules need have arrived.
    private mutating func arrive(_ record: NotificationRecord, session: inout Session, now: Instant) {
        let needed = policy.attributesNeeded(for: record.category)
        if needed.isEmpty {
            if !applyRules(record, session: session, now: now) { alert(record, now: now) }
            return
        }
        switch session.fetchAttributes(uid: record.uid, needed) {
        case .queued, .coalesced:
            if let i = pending.firstIndex(where: { $0.uid == record.uid }) { pending.remove(at: i) }
            if pending.append(PendingAlert(uid: record.uid, until: now.advanced(byMs: ruleWaitMs))) { return }
            counters.pendingAlertsOverflowed &+= 1
        default:
            break
        }
        alert(record, now: now)
    }

    /// A PreExisting notification while carried alerts wait: the phone's
    /// replay is still under way (a call it holds may come last, after
    /// hundreds of others), so the carried alerts wait `replayWindowMs`
    /// more, up to `carriedLimit`.
    private mutating func replayContinues(_ record: NotificationRecord, now: Instant) {
        guard record.flags.contains(.preExisting), replayUntil != nil, let until = carriedUntil else { return }
        let pushed = min(now.advanced(byMs: replayWindowMs), carriedLimit)
        if pushed > until { carriedUntil = pushed }
    }

    /// A UID of this session is gone. A carried alert keeps its old
    /// session's UID, which the new session may give to another
    /// notification: only a replay takes it over or the carry ends it.
    private mutating func forget(_ uid: UInt32, now: Instant) {
        if let i = pending.firstIndex(where: { $0.uid == uid }) { pending.remove(at: i) }
        player.stop(owner: .notification(uid), now: now)
        if let i = sustained.firstIndex(where: { $0.uid == uid && !$0.carried }) {
            sustained.remove(at: i)
            refreshSustained(now: now)
        }
    }

    /// The lasting alert `record` continues, if any: its own in this
    /// session (same UID), else a carried one of the same call. The phone
    /// may replay a call under a new UID and give its old UID to another
    /// notification, so a carried alert is matched by category and app:
    /// never another category's or a known other app's; between those
    /// left, a known same app first, then the same UID, then the oldest.
    private func continued(by record: NotificationRecord) -> Int? {
        if let i = sustained.firstIndex(where: { $0.uid == record.uid && !$0.carried }) { return i }
        var best: Int? = nil
        var bestScore = 0
        for i in 0..<sustained.count where sustained[i].carried && sustained[i].category == record.category.effective {
            let app = sustained[i].appHash
            if app != 0, record.appHash != 0, app != record.appHash { continue }
            var score = 1
            if app != 0, app == record.appHash { score += 2 }
            if sustained[i].uid == record.uid { score += 1 }
            if score > bestScore { (best, bestScore) = (i, score) }
        }
        return best
    }

    /// Registers `record`'s lasting alert and lets each output play the
    /// strongest one.
    private mutating func sustain(_ record: NotificationRecord, _ choices: [OutputPattern], priority: UInt8, silent: Bool, now: Instant) {
        // The same call again (Modified, its replay, flagged PreExisting)
        // keeps its limit and its silence: a resubscription must not make a
        // silenced call ring. A carried ring taken over by a call that is
        // not flagged as replay may be a new call: it starts afresh (rings,
        // a limit of its own).
        let replayed = record.flags.contains(.preExisting)
        var limitAt: Instant? = policy.ringLimitMs > 0 ? now.advanced(byMs: policy.ringLimitMs) : nil
        var muted = false
        var appHash = record.appHash
        if let i = continued(by: record) {
            let old = sustained.remove(at: i)
            if !old.carried || replayed { (limitAt, muted) = (old.limitAt, old.muted) }
            if appHash == 0 { appHash = old.appHash }
        }
        if carriedUntil != nil, sustained.firstIndex(where: { $0.carried }) == nil { carriedUntil = nil }
        var entry = Sustained(
            uid: record.uid, category: record.category.effective, appHash: appHash, sequence: sustainSequence, priority: priority,
            patterns: InlineArray(repeating: -1))
        entry.limitAt = limitAt
        entry.muted = muted
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
            for i in 0..<sustained.count where sustained[i].patterns[output] >= 0 && !sustained[i].muted {
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
        player.stop(ownersWhere: { $0.isNotification || $0 == .unread }, now: now)
        guard !sustained.isEmpty else { return }
        for i in 0..<sustained.count { sustained[i].carried = true }
        carriedUntil = now.advanced(byMs: carriedRingMaxMs)
        carriedLimit = now.advanced(byMs: carriedRingMaxMs)
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

    /// Rule waits that ran out: the alerts play as the rules allow without
    /// the attributes.
    mutating func expireRuleWaits(session: borrowing Session, now: Instant) {
        while let i = pending.firstIndex(where: { $0.until <= now }) {
            let uid = pending.remove(at: i).uid
            counters.ruleWaitsExpired &+= 1
            if let record = session.table.record(uid: uid) {
                if !applyRules(record, session: session, now: now, attributesKnown: false) { alert(record, now: now) }
            }
        }
    }

    private mutating func alert(_ record: NotificationRecord, now: Instant) {
        let alert = policy.alert(for: record.category)
        let outputs = record.flags.contains(.important) ? alert.importantOutputs : alert.outputs
        sound(record, outputs, priority: alert.priority, untilRemoved: alert.untilRemoved, now: now)
    }

    /// Plays `outputs` for `record`: as its lasting alert when the category
    /// alerts until removed, else once; Silent leaves out the motors.
    private mutating func sound(_ record: NotificationRecord, _ outputs: [OutputPattern], priority: UInt8, untilRemoved: Bool, now: Instant) {
        if !policy.quietHours.isEmpty,
            !policy.quietAllows(record.category, important: record.flags.contains(.important), minuteOfDay: clock.local(at: now)?.minuteOfDay)
        {
            counters.alertsQuieted &+= 1
            return
        }
        let silent = record.flags.contains(.silent)
        if untilRemoved {
            sustain(record, outputs, priority: priority, silent: silent, now: now)
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

    mutating func feedback(
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
    private mutating func applyRules(_ record: NotificationRecord, session: borrowing Session, now: Instant, attributesKnown: Bool = true) -> Bool {
        let category = record.category.effective
        for rule in policy.rules {
            if let c = rule.category, c != category { continue }
            if rule.app != nil || rule.titleContains != nil {
                guard attributesKnown, session.table.record(uid: record.uid)?.attributesKnown.isEmpty == false else { continue }
            }
            if let app = rule.app {
                let matches = session.attributeValue(.appIdentifier).elementsEqual(utf8Of: app)
                if !matches { continue }
            }
            if let title = rule.titleContains {
                let matches = session.attributeValue(.title).contains(utf8Of: title)
                if !matches { continue }
            }
            let alert = policy.alert(for: record.category)
            // What played for it before stops; a lasting alert is replaced
            // by `sustain`, which keeps the call's limit and silence.
            if let i = pending.firstIndex(where: { $0.uid == record.uid }) { pending.remove(at: i) }
            player.stop(owner: .notification(record.uid), now: now)
            sound(record, rule.outputs, priority: rule.priority ?? alert.priority, untilRemoved: alert.untilRemoved, now: now)
            return true
        }
        return false
    }

    /// Plays or stops the waiting-permission pattern as the reasons say.
    private mutating func updatePermission(now: Instant) {
        let wanted = subscriptionRefused || controlPointRefused
        guard wanted != permissionShown else { return }
        permissionShown = wanted
        if wanted {
            feedback(policy.waitingPermission, owner: .permission, priority: Priority.pairing, untilStopped: true, now: now)
        } else {
            player.stop(owner: .permission, now: now)
        }
    }

    private mutating func updateUnread(session: borrowing Session, now: Instant) {
        guard let unread = policy.unread else { return }
        var any = false
        for c in 0..<CategoryID.knownCount where unread.categories & (1 << UInt16(c)) != 0 {
            if session.table.categoryCount(CategoryID(rawValue: UInt8(c))) > 0 { any = true }
        }
        guard any != unreadShown else { return }
        unreadShown = any
        if any {
            player.play(steadyOn, output: unread.output, priority: Priority.unread, owner: .unread, onPreempt: .resume, now: now)
        } else {
            player.stop(owner: .unread, now: now)
        }
    }

    /// Once a notification's app identifier is known (a rule fetched it),
    /// asks the phone for the app's display name for the events stream: once
    /// per session (the session caches names), and no alert waits for it.
    /// At MTU 23 the command can exceed one write (`com.apple.mobilephone`
    /// makes 24 bytes); the link sends it as a long write.
    private func learnAppName(session: inout Session) {
        guard session.attributeReceived(.appIdentifier), !session.attributeTruncated(.appIdentifier) else { return }
        var app = AppIdentifier()
        app.append(session.attributeValue(.appIdentifier))
        guard app.count > 0 else { return }
        _ = session.fetchAppName(app)
    }

}
