// SPDX-License-Identifier: Apache-2.0
// Deterministic CPU cost: instructions counted by valgrind's callgrind
// inside functions with unmangled names (`--toggle-collect=<name>`), so
// only the measured work is counted, never set-up or warm-up. The main run
// starts `valgrind --tool=callgrind` on this executable with `--cost KIND`.
//
// - wl_cost_ns_event (Added IncomingCall, Removed, Added Social): one
//   Notification Source event through `WearableCore` on a virtual clock:
//   the ATT notification decoded, the NS value decoded, the table, the
//   policy, patterns started or stopped, level changes and events drained as
//   `Runner.settle` does with a sink that discards.
// - wl_cost_loop_step: one `Runner.step()` of the real loop handling one NS
//   event (Added call or Removed, alternating), the platform's user-space
//   work included (poll table, recv/send wrappers, clock reads); the kernel's
//   work is not counted by callgrind.
// - button-step: the same function, for the Runner.step() that takes a due
//   release edge and writes the Perform Notification Action request.
// - wl_cost_ds_response: one realistic attribute response fed to the
//   `DataSourceReassembler` in MTU-sized fragments; divided by its bytes.

import ANCS
import AllocCounter
import BenchSupport
import Bounded
import Firmware
import Glibc
import Platform
import PlatformLinux
import TestSupport

/// The wearable core brought up with the scripted phone on a virtual clock.
/// A struct passed `inout`: a class would add dynamic exclusivity checks
/// (swift_beginAccess) on every property access to the measured functions.
struct CoreBench: ~Copyable {
    var core: WearableCore
    var now = Instant(ms: 10_000)
    let pdu = UnsafeMutablePointer<UInt8>.allocate(capacity: 16)
    var out = ByteBuffer(capacity: 600)
    /// Outputs counted so the optimiser keeps them.
    var drained: UInt64 = 0
    var effects = Effects(sink: DiscardingSink())
    var sink: UInt64 { drained &+ effects.sink.events }

    init(config: WearableConfig) {
        core = WearableCore(config: config)
        core.start(now: now, into: &effects)
        drain()
        core.linkUp(now: now, into: &effects)
        var sent: [[UInt8]] = []
        collect(&sent)
        for exchange in Wire.bringUp {
            precondition(!sent.isEmpty && Wire.toHex(sent.removeFirst()) == exchange.firmware, "core bring-up: expected \(exchange.firmware)")
            core.receive(Wire.hex(exchange.phone).span, now: now, into: &effects)
            collect(&sent)
        }
        precondition(core.phone.state == .live, "core bring-up: not live")
    }

    deinit { pdu.deallocate() }

    /// Bring-up's settle: the PDUs sent are collected; a raise of security
    /// succeeds at once, as on the UNIX link (the phone holds the bond), so
    /// the trust gate lets the subscriptions go out.
    mutating func collect(_ sent: inout [[UInt8]]) {
        var rounds = 0
        repeat {
            rounds += 1
            core.flush(now: now, into: &effects)
            while core.popOutgoing(into: &out) { sent.append(out.toArray()) }
            var raised = false
            while let action = core.nextAction() {
                if case .raiseSecurity = action { raised = true }
            }
            while core.nextLineChange() != nil {}
            guard raised else { return }
            core.securityChanged(encrypted: true, now: now, into: &effects)
        } while rounds < 4
    }

    /// What `Runner.settle` does, with a sink that discards.
    @inline(__always)
    mutating func drain() {
        core.flush(now: now, into: &effects)
        while core.popOutgoing(into: &out) { drained &+= UInt64(out.count) }
        while core.nextAction() != nil { drained &+= 1 }
        while let change = core.nextLineChange() { drained &+= UInt64(change.line) }
    }

    @inline(__always)
    mutating func event(_ event: EventID, _ flags: EventFlags, _ category: CategoryID, count: UInt8, uid: UInt32) {
        now = now.advanced(byMs: 1)
        Wire.notificationSource(into: pdu, event, flags, category, count: count, uid: uid)
        core.receive(Span(_unsafeStart: UnsafePointer(pdu), count: 11), now: now, into: &effects)
        drain()
    }
}

/// Counts the events (the events stream and the log are not measured).
struct DiscardingSink: EventSink {
    var events: UInt64 = 0
    mutating func record(_ event: FirmwareEvent, session: borrowing Session, now: Instant) { events &+= 1 }
}

let callFlags: EventFlags = [.positiveAction, .negativeAction]

/// The NS events measured; one function for all of them, so the optimiser
/// has no near-identical functions to merge (a merged body is entered by a
/// tail call, which would end the toggled collection at once).
enum NSKind: Int {
    case addedCall, removedCall, addedSocial
}

@_silgen_name("wl_cost_ns_event") @inline(never)
func costNSEvent(_ bench: inout CoreBench, _ kind: NSKind, _ uid: UInt32) {
    switch kind {
    case .addedCall: bench.event(.added, callFlags, .incomingCall, count: 1, uid: uid)
    case .removedCall: bench.event(.removed, [], .incomingCall, count: 0, uid: uid)
    case .addedSocial: bench.event(.added, [.negativeAction], .social, count: 1, uid: uid)
    }
}

/// A button press and release on `button` at `now` (+20 ms) with an
/// incoming call present: the release sends Perform Notification Action.
@_silgen_name("wl_cost_action") @inline(never)
func costAction(_ bench: inout CoreBench, _ button: Int) {
    bench.core.input(.edge(button: button, pressed: true, at: bench.now), now: bench.now, into: &bench.effects)
    bench.drain()
    bench.now = bench.now.advanced(byMs: 20)
    bench.core.input(.edge(button: button, pressed: false, at: bench.now), now: bench.now, into: &bench.effects)
    bench.drain()
}

/// One event of the flood's mix (see Flood.swift).
@_silgen_name("wl_cost_flood_event") @inline(never)
func costFloodEvent(_ bench: inout CoreBench, _ k: Int) {
    let categories = FloodMix.categories
    let flags = FloodMix.flags
    if k % 4 == 3 {
        bench.event(.removed, [], categories[(k - 1) % categories.count], count: 0, uid: UInt32(1_000 + k - 1))
    } else {
        bench.event(.added, flags[(k / 7) % flags.count], categories[k % categories.count], count: UInt8(1 + k % 200), uid: UInt32(1_000 + k))
    }
}

@_silgen_name("wl_cost_loop_step") @inline(never)
func costLoopStep(_ rig: inout BenchRig) {
    rig.runner.step(waitingAtMostMs: 0)
}

/// Fragments of one response, fed to a reassembler.
struct ReassemblyBench: ~Copyable {
    var reassembler = DataSourceReassembler(limits: AttributeLimits())
    let fragments: [[UInt8]]
    let expectation: DataSourceReassembler.Expectation
    var completed = 0
    let bytes: Int

    init(payload: Int) {
        let response = Wire.attributesResponse(uid: 7, Wire.realisticTuples())
        var fragments: [[UInt8]] = []
        var i = 0
        while i < response.count {
            fragments.append(Array(response[i..<min(response.count, i + payload)]))
            i += payload
        }
        self.fragments = fragments
        bytes = response.count
        expectation = .notificationAttributes(
            uid: 7,
            attributes: [.appIdentifier, .title, .subtitle, .message, .messageSize, .date, .positiveActionLabel, .negativeActionLabel])
    }

    @inline(__always)
    mutating func feedOne() {
        reassembler.expect(expectation)
        for f in fragments {
            if case .complete = reassembler.feed(f.span) { completed += 1 }
        }
    }
}

@_silgen_name("wl_cost_ds_response") @inline(never)
func costResponse(_ bench: inout ReassemblyBench) {
    bench.feedOne()
}

enum CostRun {
    static let count = 2_000
    static let buttonRounds = 200

    /// Runs under callgrind: warm-up outside the measured functions' names
    /// is impossible (every call is counted), so warm-up calls go through a
    /// different path first: the same core work, not via the named function.
    static func run(kind: String, root: String) -> Int32 {
        let config: WearableConfig
        do { config = try benchConfig(root: root) } catch {
            note("cost: \(error)")
            return 1
        }
        switch kind {
        case "ns-added-call", "ns-removed", "ns-added-social":
            var bench = CoreBench(config: config)
            // Warm-up (not named, so not counted): the same events.
            for i in 0..<100 {
                let uid = UInt32(100_000 + i)
                bench.event(.added, callFlags, .incomingCall, count: 1, uid: uid)
                bench.event(.removed, [], .incomingCall, count: 0, uid: uid)
                bench.event(.added, [.negativeAction], .social, count: 1, uid: uid)
                bench.event(.removed, [], .social, count: 0, uid: uid)
            }
            for i in 0..<count {
                let uid = UInt32(1 + i)
                switch kind {
                case "ns-added-call":
                    costNSEvent(&bench, .addedCall, uid)
                    bench.event(.removed, [], .incomingCall, count: 0, uid: uid)
                case "ns-removed":
                    bench.event(.added, callFlags, .incomingCall, count: 1, uid: uid)
                    costNSEvent(&bench, .removedCall, uid)
                default:
                    costNSEvent(&bench, .addedSocial, uid)
                    bench.event(.removed, [], .social, count: 0, uid: uid)
                }
            }
            note("cost \(kind): \(count) events, sink \(bench.sink)")
        case "action":
            var bench = CoreBench(config: config)
            var allocations: UInt64 = 0
            for i in 0..<(100 + count) {
                let uid = UInt32(1 + i)
                bench.event(.added, callFlags, .incomingCall, count: 1, uid: uid)
                let before = wl_alloc_count()
                if i >= 100 { costAction(&bench, i % 2) } else {
                    bench.core.input(.edge(button: i % 2, pressed: true, at: bench.now), now: bench.now, into: &bench.effects)
                    bench.drain()
                    bench.now = bench.now.advanced(byMs: 20)
                    bench.core.input(.edge(button: i % 2, pressed: false, at: bench.now), now: bench.now, into: &bench.effects)
                    bench.drain()
                }
                if i >= 100 { allocations &+= wl_alloc_count() - before }
                bench.now = bench.now.advanced(byMs: 1)
                bench.core.receive(Wire.hex("13").span, now: bench.now, into: &bench.effects)
                bench.drain()
                bench.event(.removed, [], .incomingCall, count: 0, uid: uid)
                bench.now = bench.now.advanced(byMs: 20)
            }
            note("cost action: \(count) presses, \(allocations) allocations, sink \(bench.sink)")
        case "action-time":
            var bench = CoreBench(config: config)
            var samples: [Int64] = []
            for i in 0..<(100 + 5 * count) {
                let uid = UInt32(1 + i)
                bench.event(.added, callFlags, .incomingCall, count: 1, uid: uid)
                bench.core.input(.edge(button: i % 2, pressed: true, at: bench.now), now: bench.now, into: &bench.effects)
                bench.drain()
                bench.now = bench.now.advanced(byMs: 20)
                let t0 = Clock.ns()
                bench.core.input(.edge(button: i % 2, pressed: false, at: bench.now), now: bench.now, into: &bench.effects)
                bench.drain()
                if i >= 100 { samples.append(Clock.ns() - t0) }
                bench.now = bench.now.advanced(byMs: 1)
                bench.core.receive(Wire.hex("13").span, now: bench.now, into: &bench.effects)
                bench.drain()
                bench.event(.removed, [], .incomingCall, count: 0, uid: uid)
                bench.now = bench.now.advanced(byMs: 20)
            }
            samples.sort()
            note("release processing (core only, hot): p50 \(samples[samples.count / 2]) ns, p99 \(samples[samples.count * 99 / 100]) ns")
        case "flood":
            var bench = CoreBench(config: config)
            for k in 0..<2_000 { costFloodEvent(&bench, k) }
            let before = wl_alloc_count()
            for k in 2_000..<(2_000 + count) { costFloodEvent(&bench, k) }
            let allocations = wl_alloc_count() - before
            note("cost flood: \(count) events, \(allocations) allocations, sink \(bench.sink)")
        case "button-step":
            var rig: BenchRig
            do { rig = try BenchRig(config: config) } catch {
                note("cost: \(error)")
                return 1
            }
            if let problem = rig.bringUp() {
                note(problem)
                return 1
            }
            let rounds = buttonRounds
            var uid: UInt32 = 1
            rig.phone.sendNotification(.added, callFlags, .incomingCall, count: 1, uid: uid)
            _ = rig.run { $0.platform.lines.levels[1] }
            for round in 0..<rounds {
                let pressAt = rig.runner.platform.now()
                rig.runner.platform.lines.inject(button: round % 2, pressed: true, due: pressAt)
                rig.runner.platform.lines.inject(button: round % 2, pressed: false, due: pressAt.advanced(byMs: 20))
                rig.runner.step(waitingAtMostMs: 0)
                while rig.runner.platform.now() < pressAt.advanced(byMs: 21) { usleep(1_000) }
                let sends = rig.runner.platform.link.sends
                costLoopStep(&rig)  // toggled: the step that takes the release and writes
                precondition(rig.runner.platform.link.sends == sends + 1, "the release step did not write")
                _ = rig.phone.receiveLength()
                rig.phone.send(count: 1) { $0[0] = 0x13 }
                rig.phone.sendNotification(.removed, [], .incomingCall, count: 0, uid: uid)
                uid += 1
                rig.phone.sendNotification(.added, callFlags, .incomingCall, count: 1, uid: uid)
                _ = rig.run { $0.core.phone.session.table.record(uid: uid) != nil }
            }
            note("cost button-step: \(rounds) release steps")
        case "loop-step":
            var rig: BenchRig
            do { rig = try BenchRig(config: config) } catch {
                note("cost: \(error)")
                return 1
            }
            if let problem = rig.bringUp() {
                print(problem)
                return 1
            }
            for i in 0..<(100 + count / 2) {
                let uid = UInt32(1 + i)
                let measured = i >= 100
                rig.phone.sendNotification(.added, callFlags, .incomingCall, count: 1, uid: uid)
                if measured { costLoopStep(&rig) } else { rig.runner.step(waitingAtMostMs: 0) }
                rig.phone.sendNotification(.removed, [], .incomingCall, count: 0, uid: uid)
                if measured { costLoopStep(&rig) } else { rig.runner.step(waitingAtMostMs: 0) }
            }
            note("cost loop-step: \(count) steps, line writes \(rig.runner.platform.lines.writes[1])")
        case "ds-mtu23", "ds-mtu185":
            var bench = ReassemblyBench(payload: kind == "ds-mtu23" ? 20 : 182)
            for _ in 0..<100 { bench.feedOne() }
            for _ in 0..<count { costResponse(&bench) }
            note("cost \(kind): \(count) responses of \(bench.bytes) bytes, completed \(bench.completed)")
        default:
            print("unknown cost kind \(kind)")
            return 2
        }
        return 0
    }
}


/// A line on stderr: the main run starts these workloads under valgrind
/// with stderr to /dev/null, so they do not clutter the figures.
func note(_ text: String) {
    let line = text + "\n"
    _ = line.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, line.utf8.count) }
}
