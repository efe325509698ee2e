// SPDX-License-Identifier: Apache-2.0
// The Bluetooth management interface: a raw HCI socket bound to
// HCI_CHANNEL_CONTROL on HCI_DEV_NONE (BlueZ doc/mgmt-api.txt). One read is
// one event, one write one command. Needs CAP_NET_ADMIN. The controller
// logic is sans-IO (Firmware.Controller); this only moves packets.
//
// `connectedPair` builds the same thing over a UNIX SOCK_SEQPACKET
// socketpair, so tests can play the kernel with scripted bytes.
//
// Failures are bounded so the loop cannot spin on a broken socket:
// - a write that fails with anything but EAGAIN drops that command (counted,
//   logged); only EAGAIN keeps it queued for POLLOUT, which the kernel then
//   signals once there is room;
// - a read that fails with anything but EAGAIN, or reads end of file, takes
//   the socket out of the poll set for a back-off (100 ms, doubling to 5 s,
//   reset by the next good read), so a socket stuck in error wakes the loop
//   at most once per back-off; each failure is counted, and logged when the
//   back-off starts or grows.

import Bounded
import CBlueZ
import CLinux

public struct MgmtSocket: ~Copyable {
    public static let maxPacketBytes = 1024

    public static let readBackoffFirstMs: Int64 = 100
    public static let readBackoffMaxMs: Int64 = 5_000

    private var fd: Int32
    private var pending: PacketQueue
    public private(set) var droppedCommands: UInt64 = 0
    /// Commands dropped because their write failed (not EAGAIN).
    public private(set) var failedWrites: UInt64 = 0
    /// Reads that failed (not EAGAIN) or hit end of file.
    public private(set) var failedReads: UInt64 = 0
    private var readBackoff = Backoff(firstMs: MgmtSocket.readBackoffFirstMs, maxMs: MgmtSocket.readBackoffMaxMs)
    /// While set, the socket is not polled or read.
    public private(set) var pausedUntil: Instant? = nil

    /// No management socket (the UNIX link has no controller).
    public static var none: MgmtSocket { MgmtSocket(fd: -1) }

    public static func open() throws(SystemError) -> MgmtSocket {
        let fd = try Sys.call32("socket(AF_BLUETOOTH, SOCK_RAW, BTPROTO_HCI)") {
            CLinux.socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        }
        var address = wl_mgmt_address()
        do {
            _ = try withUnsafePointer(to: &address) { (p) throws(SystemError) -> Int32 in
                try p.withMemoryRebound(to: sockaddr.self, capacity: 1) { (sa) throws(SystemError) -> Int32 in
                    try Sys.call32("bind(HCI_CHANNEL_CONTROL)") { bind(fd, sa, socklen_t(MemoryLayout<sockaddr_hci>.size)) }
                }
            }
        } catch {
            _ = CLinux.close(fd)
            throw error
        }
        return MgmtSocket(fd: fd)
    }

    /// Adopts one end of a socketpair (tests play the kernel on the other).
    public init(connected fd: Int32) {
        self.init(fd: fd)
        try? Sys.setNonBlocking(fd)
    }

    private init(fd: Int32) {
        self.fd = fd
        pending = PacketQueue(capacity: 8, slotBytes: Self.maxPacketBytes)
    }

    deinit { if fd >= 0 { _ = CLinux.close(fd) } }

    public var isOpen: Bool { fd >= 0 }

    /// Adds the socket to `set` unless a read back-off is running at `now`.
    public mutating func addDescriptor(to set: inout PollSet, now: Instant) {
        guard fd >= 0 else { return }
        if let until = pausedUntil {
            guard now >= until else { return }
            pausedUntil = nil
        }
        set.add(fd, events: Int16(POLLIN) | (pending.isEmpty ? 0 : Int16(POLLOUT)))
    }

    /// The next event into `packet`; false when none is ready (or the
    /// socket is backing off after a failed read).
    public mutating func receive(into packet: inout ByteBuffer, now: Instant) -> Bool {
        guard fd >= 0 else { return false }
        flush()
        if let until = pausedUntil, now < until { return false }
        let fd = self.fd
        packet.removeAll()
        var n = 0
        do {
            try packet.appendInPlace { (buffer) throws(SystemError) -> Int in
                n = try Sys.call("read(mgmt)") { CLinux.read(fd, buffer.baseAddress, buffer.count) }
                return n
            }
        } catch {
            if !error.wouldBlock { readFailed("\(error)", now: now) }
            return false
        }
        guard n > 0 else {
            readFailed("end of file", now: now)
            return false
        }
        readBackoff.reset()
        return true
    }

    private mutating func readFailed(_ what: String, now: Instant) {
        failedReads &+= 1
        let grown = readBackoff.canGrow
        let pauseMs = readBackoff.fail()
        pausedUntil = now.advanced(byMs: pauseMs)
        if grown {
            Log.error("management socket: \(what) (\(failedReads) failed reads); not read for \(pauseMs) ms")
        }
    }

    public mutating func send(_ packet: borrowing ByteBuffer) {
        guard fd >= 0 else { return }
        if pending.isEmpty {
            switch Self.write(fd, packet.span) {
            case .written: return
            case .failed(let error):
                writeFailed(error)
                return
            case .wouldBlock: break
            }
        }
        if !pending.push(copyOf: packet) {
            droppedCommands &+= 1
            Log.error("management socket: command queue full; dropped a command")
        }
    }

    private mutating func writeFailed(_ error: String) {
        failedWrites &+= 1
        droppedCommands &+= 1
        Log.error("management socket: \(error); dropped a command")
    }

    private mutating func flush() {
        while let outcome = pending.withFirst({ [fd] in Self.write(fd, $0) }) {
            switch outcome {
            case .written:
                pending.removeFirst()
            case .failed(let error):
                pending.removeFirst()
                writeFailed(error)
            case .wouldBlock:
                return
            }
        }
    }

    /// Sends `command` and waits up to `timeoutMs` for its answer: the
    /// Command Complete or Command Status with the same opcode and index,
    /// into `reply` (the whole event). Events for other commands and
    /// broadcast ones are skipped. For `wristlink doctor`'s read-only
    /// queries; the daemon never waits. False on a failed write or read, or
    /// no answer in time.
    public mutating func request(_ command: borrowing ByteBuffer, reply: inout ByteBuffer, timeoutMs: Int64) -> Bool {
        guard fd >= 0, command.count >= 4 else { return false }
        let fd = self.fd
        guard case .written = Self.write(fd, command.span) else { return false }
        let opcode = (command[0], command[1])
        let index = (command[2], command[3])
        let start = Sys.monotonicMs()
        while true {
            let leftMs = timeoutMs - (Sys.monotonicMs() - start)
            guard leftMs > 0 else { return false }
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            do {
                guard try Sys.call32("poll(mgmt)", { poll(&entry, 1, Int32(leftMs)) }) > 0 else { continue }
            } catch {
                return false
            }
            reply.removeAll()
            var n = 0
            do {
                try reply.appendInPlace { (buffer) throws(SystemError) -> Int in
                    n = try Sys.call("read(mgmt)") { CLinux.read(fd, buffer.baseAddress, buffer.count) }
                    return n
                }
            } catch {
                if error.wouldBlock { continue }
                return false
            }
            guard n >= 9 else { continue }
            // Command Complete 0x0001 or Command Status 0x0002, then the
            // opcode as the first parameter.
            let isAnswer = (reply[0] == 0x01 || reply[0] == 0x02) && reply[1] == 0
            if isAnswer && reply[2] == index.0 && reply[3] == index.1 && reply[6] == opcode.0 && reply[7] == opcode.1 { return true }
        }
    }

    private enum WriteOutcome {
        case written
        case wouldBlock
        case failed(String)
    }

    private static func write(_ fd: Int32, _ bytes: Span<UInt8>) -> WriteOutcome {
        bytes.withUnsafeBufferPointer { buffer -> WriteOutcome in
            do throws(SystemError) {
                let n = try Sys.call("write(mgmt)") { CLinux.send(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL)) }
                // 0: the kernel answered the command itself, at once, with a
                // Command Status that is now queued for reading (an index
                // with no controller behind it, an unknown opcode, bad
                // parameters: hci_mgmt_cmd returns mgmt_cmd_status's 0).
                if n == 0 && buffer.count >= 6 { return .written }
                return n == buffer.count ? .written : .failed("short write (\(n) of \(buffer.count) bytes)")
            } catch {
                return error.wouldBlock ? .wouldBlock : .failed("\(error)")
            }
        }
    }
}
