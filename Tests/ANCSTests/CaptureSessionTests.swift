// SPDX-License-Identifier: Apache-2.0
// The real iPhone Data Source bytes of Fixtures/IOSCaptures.swift through
// the whole session: Notification Source Added (made up: no real
// Notification Source bytes were found), the request the session encodes,
// the acknowledgement, the captured fragments, the completed result and the
// values read back through the session. Plus the Data Source UID check on
// real bytes: a response for another UID is dropped, the awaited one
// completes after it.

import ANCS
import Bounded
import Testing
import TestSupport

extension Session {
    /// A value of the last response, copied out for comparisons.
    func valueBytes(_ id: NotificationAttributeID) -> [UInt8] {
        let v = attributeValue(id)
        return (0..<v.count).map { v[$0] }
    }
}

@Suite("Real iPhone Data Source bytes through the session")
struct CaptureSessionTests {
    @Test("each capture through the session: request, acknowledgement, the captured fragments, the completed result and its values", arguments: iosCaptures)
    func throughSession(_ capture: IOSCapture) {
        var h = Harness { $0.attributeLimits = Replay(capture: capture, index: 0).limits }
        for index in capture.exchanges.indices {
            let replay = Replay(capture: capture, index: index)
            let fragments = replay.fragments
            switch replay.exchange.request {
            case .notification(let uid, let ids, _):
                if h.session.table.record(uid: uid) == nil {
                    _ = h.notify(ns(.added, [], .social, uid: uid))
                }
                var set: NotificationAttributeSet = []
                for id in ids { set.insert(NotificationAttributeSet(id)) }
                #expect(h.session.fetchAttributes(uid: uid, set) == .queued)
                let sent = h.send() ?? []
                #expect(Array(sent.prefix(5)) == [0] + le32(uid), "Get Notification Attributes for the UID")
                #expect(h.ack() == nil, "a fetch is finished by its response")
                let results = fragments.map { h.session.receiveDataSource($0.span) }
                #expect(results.dropLast().allSatisfy { $0 == .needMore })
                guard replay.exchange.isComplete else {
                    #expect(results.last == .needMore)
                    // The rest never comes: the watchdog ends the command.
                    h.now = h.now.advanced(byMs: h.session.config.responseTimeoutMs)
                    #expect(h.session.checkTimeout(now: h.now) == .failed(.getNotificationAttributes(uid: uid, attributes: set), .timedOut))
                    continue
                }
                #expect(results.last == .completed(.attributesReceived(uid: uid)))
                for (id, text) in replay.exchange.values {
                    #expect(h.session.attributeReceived(id) == true, "\(id)")
                    #expect(h.session.valueBytes(id) == Array(text.utf8), "\(id)")
                    #expect(h.session.attributeTruncated(id) == false, "\(id)")
                }
                #expect(h.session.table.record(uid: uid)?.attributesKnown.isSuperset(of: set) == true)
            case .app(let app):
                let appIdentifier = AppIdentifier(app)
                #expect(h.session.fetchAppName(appIdentifier) == .queued)
                #expect(h.send() == [1] + Array(app.utf8) + [0, 0], "Get App Attributes: app identifier, NUL, DisplayName")
                #expect(h.ack() == nil)
                let results = fragments.map { h.session.receiveDataSource($0.span) }
                #expect(results.last == .completed(.appNameReceived(appIdentifier)))
                #expect(h.session.appName(for: appIdentifier)?.bytes == Array(replay.exchange.displayName!.utf8))
                #expect(h.session.fetchAppName(appIdentifier) == .cached, "asked once per session")
            }
        }
        #expect(h.session.hasCommandInFlight == false)
        #expect(h.session.counters.dataSourceFragmentsDropped == 0)
        #expect(h.session.counters.dataSourceTuplesSkipped == 0)
    }

    @Test("the request the session sends with Pebble's maxima asks for Title 40, Subtitle 40 and Message 200, and the captured answer completes it")
    func pebbleRequestBytes() {
        let replay = Replay.named("pebble-sms-0x1a-2015")
        var h = Harness { $0.attributeLimits = replay.limits }
        _ = h.notify(ns(.added, [.negativeAction], .social, uid: 0x1A))
        _ = h.session.fetchAttributes(uid: 0x1A, [.appIdentifier, .title, .subtitle, .message, .date, .positiveActionLabel, .negativeActionLabel])
        #expect(h.send() == hex("00 1A 00 00 00  00  01 28 00  02 28 00  03 C8 00  05  06  07"))
        _ = h.ack()
        #expect(h.session.receiveDataSource(replay.bytes.span) == .completed(.attributesReceived(uid: 0x1A)))
        #expect(h.session.valueBytes(.negativeActionLabel) == Array("Clear".utf8))
        #expect(h.session.valueBytes(.date) == Array("20150615T161837".utf8))
    }

    @Test("a real response for another UID is dropped and counted by the session; the awaited response completes after it")
    func otherUIDDroppedBySession() {
        let capture = iosCaptures.first { $0.name == "pebble-three-responses-back-to-back" }!
        let call = Replay(capture: capture, index: 0).bytes
        let calendar = Replay(capture: capture, index: 1).bytes
        var h = Harness()
        _ = h.notify(ns(.added, [.positiveAction, .negativeAction], .incomingCall, uid: 0x74))
        _ = h.notify(ns(.added, [.negativeAction], .schedule, uid: 0x75))
        _ = h.session.fetchAttributes(uid: 0x75, [.appIdentifier, .title, .subtitle, .message, .date, .negativeActionLabel])
        #expect(Array((h.send() ?? []).prefix(5)) == hex("00 75 00 00 00"))
        _ = h.ack()
        #expect(h.session.receiveDataSource(call.span) == .dropped(byteCount: 82, reason: .uidMismatch))
        #expect(h.session.counters.dataSourceFragmentsDropped == 1)
        #expect(h.session.counters.dataSourceBytesDropped == 82)
        #expect(h.session.hasCommandInFlight == true, "still waiting for 0x75")
        #expect(h.session.receiveDataSource(calendar.span) == .completed(.attributesReceived(uid: 0x75)))
        #expect(h.session.valueBytes(.title) == Array("Hailey's practice".utf8))
        #expect(h.session.valueBytes(.appIdentifier) == Array("com.apple.mobilecal".utf8))
        #expect(h.session.table.record(uid: 0x74)?.attributesKnown == [], "nothing was taken from the other UID's response")
    }

    @Test("a real response for another UID fed byte at a time: its header is dropped at the last UID byte, and nothing of it is stored")
    func otherUIDByteAtATime() {
        let capture = iosCaptures.first { $0.name == "pebble-three-responses-back-to-back" }!
        let call = Replay(capture: capture, index: 0).bytes
        var r = DataSourceReassembler(limits: AttributeLimits())
        r.expect(.notificationAttributes(uid: 0x75, attributes: [.appIdentifier, .title]))
        var outcomes: [DataSourceReassembler.Outcome] = []
        for byte in call.prefix(4) { outcomes.append(r.feed([byte].span)) }
        #expect(outcomes == [.needMore, .needMore, .needMore, .needMore])
        #expect(r.droppedByteCount == 0)
        // `00 74 00 00` and the last UID byte `00`: UID 0x74. The four bytes
        // of earlier fragments are dropped; the last byte, alone in its
        // fragment, is read again as a possible response start.
        outcomes.append(r.feed([call[4]].span))
        #expect(r.droppedByteCount == 4, "the mismatching header is dropped")
        #expect(outcomes.last == .needMore)
        for byte in call.dropFirst(5) { outcomes.append(r.feed([byte].span)) }
        #expect(outcomes.allSatisfy { if case .complete = $0 { false } else { true } }, "nothing of the other response completes")
        #expect(r.received(.appIdentifier) == false && r.received(.title) == false)
        #expect(r.skippedTupleCount == 0, "no tuple of the other response was parsed")
    }
}

extension InlineBytes {
    /// The stored bytes, for comparisons.
    var bytes: [UInt8] { (0..<count).map { self[$0] } }
}

@Suite("A stale response's tail before the awaited response")
struct StaleTailTests {
    @Test("a response for another UID split anywhere, then the awaited response in one notification: the awaited one completes")
    func staleResponseSplitAnywhere() {
        let capture = iosCaptures.first { $0.name == "pebble-three-responses-back-to-back" }!
        let stale = Replay(capture: capture, index: 0).bytes
        let awaited = Replay(capture: capture, index: 1)
        for cut in 1..<stale.count {
            var r = DataSourceReassembler(limits: AttributeLimits())
            r.expect(awaited.expectation)
            _ = r.feed(Array(stale[..<cut]).span)
            _ = r.feed(Array(stale[cut...]).span)
            #expect(r.feed(awaited.bytes.span) == .complete(trailingBytesDropped: 0), "stale response cut at \(cut)")
            #expect(r.bytes(.title) == Array("Hailey's practice".utf8), "stale response cut at \(cut)")
        }
    }

    @Test("a response for another UID fed byte at a time, then the awaited response: the awaited one completes")
    func staleResponseByteAtATime() {
        let capture = iosCaptures.first { $0.name == "pebble-three-responses-back-to-back" }!
        let awaited = Replay(capture: capture, index: 1)
        for index in [0, 2] {
            var r = DataSourceReassembler(limits: AttributeLimits())
            r.expect(awaited.expectation)
            for byte in Replay(capture: capture, index: index).bytes { _ = r.feed([byte].span) }
            #expect(r.feed(awaited.bytes.span) == .complete(trailingBytesDropped: 0), "after response \(index + 1)")
            #expect(r.bytes(.appIdentifier) == Array("com.apple.mobilecal".utf8))
        }
    }
}
