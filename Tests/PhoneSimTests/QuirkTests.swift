// SPDX-License-Identifier: Apache-2.0
// Issue 10: the real-iPhone quirks, each reproduced by its scenario file in
// board/scenarios and run against the wearable core.

import ANCS
import Bounded
import Config
import Firmware
import PhoneSim
import Testing
import TestSupport

@Suite("Real-iPhone quirks: the board/scenarios files against the whole wearable core")
struct QuirkTests {
    @Test("reconnect flood: a replay without PreExisting never buzzes or fetches; a call in the window rings; the table keeps the newest")
    func reconnectFloodIsReplay() {
        var rig = WearableLoopback(scenario: "reconnect-flood.scn")
        let vibration = rig.output("vibration")
        let ledNotify = rig.output("led-notify")
        let ledCall = rig.output("led-call")
        rig.connect()
        rig.run(forMs: 100)
        #expect(rig.core.phone.state == .live)

        // All 200 replayed, none flagged: the phone played the quirk.
        let replay = rig.added.filter { $0.uid < 3000 }
        #expect(replay.count == 200)
        #expect(replay.allSatisfy { !$0.flags.contains(.preExisting) })
        // The table's full policy kept the newest 64 (the Email block's end).
        #expect(rig.core.phone.session.table.count == 64)
        let newestKept = rig.core.phone.session.table.record(uid: 2079)
        #expect(newestKept != nil)
        let oldestKept = rig.core.phone.session.table.record(uid: 1000)
        #expect(oldestKept == nil)

        // 500 ms after subscribing, a message: inside the window, so replay.
        let messageCame = rig.run(untilMs: 2_000) { $0.sawAdded(3000) }
        #expect(messageCame)
        let vibrationChanges = rig.lineChanges.filter { $0.line == vibration }.count
        #expect(vibrationChanges == 0, "nothing buzzed for the replay or the message")
        let messageSilent = !rig.core.isAlerting(uid: 3000, output: vibration)
        #expect(messageSilent, "the message inside the window is replay")
        let messageDark = !rig.core.isAlerting(uid: 3000, output: ledNotify)
        #expect(messageDark)
        // 500 ms later a call: it rings though the window is still open.
        let callCame = rig.run(untilMs: 1_000) { $0.sawAdded(3001) }
        #expect(callCame)
        let callLit = rig.core.isAlerting(uid: 3001, output: ledCall)
        #expect(callLit)
        let callBuzzes = rig.core.isAlerting(uid: 3001, output: vibration)
        #expect(callBuzzes)
        #expect(rig.core.counters.unflaggedReplays == 201)
        // No Get Notification Attributes for the replay or the early message.
        #expect(!rig.attributeFetches.contains { $0 < 3001 })

        // After the window, an email alerts as usual.
        let emailCame = rig.run(untilMs: 4_000) { $0.sawAdded(3002) }
        #expect(emailCame)
        let emailFlickers = rig.core.isAlerting(uid: 3002, output: ledNotify)
        #expect(emailFlickers)
        #expect(rig.core.counters.unflaggedReplays == 201)
        #expect(rig.phoneEvents.contains(.scenarioFinished(ok: true)))
    }

    @Test("a flagged replay is replay whenever it comes; an unflagged notification after the window alerts")
    func replayWindowBoundary() {
        var rig = WearableLoopback(scenario: nil)
        let ledNotify = rig.output("led-notify")
        rig.connect()
        rig.run(forMs: 100)
        #expect(rig.core.phone.state == .live)
        rig.phone.postForTest("message \"A\" \"in window\" uid=10", now: rig.now)
        rig.settle()
        let earlyDark = !rig.core.isAlerting(uid: 10, output: ledNotify)
        #expect(earlyDark)
        rig.run(forMs: 3_000)
        rig.phone.postForTest("message \"B\" \"after window\" uid=11", now: rig.now)
        rig.settle()
        let lateFlickers = rig.core.isAlerting(uid: 11, output: ledNotify)
        #expect(lateFlickers)
        #expect(rig.core.counters.unflaggedReplays == 1)
    }

    @Test("Forget This Device: the phone drops its bond and hangs up; at reconnection it pairs afresh and the session comes back")
    func forgottenBondPairsAgain() {
        var rig = WearableLoopback(scenario: "forgot-wearable.scn")
        let ledCall = rig.output("led-call")
        rig.connect()
        rig.run(forMs: 500)
        #expect(rig.core.phone.state == .live)
        rig.run(forMs: 1_000)
        #expect(rig.core.phone.state == .disconnected)
        #expect(rig.phone.isBonded == false)
        // Reconnected at 3 500 ms as the bonded phone the wearable takes it
        // for: asked for security after bondedEncryptionWaitMs, it pairs.
        rig.run(forMs: 4_000)
        #expect(rig.core.phone.state == .live)
        #expect(rig.phoneEvents.filter { $0 == .pairingStarted }.count == 2, "paired at first contact and again after forgetting")
        #expect(rig.phoneEvents.filter { $0 == .secured(newlyPaired: true) }.count == 2)
        #expect(rig.phone.isBonded == true)
        let callLit = rig.core.isAlerting(uid: 1, output: ledCall)
        #expect(callLit)
        #expect(rig.phoneEvents.contains(.scenarioFinished(ok: true)))
    }

    @Test("long command at MTU 23: an app rule fetches the call's app identifier, the wearable asks its name (24 bytes) as a long write, and caches it")
    func appNameAtMTU23IsALongWrite() throws {
        let policy = try PolicyConfig.parse(
            readRepositoryFile("board/policy.conf") + "\nrule app=com.apple.mobilephone category=IncomingCall led-call=call-flash\n",
            board: simBoard)
        var rig = WearableLoopback(scenario: "long-command-mtu23.scn") { $0.policy = policy }
        let ledCall = rig.output("led-call")
        rig.connect()
        let callCame = rig.run(untilMs: 3_000) { $0.sawAdded(1) }
        #expect(callCame)
        rig.run(forMs: 50)
        #expect(rig.events.contains(.link(.mtu(23))))
        // Get App Attributes "com.apple.mobilephone" DisplayName: 24 bytes,
        // as Prepare Writes of 18 + 6 at offsets 0 and 18, then Execute Write.
        let prepares = rig.trace.filter { $0.hasPrefix("W> 16 15 00") }
        #expect(prepares.count == 2)
        #expect(prepares.first?.hasPrefix("W> 16 15 00 00 00 01 63 6F 6D") == true)
        #expect(prepares.last?.hasPrefix("W> 16 15 00 12 00") == true)
        #expect(rig.trace.contains("W> 18 01"))
        #expect(!rig.trace.contains("W> 18 00"), "nothing cancelled")
        let app = AppIdentifier("com.apple.mobilephone")
        let name = rig.core.phone.session.appName(for: app)
        #expect(name == AppDisplayName("Phone"))
        #expect(rig.events.contains(.link(.command(.appNameReceived(app)))))
        let ruleFlashes = rig.core.isAlerting(uid: 1, output: ledCall)
        #expect(ruleFlashes, "the rule's alert plays once the app identifier arrived")
        // A second call from the same app: the name is cached, no second ask.
        try rig.phone.run("call \"Bob\" uid=2", now: rig.now)
        rig.run(forMs: 100)
        #expect(rig.trace.filter { $0.hasPrefix("W> 16 15 00") }.count == 2)
    }
}

extension PhoneCore {
    /// A scenario line typed into the phone; traps if it does not parse.
    mutating func postForTest(_ line: String, now: Instant) {
        do { try run(line, now: now) } catch { preconditionFailure("\(line): \(error.kind)") }
    }
}
