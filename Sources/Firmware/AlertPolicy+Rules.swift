// SPDX-License-Identifier: Apache-2.0
// The alert policy's rules (AlertPolicy.swift has the reasons): replay,
// arrivals and removals, lasting alerts and their carrying over, rule
// waits, feedback, the waiting-permission and unread indicators.

import ANCS
import Bounded
import CTS
import Config
import Feedback

extension AlertPolicy {
    // MARK: Policy

    /// Whether `record` is part of the session-start replay: not a call (a
    /// call in the replay is ringing now), and flagged PreExisting or
    /// arriving before the replay window closed (counted in
    /// `unflaggedReplays`: only the window said so).
    mutating func isReplay(_ record: NotificationRecord, now: Instant) -> Bool {
        if record.isIncomingCall { return false }
        if record.flags.contains(.preExisting) { return true }
        if let until = replayUntil, now >= until { return false }
        counters.unflaggedReplays &+= 1
        return true
    }

    /// A notification that may alert: now, or once the attributes its
    /// rules need have arrived.
    mutating func arrive(_ record: NotificationRecord, session: inout Session, now: Instant) {
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
    mutating func replayContinues(_ record: NotificationRecord, now: Instant) {
        guard record.flags.contains(.preExisting), replayUntil != nil, let until = carriedUntil else { return }
        let pushed = min(now.advanced(byMs: replayWindowMs), carriedLimit)
        if pushed > until { carriedUntil = pushed }
    }

    /// A UID of this session is gone. A carried alert keeps its old
    /// session's UID, which the new session may give to another
    /// notification: only a replay takes it over or the carry ends it.
    mutating func forget(_ uid: UInt32, now: Instant) {
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
    func continued(by record: NotificationRecord) -> Int? {
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
    mutating func sustain(_ record: NotificationRecord, _ choices: [OutputPattern], priority: UInt8, silent: Bool, now: Instant) {
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

    mutating func refreshSustained(now: Instant) {
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

    mutating func clearSustained() {
        sustained.removeAll()
        sustainedNow = InlineArray(repeating: nil)
        carriedUntil = nil
    }

    /// The session ended on a live link: every pattern of its notifications
    /// stops but the lasting alerts, which play on until the new session
    /// confirms or drops them.
    mutating func carryLastingAlerts(now: Instant) {
        player.stop(ownersWhere: { $0.isNotification || $0 == .unread }, now: now)
        guard !sustained.isEmpty else { return }
        for i in 0..<sustained.count { sustained[i].carried = true }
        carriedUntil = now.advanced(byMs: carriedRingMaxMs)
        carriedLimit = now.advanced(byMs: carriedRingMaxMs)
    }

    /// Stops the carried lasting alerts no replayed call took over.
    mutating func dropCarried(now: Instant) {
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

    mutating func alert(_ record: NotificationRecord, now: Instant) {
        let alert = policy.alert(for: record.category)
        let outputs = record.flags.contains(.important) ? alert.importantOutputs : alert.outputs
        sound(record, outputs, priority: alert.priority, untilRemoved: alert.untilRemoved, now: now)
    }

    /// Plays `outputs` for `record`: as its lasting alert when the category
    /// alerts until removed, else once; Silent leaves out the motors.
    mutating func sound(_ record: NotificationRecord, _ outputs: [OutputPattern], priority: UInt8, untilRemoved: Bool, now: Instant) {
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

    mutating func play(_ choice: OutputPattern, owner: PatternOwner, priority: UInt8, untilRemoved: Bool, silent: Bool, now: Instant) {
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
    mutating func applyRules(_ record: NotificationRecord, session: borrowing Session, now: Instant, attributesKnown: Bool = true) -> Bool {
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
    mutating func updatePermission(now: Instant) {
        let wanted = subscriptionRefused || controlPointRefused
        guard wanted != permissionShown else { return }
        permissionShown = wanted
        if wanted {
            feedback(policy.waitingPermission, owner: .permission, priority: Priority.pairing, untilStopped: true, now: now)
        } else {
            player.stop(owner: .permission, now: now)
        }
    }

    mutating func updateUnread(session: borrowing Session, now: Instant) {
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
    func learnAppName(session: inout Session) {
        guard session.attributeReceived(.appIdentifier), !session.attributeTruncated(.appIdentifier) else { return }
        var app = AppIdentifier()
        app.append(session.attributeValue(.appIdentifier))
        guard app.count > 0 else { return }
        _ = session.fetchAppName(app)
    }
}
