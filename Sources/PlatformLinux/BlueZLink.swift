// SPDX-License-Identifier: Apache-2.0
// The phone link on the real kernel: an L2CAP socket bound to the ATT fixed
// channel (CID 4) with an LE address type, listening for the iPhone (kernel
// 6.1 facts: Tests/VM/NOTES.md). One read is one PDU, like UnixLink.
//
// Security: `raiseSecurity` sets BT_SECURITY to MEDIUM (encrypted; the
// wearer consents to pairing with a button, see the controller), which makes
// the kernel send an SMP Security Request; the phone pairs or re-encrypts
// with the stored key. Until encryption is on the socket is in BT_CONFIG and
// poll reports no POLLOUT, so POLLOUT is the signal to read the level back
// with getsockopt. On a link that is already secure, setsockopt fails with
// EINVAL (smp_conn_security returns "already there"): then the level is read
// at once. A link that drops meanwhile also wakes POLLOUT (with POLLERR or
// POLLHUP), and getsockopt then returns the level we *asked* for (the
// channel has no connection left, so the kernel reports chan->sec_level):
// that is a lost link, never "secured" (`SecurityWait`). A phone that
// encrypts by itself (iOS does with a bond) is noticed by reading the level
// when PDUs arrive, until it is reported once. The ATT listener's address type must match the kernel's own
// advertising address (public here, random for a controller without one).

import Bounded
import CBlueZ
import CLinux
import Platform

public struct BluetoothAddress: Equatable, Sendable, CustomStringConvertible {
    /// Least significant byte first, as on the wire.
    public var bytes: InlineArray<6, UInt8>
    /// 1 = LE public, 2 = LE random (mgmt's address types).
    public var type: UInt8

    public init(bytes: InlineArray<6, UInt8>, type: UInt8) {
        self.bytes = bytes
        self.type = type
    }

    public static func == (a: Self, b: Self) -> Bool {
        guard a.type == b.type else { return false }
        for i in 0..<6 where a.bytes[i] != b.bytes[i] { return false }
        return true
    }

    public var description: String {
        var parts: [String] = []
        var i = 5
        while i >= 0 {
            let s = String(bytes[i], radix: 16, uppercase: true)
            parts.append(s.count == 1 ? "0" + s : s)
            i -= 1
        }
        return parts.joined(separator: ":") + (type == 2 ? " (random)" : " (public)")
    }
}

/// What a wakeup of the ATT socket means while a security raise is pending.
public enum SecurityWait {
    public enum Outcome: Equatable, Sendable {
        /// Still pairing or encrypting (the socket is in BT_CONFIG).
        case pending
        /// The link went away; the receive path reports why.
        case linkLost
        case changed(encrypted: Bool)
    }

    /// `level`: getsockopt(BT_SECURITY) now; meaningful only while connected.
    public static func outcome(revents: Int16, level: UInt8, wanted: UInt8) -> Outcome {
        if revents & (Int16(POLLERR) | Int16(POLLHUP)) != 0 { return .linkLost }
        guard revents & Int16(POLLOUT) != 0 else { return .pending }
        return .changed(encrypted: level >= wanted)
    }
}

public struct BlueZLink: ~Copyable, LinkBackend {
    /// The connected socket and the listener.
    public static var maxDescriptors: Int { 2 }
    private var listener: Int32
    private var socket: PacketSocket
    private var lostReason: Name? = nil
    private var connectedPending = false
    /// Non-zero while waiting for the socket to come out of BT_CONFIG.
    private var awaitedLevel: UInt8 = 0
    private var securityReport: Bool? = nil
    /// The link was reported encrypted (stop reading the level per PDU).
    private var encryptionReported = false
    public private(set) var peer: BluetoothAddress? = nil
    public private(set) var counters = LinkCounters()

    /// `addressType`: BDADDR_LE_PUBLIC (1) or BDADDR_LE_RANDOM (2), the type
    /// of the controller's own advertising address.
    public static func listening(addressType: UInt8) throws(SystemError) -> BlueZLink {
        let fd = try Sys.call32("socket(AF_BLUETOOTH, SOCK_SEQPACKET, BTPROTO_L2CAP)") {
            CLinux.socket(AF_BLUETOOTH, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_L2CAP)
        }
        do {
            var address = wl_att_listen_address(addressType)
            _ = try withUnsafePointer(to: &address) { (p) throws(SystemError) -> Int32 in
                try p.withMemoryRebound(to: sockaddr.self, capacity: 1) { (sa) throws(SystemError) -> Int32 in
                    try Sys.call32("bind(L2CAP ATT)") { bind(fd, sa, socklen_t(MemoryLayout<sockaddr_l2>.size)) }
                }
            }
            _ = try Sys.call32("listen(L2CAP ATT)") { listen(fd, 1) }
        } catch {
            _ = CLinux.close(fd)
            throw error
        }
        return BlueZLink(listener: fd)
    }

    private init(listener: Int32) {
        self.listener = listener
        socket = PacketSocket(fd: -1)
    }

    deinit { if listener >= 0 { _ = CLinux.close(listener) } }

    public var isConnected: Bool { socket.isOpen }

    public mutating func addDescriptors(to set: inout PollSet) {
        if socket.isOpen {
            let wantWrite = socket.hasPending || awaitedLevel != 0
            set.add(socket.fd, events: Int16(POLLIN) | (wantWrite ? Int16(POLLOUT) : 0))
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
        if let encrypted = securityReport {
            securityReport = nil
            return .securityChanged(encrypted: encrypted)
        }
        if socket.isOpen {
            let revents = ready.revents(of: socket.fd)
            if awaitedLevel != 0 {
                switch SecurityWait.outcome(revents: revents, level: currentLevel(), wanted: awaitedLevel) {
                case .pending: break
                case .linkLost: awaitedLevel = 0
                case .changed(let encrypted):
                    awaitedLevel = 0
                    encryptionReported = encrypted
                    return .securityChanged(encrypted: encrypted)
                }
            } else if !encryptionReported && revents & Int16(POLLIN) != 0 && currentLevel() >= UInt8(BT_SECURITY_MEDIUM) {
                // The phone encrypted the link itself; the PDU is read next time.
                encryptionReported = true
                return .securityChanged(encrypted: true)
            }
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
        peer = Self.peerAddress(fd)
        awaitedLevel = 0
        encryptionReported = false
        return .connected
    }

    private static func peerAddress(_ fd: Int32) -> BluetoothAddress? {
        var address = sockaddr_l2()
        var length = socklen_t(MemoryLayout<sockaddr_l2>.size)
        let rc = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard rc == 0 else { return nil }
        var bytes = InlineArray<6, UInt8>(repeating: 0)
        withUnsafeBytes(of: address.l2_bdaddr) { raw in for i in 0..<6 { bytes[i] = raw[i] } }
        return BluetoothAddress(bytes: bytes, type: address.l2_bdaddr_type)
    }

    private func currentLevel() -> UInt8 {
        var security = bt_security()
        var length = socklen_t(MemoryLayout<bt_security>.size)
        let rc = getsockopt(socket.fd, SOL_BLUETOOTH, BT_SECURITY, &security, &length)
        return rc == 0 ? security.level : 0
    }

    private mutating func close(_ reason: Name) -> LinkInput {
        socket.close()
        awaitedLevel = 0
        securityReport = nil
        encryptionReported = false
        peer = nil
        return .disconnected(reason: reason)
    }

    public mutating func send(_ pdu: borrowing ByteBuffer) {
        if case .failed(let reason) = socket.send(pdu, counters: &counters) {
            _ = close(reason)
            lostReason = reason
        }
    }

    public var hasPendingInput: Bool { lostReason != nil || connectedPending || securityReport != nil }

    public mutating func raiseSecurity(attempt: Int) {
        guard socket.isOpen else { return }
        let wanted = UInt8(BT_SECURITY_MEDIUM)
        var security = bt_security(level: wanted, key_size: 0)
        let rc = setsockopt(socket.fd, SOL_BLUETOOTH, BT_SECURITY, &security, socklen_t(MemoryLayout<bt_security>.size))
        if rc == 0 {
            awaitedLevel = wanted
            return
        }
        let code = wl_errno()
        let level = currentLevel()
        if code == EINVAL && level >= wanted {
            securityReport = true
            encryptionReported = true
        } else {
            Log.warning("link: raising security failed: \(SystemError("setsockopt(BT_SECURITY)", errno: code))")
            securityReport = false
        }
    }

    public mutating func disconnect() {
        socket.close()
        awaitedLevel = 0
        securityReport = nil
        encryptionReported = false
        peer = nil
    }
}
