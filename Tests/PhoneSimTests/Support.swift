// SPDX-License-Identifier: Apache-2.0
// Helpers for the simulated phone's tests: hex, a phone driven alone with
// hand-written PDUs, and an in-memory loopback between the phone and the
// firmware's PhoneLink on a virtual clock (what the UNIX-socket runner will
// do, minus the sockets).

import ANCS
import ATT
import Bounded
import Firmware
import PhoneSim
import TestSupport

func toHex(text: String) -> String { toHex(Array(text.utf8)) }

/// Get App Attributes (display name) for com.apple.mobilephone: 24 bytes,
/// one more than a Write Request carries at MTU 23.
let mobilephoneCommand = "01 " + toHex(text: "com.apple.mobilephone") + " 00 00"
/// The Prepare Writes that carry it to the Control Point at MTU 23: 18
/// bytes at offset 0, then 6 at offset 18.
let mobilephonePart1 = "16 15 00 00 00 01 63 6F 6D 2E 61 70 70 6C 65 2E 6D 6F 62 69 6C 65 70"
let mobilephonePart2 = "16 15 00 12 00 68 6F 6E 65 00 00"

/// The echo a server gives to a Prepare Write Request.
func echo(_ request: String) -> String { "17" + request.dropFirst(2) }

func bytes<let N: Int>(_ value: InlineBytes<N>) -> [UInt8] { (0..<value.count).map { value[$0] } }

extension PhoneConfig {
    /// A phone answering requests only: no browsing of the peer, so its
    /// outbox holds nothing but answers and notifications.
    static func serverOnly(requiresSecurity: Bool = false) -> PhoneConfig {
        var c = PhoneConfig()
        c.browsePeer = false
        c.requiresSecurity = requiresSecurity
        return c
    }
}

extension PhoneCore {
    /// Feeds one PDU given in hex and returns everything the phone sends.
    mutating func exchange(_ pdu: String, now: Instant = Instant(ms: 0)) -> [String] {
        let bytes = hex(pdu)
        receive(bytes.span, now: now)
        return drain()
    }

    mutating func drain() -> [String] {
        var out = ByteBuffer(capacity: 600)
        var sent: [String] = []
        while popOutgoing(into: &out) { sent.append(toHex(out.toArray())) }
        return sent
    }

    mutating func takeEvents() -> [PhoneEvent] {
        var all: [PhoneEvent] = []
        while let e = nextEvent() { all.append(e) }
        return all
    }

    mutating func takeActions() -> [PhoneAction] {
        var all: [PhoneAction] = []
        while let a = nextAction() { all.append(a) }
        return all
    }

    mutating func run(_ line: String, now: Instant = Instant(ms: 0)) throws(ScenarioError) {
        let bytes = Array(line.utf8)
        try command(bytes.span, now: now)
    }

    mutating func load(_ script: String, now: Instant = Instant(ms: 0)) throws(ScenarioError) {
        let bytes = Array(script.utf8)
        try load(script: bytes.span, now: now)
    }

    /// Subscribes Data Source and Notification Source as the wearable does.
    mutating func subscribeANCS(now: Instant = Instant(ms: 0)) -> [String] {
        exchange("12 18 00 01 00", now: now) + exchange("12 13 00 01 00", now: now)
    }
}

extension PhoneEvent {
    var text: String {
        var out = ByteBuffer(capacity: 300)
        write(into: &out)
        return String(decoding: out.toArray(), as: UTF8.self)
    }
}

/// The phone and the wearable's PhoneLink, wired back to back in memory,
/// with a virtual clock. After every PDU the PhoneLink side is settled as
/// the Runner does (events, flush, actions); `raiseSecurity` reaches the phone
/// as a security request (`PhoneCore.securityRequested`, what SMP carries on
/// a real link) and is answered at once with `securityChanged(encrypted:
/// true)`, as the UNIX link does. Encryption the phone starts itself (a
/// bonded reconnection) reaches the wearable as `securityChanged` when the
/// phone reports it, as BlueZLink notices it. The wearable knows the link is
/// bonded when the phone does (`linkUp(now:bonded:)`), as the controller's
/// bond store would.
struct Loopback: ~Copyable {
    var nc: LinkDriver
    var phone: PhoneCore
    var now = Instant(ms: 1_000)
    var ncEvents: [LinkEvent] = []
    var ncActions: [LinkAction] = []
    var phoneEvents: [PhoneEvent] = []
    var phoneActions: [PhoneAction] = []
    /// Every PDU, "P>" from the phone and "W>" from the wearable.
    var trace: [String] = []
    /// The virtual time of each `trace` entry, in ms.
    var traceTimes: [Int64] = []
    /// Values of the last completed attributes response, read when it completed.
    var attributes: [NotificationAttributeID: [UInt8]] = [:]
    var truncated: Set<UInt8> = []
    /// False: `raiseSecurity` waits for `answerRaises()`, as a kernel that
    /// is still pairing does.
    var answersRaisesAtOnce = true
    var unansweredRaises = 0

    init(phone: PhoneConfig = PhoneConfig(), wearable: PhoneLinkConfig = PhoneLinkConfig(), script: String? = nil) {
        nc = LinkDriver(config: wearable)
        self.phone = PhoneCore(config: phone)
        if let script {
            do {
                try self.phone.load(script, now: now)
            } catch {
                preconditionFailure("test script does not parse: line \(error.line) \(error.kind)")
            }
        }
    }

    var state: LinkState { nc.state }

    mutating func connect() {
        nc.linkUp(now: now, bonded: phone.isBonded)
        phone.linkUp(now: now)
        settle()
    }

    /// Delivers the raises held while `answersRaisesAtOnce` was false.
    mutating func answerRaises() {
        while unansweredRaises > 0 {
            unansweredRaises -= 1
            phone.securityRequested(now: now)
            nc.securityChanged(encrypted: true, now: now)
        }
        settle()
    }

    /// A scenario line typed into the phone.
    mutating func command(_ line: String) {
        do {
            try phone.run(line, now: now)
        } catch {
            preconditionFailure("test command does not parse: \(error.kind)")
        }
        settle()
    }

    /// Moves PDUs both ways until neither side has anything to send.
    mutating func settle() {
        var out = ByteBuffer(capacity: 600)
        var rounds = 0
        while true {
            rounds += 1
            precondition(rounds < 100_000, "the loopback does not settle")
            settleWearable()
            settlePhone()
            var moved = false
            if phone.popOutgoing(into: &out) {
                moved = true
                trace.append("P> " + toHex(out.toArray()))
                traceTimes.append(now.ms(since: .zero))
                nc.receive(out.span, now: now)
            }
            settleWearable()
            if nc.popOutgoing(into: &out) {
                moved = true
                trace.append("W> " + toHex(out.toArray()))
                traceTimes.append(now.ms(since: .zero))
                phone.receive(out.span, now: now)
            }
            if !moved { break }
        }
        settleWearable()
        settlePhone()
    }

    /// Runs the virtual clock for `ms`, firing every deadline on the way.
    mutating func run(forMs ms: Int64) {
        let end = now.advanced(byMs: ms)
        settle()
        var steps = 0
        while let due = earliest(nc.deadline, phone.deadline), due <= end {
            steps += 1
            precondition(steps < 10_000, "a deadline keeps firing")
            if due > now { now = due }
            nc.advance(now: now)
            settleWearable()
            phone.advance(now: now)
            settle()
        }
        now = end
    }

    private mutating func settleWearable() {
        for _ in 0..<8 {
            var any = false
            while let event = nc.nextEvent() {
                any = true
                ncEvents.append(event)
                if case .command(.attributesReceived) = event { captureAttributes() }
            }
            nc.flush(now: now)
            if !any { break }
        }
        while let action = nc.nextAction() {
            ncActions.append(action)
            switch action {
            case .raiseSecurity:
                if answersRaisesAtOnce {
                    phone.securityRequested(now: now)
                    nc.securityChanged(encrypted: true, now: now)
                } else {
                    unansweredRaises += 1
                }
            case .disconnect(let reason):
                nc.linkDown(reason: reason)
                phone.linkDown(reason: "peer-closed", now: now)
            }
        }
    }

    private mutating func settlePhone() {
        while let event = phone.nextEvent() {
            phoneEvents.append(event)
            if case .secured = event, nc.state != .disconnected, !nc.isEncrypted { nc.securityChanged(encrypted: true, now: now) }
        }
        while let action = phone.nextAction() {
            phoneActions.append(action)
            switch action {
            case .connect:
                nc.linkUp(now: now, bonded: phone.isBonded)
                phone.linkUp(now: now)
            case .disconnect:
                nc.linkDown(reason: .platform("peer-closed"))
            case .quit:
                break
            }
        }
    }

    private mutating func captureAttributes() {
        attributes = [:]
        truncated = []
        for raw in 0..<UInt8(8) {
            let id = NotificationAttributeID(rawValue: raw)!
            guard nc.link.session.attributeReceived(id) else { continue }
            let value = nc.link.session.attributeValue(id)
            attributes[id] = (0..<value.count).map { value[$0] }
            if nc.link.session.attributeTruncated(id) { truncated.insert(raw) }
        }
    }

    /// Notification Source changes the wearable applied, in order.
    var ncChanges: [TableChange] {
        ncEvents.compactMap { if case .notification(let change) = $0 { change } else { nil } }
    }

    var ncResults: [CommandResult] {
        ncEvents.compactMap { if case .command(let result) = $0 { result } else { nil } }
    }

    var raises: Int { ncActions.filter { if case .raiseSecurity = $0 { true } else { false } }.count }
    var disconnects: [LinkAction] { ncActions.filter { if case .disconnect = $0 { true } else { false } } }

    /// Virtual times (ms) at which `pdu` went over the link.
    func times(of pdu: String) -> [Int64] { trace.indices.filter { trace[$0] == pdu }.map { traceTimes[$0] } }

    var controlPointWrites: [String] {
        phoneEvents.compactMap { if case .controlPointWrite(let b) = $0 { toHex(bytes(b)) } else { nil } }
    }
}
