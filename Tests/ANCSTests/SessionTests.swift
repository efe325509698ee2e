// SPDX-License-Identifier: Apache-2.0
import ANCS
import Bounded
import Testing
import TestSupport

/// Drives a session like the transport would, recording what it sends.
struct Harness: ~Copyable {
    var session: Session
    var out = ByteBuffer(capacity: 512)
    var maxLength = 182
    var now = Instant(ms: 0)

    init(_ configure: (inout SessionConfig) -> Void = { _ in }) {
        var config = SessionConfig()
        configure(&config)
        session = Session(config: config)
        session.begin()
    }

    mutating func notify(_ bytes: [UInt8]) -> NotificationSourceResult {
        session.receiveNotificationSource(bytes.span)
    }

    /// The next command's bytes, or nil when nothing may be sent.
    mutating func send() -> [UInt8]? {
        guard let outcome = session.encodeNextCommand(into: &out, maxLength: maxLength) else { return nil }
        guard case .send = outcome else { return nil }
        return out.toArray()
    }

    mutating func ack() -> CommandResult? { session.controlPointWriteAcknowledged(now: now) }
}

@Suite("ANCS session")
struct SessionTests {
    @Test("Added, Modified and Removed keep the table in step with the NP")
    func tableFollowsEvents() {
        var h = Harness()
        guard case .applied(.added(let added, nil)) = h.notify(ns(.added, [.positiveAction], .social, uid: 1)) else {
            Issue.record("expected added")
            return
        }
        #expect(added.uid == 1 && added.category == .social)
        guard case .applied(.modified(let modified, let previous)) = h.notify(ns(.modified, [.important], .social, count: 2, uid: 1)) else {
            Issue.record("expected modified")
            return
        }
        #expect(previous.flags == [.positiveAction])
        #expect(modified.flags == [.important] && modified.categoryCount == 2)
        #expect(h.notify(ns(.removed, [], .social, uid: 1)) == .applied(.removed(NotificationRecord(
            uid: 1, category: .social, flags: [], categoryCount: 1, lastEvent: .removed, sequence: modified.sequence, attributesKnown: []))))
        #expect(h.session.table.count == 0)
        #expect(h.notify(ns(.removed, [], .social, count: 0, uid: 1)) == .applied(.removedUnknown(
            NotificationSourceEvent(eventID: .removed, flags: [], category: .social, categoryCount: 0, uid: 1))))
    }

    @Test("category counts are the phone's from every event: a Removed for an evicted UID sets its category's count")
    func countsFromEveryEvent() {
        var h = Harness { $0.notificationCapacity = 2 }
        _ = h.notify(ns(.added, [], .social, count: 1, uid: 1))
        _ = h.notify(ns(.added, [], .email, count: 1, uid: 2))
        _ = h.notify(ns(.added, [], .email, count: 2, uid: 3))
        #expect(h.session.table.record(uid: 1) == nil, "evicted")
        #expect(h.session.table.categoryCount(.social) == 1, "evicting a record does not touch the phone's count")
        _ = h.notify(ns(.removed, [], .social, count: 0, uid: 1))
        #expect(h.session.table.categoryCount(.social) == 0)
        #expect(h.session.table.categoryCount(.email) == 2)
        // A reserved category counts as Other.
        _ = h.notify(ns(.added, [], CategoryID(rawValue: 40), count: 3, uid: 4))
        #expect(h.session.table.categoryCount(.other) == 3)
        h.session.end()
        #expect(h.session.table.categoryCount(.email) == 0, "a session's counts end with it")
    }

    @Test("a notification's AppIdentifier, once it arrives, is kept as the record's app hash: equal for the same app, 0 until known")
    func appHashFromAttributes() {
        var h = Harness()
        _ = h.notify(ns(.added, [], .incomingCall, uid: 1))
        _ = h.notify(ns(.added, [], .incomingCall, uid: 2))
        _ = h.notify(ns(.added, [], .incomingCall, uid: 3))
        #expect(h.session.table.record(uid: 1)?.appHash == 0)
        let apps: [(UInt32, String)] = [(1, "com.apple.mobilephone"), (2, "net.whatsapp.WhatsApp"), (3, "com.apple.mobilephone")]
        for (uid, app) in apps {
            #expect(h.session.fetchAttributes(uid: uid, .appIdentifier) == .queued)
            #expect(h.send() != nil)
            _ = h.ack()
            _ = h.session.receiveDataSource(notificationResponse(uid: uid, [(.appIdentifier, Array(app.utf8))]).span)
        }
        let hashes = apps.map { h.session.table.record(uid: $0.0)?.appHash ?? 0 }
        #expect(hashes[0] != 0 && hashes[1] != 0)
        #expect(hashes[0] == hashes[2])
        #expect(hashes[0] != hashes[1])
    }

    @Test("a notification that changes category leaves one fewer in the old one; the new one takes the phone's count")
    func categoryChangeCounts() {
        var h = Harness()
        _ = h.notify(ns(.added, [], .social, count: 1, uid: 1))
        _ = h.notify(ns(.added, [], .social, count: 2, uid: 2))
        _ = h.notify(ns(.modified, [], .news, count: 5, uid: 2))
        #expect(h.session.table.categoryCount(.social) == 1)
        #expect(h.session.table.categoryCount(.news) == 5)
        #expect(h.session.table.record(uid: 2)?.category == .news)
        // A Removed naming yet another category moves it too.
        _ = h.notify(ns(.removed, [], .email, count: 0, uid: 2))
        #expect(h.session.table.categoryCount(.news) == 4)
        #expect(h.session.table.categoryCount(.email) == 0)
    }

    @Test("0xA2 removes the UID and takes one from its category's latest count, not from the count it arrived with")
    func invalidUIDCountsDownFromTheLatest() {
        var h = Harness()
        _ = h.notify(ns(.added, [], .email, count: 1, uid: 1))
        _ = h.notify(ns(.added, [], .email, count: 3, uid: 2))
        #expect(h.session.fetchAttributes(uid: 1, [.title]) == .queued)
        #expect(h.send() != nil)
        #expect(h.session.controlPointWriteFailed(attErrorCode: 0xA2) == .failed(
            .getNotificationAttributes(uid: 1, attributes: [.title]), .ancs(.invalidParameter)))
        #expect(h.session.table.record(uid: 1) == nil)
        #expect(h.session.table.categoryCount(.email) == 2)
    }

    @Test("a malformed Notification Source value is dropped and counted")
    func malformedNotificationSource() {
        var h = Harness()
        #expect(h.notify([0, 0, 0]) == .dropped(.wrongLength(3)))
        #expect(h.notify(hex("07 00 00 00 01 00 00 00")) == .dropped(.reservedEventID(7)))
        #expect(h.session.counters.notificationSourceDropped == 2)
        #expect(h.session.table.count == 0)
    }

    @Test("when the table is full the oldest notification that is not an incoming call is evicted and counted")
    func evictionSparesIncomingCall() {
        var h = Harness { $0.notificationCapacity = 3 }
        _ = h.notify(ns(.added, [], .incomingCall, uid: 1))
        _ = h.notify(ns(.added, [.preExisting], .email, uid: 2))
        _ = h.notify(ns(.added, [.preExisting], .email, uid: 3))
        guard case .applied(.added(_, let evicted)) = h.notify(ns(.added, [], .social, uid: 4)) else {
            Issue.record("expected added")
            return
        }
        #expect(evicted?.uid == 2)
        #expect(h.session.table.record(uid: 1) != nil)
        #expect(h.session.counters.tableEvictions == 1)
    }

    @Test("only one Control Point command is in flight; the next waits for the acknowledgement")
    func oneCommandInFlight() {
        var h = Harness()
        _ = h.notify(ns(.added, [.positiveAction], .social, uid: 1))
        _ = h.notify(ns(.added, [], .email, uid: 2))
        #expect(h.session.fetchAttributes(uid: 1, .title) == .queued)
        #expect(h.session.fetchAttributes(uid: 2, .title) == .queued)
        #expect(h.send() == hex("00 01 00 00 00 01 40 00"))
        #expect(h.send() == nil, "a second command while one is in flight")
        #expect(h.ack() == nil)
        #expect(h.send() == nil, "the response has not arrived yet")
        #expect(h.session.receiveDataSource(notificationResponse(uid: 1, [(.title, [0x41])]).span) == .completed(.attributesReceived(uid: 1)))
        #expect(h.send() == hex("00 02 00 00 00 01 40 00"))
    }

    @Test("a Data Source response that completes before the write acknowledgement finishes the command at the acknowledgement")
    func responseBeforeAck() {
        var h = Harness()
        _ = h.notify(ns(.added, [], .email, uid: 2))
        _ = h.session.fetchAttributes(uid: 2, .title)
        _ = h.session.fetchAttributes(uid: 2, .message)
        _ = h.send()
        #expect(h.session.receiveDataSource(notificationResponse(uid: 2, [(.title, [1]), (.message, [2])]).span) == .completed(.attributesReceived(uid: 2)))
        do {
            let message = h.session.attributeValue(.message)
            #expect(message.count == 1 && message[0] == 2)
        }
        #expect(h.session.hasCommandInFlight == true)
        #expect(h.ack() == nil)
        #expect(h.session.hasCommandInFlight == false)
        #expect(h.session.table.record(uid: 2)?.attributesKnown == [.title, .message])
    }

    @Test("a user action is sent before queued attribute fetches")
    func actionsFirst() {
        var h = Harness()
        _ = h.notify(ns(.added, [.positiveAction, .negativeAction], .incomingCall, uid: 9))
        _ = h.notify(ns(.added, [], .email, uid: 2))
        _ = h.session.fetchAttributes(uid: 2, .title)
        #expect(h.session.performAction(uid: 9, .negative) == .queued)
        #expect(h.send() == hex("02 09 00 00 00 01"))
        #expect(h.ack() == .actionDelivered(uid: 9, action: .negative))
        #expect(h.send() == hex("00 02 00 00 00 01 40 00"))
    }

    @Test("duplicate requests are coalesced into the queued or in-flight command")
    func coalescing() {
        var h = Harness()
        _ = h.notify(ns(.added, [.positiveAction], .social, uid: 1))
        #expect(h.session.fetchAttributes(uid: 1, .title) == .queued)
        #expect(h.session.fetchAttributes(uid: 1, .message) == .coalesced)
        #expect(h.session.queuedCount == 1)
        #expect(h.send() == hex("00 01 00 00 00 01 40 00 03 00 01"))
        #expect(h.session.fetchAttributes(uid: 1, .title) == .coalesced)
        #expect(h.session.performAction(uid: 1, .positive) == .queued)
        #expect(h.session.performAction(uid: 1, .positive) == .coalesced)
        #expect(h.session.fetchAppName(AppIdentifier("com.a")) == .queued)
        #expect(h.session.fetchAppName(AppIdentifier("com.a")) == .coalesced)
        #expect(h.session.queuedCount == 2)
    }

    @Test("a full queue refuses the newest request and counts it")
    func queueFull() {
        var h = Harness { $0.fetchQueueCapacity = 2 }
        for uid: UInt32 in 1...3 { _ = h.notify(ns(.added, [], .email, uid: uid)) }
        #expect(h.session.fetchAttributes(uid: 1, .title) == .queued)
        #expect(h.session.fetchAttributes(uid: 2, .title) == .queued)
        #expect(h.session.fetchAttributes(uid: 3, .title) == .refusedQueueFull)
        #expect(h.session.counters.requestsRefused == 1)
    }

    @Test("no action flag, no command")
    func actionNotOffered() {
        var h = Harness()
        _ = h.notify(ns(.added, [.positiveAction], .social, uid: 1))
        #expect(h.session.performAction(uid: 1, .negative) == .actionNotOffered)
        #expect(h.session.performAction(uid: 77, .positive) == .unknownUID)
        #expect(h.send() == nil)
    }

    @Test("Perform action on a removed UID gets 0xA2 and clears that UID's record and pending work")
    func invalidParameterClearsUID() {
        var h = Harness()
        _ = h.notify(ns(.added, [.positiveAction], .incomingCall, uid: 5))
        _ = h.session.performAction(uid: 5, .positive)
        _ = h.session.fetchAttributes(uid: 5, .title)
        #expect(h.send() == hex("02 05 00 00 00 00"))
        #expect(h.session.controlPointWriteFailed(attErrorCode: 0xA2) == .failed(.performNotificationAction(uid: 5, action: .positive), .ancs(.invalidParameter)))
        let record = h.session.table.record(uid: 5)
        #expect(record == nil)
        #expect(h.session.queuedCount == 0)
        #expect(h.send() == nil)
        #expect(h.session.counters.invalidParameterErrors == 1)
    }

    @Test("0xA0 and 0xA1 drop the command as our bug; the next command can go")
    func unknownOrInvalidCommand() {
        var h = Harness()
        _ = h.notify(ns(.added, [], .email, uid: 1))
        _ = h.notify(ns(.added, [], .email, uid: 2))
        _ = h.session.fetchAttributes(uid: 1, .title)
        _ = h.session.fetchAttributes(uid: 2, .title)
        _ = h.send()
        #expect(h.session.controlPointWriteFailed(attErrorCode: 0xA0) == .failed(.getNotificationAttributes(uid: 1, attributes: .title), .ancs(.unknownCommand)))
        _ = h.send()
        #expect(h.session.controlPointWriteFailed(attErrorCode: 0xA1) == .failed(.getNotificationAttributes(uid: 2, attributes: .title), .ancs(.invalidCommand)))
        #expect(h.session.counters.commandsRejectedAsInvalid == 2)
        #expect(h.session.table.record(uid: 1) != nil, "our bug does not mean the notification is gone")
        #expect(h.session.receiveDataSource(notificationResponse(uid: 2, [(.title, [1])]).span) == .dropped(byteCount: 9, reason: .noResponseExpected), "after an error nothing comes on Data Source for that command")
    }

    @Test("0xA3 Action failed is reported to the caller")
    func actionFailed() {
        var h = Harness()
        _ = h.notify(ns(.added, [.negativeAction], .incomingCall, uid: 3))
        _ = h.session.performAction(uid: 3, .negative)
        _ = h.send()
        #expect(h.session.controlPointWriteFailed(attErrorCode: 0xA3) == .failed(.performNotificationAction(uid: 3, action: .negative), .ancs(.actionFailed)))
        #expect(h.session.table.record(uid: 3) != nil)
        #expect(h.session.counters.actionFailedErrors == 1)
    }

    @Test("a response that does not arrive after the acknowledgement times out and frees the Control Point")
    func responseTimeout() {
        var h = Harness { $0.responseTimeoutMs = 5_000 }
        _ = h.notify(ns(.added, [], .email, uid: 1))
        _ = h.session.fetchAttributes(uid: 1, .title)
        _ = h.send()
        #expect(h.session.deadline == nil, "the ATT transaction timeout covers the write itself")
        h.now = Instant(ms: 100)
        _ = h.ack()
        #expect(h.session.deadline == Instant(ms: 5_100))
        #expect(h.session.checkTimeout(now: Instant(ms: 5_099)) == nil)
        #expect(h.session.checkTimeout(now: Instant(ms: 5_100)) == .failed(.getNotificationAttributes(uid: 1, attributes: .title), .timedOut))
        #expect(h.session.hasCommandInFlight == false)
        #expect(h.session.counters.commandsTimedOut == 1)
        #expect(h.session.deadline == nil)
    }

    @Test("an app's display name is asked for once per session and then served from the cache")
    func appNameCachedPerSession() {
        var h = Harness()
        let app = AppIdentifier("com.example.chat")
        #expect(h.session.fetchAppName(app) == .queued)
        #expect(h.send() == [0x01] + Array("com.example.chat".utf8) + [0, 0])
        _ = h.ack()
        #expect(h.session.receiveDataSource(appResponse("com.example.chat", displayName: Array("Chat".utf8)).span) == .completed(.appNameReceived(app)))
        #expect(h.session.appName(for: app)?.text == "Chat")
        #expect(h.session.fetchAppName(app) == .cached)
        #expect(h.send() == nil)
    }

    @Test("an app identifier too long for MTU − 3 is dropped as unsendable and not asked again")
    func appNameDoesNotFit() {
        var h = Harness()
        h.maxLength = 20
        let app = AppIdentifier("com.apple.MobileSMS")
        _ = h.session.fetchAppName(app)
        #expect(h.session.encodeNextCommand(into: &h.out, maxLength: 20) == .dropped(.failed(
            .getAppAttributes(appIdentifier: app, attributes: .displayName), .unsendable(.doesNotFit(neededBytes: 22, maxBytes: 20)))))
        #expect(h.session.fetchAppName(app) == .cached)
        #expect(h.session.counters.commandsUnsendable == 1)
    }

    @Test("the app-name cache evicts the least recently used app when full")
    func appNameLRU() {
        var cache = AppNameCache(capacity: 2)
        cache.insert(AppIdentifier("a"), displayName: AppDisplayName("A"))
        cache.insert(AppIdentifier("b"), displayName: AppDisplayName("B"))
        _ = cache.lookup(AppIdentifier("a"))
        cache.insert(AppIdentifier("c"), displayName: AppDisplayName("C"))
        #expect(cache.peek(AppIdentifier("b")) == nil)
        #expect(cache.peek(AppIdentifier("a"))?.text == "A")
        #expect(cache.evictionCount == 1)
    }

    @Test("session end forgets every UID, queued command and cached name")
    func endForgetsEverything() {
        var h = Harness()
        _ = h.notify(ns(.added, [.positiveAction], .incomingCall, uid: 1))
        let app = AppIdentifier("com.a")
        _ = h.session.fetchAppName(app)
        _ = h.send()
        _ = h.ack()
        _ = h.session.receiveDataSource(appResponse("com.a", displayName: [0x41]).span)
        _ = h.session.performAction(uid: 1, .positive)
        h.session.end()
        #expect(h.session.performAction(uid: 1, .positive) == .inactive)
        #expect(h.notify(ns(.added, [], .email, uid: 2)) == .outsideSession)
        h.session.begin()
        #expect(h.session.table.count == 0)
        #expect(h.session.queuedCount == 0)
        #expect(h.session.performAction(uid: 1, .positive) == .unknownUID)
        #expect(h.session.appName(for: app) == nil)
        #expect(h.session.fetchAppName(app) == .queued)
    }

    @Test("Removed drops queued work for that UID")
    func removedClearsQueue() {
        var h = Harness()
        _ = h.notify(ns(.added, [], .email, uid: 4))
        _ = h.session.fetchAttributes(uid: 4, .title)
        _ = h.notify(ns(.removed, [], .email, uid: 4))
        #expect(h.session.queuedCount == 0)
        #expect(h.send() == nil)
    }

    @Test("the keep-alive probe asks about a UID that cannot exist; 0xA2 means the NP is alive")
    func keepAliveProbe() {
        var h = Harness()
        _ = h.notify(ns(.added, [], .email, uid: UInt32.max))
        #expect(h.session.probe() == .queued)
        #expect(h.session.probe() == .coalesced)
        #expect(h.send() == hex("00 FE FF FF FF 00"))
        #expect(h.session.controlPointWriteFailed(attErrorCode: 0xA2) == .probeAnswered)
        #expect(h.session.table.record(uid: UInt32.max) != nil, "a probe never removes a real notification")
        _ = h.session.probe()
        _ = h.send()
        #expect(h.ack() == .probeFailed(.att(0)), "a probe that succeeds means the NP is not answering as ANCS does")
    }
}
