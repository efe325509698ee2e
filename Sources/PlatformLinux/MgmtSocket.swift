// The Bluetooth management interface: a raw HCI socket bound to
// HCI_CHANNEL_CONTROL on HCI_DEV_NONE (BlueZ doc/mgmt-api.txt). One read is
// one event, one write one command. Needs CAP_NET_ADMIN. The controller
// logic is sans-IO (Firmware.Controller); this only moves packets.
//
// `connectedPair` builds the same thing over a UNIX SOCK_SEQPACKET
// socketpair, so tests can play the kernel with scripted bytes.

import Bounded
import CBlueZ
import CLinux

public struct MgmtSocket: ~Copyable {
    public static let maxPacketBytes = 1024

    private var fd: Int32
    private var pending: PacketQueue
    public private(set) var droppedCommands: UInt64 = 0

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

    public func addDescriptor(to set: inout PollSet) {
        if fd >= 0 { set.add(fd, events: Int16(POLLIN) | (pending.isEmpty ? 0 : Int16(POLLOUT))) }
    }

    /// The next event into `packet`; false when none is ready.
    public mutating func receive(into packet: inout ByteBuffer) -> Bool {
        guard fd >= 0 else { return false }
        flush()
        let fd = self.fd
        packet.removeAll()
        do {
            var n = 0
            try packet.appendInPlace { (buffer) throws(SystemError) -> Int in
                n = try Sys.call("read(mgmt)") { CLinux.read(fd, buffer.baseAddress, buffer.count) }
                return n
            }
            return n > 0
        } catch {
            if !error.wouldBlock { Log.error("management socket: \(error)") }
            return false
        }
    }

    public mutating func send(_ packet: borrowing ByteBuffer) {
        guard fd >= 0 else { return }
        if !pending.isEmpty || !Self.write(fd, packet.span) {
            if !pending.push(copyOf: packet) {
                droppedCommands &+= 1
                Log.error("management socket: command queue full; dropped a command")
            }
        }
    }

    private mutating func flush() {
        while let sent = pending.withFirst({ [fd] in Self.write(fd, $0) }), sent { pending.removeFirst() }
    }

    private static func write(_ fd: Int32, _ bytes: Span<UInt8>) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            (try? Sys.call("write(mgmt)") { CLinux.write(fd, buffer.baseAddress, buffer.count) }) == buffer.count
        }
    }
}
