// SPDX-License-Identifier: Apache-2.0
// The simulated iPhone and the whole wearable (the real Runner and core:
// link, policy, patterns, buttons) back to back in memory on a virtual
// clock: what `wristlink sim` runs, minus the sockets and the terminal. The
// runner runs on the in-memory platform (MemoryPlatform), whose link is the
// phone's: the phone's PDUs are queued to it, what it sends is handed to
// the phone. A security raise reaches the phone as a security request (what
// SMP carries) and the platform answers it at once, as the UNIX link does;
// encryption the phone starts by itself reaches the core as
// `securityChanged`.

import ANCS
import Bounded
import Config
import Firmware
import MemoryPlatform
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
    /// The firmware's own loop on the in-memory platform, whose link is the
    /// simulated phone's.
    var runner: Runner<MemoryPlatform, EventList>
    var phone: PhoneCore
    var core: WearableCore { _read { yield runner.core } }
    var now: Instant { runner.platform.now() }
    /// What the wearable reported, in order.
    var events: [FirmwareEvent] {
        get { runner.effects.sink.events }
        set { runner.effects.sink.events = newValue }
    }
    var phoneEvents: [PhoneEvent] = []
    /// Every PDU, "P>" from the phone and "W>" from the wearable.
    var trace: [String] = []
    /// Output line changes with the time they were applied.
    var lineChanges: [(atMs: Int64, line: Int, on: Bool)] { runner.platform.lineChanges }
    /// PDUs the wearable sent that the phone has not been handed yet.
    private var toPhone: [[UInt8]] = []
    private var raisesSeen = 0
    private var disconnectsSeen = 0

    /// A wearable with the shipped sim board and policy; `scenario` is a
    /// file under board/scenarios, loaded into the phone.
    init(scenario: String? = nil, phone phoneConfig: PhoneConfig = PhoneConfig(), _ configure: (inout WearableConfig) -> Void = { _ in }) {
        var config = WearableConfig(board: simBoard, policy: shippedPolicy)
        config.controller.enabled = false
        configure(&config)
        runner = Runner(platform: MemoryPlatform(outputs: config.board.outputs.count, startMs: 1_000),
                        sink: EventList(), core: WearableCore(config: config))
        phone = PhoneCore(config: phoneConfig)
        if let scenario {
            let text = readRepositoryFile("board/scenarios/" + scenario)
            do {
                try phone.load(text, now: now)
            } catch {
                preconditionFailure("\(scenario) does not parse: line \(error.line) \(error.kind)")
            }
        }
        runner.start()
    }

    func output(_ name: String) -> Int {
        guard let i = simBoard.outputIndex(named: name) else { preconditionFailure("no output \(name)") }
        return i
    }

    mutating func connect() {
        runner.platform.queue(.connected)
        phone.linkUp(now: now)
        settle()
    }

    /// A button edge, as the lines deliver it.
    mutating func input(_ event: InputEvent) {
        runner.platform.queue(event)
        settle()
    }

    /// The runner takes what is queued; what it did reaches the phone's side
    /// of the link: its PDUs (held for the loop), a raise as the phone's
    /// security request (the platform answers "encrypted" at once, as the
    /// UNIX link does), a closed link as the phone's link ending.
    private mutating func stepWearable() {
        precondition(runner.takeQueued(), "the runner leaves input queued")
        toPhone += runner.platform.takeSent()
        while raisesSeen < runner.platform.raises.count {
            raisesSeen += 1
            phone.securityRequested(now: now)
        }
        while disconnectsSeen < runner.platform.disconnects {
            disconnectsSeen += 1
            phone.linkDown(reason: "peer-closed", now: now)
        }
    }

    /// The phone's events and actions reach the wearable's link: encryption
    /// it starts by itself, a connection, a disconnection.
    private mutating func settlePhone() {
        while let e = phone.nextEvent() {
            phoneEvents.append(e)
            if case .secured = e, core.phone.state != .disconnected, !core.phone.isEncrypted {
                runner.platform.queue(.securityChanged(encrypted: true))
            }
        }
        while let action = phone.nextAction() {
            switch action {
            case .connect:
                runner.platform.queue(.connected)
                phone.linkUp(now: now)
            case .disconnect:
                runner.platform.queue(.disconnected(reason: "peer-closed"))
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

    /// Moves PDUs both ways, one each way per round, until neither side
    /// has anything to send.
    mutating func settle() {
        var out = ByteBuffer(capacity: 600)
        var rounds = 0
        while true {
            rounds += 1
            precondition(rounds < 100_000, "the loopback does not settle")
            stepWearable()
            settlePhone()
            var moved = false
            if phone.popOutgoing(into: &out) {
                moved = true
                let bytes = out.toArray()
                trace.append("P> " + toHex(bytes))
                runner.platform.queue(.pdu(bytes))
            }
            stepWearable()
            if !toPhone.isEmpty {
                moved = true
                let bytes = toPhone.removeFirst()
                trace.append("W> " + toHex(bytes))
                phone.receive(bytes.span, now: now)
            }
            if !moved && !runner.platform.hasQueuedInput { break }
        }
        stepWearable()
        settlePhone()
    }

    /// Runs the virtual clock for `ms`, the runner and the phone waking at
    /// every deadline on the way.
    mutating func run(forMs ms: Int64) {
        let end = now.advanced(byMs: ms)
        settle()
        var steps = 0
        while now < end {
            steps += 1
            precondition(steps < 100_000, "a deadline keeps firing")
            let until = earliest(phone.deadline, end).map { max($0, now) } ?? end
            // The runner wakes at its own deadline or at the phone's.
            runner.step(waitingAtMostMs: until.ms(since: now))
            phone.advance(now: now)
            settle()
        }
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
