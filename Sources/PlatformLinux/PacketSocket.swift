// SPDX-License-Identifier: Apache-2.0
// A connected SOCK_SEQPACKET socket carrying one ATT PDU per packet, as both
// links use it (UNIX for the simulator and tests, L2CAP on the ATT fixed
// channel for the phone). Non-blocking. A packet longer than the receive
// buffer is dropped and counted. When the socket cannot take a packet now
// (EAGAIN, or an L2CAP socket still setting up encryption) the packet waits
// in a fixed queue and poll watches for POLLOUT; when that queue is full the
// packet is dropped (counted, logged) and the ATT transaction timeout ends
// the link cleanly.

import ATT
import Bounded
import CLinux
import Platform

public struct LinkCounters: Equatable, Sendable {
    public var packetsTooLong: UInt64 = 0
    public var sendQueued: UInt64 = 0
    public var sendDropped: UInt64 = 0
    public var extraConnectionsRefused: UInt64 = 0
    public init() {}
}

struct PacketSocket: ~Copyable {
    /// The largest ATT PDU a link carries (ATT's `ATTMTU.maximum`).
    static let maxPacketBytes = ATTMTU.maximum

    private(set) var fd: Int32
    private var pending: PacketQueue

    init(fd: Int32) {
        self.fd = fd
        pending = PacketQueue(capacity: 8, slotBytes: Self.maxPacketBytes)
    }

    deinit { if fd >= 0 { _ = CLinux.close(fd) } }

    var isOpen: Bool { fd >= 0 }
    var hasPending: Bool { !pending.isEmpty }

    mutating func close() {
        if fd >= 0 { _ = CLinux.close(fd) }
        fd = -1
        pending.removeAll()
    }

    enum Received { case pdu, nothing, closed(Name) }

    /// One packet into `pdu`. Over-long packets are skipped (at most a few
    /// per call, so a flood cannot hold the loop).
    mutating func receive(into pdu: inout ByteBuffer, counters: inout LinkCounters) -> Received {
        let fd = self.fd
        for _ in 0..<8 {
            var length = 0
            pdu.removeAll()
            do {
                try pdu.appendInPlace { (buffer) throws(SystemError) -> Int in
                    length = try Sys.call("recv") { recv(fd, buffer.baseAddress, buffer.count, Int32(MSG_TRUNC)) }
                    return min(length, buffer.count)
                }
            } catch {
                if error.wouldBlock { return .nothing }
                return .closed(Self.reason(error.errno, receiving: true))
            }
            if length == 0 { return .closed("peer-closed") }
            if length <= pdu.count { return .pdu }
            counters.packetsTooLong &+= 1
            Log.warning("link: dropped a \(length)-byte packet (longer than \(pdu.capacity))")
        }
        return .nothing
    }

    static func reason(_ errno: Int32, receiving: Bool) -> Name {
        switch errno {
        case ECONNRESET: "connection-reset"
        case ECONNABORTED: LinkInput.endedByLocalHost
        case ETIMEDOUT: "link-timeout"
        case EPIPE: "peer-closed"
        default: receiving ? "receive-failed" : "send-failed"
        }
    }

    enum Sent { case sent, queued, dropped, failed(Name) }

    mutating func send(_ pdu: borrowing ByteBuffer, counters: inout LinkCounters) -> Sent {
        guard fd >= 0 else { return .dropped }
        if !pending.isEmpty {
            let result = queue(pdu, counters: &counters)
            if case .failed(let reason) = flush() { return .failed(reason) }
            return result
        }
        switch Self.transmit(fd, pdu.span) {
        case .sent: return .sent
        case .wouldBlock: return queue(pdu, counters: &counters)
        case .failed(let reason): return .failed(reason)
        }
    }

    private mutating func queue(_ pdu: borrowing ByteBuffer, counters: inout LinkCounters) -> Sent {
        if pending.push(copyOf: pdu) {
            counters.sendQueued &+= 1
            return .queued
        }
        counters.sendDropped &+= 1
        Log.warning("link: send queue full; dropped a \(pdu.count)-byte packet")
        return .dropped
    }

    enum Transmit { case sent, wouldBlock, failed(Name) }

    static func transmit(_ fd: Int32, _ bytes: Span<UInt8>) -> Transmit {
        do {
            _ = try bytes.withUnsafeBufferPointer { (buffer) throws(SystemError) -> Int in
                try Sys.call("send") { CLinux.send(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL)) }
            }
            return .sent
        } catch {
            // An L2CAP socket still in BT_CONFIG (encryption being set up)
            // refuses with ENOTCONN: wait for POLLOUT like EAGAIN.
            if error.wouldBlock || error.errno == ENOTCONN { return .wouldBlock }
            return .failed(reason(error.errno, receiving: false))
        }
    }

    /// Sends queued packets until the socket refuses.
    mutating func flush() -> Transmit {
        while fd >= 0 {
            let fd = self.fd
            guard let result = pending.withFirst({ Self.transmit(fd, $0) }) else { return .sent }
            switch result {
            case .sent: pending.removeFirst()
            case .wouldBlock, .failed: return result
            }
        }
        return .sent
    }
}

extension PacketSocket {
    enum Traffic { case pdu, closed(Name), nothing }

    /// One turn of a connected link: send what waits, then take one packet.
    mutating func exchange(into pdu: inout ByteBuffer, counters: inout LinkCounters) -> Traffic {
        guard isOpen else { return .nothing }
        if case .failed(let reason) = flush() { return .closed(reason) }
        switch receive(into: &pdu, counters: &counters) {
        case .pdu: return .pdu
        case .closed(let reason): return .closed(reason)
        case .nothing: return .nothing
        }
    }

    /// Accepts a pending connection on `listener`: its descriptor, or nil
    /// when none is pending or one phone is already connected (`busy`: the
    /// newcomer is closed and counted; one phone at a time).
    static func accept(on listener: Int32, busy: Bool, counters: inout LinkCounters) -> Int32? {
        let fd: Int32
        do throws(SystemError) {
            fd = try Sys.call32("accept4") { wl_accept_nonblocking(listener) }
        } catch {
            if !error.wouldBlock { Log.warning("link: \(error)") }
            return nil
        }
        if busy {
            counters.extraConnectionsRefused &+= 1
            Log.warning("link: a second phone tried to connect; refused (one at a time)")
            _ = CLinux.close(fd)
            return nil
        }
        return fd
    }
}
