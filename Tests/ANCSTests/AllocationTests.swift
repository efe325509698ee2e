// SPDX-License-Identifier: Apache-2.0
import ANCS
import AllocCounter
import Bounded
import Testing
import TestSupport

/// Unspecialised generic code in a debug build allocates where the shipped
/// (optimised) build does not, so counts are taken on the optimised build:
/// `make test` runs the suite with `-c release`.
@Suite("Steady state allocates nothing", .enabled(if: isOptimizedBuild, "allocation counts are measured on the optimized build that ships (swift test -c release)"))
struct AllocationTests {
    @Test("the allocation counter sees allocations (control)")
    func counterWorks() {
        final class Box { var value = 0 }
        var boxes: [Box] = []
        let perRound = allocationsPerRound(rounds: 10) { boxes.append(Box()) }
        #expect(perRound >= 1)
        #expect(boxes.count == 11)
    }

    @Test("Notification Source decoding allocates nothing")
    func decoding() {
        let pdu = hex("00 18 01 01 07 00 00 00")
        var sum: UInt32 = 0
        let perRound = allocationsPerRound {
            if let event = try? NotificationSourceEvent.decode(pdu.span) { sum &+= event.uid }
        }
        #expect(perRound == 0)
        #expect(sum == 7 * 501)
    }

    @Test("Data Source reassembly split at MTU 23 allocates nothing")
    func reassembly() {
        let response = notificationResponse(uid: 1, [
            (.appIdentifier, Array("com.apple.MobileSMS".utf8)), (.title, Array("Bob".utf8)),
            (.message, [UInt8](repeating: 0x6D, count: 400)),
        ])
        let fragments = split(response, at: Array(stride(from: 20, to: response.count, by: 20)))
        var reassembler = DataSourceReassembler(limits: AttributeLimits())
        var completed = 0
        let perRound = allocationsPerRound {
            reassembler.expect(.notificationAttributes(uid: 1, attributes: [.appIdentifier, .title, .message]))
            for f in fragments {
                if case .complete = reassembler.feed(f.span) { completed += 1 }
            }
        }
        #expect(perRound == 0)
        #expect(completed == 501)
    }

    @Test("a session's notification, fetch, action and app-name cycle allocates nothing")
    func sessionCycle() {
        var session = Session(config: SessionConfig())
        session.begin()
        var out = ByteBuffer(capacity: 512)
        let added = ns(.added, [.positiveAction], .social, uid: 42)
        let removed = ns(.removed, [], .social, uid: 42)
        let attributes = notificationResponse(uid: 42, [(.appIdentifier, Array("com.example.chat".utf8)), (.title, Array("Hi".utf8))])
        let app = appResponse("com.example.chat", displayName: Array("Chat".utf8))
        var completions = 0
        var appNameCompletions = 0
        let perRound = allocationsPerRound {
            // A new session each round: the name cache is emptied only by
            // `end()`, so without it every round after the first would find
            // the name cached and fetch nothing.
            session.end()
            session.begin()
            _ = session.receiveNotificationSource(added.span)
            _ = session.fetchAttributes(uid: 42, [.appIdentifier, .title])
            _ = session.encodeNextCommand(into: &out, maxLength: 182)
            _ = session.controlPointWriteAcknowledged(now: .zero)
            if case .completed(.attributesReceived) = session.receiveDataSource(attributes.span) { completions += 1 }
            let appIdentifier = AppIdentifier(session.attributeValue(.appIdentifier))
            if session.fetchAppName(appIdentifier) == .queued {
                _ = session.encodeNextCommand(into: &out, maxLength: 182)
                _ = session.controlPointWriteAcknowledged(now: .zero)
                if case .completed(.appNameReceived) = session.receiveDataSource(app.span) { appNameCompletions += 1 }
            }
            _ = session.performAction(uid: 42, .positive)
            _ = session.encodeNextCommand(into: &out, maxLength: 182)
            _ = session.controlPointWriteAcknowledged(now: .zero)
            _ = session.receiveNotificationSource(removed.span)
            _ = session.checkTimeout(now: .zero)
        }
        #expect(perRound == 0)
        #expect(completions == 501)
        #expect(appNameCompletions == 501)
        #expect(session.appName(for: AppIdentifier("com.example.chat"))?.text == "Chat")
    }

    @Test("session end and a new session allocate nothing")
    func sessionRestart() {
        var session = Session(config: SessionConfig())
        let added = ns(.added, [], .email, uid: 1)
        let perRound = allocationsPerRound {
            session.begin()
            _ = session.receiveNotificationSource(added.span)
            session.end()
        }
        #expect(perRound == 0)
    }
}
