// SPDX-License-Identifier: Apache-2.0
// Real-iPhone quirks: each scenario in board/scenarios played by
// the simulated phone against the wearable's PhoneLink, in memory, on a
// virtual clock (the loopback of Support.swift starts at 1 000 ms).

import ANCS
import ATT
import Bounded
import Firmware
import PhoneSim
import Testing
import TestSupport

/// A shipped scenario's text.
func scenario(_ name: String) -> String { readRepositoryFile("board/scenarios/" + name) }

extension Loopback {
    var permissionWaits: [Int64] {
        ncEvents.compactMap { if case .permissionWaiting(let ms) = $0 { ms } else { nil } }
    }

    func refusals(_ reason: Name) -> Int {
        phoneEvents.filter { if case .errorAnswered(_, _, let r) = $0 { r == reason } else { false } }.count
    }

    /// UIDs Added (`preExisting`: only those flagged PreExisting, or only those not).
    func added(preExisting: Bool) -> [UInt32] {
        ncChanges.compactMap {
            if case .added(let r, _) = $0, r.flags.contains(.preExisting) == preExisting { r.uid } else { nil }
        }
    }
}

@Suite("Real-iPhone quirks: the board/scenarios files against the wearable's PhoneLink")
struct LinkQuirkTests {
    // MARK: 2. Notification sharing not yet allowed

    @Test(
        "sharing not yet allowed (permission-pending.scn): the link stays up and the refused subscription is retried after 5, 10, 20, 40, 60 and 60 s; subscribed once the user allows it",
        arguments: [UInt8(0x08), 0x03])
    func sharingNotAllowedRetriesWithBackoff(code: UInt8) {
        let script = scenario("permission-pending.scn").split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0 == "share off 0x08" ? "share off \(code)" : String($0) }.joined(separator: "\n")
        #expect(script.split(separator: "\n").contains { $0 == "share off \(code)" })
        var rig = Loopback(script: script)
        rig.connect()
        rig.run(forMs: 1_000)
        #expect(rig.state == .waitingForPermission)
        #expect(rig.phoneEvents.contains(.errorAnswered(handle: 0x18, code: code, reason: "not-shared")))
        rig.run(forMs: 250_000)
        // The first Data Source CCCD write goes after the raise, at once
        // (answered when pairing ends, at 1 100 ms): the refusal.
        let writes = rig.times(of: "W> 12 18 00 01 00")
        #expect(writes.first == 1_000)
        let retries = Array(writes.dropFirst(1))
        let gaps = zip([1_100] + retries.dropLast(), retries).map { $1 - $0 }
        #expect(gaps == [5_000, 10_000, 20_000, 40_000, 60_000, 60_000])
        #expect(rig.permissionWaits == [5_000, 10_000, 20_000, 40_000, 60_000, 60_000])
        #expect(rig.refusals("not-shared") == 6)
        #expect(rig.disconnects.isEmpty, "never torn down")
        #expect(!rig.phoneEvents.contains { if case .disconnected = $0 { true } else { false } })
        #expect(rig.state == .live)
        #expect(rig.ncEvents.filter { $0 == .subscribed }.count == 1)
        #expect(rig.added(preExisting: true) == [1])
        #expect(rig.added(preExisting: false) == [2], "Bob's call arrives once sharing is allowed")
        #expect(rig.phoneEvents.contains(.scenarioFinished(ok: true)))
    }

    @Test("a Control Point write refused for want of permission (0x03) fails that command only; the session and the link stay")
    func controlPointRefusedKeepsSession() {
        var rig = Loopback()
        rig.connect()
        rig.run(forMs: 1_000)
        rig.command("call \"Bob\" uid=7")
        rig.command("share off 0x03")
        #expect(rig.nc.performAction(uid: 7, .positive) == .queued)
        rig.settle()
        #expect(rig.ncResults.last == .failed(.performNotificationAction(uid: 7, action: .positive), .att(0x03)))
        #expect(rig.state == .live)
        #expect(rig.disconnects.isEmpty)
        rig.command("share on")
        #expect(rig.nc.performAction(uid: 7, .positive) == .queued)
        rig.settle()
        #expect(rig.ncResults.last == .actionDelivered(uid: 7, action: .positive))
    }

    @Test("sharing withdrawn mid-session: the keep-alive probe is refused, the resubscription too, and the wearable waits for permission instead of disconnecting")
    func sharingWithdrawnWaitsForPermission() {
        var wearable = PhoneLinkConfig()
        wearable.keepAliveQuietMs = 60_000
        var rig = Loopback(wearable: wearable)
        rig.connect()
        rig.run(forMs: 1_000)
        rig.command("share off")
        rig.run(forMs: 61_000)
        #expect(rig.ncResults.contains(.probeFailed(.att(0x08))))
        #expect(rig.ncEvents.contains(.ended(reason: .keepAlive)))
        #expect(rig.state == .waitingForPermission)
        #expect(rig.disconnects.isEmpty)
        rig.command("share on")
        rig.run(forMs: 5_000)
        #expect(rig.state == .live)
    }

    // MARK: 5. Silent subscription loss

    @Test("silent subscription loss (silent-subscription-loss.scn): Notification Source goes quiet, the keep-alive probe gets a Write Response instead of 0xA2, and the wearable subscribes again")
    func silentSubscriptionLossResubscribes() {
        var wearable = PhoneLinkConfig()
        wearable.keepAliveQuietMs = 60_000
        var rig = Loopback(wearable: wearable, script: scenario("silent-subscription-loss.scn"))
        rig.connect()
        rig.run(forMs: 10_000)
        #expect(rig.phoneEvents.contains(.unsubscribed(.notificationSource)), "the phone forgot the subscription")
        #expect(rig.phoneEvents.contains(.unsubscribed(.dataSource)))
        #expect(rig.state == .live, "nothing tells the wearable")
        #expect(rig.added(preExisting: false) == [1], "Bob's message is not sent")
        #expect(rig.nc.counters.probesSent == 0)
        rig.run(forMs: 60_000)
        #expect(rig.nc.counters.probesSent == 1)
        #expect(rig.controlPointWrites.contains("00 FF FF FF FF 00"))
        #expect(rig.phoneEvents.contains(.dropped(what: "control-point", reason: "no-session")))
        #expect(rig.ncResults.contains(.probeFailed(.att(0))))
        #expect(rig.nc.counters.resubscriptions == 1)
        #expect(rig.ncEvents.contains(.ended(reason: .keepAlive)))
        // Notification Source off, then Data Source and Notification Source on.
        let resubscribe = rig.trace.filter { $0.hasPrefix("W> 12 13 00") || $0.hasPrefix("W> 12 18 00") }.suffix(3)
        #expect(Array(resubscribe) == ["W> 12 13 00 00 00", "W> 12 18 00 01 00", "W> 12 13 00 01 00"])
        #expect(rig.state == .live)
        #expect(rig.added(preExisting: true) == [1, 2], "the replay brings Bob's message")
        #expect(rig.added(preExisting: false) == [1, 3])
        #expect(rig.disconnects.isEmpty)
        #expect(rig.phoneEvents.contains(.scenarioFinished(ok: true)))
        // Data Source works again.
        #expect(rig.nc.requestAttributes(uid: 3, [.title]) == .queued)
        rig.settle()
        #expect(rig.attributes[.title] == Array("Carol".utf8))
    }

    // MARK: 3. ANCS missing until after bonding

    @Test("ANCS shown only on an encrypted link (ancs-after-encryption.scn): not found unencrypted, the wearable asks for security once and discovers again once encrypted")
    func ancsAfterEncryption() {
        var rig = Loopback(script: scenario("ancs-after-encryption.scn"))
        rig.connect()
        rig.run(forMs: 1_000)
        #expect(rig.state == .live)
        let absent = rig.ncEvents.firstIndex(of: .ancsAbsent)
        let secured = rig.ncEvents.firstIndex(of: .secured)
        let discovered = rig.ncEvents.firstIndex(of: .discovered)
        #expect(absent != nil && secured != nil && discovered != nil && absent! < secured! && secured! < discovered!)
        #expect(rig.raises == 1)
        #expect(rig.nc.counters.rediscoveriesAfterEncryption == 1)
        #expect(rig.phoneEvents.filter { $0 == .pairingStarted }.count == 1)
        #expect(rig.disconnects.isEmpty)
        #expect(rig.added(preExisting: true) == [1])
        #expect(rig.added(preExisting: false) == [2])
        #expect(rig.phoneEvents.contains(.scenarioFinished(ok: true)))
    }

    @Test("ANCS shown only after bonding (ancs-after-bond.scn): absent after encryption too, the wearable waits without disconnecting; on the bonded reconnection ANCS is there")
    func ancsAfterBond() {
        var rig = Loopback(script: scenario("ancs-after-bond.scn"))
        rig.connect()
        rig.run(forMs: 1_000)
        #expect(rig.phone.isBonded == true)
        #expect(rig.state == .ancsAbsent, "still absent on the encrypted first connection: wait for Service Changed")
        #expect(rig.raises == 1)
        #expect(rig.nc.counters.rediscoveriesAfterEncryption == 1, "discovered once more after the encryption change")
        #expect(rig.ncEvents.filter { $0 == .ancsAbsent }.count == 2)
        #expect(rig.disconnects.isEmpty)
        rig.run(forMs: 6_000)
        #expect(rig.state == .live)
        #expect(rig.raises == 1, "the bonded reconnection is encrypted by the phone")
        #expect(rig.phoneEvents.filter { $0 == .pairingStarted }.count == 1)
        #expect(rig.added(preExisting: true) == [1])
        #expect(rig.added(preExisting: false) == [2])
        #expect(rig.phoneEvents.contains(.scenarioFinished(ok: true)))
    }

    @Test("one raise at a time: with the first raise still unanswered, a request that needs security does not ask again")
    func oneRaiseAtATime() {
        var rig = Loopback(script: "hide-ancs encrypted")
        rig.answersRaisesAtOnce = false
        rig.connect()
        rig.run(forMs: 10)
        #expect(rig.state == .ancsAbsent)
        #expect(rig.raises == 1)
        #expect(rig.nc.isRaisingSecurity == true)
        // ANCS appears (with Service Changed) while the raise is pending: the
        // wearable finds it and waits for encryption before subscribing.
        rig.command("add-ancs")
        #expect(rig.state == .awaitingEncryption)
        #expect(!rig.trace.contains("W> 12 18 00 01 00"), "nothing subscribed before encryption")
        #expect(rig.raises == 1, "not asked twice at once")
        #expect(rig.nc.counters.raisesCoalesced == 1)
        rig.answerRaises()
        rig.run(forMs: 1_000)
        #expect(rig.state == .live)
        #expect(rig.raises == 1)
    }

    // MARK: 4. Encryption already under way

    @Test("a bonded phone encrypting by itself (bonded-encrypts-itself.scn): the wearable waits for it, asks for no security and does not collide")
    func bondedPhoneEncryptsItself() {
        var rig = Loopback(script: scenario("bonded-encrypts-itself.scn"))
        rig.connect()
        rig.run(forMs: 1_000)
        #expect(rig.state == .live)
        #expect(rig.raises == 1, "the first connection pairs")
        rig.run(forMs: 5_000)
        // Reconnected at 3 100 ms; the phone encrypts from 3 400 to 3 500 ms.
        #expect(rig.state == .live)
        #expect(rig.raises == 1, "no raise on the bonded link")
        #expect(rig.nc.counters.raisesDeferred == 1)
        #expect(rig.phone.counters.securityCollisions == 0)
        #expect(rig.phoneEvents.contains(.secured(newlyPaired: false)))
        #expect(rig.times(of: "W> 12 18 00 01 00").suffix(2) == [1_000, 3_500], "on the bonded link sent once, as soon as the phone's encryption is on")
        #expect(rig.disconnects.isEmpty)
        #expect(rig.added(preExisting: false) == [1])
        #expect(rig.phoneEvents.contains(.scenarioFinished(ok: true)))
    }

    @Test("the same phone without the wait: asking for security at once collides with the phone's own encryption; the refused subscription costs a 2 s retry (what the wait prevents)")
    func withoutWaitRaiseCollides() {
        var wearable = PhoneLinkConfig()
        wearable.bondedEncryptionWaitMs = 0
        var rig = Loopback(wearable: wearable, script: scenario("bonded-encrypts-itself.scn"))
        rig.connect()
        rig.run(forMs: 8_000)
        #expect(rig.phone.counters.securityCollisions >= 1)
        #expect(rig.phoneEvents.contains(.dropped(what: "security-request", reason: "collision")))
        #expect(rig.nc.counters.bringUpRetries >= 1, "the collided bring-up is tried again, not left failed")
        #expect(rig.disconnects.isEmpty)
        #expect(rig.state == .live)
    }

    @Test("a bonded phone that does not encrypt within the wait: the wearable asks once, bondedEncryptionWaitMs after connecting")
    func bondedPhoneSlowToEncrypt() {
        var rig = Loopback()
        rig.connect()
        rig.run(forMs: 1_000)
        rig.command("encrypt-delay 10000")
        rig.command("disconnect")
        rig.run(forMs: 1_000)
        rig.command("connect")
        let connectedAt = rig.now.ms(since: .zero)
        rig.run(forMs: 3_000)
        #expect(rig.state == .live)
        #expect(rig.raises == 2)
        #expect(rig.times(of: "W> 12 18 00 01 00").last == connectedAt + 1_500)
        #expect(rig.phone.counters.securityCollisions == 0)
    }
}
