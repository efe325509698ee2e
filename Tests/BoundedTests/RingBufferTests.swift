// SPDX-License-Identifier: Apache-2.0
import Bounded
import Testing
import TestSupport

@Suite("RingBuffer")
struct RingBufferTests {
    @Test("drop-oldest keeps the newest elements in order and counts the drops")
    func dropOldest() {
        var ring = RingBuffer<Int>(capacity: 3, policy: .dropOldest)
        for i in 1...5 { ring.push(i) }
        #expect(ring.count == 3)
        #expect(ring.droppedCount == 2)
        #expect(ring.popFirst() == 3)
        #expect(ring.popFirst() == 4)
        #expect(ring.popFirst() == 5)
        #expect(ring.popFirst() == nil)
    }

    @Test("refuse-newest keeps what is queued, refuses and counts the newcomer")
    func refuseNewest() {
        var ring = RingBuffer<Int>(capacity: 2, policy: .refuseNewest)
        #expect(ring.push(1) == .stored)
        #expect(ring.push(2) == .stored)
        #expect(ring.push(3) == .refused)
        #expect(ring.droppedCount == 1)
        #expect(ring.first == 1)
        #expect(ring.last == 2)
    }

    @Test("drop-oldest hands back the element it discarded")
    func dropOldestReturnsVictim() {
        var ring = RingBuffer<Int>(capacity: 1, policy: .dropOldest)
        ring.push(7)
        guard case .droppedOldest(let victim) = ring.push(8) else {
            Issue.record("expected a drop")
            return
        }
        #expect(victim == 7)
    }

    @Test("FIFO order holds across many wrap-arounds")
    func wrapAround() {
        var ring = RingBuffer<Int>(capacity: 4, policy: .refuseNewest)
        var expected = 0
        var next = 0
        for round in 0..<100 {
            for _ in 0..<(round % 4 + 1) where !ring.isFull {
                ring.push(next)
                next += 1
            }
            while let v = ring.popFirst() {
                #expect(v == expected)
                expected += 1
                if v % 3 == 0 { break }
            }
        }
        #expect(ring.droppedCount == 0)
    }

    @Test("removeAll(where:) removes matches and keeps the rest in order across the wrap point")
    func removeWhere() {
        var ring = RingBuffer<Int>(capacity: 5, policy: .dropOldest)
        for i in 0..<8 { ring.push(i) }  // holds 3...7, wrapped
        #expect(ring.removeAll { $0 % 2 == 0 } == 2)
        #expect(ring.count == 3)
        #expect([ring[0], ring[1], ring[2]] == [3, 5, 7])
        ring.push(8)
        #expect(ring.last == 8)
    }

    @Test("elements with heap storage are released when the ring is emptied")
    func releasesElements() {
        final class Token {}
        weak var weakToken: Token?
        do {
            var ring = RingBuffer<Token>(capacity: 2, policy: .dropOldest)
            let token = Token()
            weakToken = token
            ring.push(token)
            ring.removeAll()
        }
        #expect(weakToken == nil)
    }
}

extension RingBuffer.PushOutcome: Equatable where Element: Equatable {
    public static func == (a: Self, b: Self) -> Bool {
        switch (a, b) {
        case (.stored, .stored), (.refused, .refused): true
        case let (.droppedOldest(x), .droppedOldest(y)): x == y
        default: false
        }
    }
}
