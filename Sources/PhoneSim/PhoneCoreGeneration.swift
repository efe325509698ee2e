// SPDX-License-Identifier: Apache-2.0
// The simulated iPhone's notifications (PhoneCore.swift has the design):
// posting and announcing them, the PreExisting replay, the phone's own
// changes to its database (Service Changed), the pumps that generate one
// outgoing PDU at a time when the outbox is empty, the client that browses
// the wearable's database, time, and the scenario commands.

import AMS
import ANCS
import ATT
import Bounded
import CTS
import GATT

extension PhoneCore {
    // MARK: Notifications

    mutating func beginReplay() {
        store.beginReplay()
        replayCount = store.replayPendingCount
        replayActive = true
        checkReplayFinished()
    }

    mutating func endNotificationSession() {
        store.cancelReplay()
        replayActive = false
        notificationQueue.removeAll()
    }

    /// Drops the queued Data Source responses and the one being sent.
    mutating func resetDataSource() {
        dataSource.removeAll()
        dataSourceOffset = 0
        dataSourceFragments = 0
    }

    mutating func checkReplayFinished() {
        guard replayActive, store.replayPendingCount == 0 else { return }
        replayActive = false
        emit(.replayFinished(count: replayCount))
    }

    mutating func queueNotificationSource(_ eventID: EventID, _ n: PhoneNotification) {
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
    mutating func announceRemoved(_ n: PhoneNotification) {
        if n.replayPending {
            checkReplayFinished()
        } else {
            queueNotificationSource(.removed, n)
        }
    }

    mutating func post(_ spec: NotificationSpec, announce: Bool) {
        for i in 0..<max(1, spec.count) {
            let uid = spec.uid.map { $0 &+ UInt32(truncatingIfNeeded: i) } ?? store.nextUID
            post(uid: uid, spec, announce: announce)
        }
    }

    mutating func post(uid: UInt32, _ spec: NotificationSpec, announce: Bool) {
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

    /// The change made while the bonded wearable was away, indicated now
    /// that its link is encrypted (its subscription was kept).
    mutating func indicateChangeWhileAway() {
        guard let range = changedWhileAway else { return }
        changedWhileAway = nil
        indicateChange(start: range.start, end: range.end)
    }

    mutating func changeANCS(remove: Bool, add: Bool) {
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
    mutating func removeService(ams: Bool) {
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
    mutating func indicateChange(start: UInt16, end: UInt16) {
        guard isConnected else {
            // Owed to the bonded wearable at its next encrypted link.
            guard isBonded, bondedServiceChangedCCCD & CCCDValue.indications != 0 else { return }
            let range = changedWhileAway.map {
                ServiceChangedRange(start: min($0.start, start), end: max($0.end, end))
            } ?? ServiceChangedRange(start: start, end: end)
            changedWhileAway = range
            return
        }
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
    mutating func pumpOne() -> Bool {
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

    mutating func pumpDataSource() -> Bool {
        guard !dataSource.isEmpty else { return false }
        let offset = dataSourceOffset
        let fragmentMax = bearer.mtu - 3
        var fragment = InlineBytes<517>()  // ATTMTU.maximum (a generic argument must be a literal)
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

    mutating func pumpReplay() -> Bool {
        guard replayActive, isSubscribed(.notificationSource), let n = store.takeNextReplay() else { return false }
        sendNotificationSource(NotificationSourceEvent(
            eventID: .added, flags: replayFlagged ? n.flags.union(.preExisting) : n.flags, category: n.category,
            categoryCount: store.categoryCount(n.category), uid: n.uid))
        checkReplayFinished()
        return true
    }

    mutating func sendNotificationSource(_ event: NotificationSourceEvent) {
        scratch.removeAll()
        scratch.append(ATTOpcode.handleValueNotification)
        scratch.appendLE16(PhoneDatabase.notificationSourceValue)
        event.encode(into: &scratch)
        bearer.send(copyOf: scratch)
        emit(.notificationSent(event))
    }

    mutating func pumpIndication() -> Bool {
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

    mutating func browse(_ response: ATTPDU, _ pdu: Span<UInt8>, now: Instant) {
        _ = browser.handle(response, in: pdu)
        advanceBrowse(now: now)
    }

    mutating func advanceBrowse(now: Instant) {
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
    var subscribedAndReplayed: Bool {
        isSubscribed(.notificationSource) && !notificationSourceDead && store.replayPendingCount == 0
    }

    /// Carries out the commands the runner hands over until it has none for now.
    mutating func runScenario(now: Instant) {
        clock.start(at: now)
        scenario.beginRun()
        while let step = scenario.nextStep(now: now, subscribedAndReplayed: subscribedAndReplayed, outputs: &outputs) {
            let result = apply(step.command, line: step.line)
            scenario.finished(step.command, line: step.line, result, outputs: &outputs)
        }
    }

    /// What a command does to the phone (the runner keeps the waits and drops
    /// the queue after `quit`).
    mutating func apply(_ command: ScenarioCommand, line: Int) -> ScenarioRunner.StepResult {
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

    mutating func reportTruncation(_ content: NotificationContent, line: Int) {
        let truncated = content.truncatedFields
        guard !truncated.isEmpty else { return }
        for raw in 0..<UInt8(8) {
            if let id = NotificationAttributeID(rawValue: raw), truncated.contains(id) {
                emit(.valueTruncated(line: line, field: Name(id.name)))
            }
        }
    }
}
