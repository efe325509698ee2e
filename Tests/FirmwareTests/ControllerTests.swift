// SPDX-License-Identifier: Apache-2.0
import Bounded
import Firmware
import Mgmt
import Testing
import TestSupport

/// The phone: LE random static address C1:22:33:44:55:66 (wire order, type 2).
let phoneAddress = "66 55 44 33 22 C1 02"
let phone = DeviceAddress(BDAddress(0xC1, 0x22, 0x33, 0x44, 0x55, 0x66), .leRandom)
let bondFile = "wristlink-bonds 1\nltk c12233445566 02 02 00 10 0000 0000000000000000 00112233445566778899aabbccddeeff\n"

func mgmtEvent(_ code: UInt16, _ params: String) -> [UInt8] {
    let p = hex(params)
    return [UInt8(code & 0xFF), UInt8(code >> 8), 0, 0, UInt8(p.count & 0xFF), UInt8(p.count >> 8)] + p
}

let deviceConnected = mgmtEvent(0x000B, phoneAddress + " 00 00 00 00  00 00")
let deviceDisconnected = mgmtEvent(0x000C, phoneAddress + " 03")
let confirmationRequest = mgmtEvent(0x000F, phoneAddress + " 01  5A 6E 0B 00")
/// A phone nobody paired: D2:11:22:33:44:55, static random.
let strangerAddress = "55 44 33 22 11 D2 02"
let stranger = DeviceAddress(BDAddress(0xD2, 0x11, 0x22, 0x33, 0x44, 0x55), .leRandom)
let newLongTermKey = mgmtEvent(0x000A, "01 " + phoneAddress + " 02 00 10 0000 0000000000000000 00112233445566778899AABBCCDDEEFF")

struct ControllerRig: ~Copyable {
    var controller: Controller
    var now = Instant(ms: 1_000)

    init(bonds: String? = nil, _ configure: (inout ControllerConfig) -> Void = { _ in }) {
        var config = ControllerConfig()
        configure(&config)
        let store = bonds.map { try! BondStore.parse(Array($0.utf8).span) } ?? BondStore()
        controller = Controller(config: config, bonds: store)
        controller.start(now: now)
        _ = sent()
    }

    /// Every command the controller wants to send now, as hex.
    mutating func sent() -> [String] {
        var out = ByteBuffer(capacity: 1024)
        var list: [String] = []
        while controller.popCommand(into: &out) { list.append(toHex(out.toArray())) }
        return list
    }

    mutating func events() -> [ControllerEvent] {
        var list: [ControllerEvent] = []
        while let e = controller.nextEvent() { list.append(e) }
        return list
    }

    mutating func feed(_ bytes: [UInt8]) { controller.receive(bytes.span, now: now) }

    /// Answers every command with success, as the kernel would for an
    /// unpowered LE controller, until set-up has finished (from the first
    /// Read Controller Information, which `init` took).
    mutating func completeSetup() {
        var settings: UInt32 = 0
        var out = ByteBuffer(capacity: 1024)
        feed(ControllerSocketTests.reply(to: [0x04, 0x00, 0x00, 0x00, 0x00, 0x00], settings: settings))
        for _ in 0..<32 {
            guard controller.popCommand(into: &out) else { return }
            let command = out.toArray()
            let opcode = UInt16(command[0]) | UInt16(command[1]) << 8
            switch opcode {
            case 0x000D: settings |= 0x200
            case 0x002D: settings |= 0x800
            case 0x0009: settings |= 0x10
            case 0x0007: settings |= 0x02
            case 0x0005: settings |= 0x01
            default: break
            }
            feed(ControllerSocketTests.reply(to: command, settings: settings))
        }
    }

    mutating func wait(ms: Int64) {
        now = now.advanced(byMs: ms)
        controller.advance(now: now)
    }
}

@Suite("Controller: pairing mode, consent, bonds")
struct ControllerTests {
    @Test("start-up sends Read Controller Information first, on the configured index")
    func startUp() {
        var config = ControllerConfig()
        config.index = 1
        var controller = Controller(config: config, bonds: BondStore())
        controller.start(now: .zero)
        var out = ByteBuffer(capacity: 1024)
        #expect(controller.popCommand(into: &out) == true)
        #expect(toHex(out.toArray()) == "04 00 01 00 00 00")
        #expect(controller.popCommand(into: &out) == false, "one command at a time: the next waits for the reply")
    }

    @Test("without a bond the wearable is in pairing mode; a press within the window accepts the pairing")
    func pressAcceptsPairing() {
        var rig = ControllerRig()
        #expect(rig.events().contains(.pairingMode(on: true, reason: .noBond)))
        rig.feed(deviceConnected)
        rig.feed(confirmationRequest)
        #expect(rig.sent() == [], "nothing is answered before the wearer decides")
        #expect(rig.events().contains(.consentRequested))
        #expect(rig.controller.isAwaitingConsent == true)
        rig.now = rig.now.advanced(byMs: 5_000)
        rig.controller.consent(granted: true, now: rig.now)
        #expect(rig.sent() == ["1C 00 00 00 07 00 " + phoneAddress])
    }

    @Test("no press within the consent window: the pairing is refused with a Negative Reply")
    func silenceRefuses() {
        var rig = ControllerRig { $0.consentWindowMs = 20_000 }
        rig.feed(confirmationRequest)
        rig.wait(ms: 19_999)
        #expect(rig.sent() == [])
        rig.wait(ms: 1)
        #expect(rig.sent() == ["1D 00 00 00 07 00 " + phoneAddress])
        #expect(rig.events().contains(.consent(granted: false, reason: .timeout)))
    }

    @Test("a refused pairing: after the kernel's Authentication Failed the phone is disconnected, freeing the link")
    func refusedPhoneDisconnected() {
        var rig = ControllerRig { $0.consentWindowMs = 4_000 }
        rig.feed(deviceConnected)
        rig.feed(confirmationRequest)
        rig.wait(ms: 4_000)
        #expect(rig.sent() == ["1D 00 00 00 07 00 " + phoneAddress])
        rig.feed(mgmtEvent(0x0011, phoneAddress + " 05"))  // Authentication Failed
        #expect(rig.sent() == ["14 00 00 00 07 00 " + phoneAddress])
        #expect(rig.events().contains(.pairingFailed(status: .authenticationFailed)))
    }

    @Test("a bonded phone whose encryption failed is left to retry, not disconnected, and reported as a stale bond")
    func bondedAuthenticationFailure() {
        var rig = ControllerRig(bonds: bondFile)
        rig.feed(deviceConnected)
        _ = rig.events()
        rig.feed(mgmtEvent(0x0011, phoneAddress + " 05"))
        #expect(rig.sent() == [])
        #expect(rig.events() == [.pairingFailed(status: .authenticationFailed), .staleBond(replacing: false)])
    }

    @Test("stale bond (Forget This Device): outside pairing mode the phone's new pairing is refused, reported once, the phone disconnected, the bond kept")
    func staleBondRefusedOutsidePairingMode() {
        var rig = ControllerRig(bonds: bondFile)
        #expect(rig.controller.isPairingMode == false)
        rig.feed(deviceConnected)
        _ = rig.events()
        rig.feed(confirmationRequest)
        #expect(rig.sent() == ["1D 00 00 00 07 00 " + phoneAddress])
        rig.feed(mgmtEvent(0x0011, phoneAddress + " 05"))  // the refused pairing fails
        #expect(rig.sent() == ["14 00 00 00 07 00 " + phoneAddress], "the phone is disconnected, freeing the link for pairing mode")
        #expect(rig.events() == [
            .staleBond(replacing: false), .consent(granted: false, reason: .notPairing),
            .pairingFailed(status: .authenticationFailed),
        ])
        #expect(rig.controller.bonds.count == 1, "the bond stays until the wearer opens pairing mode")
        #expect(rig.controller.bondsNeedSaving == false)
        // The next connection reports it again.
        rig.feed(deviceDisconnected)
        rig.feed(deviceConnected)
        rig.feed(confirmationRequest)
        #expect(rig.events().contains(.staleBond(replacing: false)))
    }

    @Test("stale bond in pairing mode: once the wearer accepts, the old bond is dropped and the new pairing's keys replace it")
    func staleBondReplacedInPairingMode() {
        let oldBond = bondFile + "irk c12233445566 02 0f0e0d0c0b0a09080706050403020100\n"
        var rig = ControllerRig(bonds: oldBond)
        rig.controller.enterPairingMode(now: rig.now)
        rig.feed(deviceConnected)
        _ = rig.events()
        rig.feed(confirmationRequest)
        #expect(rig.events() == [.staleBond(replacing: true), .consentRequested])
        #expect(rig.controller.bonds.count == 1, "nothing is dropped before the wearer agrees")
        rig.controller.consent(granted: true, now: rig.now)
        #expect(rig.sent() == ["1C 00 00 00 07 00 " + phoneAddress])
        #expect(rig.controller.bonds.count == 0)
        #expect(rig.controller.bondsNeedSaving == true)
        // The new pairing's key (a different value) becomes the whole bond.
        rig.feed(mgmtEvent(0x000A, "01 " + phoneAddress + " 02 00 10 0000 0000000000000000 FFEEDDCCBBAA99887766554433221100"))
        #expect(rig.events().contains(.bondStored))
        var out = ByteBuffer(capacity: 4096)
        #expect(rig.controller.serializeBonds(into: &out) == true)
        #expect(String(decoding: out.toArray(), as: UTF8.self)
            == "wristlink-bonds 1\nltk c12233445566 02 02 00 10 0000 0000000000000000 ffeeddccbbaa99887766554433221100\n")
        #expect(rig.controller.isPairingMode == false)
    }

    @Test("stale bond in pairing mode, the wearer refuses: the old bond is kept")
    func staleBondKeptWhenRefused() {
        var rig = ControllerRig(bonds: bondFile)
        rig.controller.enterPairingMode(now: rig.now)
        rig.feed(confirmationRequest)
        rig.controller.consent(granted: false, now: rig.now)
        #expect(rig.sent() == ["1D 00 00 00 07 00 " + phoneAddress])
        #expect(rig.controller.bonds.count == 1)
    }

    @Test("a press on reject refuses the pairing")
    func rejectRefuses() {
        var rig = ControllerRig()
        rig.feed(confirmationRequest)
        rig.controller.consent(granted: false, now: rig.now)
        #expect(rig.sent() == ["1D 00 00 00 07 00 " + phoneAddress])
    }

    @Test("automatic acceptance for headless rigs answers at once")
    func automaticAcceptance() {
        var rig = ControllerRig { $0.autoAcceptPairing = true }
        rig.feed(confirmationRequest)
        #expect(rig.sent() == ["1C 00 00 00 07 00 " + phoneAddress])
    }

    @Test("New Long Term Key with Store_Hint from an accepted pairing is kept and marked for saving; the state file has it")
    func bondStored() {
        var rig = ControllerRig()
        rig.feed(confirmationRequest)
        rig.controller.consent(granted: true, now: rig.now)
        rig.feed(newLongTermKey)
        #expect(rig.events().contains(.bondStored))
        #expect(rig.controller.bondsNeedSaving == true)
        var out = ByteBuffer(capacity: 4096)
        #expect(rig.controller.serializeBonds(into: &out) == true)
        #expect(String(decoding: out.toArray(), as: UTF8.self) == bondFile)
        rig.controller.bondsSaved()
        #expect(rig.controller.bondsNeedSaving == false)
        #expect(rig.controller.isPairingMode == false, "with a bond, pairing mode is no longer automatic")
    }

    @Test("the first bond ends the automatic pairing mode, reported once (the pairing pattern stops)")
    func firstBondEndsPairingMode() {
        var rig = ControllerRig()
        #expect(rig.events() == [.pairingMode(on: true, reason: .noBond)])
        rig.feed(confirmationRequest)
        rig.controller.consent(granted: true, now: rig.now)
        _ = rig.events()
        rig.feed(newLongTermKey)
        #expect(rig.events() == [.bondStored, .pairingMode(on: false, reason: .bonded)])
        // The phone's IRK after its LTK: stored, pairing mode already off.
        rig.feed(mgmtEvent(0x0018, "01 00 00 00 00 00 00 " + phoneAddress + " 00112233445566778899AABBCCDDEEFF"))
        #expect(rig.events() == [.bondStored])
    }

    @Test("a phone pairing from a resolvable private address is bonded under its identity; after a restart the identity in Device Connected is the bonded phone")
    func pairsFromResolvablePrivateAddress() {
        // 5A:11:22:33:44:55: random, top bits 01, a resolvable private address.
        let rpa1 = "55 44 33 22 11 5A 02"
        let rpa1Address = DeviceAddress(BDAddress(0x5A, 0x11, 0x22, 0x33, 0x44, 0x55), .leRandom)
        var rig = ControllerRig()
        _ = rig.events()
        rig.feed(mgmtEvent(0x000B, rpa1 + " 00 00 00 00  00 00"))
        #expect(rig.events() == [.connected(bonded: false, address: rpa1Address)])
        rig.feed(mgmtEvent(0x000F, rpa1 + " 01  5A 6E 0B 00"))
        rig.controller.consent(granted: true, now: rig.now)
        #expect(rig.sent() == ["1C 00 00 00 07 00 " + rpa1])
        // SMP's key distribution: the IRK with the RPA it resolves and the
        // identity, then the LTK, which the kernel files under the identity.
        rig.feed(mgmtEvent(0x0018, "01 55 44 33 22 11 5A " + phoneAddress + " 0F 0E 0D 0C 0B 0A 09 08 07 06 05 04 03 02 01 00"))
        rig.feed(newLongTermKey)
        #expect(rig.events().filter { $0 == .bondStored }.count == 2)
        var out = ByteBuffer(capacity: 4096)
        #expect(rig.controller.serializeBonds(into: &out) == true)
        let text = String(decoding: out.toArray(), as: UTF8.self)
        #expect(text == bondFile + "irk c12233445566 02 0f0e0d0c0b0a09080706050403020100\n")
        #expect(!text.contains("5a1122334455"), "the private address is not kept")

        var restarted = ControllerRig(bonds: text)
        _ = restarted.events()
        #expect(restarted.controller.bonds[0].identityResolvingKey != nil)
        // The kernel resolved the new private address with the loaded IRK.
        restarted.feed(deviceConnected)
        #expect(restarted.sent() == [], "the bonded phone stays connected")
        #expect(restarted.events() == [.connected(bonded: true, address: phone)])
        // A private address the kernel could not resolve is a stranger.
        restarted.feed(mgmtEvent(0x000B, "66 77 88 99 AA 4B 02  00 00 00 00  00 00"))
        #expect(restarted.sent() == ["14 00 00 00 07 00 66 77 88 99 AA 4B 02"])
    }

    @Test("outside pairing mode a phone without a bond is disconnected as soon as it connects")
    func unbondedDisconnected() {
        var rig = ControllerRig(bonds: "wristlink-bonds 1\nltk c1aaaaaaaaaa 02 02 00 10 0000 0000000000000000 00112233445566778899aabbccddeeff\n")
        _ = rig.events()
        rig.feed(deviceConnected)
        #expect(rig.sent() == ["14 00 00 00 07 00 " + phoneAddress])
        #expect(rig.events() == [.refusedUnbonded])
    }

    @Test("outside pairing mode a pairing request is refused at once")
    func requestOutsidePairingMode() {
        var rig = ControllerRig(bonds: bondFile)
        rig.feed(confirmationRequest)
        #expect(rig.sent() == ["1D 00 00 00 07 00 " + phoneAddress])
        #expect(rig.events().contains(.consent(granted: false, reason: .notPairing)))
    }

    @Test("a bonded phone reconnects without a press, and the time it was gone is reported")
    func bondedReconnects() {
        var rig = ControllerRig(bonds: bondFile)
        rig.feed(deviceConnected)
        rig.feed(deviceDisconnected)
        rig.now = rig.now.advanced(byMs: 2_500)
        rig.feed(deviceConnected)
        #expect(rig.sent() == [])
        let events = rig.events()
        #expect(events.contains(.connected(bonded: true, address: phone)))
        #expect(events.contains(.reconnected(afterMs: 2_500)))
    }

    @Test("a long press of both buttons opens pairing mode for the window; a bond or the timeout closes it")
    func manualPairingMode() {
        var rig = ControllerRig(bonds: bondFile) { $0.pairingWindowMs = 120_000 }
        rig.controller.enterPairingMode(now: rig.now)
        #expect(rig.controller.isPairingMode == true)
        rig.wait(ms: 120_000)
        #expect(rig.controller.isPairingMode == false)
        #expect(rig.events().contains(.pairingMode(on: false, reason: .timeout)))
        rig.controller.enterPairingMode(now: rig.now)
        rig.feed(mgmtEvent(0x000F, "61 55 44 33 22 C2 02  01  5A 6E 0B 00"))
        rig.controller.consent(granted: true, now: rig.now)
        rig.feed(mgmtEvent(0x000A, "01 61 55 44 33 22 C2 02 02 00 10 0000 0000000000000000 00112233445566778899AABBCCDDEEFF"))
        #expect(rig.controller.isPairingMode == false)
        #expect(rig.events().contains(.pairingMode(on: false, reason: .bonded)))
    }

    @Test("a malformed management event is dropped and reported, never fatal")
    func malformedEvent() {
        var rig = ControllerRig()
        rig.feed([0x0B, 0x00, 0x00, 0x00, 0x20, 0x00, 0x01])
        #expect(rig.events().contains(.dropped(.mgmtEventMalformed)))
    }

    @Test("started before the controller: one controller-gone, then probes find it even when Index Added is never seen")
    func controllerLateWithoutIndexAdded() {
        var rig = ControllerRig()
        let invalidIndex = mgmtEvent(0x0002, "04 00 11")
        rig.feed(invalidIndex)
        #expect(rig.events().filter { $0 == .controllerGone }.count == 1)
        #expect(rig.controller.deadline == rig.now.advanced(byMs: 2_000))
        rig.wait(ms: 2_000)
        #expect(rig.sent() == ["04 00 00 00 00 00"], "the first probe: Read Controller Information")
        rig.feed(invalidIndex)
        rig.wait(ms: 4_000)
        #expect(rig.sent() == ["04 00 00 00 00 00"], "the second, 4 s later")
        #expect(rig.events().filter { $0 == .controllerGone }.isEmpty, "a probe that finds nothing says nothing")
        // hci0 is there now, LE only, unpowered: the probe's answer starts the set-up.
        rig.feed(mgmtEvent(0x0001, "04 00 00  5A 6E 0B 00 09 00  09  02 00  FF BE 01 00  00 02 00 00  00 00 00"
            + String(repeating: " 00", count: 249 + 11)))
        #expect(rig.sent().first?.hasPrefix("0D 00 00 00") == true, "Set Low Energy follows")
        #expect(rig.controller.isAdvertising == false)
    }

    @Test("a retry due from a step that failed as the controller went is dropped when the controller comes back")
    func staleRetryDropped() {
        var rig = ControllerRig()
        _ = rig.events()
        rig.feed(mgmtEvent(0x0002, "04 00 03"))  // Read Controller Information: Failed
        #expect(rig.events().contains(.setupFailed(step: .readControllerInformation, failure: .status(.failed))))
        #expect(rig.controller.deadline == rig.now.advanced(byMs: 5_000), "the retry")
        rig.feed(mgmtEvent(0x0005, ""))  // Index Removed
        #expect(rig.events() == [.controllerGone])
        rig.wait(ms: 1_000)
        rig.feed(mgmtEvent(0x0004, ""))  // Index Added
        #expect(rig.sent() == ["04 00 00 00 00 00"], "the sequence starts over at once")
        let sentAt = rig.now
        rig.wait(ms: 5_000)
        #expect(rig.sent() == [], "no second start-over when the old retry would have been due")
        #expect(rig.controller.deadline == sentAt.advanced(byMs: 10_000), "waiting for the kernel's answer only (up to its deadline)")
    }

    // MARK: Keys only from a pairing the wearer allowed

    @Test("outside pairing mode a key from a phone nobody allowed is not stored: reported no-consent, counted, and the kernel forgets it (Unpair Device, disconnect)")
    func unallowedKeyForgotten() {
        var rig = ControllerRig(bonds: bondFile)
        _ = rig.events()
        rig.feed(mgmtEvent(0x000A, "01 " + strangerAddress + " 02 00 10 0000 0000000000000000 FFEEDDCCBBAA99887766554433221100"))
        #expect(rig.events() == [.bondIgnored(reason: .noConsent)])
        #expect(rig.sent() == ["1B 00 00 00 08 00 " + strangerAddress + " 01"])
        #expect(rig.controller.keysRefused == 1)
        #expect(rig.controller.bonds.count == 1)
        #expect(rig.controller.bonds.firstIndex(of: stranger) == nil)
        #expect(rig.controller.bondsNeedSaving == false)
        // Its IRK, from the same pairing: counted, the kernel already told.
        rig.feed(mgmtEvent(0x0018, "01 00 00 00 00 00 00 " + strangerAddress + " 0F 0E 0D 0C 0B 0A 09 08 07 06 05 04 03 02 01 00"))
        #expect(rig.events() == [.bondIgnored(reason: .noConsent)])
        #expect(rig.sent() == [])
        #expect(rig.controller.keysRefused == 2)
    }

    @Test("a new key for a bonded phone without consent keeps the bond, is reported as a stale bond, and the kernel gets the stored keys back and drops the link")
    func unallowedKeyForBondedPhone() {
        var rig = ControllerRig(bonds: bondFile)
        rig.feed(deviceConnected)
        _ = rig.events()
        rig.feed(mgmtEvent(0x000A, "01 " + phoneAddress + " 02 00 10 0000 0000000000000000 FFEEDDCCBBAA99887766554433221100"))
        #expect(rig.events() == [.bondIgnored(reason: .noConsent), .staleBond(replacing: false)])
        // Unpair Device would delete the bond's own keys in the kernel too:
        // both Load commands replace the kernel's lists with the store's.
        #expect(rig.sent() == [
            "13 00 00 00 26 00 01 00 " + phoneAddress + " 02 00 10 00 00 00 00 00 00 00 00 00 00 00 11 22 33 44 55 66 77 88 99 AA BB CC DD EE FF",
            "30 00 00 00 02 00 00 00",
            "14 00 00 00 07 00 " + phoneAddress,
        ])
        var out = ByteBuffer(capacity: 4096)
        #expect(rig.controller.serializeBonds(into: &out) == true)
        #expect(String(decoding: out.toArray(), as: UTF8.self) == bondFile)
        #expect(rig.controller.bondsNeedSaving == false)
    }

    @Test("the same key again for a bonded phone is unchanged: nothing reported, nothing sent, with or without consent")
    func sameKeyUnchanged() {
        var rig = ControllerRig(bonds: bondFile)
        rig.feed(deviceConnected)
        _ = rig.events()
        rig.feed(newLongTermKey)
        #expect(rig.events() == [])
        #expect(rig.sent() == [])
        #expect(rig.controller.keysRefused == 0)
        #expect(rig.controller.bondsNeedSaving == false)
    }

    @Test("in pairing mode a key without an accepted confirmation (a kernel that did not ask) is not stored and pairing mode stays on")
    func pairingModeAloneIsNoConsent() {
        var rig = ControllerRig()
        rig.feed(deviceConnected)
        _ = rig.events()
        rig.feed(newLongTermKey)
        #expect(rig.events() == [.bondIgnored(reason: .noConsent)])
        #expect(rig.sent() == ["1B 00 00 00 08 00 " + phoneAddress + " 01"])
        #expect(rig.controller.bonds.count == 0)
        #expect(rig.controller.isPairingMode == true)
    }

    @Test("with automatic acceptance, pairing mode is the consent: a key arriving without a confirmation request is stored")
    func automaticAcceptanceWithoutRequest() {
        var rig = ControllerRig { $0.autoAcceptPairing = true }
        rig.feed(deviceConnected)
        _ = rig.events()
        rig.feed(newLongTermKey)
        #expect(rig.events() == [.bondStored, .pairingMode(on: false, reason: .bonded)])
        // The same pairing's IRK after pairing mode ended with the bond.
        rig.feed(mgmtEvent(0x0018, "01 00 00 00 00 00 00 " + phoneAddress + " 0F 0E 0D 0C 0B 0A 09 08 07 06 05 04 03 02 01 00"))
        #expect(rig.events() == [.bondStored])
        #expect(rig.sent() == [])
    }

    @Test("consent lasts for the link: after the phone disconnected, its keys need a new consent")
    func consentEndsWithTheLink() {
        var rig = ControllerRig()
        rig.feed(deviceConnected)
        rig.feed(confirmationRequest)
        rig.controller.consent(granted: true, now: rig.now)
        _ = rig.sent()
        rig.feed(deviceDisconnected)
        _ = rig.events()
        rig.feed(newLongTermKey)
        #expect(rig.events() == [.bondIgnored(reason: .noConsent)])
        #expect(rig.sent() == ["1B 00 00 00 08 00 " + phoneAddress + " 01"])
        #expect(rig.controller.bonds.count == 0)
    }

    @Test("an allowed pairing whose IRK names a bonded phone's identity replaces that bond whole, reported as a stale bond")
    func identityTakeoverReported() {
        // The bond: a Secure Connections key, a legacy key of the other role, an IRK.
        let oldBond = bondFile + "ltk c12233445566 02 00 01 10 1234 0102030405060708 a0a1a2a3a4a5a6a7a8a9aaabacadaeaf\n"
            + "irk c12233445566 02 00112233445566778899aabbccddeeff\n"
        // 5A:11:22:33:44:55: a resolvable private address the stored IRK does not resolve.
        let rpa = "55 44 33 22 11 5A 02"
        var rig = ControllerRig(bonds: oldBond)
        rig.controller.enterPairingMode(now: rig.now)
        rig.feed(mgmtEvent(0x000B, rpa + " 00 00 00 00  00 00"))
        rig.feed(mgmtEvent(0x000F, rpa + " 01  5A 6E 0B 00"))
        _ = rig.events()
        rig.controller.consent(granted: true, now: rig.now)
        #expect(rig.sent() == ["1C 00 00 00 07 00 " + rpa])
        _ = rig.events()
        rig.feed(mgmtEvent(0x0018, "01 55 44 33 22 11 5A " + phoneAddress + " 0F 0E 0D 0C 0B 0A 09 08 07 06 05 04 03 02 01 00"))
        #expect(rig.events() == [.staleBond(replacing: true), .bondStored, .pairingMode(on: false, reason: .bonded)])
        rig.feed(mgmtEvent(0x000A, "01 " + phoneAddress + " 02 00 10 0000 0000000000000000 FFEEDDCCBBAA99887766554433221100"))
        #expect(rig.events().contains(.bondStored))
        #expect(rig.sent() == [])
        var out = ByteBuffer(capacity: 4096)
        #expect(rig.controller.serializeBonds(into: &out) == true)
        #expect(String(decoding: out.toArray(), as: UTF8.self) == "wristlink-bonds 1\n"
            + "ltk c12233445566 02 02 00 10 0000 0000000000000000 ffeeddccbbaa99887766554433221100\n"
            + "irk c12233445566 02 0f0e0d0c0b0a09080706050403020100\n")
    }

    // MARK: Set-up replies that never come

    @Test("a set-up command whose reply never comes (dropped on the way): the step fails with no-reply after 10 s and set-up starts over 5 s later")
    func lostReplyRetried() {
        var rig = ControllerRig()
        _ = rig.events()
        // hci0, LE only, unpowered.
        rig.feed(mgmtEvent(0x0001, "04 00 00  5A 6E 0B 00 09 00  09  02 00  FF BE 01 00  00 02 00 00  00 00 00"
            + String(repeating: " 00", count: 249 + 11)))
        #expect(rig.sent() == ["0D 00 00 00 01 00 01"], "Set Low Energy, whose reply is lost")
        #expect(rig.controller.deadline == rig.now.advanced(byMs: 10_000))
        rig.wait(ms: 9_999)
        #expect(rig.events() == [])
        rig.wait(ms: 1)
        #expect(rig.events() == [.setupFailed(step: .enableLowEnergy, failure: .noReply)])
        #expect(rig.controller.deadline == rig.now.advanced(byMs: 5_000), "the retry")
        rig.wait(ms: 5_000)
        #expect(rig.sent() == ["04 00 00 00 00 00"], "started over")
    }

    @Test("a reconnection storm: the 4th disconnection within 60 s gets no fast phase, the slow interval goes out at once, and it is reported")
    func reconnectionStormReported() {
        var rig = ControllerRig(bonds: bondFile)
        rig.completeSetup()
        #expect(rig.controller.isAdvertising == true)
        _ = rig.events()
        for _ in 0..<3 {
            rig.now = rig.now.advanced(byMs: 2_000)
            rig.feed(deviceConnected)
            rig.feed(deviceDisconnected)
        }
        #expect(rig.sent() == [], "three fast phases: the kernel re-enables the instance, added fast")
        #expect(!rig.events().contains(.fastAdvertisingSkipped))
        rig.now = rig.now.advanced(byMs: 2_000)
        rig.feed(deviceConnected)
        rig.feed(deviceDisconnected)
        #expect(rig.events().contains(.fastAdvertisingSkipped))
        #expect(rig.sent() == ["4C 00 00 00 0A 00 0A 00 02 9C 02 0B 00 02 9C 02"])
    }

    @Test("a disabled controller (UNIX link) sends nothing")
    func disabled() {
        var config = ControllerConfig()
        config.enabled = false
        var controller = Controller(config: config, bonds: BondStore())
        controller.start(now: .zero)
        var out = ByteBuffer(capacity: 64)
        #expect(controller.popCommand(into: &out) == false)
    }
}
