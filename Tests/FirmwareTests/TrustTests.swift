// SPDX-License-Identifier: Apache-2.0
// A phone is trusted only over an encrypted link, and no phase of the link
// waits for ever (issue 26, items 1 and 3). The scripted phone is the
// Script's database (Rig.swift): ANCS at 0x0B–0x14, Notification Source
// CCCD 0x0E, Data Source CCCD 0x13.

import ANCS
import ATT
import Bounded
import Firmware
import Testing
import TestSupport

/// Data Source's CCCD written on: the first subscription write.
private let dataSourceOn = "12 13 00 01 00"
private let ancsDiscoveryRequest = "06 01 00 FF FF 00 28 " + Wire.ancs

@Suite("Trust only an encrypted phone; no phase without a way out")
struct TrustTests {
    /// MTU, the GATT service and ANCS discovered on a link that `bonded`
    /// says is (or is not) to a bonded phone; the phone never encrypts.
    func discoveredUnencrypted(bonded: Bool, sourceLocation: SourceLocation = #_sourceLocation) -> LinkRig {
        var rig = LinkRig()
        rig.answersRaises = false
        rig.link.linkUp(now: rig.now, bonded: bonded)
        rig.settle()
        rig.run([.firmware("02 05 02"), .phone("03 B9 00")] + Script.gatt + Script.ancsDiscovery, sourceLocation: sourceLocation)
        return rig
    }

    @Test("a device with the bonded phone's address that never encrypts: ANCS found, nothing subscribed, asked for security after the wait, dropped at the bound and counted")
    func bondedAddressWithoutKeyIsDropped() {
        var rig = discoveredUnencrypted(bonded: true)
        let start = rig.now
        #expect(rig.link.state == .awaitingEncryption)
        #expect(!rig.events.contains(.subscribed))
        #expect(rig.actions == [], "the bonded phone gets bondedEncryptionWaitMs to encrypt by itself")
        rig.advance(ms: 1_500)
        #expect(rig.actions == [.raiseSecurity(attempt: 1)])
        rig.advance(ms: 5_999)
        #expect(rig.actions == [.raiseSecurity(attempt: 1)], "not dropped before the bound")
        rig.advance(ms: 1)
        #expect(rig.now.ms(since: start) == 7_500)
        #expect(rig.actions == [.raiseSecurity(attempt: 1), .disconnect(reason: .notSecured)])
        #expect(rig.events.contains(.error(.encryptionFailed(.timeout))))
        #expect(rig.link.counters.encryptionFailures == 1)
        #expect(rig.sent() == [], "no CCCD write, no Control Point write: nothing was ever sent after discovery")
        #expect(!rig.events.contains(.subscribed))
    }

    @Test("a bonded link that is not encrypted is asked for security after the wait even while discovery is still under way")
    func bondedLinkIsAskedDuringDiscovery() {
        var rig = LinkRig()
        rig.answersRaises = false
        rig.link.linkUp(now: rig.now, bonded: true)
        rig.settle()
        rig.run([.firmware("02 05 02"), .phone("03 B9 00"), .firmware("06 01 00 FF FF 00 28 01 18")])
        rig.advance(ms: 1_500)
        #expect(rig.actions == [.raiseSecurity(attempt: 1)])
        #expect(rig.link.state == .discoveringGATT)
    }

    @Test("a phone on an unbonded link whose pairing is refused: nothing subscribed, the link dropped at once")
    func refusedPairingDropsTheLink() {
        var rig = discoveredUnencrypted(bonded: false)
        #expect(rig.actions == [.raiseSecurity(attempt: 1)], "asked at once: there is no bond to wait for")
        rig.link.securityChanged(encrypted: false, now: rig.now)
        rig.settle()
        #expect(rig.actions.last == .disconnect(reason: .notSecured))
        #expect(rig.events.contains(.error(.encryptionFailed(.refused))))
        #expect(rig.sent() == [])
    }

    @Test("a pairing that never completes is dropped pairingTimeoutMs after the connection")
    func pairingThatNeverEndsIsBounded() {
        var rig = discoveredUnencrypted(bonded: false)
        rig.advance(ms: 59_999)
        #expect(!rig.actions.contains(.disconnect(reason: .notSecured)))
        rig.advance(ms: 1)
        #expect(rig.actions.last == .disconnect(reason: .notSecured))
        #expect(rig.events.contains(.error(.encryptionFailed(.timeout))))
    }

    @Test("once the link is encrypted, Data Source then Notification Source are subscribed: the bytes of an encrypted bring-up are unchanged")
    func encryptionOpensTheGate() {
        var rig = discoveredUnencrypted(bonded: false)
        rig.link.securityChanged(encrypted: true, now: rig.now)
        rig.settle()
        rig.run(Script.subscribe)
        #expect(rig.link.state == .live)
        #expect(rig.events.contains(.secured))
        #expect(rig.events.last == .subscribed)
        #expect(rig.link.counters.encryptionFailures == 0)
    }

    @Test("a Control Point command asked for before encryption is not written: performAction is inactive until the session is live")
    func noControlPointWriteBeforeEncryption() {
        var rig = discoveredUnencrypted(bonded: true)
        #expect(rig.link.performAction(uid: 1, .positive) == .inactive)
        rig.settle()
        #expect(rig.sent() == [])
    }

    @Test("Service Changed on an unencrypted link does not extend the encryption bound")
    func serviceChangedDoesNotExtendTheBound() {
        var rig = discoveredUnencrypted(bonded: true)
        rig.advance(ms: 7_000)
        rig.run([.phone("1D 03 00 0B 00 14 00"), .firmware("1E")] + Script.ancsDiscovery)
        rig.advance(ms: 500)
        #expect(rig.actions.last == .disconnect(reason: .notSecured))
    }

    // MARK: Item 3: no phase without a way out

    /// MTU and the GATT service on an encrypted link, and ANCS discovery's
    /// first request sent: the phone answers next.
    func encryptedBeforeANCS() -> LinkRig {
        var rig = LinkRig()
        rig.link.linkUp(now: rig.now)
        rig.link.securityChanged(encrypted: true, now: rig.now)
        rig.settle()
        rig.run([.firmware("02 05 02"), .phone("03 B9 00")] + Script.gatt + [.firmware(ancsDiscoveryRequest)])
        return rig
    }

    @Test("ANCS discovery answered Unlikely Error (0x0E): tried again after 2 s and 4 s, then the link is ended (ancs-unavailable)",
          arguments: ["01 06 01 00 0E", "01 06 01 00 11", "01 06 01 00 06", "07 0B 00 05 00"])
    func failedDiscoveryIsRetriedThenTheLinkEnds(answer: String) {
        var rig = encryptedBeforeANCS()
        rig.run([.phone(answer)])
        #expect(rig.link.state == .ancsAbsent)
        #expect(rig.link.deadline == rig.now.advanced(byMs: 2_000), "a deadline leaves the phase")
        rig.advance(ms: 1_999)
        #expect(rig.sent() == [])
        rig.advance(ms: 1)
        rig.run([.firmware(ancsDiscoveryRequest), .phone(answer)])
        rig.advance(ms: 4_000)
        rig.run([.firmware(ancsDiscoveryRequest), .phone(answer)])
        #expect(rig.actions == [.disconnect(reason: .ancsUnavailable)])
        #expect(rig.link.counters.bringUpRetries == 2)
    }

    @Test("a retried discovery that succeeds goes on to subscribe; the retries start afresh on the live link")
    func retriedDiscoverySucceeds() {
        var rig = encryptedBeforeANCS()
        rig.run([.phone("01 06 01 00 0E")])
        rig.advance(ms: 2_000)
        rig.run(Script.ancsDiscovery + Script.subscribe)
        #expect(rig.link.state == .live)
        #expect(rig.actions == [])
    }

    @Test("no ANCS on an encrypted link: looked for again with back-off, then the link ends instead of sitting absent")
    func absentOnEncryptedLinkIsRetried() {
        var rig = encryptedBeforeANCS()
        rig.run([.phone("01 06 01 00 0A")])
        #expect(rig.link.state == .ancsAbsent)
        rig.advance(ms: 2_000)
        rig.run([.firmware(ancsDiscoveryRequest), .phone("01 06 01 00 0A")])
        rig.advance(ms: 4_000)
        rig.run([.firmware(ancsDiscoveryRequest), .phone("01 06 01 00 0A")])
        #expect(rig.actions == [.disconnect(reason: .ancsUnavailable)])
    }

    @Test("a Data Source CCCD write refused with 0x0E is written again after the back-off, like discovery, before the link is ended")
    func refusedSubscriptionIsRetried() {
        var rig = encryptedBeforeANCS()
        rig.run(Array(Script.ancsDiscovery.dropFirst()) + [.firmware(dataSourceOn), .phone("01 12 13 00 0E")])
        #expect(rig.events.contains(.error(.subscribeFailed(.dataSource))))
        #expect(rig.actions == [])
        rig.advance(ms: 2_000)
        rig.run([.firmware(dataSourceOn), .phone("13"), .firmware("12 0E 00 01 00"), .phone("13")])
        #expect(rig.link.state == .live)
    }
}
