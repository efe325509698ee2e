// SPDX-License-Identifier: Apache-2.0
// Real iPhone Data Source bytes (Fixtures/IOSCaptures.swift) replayed
// through the reassembler and the session: as captured, split in two at
// every byte, byte at a time, and the cases the captures show (zero-length
// tuples, a buffer ending on an attribute ID, values cut at the requested
// maximum with and without an ellipsis, a multi-byte display name, several
// responses in one buffer). Where a case needs bytes no capture has (an
// unrequested tuple, a continuation that was not published, a UID that
// does not match), the test builds them from a capture and says how.

import ANCS
import Bounded
import Testing
import TestSupport

/// One response of one capture, with its fragments cut out of the events.
struct Replay: Sendable, CustomTestStringConvertible {
    var capture: IOSCapture
    var index: Int
    var exchange: CapturedExchange { capture.exchanges[index] }

    /// The fragments as captured: one per notification.
    var fragments: [[UInt8]] { exchange.pieces.map { Array(capture.events[$0.event][$0.bytes]) } }
    var bytes: [UInt8] { fragments.flatMap { $0 } }

    var testDescription: String { capture.exchanges.count == 1 ? capture.name : "\(capture.name) #\(index + 1)" }

    /// The attribute limits the request was made with.
    var limits: AttributeLimits {
        var limits = AttributeLimits()
        if case .notification(_, _, let maxima?) = exchange.request {
            limits[.title] = maxima.title
            limits[.subtitle] = maxima.subtitle
            limits[.message] = maxima.message
        }
        return limits
    }

    var expectation: DataSourceReassembler.Expectation {
        switch exchange.request {
        case .notification(let uid, let ids, _):
            var set: NotificationAttributeSet = []
            for id in ids { set.insert(NotificationAttributeSet(id)) }
            return .notificationAttributes(uid: uid, attributes: set)
        case .app(let app):
            return .appAttributes(appIdentifier: AppIdentifier(app), attributes: .displayName)
        }
    }

    /// What the last fragment must give: complete, or more needed for a
    /// capture that shows only the start of its response.
    var finalOutcome: DataSourceReassembler.Outcome {
        exchange.isComplete ? .complete(trailingBytesDropped: 0) : .needMore
    }

    static let all: [Replay] = iosCaptures.flatMap { capture in
        capture.exchanges.indices.map { Replay(capture: capture, index: $0) }
    }

    static func named(_ name: String, _ index: Int = 0) -> Replay {
        Replay(capture: iosCaptures.first { $0.name == name }!, index: index)
    }
}

/// A reassembler after a replay, and what each fragment gave.
struct Replayed: ~Copyable {
    var r: DataSourceReassembler
    var outcomes: [DataSourceReassembler.Outcome]
}

/// Feeds `fragments` to a fresh reassembler expecting `replay`'s request.
func replayed(_ fragments: [[UInt8]], _ replay: Replay, limits: AttributeLimits? = nil,
              expecting expectation: DataSourceReassembler.Expectation? = nil) -> Replayed {
    var r = DataSourceReassembler(limits: limits ?? replay.limits)
    r.expect(expectation ?? replay.expectation)
    var outcomes: [DataSourceReassembler.Outcome] = []
    for f in fragments { outcomes.append(r.feed(f.span)) }
    return Replayed(r: r, outcomes: outcomes)
}

/// Checks every value the source shows, and that nothing else was kept,
/// cut, skipped or dropped.
func checkValues(_ r: borrowing DataSourceReassembler, _ replay: Replay, _ comment: String = "",
                 sourceLocation: SourceLocation = #_sourceLocation) {
    let exchange = replay.exchange
    if let name = exchange.displayName {
        #expect(r.displayNameBytes == Array(name.utf8), "display name \(comment)", sourceLocation: sourceLocation)
        #expect(r.isDisplayNameTruncated == false, sourceLocation: sourceLocation)
    } else {
        for (id, text) in exchange.values {
            #expect(r.received(id) == true, "\(id) \(comment)", sourceLocation: sourceLocation)
            #expect(r.bytes(id) == Array(text.utf8), "\(id) \(comment)", sourceLocation: sourceLocation)
            #expect(r.declaredLength(id) == text.utf8.count, "\(id) \(comment)", sourceLocation: sourceLocation)
            #expect(r.isTruncated(id) == false, "\(id) \(comment)", sourceLocation: sourceLocation)
        }
        for id in NotificationAttributeID.allCases where !exchange.values.contains(where: { $0.0 == id }) {
            #expect(r.received(id) == false, "\(id) was not in the response \(comment)", sourceLocation: sourceLocation)
        }
    }
    #expect(r.skippedTupleCount == 0, sourceLocation: sourceLocation)
    #expect(r.truncatedValueCount == 0, sourceLocation: sourceLocation)
    #expect(r.droppedByteCount == 0, sourceLocation: sourceLocation)
}

@Suite("Real iPhone Data Source bytes")
struct CaptureReplayTests {
    @Test("the fixtures hold 18 captures of 24 Data Source events with 24 responses, each naming its source")
    func fixturesComplete() {
        #expect(iosCaptures.count == 18)
        #expect(iosCaptures.map(\.events.count).reduce(0, +) == 24)
        #expect(Replay.all.count == 24)
        for capture in iosCaptures {
            #expect(capture.source.contains("@") || capture.source.hasPrefix("https://"), "\(capture.name): source names a commit or URL")
            for exchange in capture.exchanges {
                for piece in exchange.pieces { #expect(capture.events[piece.event].indices.contains(piece.bytes.upperBound - 1)) }
            }
        }
        // Every byte of every event belongs to exactly one response.
        for capture in iosCaptures {
            let covered = capture.exchanges.flatMap(\.pieces).map(\.bytes.count).reduce(0, +)
            #expect(covered == capture.events.map(\.count).reduce(0, +), "\(capture.name)")
        }
    }

    @Test("each capture replayed with its captured fragmentation gives the values its source shows", arguments: Replay.all)
    func capturedFragmentation(_ replay: Replay) {
        let got = replayed(replay.fragments, replay)
        #expect(got.outcomes.dropLast().allSatisfy { $0 == .needMore })
        #expect(got.outcomes.last == replay.finalOutcome)
        checkValues(got.r, replay)
    }

    @Test("each capture split in two at every byte gives the same values", arguments: Replay.all)
    func everySplitPoint(_ replay: Replay) {
        let bytes = replay.bytes
        for cut in 1..<bytes.count {
            let got = replayed([Array(bytes[..<cut]), Array(bytes[cut...])], replay)
            #expect(got.outcomes == [.needMore, replay.finalOutcome], "cut at \(cut)")
            checkValues(got.r, replay, "cut at \(cut)")
        }
    }

    @Test("each capture fed byte at a time completes exactly on its last byte", arguments: Replay.all)
    func byteAtATime(_ replay: Replay) {
        let got = replayed(replay.bytes.map { [$0] }, replay)
        #expect(got.outcomes.dropLast().allSatisfy { $0 == .needMore })
        #expect(got.outcomes.last == replay.finalOutcome)
        checkValues(got.r, replay, "byte at a time")
    }

    @Test("each capture gives the same values under the firmware's own limits", arguments: Replay.all)
    func firmwareLimits(_ replay: Replay) {
        let got = replayed(replay.fragments, replay, limits: AttributeLimits())
        #expect(got.outcomes.last == replay.finalOutcome)
        checkValues(got.r, replay)
    }

    @Test("zero-length tuples as iOS sends them are received, empty, and count towards completion")
    func zeroLengthTuples() {
        let cases: [(String, Int, NotificationAttributeID)] = [
            ("pebble-sms-0x98-single", 0, .subtitle),
            ("pebble-sms-0x1a-2015", 0, .positiveActionLabel),
            ("pebble-mms-0x1f-empty-message", 0, .message),
            ("pebble-three-responses-back-to-back", 0, .date),
            ("pebble-three-responses-back-to-back", 2, .date),
            ("esp32-podcasts-0x17-one-attribute-per-request", 1, .title),
        ]
        for (name, index, id) in cases {
            let replay = Replay.named(name, index)
            let got = replayed(replay.fragments, replay)
            #expect(got.outcomes == [.complete(trailingBytesDropped: 0)], "\(name) \(id)")
            #expect(got.r.received(id) == true, "\(name) \(id)")
            #expect(got.r.declaredLength(id) == 0, "\(name) \(id)")
            #expect(got.r.bytes(id) == [], "\(name) \(id)")
        }
        // The incoming call ends on its empty Date: the response is complete
        // on the Date's length high byte, the last byte, and not before.
        let call = Replay.named("pebble-three-responses-back-to-back", 0).bytes
        let got = replayed([Array(call.dropLast()), [call.last!]], Replay.named("pebble-three-responses-back-to-back", 0))
        #expect(got.outcomes == [.needMore, .complete(trailingBytesDropped: 0)])
    }

    @Test("a buffer that ends right after an attribute ID keeps waiting for its length; the continuation completes it")
    func bufferEndsOnAttributeID() {
        let replay = Replay.named("pebble-mail-0xaa-buffer-ends-on-attribute-id")
        let buffer = replay.bytes
        #expect(buffer.count == 310 && buffer.last == NotificationAttributeID.date.rawValue)
        // As published, and as the two 155-byte notifications it most likely
        // was (the source does not show that split).
        for fragments in [[buffer], [Array(buffer[..<155]), Array(buffer[155...])]] {
            var got = replayed(fragments, replay)
            #expect(got.outcomes.allSatisfy { $0 == .needMore })
            #expect(got.r.isAwaiting == true)
            checkValues(got.r, replay)
            // The rest of the response was not published: this continuation
            // is made up (the Date's length, then a Date value).
            let continuation = le16(15) + Array("20141028T120000".utf8)
            #expect(got.r.feed(Array(continuation[..<1]).span) == .needMore, "between the two length bytes")
            #expect(got.r.feed(Array(continuation[1...]).span) == .complete(trailingBytesDropped: 0))
            #expect(got.r.bytes(.date) == Array("20141028T120000".utf8))
            #expect(got.r.bytes(.message).count == 200, "the values before the split are untouched")
        }
    }

    @Test("a split right after each attribute ID of every capture gives the same values")
    func splitAfterEachAttributeID() {
        for replay in Replay.all where replay.exchange.displayName == nil {
            // Offsets from the values the source shows: 5 header bytes, then
            // 3 + length per tuple.
            var offset = 5
            for (id, text) in replay.exchange.values {
                let cut = offset + 1
                #expect(replay.bytes[offset] == id.rawValue)
                let got = replayed(split(replay.bytes, at: [cut]), replay)
                #expect(got.outcomes == [.needMore, replay.finalOutcome], "\(replay.testDescription) cut at \(cut)")
                checkValues(got.r, replay, "cut at \(cut)")
                offset += 3 + text.utf8.count
            }
        }
    }

    @Test("a tuple the request did not ask for is skipped and counted, and the response still completes")
    func unrequestedTuples() {
        // No capture has a tuple its request did not ask for (the requests
        // were not published and a response answers its request): these
        // replay real responses against a request without one of the
        // attributes they carry.
        let ringly = Replay.named("ringly-sms-0x14-gna-plus-gaa", 0)
        var got = replayed(ringly.fragments, ringly, expecting: .notificationAttributes(
            uid: 0x14, attributes: NotificationAttributeSet.all.subtracting(.messageSize)))
        #expect(got.outcomes == [.complete(trailingBytesDropped: 0)])
        #expect(got.r.skippedTupleCount == 1)
        #expect(got.r.received(.messageSize) == false)
        #expect(got.r.bytes(.negativeActionLabel) == Array("Clear".utf8), "the tuples after the skipped one")

        let sms = Replay.named("pebble-sms-0x1a-2015")
        got = replayed(sms.fragments, sms, expecting: .notificationAttributes(
            uid: 0x1A, attributes: [.negativeActionLabel, .appIdentifier, .title, .subtitle, .message, .date]))
        #expect(got.outcomes == [.complete(trailingBytesDropped: 0)])
        #expect(got.r.skippedTupleCount == 1, "the empty PositiveActionLabel")
        #expect(got.r.bytes(.title) == Array("Francois Baldassari".utf8))

        // Overcast's MessageSize comes after everything else: a request
        // without it completes at the Message, and the tuple after it is
        // counted as dropped bytes.
        let overcast = Replay.named("pebble-overcast-0x3c-date-first-messagesize")
        got = replayed(overcast.fragments, overcast, expecting: .notificationAttributes(
            uid: 0x3C, attributes: [.title, .subtitle, .message, .date]))
        #expect(got.outcomes == [.complete(trailingBytesDropped: 6)])
        #expect(got.r.droppedByteCount == 6)
        #expect(got.r.received(.messageSize) == false)
    }

    @Test("a 2014 response without the PositiveActionLabel never completes a request that asked for it")
    func missingTupleKeepsWaiting() {
        // The 2014 Mail captures have no 06 tuple; whether it was asked is
        // not recorded. If it was, the response stays incomplete (the
        // session's watchdog ends it), rather than completing wrongly.
        let mail = Replay.named("pebble-mail-0x22-no-content-placeholder")
        let got = replayed(mail.fragments, mail, expecting: .notificationAttributes(
            uid: 0x22, attributes: [.appIdentifier, .title, .subtitle, .message, .date, .positiveActionLabel, .negativeActionLabel]))
        #expect(got.outcomes == [.needMore])
        #expect(got.r.isAwaiting == true)
        #expect(got.r.bytes(.subtitle) == Array("[JIRA] (PBL-8776) Error screen after log".utf8))
    }

    @Test("a value iOS cut at exactly the requested maximum, without an ellipsis, is kept whole and not flagged; one byte less is cut")
    func cutAtMaximumWithoutEllipsis() {
        let cases: [(String, NotificationAttributeID, Int)] = [
            ("pebble-mail-0x22-no-content-placeholder", .subtitle, 40),
            ("pebble-mail-0xaa-buffer-ends-on-attribute-id", .subtitle, 40),
            ("pebble-mail-0xaa-buffer-ends-on-attribute-id", .message, 200),
            ("pebble-sms-0x97-two-fragments", .message, 200),
        ]
        for (name, id, maximum) in cases {
            let replay = Replay.named(name)
            let expected = Array(replay.exchange.values.first { $0.0 == id }!.1.utf8)
            #expect(expected.count == maximum, "\(name): iOS sent exactly the maximum")
            var limits = replay.limits
            #expect(limits[id] == maximum)
            var got = replayed(replay.fragments, replay, limits: limits)
            #expect(got.outcomes.last == replay.finalOutcome)
            #expect(got.r.bytes(id) == expected, "\(name) \(id)")
            #expect(got.r.isTruncated(id) == false, "\(name) \(id)")
            #expect(got.r.truncatedValueCount == 0, "\(name) \(id)")
            limits[id] = maximum - 1
            got = replayed(replay.fragments, replay, limits: limits)
            #expect(got.outcomes.last == replay.finalOutcome, "a cut value does not disturb the rest")
            #expect(got.r.bytes(id) == Array(expected.prefix(maximum - 1)), "\(name) \(id)")
            #expect(got.r.isTruncated(id) == true, "\(name) \(id)")
            #expect(got.r.declaredLength(id) == maximum, "\(name) \(id)")
            #expect(got.r.truncatedValueCount == 1, "\(name) \(id)")
        }
    }

    @Test("a value iOS cut with a 3-byte ellipsis past a 40-byte maximum is cut to 40 and flagged; the tuple after it still arrives")
    func cutWithEllipsis() {
        let overcast = Replay.named("pebble-overcast-0x3c-date-first-messagesize")
        let message = Array("The Moth Podcast: Monica Cheru-Mpambawas\u{2026}".utf8)
        #expect(message.count == 43)
        for (limit, kept) in [(40, 40), (41, 41), (42, 42), (43, 43), (256, 43)] {
            var limits = AttributeLimits()
            limits[.message] = limit
            let got = replayed(overcast.fragments, overcast, limits: limits)
            #expect(got.outcomes == [.complete(trailingBytesDropped: 0)], "limit \(limit)")
            #expect(got.r.bytes(.message) == Array(message.prefix(kept)), "limit \(limit)")
            #expect(got.r.isTruncated(.message) == (kept < 43), "limit \(limit)")
            #expect(got.r.declaredLength(.message) == 43)
            #expect(got.r.bytes(.messageSize) == Array("113".utf8), "limit \(limit)")
            // Text made of a cut value ends before a partial character.
            #expect(UTF8Boundary.lastCompleteEnd(got.r.bytes(.message).span) == (kept < 43 ? 40 : 43))
        }
    }

    @Test("a Get App Attributes display name of multi-byte UTF-8 is kept by its byte length; a limit inside its last character cuts and flags it")
    func multiByteDisplayName() {
        let replay = Replay.named("pebble-app-attrs-utf8-beta")
        let name = Array("Pebble Time \u{03B2}".utf8)
        #expect(name.count == 14 && name.suffix(2) == [0xCE, 0xB2])
        var got = replayed(replay.fragments, replay)
        #expect(got.outcomes == [.complete(trailingBytesDropped: 0)])
        #expect(got.r.displayNameBytes == name)
        var limits = AttributeLimits()
        limits.displayNameBytes = 13
        got = replayed(replay.fragments, replay, limits: limits)
        #expect(got.outcomes == [.complete(trailingBytesDropped: 0)])
        #expect(got.r.displayNameBytes == Array(name.prefix(13)))
        #expect(got.r.isDisplayNameTruncated == true)
        #expect(UTF8Boundary.lastCompleteEnd(got.r.displayNameBytes.span) == 12)
        // The same answer for another app is dropped whole.
        got = replayed(replay.fragments, replay, expecting: .appAttributes(
            appIdentifier: AppIdentifier("com.apple.MobileSMS"), attributes: .displayName))
        #expect(got.outcomes == [.dropped(byteCount: 54, reason: .appIdentifierMismatch)])
    }

    @Test("three responses in one buffer: the awaited first completes and the rest is counted; a buffer starting with another UID is dropped whole")
    func threeResponsesInOneBuffer() {
        let capture = iosCaptures.first { $0.name == "pebble-three-responses-back-to-back" }!
        let buffer = capture.events[0]
        #expect(buffer.count == 255)
        let first = Replay(capture: capture, index: 0)
        var got = replayed([buffer], first)
        #expect(got.outcomes == [.complete(trailingBytesDropped: 173)])
        #expect(got.r.bytes(.title) == Array("Imm".utf8))
        #expect(got.r.droppedByteCount == 173)
        // A response starts a notification: the parser does not look for the
        // second response inside the buffer.
        let second = Replay(capture: capture, index: 1)
        got = replayed([buffer], second)
        #expect(got.outcomes == [.dropped(byteCount: 255, reason: .uidMismatch)])
        #expect(got.r.received(.title) == false)
        // The edited byte is kept as published.
        #expect(Replay(capture: capture, index: 2).exchange.values.contains { $0.0 == .appIdentifier && $0.1 == "com.apple.mobilephonX" })
    }
}
