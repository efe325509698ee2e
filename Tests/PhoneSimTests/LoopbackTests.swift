// SPDX-License-Identifier: Apache-2.0
import ANCS
import ATT
import Bounded
import Firmware
import PhoneSim
import Testing
import TestSupport

@Suite("The simulated iPhone and the wearable's PhoneLink, back to back in memory")
struct LoopbackTests {
    /// A rig whose wearable is live (paired on the way), events cleared.
    func liveRig(phone: PhoneConfig = PhoneConfig(), script: String? = nil) -> Loopback {
        var rig = Loopback(phone: phone, script: script)
        rig.connect()
        rig.run(forMs: 1_000)
        return rig
    }

    @Test("bring-up: ANCS found on the unencrypted link, the wearable asks for security before any subscription; the phone pairs and the one Data Source CCCD write goes live")
    func bringUpPairsAndGoesLive() {
        var rig = Loopback()
        rig.connect()
        #expect(rig.state == .subscribingDataSource, "the write waits at the phone while pairing runs")
        #expect(rig.raises == 1)
        rig.run(forMs: 99)
        #expect(rig.state == .subscribingDataSource)
        rig.run(forMs: 1)
        #expect(rig.state == .live)
        #expect(rig.trace.filter { $0 == "W> 12 18 00 01 00" }.count == 1, "the Data Source CCCD write is sent once, after the raise")
        #expect(!rig.trace.contains("P> 01 12 18 00 05"), "never refused for want of security: nothing is subscribed unencrypted")
        #expect(rig.phone.counters.pdusHeldDuringPairing >= 1, "the write (and anything else the wearable sent) waited for pairing")
        #expect(rig.phone.isBonded == true)
        #expect(rig.ncEvents.contains(.secured))
        #expect(rig.ncEvents.contains(.subscribed))
        #expect(rig.ncEvents.contains(.mtu(185)))
        let pairing = rig.phoneEvents.filter { $0 == .pairingStarted || $0 == .secured(newlyPaired: true) }
        #expect(pairing == [.pairingStarted, .secured(newlyPaired: true)])
        for c in [PhoneCharacteristic.serviceChanged, .dataSource, .notificationSource] {
            #expect(rig.phoneEvents.contains(.subscribed(c)))
        }
    }

    @Test("the phone browses the wearable like iOS: services, Device Name, Service Changed subscription")
    func phoneBrowsesTheWearable() {
        let rig = liveRig()
        #expect(rig.phoneEvents.contains(.peerDiscovered(name: PeerName("Wristlink"), serviceCount: 2)))
        #expect(rig.trace.contains("P> 10 01 00 FF FF 00 28"))
        #expect(rig.trace.contains("P> 0A 03 00"))
        #expect(rig.trace.contains("P> 12 09 00 02 00"), "it subscribes to the wearable's Service Changed")
    }

    @Test("PreExisting replay: every existing notification arrives Added with the PreExisting flag, in UID order, with category counts")
    func preExistingReplay() {
        let rig = liveRig(script: """
            existing Social uid=5 app=com.apple.MobileSMS title="Alice" message="Lunch?"
            existing Email uid=2 title="Carol"
            existing Social uid=9 title="Dave"
            """)
        let added = rig.ncChanges.compactMap { if case .added(let r, nil) = $0 { r } else { nil } }
        #expect(added.map(\.uid) == [2, 5, 9])
        #expect(added.allSatisfy { $0.flags.contains(.preExisting) })
        #expect(added.map(\.category) == [.email, .social, .social])
        #expect(added.map(\.categoryCount) == [1, 2, 2])
        #expect(rig.phoneEvents.contains(.replayFinished(count: 3)))
    }

    @Test("an incoming call; the wearer answers: the phone logs 02 UID 00, removes the call, the wearable sees Removed after the acknowledgement")
    func incomingCallAnswered() {
        var rig = liveRig()
        rig.command("call \"Bob\" uid=7")
        guard case .added(let call, nil)? = rig.ncChanges.last else {
            Issue.record("no call arrived")
            return
        }
        #expect(call.uid == 7)
        #expect(call.category == .incomingCall)
        #expect(call.flags == [.positiveAction, .negativeAction])
        #expect(rig.nc.performAction(uid: 7, .positive) == .queued)
        rig.nc.flush(now: rig.now)
        rig.settle()
        #expect(rig.controlPointWrites.last == "02 07 00 00 00 00")
        #expect(rig.phoneEvents.contains(.actionPerformed(uid: 7, action: .positive)))
        #expect(rig.phone.notification(uid: 7) == nil)
        let delivered = rig.ncEvents.firstIndex(of: .command(.actionDelivered(uid: 7, action: .positive)))
        let removed = rig.ncEvents.firstIndex { if case .notification(.removed(let r)) = $0 { r.uid == 7 } else { false } }
        #expect(delivered != nil && removed != nil && delivered! < removed!)
        #expect(rig.nc.session.table.count == 0)
    }

    @Test("Get Notification Attributes split at MTU − 3 reassembles in the wearable", arguments: [23, 185])
    func attributesSplitAtMTU(mtu: Int) {
        var phone = PhoneConfig()
        phone.bearer.maxMTU = mtu
        var rig = liveRig(phone: phone)
        #expect(rig.nc.bearer.mtu == mtu)
        let message = String(repeating: "0123456789", count: 20)
        rig.command("message \"Alice\" \"\(message)\" uid=3")
        #expect(rig.nc.requestAttributes(uid: 3, [.appIdentifier, .title, .message]) == .queued)
        rig.nc.flush(now: rig.now)
        rig.settle()
        #expect(rig.ncResults.contains(.attributesReceived(uid: 3)))
        #expect(rig.attributes[.appIdentifier] == Array("com.apple.MobileSMS".utf8))
        #expect(rig.attributes[.title] == Array("Alice".utf8))
        #expect(rig.attributes[.message] == Array(message.utf8))
        let byteCount = 5 + (3 + 19) + (3 + 5) + (3 + 200)
        let fragments = (byteCount + mtu - 4) / (mtu - 3)
        #expect(rig.phoneEvents.contains(.dataSourceSent(byteCount: byteCount, fragmentCount: fragments)))
        #expect(rig.trace.filter { $0.hasPrefix("P> 1B 17 00") }.count == fragments)
    }

    @Test("Get App Attributes: the wearable caches the display name from the phone's app table")
    func appDisplayName() {
        var rig = liveRig()
        let id = AppIdentifier("com.apple.MobileSMS")
        #expect(rig.nc.requestAppName(id) == .queued)
        rig.settle()
        #expect(rig.ncResults.contains(.appNameReceived(id)))
        #expect(rig.nc.session.appName(for: id) == AppDisplayName("Messages"))
    }

    @Test("long Control Point command at MTU 23 (board/scenarios/long-command-mtu23.scn): the 24-byte Get App Attributes for com.apple.mobilephone goes as Prepare Write ×2 + Execute Write 01, the phone executes it whole and the name reassembles")
    func longCommandAtMTU23() {
        var rig = Loopback(script: readRepositoryFile("board/scenarios/long-command-mtu23.scn"))
        rig.connect()
        rig.run(forMs: 2_000)
        #expect(rig.ncEvents.contains(.mtu(23)), "the phone agreed to no more than 23")
        #expect(rig.nc.bearer.mtu == 23)
        guard case .added(let call, nil)? = rig.ncChanges.last, call.uid == 1, call.category == .incomingCall else {
            Issue.record("no call arrived")
            return
        }
        let app = AppIdentifier("com.apple.mobilephone")
        #expect(rig.nc.requestAppName(app) == .queued)
        rig.settle()
        let start = rig.trace.firstIndex(of: "W> " + mobilephonePart1) ?? rig.trace.count
        #expect(Array(rig.trace[start...].prefix(6)) == [
            "W> " + mobilephonePart1, "P> " + echo(mobilephonePart1),
            "W> " + mobilephonePart2, "P> " + echo(mobilephonePart2),
            "W> 18 01", "P> 19",
        ])
        #expect(!rig.trace.contains { $0.hasPrefix("W> 12 15 00 01") }, "never as a Write Request")
        #expect(!rig.trace.contains("W> 18 00"), "nothing cancelled")
        #expect(rig.controlPointWrites.last == mobilephoneCommand, "the phone received the whole command")
        #expect(rig.phoneEvents.contains(.writeExecuted(write: true, byteCount: 24)))
        #expect(rig.phoneEvents.contains(.dataSourceSent(byteCount: 31, fragmentCount: 2)))
        #expect(rig.ncResults.contains(.appNameReceived(app)))
        #expect(rig.nc.session.appName(for: app) == AppDisplayName("Phone"))
        #expect(rig.nc.session.counters.commandsUnsendable == 0)
        // The wearer answers: a short command is still one Write Request.
        #expect(rig.nc.performAction(uid: 1, .positive) == .queued)
        rig.nc.flush(now: rig.now)
        rig.settle()
        #expect(rig.trace.contains("W> 12 15 00 02 01 00 00 00 00"))
        #expect(rig.phoneEvents.contains(.actionPerformed(uid: 1, action: .positive)))
        rig.run(forMs: 100)
        #expect(rig.phoneEvents.contains(.scenarioFinished(ok: true)))
    }

    @Test("a larger MTU is preferred: at the phone's 185 the same command is one Write Request, no long write")
    func largerMTUNeedsNoLongWrite() {
        var rig = liveRig()
        #expect(rig.nc.bearer.mtu == 185)
        let app = AppIdentifier("com.apple.mobilephone")
        #expect(rig.nc.requestAppName(app) == .queued)
        rig.settle()
        #expect(rig.trace.contains("W> 12 15 00 " + mobilephoneCommand))
        #expect(!rig.trace.contains { $0.hasPrefix("W> 16") || $0.hasPrefix("W> 18") })
        #expect(rig.nc.session.appName(for: app) == AppDisplayName("Phone"))
    }

    @Test("an ANCS error on the executed long write fails the command as a failed Write Request does (0xA2, no cancel)")
    func longWriteANCSError() {
        var rig = liveRig(script: "mtu 23")
        let app = AppIdentifier("com.example.unknownapp")
        #expect(rig.nc.requestAppName(app) == .queued)
        rig.settle()
        #expect(rig.trace.contains("P> 01 18 15 00 A2"))
        #expect(!rig.trace.contains("W> 18 00"))
        #expect(rig.ncResults.contains(.failed(.getAppAttributes(appIdentifier: app, attributes: .displayName), .ancs(.invalidParameter))))
        #expect(rig.nc.session.canSend == false && rig.nc.session.hasCommandInFlight == false)
    }

    @Test("Prepare Queue Full on a part: the wearable cancels (18 00) and the command fails with ATT 0x09; the next command goes")
    func longWriteQueueFullCancels() {
        var phone = PhoneConfig()
        phone.prepareQueueCapacity = 1
        var rig = liveRig(phone: phone, script: "mtu 23\napp com.x X")
        let app = AppIdentifier("com.apple.mobilephone")
        #expect(rig.nc.requestAppName(app) == .queued)
        rig.settle()
        #expect(rig.trace.suffix(6) == [
            "W> " + mobilephonePart1, "P> " + echo(mobilephonePart1),
            "W> " + mobilephonePart2, "P> 01 16 15 00 09",
            "W> 18 00", "P> 19",
        ])
        #expect(rig.ncResults.contains(.failed(.getAppAttributes(appIdentifier: app, attributes: .displayName), .att(0x09))))
        #expect(rig.phoneEvents.contains(.writeExecuted(write: false, byteCount: 18)))
        #expect(!rig.phoneEvents.contains { if case .controlPointWrite = $0 { true } else { false } })
        #expect(rig.nc.requestAppName(AppIdentifier("com.x")) == .queued, "a short command after the failure")
        rig.settle()
        #expect(rig.trace.contains("W> 12 15 00 01 63 6F 6D 2E 78 00 00"))
        #expect(rig.nc.session.appName(for: AppIdentifier("com.x")) == AppDisplayName("X"))
    }

    @Test("an action on a UID the phone has just removed is answered 0xA2 and the wearable forgets it")
    func actionRacesRemoval() {
        var rig = liveRig()
        rig.command("call \"Bob\" uid=7")
        #expect(rig.nc.performAction(uid: 7, .negative) == .queued)
        rig.nc.flush(now: rig.now)
        do {
            try rig.phone.run("remove 7", now: rig.now)
        } catch {
            Issue.record("remove does not parse")
        }
        rig.settle()
        #expect(rig.controlPointWrites.last == "02 07 00 00 00 01")
        #expect(rig.phoneEvents.contains(.errorAnswered(handle: 0x15, code: 0xA2, reason: "unknown-uid")))
        #expect(rig.ncResults.contains(.failed(.performNotificationAction(uid: 7, action: .negative), .ancs(.invalidParameter))))
    }

    @Test("the wearable's keep-alive probe on a UID that cannot exist is answered 0xA2")
    func keepAliveProbe() {
        var rig = liveRig()
        rig.run(forMs: 15 * 60_000 + 1_000)
        #expect(rig.controlPointWrites.last == "00 FF FF FF FF 00")
        #expect(rig.ncResults.contains(.probeAnswered))
        #expect(rig.state == .live)
    }

    @Test("Service Changed: ANCS removed makes the wearable end the session; added back, it rediscovers, resubscribes and gets the replay again")
    func serviceChangedRemoveAndAdd() {
        var rig = liveRig(script: "existing Social uid=1 title=\"Alice\"")
        rig.command("remove-ancs")
        #expect(rig.phoneEvents.contains(.serviceChangedIndicated(start: 0x10, end: 0x18)))
        #expect(rig.phoneEvents.contains(.indicationConfirmed))
        #expect(rig.ncEvents.contains(.ended(reason: .serviceChanged)))
        #expect(rig.state == .ancsAbsent)
        #expect(rig.trace.last == "P> 01 06 01 00 0A", "ANCS is gone from the database")
        rig.command("add-ancs")
        #expect(rig.state == .live)
        let replays = rig.ncChanges.filter { if case .added(let r, _) = $0 { r.uid == 1 && r.flags.contains(.preExisting) } else { false } }
        #expect(replays.count == 2)
        #expect(rig.phoneEvents.filter { $0 == .pairingStarted }.count == 1, "the link stays secured")
    }

    @Test("service-changed: one indication, and the wearable is live again on the same handles")
    func serviceChangedInOneStep() {
        var rig = liveRig()
        rig.command("service-changed")
        #expect(rig.phoneEvents.filter { if case .serviceChangedIndicated = $0 { true } else { false } }.count == 1)
        #expect(rig.ncEvents.contains(.ended(reason: .serviceChanged)))
        #expect(rig.state == .live)
        #expect(rig.phoneEvents.filter { $0 == .subscribed(.notificationSource) }.count == 2)
    }

    @Test("overlong values are bounded by the wearable; without overlongValues the phone cuts them to the requested maximum", arguments: [true, false])
    func overlongValuesBounded(overlong: Bool) {
        var phone = PhoneConfig()
        phone.overlongValues = overlong
        let title = String(repeating: "T", count: 100)
        let message = String(repeating: "m", count: 400)
        var rig = liveRig(phone: phone, script: "existing Social uid=4 title=\"\(title)\" message=\"\(message)\"")
        #expect(rig.nc.requestAttributes(uid: 4, [.title, .message]) == .queued)
        rig.settle()
        #expect(rig.ncResults.contains(.attributesReceived(uid: 4)))
        #expect(rig.attributes[.title] == Array(title.utf8.prefix(64)))
        #expect(rig.attributes[.message] == Array(message.utf8.prefix(256)))
        #expect(rig.truncated.contains(NotificationAttributeID.title.rawValue) == overlong)
        #expect(rig.truncated.contains(NotificationAttributeID.message.rawValue) == overlong)
        let sent = overlong ? 5 + 3 + 100 + 3 + 400 : 5 + 3 + 64 + 3 + 256
        #expect(rig.phoneEvents.contains { if case .dataSourceSent(sent, _) = $0 { true } else { false } })
    }

    @Test("a bonded phone encrypts at reconnection: no 0x05, no second pairing")
    func bondedReconnect() {
        var rig = liveRig()
        rig.command("disconnect")
        #expect(rig.phoneActions == [.disconnect(reason: "scenario")])
        #expect(rig.state == .disconnected)
        rig.command("connect")
        rig.run(forMs: 10)
        #expect(rig.state == .live, "live without waiting for a pairing")
        #expect(rig.phoneEvents.filter { $0 == .pairingStarted }.count == 1)
        #expect(rig.phoneEvents.contains(.secured(newlyPaired: false)))
        #expect(rig.phoneEvents.filter { if case .errorAnswered(_, 0x05, _) = $0 { true } else { false } }.count == 0,
                "the wearable asks for security before it subscribes: nothing is refused for want of it")
    }

    @Test("requiresSecurity false: no 0x05 and no pairing")
    func securityNotRequired() {
        var phone = PhoneConfig()
        phone.requiresSecurity = false
        var rig = Loopback(phone: phone)
        rig.connect()
        #expect(rig.state == .live)
        #expect(!rig.phoneEvents.contains(.pairingStarted))
        #expect(rig.ncEvents.contains(.secured), "the wearable still asks for encryption before it subscribes; the UNIX-like loopback grants it")
    }

    @Test("a scenario: wait until subscribed, ring, wait for the answer, then a message")
    func scenarioRunsTheSession() {
        var rig = Loopback(script: """
            # a call, answered, then a message
            wait-subscribed 5000
            call "Bob" uid=1
            wait-action 1 10000
            message "Alice" "Lunch?" uid=2
            """)
        rig.connect()
        rig.run(forMs: 1_000)
        #expect(rig.ncChanges.count == 1)
        #expect(rig.nc.performAction(uid: 1, .negative) == .queued)
        rig.run(forMs: 10)
        let added = rig.ncChanges.compactMap { if case .added(let r, nil) = $0 { r.uid } else { nil } }
        #expect(added == [1, 2])
        #expect(rig.phoneEvents.contains(.stepDone(line: 4, command: "wait-action")))
        #expect(rig.phoneEvents.contains(.scenarioFinished(ok: true)))
    }

    @Test("a scripted 0xA3 fails the next action; the one after succeeds")
    func scriptedActionFailed() {
        var rig = liveRig()
        rig.command("call \"Bob\" uid=1")
        rig.command("error 0xA3")
        #expect(rig.nc.performAction(uid: 1, .positive) == .queued)
        rig.settle()
        #expect(rig.ncResults.last == .failed(.performNotificationAction(uid: 1, action: .positive), .ancs(.actionFailed)))
        #expect(rig.phoneEvents.contains(.errorAnswered(handle: 0x15, code: 0xA3, reason: "scripted")))
        #expect(rig.phone.notification(uid: 1) != nil)
        #expect(rig.nc.performAction(uid: 1, .positive) == .queued)
        rig.settle()
        #expect(rig.ncResults.last == .actionDelivered(uid: 1, action: .positive))
    }

    @Test("the wearable hanging up ends the phone's session; notifications posted meanwhile are replayed at reconnection")
    func wearableHangsUp() {
        var rig = liveRig()
        rig.nc.linkDown(reason: .platform("test"))
        rig.phone.linkDown(reason: "peer-closed", now: rig.now)
        rig.command("message \"Alice\" \"Still there?\" uid=5")
        #expect(rig.phone.isSubscribed(.notificationSource) == false)
        rig.connect()
        rig.run(forMs: 10)
        #expect(rig.state == .live)
        let last = rig.ncChanges.last
        #expect(last.map { if case .added(let r, nil) = $0 { r.uid == 5 && r.flags.contains(.preExisting) } else { false } } == true)
    }
}
