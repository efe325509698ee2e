// The phone link over a UNIX SOCK_SEQPACKET socket: one packet is one ATT
// PDU, byte for byte what a BlueZ L2CAP socket on the ATT fixed channel
// gives. Used by the simulator, by `--link unix:PATH`, and by tests (an end
// of a socketpair). There is no SMP here: raising security succeeds at once,
// so the firmware's retry path still runs.
//
// One phone at a time: a second connection is accepted and closed. A packet
// longer than the receive buffer is dropped (counted). When the socket
// cannot take a packet now (EAGAIN) it waits in a fixed queue and poll
// watches for POLLOUT; when that queue is full the packet is dropped
// (counted, logged): the ATT transaction timeout then ends the link cleanly.

import Bounded
import CLinux
import Glibc
import Platform

public protocol LinkBackend: ~Copyable {
    mutating func addDescriptors(to set: inout PollSet)
    mutating func nextInput(into pdu: inout ByteBuffer, ready: borrowing PollSet) -> LinkInput
    mutating func send(_ pdu: borrowing ByteBuffer)
    mutating func raiseSecurity(attempt: Int)
    mutating func disconnect()
}

public struct LinkCounters: Equatable, Sendable {
    public var packetsTooLong: UInt64 = 0
    public var sendQueued: UInt64 = 0
    public var sendDropped: UInt64 = 0
    public var extraConnectionsRefused: UInt64 = 0
    public init() {}
}

public struct UnixLink: ~Copyable, LinkBackend {
    public static let maxPacketBytes = 517

    private var listener: Int32 = -1
    private var connection: Int32 = -1
    private let path: String?
    private var securityPending = false
    private var lostReason: Name? = nil
    private var connectedPending = false
    private var pending: PacketQueue
    public private(set) var counters = LinkCounters()

    private init(listener: Int32, connection: Int32, path: String?) {
        self.listener = listener
        self.connection = connection
        self.path = path
        pending = PacketQueue(capacity: 8, slotBytes: Self.maxPacketBytes)
    }

    deinit {
        if connection >= 0 { _ = Glibc.close(connection) }
        if listener >= 0 {
            _ = Glibc.close(listener)
            if let path { _ = unlink(path) }
        }
    }

    /// Listens on `path` (a stale socket file is replaced).
    public static func listening(at path: String) throws(SystemError) -> UnixLink {
        let fd = try Sys.call32("socket(AF_UNIX, SOCK_SEQPACKET)") {
            socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        _ = unlink(path)
        do {
            try withAddress(path) { (address, length) throws(SystemError) in
                _ = try Sys.call32("bind(\(path))") { bind(fd, address, length) }
            }
            _ = try Sys.call32("listen") { listen(fd, 1) }
        } catch {
            _ = Glibc.close(fd)
            throw error
        }
        return UnixLink(listener: fd, connection: -1, path: path)
    }

    /// Connects to a listening firmware (the simulated phone's side).
    public static func connecting(to path: String) throws(SystemError) -> UnixLink {
        let fd = try Sys.call32("socket(AF_UNIX, SOCK_SEQPACKET)") {
            socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        do {
            try withAddress(path) { (address, length) throws(SystemError) in
                _ = try Sys.call32("connect(\(path))") { connect(fd, address, length) }
            }
            try Sys.setNonBlocking(fd)
        } catch {
            _ = Glibc.close(fd)
            throw error
        }
        var link = UnixLink(listener: -1, connection: fd, path: nil)
        link.connectedPending = true
        return link
    }

    /// Adopts an already connected socket (an end of a socketpair in tests).
    public init(connected fd: Int32) {
        self.init(listener: -1, connection: fd, path: nil)
        try? Sys.setNonBlocking(fd)
        connectedPending = true
    }

    public var isConnected: Bool { connection >= 0 }

    private static func withAddress(
        _ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) throws(SystemError) -> Void
    ) throws(SystemError) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { throw SystemError("socket path too long: \(path)", errno: ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
            raw[bytes.count] = 0
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
        var failure: SystemError? = nil
        withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                do throws(SystemError) { try body(sa, length) } catch { failure = error }
            }
        }
        if let failure { throw failure }
    }

    public mutating func addDescriptors(to set: inout PollSet) {
        if connection >= 0 {
            set.add(connection, events: Int16(POLLIN) | (pending.isEmpty ? 0 : Int16(POLLOUT)))
        }
        if listener >= 0 { set.add(listener, events: Int16(POLLIN)) }
    }

    public mutating func nextInput(into pdu: inout ByteBuffer, ready: borrowing PollSet) -> LinkInput {
        if let reason = lostReason {
            lostReason = nil
            return .disconnected(reason: reason)
        }
        if connectedPending {
            connectedPending = false
            return .connected
        }
        if securityPending {
            securityPending = false
            return .securityChanged(encrypted: true)
        }
        if connection >= 0 {
            flushPending()
            if let input = receive(into: &pdu) { return input }
        }
        if listener >= 0 { return accept() }
        return .none
    }

    private mutating func receive(into pdu: inout ByteBuffer) -> LinkInput? {
        let fd = connection
        // Bounded: a run of over-long packets is drained at most this many
        // at a time before returning to the loop.
        for _ in 0..<8 {
            var length = 0
            pdu.removeAll()
            do {
                try pdu.appendInPlace { (buffer) throws(SystemError) -> Int in
                    length = try Sys.call("recv") { recv(fd, buffer.baseAddress, buffer.count, Int32(MSG_TRUNC)) }
                    return min(length, buffer.count)
                }
            } catch {
                if error.wouldBlock { return nil }
                return close(reason: error.errno == ECONNRESET ? "connection-reset" : "receive-failed")
            }
            if length == 0 { return close(reason: "peer-closed") }
            if length <= pdu.count { return .pdu }
            counters.packetsTooLong &+= 1
            Log.warning("link: dropped a \(length)-byte packet (longer than \(pdu.capacity))")
        }
        return nil
    }

    private mutating func accept() -> LinkInput {
        let fd: Int32
        do {
            let listener = self.listener
            fd = try Sys.call32("accept4") { wl_accept_nonblocking(listener) }
        } catch {
            if !error.wouldBlock { Log.warning("link: \(error)") }
            return .none
        }
        if connection >= 0 {
            counters.extraConnectionsRefused &+= 1
            Log.warning("link: a second phone tried to connect; refused (one at a time)")
            _ = Glibc.close(fd)
            return .none
        }
        connection = fd
        pending.removeAll()
        return .connected
    }

    private mutating func close(reason: Name) -> LinkInput {
        if connection >= 0 { _ = Glibc.close(connection) }
        connection = -1
        pending.removeAll()
        securityPending = false
        return .disconnected(reason: reason)
    }

    public mutating func send(_ pdu: borrowing ByteBuffer) {
        guard connection >= 0 else { return }
        if !pending.isEmpty {
            queue(pdu)
            flushPending()
            return
        }
        switch Self.transmit(connection, pdu.span) {
        case .sent: break
        case .wouldBlock: queue(pdu)
        case .failed(let reason): lose(reason)
        }
    }

    private mutating func queue(_ pdu: borrowing ByteBuffer) {
        if pending.push(copyOf: pdu) {
            counters.sendQueued &+= 1
        } else {
            counters.sendDropped &+= 1
            Log.warning("link: send queue full; dropped a \(pdu.count)-byte packet")
        }
    }

    /// Closes after a failed send; the next `nextInput` reports it.
    private mutating func lose(_ reason: Name) {
        _ = close(reason: reason)
        lostReason = reason
    }

    private enum Transmit { case sent, wouldBlock, failed(Name) }

    private static func transmit(_ fd: Int32, _ bytes: Span<UInt8>) -> Transmit {
        do {
            _ = try bytes.withUnsafeBufferPointer { (buffer) throws(SystemError) -> Int in
                try Sys.call("send") { Glibc.send(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL)) }
            }
            return .sent
        } catch {
            if error.wouldBlock { return .wouldBlock }
            return .failed(error.errno == EPIPE || error.errno == ECONNRESET ? "peer-closed" : "send-failed")
        }
    }

    private mutating func flushPending() {
        while connection >= 0 {
            let fd = connection
            guard let result = pending.withFirst({ Self.transmit(fd, $0) }) else { return }
            switch result {
            case .sent: pending.removeFirst()
            case .wouldBlock: return
            case .failed(let reason): return lose(reason)
            }
        }
    }

    public mutating func raiseSecurity(attempt: Int) {
        if connection >= 0 { securityPending = true }
    }

    public mutating func disconnect() {
        if connection >= 0 {
            _ = Glibc.close(connection)
            connection = -1
            pending.removeAll()
            securityPending = false
        }
    }
}
