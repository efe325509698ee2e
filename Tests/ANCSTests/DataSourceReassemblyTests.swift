// SPDX-License-Identifier: Apache-2.0
import ANCS
import Bounded
import Testing
import TestSupport

/// What a reassembler made of a sequence of fragments, comparable across splits.
struct ReassemblyResult: Equatable {
    var outcomes: [DataSourceReassembler.Outcome]
    var values: [NotificationAttributeID: [UInt8]]
    var truncated: Set<NotificationAttributeID>
    var displayName: [UInt8]
}

func reassemble(_ fragments: [[UInt8]], expecting expectation: DataSourceReassembler.Expectation, limits: AttributeLimits = AttributeLimits()) -> ReassemblyResult {
    var r = DataSourceReassembler(limits: limits)
    r.expect(expectation)
    var outcomes: [DataSourceReassembler.Outcome] = []
    for f in fragments { outcomes.append(r.feed(f.span)) }
    var values: [NotificationAttributeID: [UInt8]] = [:]
    var truncated = Set<NotificationAttributeID>()
    for id in NotificationAttributeID.allCases where r.received(id) {
        values[id] = r.bytes(id)
        if r.isTruncated(id) { truncated.insert(id) }
    }
    return ReassemblyResult(outcomes: outcomes, values: values, truncated: truncated, displayName: r.displayNameBytes)
}

/// Splits `bytes` at the given cut positions.
func split(_ bytes: [UInt8], at cuts: [Int]) -> [[UInt8]] {
    var pieces: [[UInt8]] = []
    var start = 0
    for cut in cuts.sorted() where cut > start && cut < bytes.count {
        pieces.append(Array(bytes[start..<cut]))
        start = cut
    }
    pieces.append(Array(bytes[start...]))
    return pieces
}

@Suite("Data Source reassembly")
struct DataSourceReassemblyTests {
    static let uid: UInt32 = 0x0000_2A01
    static let requested: NotificationAttributeSet = [.appIdentifier, .title, .message, .date, .positiveActionLabel]
    static let response = notificationResponse(uid: uid, [
        (.appIdentifier, Array("com.apple.MobileSMS".utf8)),
        (.title, Array("Alice".utf8)),
        (.message, Array("Lunch at noon? \u{1F37D}".utf8)),
        (.date, Array("20261129T120000".utf8)),
        (.positiveActionLabel, []),
    ])
    static let expectation = DataSourceReassembler.Expectation.notificationAttributes(uid: uid, attributes: requested)

    @Test("a response in one fragment completes with every value in place")
    func wholeResponse() {
        let result = reassemble([Self.response], expecting: Self.expectation)
        #expect(result.outcomes == [.complete(trailingBytesDropped: 0)])
        #expect(result.values[.appIdentifier] == Array("com.apple.MobileSMS".utf8))
        #expect(result.values[.title] == Array("Alice".utf8))
        #expect(result.values[.message] == Array("Lunch at noon? \u{1F37D}".utf8))
        #expect(result.values[.date] == Array("20261129T120000".utf8))
        #expect(result.values[.positiveActionLabel] == [])
        #expect(result.truncated.isEmpty)
    }

    @Test("a Get Notification Attributes response split at every position gives the same result")
    func everySplitPoint() {
        let whole = reassemble([Self.response], expecting: Self.expectation)
        for cut in 1..<Self.response.count {
            let result = reassemble(split(Self.response, at: [cut]), expecting: Self.expectation)
            #expect(result.outcomes == [.needMore, .complete(trailingBytesDropped: 0)], "cut at \(cut)")
            #expect(result.values == whole.values, "cut at \(cut)")
        }
    }

    @Test("a response split at every pair of positions gives the same result")
    func everyPairOfSplitPoints() {
        let whole = reassemble([Self.response], expecting: Self.expectation)
        for a in 1..<Self.response.count {
            for b in (a + 1)..<Self.response.count {
                let result = reassemble(split(Self.response, at: [a, b]), expecting: Self.expectation)
                #expect(result.outcomes.last == .complete(trailingBytesDropped: 0))
                #expect(result.values == whole.values)
            }
        }
    }

    @Test("a response fed byte by byte completes exactly on its last byte")
    func byteByByte() {
        let result = reassemble(Self.response.map { [$0] }, expecting: Self.expectation)
        #expect(result.outcomes.dropLast().allSatisfy { $0 == .needMore })
        #expect(result.outcomes.last == .complete(trailingBytesDropped: 0))
        #expect(result.values == reassemble([Self.response], expecting: Self.expectation).values)
    }

    @Test("a response split inside a length field completes")
    func splitInsideLength() {
        // 00 UID(4) 00 [len lo | len hi] ...: cut between the two length bytes.
        let cut = 1 + 4 + 1 + 1
        let result = reassemble(split(Self.response, at: [cut]), expecting: Self.expectation)
        #expect(result.outcomes == [.needMore, .complete(trailingBytesDropped: 0)])
        #expect(result.values[.title] == Array("Alice".utf8))
    }

    @Test("a Get App Attributes response split at every position, including inside the app identifier, gives the same result")
    func appResponseEverySplit() {
        let app = AppIdentifier("com.example.chat")
        let response = appResponse("com.example.chat", displayName: Array("Chat".utf8))
        let expectation = DataSourceReassembler.Expectation.appAttributes(appIdentifier: app, attributes: .displayName)
        for cut in 1..<response.count {
            let result = reassemble(split(response, at: [cut]), expecting: expectation)
            #expect(result.outcomes == [.needMore, .complete(trailingBytesDropped: 0)], "cut at \(cut)")
            #expect(result.displayName == Array("Chat".utf8), "cut at \(cut)")
        }
        let bytewise = reassemble(response.map { [$0] }, expecting: expectation)
        #expect(bytewise.outcomes.last == .complete(trailingBytesDropped: 0))
        #expect(bytewise.displayName == Array("Chat".utf8))
    }

    @Test("a value longer than its limit is cut, flagged and counted, and the excess skipped without disturbing the next tuple")
    func oversizedValue() {
        var limits = AttributeLimits()
        limits[.title] = 8
        let longTitle = [UInt8](repeating: 0x41, count: 300)
        let response = notificationResponse(uid: 5, [(.title, longTitle), (.message, Array("ok".utf8))])
        let expectation = DataSourceReassembler.Expectation.notificationAttributes(uid: 5, attributes: [.title, .message])
        for cuts in [[], [10], [7, 100, 307], Array(stride(from: 3, to: response.count, by: 19))] {
            var r = DataSourceReassembler(limits: limits)
            r.expect(expectation)
            var last = DataSourceReassembler.Outcome.needMore
            for f in split(response, at: cuts) { last = r.feed(f.span) }
            #expect(last == .complete(trailingBytesDropped: 0))
            #expect(r.bytes(.title) == [UInt8](repeating: 0x41, count: 8))
            #expect(r.isTruncated(.title) == true)
            #expect(r.declaredLength(.title) == 300)
            #expect(r.bytes(.message) == Array("ok".utf8))
            #expect(r.truncatedValueCount == 1)
        }
    }

    @Test("a missing attribute has length 0 and still counts towards completion")
    func missingAttribute() {
        let response = notificationResponse(uid: 9, [(.title, []), (.subtitle, [])])
        let result = reassemble([response], expecting: .notificationAttributes(uid: 9, attributes: [.title, .subtitle]))
        #expect(result.outcomes == [.complete(trailingBytesDropped: 0)])
        #expect(result.values[.title] == [])
        #expect(result.values[.subtitle] == [])
    }

    @Test("tuples arriving in another order than requested still complete the response")
    func outOfOrderTuples() {
        let response = notificationResponse(uid: 9, [(.message, [0x6D]), (.title, [0x74])])
        let result = reassemble([response], expecting: .notificationAttributes(uid: 9, attributes: [.title, .message]))
        #expect(result.outcomes == [.complete(trailingBytesDropped: 0)])
        #expect(result.values == [.title: [0x74], .message: [0x6D]])
    }

    @Test("an unrequested or repeated tuple is skipped and counted, not stored")
    func unrequestedTupleSkipped() {
        var r = DataSourceReassembler(limits: AttributeLimits())
        r.expect(.notificationAttributes(uid: 3, attributes: [.title, .message]))
        let response = notificationResponse(uid: 3, [(.title, [1]), (.subtitle, [2, 2]), (.title, [3]), (.message, [4])])
        #expect(r.feed(response.span) == .complete(trailingBytesDropped: 0))
        #expect(r.bytes(.title) == [1])
        #expect(r.received(.subtitle) == false)
        #expect(r.skippedTupleCount == 2)
    }

    @Test("a response for another UID is dropped and the awaited response still completes after it")
    func wrongUID() {
        var r = DataSourceReassembler(limits: AttributeLimits())
        r.expect(.notificationAttributes(uid: 100, attributes: .title))
        let stale = notificationResponse(uid: 99, [(.title, Array("old".utf8))])
        #expect(r.feed(stale.span) == .dropped(byteCount: stale.count, reason: .uidMismatch))
        let good = notificationResponse(uid: 100, [(.title, Array("new".utf8))])
        #expect(r.feed(Array(good[0..<3]).span) == .needMore)
        #expect(r.feed(Array(good[3...]).span) == .complete(trailingBytesDropped: 0))
        #expect(r.bytes(.title) == Array("new".utf8))
        #expect(r.droppedByteCount == UInt64(stale.count))
    }

    @Test("a response for another app or with another CommandID is dropped")
    func wrongAppOrCommand() {
        var r = DataSourceReassembler(limits: AttributeLimits())
        r.expect(.appAttributes(appIdentifier: AppIdentifier("com.a"), attributes: .displayName))
        let otherApp = appResponse("com.ab", displayName: [0x41])
        #expect(r.feed(otherApp.span) == .dropped(byteCount: otherApp.count, reason: .appIdentifierMismatch))
        let shorter = appResponse("com", displayName: [0x41])
        #expect(r.feed(shorter.span) == .dropped(byteCount: shorter.count, reason: .appIdentifierMismatch))
        let notification = notificationResponse(uid: 1, [(.title, [1])])
        #expect(r.feed(notification.span) == .dropped(byteCount: notification.count, reason: .unexpectedCommandID(0)))
        #expect(r.feed(appResponse("com.a", displayName: [0x42]).span) == .complete(trailingBytesDropped: 0))
        #expect(r.displayNameBytes == [0x42])
    }

    @Test("garbage after completion is counted: trailing bytes in the same fragment and whole later fragments")
    func garbageAfterCompletion() {
        var r = DataSourceReassembler(limits: AttributeLimits())
        r.expect(.notificationAttributes(uid: 1, attributes: .title))
        let response = notificationResponse(uid: 1, [(.title, [0x41])]) + [0xEE, 0xEE, 0xEE]
        #expect(r.feed(response.span) == .complete(trailingBytesDropped: 3))
        #expect(r.feed([0x01, 0x02].span) == .dropped(byteCount: 2, reason: .noResponseExpected))
        #expect(r.droppedByteCount == 5)
        #expect(r.bytes(.title) == [0x41], "values survive garbage after completion")
    }

    @Test("a fragment with no request pending is dropped; abort makes later fragments unsolicited; the parser is reusable")
    func abortAndReuse() {
        var r = DataSourceReassembler(limits: AttributeLimits())
        #expect(r.feed([0x00].span) == .dropped(byteCount: 1, reason: .noResponseExpected))
        r.expect(.notificationAttributes(uid: 1, attributes: .title))
        let response = notificationResponse(uid: 1, [(.title, [0x41, 0x42])])
        #expect(r.feed(Array(response[0..<8]).span) == .needMore)
        r.abort()
        #expect(r.feed(Array(response[8...]).span) == .dropped(byteCount: response.count - 8, reason: .noResponseExpected))
        r.expect(.notificationAttributes(uid: 1, attributes: .title))
        #expect(r.feed(response.span) == .complete(trailingBytesDropped: 0))
        #expect(r.bytes(.title) == [0x41, 0x42])
    }

    @Test("random splits of random responses agree with the unsplit parse (seeded)")
    func randomSplits() {
        var rng = SplitMix64(seed: 0x5EED)
        for _ in 0..<300 {
            var tuples: [(NotificationAttributeID, [UInt8])] = []
            var set: NotificationAttributeSet = []
            for id in NotificationAttributeID.allCases where rng.next() % 2 == 0 {
                let length = Int(rng.next() % 300)
                tuples.append((id, (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }))
                set.insert(NotificationAttributeSet(id))
            }
            if tuples.isEmpty { continue }
            tuples.shuffle(using: &rng)
            let uid = UInt32(truncatingIfNeeded: rng.next())
            let response = notificationResponse(uid: uid, tuples)
            let expectation = DataSourceReassembler.Expectation.notificationAttributes(uid: uid, attributes: set)
            let whole = reassemble([response], expecting: expectation)
            let cuts = (0..<Int(rng.next() % 12)).map { _ in Int(rng.next() % UInt64(response.count)) }
            let pieces = reassemble(split(response, at: cuts), expecting: expectation)
            #expect(pieces.outcomes.last == .complete(trailingBytesDropped: 0))
            #expect(pieces.values == whole.values)
            #expect(pieces.truncated == whole.truncated)
        }
    }
}

