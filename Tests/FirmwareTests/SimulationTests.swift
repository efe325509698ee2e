// SPDX-License-Identifier: Apache-2.0
// Seeded fault simulation: the wearable (the real Runner and core, on the
// in-memory platform) driven by a random phone.
//
// The phone answers discovery like `Script`'s phone, and otherwise does
// whatever the seed says: notifications of every category and flag
// (reserved ones too), malformed Notification Source values, Data Source
// answers split anywhere (sometimes for the wrong UID), Write Responses,
// ATT and ANCS errors (0x05, 0x0E, 0xA0–0xA3) or silence on the Control
// Point, Service Changed, hang-ups and reconnections; the wearer presses
// buttons with contact bounce; the clock jumps. After every step the
// invariants are checked; a failure names its seed, and
// WRISTLINK_SIM_SEED=<seed> replays exactly that run.

import ANCS
import Bounded
import Config
import Firmware
import MemoryPlatform
import Platform
import PlatformLinux
import Testing
import TestSupport

struct Violation: Error, CustomStringConvertible {
    let description: String
}

/// The phone's own record of a notification it announced.
struct PhoneNotification {
    var uid: UInt32
    var category: CategoryID
    var flags: EventFlags
}

struct ChaosRun: ~Copyable {
    let seed: UInt64
    var rng: SplitMix64
    var runner: Runner<MemoryPlatform, RecordingSink>
    var core: WearableCore { _read { yield runner.core } }
    var now: Instant {
        get { runner.platform.now() }
        set { runner.platform.setClock(newValue) }
    }
    var connected = false
    /// The link closes the runner made (a disconnect action), counted.
    var disconnectsSeen = 0
    var live: [PhoneNotification] = []
    /// UIDs announced in the current session (the only ones the firmware may use).
    var sessionUIDs: Set<UInt32> = []
    /// Calls the wearer acted on, or that an error removed: their ring may stop.
    var silencedCalls: Set<UInt32> = []
    /// Calls announced as new in this session (not the PreExisting replay):
    /// these must ring while present.
    var announcedCalls: Set<UInt32> = []
    /// When each announced call was added: past the policy's ring limit its
    /// ring stops by itself.
    var announcedAt: [UInt32: Instant] = [:]
    /// Calls whose ring the firmware stopped at the ring limit.
    var ringLimitedCalls: Set<UInt32> = []
    var lastGestureWasLongReject = false
    var cpAwaitingAnswer = 0
    var silentOnNextWrite = false
    var malformedSent = 0
    var malformedDropsSeen = 0
    var nextUID: UInt32 = 1
    var steps = 0
    var log: [String] = []
    /// The firmware's most recent events, for the failure report.
    var recentEvents: [String] = []

    static let controlPointWrite = "12 10 00"
    static let responses: [String: String] = {
        var map: [String: String] = [:]
        var pending: String? = nil
        for step in Script.bringUp {
            switch step {
            case .firmware(let request): pending = request
            case .phone(let response):
                if let request = pending { map[request] = response }
                pending = nil
            }
        }
        return map
    }()

    init(seed: UInt64) {
        self.seed = seed
        rng = SplitMix64(seed: seed)
        var config = testConfig()
        config.link.session.notificationCapacity = 16
        config.link.bearer.transactionTimeoutMs = 30_000
        runner = Runner(platform: MemoryPlatform(outputs: config.board.outputs.count, startMs: 1_000_000),
                        sink: RecordingSink(), core: WearableCore(config: config))
        runner.start()
    }

    mutating func random(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
    mutating func chance(_ percent: Int) -> Bool { random(100) < percent }

    // MARK: The phone's side

    mutating func connect() throws {
        connected = true
        sessionUIDs.removeAll()
        live.removeAll()
        silencedCalls.removeAll()
        announcedCalls.removeAll()
        announcedAt.removeAll()
        ringLimitedCalls.removeAll()
        cpAwaitingAnswer = 0
        runner.platform.queue(.connected)
        try pump()
    }

    mutating func hangUp() throws {
        connected = false
        runner.platform.queue(.disconnected(reason: "peer-closed"))
        cpAwaitingAnswer = 0
        try pump()
    }

    mutating func deliver(_ text: String) throws {
        guard connected else { return }
        runner.platform.queue(.pdu(hex(text)))
        try pump()
    }

    /// Everything the firmware sends is answered here, at once, until it is
    /// quiet (bounded).
    mutating func pump() throws {
        for _ in 0..<200 {
            var progressed = false
            // The runner takes what is queued, each input followed by its
            // settle (commands, PDUs, bonds, link actions, lines); a raise
            // is answered "encrypted" by the platform, as the UNIX link does.
            // Input left after 64 steps is taken in the next round.
            if runner.platform.hasQueuedInput {
                progressed = true
                _ = runner.takeQueued(maxSteps: 64)
            }
            let events = runner.effects.sink.events
            runner.effects.sink.events.removeAll(keepingCapacity: true)
            for event in events { try observe(event) }
            if runner.platform.disconnects != disconnectsSeen {
                // The firmware closed the link.
                disconnectsSeen = runner.platform.disconnects
                connected = false
                progressed = true
            }
            for pdu in runner.platform.takeSent().map({ toHex($0) }) {
                progressed = true
                try answer(pdu)
            }
            try checkInvariants()
            if !progressed { return }
        }
        throw Violation(description: "the firmware did not settle in 200 rounds")
    }

    mutating func observe(_ event: FirmwareEvent) throws {
        if case .line = event {} else {
            recentEvents.append("\(event)")
            if recentEvents.count > 16 { recentEvents.removeFirst() }
        }
        if case .link(.drop(let drop)) = event {
            switch drop {
            case .notificationSource, .notificationSourceOutsideSession: malformedDropsSeen += 1
            default: break
            }
        }
        if case .link(.ended) = event {
            sessionUIDs.removeAll()
            silencedCalls.removeAll()
            announcedCalls.removeAll()
            announcedAt.removeAll()
            ringLimitedCalls.removeAll()
        }
        // A long reject while calls ring silences them all on the wrist
        // (the default policy's ringing-long=silence); only that press may.
        if case .silenced(let uid?) = event {
            guard lastGestureWasLongReject else { throw Violation(description: "call \(uid) silenced without a long reject") }
            silencedCalls.formUnion(announcedCalls)
        }
        if case .button(let index, let gesture) = event { lastGestureWasLongReject = index == 1 && gesture == .long }
        // A ring stops at its limit, never before: the limit counts from
        // when the call's lasting alert started, after it was announced.
        if case .ringLimited(let uid) = event {
            if let at = announcedAt[uid], now < at.advanced(byMs: core.policy.ringLimitMs) {
                throw Violation(description: "call \(uid) stopped ringing \(now.ms(since: at)) ms after it came, before the ring limit")
            }
            ringLimitedCalls.insert(uid)
        }
        if case .link(.subscribed) = event {
            // PreExisting replay: what the phone still has.
            for n in live { try notify(.added, n.flags.union(.preExisting), n.category, uid: n.uid) }
        }
    }

    mutating func answer(_ pdu: String) throws {
        guard connected else { return }
        if pdu == "1E" { return }
        if pdu.hasPrefix(Self.controlPointWrite) {
            try controlPoint(Array(hex(pdu).dropFirst(3)))
            return
        }
        if pdu.hasPrefix("12 13 00") || pdu.hasPrefix("12 0E 00"), chance(10) {
            try deliver("01 12 " + pdu.dropFirst(3).prefix(5) + " 05")
            return
        }
        if pdu.hasPrefix("06 "), Self.responses[pdu] == nil {
            // Find By Type Value for a service this phone does not have
            // (AMS, CTS): Attribute Not Found.
            try deliver("01 06 " + pdu.dropFirst(3).prefix(5) + " 0A")
            return
        }
        guard let response = Self.responses[pdu] else {
            throw Violation(description: "the firmware sent an unexpected request \(pdu)")
        }
        try deliver(response)
    }

    mutating func controlPoint(_ command: [UInt8]) throws {
        cpAwaitingAnswer += 1
        guard cpAwaitingAnswer <= 1 else { throw Violation(description: "two Control Point commands in flight") }
        let uid = command.count >= 5 ? UInt32(command[1]) | UInt32(command[2]) << 8 | UInt32(command[3]) << 16 | UInt32(command[4]) << 24 : 0
        if command[0] != 1 && uid < 0xFFFF_0000 && !sessionUIDs.contains(uid) {
            throw Violation(description: "Control Point used UID \(uid), not from this session")
        }
        if silentOnNextWrite || chance(3) {
            silentOnNextWrite = false
            return  // no answer: the ATT transaction timeout will end the link
        }
        if chance(15) || uid >= 0xFFFF_0000 {
            let codes: [UInt8] = uid >= 0xFFFF_0000 ? [0xA2] : [0xA0, 0xA1, 0xA2, 0xA3, 0x0E]
            let code = codes[random(codes.count)]
            if code == 0xA2, command[0] != 1 { silencedCalls.insert(uid) }
            cpAwaitingAnswer = 0
            try deliver("01 12 10 00 " + toHex([code]))
            return
        }
        cpAwaitingAnswer = 0
        switch command[0] {
        case 0:
            try deliver("13")
            try dataSource(uid: uid, attributes: Array(command.dropFirst(5)))
        case 1:
            try deliver("13")
            let app = Array(command.dropFirst().prefix { $0 != 0 })
            let name = Array("App \(random(100))".utf8)
            try fragments([1] + app + [0, 0, UInt8(name.count), 0] + name)
        default:
            silencedCalls.insert(uid)
            try deliver("13")
            if let i = live.firstIndex(where: { $0.uid == uid }), chance(80) {
                let n = live.remove(at: i)
                try notify(.removed, [], n.category, uid: uid)
            }
        }
    }

    /// A Get Notification Attributes answer for the requested IDs, with
    /// values that may be longer than asked.
    mutating func dataSource(uid: UInt32, attributes: [UInt8]) throws {
        let reportedUID = chance(5) ? uid &+ 1 : uid
        var bytes: [UInt8] = [0] + (0..<4).map { UInt8(truncatingIfNeeded: reportedUID >> (8 * UInt32($0))) }
        var i = 0
        while i < attributes.count {
            let id = attributes[i]
            i += (id == 1 || id == 2 || id == 3) ? 3 : 1
            let length = random(4) == 0 ? random(400) : random(30)
            bytes += [id, UInt8(length & 0xFF), UInt8(length >> 8)] + (0..<length).map { _ in UInt8(0x41 + random(26)) }
        }
        try fragments(bytes)
    }

    /// Sends `bytes` on Data Source split at random points (at most MTU − 3).
    mutating func fragments(_ bytes: [UInt8]) throws {
        var start = 0
        while start < bytes.count {
            let size = min(bytes.count - start, 1 + random(182))
            try deliver("1B 12 00 " + toHex(Array(bytes[start..<(start + size)])))
            start += size
        }
    }

    mutating func notify(_ event: EventID, _ flags: EventFlags, _ category: CategoryID, count: UInt8 = 1, uid: UInt32) throws {
        if event != .removed { sessionUIDs.insert(uid) }
        let value = [event.rawValue, flags.rawValue, category.rawValue, count] + (0..<4).map { UInt8(truncatingIfNeeded: uid >> (8 * UInt32($0))) }
        try deliver("1B 0D 00 " + toHex(value))
    }

    // MARK: Steps

    mutating func step() throws {
        steps += 1
        let live = core.phone.state == .live
        switch random(20) {
        case 0...5 where live:
            let category = CategoryID(rawValue: UInt8(random(14)))
            let flags = EventFlags(rawValue: UInt8(random(256)) & ~EventFlags.preExisting.rawValue)
            let uid = nextUID
            nextUID += 1
            self.live.append(PhoneNotification(uid: uid, category: category, flags: flags))
            if category == .incomingCall {
                announcedCalls.insert(uid)
                announcedAt[uid] = now
            }
            log.append("add \(uid) cat \(category.rawValue) flags \(flags.rawValue)")
            try notify(.added, flags, category, uid: uid)
        case 6...7 where live && !self.live.isEmpty:
            let n = self.live.remove(at: random(self.live.count))
            log.append("remove \(n.uid)")
            try notify(.removed, [], n.category, count: 0, uid: n.uid)
        case 8 where live && !self.live.isEmpty:
            let n = self.live[random(self.live.count)]
            try notify(.modified, n.flags, n.category, uid: n.uid)
        case 9 where live:
            malformedSent += 1
            try deliver("1B 0D 00 " + toHex((0..<random(8)).map { _ in UInt8(random(256)) }))
        case 10:
            let button = random(2)
            let holdMs = chance(20) ? 900 + random(300) : 40 + random(200)
            log.append("press \(button) \(holdMs) ms")
            try press(button, holdMs: Int64(holdMs))
        case 11 where connected && chance(30):
            log.append("service changed")
            try deliver(chance(70) ? "1D 03 00 08 00 FF FF" : "1D 03 00 20 00 30 00")
        case 12 where chance(25):
            log.append("hang up")
            if connected { try hangUp() }
            try connect()
        case 13 where chance(20):
            let jump = Int64(random(120_000))
            log.append("clock +\(jump) ms")
            try advance(ms: jump)
        default:
            try advance(ms: Int64(10 + random(500)))
        }
        if !connected { try connect() }
    }

    /// A press with contact bounce on both edges.
    mutating func press(_ button: Int, holdMs: Int64) throws {
        for edge in [true, false] {
            for k in 0..<random(4) {
                runner.platform.queue(.edge(button: button, pressed: k % 2 == 0 ? edge : !edge, at: now))
                try advance(ms: 1 + Int64(random(4)))
            }
            runner.platform.queue(.edge(button: button, pressed: edge, at: now))
            try pump()
            if edge { try advance(ms: holdMs) }
        }
    }

    /// Moves the clock, the runner waking at every deadline on the way.
    mutating func advance(ms: Int64) throws {
        let target = now.advanced(byMs: ms)
        var wakeups = 0
        repeat {
            wakeups += 1
            runner.step(waitingAtMostMs: target.ms(since: now))
            try pump()
            if !connected { try connect() }
        } while now < target && wakeups < 10_000
        if now < target {
            now = target
            runner.step(waitingAtMostMs: 0)
            try pump()
        }
    }

    // MARK: Invariants

    mutating func checkInvariants() throws {
        let config = core.phone.session.config
        let active = core.phone.session.isActive
        let count = core.phone.session.table.count
        guard count <= config.notificationCapacity else { throw Violation(description: "table over capacity") }
        guard core.phone.session.queuedCount <= config.fetchQueueCapacity + config.actionQueueCapacity else {
            throw Violation(description: "Control Point queue over capacity")
        }
        guard !active || core.phone.state != .disconnected else { throw Violation(description: "session active while disconnected") }
        if !active && count != 0 { throw Violation(description: "UIDs kept after the session ended") }
        // An active incoming call rings (its pattern is on the call LED)
        // unless the wearer acted on it or silenced it, the phone said it is
        // gone, or it has rung for the policy's ring limit.
        let ledCall = simBoard.outputIndex(named: "led-call")!
        if active {
            for i in 0..<count {
                let record = core.phone.session.table[i]
                guard record.isIncomingCall, announcedCalls.contains(record.uid), !silencedCalls.contains(record.uid) else { continue }
                let limitMs = core.policy.ringLimitMs
                if ringLimitedCalls.contains(record.uid) {
                    if core.isAlerting(uid: record.uid, output: ledCall) {
                        throw Violation(description: "incoming call \(record.uid) still rings after its ring limit was reported")
                    }
                    continue
                }
                // Rule waits may start the ring up to ruleWaitMs after the
                // call came; past that and the limit, it must have stopped.
                if limitMs > 0, let at = announcedAt[record.uid], now > at.advanced(byMs: limitMs + 2_000) {
                    throw Violation(description: "incoming call \(record.uid) rang past its ring limit without a ring-limit event")
                }
                if !core.isAlerting(uid: record.uid, output: ledCall) {
                    throw Violation(description: "incoming call \(record.uid) is not ringing")
                }
            }
        }
    }

    /// The phone goes quiet: calls end, time passes. Then nothing may play
    /// but the unread indicator.
    mutating func quiet() throws {
        for n in live where n.category == .incomingCall {
            try notify(.removed, [], n.category, count: 0, uid: n.uid)
        }
        live.removeAll { $0.category == .incomingCall }
        try advance(ms: 10 * 60_000)
        let unread = simBoard.outputIndex(named: "led-notify")!
        for (i, output) in simBoard.outputs.enumerated() where i != unread {
            if core.level(of: i) { throw Violation(description: "\(output.name) still on after the phone went quiet") }
        }
        guard malformedDropsSeen >= malformedSent else {
            throw Violation(description: "\(malformedSent) malformed values sent, \(malformedDropsSeen) drops reported")
        }
    }
}

func runSeed(_ seed: UInt64, steps: Int) -> String? {
    var run = ChaosRun(seed: seed)
    do {
        try run.connect()
        for _ in 0..<steps { try run.step() }
        try run.quiet()
        return nil
    } catch {
        let recent = run.log.suffix(12).joined(separator: "; ")
        let events = run.recentEvents.joined(separator: "\n  ")
        return "seed \(seed) failed at step \(run.steps): \(error) [last: \(recent)] (replay: WRISTLINK_SIM_SEED=\(seed))\n  \(events)"
    }
}

@Suite("Seeded fault simulation")
struct SimulationTests {
    @Test("a few hundred random phones: invariants hold at every step; failures replay from their seed")
    func randomPhones() {
        let steps = Int(ProcessControl.environment("WRISTLINK_SIM_STEPS") ?? "") ?? 300
        if let one = ProcessControl.environment("WRISTLINK_SIM_SEED").flatMap(UInt64.init) {
            #expect(runSeed(one, steps: steps) == nil)
            return
        }
        let seeds = UInt64(ProcessControl.environment("WRISTLINK_SIM_SEEDS") ?? "") ?? 300
        let first = UInt64(ProcessControl.environment("WRISTLINK_SIM_FIRST_SEED") ?? "") ?? 1
        // Soak: as many seeds as fit in the time given.
        let seconds = Int64(ProcessControl.environment("WRISTLINK_SIM_SECONDS") ?? "")
        let start = Sys.monotonicMs()
        var failures: [String] = []
        var seed = first
        var ran: UInt64 = 0
        while failures.count < 3 {
            if let seconds {
                if Sys.monotonicMs() - start >= seconds * 1000 { break }
            } else if ran >= seeds {
                break
            }
            if let failure = runSeed(seed, steps: steps) { failures.append(failure) }
            seed += 1
            ran += 1
        }
        if seconds != nil { print("simulation: \(ran) seeds from \(first), \(steps) steps each, \(failures.count) failures") }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    @Test("the same seed gives the same run")
    func deterministic() {
        var a = ChaosRun(seed: 42)
        var b = ChaosRun(seed: 42)
        try? a.connect()
        try? b.connect()
        for _ in 0..<100 {
            try? a.step()
            try? b.step()
        }
        #expect(a.log == b.log)
        #expect(a.nextUID == b.nextUID)
    }
}
