// SPDX-License-Identifier: Apache-2.0
// The benchmark harness, shared by `make bench` (wristlink-bench) and the
// flood test in FirmwareTests: the real firmware (`Runner` + `WearableCore`
// with the shipped sim board and default policy) on the real poll loop
// (`LinuxPlatform` over one end of a UNIX SOCK_SEQPACKET socketpair), a
// scripted phone on the other end, and line/link backends that time-stamp
// what the loop does. Nothing here is linked into `wristlink`.
//
// Time stamps are CLOCK_MONOTONIC nanoseconds taken where the firmware hands
// something to the operating system: `TimedLines.setOutput` (the output line
// write being issued), `TimedLink.send` (after the PDU was written to the
// socket), and when `TimedLines` hands out an injected button edge.

import ANCS
import Bounded
import CBlueZ
import Config
import Firmware
import Glibc
import Platform
import PlatformLinux
import TestSupport

public enum Clock {
    /// CLOCK_MONOTONIC in nanoseconds.
    @inline(__always)
    public static func ns() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}

/// Simulated lines that record when outputs are written and hand out
/// injected button edges when they are due (through `deadline`, as
/// `SimLines` does for a console press).
public struct TimedLines: ~Copyable, LineBackend {
    public static var maxDescriptors: Int { SimLines.maxDescriptors }
    struct Edge {
        var button: Int
        var pressed: Bool
        var due: Instant
    }

    public private(set) var levels: FixedArray<Bool>
    /// `setOutput` calls per line.
    public private(set) var writes: FixedArray<UInt64>
    /// When `setOutput` was first called since `clearMarks` (0: not since).
    public private(set) var firstWriteNs: Int64 = 0
    /// When the last injected release edge was handed to the loop.
    public private(set) var releaseTakenNs: Int64 = 0
    private var edges = RingBuffer<Edge>(capacity: 8, policy: .refuseNewest)

    public init(outputs: Int) {
        levels = FixedArray(capacity: max(1, outputs))
        writes = FixedArray(capacity: max(1, outputs))
        for _ in 0..<outputs {
            levels.append(false)
            writes.append(0)
        }
    }

    public mutating func clearMarks() {
        firstWriteNs = 0
        releaseTakenNs = 0
    }

    /// Queues a raw edge, handed to the loop at `due`.
    public mutating func inject(button: Int, pressed: Bool, due: Instant) {
        guard case .stored = edges.push(Edge(button: button, pressed: pressed, due: due)) else {
            preconditionFailure("injected edges queue full")
        }
    }

    public mutating func addDescriptors(to set: inout PollSet) {}

    public var deadline: Instant? { edges.first?.due }

    public mutating func nextInput(now: Instant, ready: borrowing PollSet) -> InputEvent? {
        guard let edge = edges.first, edge.due <= now else { return nil }
        _ = edges.popFirst()
        if !edge.pressed { releaseTakenNs = Clock.ns() }
        return .edge(button: edge.button, pressed: edge.pressed, at: edge.due)
    }

    public mutating func setOutput(_ line: Int, on: Bool) {
        if firstWriteNs == 0 { firstWriteNs = Clock.ns() }
        levels[line] = on
        writes[line] &+= 1
    }

    public mutating func allOff() {
        for i in 0..<levels.count { levels[i] = false }
    }
}

/// The UNIX link, recording when each PDU was written to the socket.
public struct TimedLink: ~Copyable, LinkBackend {
    public static var maxDescriptors: Int { UnixLink.maxDescriptors }
    public var inner: UnixLink
    /// After the last `send` returned.
    public private(set) var lastSendNs: Int64 = 0
    /// When the last `send` was called.
    public private(set) var sendStartNs: Int64 = 0
    public private(set) var sends: UInt64 = 0

    public init(connected fd: Int32) { inner = UnixLink(connected: fd) }

    public mutating func addDescriptors(to set: inout PollSet) { inner.addDescriptors(to: &set) }
    public mutating func nextInput(into pdu: inout ByteBuffer, ready: borrowing PollSet) -> LinkInput {
        inner.nextInput(into: &pdu, ready: ready)
    }
    public mutating func send(_ pdu: borrowing ByteBuffer) {
        sendStartNs = Clock.ns()
        inner.send(pdu)
        lastSendNs = Clock.ns()
        sends &+= 1
    }
    public mutating func raiseSecurity(attempt: Int) { inner.raiseSecurity(attempt: attempt) }
    public mutating func disconnect() { inner.disconnect() }
    public var hasPendingInput: Bool { inner.hasPendingInput }
}

/// Counts what the firmware reports and discards it (the events stream and
/// the log are not part of the measured path). With `keepsRecent` it also
/// keeps the last events for failure messages (off when measuring: copying
/// each event is work the firmware's own path does not do).
public struct CountingSink: ~Copyable, EventSink {
    public var keepsRecent = false
    public private(set) var recent = RingBuffer<FirmwareEvent>(capacity: 16, policy: .dropOldest)
    public private(set) var events: UInt64 = 0
    public private(set) var notifications: UInt64 = 0
    public private(set) var drops: UInt64 = 0
    public private(set) var ended = 0
    public init() {}

    /// The last events, oldest first.
    public var recentText: String {
        (0..<recent.count).map { "\(recent[$0])" }.joined(separator: "; ")
    }

    public mutating func record(_ event: FirmwareEvent, session: borrowing Session, now: Instant) {
        events &+= 1
        if keepsRecent { recent.push(event) }
        switch event {
        case .link(.notification): notifications &+= 1
        case .link(.drop): drops &+= 1
        case .link(.ended): ended += 1
        default: break
        }
    }
}

public typealias BenchRunner = Runner<LinuxPlatform<TimedLink, TimedLines>, CountingSink>

/// The shipped simulated board and default policy, read from `root`.
/// `extraPolicy` is appended to the policy file (e.g. a rule).
public func benchConfig(root: String, extraPolicy: String = "") throws -> WearableConfig {
    let board = try BoardConfig.parse(try ProcessControl.readFile(root + "/board/sim/board.conf"))
    let policy = try PolicyConfig.parse(try ProcessControl.readFile(root + "/board/policy.conf") + "\n" + extraPolicy, board: board)
    var config = WearableConfig(board: board, policy: policy)
    config.controller.enabled = false  // the UNIX link has no controller
    // Measured notifications start right after subscribing; with the replay
    // window they would be taken as the session's replay and never alert.
    config.replayWindowMs = 0
    return config
}

/// The phone's end of the socketpair (blocking), with a buffer allocated once
/// so sending in a measured loop allocates nothing.
public struct PhoneEnd: ~Copyable {
    public let fd: Int32
    private let buffer: UnsafeMutablePointer<UInt8>
    public static let capacity = 600

    public init(fd: Int32) {
        self.fd = fd
        buffer = .allocate(capacity: Self.capacity)
        buffer.initialize(repeating: 0, count: Self.capacity)
    }

    deinit {
        buffer.deallocate()
        _ = Glibc.close(fd)
    }

    /// Sends `bytes` as one packet.
    public func send(_ bytes: [UInt8]) {
        let n = bytes.withUnsafeBufferPointer { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        precondition(n == bytes.count, "phone send failed: errno \(errno)")
    }

    /// Sends a Notification Source notification (ATT Handle Value
    /// Notification on handle 0x000D) without allocating.
    public func sendNotification(_ event: EventID, _ flags: EventFlags, _ category: CategoryID, count: UInt8, uid: UInt32) {
        Wire.notificationSource(into: buffer, event, flags, category, count: count, uid: uid)
        let n = Glibc.send(fd, buffer, 11, Int32(MSG_NOSIGNAL))
        precondition(n == 11, "phone send failed: errno \(errno)")
    }

    /// Sends `count` bytes written by `fill` into the packet buffer.
    public func send(count: Int, _ fill: (UnsafeMutablePointer<UInt8>) -> Void) {
        precondition(count <= Self.capacity)
        fill(buffer)
        let n = Glibc.send(fd, buffer, count, Int32(MSG_NOSIGNAL))
        precondition(n == count, "phone send failed: errno \(errno)")
    }

    /// The next packet from the firmware if one is waiting (no wait).
    public func receive() -> [UInt8]? {
        let n = Glibc.recv(fd, buffer, Self.capacity, Int32(MSG_DONTWAIT))
        guard n > 0 else { return nil }
        return Array(UnsafeBufferPointer(start: buffer, count: n))
    }

    /// Reads the next packet from the firmware into the buffer, without
    /// allocating; returns its length (0: none waiting). `first` is its
    /// first byte.
    public func receiveLength() -> (count: Int, first: UInt8) {
        let n = Glibc.recv(fd, buffer, Self.capacity, Int32(MSG_DONTWAIT))
        return n > 0 ? (n, buffer[0]) : (0, 0)
    }

    public func byte(_ i: Int) -> UInt8 { buffer[i] }
}

/// Bytes on the wire, as the scripted phone of `Tests/FirmwareTests/Rig.swift`
/// has them: ANCS at 0x0B–0x14 (Notification Source 0x000D, Control Point
/// 0x0010, Data Source 0x0012), MTU 185.
extension Wire {
    public static let notificationSourceHandle: UInt16 = 0x000D
    public static let controlPointHandle: UInt16 = 0x0010
    public static let dataSourceHandle: UInt16 = 0x0012

    /// (firmware request, phone response) in order: a copy of `Script.bringUp`,
    /// then the companion services' discovery.
    public static let bringUp: [(firmware: String, phone: String)] = [
        ("02 05 02", "03 B9 00"),
        ("06 01 00 FF FF 00 28 01 18", "07 01 00 07 00"),
        ("08 02 00 07 00 03 28", "09 07 02 00 20 03 00 05 2A"),
        ("08 03 00 07 00 03 28", "01 08 03 00 0A"),
        ("04 04 00 07 00", "05 01 04 00 02 29"),
        ("12 04 00 02 00", "13"),
        ("06 01 00 FF FF 00 28 " + ancs, "07 0B 00 14 00"),
        ("08 0C 00 14 00 03 28", "09 15 0C 00 10 0D 00 \(ns) 0F 00 08 10 00 \(cp) 11 00 10 12 00 \(ds)"),
        ("08 12 00 14 00 03 28", "01 08 12 00 0A"),
        ("04 0E 00 0E 00", "05 01 0E 00 02 29"),
        ("04 13 00 14 00", "05 01 13 00 02 29"),
        ("12 13 00 01 00", "13"),
        ("12 0E 00 01 00", "13"),
        // Once ANCS is live the wearable looks for the phone's AMS and CTS;
        // this phone has neither (Attribute Not Found), so the figures
        // measure ANCS alone, as before they existed.
        ("06 01 00 FF FF 00 28 " + ams, "01 06 01 00 0A"),
        ("06 01 00 FF FF 00 28 05 18", "01 06 01 00 0A"),
    ]

    public static func hex(_ text: String) -> [UInt8] {
        var out: [UInt8] = []
        var pending: UInt8? = nil
        for c in text.unicodeScalars {
            guard let v = UInt8(String(c), radix: 16) else { continue }
            if let high = pending {
                out.append(high << 4 | v)
                pending = nil
            } else {
                pending = v
            }
        }
        precondition(pending == nil, "odd number of hex digits")
        return out
    }

    public static func toHex(_ bytes: [UInt8]) -> String {
        bytes.map { b in let s = String(b, radix: 16, uppercase: true); return s.count == 1 ? "0" + s : s }.joined(separator: " ")
    }

    /// ATT Handle Value Notification carrying a Notification Source value
    /// (11 bytes) into `p`.
    @inline(__always)
    public static func notificationSource(
        into p: UnsafeMutablePointer<UInt8>, _ event: EventID, _ flags: EventFlags, _ category: CategoryID, count: UInt8, uid: UInt32
    ) {
        p[0] = 0x1B
        p[1] = UInt8(truncatingIfNeeded: notificationSourceHandle)
        p[2] = UInt8(truncatingIfNeeded: notificationSourceHandle >> 8)
        p[3] = event.rawValue
        p[4] = flags.rawValue
        p[5] = category.rawValue
        p[6] = count
        for i in 0..<4 { p[7 + i] = UInt8(truncatingIfNeeded: uid >> (8 * UInt32(i))) }
    }

    public static func notificationSource(_ event: EventID, _ flags: EventFlags, _ category: CategoryID, count: UInt8, uid: UInt32) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 11)
        out.withUnsafeMutableBufferPointer { notificationSource(into: $0.baseAddress!, event, flags, category, count: count, uid: uid) }
        return out
    }

    /// A Get Notification Attributes response: 00 UID {ID Len Bytes}...
    public static func attributesResponse(uid: UInt32, _ tuples: [(NotificationAttributeID, [UInt8])]) -> [UInt8] {
        var out: [UInt8] = [0] + (0..<4).map { UInt8(truncatingIfNeeded: uid >> (8 * UInt32($0))) }
        for (id, value) in tuples { out += [id.rawValue, UInt8(value.count & 0xFF), UInt8(value.count >> 8)] + value }
        return out
    }

    /// A realistic message's attributes (what a Messages notification with a
    /// rule on app and title fetches, plus the rest a full fetch returns).
    public static func realisticTuples() -> [(NotificationAttributeID, [UInt8])] {
        [
            (.appIdentifier, Array("com.apple.MobileSMS".utf8)),
            (.title, Array("Alice Example".utf8)),
            (.subtitle, []),
            (.message, Array("Running ten minutes late, the train stopped outside the station. Order me a flat white and I'll see you at the usual table?".utf8)),
            (.messageSize, Array("121".utf8)),
            (.date, Array("20260129T123456".utf8)),
            (.positiveActionLabel, Array("Reply".utf8)),
            (.negativeActionLabel, Array("Clear".utf8)),
        ]
    }
}

/// The firmware on the real loop with a scripted phone on a socketpair.
public struct BenchRig: ~Copyable {
    public var runner: BenchRunner
    public let phone: PhoneEnd

    public init(config: WearableConfig) throws(SystemError) {
        var fds: [Int32] = [0, 0]
        let rc = socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &fds)
        precondition(rc == 0, "socketpair")
        let platform = try LinuxPlatform(
            link: TimedLink(connected: fds[0]), lines: TimedLines(outputs: config.board.outputs.count), handleSignals: false)
        runner = Runner(platform: platform, sink: CountingSink(), core: WearableCore(config: config))
        phone = PhoneEnd(fd: fds[1])
    }

    /// The next PDU the firmware sends, running the loop up to `withinMs`.
    public mutating func firmwareSent(withinMs: Int64 = 2_000) -> [UInt8]? {
        let start = Sys.monotonicMs()
        while true {
            if let bytes = phone.receive() { return bytes }
            if Sys.monotonicMs() - start > withinMs { return nil }
            runner.step(waitingAtMostMs: 20)
        }
    }

    /// Connects and brings the session up (MTU 185, discovery, subscriptions).
    /// Returns a description of the first mismatch, or nil.
    public mutating func bringUp() -> String? {
        runner.start()
        for (i, exchange) in Wire.bringUp.enumerated() {
            guard let sent = firmwareSent() else { return "bring-up step \(i): firmware sent nothing (expected \(exchange.firmware))" }
            let text = Wire.toHex(sent)
            guard text == exchange.firmware else { return "bring-up step \(i): expected \(exchange.firmware), got \(text)" }
            phone.send(Wire.hex(exchange.phone))
        }
        let start = Sys.monotonicMs()
        while runner.core.phone.state != .live, Sys.monotonicMs() - start < 2_000 { runner.step(waitingAtMostMs: 5) }
        return runner.core.phone.state == .live ? nil : "bring-up: session not live (\(runner.core.phone.state))"
    }

    /// Runs the loop until `done` or `withinMs` passes; false on timeout.
    public mutating func run(withinMs: Int64 = 2_000, until done: (borrowing BenchRunner) -> Bool) -> Bool {
        let start = Sys.monotonicMs()
        while !done(runner) {
            if Sys.monotonicMs() - start > withinMs { return false }
            runner.step(waitingAtMostMs: 5)
        }
        return true
    }
}

public enum ProcessMemory {
    /// VmRSS of this process in KiB (/proc/self/status).
    public static func rssKiB() -> Int {
        guard let text = try? ProcessControl.readFile("/proc/self/status") else { return -1 }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? -1
        }
        return -1
    }
}
