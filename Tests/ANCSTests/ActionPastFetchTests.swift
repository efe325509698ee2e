// SPDX-License-Identifier: Apache-2.0
// Session: an action goes out while a fetch's Data Source response is still
// awaited (its write acknowledged); fetches still go one at a time.

import ANCS
import Bounded
import Testing
import TestSupport

@Suite("ANCS session: actions never wait behind an awaited response")
struct ActionPastFetchTests {
    @Test("Perform Notification Action is written while an acknowledged fetch awaits its response; the response completes the fetch afterwards")
    func actionPassesAwaitedFetch() {
        var h = Harness()
        _ = h.notify(ns(.added, [.positiveAction], .incomingCall, uid: 1))
        _ = h.notify(ns(.added, [], .email, uid: 2))
        #expect(h.session.fetchAttributes(uid: 2, .title) == .queued)
        #expect(h.send() == hex("00 02 00 00 00 01 40 00"))
        #expect(h.session.performAction(uid: 1, .positive) == .queued)
        #expect(h.send() == nil, "the fetch's write is not acknowledged yet: the bearer is busy")
        #expect(h.ack() == nil)
        #expect(h.send() == hex("02 01 00 00 00 00"), "the bearer is free: the action goes")
        #expect(h.session.commandInFlight == .performNotificationAction(uid: 1, action: .positive))
        #expect(h.ack() == .actionDelivered(uid: 1, action: .positive))
        #expect(h.session.hasCommandInFlight == true, "the fetch still awaits its response")
        #expect(h.session.receiveDataSource(notificationResponse(uid: 2, [(.title, [0x41])]).span) == .completed(.attributesReceived(uid: 2)))
        #expect(h.session.hasCommandInFlight == false)
        #expect(h.session.table.record(uid: 2)?.attributesKnown == .title)
    }

    @Test("a second fetch waits for the first one's response; only actions pass")
    func fetchesStayOneAtATime() {
        var h = Harness()
        _ = h.notify(ns(.added, [], .email, uid: 2))
        _ = h.notify(ns(.added, [], .email, uid: 3))
        _ = h.session.fetchAttributes(uid: 2, .title)
        _ = h.session.fetchAttributes(uid: 3, .title)
        _ = h.send()
        _ = h.ack()
        #expect(h.session.canSend == false)
        #expect(h.send() == nil)
        #expect(h.session.probe() == .queued)
        #expect(h.send() == nil, "the probe is a fetch too")
        #expect(h.session.receiveDataSource(notificationResponse(uid: 2, [(.title, [0x41])]).span) == .completed(.attributesReceived(uid: 2)))
        #expect(h.send() == hex("00 03 00 00 00 01 40 00"))
    }

    @Test("the awaited fetch's watchdog still fires after an action went past it")
    func watchdogAfterAction() {
        var h = Harness()
        _ = h.notify(ns(.added, [.negativeAction], .social, uid: 1))
        _ = h.session.fetchAttributes(uid: 1, .title)
        _ = h.send()
        _ = h.ack()
        #expect(h.session.deadline == Instant(ms: 10_000))
        _ = h.session.performAction(uid: 1, .negative)
        h.now = Instant(ms: 4_000)
        #expect(h.send() == hex("02 01 00 00 00 01"))
        #expect(h.ack() == .actionDelivered(uid: 1, action: .negative))
        #expect(h.session.deadline == Instant(ms: 10_000), "the action does not move the fetch's watchdog")
        #expect(h.session.checkTimeout(now: Instant(ms: 9_999)) == nil)
        #expect(h.session.checkTimeout(now: Instant(ms: 10_000)) == .failed(.getNotificationAttributes(uid: 1, attributes: .title), .timedOut))
        #expect(h.session.hasCommandInFlight == false)
    }

    @Test("an action refused with 0xA3 while a fetch is awaited leaves the fetch's reassembly running")
    func failedActionKeepsFetch() {
        var h = Harness()
        _ = h.notify(ns(.added, [.positiveAction], .incomingCall, uid: 1))
        _ = h.notify(ns(.added, [], .email, uid: 2))
        _ = h.session.fetchAttributes(uid: 2, .title)
        _ = h.send()
        _ = h.ack()
        _ = h.session.performAction(uid: 1, .positive)
        _ = h.send()
        #expect(h.session.controlPointWriteFailed(attErrorCode: 0xA3) == .failed(.performNotificationAction(uid: 1, action: .positive), .ancs(.actionFailed)))
        #expect(h.session.receiveDataSource(notificationResponse(uid: 2, [(.title, [0x41])]).span) == .completed(.attributesReceived(uid: 2)))
    }
}
