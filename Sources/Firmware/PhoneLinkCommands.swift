// SPDX-License-Identifier: Apache-2.0
// The phone link's commands and time (PhoneLink.swift has the design): a
// finished Control Point command, the requests the core makes (attributes,
// app names, actions, media), resubscription, the flush that hands the
// bearer on (ATTArbiter.swift) and the deadlines.

import AMS
import ANCS
import ATT
import Bounded
import CTS
import GATT

extension PhoneLink {
    // MARK: Commands

    mutating func commandFinished<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(_ result: CommandResult, now: Instant, handler: inout H, effects: inout Effects<S>) {
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

    /// The most recent incoming call the phone shows (ringing, or silenced
    /// on the wrist: accept still answers it); nil when there is none.
    public var incomingCall: NotificationRecord? { session.table.mostRecent { $0.isIncomingCall } }

    /// Queues Perform Notification Action, only if the notification offers it.
    public mutating func performAction(uid: UInt32, _ action: ActionID) -> RequestOutcome {
        guard phase == .live, ancs.controlPointHandle != 0 else { return .inactive }
        return session.performAction(uid: uid, action)
    }

    /// Queues an AMS Remote Command (a media press; written at `flush`),
    /// only when the phone lists it as available now.
    mutating func requestMedia(_ command: RemoteCommandID) -> AMSClient.MediaRequest {
        guard phase == .live else { return .notAvailable }
        return ams.requestMedia(command)
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
    mutating func resubscribe<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(_ why: Resubscription, now: Instant, handler: inout H, effects: inout Effects<S>) {
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
        // the bearer still free) AMS (a media press or its bring-up's next
        // step), then CTS.
        // The clients' own wish is asked first: it is a field or two, the
        // arbiter's answer reads the session (per NS event, in make test's
        // instruction budget).
        guard arbiter.mayTakeTurn(.controlPoint) else { return }
        sendCommand(now: now, handler: &handler, effects: &effects)
        if ams.wantsToSend {
            guard arbiter.mayTakeTurn(.ams) else { return }
            if ams.nextRequest(into: &scratch, mtu: bearer.mtu) { submit(now: now, handler: &handler, effects: &effects) }
            return
        }
        guard cts.wantsToSend, arbiter.mayTakeTurn(.cts) else { return }
        if cts.nextRequest(into: &scratch, mtu: bearer.mtu) { submit(now: now, handler: &handler, effects: &effects) }
    }

    /// Sends the next queued Control Point command, if it may go.
    mutating func sendCommand<H: LinkEventHandler & ~Copyable, S: EventSink & ~Copyable>(now: Instant, handler: inout H, effects: inout Effects<S>) {
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
