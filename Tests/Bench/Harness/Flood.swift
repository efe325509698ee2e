// SPDX-License-Identifier: Apache-2.0
// Flood: a phone thread sends Notification Source events at a fixed rate
// (10,000/s for 10 s by default) through the socketpair while the firmware
// runs its real loop on the calling thread. Halfway through, an incoming
// call arrives; it must light led-call and keep its ring pattern to the end.
//
// The phone's sends block when the socket is full, as a Bluetooth link is
// flow-controlled: a firmware that falls behind slows the phone down rather
// than losing PDUs, so "achieved rate" below 10,000/s means the firmware
// could not keep up. Every event the firmware turns away is counted.
//
// Traffic: 3 of 4 events add a notification (new UID; categories and flags
// cycle through everything but IncomingCall), the 4th removes the one added
// just before it. The table (64) therefore fills and evicts (counted, never
// the call), and patterns pre-empt each other on every output.

import ANCS
import AllocCounter
import Bounded
import Firmware
import Glibc
import Platform
import PlatformLinux
import Synchronization
import TestSupport

public struct FloodReport: Sendable, CustomStringConvertible {
    public var eventsSent = 0
    public var seconds = 0.0
    public var achievedPerSecond: Double { Double(eventsSent) / seconds }
    /// The phone's worst lag behind its schedule (a blocked send).
    public var maxPhoneLagMs = 0.0
    public var notificationsSeen: UInt64 = 0
    public var firmwareDrops: UInt64 = 0
    public var tableEvictions: UInt64 = 0
    public var notificationSourceDropped: UInt64 = 0
    public var patternsRefused: UInt64 = 0
    public var patternsEvicted: UInt64 = 0
    public var rssBeforeKiB = 0
    public var rssAfterKiB = 0
    /// Heap allocations on the loop's thread after the first second.
    public var loopAllocations: UInt64 = 0
    public var loopSteps = 0
    public var callSeen = false
    public var callLit = false
    /// From the call's PDU being sent to the end of the loop's first step
    /// with its ring playing and led-call on, µs.
    public var callLitAfterUs = 0.0
    /// Steps, after the call arrived, at which its ring was not present on
    /// led-call and vibration.
    public var stepsWithoutRing = 0
    public var ringAfterFlood = false

    public var description: String {
        func f(_ v: Double) -> String {
            let r = (v * 10).rounded() / 10
            return "\(r)"
        }
        return "sent \(eventsSent) in \(f(seconds)) s (\(Int(achievedPerSecond))/s, phone max lag \(f(maxPhoneLagMs)) ms); "
            + "seen \(notificationsSeen); drops: table evictions \(tableEvictions), NS dropped \(notificationSourceDropped), "
            + "reported drop events \(firmwareDrops), "
            + "patterns refused \(patternsRefused), evicted \(patternsEvicted); RSS \(rssBeforeKiB) -> \(rssAfterKiB) KiB; "
            + "loop allocations after 1 s: \(loopAllocations) in \(loopSteps) steps; call lit \(callLit) \(f(callLitAfterUs)) µs after it was sent, "
            + "steps without its ring \(stepsWithoutRing), ring after flood \(ringAfterFlood)"
    }
}

/// The flood's traffic: categories and flags it cycles through.
public enum FloodMix {
    public static let categories: [CategoryID] = [.social, .email, .other, .news, .schedule, .missedCall, .voicemail, .healthAndFitness,
                                                   .businessAndFinance, .location, .entertainment]
    public static let flags: [EventFlags] = [[], [.important], [.silent], [.positiveAction, .negativeAction], [.negativeAction], [.important, .silent]]
}

/// The phone's side, on its own thread.
final class FloodPhone: @unchecked Sendable {
    let fd: Int32
    let rate: Int
    let total: Int
    let callIndex: Int
    let callUID: UInt32
    let finished = Atomic<Bool>(false)
    let callSentNs = Atomic<Int64>(0)
    var sent = 0
    var startNs: Int64 = 0
    var endNs: Int64 = 0
    var maxLagNs: Int64 = 0
    private let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 16)

    static let categories = FloodMix.categories
    static let flags = FloodMix.flags

    init(fd: Int32, rate: Int, seconds: Int, callUID: UInt32) {
        self.fd = fd
        self.rate = rate
        total = rate * seconds
        callIndex = total / 2
        self.callUID = callUID
    }

    deinit { buffer.deallocate() }

    func send(index k: Int) {
        if k == callIndex {
            Wire.notificationSource(into: buffer, .added, [.positiveAction, .negativeAction], .incomingCall, count: 1, uid: callUID)
            callSentNs.store(Clock.ns(), ordering: .releasing)
        } else if k % 4 == 3 {
            let uid = UInt32(1_000 + k - 1)
            Wire.notificationSource(into: buffer, .removed, [], Self.categories[(k - 1) % Self.categories.count], count: 0, uid: uid)
        } else {
            let category = Self.categories[k % Self.categories.count]
            let flags = Self.flags[(k / 7) % Self.flags.count]
            Wire.notificationSource(into: buffer, .added, flags, category, count: UInt8(1 + k % 200), uid: UInt32(1_000 + k))
        }
        let n = Glibc.send(fd, buffer, 11, Int32(MSG_NOSIGNAL))
        precondition(n == 11, "flood phone: send failed, errno \(errno)")
    }

    func run() {
        let interval = 1_000_000_000 / Int64(rate)
        startNs = Clock.ns()
        while sent < total {
            let now = Clock.ns()
            let due = min(total, Int((now - startNs) / interval) + 1)
            while sent < due {
                send(index: sent)
                sent += 1
            }
            let after = Clock.ns()
            let scheduled = startNs + Int64(sent - 1) * interval
            maxLagNs = max(maxLagNs, after - scheduled)
            let next = startNs + Int64(sent) * interval
            if next > after {
                var ts = timespec(tv_sec: 0, tv_nsec: Int(next - after))
                nanosleep(&ts, nil)
            }
        }
        endNs = Clock.ns()
        finished.store(true, ordering: .releasing)
    }
}

public enum Flood {
    /// Outside the flood's own UIDs (1,000 and up, one per event).
    public static let callUID: UInt32 = 0xC0FF_EE00

    /// Floods a brought-up rig; returns what happened.
    public static func run(_ rig: inout BenchRig, rate: Int = 10_000, seconds: Int = 10) -> FloodReport {
        var report = FloodReport()
        let callUID: UInt32 = Self.callUID
        let ledCall = rig.runner.core.board.outputIndex(named: "led-call")!
        let vibration = rig.runner.core.board.outputIndex(named: "vibration")!
        let phone = FloodPhone(fd: rig.phone.fd, rate: rate, seconds: seconds, callUID: callUID)
        let notificationsBefore = notificationCount(rig.runner)
        report.rssBeforeKiB = ProcessMemory.rssKiB()

        var thread = pthread_t()
        let context = Unmanaged.passRetained(phone).toOpaque()
        let rc = pthread_create(&thread, nil, { context in
            let phone = Unmanaged<FloodPhone>.fromOpaque(context!).takeRetainedValue()
            phone.run()
            return nil
        }, context)
        precondition(rc == 0, "pthread_create")

        let start = Clock.ns()
        var quietSince: Int64 = 0
        var allocations: UInt64 = 0
        while true {
            let before = wl_alloc_count()
            rig.runner.step(waitingAtMostMs: 10)
            let now = Clock.ns()
            if now - start > 1_000_000_000 {
                allocations &+= wl_alloc_count() - before
                report.loopSteps += 1
            }
            if !report.callSeen, rig.runner.core.phone.session.table.record(uid: callUID) != nil { report.callSeen = true }
            if report.callSeen {
                // led-call may already be lit by a missed-call flash: lit
                // means the ring is playing and the line is on.
                if !report.callLit, rig.runner.platform.lines.levels[ledCall], ringing(rig.runner, callUID, ledCall, vibration) {
                    report.callLit = true
                    report.callLitAfterUs = Double(now - phone.callSentNs.load(ordering: .acquiring)) / 1e3
                }
                if !ringing(rig.runner, callUID, ledCall, vibration) { report.stepsWithoutRing += 1 }
            }
            if phone.finished.load(ordering: .acquiring) {
                // Done when every sent event was seen, or nothing came for 200 ms.
                if notificationCount(rig.runner) - notificationsBefore >= UInt64(phone.total) { break }
                if quietSince == 0 { quietSince = now }
                if now - quietSince > 200_000_000 { break }
            }
        }
        pthread_join(thread, nil)
        report.eventsSent = phone.sent
        report.seconds = Double(phone.endNs - phone.startNs) / 1e9
        report.maxPhoneLagMs = Double(phone.maxLagNs) / 1e6
        report.loopAllocations = allocations
        report.rssAfterKiB = ProcessMemory.rssKiB()
        report.notificationsSeen = notificationCount(rig.runner) - notificationsBefore
        report.ringAfterFlood = ringing(rig.runner, callUID, ledCall, vibration)
        report.tableEvictions = rig.runner.core.phone.session.counters.tableEvictions
        report.notificationSourceDropped = rig.runner.core.phone.session.counters.notificationSourceDropped
        report.patternsRefused = rig.runner.core.playerCounters.refusedFull
        report.patternsEvicted = rig.runner.core.playerCounters.evicted
        report.firmwareDrops = rig.runner.effects.sink.drops
        return report
    }

    static func ringing(_ runner: borrowing BenchRunner, _ uid: UInt32, _ a: Int, _ b: Int) -> Bool {
        runner.core.isAlerting(uid: uid, output: a) && runner.core.isAlerting(uid: uid, output: b)
    }

    static func notificationCount(_ runner: borrowing BenchRunner) -> UInt64 { runner.effects.sink.notifications }
}

/// The phone on its own thread sending one NS event every `gapMs`
/// (alternately an incoming call Added and its Removed), stamping each
/// just after send() returns: the loop meanwhile sleeps in poll, so the
/// latency includes the kernel waking it (`make bench`, "asleep" figure).
public final class PacedPhone: @unchecked Sendable {
    let fd: Int32
    public let count: Int
    let gapMs: Int
    public let sentNs: UnsafeMutablePointer<Int64>
    private let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 16)
    private var thread = pthread_t()

    public init(fd: Int32, count: Int, gapMs: Int) {
        self.fd = fd
        self.count = count
        self.gapMs = gapMs
        sentNs = .allocate(capacity: count)
        sentNs.initialize(repeating: 0, count: count)
    }

    deinit {
        sentNs.deallocate()
        buffer.deallocate()
    }

    public func start() {
        let context = Unmanaged.passRetained(self).toOpaque()
        let rc = pthread_create(&thread, nil, { context in
            let phone = Unmanaged<PacedPhone>.fromOpaque(context!).takeRetainedValue()
            phone.run()
            return nil
        }, context)
        precondition(rc == 0, "pthread_create")
    }

    public func join() { pthread_join(thread, nil) }

    func run() {
        for k in 0..<count {
            var ts = timespec(tv_sec: 0, tv_nsec: gapMs * 1_000_000)
            nanosleep(&ts, nil)
            let uid = UInt32(0x50_0000 + k / 2)
            if k % 2 == 0 {
                Wire.notificationSource(into: buffer, .added, [.positiveAction, .negativeAction], .incomingCall, count: 1, uid: uid)
            } else {
                Wire.notificationSource(into: buffer, .removed, [], .incomingCall, count: 0, uid: uid)
            }
            let n = Glibc.send(fd, buffer, 11, Int32(MSG_NOSIGNAL))
            sentNs[k] = Clock.ns()
            precondition(n == 11, "paced phone: send failed")
        }
    }
}
