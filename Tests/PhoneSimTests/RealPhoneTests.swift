// SPDX-License-Identifier: Apache-2.0
// What real iPhones do that the earlier simulated phones never did (issue
// 14): a call that is ringing when a session starts, a Notification Source
// that dies while the Control Point answers, and Data Source responses lost
// in reconnect churn. Each runs the whole wearable core against the
// simulated phone on a virtual clock.

import ANCS
import Bounded
import Config
import Firmware
import MemoryPlatform
import Platform
import PhoneSim
import Testing
import TestSupport

extension WearableLoopback {
    /// A short press of `button`: down, and up 100 ms later (a short press is
    /// reported at the release).
    mutating func press(_ button: String) {
        guard let b = simBoard.buttonIndex(named: button) else { preconditionFailure("no button \(button)") }
        runner.platform.queue(.edge(button: b, pressed: true, at: now))
        settle()
        run(forMs: 100)
        runner.platform.queue(.edge(button: b, pressed: false, at: now))
        settle()
    }

    /// The Control Point writes (Write Requests to handle 0x0015 of the
    /// phone's database), as hex of the value.
    var controlPointWrites: [String] {
        trace.compactMap { $0.hasPrefix("W> 12 15 00 ") ? String($0.dropFirst("W> 12 15 00 ".count)) : nil }
    }

    var linkEvents: [LinkEvent] { events.compactMap { if case .link(let e) = $0 { e } else { nil } } }

    /// The times (ms) `output` was switched on or off, in order.
    func changeTimes(_ output: Int) -> [Int64] { lineChanges.filter { $0.line == output }.map { $0.atMs } }
}

@Suite("Real iPhones: ringing replays, a dead Notification Source, lost responses")
struct RealPhoneTests {
    // MARK: 1. A call that is ringing when the session starts rings

    @Test("connect mid-call: the call in the PreExisting replay rings on its outputs and accept answers it")
    func connectMidCallRings() {
        var rig = WearableLoopback(scenario: nil)
        let ledCall = rig.output("led-call")
        let vibration = rig.output("vibration")
        rig.phone.postForTest("call \"Bob\" uid=7", now: rig.now)
        rig.connect()
        rig.run(forMs: 200)
        #expect(rig.core.phone.state == .live)
        let call = rig.added.first { $0.uid == 7 }
        #expect(call?.flags.contains(.preExisting) == true, "the call came in the replay")
        let lit = rig.core.isAlerting(uid: 7, output: ledCall)
        let buzzing = rig.core.isAlerting(uid: 7, output: vibration)
        #expect(lit && buzzing)
        #expect(rig.core.counters.unflaggedReplays == 0)
        rig.press("accept")
        #expect(rig.controlPointWrites.last == "02 07 00 00 00 00")
        rig.run(forMs: 100)
        let stopped = !rig.core.isAlerting(uid: 7, output: ledCall)
        #expect(stopped == true, "the phone removed the answered call")
    }

    @Test("an Important call replayed mid-call rings with the call's Important patterns")
    func replayedImportantCallIsLouder() {
        var rig = WearableLoopback(scenario: nil)
        let vibration = rig.output("vibration")
        rig.phone.postForTest("call \"Bob\" uid=7 flags=important,positive,negative", now: rig.now)
        rig.connect()
        rig.run(forMs: 3_000)
        // ring-strong: on 1000 off 200.
        let times = rig.changeTimes(vibration)
        #expect(times.count >= 4)
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        #expect(gaps.prefix(3) == [1_000, 200, 1_000])
    }

    @Test("other PreExisting notifications in the same replay stay quiet")
    func otherReplayStaysQuiet() {
        var rig = WearableLoopback(scenario: nil)
        let ledNotify = rig.output("led-notify")
        let vibration = rig.output("vibration")
        rig.phone.postForTest("message \"Alice\" \"hi\" uid=3", now: rig.now)
        rig.phone.postForTest("call \"Bob\" uid=7", now: rig.now)
        rig.connect()
        rig.run(forMs: 200)
        let messageQuiet = !rig.core.isAlerting(uid: 3, output: ledNotify) && !rig.core.isAlerting(uid: 3, output: vibration)
        #expect(messageQuiet == true)
        let callRings = rig.core.isAlerting(uid: 7, output: vibration)
        #expect(callRings == true)
    }

    @Test("reconnection mid-call: the link drops while the call rings; the call in the new session's replay rings again")
    func reconnectMidCallRings() {
        var rig = WearableLoopback(scenario: nil)
        let ledCall = rig.output("led-call")
        rig.connect()
        rig.run(forMs: 3_200)
        rig.phone.postForTest("call \"Bob\" uid=7", now: rig.now)
        rig.run(forMs: 100)
        let ringing = rig.core.isAlerting(uid: 7, output: ledCall)
        #expect(ringing == true)
        rig.runner.platform.queue(.disconnected(reason: "peer-closed"))
        rig.phone.linkDown(reason: "peer-closed", now: rig.now)
        rig.settle()
        let silentWhileDown = !rig.core.isAlerting(uid: 7, output: ledCall) && !rig.core.level(of: ledCall)
        #expect(silentWhileDown == true, "a link that goes down stops the ring at once")
        rig.run(forMs: 500)
        rig.connect()
        rig.run(forMs: 200)
        let replayed = rig.added.last { $0.uid == 7 }
        #expect(replayed?.flags.contains(.preExisting) == true)
        let ringsAgain = rig.core.isAlerting(uid: 7, output: ledCall)
        #expect(ringsAgain == true)
    }

    @Test("Service Changed mid-call: the session restarts, the replay confirms the call, and the ring plays on without a gap or a restart")
    func serviceChangedMidCallKeepsRinging() {
        var rig = WearableLoopback(scenario: nil)
        let ledCall = rig.output("led-call")
        rig.connect()
        rig.run(forMs: 3_200)
        rig.phone.postForTest("call \"Bob\" uid=7", now: rig.now)
        rig.run(forMs: 1_250)
        rig.phone.postForTest("service-changed", now: rig.now)
        var alwaysRinging = true
        for _ in 0..<30 {
            rig.run(forMs: 10)
            if !rig.core.isAlerting(uid: 7, output: ledCall) { alwaysRinging = false }
        }
        #expect(alwaysRinging == true, "the lasting alert was carried over the restart")
        #expect(rig.linkEvents.contains(.ended(reason: .serviceChanged)))
        #expect(rig.linkEvents.filter { $0 == .subscribed }.count == 2)
        let replayed = rig.added.last { $0.uid == 7 }
        #expect(replayed?.flags.contains(.preExisting) == true)
        rig.run(forMs: 4_000)
        let stillRinging = rig.core.isAlerting(uid: 7, output: ledCall)
        #expect(stillRinging == true, "confirmed by the replay: it outlives the replay window")
        // ring: on 600 off 400, from the call's arrival, never restarted.
        let times = rig.changeTimes(ledCall)
        let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
        #expect(gaps.count >= 8)
        let onTheBeat = gaps.enumerated().allSatisfy { $0.offset % 2 == 0 ? $0.element == 600 : $0.element == 400 }
        #expect(onTheBeat == true, "led-call changes \(gaps)")
        rig.press("accept")
        #expect(rig.controlPointWrites.last == "02 07 00 00 00 00")
    }

    @Test("a call that ended while the session restarted stops when the new replay does not bring it back")
    func callEndedDuringRestartStops() {
        var rig = WearableLoopback(scenario: nil)
        let ledCall = rig.output("led-call")
        let vibration = rig.output("vibration")
        rig.connect()
        rig.run(forMs: 3_200)
        rig.phone.postForTest("call \"Bob\" uid=7", now: rig.now)
        rig.run(forMs: 100)
        rig.phone.postForTest("remove-ancs", now: rig.now)
        rig.run(forMs: 100)
        #expect(rig.core.phone.state == .ancsAbsent)
        let carried = rig.core.isAlerting(uid: 7, output: ledCall)
        #expect(carried == true, "carried while the session is away")
        rig.phone.postForTest("remove 7", now: rig.now)
        rig.phone.postForTest("add-ancs", now: rig.now)
        rig.run(forMs: 100)
        #expect(rig.core.phone.state == .live)
        #expect(!rig.added.contains { $0.uid == 7 && $0.flags.contains(.preExisting) })
        let waiting = rig.core.isAlerting(uid: 7, output: ledCall)
        #expect(waiting == true, "the replay window has not closed yet")
        rig.run(forMs: 3_000)
        let stopped = !rig.core.isAlerting(uid: 7, output: ledCall) && !rig.core.isAlerting(uid: 7, output: vibration)
        #expect(stopped == true)
        let linesOff = !rig.core.level(of: ledCall) && !rig.core.level(of: vibration)
        #expect(linesOff)
    }

    @Test("a ring carried over a restart that never subscribes again stops after carriedRingMaxMs")
    func carriedRingIsBounded() {
        var rig = WearableLoopback(scenario: nil)
        let ledCall = rig.output("led-call")
        rig.connect()
        rig.run(forMs: 3_200)
        rig.phone.postForTest("call \"Bob\" uid=7", now: rig.now)
        rig.run(forMs: 100)
        rig.phone.postForTest("remove-ancs", now: rig.now)
        // ANCS stays absent on the encrypted link: discovery is tried again
        // after 2 s and 4 s, then the link ends, and the carried ring with
        // it; carriedRingMaxMs bounds it in any case.
        rig.run(forMs: 1_000)
        let carried = rig.core.isAlerting(uid: 7, output: ledCall)
        #expect(carried == true)
        rig.run(forMs: 9_100)
        let stopped = !rig.core.isAlerting(uid: 7, output: ledCall) && !rig.core.level(of: ledCall)
        #expect(stopped == true)
    }

    // MARK: 2. Notification Source silently dead while the Control Point answers

    @Test("silent-ns-dead.scn: the keep-alive probe is answered, yet after resubscribeQuietMs without Notification Source the wearable writes its CCCD off and on; the replay brings the missed message quietly")
    func deadNotificationSourceIsResubscribed() {
        var rig = WearableLoopback(scenario: "silent-ns-dead.scn") {
            $0.link.keepAliveQuietMs = 20_000
            $0.link.resubscribeQuietMs = 60_000
        }
        let ledNotify = rig.output("led-notify")
        let vibration = rig.output("vibration")
        rig.connect()
        let aliceCame = rig.run(untilMs: 1_000) { $0.sawAdded(1) }
        #expect(aliceCame == true)
        rig.run(forMs: 50_000)
        #expect(rig.phoneEvents.contains(.dropped(what: "notification-source", reason: "ns-dead")), "Bob's message was withheld")
        #expect(rig.linkEvents.filter { $0 == .command(.probeAnswered) }.count == 2, "the probe says all is well")
        #expect(!rig.linkEvents.contains(.ended(reason: .notificationSourceSilent)))
        rig.run(forMs: 12_000)
        #expect(rig.linkEvents.filter { $0 == .ended(reason: .notificationSourceSilent) }.count == 1)
        #expect(rig.core.phone.counters.silenceResubscriptions == 1)
        // Notification Source off, then on; Data Source left alone; the link stays.
        let cccdWrites = rig.trace.filter { $0.hasPrefix("W> 12 13 00") || $0.hasPrefix("W> 12 18 00") }
        #expect(Array(cccdWrites.suffix(2)) == ["W> 12 13 00 00 00", "W> 12 13 00 01 00"])
        #expect(cccdWrites.filter { $0 == "W> 12 13 00 00 00" }.count == 1)
        #expect(cccdWrites.lastIndex { $0.hasPrefix("W> 12 18 00") }! < cccdWrites.count - 2, "Data Source is not written again")
        #expect(rig.core.phone.state == .live)
        #expect(!rig.events.contains { if case .link(.ended(let r)) = $0 { r != .notificationSourceSilent } else { false } })
        let bob = rig.added.first { $0.uid == 2 }
        #expect(bob?.flags.contains(.preExisting) == true, "the replay brings Bob's message, quietly")
        let bobQuiet = !rig.core.isAlerting(uid: 2, output: vibration)
        #expect(bobQuiet == true)
        let carolCame = rig.run(untilMs: 10_000) { $0.sawAdded(3) }
        #expect(carolCame == true)
        let carolAlerts = rig.core.isAlerting(uid: 3, output: ledNotify)
        #expect(carolAlerts == true, "after the replay window a new message alerts as usual")
        #expect(rig.phoneEvents.contains(.scenarioFinished(ok: true)) == true)
    }

    @Test("Notification Source traffic keeps the resubscription away")
    func trafficDefersResubscription() {
        var rig = WearableLoopback(scenario: nil) { $0.link.resubscribeQuietMs = 60_000 }
        rig.connect()
        for uid in UInt32(1)...4 {
            rig.run(forMs: 40_000)
            rig.phone.postForTest("email \"Ann\" \"Report\" uid=\(uid)", now: rig.now)
        }
        rig.run(forMs: 50_000)
        #expect(rig.core.phone.counters.silenceResubscriptions == 0)
        rig.run(forMs: 11_000)
        #expect(rig.core.phone.counters.silenceResubscriptions == 1)
    }

    @Test("a resubscription the phone refuses (sharing withdrawn) waits for permission at the usual back-off, on the same link")
    func refusedResubscriptionWaitsForPermission() {
        var rig = WearableLoopback(scenario: nil) { $0.link.resubscribeQuietMs = 60_000 }
        rig.connect()
        rig.run(forMs: 100)
        rig.phone.postForTest("ns-dead", now: rig.now)
        rig.phone.postForTest("share off", now: rig.now)
        rig.run(forMs: 60_100)
        #expect(rig.linkEvents.contains(.ended(reason: .notificationSourceSilent)))
        #expect(rig.linkEvents.contains(.permissionWaiting(retryInMs: 5_000)) == true)
        #expect(rig.core.phone.state == .waitingForPermission)
        rig.phone.postForTest("share on", now: rig.now)
        rig.run(forMs: 5_100)
        #expect(rig.core.phone.state == .live)
        #expect(rig.linkEvents.filter { $0 == .subscribed }.count == 2)
        #expect(!rig.linkEvents.contains { if case .ended(let r) = $0 { r != .notificationSourceSilent } else { false } })
    }

    // MARK: 3. An answer press never waits behind a lost Data Source response

    @Test("a fetch acknowledged and never answered: accept on the ringing call is written in the same step as the release, while the fetch waits for its watchdog")
    func answerDoesNotWaitForLostResponse() throws {
        let policyText = readRepositoryFile("board/policy.conf") + "\npattern sms-flash on 1200\nrule category=Social app=com.apple.MobileSMS led-call=sms-flash\n"
        let policy = try PolicyConfig.parse(policyText, board: simBoard)
        var rig = WearableLoopback(scenario: nil) { $0.policy = policy }
        let ledCall = rig.output("led-call")
        rig.connect()
        rig.run(forMs: 3_200)
        rig.phone.postForTest("lose-response", now: rig.now)
        rig.phone.postForTest("message \"Alice\" \"hi\" uid=3", now: rig.now)
        rig.run(forMs: 50)
        #expect(rig.attributeFetches == [3])
        #expect(rig.phoneEvents.contains(.dropped(what: "data-source", reason: "lost")))
        #expect(rig.core.phone.session.hasCommandInFlight == true, "the fetch waits for its response")
        rig.phone.postForTest("call \"Bob\" uid=4", now: rig.now)
        rig.run(forMs: 50)
        let ringing = rig.core.isAlerting(uid: 4, output: ledCall)
        #expect(ringing == true)
        guard let accept = simBoard.buttonIndex(named: "accept") else { preconditionFailure("no accept button") }
        rig.input(.edge(button: accept, pressed: true, at: rig.now))
        rig.run(forMs: 100)
        let writesBefore = rig.controlPointWrites.count
        rig.input(.edge(button: accept, pressed: false, at: rig.now))
        #expect(Array(rig.controlPointWrites.dropFirst(writesBefore)) == ["02 04 00 00 00 00"], "written with no time passing")
        #expect(rig.core.phone.session.hasCommandInFlight == true, "the fetch still waits")
        rig.run(forMs: 100)
        let answered = !rig.core.isAlerting(uid: 4, output: ledCall)
        #expect(answered == true)
        #expect(rig.events.contains(.action(uid: 4, action: .positive, result: .sent)) == true)
        // The fetch gives up at its watchdog; the next fetch goes after it.
        rig.run(forMs: 10_000)
        #expect(rig.linkEvents.contains(.command(.failed(.getNotificationAttributes(uid: 3, attributes: .appIdentifier), .timedOut))) == true)
        rig.phone.postForTest("message \"Carol\" \"again\" uid=5", now: rig.now)
        rig.run(forMs: 50)
        #expect(rig.attributeFetches == [3, 5])
    }

    // MARK: 8. Counts stay true when the phone answers 0xA2

    @Test("0xA2 on an action removes the notification as a Removed would: its category count falls and the unread indicator follows")
    func invalidUIDKeepsCountsTrue() {
        var rig = WearableLoopback(scenario: nil)
        let ledNotify = rig.output("led-notify")
        rig.connect()
        rig.run(forMs: 3_200)
        rig.phone.postForTest("message \"Alice\" \"hi\" uid=3", now: rig.now)
        rig.run(forMs: 3_000)
        #expect(rig.core.level(of: ledNotify) == true, "unread: one Social notification")
        rig.phone.postForTest("error 0xA2", now: rig.now)
        rig.press("reject")
        rig.run(forMs: 50)
        #expect(rig.controlPointWrites.last == "02 03 00 00 00 01")
        let removed = rig.linkEvents.contains {
            if case .notification(.removed(let r)) = $0 { return r.uid == 3 && r.categoryCount == 0 }
            return false
        }
        #expect(removed == true)
        #expect(rig.core.phone.counters.removedByInvalidUID == 1)
        rig.run(forMs: 3_000)
        #expect(rig.core.level(of: ledNotify) == false, "the unread indicator went out with it")
    }
}
