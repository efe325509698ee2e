// SPDX-License-Identifier: Apache-2.0
// MemoryPlatform: the `Platform` protocol in memory, on a virtual clock, so a
// test drives the real `Runner` (its step, settle, bond saving, ready and
// status) with no socket, no GPIO and no waiting: what swift-nio's
// EmbeddedChannel is to a socket.
//
// The test plays the world: it queues what the link, the buttons and the
// management socket deliver, and reads what the firmware did (PDUs sent,
// management commands, line levels, security raises, disconnections, saved
// files, READY and STATUS). Time moves only in
// `wait(until:)`: while anything is queued it does not move; otherwise it
// jumps to the deadline the runner gives (a step's `waitingAtMostMs` caps
// it), never past it, and with no deadline it stays (a real loop would sleep
// until an input; here nothing else can come). The clock never goes back.
//
// Like the UNIX link, a security raise on a connected link is answered
// "encrypted" at once unless `answersRaises` is off (then the test answers,
// or the phone never encrypts). `disconnect()` closes the link as a socket
// closes: what was queued for that link is dropped, up to the next
// `.connected`. The runner reports the end to the core itself.
//
// Test code: it uses arrays freely; the allocation tests keep their own
// rigs.

import Bounded
import Platform

public struct MemoryPlatform: Platform, ~Copyable {
    /// One thing the link delivers.
    public enum Link: Equatable {
        case connected
        case pdu([UInt8])
        case securityChanged(encrypted: Bool)
        case disconnected(reason: Name)
    }

    public private(set) var clock: Instant
    public var answersRaises = true

    // What the world does (queued by the test, taken by the runner).
    public private(set) var linkQueue: [Link] = []
    public private(set) var inputQueue: [InputEvent] = []
    public private(set) var controllerQueue: [[UInt8]] = []
    /// What `readBattery` returns.
    public var battery: BatteryReading? = nil

    // What the firmware did.
    public private(set) var sent: [[UInt8]] = []
    public private(set) var controllerSent: [[UInt8]] = []
    /// Each output's level, by line index (off until set).
    public private(set) var levels: [Bool]
    /// Every change of an output, with the time it was made.
    public private(set) var lineChanges: [(atMs: Int64, line: Int, on: Bool)] = []
    /// The `attempt` of each security raise.
    public private(set) var raises: [Int] = []
    public private(set) var disconnects = 0
    public private(set) var savedBonds: [UInt8]? = nil
    public private(set) var savedGATTCache: [UInt8]? = nil
    public private(set) var ready = false
    public private(set) var statuses: [String] = []

    private var connected = false

    public init(outputs: Int, startMs: Int64 = 1_000) {
        clock = Instant(ms: startMs)
        levels = Array(repeating: false, count: outputs)
    }

    // MARK: The test's side

    public mutating func queue(_ input: Link) { linkQueue.append(input) }
    public mutating func queue(_ input: InputEvent) { inputQueue.append(input) }
    public mutating func queueController(_ packet: [UInt8]) { controllerQueue.append(packet) }

    /// Takes the PDUs sent so far.
    public mutating func takeSent() -> [[UInt8]] {
        defer { sent.removeAll() }
        return sent
    }

    /// Takes the management commands sent so far.
    public mutating func takeControllerSent() -> [[UInt8]] {
        defer { controllerSent.removeAll() }
        return controllerSent
    }

    /// Moves the clock to `instant` without the runner waking (never back).
    public mutating func setClock(_ instant: Instant) {
        precondition(instant >= clock, "MemoryPlatform: the clock never goes back")
        clock = instant
    }

    public var hasQueuedInput: Bool { !linkQueue.isEmpty || !inputQueue.isEmpty || !controllerQueue.isEmpty }

    // MARK: Platform

    public func now() -> Instant { clock }

    public mutating func wait(until deadline: Instant?) {
        if hasQueuedInput { return }
        if let deadline, deadline > clock { clock = deadline }
    }

    public mutating func nextLinkInput(into pdu: inout ByteBuffer) -> LinkInput {
        guard !linkQueue.isEmpty else { return .none }
        switch linkQueue.removeFirst() {
        case .connected:
            connected = true
            return .connected
        case .pdu(let bytes):
            pdu.removeAll()
            let fits = pdu.append(contentsOf: bytes.span)
            precondition(fits, "MemoryPlatform: a queued PDU of \(bytes.count) bytes is longer than the runner's buffer")
            return .pdu
        case .securityChanged(let encrypted):
            return .securityChanged(encrypted: encrypted)
        case .disconnected(let reason):
            connected = false
            return .disconnected(reason: reason)
        }
    }

    public mutating func send(_ pdu: borrowing ByteBuffer) { sent.append(pdu.toArray()) }

    public mutating func raiseSecurity(attempt: Int) {
        raises.append(attempt)
        if answersRaises, connected { linkQueue.append(.securityChanged(encrypted: true)) }
    }

    public mutating func disconnect() {
        disconnects += 1
        connected = false
        // A closed socket delivers nothing more of that link.
        if let next = linkQueue.firstIndex(of: .connected) {
            linkQueue.removeSubrange(0..<next)
        } else {
            linkQueue.removeAll()
        }
    }

    public mutating func setOutput(_ line: Int, on: Bool) {
        precondition(line >= 0 && line < levels.count, "MemoryPlatform: output \(line) of \(levels.count)")
        levels[line] = on
        lineChanges.append((clock.ms(since: .zero), line, on))
    }

    public mutating func nextInput() -> InputEvent? { inputQueue.isEmpty ? nil : inputQueue.removeFirst() }

    public mutating func nextControllerInput(into packet: inout ByteBuffer) -> Bool {
        guard !controllerQueue.isEmpty else { return false }
        let bytes = controllerQueue.removeFirst()
        packet.removeAll()
        let fits = packet.append(contentsOf: bytes.span)
        precondition(fits, "MemoryPlatform: a queued management packet of \(bytes.count) bytes is longer than the runner's buffer")
        return true
    }

    public mutating func sendController(_ packet: borrowing ByteBuffer) { controllerSent.append(packet.toArray()) }

    public mutating func saveBonds(_ contents: borrowing ByteBuffer) -> Bool {
        savedBonds = contents.toArray()
        return true
    }

    public mutating func saveGATTCache(_ contents: borrowing ByteBuffer) -> Bool {
        savedGATTCache = contents.toArray()
        return true
    }

    public mutating func notifyReady() { ready = true }

    public mutating func notifyStatus(_ text: borrowing ByteBuffer) {
        statuses.append(String(decoding: text.toArray(), as: UTF8.self))
    }

    public mutating func readBattery() -> BatteryReading? { battery }
}
