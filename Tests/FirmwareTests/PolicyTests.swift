// SPDX-License-Identifier: Apache-2.0
import ANCS
import Bounded
import Config
import Firmware
import MemoryPlatform
import Mgmt
import Platform
import PlatformLinux
import Testing
import TestSupport

/// The wearable core driven by the real `Runner` on the in-memory platform
/// (MemoryPlatform: virtual clock, scripted link, recorded lines), brought
/// up with the scripted phone of `Script.bringUp` (Control Point 0x0010,
/// Data Source 0x0012, Notification Source 0x000D). Every input goes
/// through the platform and the runner's own step and settle (its bonds,
/// its link actions, its lines); the allocation tests alone call the core
/// straight (`runner.core`), to count the core without the platform's
/// recording.
struct CoreRig: ~Copyable {
    var runner: Runner<MemoryPlatform, RecordingSink>
    /// The PDUs the firmware sent, oldest first (hex), until a test takes them.
    var sent: [String] = []
    /// The management commands the firmware sent (hex).
    var management: [String] = []

    var core: WearableCore { _read { yield runner.core } }
    /// What the core reported, in order (the sink's record).
    var events: [FirmwareEvent] {
        get { runner.effects.sink.events }
        set { runner.effects.sink.events = newValue }
    }
    /// The virtual clock. Setting it moves time without waking the runner
    /// (the allocation tests step the core themselves).
    var now: Instant {
        get { runner.platform.now() }
        set { runner.platform.setClock(newValue) }
    }

    /// `script`: the bring-up to play (nil: `Script.bringUp`, which must
    /// leave the link live). A bring-up that goes otherwise is recorded as
    /// an issue of the calling test, at its line, and the script stops
    /// there: the test fails with the step, the other tests run on.
    /// `companions`: the link goes on to the phone's AMS and CTS once ANCS
    /// is live (the script must answer for them: CompanionTests).
    init(policy: PolicyConfig = defaultPolicy, replayWindowMs: Int64? = nil, controller: Bool = false, bonds: String? = nil,
         script: [Step]? = nil, companions: Bool = false, settingsError: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) {
        var config = testConfig(policy: policy)
        config.settingsError = settingsError
        config.link.companionServices = companions
        if let replayWindowMs { config.replayWindowMs = replayWindowMs }
        config.controller.enabled = controller
        var store = BondStore()
        if let bonds {
            do {
                store = try BondStore.parse(Array(bonds.utf8).span)
            } catch {
                Issue.record("CoreRig: the bond file does not parse: \(error)", sourceLocation: sourceLocation)
            }
        }
        runner = Runner(platform: MemoryPlatform(outputs: config.board.outputs.count, startMs: 10_000),
                        sink: RecordingSink(), core: WearableCore(config: config, bonds: store))
        runner.start()
        collect()
        runner.platform.queue(.connected)
        settle()
        // A bonded phone encrypts the link by itself at reconnection, as
        // iPhones do; nothing is subscribed before.
        if runner.core.phone.isBonded, !runner.core.phone.isEncrypted { securityChanged(encrypted: true) }
        var broken = false
        for (i, step) in (script ?? Script.bringUp).enumerated() {
            switch step {
            case .firmware(let expected):
                guard sent.first == expected else {
                    Issue.record("CoreRig bring-up step \(i): expected the firmware to send \(expected), got \(sent.first ?? "nothing")",
                                 sourceLocation: sourceLocation)
                    broken = true
                    break
                }
                sent.removeFirst()
            case .phone(let text):
                phone(text)
            }
            if broken { break }
        }
        if script == nil && !broken {
            #expect(runner.core.phone.state == .live, "CoreRig: the scripted bring-up must leave the link live", sourceLocation: sourceLocation)
        }
        events.removeAll()
    }

    /// The runner's steps (no time passing) until everything queued is
    /// taken: inputs, then its settle (commands, PDUs, management, bonds,
    /// link actions, lines). A raise is answered "encrypted" at once by the
    /// platform, as the UNIX link does. Bounded: input left queued is a
    /// failure of the test, not a hang.
    mutating func settle() {
        let taken = runner.takeQueued()
        #expect(taken, "CoreRig: the runner left input queued")
        collect()
    }

    private mutating func collect() {
        sent += runner.platform.takeSent().map { toHex($0) }
        management += runner.platform.takeControllerSent().map { toHex($0) }
    }

    mutating func phone(_ text: String) {
        runner.platform.queue(.pdu(hex(text)))
        settle()
    }

    /// A Notification Source notification.
    mutating func notify(_ event: EventID, _ flags: EventFlags, _ category: CategoryID, count: UInt8 = 1, uid: UInt32) {
        let value = [event.rawValue, flags.rawValue, category.rawValue, count] + (0..<4).map { UInt8(truncatingIfNeeded: uid >> (8 * UInt32($0))) }
        phone("1B 0D 00 " + toHex(value))
    }

    /// The phone connects (a bonded one encrypts by itself when `encrypts`).
    mutating func linkUp(encrypts: Bool = false) {
        runner.platform.queue(.connected)
        if encrypts { runner.platform.queue(.securityChanged(encrypted: true)) }
        settle()
    }

    /// The link ends: a platform reason comes through the platform as a
    /// closed socket does; any other is the core's own.
    mutating func linkDown(_ reason: EndReason = .platform("peer-closed")) {
        if case .platform(let name) = reason {
            runner.platform.queue(.disconnected(reason: name))
        } else {
            let at = now
            runner.core.linkDown(reason: reason, now: at, into: &runner.effects)
        }
        settle()
    }

    mutating func securityChanged(encrypted: Bool) {
        runner.platform.queue(.securityChanged(encrypted: encrypted))
        settle()
    }

    /// A button edge or a stop, as the lines deliver it.
    mutating func input(_ event: InputEvent) {
        runner.platform.queue(event)
        settle()
    }

    /// A management packet from the controller.
    mutating func controllerPacket(_ bytes: [UInt8]) {
        runner.platform.queueController(bytes)
        settle()
    }

    /// Runs the virtual clock `ms` on, the runner waking at every deadline
    /// on the way, as the loop would.
    mutating func advance(ms: Int64) {
        let target = now.advanced(byMs: ms)
        var steps = 0
        repeat {
            runner.step(waitingAtMostMs: target.ms(since: now))
            steps += 1
        } while now < target && steps < 1_000_000
        collect()
    }

    /// Presses `button` (0 accept, 1 reject) for `ms`.
    mutating func press(_ button: Int, ms: Int64 = 100) {
        input(.edge(button: button, pressed: true, at: now))
        advance(ms: ms)
        input(.edge(button: button, pressed: false, at: now))
    }

    func level(_ name: String) -> Bool { runner.platform.levels[simBoard.outputIndex(named: name)!] }

    /// Takes the PDUs sent so far.
    mutating func takeSent() -> [String] {
        defer { sent.removeAll() }
        return sent
    }

    /// Samples `name` every 10 ms for `ms`; true if it was ever on.
    mutating func everOn(_ name: String, forMs ms: Int64) -> Bool {
        var seen = level(name)
        var left = ms
        while left > 0 {
            advance(ms: 10)
            left -= 10
            seen = seen || level(name)
        }
        return seen
    }
}

let call: EventFlags = [.positiveAction, .negativeAction]

@Suite("Alert policy and buttons (default policy, simulated board)")
struct PolicyTests {
    @Test("an incoming call rings on the call LED and the motor until the phone removes it")
    func callRingsUntilRemoved() {
        var rig = CoreRig()
        rig.notify(.added, call, .incomingCall, uid: 1)
        #expect(rig.level("led-call") == true)
        #expect(rig.level("vibration") == true)
        rig.advance(ms: 600)
        #expect(rig.level("vibration") == false, "ring: on 600 off 400")
        rig.advance(ms: 400)
        #expect(rig.level("vibration") == true)
        rig.advance(ms: 30_000)
        #expect(rig.everOn("vibration", forMs: 1_000) == true, "still ringing after 30 s")
        rig.notify(.removed, [], .incomingCall, count: 0, uid: 1)
        #expect(rig.level("led-call") == false)
        #expect(rig.everOn("vibration", forMs: 3_000) == false)
    }

    @Test("a short press on accept sends 02 UID 00 for the ringing call; the ring stops when the phone removes it")
    func acceptAnswersCall() {
        var rig = CoreRig()
        rig.notify(.added, call, .incomingCall, uid: 0x2A)
        _ = rig.takeSent()
        rig.press(0)
        #expect(rig.takeSent() == ["12 10 00 02 2A 00 00 00 00"])
        #expect(rig.events.contains(.action(uid: 0x2A, action: .positive, result: .queued)))
        rig.phone("13")
        #expect(rig.events.contains(.action(uid: 0x2A, action: .positive, result: .sent)))
        #expect(rig.everOn("vibration", forMs: 1_000) == true, "rings until the phone removes the call")
        rig.notify(.removed, [], .incomingCall, count: 0, uid: 0x2A)
        #expect(rig.everOn("vibration", forMs: 2_000) == false)
        #expect(rig.level("led-call") == false)
    }

    @Test("a short press on reject sends the negative action")
    func rejectDeclinesCall() {
        var rig = CoreRig()
        rig.notify(.added, call, .incomingCall, uid: 5)
        _ = rig.takeSent()
        rig.press(1)
        #expect(rig.takeSent() == ["12 10 00 02 05 00 00 00 01"])
    }

    @Test("with no incoming call, a press acts on the most recent notification offering that action")
    func latestActionable() {
        var rig = CoreRig()
        rig.notify(.added, [.negativeAction], .social, uid: 7)
        rig.notify(.added, [.negativeAction], .email, uid: 8)
        rig.notify(.added, [], .email, uid: 9)
        _ = rig.takeSent()
        rig.press(1)
        #expect(rig.takeSent() == ["12 10 00 02 08 00 00 00 01"])
    }

    @Test("no action flag, no command: a short nothing-to-do buzz instead")
    func nothingToDo() {
        var rig = CoreRig()
        rig.notify(.added, [], .email, uid: 3)
        rig.advance(ms: 2_000)
        _ = rig.takeSent()
        rig.press(0)
        // No call: a short accept waits out the double-press gap (300 ms,
        // +1) in case it is the status gesture.
        rig.advance(ms: 301)
        #expect(rig.takeSent() == [])
        #expect(rig.events.contains(.action(uid: 0, action: .positive, result: .nothingToDo)), "no target: uid 0")
        #expect(rig.level("vibration") == true, "nudge: on 60")
        rig.advance(ms: 70)
        #expect(rig.level("vibration") == false)
    }

    @Test("Silent never vibrates")
    func silentNeverVibrates() {
        var rig = CoreRig()
        rig.notify(.added, [.silent, .positiveAction], .incomingCall, uid: 2)
        #expect(rig.level("led-call") == true)
        #expect(rig.everOn("vibration", forMs: 5_000) == false)
    }

    @Test("Important escalates: the stronger ring holds the motor longer")
    func importantEscalates() {
        var rig = CoreRig()
        rig.notify(.added, [.important, .positiveAction], .incomingCall, uid: 4)
        rig.advance(ms: 700)
        #expect(rig.level("vibration") == true, "ring-strong: on 1000 (plain ring would be off at 600)")
        rig.advance(ms: 350)
        #expect(rig.level("vibration") == false)
    }

    @Test("PreExisting notifications never buzz or flash; they only light the unread indicator")
    func preExistingOnlyUnread() {
        var rig = CoreRig()
        rig.notify(.added, [.preExisting], .social, count: 1, uid: 10)
        rig.notify(.added, [.preExisting, .positiveAction], .missedCall, count: 1, uid: 11)
        #expect(rig.level("led-notify") == true, "unread: Social")
        #expect(rig.everOn("vibration", forMs: 3_000) == false)
        #expect(rig.everOn("led-call", forMs: 100) == false)
    }

    @Test("a PreExisting incoming call is ringing now: it rings (an IncomingCall exists only while the call rings)")
    func preExistingCallRings() {
        var rig = CoreRig()
        rig.notify(.added, [.preExisting, .positiveAction], .incomingCall, count: 1, uid: 11)
        #expect(rig.level("led-call") == true)
        #expect(rig.level("vibration") == true)
    }

    @Test("the unread indicator follows the phone's CategoryCount")
    func unreadFollowsCount() {
        var rig = CoreRig()
        rig.notify(.added, [], .email, count: 1, uid: 20)
        rig.advance(ms: 2_000)
        #expect(rig.level("led-notify") == true)
        rig.notify(.added, [], .email, count: 2, uid: 21)
        rig.notify(.removed, [], .email, count: 1, uid: 20)
        rig.advance(ms: 2_000)
        #expect(rig.level("led-notify") == true)
        rig.notify(.removed, [], .email, count: 0, uid: 21)
        #expect(rig.level("led-notify") == false)
    }

    @Test("Modified does not alert again (the default policy)")
    func modifiedDoesNotRealert() {
        var rig = CoreRig()
        rig.notify(.added, [], .social, uid: 30)
        rig.advance(ms: 3_000)
        rig.notify(.modified, [], .social, uid: 30)
        #expect(rig.everOn("vibration", forMs: 1_000) == false)
    }

    @Test("0xA2 on an action: the failure pattern plays and that notification's ring stops")
    func invalidParameterFailure() {
        var rig = CoreRig()
        rig.notify(.added, call, .incomingCall, uid: 6)
        rig.press(0)
        rig.phone("01 12 10 00 A2")
        #expect(rig.events.contains(.action(uid: 6, action: .positive, result: .failed(.ancs(.invalidParameter)))))
        #expect(rig.level("led-call") == false, "the phone says the call is gone")
        // failure: on 100 off 80 on 100 off 80 on 100
        #expect(rig.level("vibration") == true)
        rig.advance(ms: 120)
        #expect(rig.level("vibration") == false)
        rig.advance(ms: 70)
        #expect(rig.level("vibration") == true)
        rig.advance(ms: 500)
        #expect(rig.everOn("vibration", forMs: 2_000) == false)
    }

    @Test("0xA3 Action failed: the failure pattern plays over the ring, and the call keeps ringing after it")
    func actionFailedKeepsRinging() {
        var rig = CoreRig()
        rig.notify(.added, call, .incomingCall, uid: 6)
        rig.press(0)
        rig.phone("01 12 10 00 A3")
        #expect(rig.events.contains(.action(uid: 6, action: .positive, result: .failed(.ancs(.actionFailed)))))
        rig.advance(ms: 1_000)
        #expect(rig.everOn("led-call", forMs: 500) == true, "still ringing")
        #expect(rig.everOn("vibration", forMs: 2_000) == true)
    }

    @Test("every output is off after shutdown")
    func allOffOnShutdown() {
        var rig = CoreRig()
        rig.notify(.added, call, .incomingCall, uid: 1)
        rig.notify(.added, [], .social, uid: 2)
        #expect(rig.level("led-call") == true)
        rig.runner.shutdown()
        for output in simBoard.outputs { #expect(rig.level(output.name) == false, "\(output.name)") }
    }

    @Test("session end turns every notification pattern off")
    func sessionEndAllOff() {
        var rig = CoreRig()
        rig.notify(.added, call, .incomingCall, uid: 1)
        rig.linkDown(.platform("peer-closed"))
        rig.settle()
        for output in simBoard.outputs { #expect(rig.level(output.name) == false) }
    }
}

@Suite("Rules that need attributes")
struct RuleTests {
    static let policy = try! PolicyConfig.parse(
        (try! ProcessControl.readFile(repositoryRoot + "/board/policy.conf")) + """

            rule app=com.apple.MobileSMS led-call=blink
            rule app=com.example.spam
            rule category=IncomingCall title="Mom" vibration=ring-strong priority=10
            """, board: simBoard)

    /// The Data Source response for `uid` with these attributes.
    static func response(uid: UInt8, _ tuples: [(UInt8, String)]) -> String {
        var bytes: [UInt8] = [0, uid, 0, 0, 0]
        for (id, value) in tuples {
            let v = Array(value.utf8)
            bytes += [id, UInt8(v.count), 0] + v
        }
        return "1B 12 00 " + toHex(bytes)
    }

    @Test("only the attributes the rules for that category use are fetched, and the alert waits for them")
    func fetchesOnlyWhatRulesUse() {
        var rig = CoreRig(policy: Self.policy)
        rig.notify(.added, [], .social, uid: 1)
        #expect(rig.takeSent() == ["12 10 00 00 01 00 00 00 00"], "Social: only the app rules apply: AppIdentifier")
        #expect(rig.level("vibration") == false, "waiting for the attributes")
        rig.phone("13")
        rig.phone(Self.response(uid: 1, [(0, "com.other")]))
        // The app identifier known, its display name is asked for once.
        #expect(rig.takeSent() == ["12 10 00 01 63 6F 6D 2E 6F 74 68 65 72 00 00"], "Get App Attributes com.other DisplayName")
        rig.phone("13")
        rig.phone("1B 12 00 01 63 6F 6D 2E 6F 74 68 65 72 00 00 05 00 4F 74 68 65 72")
        rig.notify(.added, call, .incomingCall, uid: 2)
        #expect(rig.takeSent() == ["12 10 00 00 02 00 00 00 00 01 40 00"], "IncomingCall: the title rule too")
        // A second notification from the same app: the name is cached.
        rig.phone("13")
        rig.phone(Self.response(uid: 2, [(0, "com.other"), (1, "Bob")]))
        #expect(rig.takeSent() == [])
    }

    @Test("a per-app rule lights the right LED once the attributes arrive")
    func appRule() {
        var rig = CoreRig(policy: Self.policy)
        rig.notify(.added, [], .social, uid: 1)
        rig.phone("13")
        rig.phone(Self.response(uid: 1, [(0, "com.apple.MobileSMS"), (1, "Bob")]))
        #expect(rig.level("led-call") == true, "the rule's LED")
        #expect(rig.everOn("vibration", forMs: 1_000) == false, "the rule replaces the category's alert (Social's tap)")
    }

    @Test("a rule with no outputs silences its app: it never buzzes, not even briefly")
    func silencingRule() {
        var rig = CoreRig(policy: Self.policy)
        rig.notify(.added, [], .social, uid: 2)
        #expect(rig.level("vibration") == false)
        rig.phone("13")
        rig.phone(Self.response(uid: 2, [(0, "com.example.spam"), (1, "WIN")]))
        #expect(rig.everOn("vibration", forMs: 2_000) == false)
    }

    @Test("a VIP caller rule escalates the ring")
    func vipCaller() {
        var rig = CoreRig(policy: Self.policy)
        rig.notify(.added, call, .incomingCall, uid: 3)
        rig.phone("13")
        rig.phone(Self.response(uid: 3, [(0, "com.apple.mobilephone"), (1, "Mom")]))
        rig.advance(ms: 700)
        #expect(rig.level("vibration") == true, "ring-strong holds for 1000 ms")
    }

    @Test("no match: the category's own alert plays")
    func noMatch() {
        var rig = CoreRig(policy: Self.policy)
        rig.notify(.added, [], .social, uid: 4)
        rig.phone("13")
        rig.phone(Self.response(uid: 4, [(0, "com.other"), (1, "Hi")]))
        #expect(rig.level("vibration") == true, "Social: tap")
    }

    @Test("attributes that never come: the category's alert plays after the wait")
    func waitExpires() {
        var rig = CoreRig(policy: Self.policy)
        rig.notify(.added, [], .social, uid: 5)
        rig.phone("13")
        rig.advance(ms: 1_400)
        #expect(rig.level("vibration") == false)
        rig.advance(ms: 100)
        #expect(rig.level("vibration") == true)
        #expect(rig.core.counters.ruleWaitsExpired == 1)
    }
}

@Suite("Pairing consent with the buttons")
struct ConsentTests {
    @Test("a notification's UID is never one of the wearable's own indications: removing UID 0xFFFFFFF2 leaves pairing mode's pattern playing")
    func uidNeverAnIndication() {
        // 0xFFFFFFF0...3 and 0xFFFFFF00+ were once reserved pattern owners in
        // the UID space; a phone may send any UID.
        var rig = CoreRig(controller: true)
        #expect(rig.core.controller.isPairingMode == true)
        #expect(rig.everOn("led-notify", forMs: 1_000) == true, "pairing mode's pattern plays")
        for uid: UInt32 in [0xFFFF_FFF2, 0xFFFF_FFF0, 0xFFFF_FF01] {
            rig.notify(.added, [], .social, count: 1, uid: uid)
            rig.advance(ms: 3_000)
            rig.notify(.removed, [], .social, count: 0, uid: uid)
        }
        rig.advance(ms: 500)
        var changes = 0
        var last = rig.level("led-notify")
        for _ in 0..<300 {
            rig.advance(ms: 10)
            if rig.level("led-notify") != last { changes += 1 }
            last = rig.level("led-notify")
        }
        #expect(changes >= 2, "pairing mode's pattern still blinks on led-notify after the removals")
        #expect(rig.core.controller.isPairingMode == true)
    }

    @Test("during a pairing request the accept button grants it (User Confirmation Reply), not a notification action")
    func acceptGrants() {
        var rig = CoreRig(controller: true)
        rig.management.removeAll()
        rig.notify(.added, call, .incomingCall, uid: 1)
        _ = rig.takeSent()
        #expect(rig.core.controller.isAwaitingConsent == false)
        rig.controllerPacket(confirmationRequest)
        rig.settle()
        // Without a bond pairing mode (and its pattern) was on before the
        // request; what the request changes is that a press now answers it.
        #expect(rig.core.controller.isAwaitingConsent == true, "the request waits for the wearer")
        #expect(rig.events.contains(.controller(.consentRequested)))
        #expect(rig.everOn("led-notify", forMs: 1_000) == true, "pairing mode's pattern plays while the request waits")
        #expect(rig.core.controller.isAwaitingConsent == true, "still waiting a second later")
        rig.press(0)
        #expect(rig.core.controller.isAwaitingConsent == false, "the press answered the request")
        #expect(rig.management == ["1C 00 00 00 07 00 " + phoneAddress])
        #expect(rig.takeSent() == [], "the press did not answer the call")
    }

    @Test("the reject button refuses the pairing")
    func rejectRefuses() {
        var rig = CoreRig(controller: true)
        rig.management.removeAll()
        rig.controllerPacket(confirmationRequest)
        rig.settle()
        rig.press(1)
        #expect(rig.management == ["1D 00 00 00 07 00 " + phoneAddress])
    }

    @Test("a long press of both buttons opens pairing mode")
    func chordOpensPairing() {
        var rig = CoreRig(controller: true, bonds: bondFile)
        #expect(rig.core.controller.isPairingMode == false)
        rig.input(.edge(button: 0, pressed: true, at: rig.now))
        rig.input(.edge(button: 1, pressed: true, at: rig.now))
        rig.advance(ms: 900)
        #expect(rig.core.controller.isPairingMode == true)
        #expect(rig.events.contains(.controller(.pairingMode(on: true, reason: .buttons))))
    }

    @Test("a phone that forgot the wearable: refused with the fix reported; both buttons held, then accept, pair it again")
    func forgottenBondPairedAgainWithButtons() {
        var rig = CoreRig(controller: true, bonds: bondFile)
        rig.controllerPacket(deviceConnected)
        rig.management.removeAll()
        rig.controllerPacket(confirmationRequest)
        rig.settle()
        #expect(rig.management == ["1D 00 00 00 07 00 " + phoneAddress], "outside pairing mode: Negative Reply")
        #expect(rig.events.contains(.controller(.staleBond(replacing: false))))
        rig.controllerPacket(deviceDisconnected)
        // The wearer holds both buttons, the phone pairs again, accept.
        rig.input(.edge(button: 0, pressed: true, at: rig.now))
        rig.input(.edge(button: 1, pressed: true, at: rig.now))
        rig.advance(ms: 900)
        rig.input(.edge(button: 0, pressed: false, at: rig.now))
        rig.input(.edge(button: 1, pressed: false, at: rig.now))
        rig.advance(ms: 100)
        #expect(rig.core.controller.isPairingMode == true)
        rig.controllerPacket(deviceConnected)
        rig.management.removeAll()
        rig.controllerPacket(confirmationRequest)
        rig.settle()
        #expect(rig.events.contains(.controller(.staleBond(replacing: true))))
        rig.press(0)
        #expect(rig.management == ["1C 00 00 00 07 00 " + phoneAddress])
        #expect(rig.core.controller.bonds.count == 0, "the stale bond is gone; the new keys will replace it")
    }

    static func packet(_ bytes: [UInt8]) -> ByteBuffer {
        var b = ByteBuffer(capacity: bytes.count)
        b.append(contentsOf: bytes.span)
        return b
    }
}
