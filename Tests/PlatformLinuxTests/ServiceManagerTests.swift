// SPDX-License-Identifier: Apache-2.0
import Bounded
import Glibc
import PlatformLinux
import Testing
import TestSupport

/// Plays systemd: a datagram socket at $NOTIFY_SOCKET.
@Suite("systemd notification protocol", .serialized)
struct ServiceManagerTests {
    /// `path` starting with "@": an abstract name (no file, no NUL).
    static func listen(_ path: String) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        let length = abstract ? MemoryLayout<sa_family_t>.size + bytes.count : MemoryLayout<sockaddr_un>.size
        _ = withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(length)) }
        }
        return fd
    }

    static func receive(_ fd: Int32) -> String? {
        var buffer = [UInt8](repeating: 0, count: 256)
        let n = buffer.withUnsafeMutableBufferPointer { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        return n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self) : nil
    }

    @Test("READY=1 goes to $NOTIFY_SOCKET; with WatchdogSec the loop pings WATCHDOG=1 every half interval")
    func readyAndWatchdog() {
        let path = "/tmp/wristlink-notify-\(getpid())"
        unlink(path)
        let fd = Self.listen(path)
        defer { close(fd); unlink(path) }
        var manager = ServiceManager(now: Instant(ms: 1_000), notifySocket: path, watchdogUsec: "30000000")
        #expect(manager.watchdogPingMs == 15_000)
        manager.notify("READY=1")
        #expect(Self.receive(fd) == "READY=1")
        manager.tick(now: Instant(ms: 1_000))
        #expect(Self.receive(fd) == "WATCHDOG=1")
        #expect(manager.nextPing == Instant(ms: 16_000))
        manager.tick(now: Instant(ms: 15_999))
        #expect(Self.receive(fd) == nil, "not before half the interval")
        manager.tick(now: Instant(ms: 16_000))
        #expect(Self.receive(fd) == "WATCHDOG=1")
    }

    @Test("without $NOTIFY_SOCKET nothing is sent and there is no ping deadline (no tick when idle)")
    func outsideSystemd() {
        let manager = ServiceManager(now: .zero, notifySocket: nil, watchdogUsec: "30000000")
        #expect(manager.watchdogPingMs == 0)
        #expect(manager.nextPing == nil)
        manager.notify("READY=1")
    }

    @Test("an abstract $NOTIFY_SOCKET (@name, as systemd may set) is reached without a file")
    func abstractSocket() {
        let name = "@wristlink-notify-\(getpid())"
        let fd = Self.listen(name)
        defer { close(fd) }
        let manager = ServiceManager(now: .zero, notifySocket: name, watchdogUsec: nil)
        manager.notify("READY=1")
        #expect(Self.receive(fd) == "READY=1")
        #expect(manager.nextPing == nil, "no watchdog without WATCHDOG_USEC")
    }

    @Test("a $NOTIFY_SOCKET longer than sun_path is refused, not truncated to another socket's name")
    func tooLongSocketPath() {
        let long = "/tmp/" + String(repeating: "n", count: 120)
        let prefix = String(long.prefix(107))
        unlink(prefix)
        let fd = Self.listen(prefix)
        defer { close(fd); unlink(prefix) }
        let manager = ServiceManager(now: .zero, notifySocket: long, watchdogUsec: "30000000")
        manager.notify("READY=1")
        #expect(Self.receive(fd) == nil)
        #expect(manager.watchdogPingMs == 0)
    }
}
