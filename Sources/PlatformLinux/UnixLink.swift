// SPDX-License-Identifier: Apache-2.0
// The phone link over a UNIX SOCK_SEQPACKET socket: one packet is one ATT
// PDU, byte for byte what a BlueZ L2CAP socket on the ATT fixed channel
// gives. Used by the simulator, by `--link unix:PATH`, and by tests (an end
// of a socketpair). There is no SMP here: raising security succeeds at once,
// so the firmware's retry path still runs. One phone at a time: a second
// connection is accepted and closed.

import Bounded
import CBlueZ
import CLinux
import Platform

public protocol LinkBackend: ~Copyable {
    /// The most descriptors `addDescriptors` adds (its share of `PollSet`).
    static var maxDescriptors: Int { get }
    mutating func addDescriptors(to set: inout PollSet)
    mutating func nextInput(into pdu: inout ByteBuffer, ready: borrowing PollSet) -> LinkInput
    mutating func send(_ pdu: borrowing ByteBuffer)
    mutating func raiseSecurity(attempt: Int)
    mutating func disconnect()
    /// An input is waiting that no descriptor will signal (a connection, a
    /// security answer or a lost link noted by `raiseSecurity` or `send`,
    /// which a timer may have called): the platform must not sleep.
    var hasPendingInput: Bool { get }
}

public struct UnixLink: ~Copyable, LinkBackend {
    /// The connected socket and the listener.
    public static var maxDescriptors: Int { 2 }
    public static let maxPacketBytes = PacketSocket.maxPacketBytes
    private var listener: Int32 = -1
    private var socket: PacketSocket
    private let path: String?
    private var securityPending = false
    private var lostReason: Name? = nil
    private var connectedPending = false
    public private(set) var counters = LinkCounters()

    private init(listener: Int32, connection: Int32, path: String?) {
        self.listener = listener
        socket = PacketSocket(fd: connection)
        self.path = path
    }

    deinit {
        if listener >= 0 {
            _ = CLinux.close(listener)
            if let path { _ = unlink(path) }
        }
    }

    /// Listens on `path` (a stale socket file is replaced).
    public static func listening(at path: String) throws(SystemError) -> UnixLink {
        let fd = try Sys.call32("socket(AF_UNIX, SOCK_SEQPACKET)") {
            CLinux.socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        _ = unlink(path)
        do {
            try UnixAddress.with(path) { (address, length) throws(SystemError) in
                _ = try Sys.call32("bind(\(path))") { bind(fd, address, length) }
            }
            _ = try Sys.call32("listen") { listen(fd, 1) }
        } catch {
            _ = CLinux.close(fd)
            throw error
        }
        return UnixLink(listener: fd, connection: -1, path: path)
    }

    /// Connects to a listening firmware (the simulated phone's side).
    public static func connecting(to path: String) throws(SystemError) -> UnixLink {
        let fd = try Sys.call32("socket(AF_UNIX, SOCK_SEQPACKET)") {
            CLinux.socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        do {
            try UnixAddress.with(path) { (address, length) throws(SystemError) in
                _ = try Sys.call32("connect(\(path))") { connect(fd, address, length) }
            }
            try Sys.setNonBlocking(fd)
        } catch {
            _ = CLinux.close(fd)
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

    public var isConnected: Bool { socket.isOpen }

    public mutating func addDescriptors(to set: inout PollSet) {
        if socket.isOpen { set.add(socket.fd, events: Int16(POLLIN) | (socket.hasPending ? Int16(POLLOUT) : 0)) }
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
        if socket.isOpen {
            switch socket.exchange(into: &pdu, counters: &counters) {
            case .pdu: return .pdu
            case .closed(let reason): return close(reason)
            case .nothing: break
            }
        }
        if listener >= 0 { return accept() }
        return .none
    }

    private mutating func accept() -> LinkInput {
        guard let fd = PacketSocket.accept(on: listener, busy: socket.isOpen, counters: &counters) else { return .none }
        socket = PacketSocket(fd: fd)
        return .connected
    }

    private mutating func close(_ reason: Name) -> LinkInput {
        socket.close()
        securityPending = false
        return .disconnected(reason: reason)
    }

    public mutating func send(_ pdu: borrowing ByteBuffer) {
        if case .failed(let reason) = socket.send(pdu, counters: &counters) {
            socket.close()
            securityPending = false
            lostReason = reason
        }
    }

    public mutating func raiseSecurity(attempt: Int) {
        if socket.isOpen { securityPending = true }
    }

    public var hasPendingInput: Bool { lostReason != nil || connectedPending || securityPending }

    public mutating func disconnect() {
        socket.close()
        securityPending = false
    }
}

enum UnixAddress {
    /// `path` as a socket address and its length, or nil when it does not
    /// fit `sun_path`. With `allowAbstract`, a leading "@" names the
    /// abstract namespace (systemd's NOTIFY_SOCKET may).
    static func make(_ path: String, allowAbstract: Bool = false) -> (address: sockaddr_un, length: socklen_t)? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        let abstract = allowAbstract && bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        // A file path keeps its terminating NUL; an abstract name has none.
        let length = bytes.count + (abstract ? 0 : 1)
        guard !bytes.isEmpty, length <= MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        return (address, socklen_t(MemoryLayout<sa_family_t>.size + length))
    }

    static func with(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) throws(SystemError) -> Void) throws(SystemError) {
        guard let made = make(path) else { throw SystemError("socket path too long: \(path)", errno: ENAMETOOLONG) }
        var address = made.address
        let length = made.length
        var failure: SystemError? = nil
        withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                do throws(SystemError) { try body(sa, length) } catch { failure = error }
            }
        }
        if let failure { throw failure }
    }
}
