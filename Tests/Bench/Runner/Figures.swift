// SPDX-License-Identifier: Apache-2.0
// The figures of `make bench`. Each prints one line: the figure,
// then how it was measured. Methods in detail: docs/performance.md.

import ANCS
import AllocCounter
import BenchSupport
import Bounded
import Config
import Firmware
import Glibc
import Platform
import PlatformLinux
import TestSupport

struct Percentiles {
    var p50 = 0.0
    var p99 = 0.0
    var max = 0.0
    var count = 0

    /// From nanosecond samples, in µs.
    init(ns samples: [Int64]) {
        guard !samples.isEmpty else { return }
        let sorted = samples.sorted()
        func at(_ q: Double) -> Double {
            let index = Swift.max(0, Swift.min(sorted.count - 1, Int((q * Double(sorted.count)).rounded(.up)) - 1))
            return Double(sorted[index]) / 1_000
        }
        p50 = at(0.50)
        p99 = at(0.99)
        max = Double(sorted.last!) / 1_000
        count = sorted.count
    }

    init() {}

    var json: String { "{\"p50\": \(fmt(p50)), \"p99\": \(fmt(p99)), \"max\": \(fmt(max))}" }
    var text: String { "p50 \(fmt(p50)) µs, p99 \(fmt(p99)) µs, max \(fmt(max)) µs (n=\(count))" }
}

func fmt(_ v: Double, _ places: Int = 1) -> String {
    if v.isNaN || v.isInfinite { return "0" }
    var scale = 1.0
    for _ in 0..<places { scale *= 10 }
    let r = (v * scale).rounded() / scale
    if r == r.rounded() && abs(r) < 1e15 { return "\(Int64(r))" }
    return "\(r)"
}

func say(_ text: String) {
    print(text)
    fflush(nil)
}

func fail(_ text: String) -> Never {
    print("bench: \(text)")
    exit(1)
}

/// Everything `.build/bench.json` holds.
struct Figures {
    var nsToGPIO = Percentiles()
    var buttonToCP = Percentiles()
    var allocsAdded = 0.0
    var allocsRemoved = 0.0
    var allocsAttributes = 0.0
    var allocsAction = 0.0
    var allocsPatternStep = 0.0
    var idleWakeups = 0
    var patternWakeupsPerStep = 0.0
    var reassemblyMTU23 = 0.0
    var reassemblyMTU185 = 0.0
    var rssStart = 0
    var rssAfter100k = 0
    var binaryBytes = 0
    var instructionsPerNSEvent = 0.0
    var instructionsPerDSByte = 0.0
    var instructionsPerStep = 0.0
    var instructionsPerButtonStep = 0.0

    var json: String {
        """
        {"ns_to_gpio_us": \(nsToGPIO.json), "button_to_cp_us": \(buttonToCP.json), \
        "allocs_per_event": {"added": \(fmt(allocsAdded, 3)), "removed": \(fmt(allocsRemoved, 3)), "attributes": \(fmt(allocsAttributes, 3)), \
        "action": \(fmt(allocsAction, 3)), "pattern_step": \(fmt(allocsPatternStep, 3))}, \
        "idle_wakeups_60s": \(idleWakeups), "pattern_wakeups_per_step": \(fmt(patternWakeupsPerStep, 3)), \
        "reassembly_mb_s": {"mtu23": \(fmt(reassemblyMTU23)), "mtu185": \(fmt(reassemblyMTU185))}, \
        "rss_kib": {"start": \(rssStart), "after_100k": \(rssAfter100k)}, "binary_bytes": \(binaryBytes), \
        "instructions": {"per_ns_event": \(fmt(instructionsPerNSEvent)), "per_ds_byte": \(fmt(instructionsPerDSByte, 2)), "per_step": \(fmt(instructionsPerStep)), "per_button_step": \(fmt(instructionsPerButtonStep))}}

        """
    }
}

let callFlagsPN: EventFlags = [.positiveAction, .negativeAction]

struct Bench {
    let root: String
    let config: WearableConfig
    var figures = Figures()
    let idleSeconds: Int
    let buttonRounds: Int

    /// Steps until `done`, failing the bench after 2 s.
    static func stepUntil(_ rig: inout BenchRig, _ what: String, _ done: (borrowing BenchRunner) -> Bool) {
        if !rig.run(withinMs: 2_000, until: done) { fail("timed out waiting for \(what)") }
    }

    // MARK: Notification Source to line, allocations, RSS

    mutating func notificationLatency(_ rig: inout BenchRig) {
        let ledCall = config.board.outputIndex(named: "led-call")!
        let warmUp = 2_000
        let pairs = 50_000
        // Sample storage is allocated and touched before the start RSS.
        var samples = [Int64](repeating: 0, count: pairs)
        var removedSamples = [Int64](repeating: 0, count: pairs)
        figures.rssStart = ProcessMemory.rssKiB()
        var allocsAdded: UInt64 = 0
        var allocsRemoved: UInt64 = 0
        var extraSteps = 0
        var uid: UInt32 = 0x1_0000
        for round in 0..<(warmUp + pairs) {
            let measured = round >= warmUp
            uid &+= 1
            // Added: led-call must light in this step.
            rig.runner.platform.lines.clearMarks()
            rig.phone.sendNotification(.added, callFlagsPN, .incomingCall, count: 1, uid: uid)
            let sentAt = Clock.ns()
            var before = wl_alloc_count()
            rig.runner.step()
            while rig.runner.platform.lines.firstWriteNs == 0 {
                extraSteps += 1
                rig.runner.step(waitingAtMostMs: 5)
            }
            if measured {
                allocsAdded &+= wl_alloc_count() - before
                samples[round - warmUp] = rig.runner.platform.lines.firstWriteNs - sentAt
            }
            precondition(rig.runner.platform.lines.levels[ledCall], "led-call did not light")
            // Removed: every line goes off.
            rig.runner.platform.lines.clearMarks()
            rig.phone.sendNotification(.removed, [], .incomingCall, count: 0, uid: uid)
            let removedAt = Clock.ns()
            before = wl_alloc_count()
            rig.runner.step()
            while rig.runner.platform.lines.firstWriteNs == 0 {
                extraSteps += 1
                rig.runner.step(waitingAtMostMs: 5)
            }
            if measured {
                allocsRemoved &+= wl_alloc_count() - before
                removedSamples[round - warmUp] = rig.runner.platform.lines.firstWriteNs - removedAt
            }
            precondition(!rig.runner.platform.lines.levels[ledCall], "led-call did not go off")
        }
        figures.rssAfter100k = ProcessMemory.rssKiB()
        figures.nsToGPIO = Percentiles(ns: samples)
        figures.allocsAdded = Double(allocsAdded) / Double(pairs)
        figures.allocsRemoved = Double(allocsRemoved) / Double(pairs)
        let removed = Percentiles(ns: removedSamples)
        say("ns_to_gpio_us: \(figures.nsToGPIO.text) | method: phone writes an NS Added (IncomingCall) to the socketpair, one Runner.step() on LinuxPlatform<UnixLink, simulated lines> (release), time from send() returning (socket readable) to setOutput(led-call) being called; \(pairs) events after \(warmUp) warm-up, each followed by a Removed; extra steps needed: \(extraSteps)")
        say("  (Removed to all lines off, same method: \(removed.text))")
        say("allocs_per_event.added: \(fmt(figures.allocsAdded, 3)), removed: \(fmt(figures.allocsRemoved, 3)) | method: AllocCounter (malloc/calloc/realloc/memalign wrappers, this thread) around each Runner.step() of the \(pairs) measured Added/Removed events")
        say("rss_kib: start \(figures.rssStart), after 100k \(figures.rssAfter100k) | method: VmRSS from /proc/self/status after bring-up (sample arrays already touched), and after the \(2 * warmUp) warm-up + \(2 * pairs) measured NS events above")
    }

    /// The same latency with the loop asleep in poll when the PDU arrives
    /// (a phone thread sends every 10 ms): includes the kernel waking the
    /// process and the cold caches after a sleep, which the back-to-back
    /// figure above does not.
    mutating func notificationLatencyAsleep(_ rig: inout BenchRig) {
        let ledCall = config.board.outputIndex(named: "led-call")!
        let count = 1_000
        let phone = PacedPhone(fd: rig.phone.fd, count: count, gapMs: 10)
        var written = [Int64](repeating: 0, count: count)
        var k = 0
        rig.runner.platform.lines.clearMarks()
        phone.start()
        while k < count {
            rig.runner.step(waitingAtMostMs: 1_000)
            if rig.runner.platform.lines.firstWriteNs != 0 {
                written[k] = rig.runner.platform.lines.firstWriteNs
                rig.runner.platform.lines.clearMarks()
                k += 1
            }
        }
        phone.join()
        precondition(!rig.runner.platform.lines.levels[ledCall], "led-call left on")
        let samples = (0..<count).map { written[$0] - phone.sentNs[$0] }
        let asleep = Percentiles(ns: samples)
        say("  (loop asleep in poll when the PDU arrives, a phone thread sending every 10 ms, Added and Removed alternating: \(asleep.text); includes the kernel waking the loop and cold caches)")
    }

    // MARK: Button to Control Point

    mutating func buttonLatency(_ rig: inout BenchRig) {
        let ledCall = config.board.outputIndex(named: "led-call")!
        let accept = config.board.buttonIndex(named: "accept")!
        let reject = config.board.buttonIndex(named: "reject")!
        let debounce = config.board.debounceMs
        let warmUp = 50
        var samples: [Int64] = []
        samples.reserveCapacity(buttonRounds)
        var beforeSend: [Int64] = []
        beforeSend.reserveCapacity(buttonRounds)
        var allocs: UInt64 = 0
        var uid: UInt32 = 0x20_0000
        rig.phone.sendNotification(.added, callFlagsPN, .incomingCall, count: 1, uid: uid)
        Self.stepUntil(&rig, "the first call") { $0.platform.lines.levels[ledCall] }
        var expected = [UInt8](repeating: 0, count: 9)
        for round in 0..<(warmUp + buttonRounds) {
            let measured = round >= warmUp
            // Only the loop's own steps are counted, not the bench's code.
            func step(_ rig: inout BenchRig) {
                let before = wl_alloc_count()
                rig.runner.step()
                if measured { allocs &+= wl_alloc_count() - before }
            }
            // Press now, release just after the debounce window (edges are
            // real time apart; the window is inclusive, so a release exactly
            // at its close would be taken as a bounce and accepted 1 ms
            // later). Accept and reject take turns: a button pressed again
            // within the window of its last release would be a bounce.
            let button = round % 2 == 0 ? accept : reject
            let pressAt = rig.runner.platform.now()
            rig.runner.platform.lines.inject(button: button, pressed: true, due: pressAt)
            rig.runner.platform.lines.inject(button: button, pressed: false, due: pressAt.advanced(byMs: debounce + 1))
            rig.runner.platform.lines.clearMarks()
            let sendsBefore = rig.runner.platform.link.sends
            while rig.runner.platform.link.sends == sendsBefore { step(&rig) }
            let taken = rig.runner.platform.lines.releaseTakenNs
            guard taken != 0 else { fail("a Control Point write before the release edge") }
            if measured {
                samples.append(rig.runner.platform.link.lastSendNs - taken)
                beforeSend.append(rig.runner.platform.link.sendStartNs - taken)
            }
            let (count, first) = rig.phone.receiveLength()
            expected[0] = 0x12; expected[1] = 0x10; expected[2] = 0x00; expected[3] = 0x02
            for i in 0..<4 { expected[4 + i] = UInt8(truncatingIfNeeded: uid >> (8 * UInt32(i))) }
            expected[8] = button == accept ? 0x00 : 0x01
            guard count == 9, first == 0x12, (0..<9).allSatisfy({ rig.phone.byte($0) == expected[$0] }) else {
                fail("button: expected Perform Notification Action \(Wire.toHex(expected)), got \(count) bytes (events so far: \(rig.runner.effects.sink.events))")
            }
            // The phone acknowledges (counted: part of the action), ends the
            // call, and a new one rings.
            rig.phone.send(count: 1) { $0[0] = 0x13 }
            step(&rig)
            rig.phone.sendNotification(.removed, [], .incomingCall, count: 0, uid: uid)
            uid &+= 1
            rig.phone.sendNotification(.added, callFlagsPN, .incomingCall, count: 1, uid: uid)
            Self.stepUntil(&rig, "the next call") { $0.core.phone.session.table.record(uid: uid) != nil }
        }
        figures.buttonToCP = Percentiles(ns: samples)
        figures.allocsAction = Double(allocs) / Double(buttonRounds)
        rig.phone.sendNotification(.removed, [], .incomingCall, count: 0, uid: uid)
        Self.stepUntil(&rig, "the last call's removal") { !$0.platform.lines.levels[ledCall] }
        say("button_to_cp_us: \(figures.buttonToCP.text) | method: an incoming call present; the line backend hands the loop a press edge, then the release edge \(debounce + 1) ms later (just past the debounce window; poll sleeps until it is due), accept and reject taking turns; time from the release edge being taken from the platform to send() of the Write Request (02 UID 00/01) returning; answered with a Write Response, Removed and a new call; \(buttonRounds) presses after \(warmUp) warm-up")
        say("  (of which release edge to send() being called: \(Percentiles(ns: beforeSend).text); the rest is the send() system call)")
        say("allocs_per_event.action: \(fmt(figures.allocsAction, 3)) | method: AllocCounter around the steps of the press, the release + Control Point write, and the Write Response")
    }

    // MARK: Attributes fetched for a rule

    mutating func attributeAllocations() {
        let extra = "rule category=Social app=com.apple.MobileSMS title=Alice vibration=buzz-long priority=4\n"
        let config: WearableConfig
        do { config = try benchConfig(root: root, extraPolicy: extra) } catch { fail("policy with a rule: \(error)") }
        var rig: BenchRig
        do { rig = try BenchRig(config: config) } catch { fail("\(error)") }
        if let problem = rig.bringUp() { fail(problem) }
        let vibration = config.board.outputIndex(named: "vibration")!
        let tuples = Wire.realisticTuples().filter { $0.0 == .appIdentifier || $0.0 == .title }
        let warmUp = 100
        let rounds = 2_000
        var allocs: UInt64 = 0
        var uid: UInt32 = 0x30_0000
        var response = [UInt8](repeating: 0, count: 0)
        for round in 0..<(warmUp + rounds) {
            let measured = round >= warmUp
            uid &+= 1
            rig.phone.sendNotification(.added, [.negativeAction], .social, count: 1, uid: uid)
            guard let request = rig.firmwareSent(), request.count >= 4, request[0] == 0x12, request[3] == 0x00 else {
                fail("attributes: expected a Get Notification Attributes write")
            }
            response = [0x1B, UInt8(Wire.dataSourceHandle), 0] + Wire.attributesResponse(uid: uid, tuples)
            let before = wl_alloc_count()
            rig.phone.send(count: 1) { $0[0] = 0x13 }
            rig.phone.send(response)
            Self.stepUntil(&rig, "the rule's pattern") { $0.platform.lines.levels[vibration] }
            if measured { allocs &+= wl_alloc_count() - before }
            if round == 0 {
                // The first AppIdentifier makes the firmware ask the app's
                // display name (once: then it is cached). Answer it.
                guard let ask = rig.firmwareSent(), ask.count > 4, ask[0] == 0x12, ask[3] == 0x01 else {
                    fail("attributes: expected one Get App Attributes write after the first AppIdentifier")
                }
                let app = Array(ask[4..<(ask.count - 2)])
                let name = Array("Messages".utf8)
                rig.phone.send(count: 1) { $0[0] = 0x13 }
                rig.phone.send([0x1B, UInt8(Wire.dataSourceHandle), 0, 0x01] + app + [0x00, 0x00, UInt8(name.count), 0] + name)
                Self.stepUntil(&rig, "the app name") { $0.core.phone.session.appName(for: AppIdentifier("com.apple.MobileSMS")) != nil }
            }
            rig.phone.sendNotification(.removed, [], .social, count: 0, uid: uid)
            Self.stepUntil(&rig, "removal") { !$0.platform.lines.levels[vibration] }
        }
        figures.allocsAttributes = Double(allocs) / Double(rounds)
        say("allocs_per_event.attributes: \(fmt(figures.allocsAttributes, 3)) | method: policy + `rule category=Social app=com.apple.MobileSMS title=Alice vibration=buzz-long`; per Social Added the firmware fetches AppIdentifier+Title; AllocCounter around the steps from the Write Response and the Data Source response (\(response.count - 3) bytes) to the rule's pattern on the motor; \(rounds) rounds after \(warmUp) warm-up")
    }

    // MARK: Wakeups

    mutating func patternWakeups(_ rig: inout BenchRig, seconds: Int) {
        let ledCall = config.board.outputIndex(named: "led-call")!
        let uid: UInt32 = 0x40_0000
        rig.phone.sendNotification(.added, callFlagsPN, .incomingCall, count: 1, uid: uid)
        Self.stepUntil(&rig, "the ring") { $0.platform.lines.levels[ledCall] }
        let wakeups0 = rig.runner.platform.wakeups
        let writes0 = rig.runner.platform.lines.writes[ledCall]
        let end = Clock.ns() + Int64(seconds) * 1_000_000_000
        var allocs: UInt64 = 0
        var steps = 0
        while Clock.ns() < end {
            let before = wl_alloc_count()
            rig.runner.step()  // no cap: the loop sleeps until the pattern's next step
            allocs &+= wl_alloc_count() - before
            steps += 1
        }
        let wakeups = rig.runner.platform.wakeups - wakeups0
        let boundaries = rig.runner.platform.lines.writes[ledCall] - writes0
        figures.patternWakeupsPerStep = boundaries == 0 ? 0 : Double(wakeups) / Double(boundaries)
        figures.allocsPatternStep = Double(allocs) / Double(max(1, steps))
        rig.phone.sendNotification(.removed, [], .incomingCall, count: 0, uid: uid)
        Self.stepUntil(&rig, "the ring to stop") { !$0.platform.lines.levels[ledCall] }
        say("pattern_wakeups_per_step: \(fmt(figures.patternWakeupsPerStep, 3)) | method: an incoming call rings (ring: on 600 off 400 on led-call and vibration, same phase); \(seconds) s of Runner.step() with no cap; LinuxPlatform.wakeups (poll returns) \(wakeups) / led-call level changes \(boundaries)")
        say("allocs_per_event.pattern_step: \(fmt(figures.allocsPatternStep, 3)) | method: AllocCounter around each of those \(steps) steps")
    }

    mutating func idleWakeups(_ rig: inout BenchRig) {
        let wakeups0 = rig.runner.platform.wakeups
        let deadline = rig.runner.core.deadline
        let now = rig.runner.platform.now()
        let start = Clock.ns()
        let end = start + Int64(idleSeconds) * 1_000_000_000
        var steps = 0
        while true {
            let remainingMs = (end - Clock.ns() + 999_999) / 1_000_000
            if remainingMs <= 0 { break }
            rig.runner.step(waitingAtMostMs: remainingMs)
            steps += 1
        }
        // The last return is the bench's own cap at the end of the window.
        let wakeups = rig.runner.platform.wakeups - wakeups0
        figures.idleWakeups = Int(wakeups) - 1
        let next = deadline.map { "\(($0.ms - now.ms) / 1000) s" } ?? "none"
        say("idle_wakeups_60s: \(figures.idleWakeups) | method: session live, no notification, no pattern; Runner.step(waitingAtMostMs: time left) for \(idleSeconds) s of real time; LinuxPlatform.wakeups (poll returns) minus the one return at the end of the window; the core's next deadline was \(next) away (the keep-alive probe)")
    }

    // MARK: Reassembly throughput

    mutating func reassembly() {
        func throughput(payload: Int) -> Double {
            var bench = ReassemblyBench(payload: payload)
            let perRun = max(1, 4_000_000 / bench.bytes)
            for _ in 0..<200 { bench.feedOne() }
            var results: [Double] = []
            for _ in 0..<5 {
                let t0 = Clock.ns()
                for _ in 0..<perRun { bench.feedOne() }
                let seconds = Double(Clock.ns() - t0) / 1e9
                results.append(Double(perRun * bench.bytes) / seconds / 1e6)
            }
            precondition(bench.completed == 200 + 5 * perRun, "responses did not complete")
            return results.sorted()[2]
        }
        figures.reassemblyMTU23 = throughput(payload: 20)
        figures.reassemblyMTU185 = throughput(payload: 182)
        let bytes = Wire.attributesResponse(uid: 7, Wire.realisticTuples()).count
        say("reassembly_mb_s: MTU 23 \(fmt(figures.reassemblyMTU23)), MTU 185 \(fmt(figures.reassemblyMTU185)) | method: a \(bytes)-byte Get Notification Attributes response (all 8 attributes, a 121-byte message) split into 20- and 182-byte fragments (MTU − 3), fed to DataSourceReassembler with expect() per response; about 4 MB per run, median of 5 runs")
    }

    // MARK: Binary

    mutating func binary() {
        let path = root + "/.build/release/wristlink"
        var st = stat()
        guard stat(path, &st) == 0 else { fail("no release binary at \(path) (swift build -c release)") }
        figures.binaryBytes = Int(st.st_size)
        var stripped = "?"
        let tmp = "/tmp/wristlink-bench-stripped-\(getpid())"
        if let strip = findInPath("strip"), run([strip, "-o", tmp, path]) == 0, stat(tmp, &st) == 0 {
            stripped = "\(st.st_size)"
            unlink(tmp)
        }
        say("binary_bytes: \(figures.binaryBytes) | method: size of .build/release/wristlink as built (swift build -c release, Swift runtime linked dynamically); stripped: \(stripped) bytes")
    }

    // MARK: Instructions

    /// Measures the instruction counts into `figures`; false when valgrind
    /// is missing or a run failed.
    @discardableResult
    mutating func instructions(selfPath: String) -> Bool {
        guard let valgrind = findInPath("valgrind") else {
            say("instructions: valgrind not found; skipped")
            return false
        }
        let dir = root + "/.build/bench"
        mkdir(dir, 0o755)
        // Valgrind 3.19 cannot read the DWARF 5 parts of the debug info (it
        // gives up on the binary); the symbol table is all callgrind needs.
        var target = selfPath
        let copy = dir + "/wristlink-bench.nodebug"
        if let strip = findInPath("strip"), run([strip, "--strip-debug", "-o", copy, selfPath]) == 0 { target = copy }
        func cost(_ kind: String, _ function: String) -> Double? {
            let out = "\(dir)/callgrind.\(kind).out"
            let log = "\(dir)/callgrind.\(kind).log"
            unlink(out)
            let rc = run([valgrind, "--tool=callgrind", "--toggle-collect=\(function)", "--callgrind-out-file=\(out)", "--log-file=\(log)",
                          target, "--root", root, "--cost", kind], quiet: true)
            guard rc == 0, let text = try? ProcessControl.readFile(out, maxBytes: 64 * 1024 * 1024) else {
                say("  callgrind \(kind) failed (exit \(rc)); see \(log)")
                return nil
            }
            for line in text.split(separator: "\n") where line.hasPrefix("summary:") || line.hasPrefix("totals:") {
                if let n = Double(line.split(separator: " ").last ?? "") { return n }
            }
            return nil
        }
        let n = Double(CostRun.count)
        let call = cost("ns-added-call", "wl_cost_ns_event").map { $0 / n }
        let removed = cost("ns-removed", "wl_cost_ns_event").map { $0 / n }
        let social = cost("ns-added-social", "wl_cost_ns_event").map { $0 / n }
        let step = cost("loop-step", "wl_cost_loop_step").map { $0 / n }
        let buttonStep = cost("button-step", "wl_cost_loop_step").map { $0 / Double(CostRun.buttonRounds) }
        let bytes = Double(Wire.attributesResponse(uid: 7, Wire.realisticTuples()).count)
        let ds23 = cost("ds-mtu23", "wl_cost_ds_response").map { $0 / n / bytes }
        let ds185 = cost("ds-mtu185", "wl_cost_ds_response").map { $0 / n / bytes }
        figures.instructionsPerNSEvent = call ?? 0
        figures.instructionsPerDSByte = ds23 ?? 0
        figures.instructionsPerStep = step ?? 0
        figures.instructionsPerButtonStep = buttonStep ?? 0
        func s(_ v: Double?, _ p: Int = 0) -> String { v.map { fmt($0, p) } ?? "?" }
        say("instructions.per_ns_event: \(s(call)) | method: callgrind (valgrind \(valgrindVersion(valgrind))), instructions inside wl_cost_ns_event / \(CostRun.count): an NS Added (IncomingCall) through WearableCore on a virtual clock: ATT and NS decoding, table, policy, ring started on two outputs, events and level changes drained as Runner.settle does; Removed \(s(removed)), Added Social (two patterns + unread) \(s(social)); the whole Runner.step() on LinuxPlatform for one event, user space only: \(s(step)); the step that takes a button's release edge and writes Perform Notification Action: \(s(buttonStep))")
        say("instructions.per_ds_byte: \(s(ds23, 2)) | method: callgrind, instructions inside wl_cost_ds_response / (\(CostRun.count) × \(Int(bytes)) bytes): expect() + a realistic response in 20-byte fragments (MTU 23); 182-byte fragments (MTU 185): \(s(ds185, 2))")
        return call != nil && ds23 != nil && step != nil && buttonStep != nil
    }

    /// Compares the measured instruction counts with the budgets in `path`
    /// (lines `per_ns_event N`, `per_ds_byte N`, `per_step N`,
    /// `per_button_step N`; `#` starts a comment).
    /// Prints each figure beside its budget; false when one is over, or
    /// when the file cannot be read or names an unknown figure.
    func checkBudgets(path: String) -> Bool {
        guard let lines = FigureFile.read(path) else {
            say("budgets: cannot read \(path)")
            return false
        }
        var ok = true
        var checked = 0
        for line in lines {
            let words = line.words
            guard words.count == 2, let budget = Double(words[1]) else {
                say("budgets: \(path):\(line.number): expected `NAME NUMBER`")
                return false
            }
            let measured: Double
            switch words[0] {
            case "per_ns_event": measured = figures.instructionsPerNSEvent
            case "per_ds_byte": measured = figures.instructionsPerDSByte
            case "per_step": measured = figures.instructionsPerStep
            case "per_button_step": measured = figures.instructionsPerButtonStep
            default:
                say("budgets: \(path):\(line.number): unknown figure \(words[0])")
                return false
            }
            checked += 1
            let over = measured > budget
            if over { ok = false }
            say("budget instructions.\(words[0]): \(fmt(measured, 2)) of \(fmt(budget, 2)) \(over ? "OVER BUDGET" : "ok")")
        }
        if checked == 0 { say("budgets: \(path) names no figure"); return false }
        return ok
    }

    // MARK: Flood

    mutating func flood(_ rig: inout BenchRig) {
        let report = Flood.run(&rig)
        say("flood: \(report) | method: a phone thread sends 10,000 NS events/s for 10 s (3 Added of every category but IncomingCall and varied flags, 1 Removed, per 4) with blocking sends; an incoming call halfway; the loop runs Runner.step() on this thread")
    }
}

func findInPath(_ name: String) -> String? {
    let path = ProcessControl.environment("PATH") ?? "/usr/bin:/bin"
    for dir in path.split(separator: ":") {
        let candidate = "\(dir)/\(name)"
        if access(candidate, X_OK) == 0 { return candidate }
    }
    return nil
}

/// Runs a command to completion; its exit status.
func run(_ arguments: [String], quiet: Bool = false) -> Int32 {
    var devnull: Int32 = -1
    if quiet { devnull = open("/dev/null", O_WRONLY) }
    defer { if devnull >= 0 { close(devnull) } }
    do {
        var child = try ChildProcess.spawn(arguments, pipeStdin: false, pipeStdout: false, stderrFD: devnull)
        return child.wait(timeoutMs: 600_000)
    } catch {
        return -1
    }
}

func valgrindVersion(_ valgrind: String) -> String {
    var child: ChildProcess
    do {
        child = try ChildProcess.spawn([valgrind, "--version"], pipeStdin: false, pipeStdout: true)
    } catch { return "?" }
    _ = child.wait(timeoutMs: 10_000)
    var buffer = [UInt8](repeating: 0, count: 64)
    let n = buffer.withUnsafeMutableBufferPointer { read(child.stdout, $0.baseAddress, 64) }
    guard n > 0 else { return "?" }
    return String(decoding: buffer[0..<n], as: UTF8.self).split(separator: "\n").first.map(String.init) ?? "?"
}

/// nproc, CPU model and load average, for the record.
func machineDescription() -> String {
    let cpus = sysconf(Int32(_SC_NPROCESSORS_ONLN))
    var model = "?"
    if let text = try? ProcessControl.readFile("/proc/cpuinfo", maxBytes: 1 << 20) {
        for line in text.split(separator: "\n") where line.hasPrefix("model name") {
            model = line.split(separator: ":", maxSplits: 1).last.map { $0.trimmingPrefix(" ") }.map(String.init) ?? "?"
            break
        }
    }
    let load = (try? ProcessControl.readFile("/proc/loadavg"))?.split(separator: " ").prefix(3).joined(separator: " ") ?? "?"
    return "nproc \(cpus), \(model), load average \(load)"
}
