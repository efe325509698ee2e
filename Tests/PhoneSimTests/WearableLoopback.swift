// SPDX-License-Identifier: Apache-2.0
// The simulated iPhone and the whole wearable core (link, policy, patterns,
// buttons) back to back in memory on a virtual clock: what `wristlink sim`
// runs, minus the sockets and the terminal. The core is settled as the
// Runner settles it (events, flush, outgoing PDUs, actions). A security
// raise reaches the phone as a security request (what SMP carries) and is
// answered at once, as the UNIX link does; encryption the phone starts by
// itself reaches the core as `securityChanged`.

import ANCS
import Bounded
import Config
import Firmware
import Platform
import PhoneSim
import TestSupport

let simBoard: BoardConfig = {
    do { return try BoardConfig.parse(readRepositoryFile("board/sim/board.conf")) } catch {
        preconditionFailure("board/sim/board.conf: \(error)")
    }
}()

let shippedPolicy: PolicyConfig = {
    do { return try PolicyConfig.parse(readRepositoryFile("board/policy.conf"), board: simBoard) } catch {
        preconditionFailure("board/policy.conf: \(error)")
    }
}()

/// Keeps every event the wearable reports.
struct EventList: EventSink {
    var events: [FirmwareEvent] = []
    mutating func record(_ event: FirmwareEvent, session: borrowing Session, now: Instant) { events.append(event) }
}

struct WearableLoopback: ~Copyable {
    var core: WearableCore
    var phone: PhoneCore
    var now = Instant(ms: 1_000)
    var effects = Effects(sink: EventList())
    /// What the wearable reported, in order.
    var events: [FirmwareEvent] {
        get { effects.sink.events }
        set { effects.sink.events = newValue }
    }
    var phoneEvents: [PhoneEvent] = []
    /// Every PDU, "P>" from the phone and "W>" from the wearable.
    var trace: [String] = []
    /// Output line changes with the time they were applied.
    var lineChanges: [(atMs: Int64, line: Int, on: Bool)] = []

    /// A wearable with the shipped sim board and policy; `scenario` is a
    /// file under board/scenarios, loaded into the phone.
    init(scenario: String? = nil, phone phoneConfig: PhoneConfig = PhoneConfig(), _ configure: (inout WearableConfig) -> Void = { _ in }) {
        var config = WearableConfig(board: simBoard, policy: shippedPolicy)
        config.controller.enabled = false
        configure(&config)
        core = WearableCore(config: config)
        phone = PhoneCore(config: phoneConfig)
        if let scenario {
            let text = readRepositoryFile("board/scenarios/" + scenario)
            do {
                try phone.load(text, now: now)
            } catch {
                preconditionFailure("\(scenario) does not parse: line \(error.line) \(error.kind)")
            }
        }
    }

    func output(_ name: String) -> Int {
        guard let i = simBoard.outputIndex(named: name) else { preconditionFailure("no output \(name)") }
        return i
    }

    mutating func connect() {
        core.linkUp(now: now, into: &effects)
        phone.linkUp(now: now)
        settle()
    }

    private mutating func settleCore() {
        core.flush(now: now, into: &effects)
        while let change = core.nextLineChange() { lineChanges.append((now.ms, change.line, change.on)) }
        while let action = core.nextAction() {
            switch action {
            case .raiseSecurity:
                phone.securityRequested(now: now)
                core.securityChanged(encrypted: true, now: now, into: &effects)
            case .disconnect(let reason):
                core.linkDown(reason: reason, now: now, into: &effects)
                phone.linkDown(reason: "peer-closed", now: now)
            }
        }
    }

    private mutating func settlePhone() {
        while let e = phone.nextEvent() {
            phoneEvents.append(e)
            if case .secured = e, core.phone.state != .disconnected, !core.phone.isEncrypted {
                core.securityChanged(encrypted: true, now: now, into: &effects)
            }
        }
        while let action = phone.nextAction() {
            switch action {
            case .connect:
                core.linkUp(now: now, into: &effects)
                phone.linkUp(now: now)
            case .disconnect:
                core.linkDown(reason: .platform("peer-closed"), now: now, into: &effects)
            case .quit:
                break
            }
        }
    }

    /// Runs the clock in 10 ms steps until `done` holds (at most `limitMs`);
    /// false if it never did.
    mutating func run(untilMs limitMs: Int64, _ done: (borrowing WearableLoopback) -> Bool) -> Bool {
        var waited: Int64 = 0
        while !done(self) {
            guard waited < limitMs else { return false }
            run(forMs: 10)
            waited += 10
        }
        return true
    }

    func sawAdded(_ uid: UInt32) -> Bool { added.contains { $0.uid == uid } }

    /// Moves PDUs both ways until neither side has anything to send.
    mutating func settle() {
        var out = ByteBuffer(capacity: 600)
        var rounds = 0
        while true {
            rounds += 1
            precondition(rounds < 100_000, "the loopback does not settle")
            settleCore()
            settlePhone()
            var moved = false
            if phone.popOutgoing(into: &out) {
                moved = true
                trace.append("P> " + toHex(out.toArray()))
                core.receive(out.span, now: now, into: &effects)
            }
            settleCore()
            if core.popOutgoing(into: &out) {
                moved = true
                trace.append("W> " + toHex(out.toArray()))
                phone.receive(out.span, now: now)
            }
            if !moved { break }
        }
        settleCore()
        settlePhone()
    }

    /// Runs the virtual clock for `ms`, firing every deadline on the way.
    mutating func run(forMs ms: Int64) {
        let end = now.advanced(byMs: ms)
        settle()
        var steps = 0
        while let due = earliest(core.deadline, phone.deadline), due <= end {
            steps += 1
            precondition(steps < 100_000, "a deadline keeps firing")
            if due > now { now = due }
            core.advance(now: now, into: &effects)
            phone.advance(now: now)
            settle()
        }
        now = end
        core.advance(now: now, into: &effects)
        phone.advance(now: now)
        settle()
    }

    /// The UIDs of the Get Notification Attributes commands the wearable wrote.
    var attributeFetches: [UInt32] {
        trace.compactMap { line -> UInt32? in
            let b = hex(String(line.dropFirst(3)))
            guard line.hasPrefix("W> "), b.count >= 8, b[0] == 0x12, b[1] == 0x15, b[2] == 0x00, b[3] == 0x00 else { return nil }
            return UInt32(b[4]) | UInt32(b[5]) << 8 | UInt32(b[6]) << 16 | UInt32(b[7]) << 24
        }
    }

    /// The Added changes the wearable's table reported, with their flags.
    var added: [NotificationRecord] {
        events.compactMap { if case .link(.notification(.added(let r, _))) = $0 { r } else { nil } }
    }
}
